"use strict";
/**
 * The dynamic API: a {@link Connection} in one role, method names and JSON
 * values in and out, a {@link Handler} for what the peer sends. Every
 * protocol rule (phases, capabilities, sessions, ordering, cancellation,
 * validation) is enforced by the Rust core underneath; this module moves
 * values and work between the core and the JavaScript thread.
 *
 * **Threads.** Handlers run on the JavaScript thread. When the transport is
 * a descriptor (a spawned agent's pipes, stdio pipes or sockets, `fromFds`)
 * this thread also reads it: a libuv poll handle on Node's loop pumps the
 * core's reader, which queues what arrives in the core's inbox, and the
 * dispatcher takes it in the same turn. Otherwise the core's threads read,
 * and the first item of a batch wakes this thread once (a threadsafe
 * function). Completions from the core's threads (close, timeouts, waits)
 * wake it the same way. Answers (and requests) sent while nothing else is
 * being written are written by this thread itself.
 *
 * **Ordering.** Notifications are handled one at a time in arrival order:
 * the next one waits until the handler's promise settles, and a call's
 * result is delivered only after every notification received before its
 * answer was handled. So `await prompt(...)` returns after every
 * `session/update` of the turn was handled. Requests start in arrival order
 * and run concurrently; a handler may await calls to the peer. A call made
 * from inside a notification handler (in its async context, however deep)
 * skips the ordering barrier, since its answer cannot wait behind that very
 * handler. The handler's context is followed with an `AsyncLocalStorage`
 * made the first time a notification handler returns a promise; until then
 * (that first handler's own run) every call on the connection skips the
 * barrier while the handler runs.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ConnectionClosed = exports.Connection = void 0;
exports.socketPair = socketPair;
const node_async_hooks_1 = require("node:async_hooks");
const native = require("../native");
const errors_1 = require("./errors");
Object.defineProperty(exports, "ConnectionClosed", { enumerable: true, get: function () { return errors_1.ConnectionClosed; } });
const options_1 = require("./options");
/**
 * Which notification handler a call comes from. Made the first time a
 * notification handler suspends, so hosts whose handlers never do pay
 * nothing (on Node < 24 an `AsyncLocalStorage` turns on promise tracking).
 */
let handlerScope;
/** Connections that spawned an agent, killed if the process exits first. */
const spawned = new Set();
let exitHook = false;
function watchExit(conn) {
    spawned.add(conn);
    if (!exitHook) {
        exitHook = true;
        process.on("exit", () => {
            for (const c of spawned) {
                c.killNow();
            }
        });
    }
}
class Incoming {
    id;
    method;
    connection;
    controller = new AbortController();
    cancelled = false;
    superseded = false;
    constructor(id, method, connection) {
        this.id = id;
        this.method = method;
        this.connection = connection;
    }
    get signal() {
        return this.controller.signal;
    }
    cancel(reason = `the peer cancelled ${this.method}`) {
        if (!this.cancelled) {
            this.cancelled = true;
            this.controller.abort(new errors_1.Cancelled(reason));
        }
    }
    supersede() {
        this.superseded = true;
        this.cancel(`the answer to ${this.method} is no longer wanted (the core answered it, or the connection closed)`);
    }
}
/**
 * Takes the core's inbox on the JavaScript thread and hands each delivery to
 * the handler, in order (see the module docs). One per connection.
 */
class Dispatcher {
    handler;
    hooks;
    native;
    connection;
    pending = new Map();
    requests = new Map();
    nextTag = 1;
    draining = false;
    /**
     * A notification handler that started before `handlerScope` existed runs
     * (or is suspended): every call on this connection skips the barrier
     * until it settles, since its own calls cannot be told from others.
     */
    unscoped = false;
    closeReason = null;
    constructor(handler, hooks) {
        this.handler = handler;
        this.hooks = hooks;
    }
    /** Called by the core (through a threadsafe function) when a batch waits. */
    wake = () => {
        if (this.reading && this.native.takePumpRequest()) {
            this.pump();
        }
        this.takeUrgent();
        this.startDrain();
    };
    /** Whether this thread reads the transport (see {@link startReading}). */
    reading = false;
    /** Whether the descriptor is watched for readability. */
    watching = false;
    /**
     * Reads the transport on this thread when it is a descriptor: a libuv
     * poll handle calls {@link pump} when it is readable, so a message is
     * read, dispatched and (for a request answered at once) answered in one
     * turn of the loop, with no engine thread in between. Otherwise an engine
     * thread reads and wakes this one per batch.
     */
    startReading() {
        this.reading = this.native.startReading(this.pump);
        if (this.reading) {
            // The first read waits for the code that made the connection to
            // finish (the typed layer installs its handlers after the constructor).
            setImmediate(this.pumpIfReading);
        }
    }
    /** Reads what is available and dispatches it (the core's `PumpState`). */
    pump = () => {
        // Not draining: the pump hands over the drain's first batch itself.
        const pumped = this.native.pump(!this.draining);
        let state;
        let batch;
        if (typeof pumped === "string") {
            batch = JSON.parse(pumped);
            state = batch.pop();
        }
        else {
            state = pumped;
        }
        switch (state & 3) {
            case 0: // everything read: wait until readable
                this.watch(true);
                break;
            case 1: // more buffered than one pump takes: again, after other work
                this.watch(true);
                setImmediate(this.pumpIfReading);
                break;
            case 2: // waiting for room in the inbox: a pump request wakes us
                this.watch(false);
                break;
            default: // finished
                this.watch(false);
                this.reading = false;
                this.native.releaseReader();
        }
        if (state & 4) {
            this.takeUrgent();
        }
        if (batch !== undefined || state & 8) {
            this.startDrain(batch);
        }
    };
    pumpIfReading = () => {
        if (this.reading) {
            this.pump();
        }
    };
    watch(on) {
        if (on !== this.watching) {
            this.watching = on;
            this.native.watch(on);
        }
    }
    tag(pending) {
        let tag = this.nextTag;
        this.nextTag = tag >= 0xffff_fffe ? 1 : tag + 1;
        while (this.pending.has(tag)) {
            tag = this.nextTag;
            this.nextTag = tag >= 0xffff_fffe ? 1 : tag + 1;
        }
        this.pending.set(tag, pending);
        if (!this.alive && this.closeReason !== null) {
            this.keepAlive(true);
        }
        return tag;
    }
    /** Whether the wake-up holds the event loop: while open or waited on. */
    alive = true;
    keepAlive(keep) {
        if (keep !== this.alive) {
            this.alive = keep;
            this.native.keepAlive(keep);
        }
    }
    /** Forgets a pending operation (completed, or refused before it started). */
    forget(tag) {
        this.pending.delete(tag);
        if (this.alive && this.closeReason !== null && this.pending.size === 0) {
            this.keepAlive(false);
        }
    }
    /** A promise completed through the inbox with the tag `start` gets. */
    completion(start) {
        return new Promise((resolve, reject) => {
            const tag = this.tag({ resolve: resolve, reject });
            try {
                start(tag);
            }
            catch (e) {
                this.forget(tag);
                reject(e);
            }
        });
    }
    takeUrgent() {
        let text;
        while ((text = this.native.takeUrgent()) !== null) {
            for (const item of JSON.parse(text)) {
                this.handleUrgent(item);
            }
        }
    }
    handleUrgent(item) {
        switch (item[0]) {
            case 2:
                this.complete(item[1], item[2], item[3]);
                break;
            case 3: {
                const incoming = this.requests.get(item[1]);
                if (incoming !== undefined) {
                    if (item[2]) {
                        incoming.cancel();
                    }
                    else {
                        incoming.supersede();
                    }
                }
                break;
            }
            case 6:
            case 7:
                this.hook(item);
                break;
            case 5:
                if (this.hooks.stderr !== undefined) {
                    this.guard("stderr hook", () => this.hooks.stderr?.(item[1]));
                }
                else {
                    process.stderr.write(`${item[1]}\n`);
                }
                break;
        }
    }
    /** A traced frame `[6, direction, frame]` or an engine event `[7, kind, message, details]`. */
    hook(item) {
        if (item[0] === 6) {
            const trace = this.hooks.trace;
            if (trace !== undefined) {
                this.guard("trace hook", () => trace(item[1], item[2]));
            }
        }
        else {
            const events = this.hooks.events;
            if (events !== undefined) {
                const event = {
                    kind: item[1],
                    message: item[2],
                    details: item[3],
                };
                this.guard("events hook", () => events(event));
            }
        }
    }
    complete(tag, ok, value) {
        const pending = this.pending.get(tag);
        if (pending === undefined) {
            return;
        }
        this.forget(tag);
        pending.cleanup?.();
        if (ok) {
            pending.resolve(value);
        }
        else {
            pending.reject((0, errors_1.fromNative)(value));
        }
    }
    /**
     * Drains the ordered lane, starting with `first` (a batch `pump` took).
     * While a drain runs (or waits in a handler), a wake means "take again":
     * a batch that emptied the lane unscheduled it, so later items wake this
     * thread although the drain has not ended.
     */
    startDrain(first) {
        if (first !== undefined) {
            this.queued.push(first);
        }
        if (this.draining) {
            this.again = true;
            return;
        }
        this.draining = true;
        // Runs synchronously until a notification handler suspends.
        this.drain().catch((e) => report("the dispatcher", e));
    }
    /** Batches taken by `pump` for the drain, in order. */
    queued = [];
    /** A wake (or a batch) came while draining: take again before ending. */
    again = false;
    async drain() {
        try {
            for (;;) {
                this.again = false;
                let items = this.queued.shift();
                if (items === undefined) {
                    const text = this.native.takeOrdered(64);
                    if (text === null) {
                        return; // empty and unscheduled: the next item wakes this thread
                    }
                    items = JSON.parse(text);
                }
                // The batch's last element: whether the lane still held more.
                const more = items.pop() === 1;
                for (const item of items) {
                    switch (item[0]) {
                        case 0: {
                            const run = { active: true, dispatcher: this };
                            const scoped = handlerScope !== undefined;
                            this.unscoped = !scoped;
                            const waiting = this.notification(item[1], item[2], run);
                            if (waiting !== undefined) {
                                handlerScope ??= new node_async_hooks_1.AsyncLocalStorage();
                                try {
                                    await waiting;
                                }
                                catch (e) {
                                    report(`the notification handler for ${item[1]}`, e);
                                }
                            }
                            this.unscoped = false;
                            run.active = false;
                            break;
                        }
                        case 1:
                            this.request(item[1], item[2], item[3], item[4]);
                            break;
                        case 2:
                            this.complete(item[1], item[2], item[3]);
                            break;
                        case 4:
                            this.closed(item[1]);
                            break;
                        case 6:
                        case 7:
                            this.hook(item);
                            break;
                    }
                }
                if (!more && !this.again && this.queued.length === 0) {
                    return;
                }
            }
        }
        finally {
            this.draining = false;
        }
    }
    /** Runs a notification handler; returns its promise if it has one. */
    notification(method, params, run) {
        const fn = this.handler.onNotification;
        if (fn === undefined) {
            return undefined;
        }
        try {
            const handler = this.handler;
            const result = handlerScope === undefined
                ? fn.call(handler, method, params)
                : handlerScope.run(run, () => fn.call(handler, method, params));
            return isThenable(result) ? result : undefined;
        }
        catch (e) {
            report(`the notification handler for ${method}`, e);
            return undefined;
        }
    }
    request(method, params, key, id) {
        const armed = this.native.arm(key);
        if (armed & 2) {
            // Answered by the core already (or closed): no handler.
            this.native.dropRequest(key);
            return;
        }
        const incoming = new Incoming(id, method, this.connection);
        this.requests.set(key, incoming);
        if (armed & 1) {
            incoming.cancel();
        }
        const fn = this.handler.onRequest;
        if (fn === undefined) {
            this.requests.delete(key);
            this.native.respondMethodNotFound(key);
            return;
        }
        let result;
        try {
            result = fn.call(this.handler, method, params, incoming);
        }
        catch (e) {
            this.answerError(key, e);
            return;
        }
        if (isThenable(result)) {
            result.then((value) => this.answer(key, value), (e) => this.answerError(key, e));
        }
        else {
            this.answer(key, result);
        }
    }
    answer(key, value) {
        this.requests.delete(key);
        let text;
        try {
            text = value === undefined ? undefined : JSON.stringify(value);
        }
        catch (e) {
            this.native.respondInternalError(key, `the handler's result is not JSON: ${String(e)}`);
            report("a request handler's result", e);
            return;
        }
        this.native.respond(key, text ?? null);
    }
    /**
     * Answers a handler's failure. A {@link RequestError} is answered
     * unchanged (code, message, `data`), `MethodNotFound` included: the typed
     * defaults' `new MethodNotFound(method)` carries the core's wording for
     * this method, and a nested call's error that escaped the handler keeps
     * the peer's code, message and `data` (it is not rewritten into
     * "method not found" for this request's method).
     */
    answerError(key, e) {
        const incoming = this.requests.get(key);
        this.requests.delete(key);
        if (e instanceof errors_1.RequestError) {
            let data;
            try {
                data = e.data === undefined ? undefined : JSON.stringify(e.data);
            }
            catch {
                data = undefined;
            }
            this.native.respondError(key, e.code, e.message, data ?? null);
        }
        else if (incoming?.cancelled && isAbort(e)) {
            // The handler stopped because it was cancelled.
            this.native.respondCancelled(key);
        }
        else {
            if (!incoming?.superseded) {
                report(`the request handler for ${incoming?.method ?? "a request"}`, e);
            }
            this.native.respondInternalError(key, describe(e));
        }
    }
    closed(reason) {
        this.closeReason = reason;
        for (const incoming of this.requests.values()) {
            incoming.supersede();
        }
        spawned.delete(this.native);
        if (this.pending.size === 0) {
            this.keepAlive(false);
        }
    }
    /** Whether a call made now comes from one of this connection's running notification handlers. */
    skipsBarrier() {
        if (this.unscoped) {
            return true;
        }
        const run = handlerScope?.getStore();
        return run !== undefined && run.active && run.dispatcher === this;
    }
    guard(what, fn) {
        try {
            fn();
        }
        catch (e) {
            report(what, e);
        }
    }
}
function isThenable(value) {
    return (value !== null &&
        (typeof value === "object" || typeof value === "function") &&
        typeof value.then === "function");
}
function isAbort(e) {
    return e instanceof Error && (e.name === "AbortError" || e instanceof errors_1.AcpError);
}
function describe(e) {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
/** Errors nobody awaits (a handler that threw) go to stderr, never unhandled. */
function report(what, e) {
    const text = e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e);
    process.stderr.write(`libacp: ${what} raised: ${text}\n`);
}
/** Which hooks the native side delivers (as `[6, ...]`/`[7, ...]` items). */
function hookFlags(hooks) {
    return { trace: hooks.trace !== undefined, events: hooks.events !== undefined };
}
function made(result) {
    if (typeof result === "string") {
        throw (0, errors_1.fromNativeText)(result);
    }
    return result;
}
/**
 * An ACP connection in one role, over the dynamic API. Make one with
 * {@link Connection.spawnAgent} (client), {@link Connection.fromStdio}
 * (agent) or {@link Connection.fromFds} (either role).
 */
class Connection {
    /** @internal */
    native;
    /** @internal */
    dispatcher;
    constructor(dispatcher, conn) {
        this.dispatcher = dispatcher;
        this.native = conn;
        dispatcher.native = conn;
        dispatcher.connection = this;
        dispatcher.startReading();
    }
    /**
     * Client side: starts `command` with `args` (in its own process group)
     * and talks ACP over its stdio. Throws `SpawnError` if it cannot start.
     * The agent is killed if this process exits while it runs.
     */
    static spawnAgent(command, args = [], handler = {}, options = {}) {
        if (typeof command !== "string") {
            throw new TypeError(`command must be a string, not ${typeof command}`);
        }
        if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) {
            throw new TypeError("args must be an array of strings");
        }
        const { native: opts, hooks } = (0, options_1.nativeOptions)(options);
        const dispatcher = new Dispatcher(handler, hooks);
        const conn = made(native.connect({
            kind: "spawn",
            command,
            args: [...args],
            stderr: hooks.stderr !== undefined,
            ...hookFlags(hooks),
            driveReads: (0, options_1.driveReads)(),
        }, opts, dispatcher.wake));
        watchExit(conn);
        return new Connection(dispatcher, conn);
    }
    /**
     * Agent side: serves on this process's stdin and stdout. Write nothing
     * else to stdout afterwards (log to stderr).
     */
    static fromStdio(handler = {}, options = {}) {
        const { native: opts, hooks } = (0, options_1.nativeOptions)(options);
        const dispatcher = new Dispatcher(handler, hooks);
        return new Connection(dispatcher, made(native.connect({ kind: "stdio", ...hookFlags(hooks), driveReads: (0, options_1.driveReads)() }, opts, dispatcher.wake)));
    }
    /**
     * Either role over descriptors this takes ownership of (it closes them):
     * a read end and a write end (pipes, FIFOs, sockets, files), or one
     * connected stream socket passed as both. Pipes and FIFOs are set
     * non-blocking. A `RangeError` (a descriptor that is not open, a pipe
     * given twice, a datagram socket) leaves them to the caller.
     */
    static fromFds(readFd, writeFd, handler = {}, options) {
        const role = options?.role;
        if (role !== "client" && role !== "agent") {
            throw new TypeError(`role must be "client" or "agent", not ${JSON.stringify(role)}`);
        }
        const { native: opts, hooks } = (0, options_1.nativeOptions)(options, ["role"]);
        const dispatcher = new Dispatcher(handler, hooks);
        return new Connection(dispatcher, made(native.connect({ kind: "fds", role, readFd, writeFd, ...hookFlags(hooks), driveReads: (0, options_1.driveReads)() }, opts, dispatcher.wake)));
    }
    /**
     * Client side: connects to the remote agent at `url` (`ws://`, `wss://`:
     * WebSocket; `http://`, `https://`: Streamable HTTP, or WebSocket first
     * with `preferWebsocket`). Rejects with `RemoteError` (`kind`, `status`)
     * when it cannot be reached, or with a `TypeError`/`RangeError` for an
     * option the core refuses (checked before anything starts). Over
     * Streamable HTTP the first request is `initialize`: a refused token or a
     * wrong path shows as its failure (a `RemoteError` too).
     */
    static connect(url, handler = {}, options = {}) {
        return new Promise((resolve, reject) => {
            if (typeof url !== "string") {
                throw new TypeError(`url must be a string, not ${typeof url}`);
            }
            const { native: opts, hooks } = (0, options_1.nativeOptions)(options);
            const refused = native.connectRemote(url, opts, (text) => {
                const outcome = JSON.parse(text);
                if (outcome.id === undefined) {
                    reject((0, errors_1.fromNative)(outcome));
                    return;
                }
                try {
                    resolve(Connection.onRemote(outcome.id, "client", handler, opts, hooks));
                }
                catch (e) {
                    reject(e);
                }
            });
            if (refused !== null) {
                throw (0, errors_1.fromNativeText)(refused);
            }
        });
    }
    /** @internal A connection over a remote transport the native module parked. */
    static onRemote(id, role, handler, opts, hooks) {
        const dispatcher = new Dispatcher(handler, hooks);
        return new Connection(dispatcher, made(native.connect({ kind: "remote", role, id, ...hookFlags(hooks), driveReads: (0, options_1.driveReads)() }, opts, dispatcher.wake)));
    }
    /** `"client"` or `"agent"`. */
    get role() {
        return this.native.role;
    }
    /**
     * Sends a request now (requests and notifications leave in the order they
     * are made) and resolves with the peer's result. Rejects with the peer's
     * {@link RequestError}, {@link ConnectionClosed}, `Cancelled`,
     * `RequestTimeout`, or a refusal (`RefusedError`, `CapabilityError`,
     * `InvalidParams`: nothing was sent).
     */
    request(method, params, options = {}) {
        const dispatcher = this.dispatcher;
        let text;
        try {
            text = params === undefined ? null : JSON.stringify(params);
        }
        catch (e) {
            return Promise.reject(new TypeError(`params are not JSON: ${String(e)}`));
        }
        const signal = options.signal;
        if (signal?.aborted) {
            return Promise.reject(signal.reason ?? new errors_1.AcpError("aborted"));
        }
        const skip = dispatcher.skipsBarrier();
        const timeout = options.timeout;
        return new Promise((resolve, reject) => {
            const pending = { resolve, reject };
            const tag = dispatcher.tag(pending);
            if (signal === undefined) {
                const refused = this.native.call(method, text, tag, skip, timeout ?? null);
                if (refused !== null) {
                    dispatcher.forget(tag);
                    reject((0, errors_1.fromNativeText)(refused));
                }
                return;
            }
            const made = this.native.callCancellable(method, text, tag, skip, timeout ?? null);
            if (typeof made === "string") {
                dispatcher.forget(tag);
                reject((0, errors_1.fromNativeText)(made));
                return;
            }
            const onAbort = () => {
                made.cancel(options.keepWaiting === true);
            };
            signal.addEventListener("abort", onAbort, { once: true });
            pending.cleanup = () => signal.removeEventListener("abort", onAbort);
        });
    }
    /**
     * Sends a notification: queued at once while the outgoing queue has
     * room, otherwise once it has. Refusals reject at once.
     */
    notify(method, params) {
        let text;
        try {
            text = params === undefined ? null : JSON.stringify(params);
        }
        catch (e) {
            return Promise.reject(new TypeError(`params are not JSON: ${String(e)}`));
        }
        const sent = this.native.notify(method, text);
        if (sent === 0) {
            return Promise.resolve();
        }
        if (typeof sent === "string") {
            return Promise.reject((0, errors_1.fromNativeText)(sent));
        }
        return this.dispatcher
            .completion((tag) => this.native.notifyWait(method, text, tag))
            .then(() => undefined);
    }
    /**
     * Client side: cancels the session's prompt turn (`session/cancel`); the
     * session's pending permission requests are answered `cancelled` and
     * their handlers' signals abort.
     */
    async cancelSession(sessionId) {
        await this.dispatcher.completion((tag) => this.native.cancelSession(sessionId, tag));
    }
    /**
     * Closes the connection (idempotent): pending calls reject with
     * {@link ConnectionClosed}, handlers' signals abort, a spawned agent is
     * shut down (stdin closed, then SIGTERM, then SIGKILL). Resolves when all
     * of that is done.
     */
    async close() {
        await this.dispatcher.completion((tag) => this.native.close(tag));
    }
    /** Resolves with the reason once the connection is closed. */
    closed() {
        return this.dispatcher.completion((tag) => this.native.closed(tag));
    }
    /** Resolves once closed, everything queued written and a spawned agent gone. */
    async terminated() {
        await this.dispatcher.completion((tag) => this.native.terminated(tag));
    }
    /** Resolves with how the spawned agent ended once it exits (it is not asked to). */
    waitExit() {
        return this.dispatcher.completion((tag) => {
            if (!this.native.waitExit(tag)) {
                throw new errors_1.AcpError("this connection did not spawn an agent");
            }
        });
    }
    /** Why the connection closed, or `null` while it is open. */
    get closeReason() {
        return this.native.closeReason;
    }
    /** The negotiated protocol version, once initialized. */
    get protocolVersion() {
        return this.native.protocolVersion;
    }
    /** The spawned agent's process id (client side). */
    get pid() {
        return this.native.pid;
    }
    /** How the spawned agent ended, or `null` while it runs. */
    get exitStatus() {
        const text = this.native.exitStatus;
        return text === null ? null : JSON.parse(text);
    }
    /** The capabilities the peer advertised (`{}` before `initialize`). */
    peerCapabilities() {
        return JSON.parse(this.native.peerCapabilities());
    }
    /** Ids of the sessions open on this connection. */
    sessions() {
        return this.native.sessions();
    }
    /**
     * Client side with `sessionModel: true`: the core's model of the session
     * (messages, tool calls, plan, mode, commands, usage, ...), or `null` for a
     * session it has not seen. Throws when the session model is off.
     */
    sessionSnapshot(sessionId) {
        const text = this.native.sessionSnapshot(sessionId);
        return text === null ? null : JSON.parse(text);
    }
    /** `await using conn = ...` closes it. */
    async [Symbol.asyncDispose]() {
        await this.close();
    }
}
exports.Connection = Connection;
/**
 * A connected pair of Unix stream sockets, as two descriptors the caller
 * owns (close-on-exec). Hand each to a `fromFds` (which takes it over), for
 * example to run a client and an agent in one process in tests, or one end
 * to `fromFds` and the other to `new net.Socket({ fd })`.
 */
function socketPair() {
    const [a, b] = native.socketPair();
    return [a, b];
}
