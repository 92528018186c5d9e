"use strict";
/**
 * The typed API: an {@link Agent} or {@link Client} object with one async
 * method per ACP method, and the connections that call the peer's methods
 * by name ({@link ClientConnection} drives an agent, {@link AgentConnection}
 * is the agent's way back to its client). Names mirror the Rust and Python
 * typed APIs (camelCased) and the official TypeScript SDK.
 *
 * Everything goes through the dynamic {@link Connection} underneath, so the
 * rules are the core's: a method the host does not implement is answered
 * `-32601`; a prompt cancelled with `session/cancel` answers
 * `stopReason: "cancelled"` whatever its handler returns; `await prompt()`
 * resolves after every `session/update` of the turn was handled.
 *
 * The methods of the unstable v1 extensions ({@link UNSTABLE_METHODS}:
 * `forkSession`, `archiveSession`, `mcpMessage`, the proxy chain's
 * `proxyInitialize` and `proxySuccessor`, ...) are typed like the stable
 * ones. The core routes and checks them (direction, params,
 * capabilities, sessions) only on connections made with the `unstable`
 * option naming their feature (`unstable: ["all"]` or `["session_fork"]`,
 * the Rust SDK's feature names); without it they still go out and come in,
 * as extension methods the core does not check.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ClientConnection = exports.AgentConnection = exports.CLIENT_PROXY_METHODS = exports.AGENT_PROXY_METHODS = exports.CLIENT_METHODS = exports.AGENT_METHODS = void 0;
exports.runAgent = runAgent;
const connection_1 = require("./connection");
const errors_1 = require("./errors");
const methods_1 = require("./methods");
/**
 * The agent's methods: wire name to {@link Agent} method (exactly the
 * schema's agent methods, `./methods`: the compiler checks it).
 */
exports.AGENT_METHODS = {
    initialize: "initialize",
    authenticate: "authenticate",
    logout: "logout",
    "session/new": "newSession",
    "session/load": "loadSession",
    "session/resume": "resumeSession",
    "session/list": "listSessions",
    "session/close": "closeSession",
    "session/delete": "deleteSession",
    "session/set_mode": "setSessionMode",
    "session/set_config_option": "setSessionConfigOption",
    "session/prompt": "prompt",
    "session/cancel": "cancel",
    "session/fork": "forkSession",
    "session/archive": "archiveSession",
    "session/unarchive": "unarchiveSession",
    "session/status": "sessionStatus",
    "session/set_title": "setSessionTitle",
    "auth/status": "authStatus",
    "providers/list": "listProviders",
    "providers/set": "setProvider",
    "providers/disable": "disableProvider",
    "mcp/message": "mcpMessage",
};
/**
 * The client's methods: wire name to {@link Client} method (exactly the
 * schema's client methods, `./methods`: the compiler checks it).
 */
exports.CLIENT_METHODS = {
    "session/request_permission": "requestPermission",
    "session/update": "sessionUpdate",
    "fs/read_text_file": "readTextFile",
    "fs/write_text_file": "writeTextFile",
    "terminal/create": "createTerminal",
    "terminal/output": "terminalOutput",
    "terminal/release": "releaseTerminal",
    "terminal/wait_for_exit": "waitForTerminalExit",
    "terminal/kill": "killTerminal",
    "elicitation/create": "createElicitation",
    "elicitation/complete": "elicitationComplete",
    "mcp/message": "mcpMessage",
    "auth/status_update": "authStatusUpdate",
};
/**
 * The proxy-chain methods a proxy (an agent to its conductor) handles:
 * `proxy/initialize` and both kinds of `proxy/successor` (the conductor
 * calls them), as the Rust typed API.
 */
exports.AGENT_PROXY_METHODS = {
    requests: { "proxy/initialize": "proxyInitialize", "proxy/successor": "proxySuccessor" },
    notifications: { "proxy/successor": "proxySuccessorNotification" },
};
/**
 * The proxy-chain methods a conductor (a client to each proxy) handles:
 * both kinds of `proxy/successor` (the proxy calls them).
 */
exports.CLIENT_PROXY_METHODS = {
    requests: { "proxy/successor": "proxySuccessor" },
    notifications: { "proxy/successor": "proxySuccessorNotification" },
};
/**
 * One role's {@link Dispatch}: `table` (`AGENT_METHODS`/`CLIENT_METHODS`)
 * split by each method's kind in `schema`, and the proxy chain's.
 */
function byKind(table, schema, proxy) {
    const requests = { ...proxy.requests };
    const notifications = { ...proxy.notifications };
    for (const [wire, name] of Object.entries(table)) {
        (schema[wire]?.result === null ? notifications : requests)[wire] = name;
    }
    return { requests, notifications };
}
const AGENT_DISPATCH = byKind(exports.AGENT_METHODS, methods_1.AGENT_SCHEMA, exports.AGENT_PROXY_METHODS);
const CLIENT_DISPATCH = byKind(exports.CLIENT_METHODS, methods_1.CLIENT_SCHEMA, exports.CLIENT_PROXY_METHODS);
/**
 * Adapts a typed host object to the dynamic {@link Handler}. `dispatch`
 * names the host's method for each wire method and kind: a request is
 * never passed to a notification's method nor the reverse (the core
 * refuses those for the methods it routes, but passes an unstable method
 * whose feature is off unchecked).
 */
function serve(host, dispatch) {
    const own = (o, key) => Object.prototype.hasOwnProperty.call(o, key);
    const methodOf = (wire, notification) => {
        const table = notification ? dispatch.notifications : dispatch.requests;
        if (!own(table, wire)) {
            return undefined;
        }
        const fn = host[table[wire]];
        return typeof fn === "function" ? fn : undefined;
    };
    const ext = (name, wire) => {
        const fn = wire.startsWith("_") ? host[name] : undefined;
        return typeof fn === "function" ? fn : undefined;
    };
    return {
        onRequest(method, params, context) {
            const fn = methodOf(method, false);
            if (fn !== undefined) {
                return fn.call(host, params, context);
            }
            const extension = ext("extMethod", method);
            if (extension !== undefined) {
                return extension.call(host, method, params, context);
            }
            throw new errors_1.MethodNotFound(method);
        },
        onNotification(method, params) {
            const fn = methodOf(method, true);
            if (fn !== undefined) {
                return fn.call(host, params);
            }
            return ext("extNotification", method)?.call(host, method, params);
        },
    };
}
/** What both typed connections share: the dynamic connection and its lifecycle. */
class TypedConnection {
    /** The dynamic API (method names and JSON values) on the same connection. */
    connection;
    constructor(connection) {
        this.connection = connection;
    }
    call(method, params, options) {
        return this.connection.request(method, params, options);
    }
    /** Sends an extension request (`method` should start with `_`). */
    extMethod(method, params, options) {
        return this.connection.request(method, params, options);
    }
    /** Sends an extension notification. */
    extNotification(method, params) {
        return this.connection.notify(method, params);
    }
    /** See {@link Connection.close}. */
    close() {
        return this.connection.close();
    }
    /** See {@link Connection.closed}. */
    closed() {
        return this.connection.closed();
    }
    /** See {@link Connection.terminated}. */
    terminated() {
        return this.connection.terminated();
    }
    /** Why the connection closed, or `null` while it is open. */
    get closeReason() {
        return this.connection.closeReason;
    }
    /** The negotiated protocol version, once initialized. */
    get protocolVersion() {
        return this.connection.protocolVersion;
    }
    /** The capabilities the peer advertised (`{}` before `initialize`). */
    peerCapabilities() {
        return this.connection.peerCapabilities();
    }
    /** `await using conn = ...` closes it. */
    async [Symbol.asyncDispose]() {
        await this.close();
    }
}
function connectHost(host, conn, what) {
    const made = typeof host === "function" ? host(conn) : host;
    if (made === null || typeof made !== "object") {
        throw new TypeError(`${what} must be an object (or a function returning one), not ${made === null ? "null" : typeof made}`);
    }
    const hook = made.onConnect;
    if (typeof hook === "function") {
        hook.call(made, conn);
    }
    return made;
}
/**
 * The agent's side of a connection: what the agent asks of its client.
 * Made by {@link AgentConnection.serveStdio} (or {@link AgentConnection.fromFds}),
 * which hands it to the agent's `onConnect`. Each method is one ACP call;
 * errors, cancellation and threads as for {@link Connection.request}.
 */
class AgentConnection extends TypedConnection {
    constructor(connection) {
        super(connection);
    }
    /**
     * Serves `agent` on this process's stdin and stdout. Write nothing else to
     * stdout afterwards (log to stderr). See also {@link runAgent}.
     */
    static serveStdio(agent, options = {}) {
        return AgentConnection.make(agent, (handler) => connection_1.Connection.fromStdio(handler, options));
    }
    /** Serves `agent` over descriptors it takes over (see {@link Connection.fromFds}). */
    static fromFds(readFd, writeFd, agent, options = {}) {
        return AgentConnection.make(agent, (handler) => connection_1.Connection.fromFds(readFd, writeFd, handler, { ...options, role: "agent" }));
    }
    /** @internal Serves `agent` on a server's remote connection (see {@link serve}). */
    static overRemote(id, agent, opts, hooks) {
        return AgentConnection.make(agent, (handler) => connection_1.Connection.onRemote(id, "agent", handler, opts, hooks));
    }
    static make(agent, connect) {
        // The handler is bound before the host exists (so nothing the peer sends
        // can be missed) and dispatches to it once made.
        let host;
        let handler;
        const late = {
            onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
            onNotification: (m, p) => handler?.onNotification?.(m, p),
        };
        const conn = new AgentConnection(connect(late));
        try {
            host = connectHost(agent, conn, "agent");
        }
        catch (e) {
            conn.connection.native.release();
            throw e;
        }
        handler = serve(host, AGENT_DISPATCH);
        return conn;
    }
    /** `session/update`: streams one update of a session to the client. */
    sessionUpdate(params) {
        return this.connection.notify("session/update", params);
    }
    /** `session/request_permission`. */
    requestPermission(params, options) {
        return this.call("session/request_permission", params, options);
    }
    /** `fs/read_text_file` (the client must advertise `fs.readTextFile`). */
    readTextFile(params, options) {
        return this.call("fs/read_text_file", params, options);
    }
    /** `fs/write_text_file` (the client must advertise `fs.writeTextFile`). */
    writeTextFile(params, options) {
        return this.call("fs/write_text_file", params, options);
    }
    /** `terminal/create` (the client must advertise `terminal`). */
    createTerminal(params, options) {
        return this.call("terminal/create", params, options);
    }
    /** `terminal/output`. */
    terminalOutput(params, options) {
        return this.call("terminal/output", params, options);
    }
    /** `terminal/release`. */
    releaseTerminal(params, options) {
        return this.call("terminal/release", params, options);
    }
    /** `terminal/wait_for_exit`. */
    waitForTerminalExit(params, options) {
        return this.call("terminal/wait_for_exit", params, options);
    }
    /** `terminal/kill`. */
    killTerminal(params, options) {
        return this.call("terminal/kill", params, options);
    }
    /** `elicitation/create` (the client must advertise elicitation). */
    createElicitation(params, options) {
        return this.call("elicitation/create", params, options);
    }
    /** `elicitation/complete`. */
    elicitationComplete(params) {
        return this.connection.notify("elicitation/complete", params);
    }
    // Unstable (the `unstable` option names the feature in brackets).
    /**
     * `mcp/message` to an MCP server of transport `acp` that the client
     * provides (`mcp_over_acp`).
     */
    mcpMessage(params, options) {
        return this.call("mcp/message", params, options);
    }
    /** `auth/status_update`: the agent's authentication state changed (`auth_status`). */
    authStatusUpdate(params) {
        return this.connection.notify("auth/status_update", params);
    }
    /**
     * `proxy/successor` (`proxy_chains`): this proxy forwards a request
     * (`method`, `params`) to its successor through the conductor; the answer
     * is the successor's result, unchanged.
     */
    proxySuccessor(params, options) {
        return this.call("proxy/successor", params, options);
    }
    /**
     * `proxy/successor` as a notification (`proxy_chains`): this proxy
     * forwards a notification to its successor.
     */
    proxySuccessorNotification(params) {
        return this.connection.notify("proxy/successor", params);
    }
}
exports.AgentConnection = AgentConnection;
/**
 * Serves `agent` on stdio until the client goes away (its stdin closes) and
 * everything is written: what an agent program's main awaits.
 */
async function runAgent(agent, options = {}) {
    const conn = AgentConnection.serveStdio(agent, options);
    await conn.closed();
    await conn.terminated();
}
/**
 * The client's side of a connection: what the client asks of the agent.
 * Made by {@link ClientConnection.spawn} (or {@link ClientConnection.fromFds}),
 * which hands it to the client's `onConnect`. Call {@link initialize} first
 * (the core refuses anything else before it).
 */
class ClientConnection extends TypedConnection {
    constructor(connection) {
        super(connection);
    }
    /**
     * Starts the agent `command` with `args` and connects to its stdio (see
     * {@link Connection.spawnAgent} for `options`: `cwd`, `env`, `stderr`,
     * `graceAfterStdinCloseMs`, ...). Throws `SpawnError` if it cannot start.
     */
    static spawn(command, args = [], client = {}, options = {}) {
        return ClientConnection.make(client, (handler) => connection_1.Connection.spawnAgent(command, args, handler, options));
    }
    /** Client side over descriptors it takes over (see {@link Connection.fromFds}). */
    static fromFds(readFd, writeFd, client = {}, options = {}) {
        return ClientConnection.make(client, (handler) => connection_1.Connection.fromFds(readFd, writeFd, handler, { ...options, role: "client" }));
    }
    /**
     * Connects to the remote agent at `url` (see {@link Connection.connect}:
     * `ws://`/`wss://` WebSocket, `http://`/`https://` Streamable HTTP).
     * Rejects with `RemoteError` (`kind`, `status`) when it cannot be reached.
     */
    static async connect(url, client = {}, options = {}) {
        let handler;
        const late = {
            onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
            onNotification: (m, p) => handler?.onNotification?.(m, p),
        };
        const connection = await connection_1.Connection.connect(url, late, options);
        const conn = new ClientConnection(connection);
        let host;
        try {
            host = connectHost(client, conn, "client");
        }
        catch (e) {
            connection.native.release();
            throw e;
        }
        handler = serve(host, CLIENT_DISPATCH);
        return conn;
    }
    static make(client, connect) {
        let handler;
        const late = {
            onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
            onNotification: (m, p) => handler?.onNotification?.(m, p),
        };
        const conn = new ClientConnection(connect(late));
        let host;
        try {
            host = connectHost(client, conn, "client");
        }
        catch (e) {
            conn.connection.native.release();
            throw e;
        }
        handler = serve(host, CLIENT_DISPATCH);
        return conn;
    }
    /** `initialize`: negotiates the version and capabilities. */
    initialize(params, options) {
        return this.call("initialize", params, options);
    }
    /** `authenticate`. */
    authenticate(params, options) {
        return this.call("authenticate", params, options);
    }
    /** `logout`. */
    logout(params = {}, options) {
        return this.call("logout", params, options);
    }
    /** `session/new`. */
    newSession(params, options) {
        return this.call("session/new", params, options);
    }
    /** `session/load` (the agent must advertise `loadSession`). */
    loadSession(params, options) {
        return this.call("session/load", params, options);
    }
    /** `session/resume` (the agent must advertise it). */
    resumeSession(params, options) {
        return this.call("session/resume", params, options);
    }
    /** `session/list` (the agent must advertise it). */
    listSessions(params = {}, options) {
        return this.call("session/list", params, options);
    }
    /** `session/close` (the agent must advertise it). */
    closeSession(params, options) {
        return this.call("session/close", params, options);
    }
    /** `session/delete` (the agent must advertise it). */
    deleteSession(params, options) {
        return this.call("session/delete", params, options);
    }
    /** `session/set_mode`. */
    setSessionMode(params, options) {
        return this.call("session/set_mode", params, options);
    }
    /** `session/set_config_option`. */
    setSessionConfigOption(params, options) {
        return this.call("session/set_config_option", params, options);
    }
    /**
     * One prompt turn: resolves after every `session/update` the agent sent
     * before its answer was handled by `Client.sessionUpdate`. To end a turn
     * the ACP way call {@link cancel}; aborting `options.signal` cancels the
     * request itself (`$/cancel_request`).
     */
    prompt(params, options) {
        return this.call("session/prompt", params, options);
    }
    /**
     * `session/cancel`: the agent winds the turn down and answers its prompt
     * `cancelled`; the session's pending permission requests are answered
     * `cancelled` by the core (their handlers' signals abort).
     */
    cancel(sessionId) {
        return this.connection.cancelSession(sessionId);
    }
    // Unstable (the `unstable` option names the feature in brackets).
    /**
     * `session/fork` (`session_fork`; the agent must advertise
     * `sessionCapabilities.fork`): the session the answer names is open
     * afterwards; the one it copies need not be open here.
     */
    forkSession(params, options) {
        return this.call("session/fork", params, options);
    }
    /**
     * `session/archive` (`session_archive`; the agent must advertise
     * `sessionCapabilities.archive`): closes the session it names here.
     */
    archiveSession(params, options) {
        return this.call("session/archive", params, options);
    }
    /** `session/unarchive` (`session_archive`; needs `sessionCapabilities.archive`). */
    unarchiveSession(params, options) {
        return this.call("session/unarchive", params, options);
    }
    /**
     * `session/status` (`session_status`; needs `sessionCapabilities.status`);
     * may name any session the agent knows.
     */
    sessionStatus(params, options) {
        return this.call("session/status", params, options);
    }
    /** `session/set_title` (`session_set_title`; needs `sessionCapabilities.title`). */
    setSessionTitle(params, options) {
        return this.call("session/set_title", params, options);
    }
    /** `auth/status` (`auth_status`; needs `auth.status`). */
    authStatus(params = {}, options) {
        return this.call("auth/status", params, options);
    }
    /** `providers/list` (`llm_providers`; needs `providers`). */
    listProviders(params = {}, options) {
        return this.call("providers/list", params, options);
    }
    /** `providers/set` (`llm_providers`; needs `providers`). */
    setProvider(params, options) {
        return this.call("providers/set", params, options);
    }
    /** `providers/disable` (`llm_providers`; needs `providers`). */
    disableProvider(params, options) {
        return this.call("providers/disable", params, options);
    }
    /**
     * `mcp/message` as a notification to the agent, from an MCP server of
     * transport `acp` this client provides (`mcp_over_acp`).
     */
    mcpMessage(params) {
        return this.connection.notify("mcp/message", params);
    }
    /**
     * `proxy/initialize` (`proxy_chains`): this client, a conductor,
     * initializes the agent as a proxy. The same params, answer and rules as
     * {@link initialize}: it is this connection's `initialize`.
     */
    proxyInitialize(params, options) {
        return this.call("proxy/initialize", params, options);
    }
    /**
     * `proxy/successor` (`proxy_chains`): the conductor delivers a request
     * (`method`, `params`) of the proxy's successor; the answer is the
     * proxy's result for it.
     */
    proxySuccessor(params, options) {
        return this.call("proxy/successor", params, options);
    }
    /**
     * `proxy/successor` as a notification (`proxy_chains`): the conductor
     * delivers a notification of the proxy's successor.
     */
    proxySuccessorNotification(params) {
        return this.connection.notify("proxy/successor", params);
    }
    /** The spawned agent's process id. */
    get pid() {
        return this.connection.pid;
    }
    /**
     * Client side with `sessionModel: true`: the core's model of a session
     * (see {@link Connection.sessionSnapshot}).
     */
    sessionSnapshot(sessionId) {
        return this.connection.sessionSnapshot(sessionId);
    }
}
exports.ClientConnection = ClientConnection;
