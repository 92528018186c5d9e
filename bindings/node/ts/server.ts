/**
 * A remote ACP server ({@link serve}): the core's server (WebSocket and
 * Streamable HTTP on one endpoint, `libacp_core::remote::Server`) serving
 * one agent per remote connection. The agent factory runs on the
 * JavaScript thread for each connection, and its connection is an
 * {@link AgentConnection} like any other (same inbox, same rules).
 */

import * as native from "../native";
import { ConnectionClosed, fromNativeText } from "./errors";
import { nativeOptions, type ServeOptions } from "./options";
import { AgentConnection, type Agent, type AgentFactory } from "./typed";

/** Where a server listens: `"host:port"`, a port on 127.0.0.1, or `{ host, port }`. */
export type Listen = string | number | { host?: string; port?: number };

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
export type RemoteAgentFactory =
  Agent | ((client: AgentConnection, info: RemoteConnectionInfo) => Agent);

function listenAddress(listen: Listen): string {
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
export class Server {
  /** @internal */
  readonly native: native.NativeServer;
  private closing: Promise<void> | undefined;

  /** @internal */
  constructor(server: native.NativeServer) {
    this.native = server;
  }

  /**
   * The endpoint's URL: `"websocket"` (`ws://`, `wss://` with TLS, the
   * default) or `"http"` (`http://`, `https://`), with the listening
   * address as host.
   */
  url(kind: "websocket" | "http" = "websocket"): string {
    const url = this.native.url(kind);
    if (url === null) {
      throw new Error("the server is closed");
    }
    return url;
  }

  /** The listening socket's address. */
  get address(): ServerAddress {
    const text = this.native.address;
    if (text === null) {
      throw new Error("the server is closed");
    }
    return JSON.parse(text) as ServerAddress;
  }

  /** Remote connections open now. */
  get connections(): number {
    return this.native.connections;
  }

  /**
   * Stops accepting, lets every connection answer what it was asked (a
   * running prompt turn finishes, up to `shutdownGraceMs`), closes them, and
   * resolves once every agent connection was let go. Idempotent.
   */
  shutdown(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.native.shutdown(() => resolve());
    });
    return this.closing;
  }

  /** Closes at once: stops accepting and closes every connection (their agents see the end of stream). */
  close(): void {
    this.native.close();
    this.closing ??= Promise.resolve();
  }

  /** `await using server = await serve(...)` shuts it down. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
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
export async function serve(
  listen: Listen,
  agent: RemoteAgentFactory,
  options: ServeOptions = {},
): Promise<Server> {
  const address = listenAddress(listen);
  const { native: opts, hooks } = nativeOptions(options);
  const onConnection = (text: string): void => {
    const info = JSON.parse(text) as RemoteConnectionInfo & { id: number };
    const { id, ...rest } = info;
    const factory: AgentFactory =
      typeof agent === "function" ? (client: AgentConnection) => agent(client, rest) : agent;
    try {
      AgentConnection.overRemote(id, factory, opts, hooks);
    } catch (e) {
      if (e instanceof ConnectionClosed) {
        return; // it ended (or the server closed) before this callback ran
      }
      const text = e instanceof Error ? (e.stack ?? e.message) : String(e);
      process.stderr.write(`libacp: the agent factory for a remote connection raised: ${text}\n`);
    }
  };
  const made = native.serve(address, opts, onConnection);
  if (typeof made === "string") {
    throw fromNativeText(made);
  }
  return new Server(made);
}
