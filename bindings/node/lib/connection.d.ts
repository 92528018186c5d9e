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
import * as native from "../native";
import { ConnectionClosed } from "./errors";
import { type ConnectionOptions, type ConnectOptions, type Hooks, type SpawnOptions } from "./options";
/** `"client"` (drives an agent) or `"agent"` (serves a client). */
export type Role = "client" | "agent";
/** A request id as the peer sent it. */
export type RequestId = string | number | null;
/** An incoming request, as its handler sees it. */
export interface RequestContext {
    /** The id the peer chose. */
    readonly id: RequestId;
    /** The method. */
    readonly method: string;
    /**
     * Aborted when the peer cancels the request (`$/cancel_request`, or
     * `session/cancel` for a prompt), or when the answer is no longer wanted
     * (the core answered for it, the connection closed). A cancelled prompt
     * answers `stopReason: "cancelled"` whatever the handler returns.
     */
    readonly signal: AbortSignal;
    /** Whether the peer cancelled the request. */
    readonly cancelled: boolean;
    /** Whether the answer is no longer the handler's to give. */
    readonly superseded: boolean;
    /** The connection it came on (for nested calls to the peer). */
    readonly connection: Connection;
}
/** What the peer sends, handled by the host. Both methods are optional. */
export interface Handler {
    /**
     * A request: return (or resolve to) the result, or throw
     * {@link RequestError} to answer with an error. Without it every request
     * is answered `-32601`.
     */
    onRequest?(method: string, params: unknown, context: RequestContext): unknown;
    /** A notification; the next one waits until the returned promise settles. */
    onNotification?(method: string, params: unknown): unknown;
}
/** Per-call settings. */
export interface CallOptions {
    /**
     * Aborting it cancels the call: the peer is sent `$/cancel_request` and
     * the call rejects with `Cancelled` at once (or, with `keepWaiting`,
     * resolves or rejects with the peer's answer, usually `-32800`).
     */
    signal?: AbortSignal;
    /** On abort, keep waiting for the peer's answer. */
    keepWaiting?: boolean;
    /** Milliseconds before the call fails with `RequestTimeout` (overrides `requestTimeoutMs`; 0: none). */
    timeout?: number;
}
/** How a spawned agent ended. */
export interface ExitStatus {
    /** Its exit code, when it exited. */
    code: number | null;
    /** The signal that killed it. */
    signal: number | null;
}
interface Pending {
    resolve(value: unknown): void;
    reject(error: unknown): void;
    cleanup?: () => void;
}
declare class Incoming implements RequestContext {
    readonly id: RequestId;
    readonly method: string;
    readonly connection: Connection;
    readonly controller: AbortController;
    cancelled: boolean;
    superseded: boolean;
    constructor(id: RequestId, method: string, connection: Connection);
    get signal(): AbortSignal;
    cancel(reason?: string): void;
    supersede(): void;
}
/**
 * Takes the core's inbox on the JavaScript thread and hands each delivery to
 * the handler, in order (see the module docs). One per connection.
 */
declare class Dispatcher {
    readonly handler: Handler;
    readonly hooks: Hooks;
    native: native.NativeConnection;
    connection: Connection;
    readonly pending: Map<number, Pending>;
    readonly requests: Map<number, Incoming>;
    private nextTag;
    private draining;
    /**
     * A notification handler that started before `handlerScope` existed runs
     * (or is suspended): every call on this connection skips the barrier
     * until it settles, since its own calls cannot be told from others.
     */
    private unscoped;
    closeReason: string | null;
    constructor(handler: Handler, hooks: Hooks);
    /** Called by the core (through a threadsafe function) when a batch waits. */
    readonly wake: () => void;
    /** Whether this thread reads the transport (see {@link startReading}). */
    private reading;
    /** Whether the descriptor is watched for readability. */
    private watching;
    /**
     * Reads the transport on this thread when it is a descriptor: a libuv
     * poll handle calls {@link pump} when it is readable, so a message is
     * read, dispatched and (for a request answered at once) answered in one
     * turn of the loop, with no engine thread in between. Otherwise an engine
     * thread reads and wakes this one per batch.
     */
    startReading(): void;
    /** Reads what is available and dispatches it (the core's `PumpState`). */
    private readonly pump;
    private readonly pumpIfReading;
    private watch;
    tag(pending: Pending): number;
    /** Whether the wake-up holds the event loop: while open or waited on. */
    private alive;
    private keepAlive;
    /** Forgets a pending operation (completed, or refused before it started). */
    forget(tag: number): void;
    /** A promise completed through the inbox with the tag `start` gets. */
    completion<T>(start: (tag: number) => void): Promise<T>;
    private takeUrgent;
    private handleUrgent;
    /** A traced frame `[6, direction, frame]` or an engine event `[7, kind, message, details]`. */
    private hook;
    private complete;
    /**
     * Drains the ordered lane, starting with `first` (a batch `pump` took).
     * While a drain runs (or waits in a handler), a wake means "take again":
     * a batch that emptied the lane unscheduled it, so later items wake this
     * thread although the drain has not ended.
     */
    private startDrain;
    /** Batches taken by `pump` for the drain, in order. */
    private readonly queued;
    /** A wake (or a batch) came while draining: take again before ending. */
    private again;
    private drain;
    /** Runs a notification handler; returns its promise if it has one. */
    private notification;
    private request;
    private answer;
    /**
     * Answers a handler's failure. A {@link RequestError} is answered
     * unchanged (code, message, `data`), `MethodNotFound` included: the typed
     * defaults' `new MethodNotFound(method)` carries the core's wording for
     * this method, and a nested call's error that escaped the handler keeps
     * the peer's code, message and `data` (it is not rewritten into
     * "method not found" for this request's method).
     */
    private answerError;
    private closed;
    /** Whether a call made now comes from one of this connection's running notification handlers. */
    skipsBarrier(): boolean;
    private guard;
}
/**
 * An ACP connection in one role, over the dynamic API. Make one with
 * {@link Connection.spawnAgent} (client), {@link Connection.fromStdio}
 * (agent) or {@link Connection.fromFds} (either role).
 */
export declare class Connection {
    /** @internal */
    readonly native: native.NativeConnection;
    /** @internal */
    readonly dispatcher: Dispatcher;
    private constructor();
    /**
     * Client side: starts `command` with `args` (in its own process group)
     * and talks ACP over its stdio. Throws `SpawnError` if it cannot start.
     * The agent is killed if this process exits while it runs.
     */
    static spawnAgent(command: string, args?: readonly string[], handler?: Handler, options?: SpawnOptions): Connection;
    /**
     * Agent side: serves on this process's stdin and stdout. Write nothing
     * else to stdout afterwards (log to stderr).
     */
    static fromStdio(handler?: Handler, options?: ConnectionOptions): Connection;
    /**
     * Either role over descriptors this takes ownership of (it closes them):
     * a read end and a write end (pipes, FIFOs, sockets, files), or one
     * connected stream socket passed as both. Pipes and FIFOs are set
     * non-blocking. A `RangeError` (a descriptor that is not open, a pipe
     * given twice, a datagram socket) leaves them to the caller.
     */
    static fromFds(readFd: number, writeFd: number, handler: Handler | undefined, options: ConnectionOptions & {
        role: Role;
    }): Connection;
    /**
     * Client side: connects to the remote agent at `url` (`ws://`, `wss://`:
     * WebSocket; `http://`, `https://`: Streamable HTTP, or WebSocket first
     * with `preferWebsocket`). Rejects with `RemoteError` (`kind`, `status`)
     * when it cannot be reached, or with a `TypeError`/`RangeError` for an
     * option the core refuses (checked before anything starts). Over
     * Streamable HTTP the first request is `initialize`: a refused token or a
     * wrong path shows as its failure (a `RemoteError` too).
     */
    static connect(url: string, handler?: Handler, options?: ConnectOptions): Promise<Connection>;
    /** @internal A connection over a remote transport the native module parked. */
    static onRemote(id: number, role: Role, handler: Handler, opts: native.NativeOption[], hooks: Hooks): Connection;
    /** `"client"` or `"agent"`. */
    get role(): Role;
    /**
     * Sends a request now (requests and notifications leave in the order they
     * are made) and resolves with the peer's result. Rejects with the peer's
     * {@link RequestError}, {@link ConnectionClosed}, `Cancelled`,
     * `RequestTimeout`, or a refusal (`RefusedError`, `CapabilityError`,
     * `InvalidParams`: nothing was sent).
     */
    request(method: string, params?: unknown, options?: CallOptions): Promise<unknown>;
    /**
     * Sends a notification: queued at once while the outgoing queue has
     * room, otherwise once it has. Refusals reject at once.
     */
    notify(method: string, params?: unknown): Promise<void>;
    /**
     * Client side: cancels the session's prompt turn (`session/cancel`); the
     * session's pending permission requests are answered `cancelled` and
     * their handlers' signals abort.
     */
    cancelSession(sessionId: string): Promise<void>;
    /**
     * Closes the connection (idempotent): pending calls reject with
     * {@link ConnectionClosed}, handlers' signals abort, a spawned agent is
     * shut down (stdin closed, then SIGTERM, then SIGKILL). Resolves when all
     * of that is done.
     */
    close(): Promise<void>;
    /** Resolves with the reason once the connection is closed. */
    closed(): Promise<string>;
    /** Resolves once closed, everything queued written and a spawned agent gone. */
    terminated(): Promise<void>;
    /** Resolves with how the spawned agent ended once it exits (it is not asked to). */
    waitExit(): Promise<ExitStatus>;
    /** Why the connection closed, or `null` while it is open. */
    get closeReason(): string | null;
    /** The negotiated protocol version, once initialized. */
    get protocolVersion(): number | null;
    /** The spawned agent's process id (client side). */
    get pid(): number | null;
    /** How the spawned agent ended, or `null` while it runs. */
    get exitStatus(): ExitStatus | null;
    /** The capabilities the peer advertised (`{}` before `initialize`). */
    peerCapabilities(): Record<string, unknown>;
    /** Ids of the sessions open on this connection. */
    sessions(): string[];
    /**
     * Client side with `sessionModel: true`: the core's model of the session
     * (messages, tool calls, plan, mode, commands, usage, ...), or `null` for a
     * session it has not seen. Throws when the session model is off.
     */
    sessionSnapshot(sessionId: string): Record<string, unknown> | null;
    /** `await using conn = ...` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
}
/** @internal The dispatcher's marker for typed layers. */
export { ConnectionClosed };
/**
 * A connected pair of Unix stream sockets, as two descriptors the caller
 * owns (close-on-exec). Hand each to a `fromFds` (which takes it over), for
 * example to run a client and an agent in one process in tests, or one end
 * to `fromFds` and the other to `new net.Socket({ fd })`.
 */
export declare function socketPair(): [number, number];
