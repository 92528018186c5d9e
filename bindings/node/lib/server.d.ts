/**
 * A remote ACP server ({@link serve}): the core's server (WebSocket and
 * Streamable HTTP on one endpoint, `libacp_core::remote::Server`) serving
 * one agent per remote connection. The agent factory runs on the
 * JavaScript thread for each connection, and its connection is an
 * {@link AgentConnection} like any other (same inbox, same rules).
 */
import * as native from "../native";
import { type ServeOptions } from "./options";
import { AgentConnection, type Agent } from "./typed";
/** Where a server listens: `"host:port"`, a port on 127.0.0.1, or `{ host, port }`. */
export type Listen = string | number | {
    host?: string;
    port?: number;
};
/** The listening socket's address, as `net.Server.address()` gives it. */
export interface ServerAddress {
    address: string;
    port: number;
    family: "IPv4" | "IPv6";
}
/** A remote connection, as the agent factory's second argument sees it. */
export interface RemoteConnectionInfo {
    /** `"websocket"` or `"http"` (Streamable HTTP). */
    kind: "websocket" | "http";
    /** The connection's `Acp-Connection-Id`. */
    connectionId: string;
    /** The client's address (`host:port`). */
    remoteAddr: string;
}
/** What {@link serve} makes an agent with, for each remote connection. */
export type RemoteAgentFactory = Agent | ((client: AgentConnection, info: RemoteConnectionInfo) => Agent);
/** A running remote server. */
export declare class Server {
    /** @internal */
    readonly native: native.NativeServer;
    private closing;
    /** @internal */
    constructor(server: native.NativeServer);
    /**
     * The endpoint's URL: `"websocket"` (`ws://`, `wss://` with TLS, the
     * default) or `"http"` (`http://`, `https://`), with the listening
     * address as host.
     */
    url(kind?: "websocket" | "http"): string;
    /** The listening socket's address. */
    get address(): ServerAddress;
    /** Remote connections open now. */
    get connections(): number;
    /**
     * Stops accepting, lets every connection answer what it was asked (a
     * running prompt turn finishes, up to `shutdownGraceMs`), closes them, and
     * resolves once every agent connection was let go. Idempotent.
     */
    shutdown(): Promise<void>;
    /** Closes at once: stops accepting and closes every connection (their agents see the end of stream). */
    close(): void;
    /** `await using server = await serve(...)` shuts it down. */
    [Symbol.asyncDispose](): Promise<void>;
}
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
export declare function serve(listen: Listen, agent: RemoteAgentFactory, options?: ServeOptions): Promise<Server>;
