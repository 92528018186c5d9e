"use strict";
/**
 * A remote ACP server ({@link serve}): the core's server (WebSocket and
 * Streamable HTTP on one endpoint, `libacp_core::remote::Server`) serving
 * one agent per remote connection. The agent factory runs on the
 * JavaScript thread for each connection, and its connection is an
 * {@link AgentConnection} like any other (same inbox, same rules).
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.Server = void 0;
exports.serve = serve;
const native = require("../native");
const errors_1 = require("./errors");
const options_1 = require("./options");
const typed_1 = require("./typed");
function listenAddress(listen) {
    if (typeof listen === "string") {
        return listen;
    }
    if (typeof listen === "number") {
        return `127.0.0.1:${listen}`;
    }
    if (listen !== null && typeof listen === "object") {
        const host = listen.host ?? "127.0.0.1";
        const port = listen.port ?? 0;
        return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
    }
    throw new TypeError(`listen must be "host:port", a port or { host, port }, not ${typeof listen}`);
}
/** A running remote server. */
class Server {
    /** @internal */
    native;
    closing;
    /** @internal */
    constructor(server) {
        this.native = server;
    }
    /**
     * The endpoint's URL: `"websocket"` (`ws://`, `wss://` with TLS, the
     * default) or `"http"` (`http://`, `https://`), with the listening
     * address as host.
     */
    url(kind = "websocket") {
        const url = this.native.url(kind);
        if (url === null) {
            throw new Error("the server is closed");
        }
        return url;
    }
    /** The listening socket's address. */
    get address() {
        const text = this.native.address;
        if (text === null) {
            throw new Error("the server is closed");
        }
        return JSON.parse(text);
    }
    /** Remote connections open now. */
    get connections() {
        return this.native.connections;
    }
    /**
     * Stops accepting, lets every connection answer what it was asked (a
     * running prompt turn finishes, up to `shutdownGraceMs`), closes them, and
     * resolves once every agent connection was let go. Idempotent.
     */
    shutdown() {
        this.closing ??= new Promise((resolve) => {
            this.native.shutdown(() => resolve());
        });
        return this.closing;
    }
    /** Closes at once: stops accepting and closes every connection (their agents see the end of stream). */
    close() {
        this.native.close();
        this.closing ??= Promise.resolve();
    }
    /** `await using server = await serve(...)` shuts it down. */
    async [Symbol.asyncDispose]() {
        await this.shutdown();
    }
}
exports.Server = Server;
/**
 * Serves ACP to remote clients on `listen` (WebSocket and Streamable HTTP
 * on one endpoint, `options.path`, default `/acp`): for each remote
 * connection, `agent` (an object, or a function called on the JavaScript
 * thread with the connection and a {@link RemoteConnectionInfo}, returning
 * the agent) serves it. Options: the server's (`bearerTokens`,
 * `allowedOrigins`, `tlsCert`/`tlsKey`, `maxConnections`, `idleTimeoutMs`,
 * `shutdownGraceMs`, ...) and the agent connections' (`requireAuth`,
 * `maxFrameSize`, `trace`, `events`, ...). Rejects when it cannot listen,
 * or with a `TypeError`/`RangeError` for an option the core refuses
 * (checked before anything listens).
 */
async function serve(listen, agent, options = {}) {
    const address = listenAddress(listen);
    const { native: opts, hooks } = (0, options_1.nativeOptions)(options);
    const onConnection = (text) => {
        const info = JSON.parse(text);
        const { id, ...rest } = info;
        const factory = typeof agent === "function" ? (client) => agent(client, rest) : agent;
        try {
            typed_1.AgentConnection.overRemote(id, factory, opts, hooks);
        }
        catch (e) {
            if (e instanceof errors_1.ConnectionClosed) {
                return; // it ended (or the server closed) before this callback ran
            }
            const text = e instanceof Error ? (e.stack ?? e.message) : String(e);
            process.stderr.write(`libacp: the agent factory for a remote connection raised: ${text}\n`);
        }
    };
    const made = native.serve(address, opts, onConnection);
    if (typeof made === "string") {
        throw (0, errors_1.fromNativeText)(made);
    }
    return new Server(made);
}
