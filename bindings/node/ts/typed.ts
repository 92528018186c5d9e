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

import * as native from "../native";
import { Connection, type CallOptions, type Handler, type RequestContext } from "./connection";
import { MethodNotFound } from "./errors";
import {
  AGENT_SCHEMA,
  CLIENT_SCHEMA,
  type AgentMethod,
  type ClientMethod,
  type MethodInfo,
  type ProxyNotificationMethod,
  type ProxyRequestMethod,
} from "./methods";
import type { ConnectOptions, ConnectionOptions, Hooks, SpawnOptions } from "./options";
import type * as s from "./schema";

/** A value or a promise of it: handlers may answer either way. */
export type Awaitable<T> = T | PromiseLike<T>;

/**
 * An ACP agent: implement the methods you support (all are optional; the
 * ones left out are answered `-32601` by the core). Request methods get the
 * request's {@link RequestContext} (its `signal` aborts on cancellation)
 * and return the result or throw `RequestError`. Handlers run on the
 * JavaScript thread; several requests may be in flight at once, and a
 * handler may await calls to the client.
 */
export interface Agent {
  /** Called once with the connection to the client, before any request. */
  onConnect?(client: AgentConnection): void;
  initialize?(
    params: s.InitializeRequest,
    context: RequestContext,
  ): Awaitable<s.InitializeResponse>;
  authenticate?(
    params: s.AuthenticateRequest,
    context: RequestContext,
  ): Awaitable<s.AuthenticateResponse | void>;
  logout?(params: s.LogoutRequest, context: RequestContext): Awaitable<s.LogoutResponse | void>;
  newSession?(
    params: s.NewSessionRequest,
    context: RequestContext,
  ): Awaitable<s.NewSessionResponse>;
  loadSession?(
    params: s.LoadSessionRequest,
    context: RequestContext,
  ): Awaitable<s.LoadSessionResponse | void>;
  resumeSession?(
    params: s.ResumeSessionRequest,
    context: RequestContext,
  ): Awaitable<s.ResumeSessionResponse | void>;
  listSessions?(
    params: s.ListSessionsRequest,
    context: RequestContext,
  ): Awaitable<s.ListSessionsResponse>;
  closeSession?(
    params: s.CloseSessionRequest,
    context: RequestContext,
  ): Awaitable<s.CloseSessionResponse | void>;
  deleteSession?(
    params: s.DeleteSessionRequest,
    context: RequestContext,
  ): Awaitable<s.DeleteSessionResponse | void>;
  setSessionMode?(
    params: s.SetSessionModeRequest,
    context: RequestContext,
  ): Awaitable<s.SetSessionModeResponse | void>;
  setSessionConfigOption?(
    params: s.SetSessionConfigOptionRequest,
    context: RequestContext,
  ): Awaitable<s.SetSessionConfigOptionResponse>;
  /**
   * One prompt turn. `context.signal` aborts on `session/cancel`: wind down
   * and return (the answer is `stopReason: "cancelled"` either way).
   */
  prompt?(params: s.PromptRequest, context: RequestContext): Awaitable<s.PromptResponse>;
  /** `session/cancel` (the running prompt's signal has already aborted). */
  cancel?(params: s.CancelNotification): Awaitable<void>;
  // Unstable (the `unstable` option names the feature in brackets).
  /**
   * `session/fork` (`session_fork`; advertise `sessionCapabilities.fork`).
   * The session the answer names is open on this connection afterwards.
   */
  forkSession?(
    params: s.ForkSessionRequest,
    context: RequestContext,
  ): Awaitable<s.ForkSessionResponse>;
  /**
   * `session/archive` (`session_archive`; advertise
   * `sessionCapabilities.archive`). Closes the session it names here.
   */
  archiveSession?(
    params: s.ArchiveSessionRequest,
    context: RequestContext,
  ): Awaitable<s.ArchiveSessionResponse | void>;
  /** `session/unarchive` (`session_archive`; advertise `sessionCapabilities.archive`). */
  unarchiveSession?(
    params: s.UnarchiveSessionRequest,
    context: RequestContext,
  ): Awaitable<s.UnarchiveSessionResponse | void>;
  /** `session/status` (`session_status`; advertise `sessionCapabilities.status`). */
  sessionStatus?(
    params: s.SessionStatusRequest,
    context: RequestContext,
  ): Awaitable<s.SessionStatusResponse>;
  /** `session/set_title` (`session_set_title`; advertise `sessionCapabilities.title`). */
  setSessionTitle?(
    params: s.SetSessionTitleRequest,
    context: RequestContext,
  ): Awaitable<s.SetSessionTitleResponse>;
  /** `auth/status` (`auth_status`; advertise `auth.status`). */
  authStatus?(
    params: s.AuthStatusRequest,
    context: RequestContext,
  ): Awaitable<s.AuthStatusResponse>;
  /** `providers/list` (`llm_providers`; advertise `providers`). */
  listProviders?(
    params: s.ListProvidersRequest,
    context: RequestContext,
  ): Awaitable<s.ListProvidersResponse>;
  /** `providers/set` (`llm_providers`; advertise `providers`). */
  setProvider?(
    params: s.SetProviderRequest,
    context: RequestContext,
  ): Awaitable<s.SetProviderResponse | void>;
  /** `providers/disable` (`llm_providers`; advertise `providers`). */
  disableProvider?(
    params: s.DisableProviderRequest,
    context: RequestContext,
  ): Awaitable<s.DisableProviderResponse | void>;
  /**
   * `mcp/message` notifications from the client, for an MCP server of
   * transport `acp` (`mcp_over_acp`).
   */
  mcpMessage?(params: s.MessageMcpNotification): Awaitable<void>;
  /**
   * `proxy/initialize` (`proxy_chains`): the conductor initializes this
   * agent as a proxy, with the params and answer of `initialize` and its
   * rules (it is this connection's `initialize`). Before answering, a proxy
   * initializes its successor through `AgentConnection.proxySuccessor`.
   * Left out, it is answered `-32601`: this agent is not a proxy.
   */
  proxyInitialize?(
    params: s.InitializeProxyRequest,
    context: RequestContext,
  ): Awaitable<s.InitializeProxyResponse>;
  /**
   * `proxy/successor` from the conductor (`proxy_chains`): a request of this
   * proxy's successor (`method`, `params`); return the wrapped request's
   * result.
   */
  proxySuccessor?(
    params: s.ProxySuccessorRequest,
    context: RequestContext,
  ): Awaitable<s.ProxySuccessorResponse>;
  /**
   * `proxy/successor` notifications from the conductor (`proxy_chains`): a
   * notification of this proxy's successor.
   */
  proxySuccessorNotification?(params: s.ProxySuccessorNotification): Awaitable<void>;
  /** An extension request (a method name starting with `_`). */
  extMethod?(method: string, params: unknown, context: RequestContext): Awaitable<unknown>;
  /** An extension notification (a method name starting with `_`). */
  extNotification?(method: string, params: unknown): Awaitable<void>;
}

/**
 * An ACP client (what the agent may ask of it): implement what you support;
 * the rest is answered `-32601` (`sessionUpdate` left out ignores updates).
 * `sessionUpdate` calls come one at a time in arrival order: the next one
 * waits until the returned promise settles.
 */
export interface Client {
  /** Called once with the connection to the agent, before any request. */
  onConnect?(agent: ClientConnection): void;
  sessionUpdate?(params: s.SessionNotification): Awaitable<void>;
  requestPermission?(
    params: s.RequestPermissionRequest,
    context: RequestContext,
  ): Awaitable<s.RequestPermissionResponse>;
  readTextFile?(
    params: s.ReadTextFileRequest,
    context: RequestContext,
  ): Awaitable<s.ReadTextFileResponse>;
  writeTextFile?(
    params: s.WriteTextFileRequest,
    context: RequestContext,
  ): Awaitable<s.WriteTextFileResponse | void>;
  createTerminal?(
    params: s.CreateTerminalRequest,
    context: RequestContext,
  ): Awaitable<s.CreateTerminalResponse>;
  terminalOutput?(
    params: s.TerminalOutputRequest,
    context: RequestContext,
  ): Awaitable<s.TerminalOutputResponse>;
  releaseTerminal?(
    params: s.ReleaseTerminalRequest,
    context: RequestContext,
  ): Awaitable<s.ReleaseTerminalResponse | void>;
  waitForTerminalExit?(
    params: s.WaitForTerminalExitRequest,
    context: RequestContext,
  ): Awaitable<s.WaitForTerminalExitResponse>;
  killTerminal?(
    params: s.KillTerminalRequest,
    context: RequestContext,
  ): Awaitable<s.KillTerminalResponse | void>;
  createElicitation?(
    params: s.CreateElicitationRequest,
    context: RequestContext,
  ): Awaitable<s.CreateElicitationResponse>;
  elicitationComplete?(params: s.CompleteElicitationNotification): Awaitable<void>;
  // Unstable (the `unstable` option names the feature in brackets).
  /**
   * `mcp/message` from the agent, to an MCP server of transport `acp` this
   * client provides (`mcp_over_acp`).
   */
  mcpMessage?(
    params: s.MessageMcpRequest,
    context: RequestContext,
  ): Awaitable<s.MessageMcpResponse>;
  /** `auth/status_update` (`auth_status`). */
  authStatusUpdate?(params: s.AuthStatusUpdateNotification): Awaitable<void>;
  /**
   * `proxy/successor` from a proxy (`proxy_chains`; this client is its
   * conductor): a request (`method`, `params`) it forwards to its successor;
   * return the successor's result.
   */
  proxySuccessor?(
    params: s.ProxySuccessorRequest,
    context: RequestContext,
  ): Awaitable<s.ProxySuccessorResponse>;
  /**
   * `proxy/successor` notifications from a proxy (`proxy_chains`): a
   * notification it forwards to its successor.
   */
  proxySuccessorNotification?(params: s.ProxySuccessorNotification): Awaitable<void>;
  /** An extension request (a method name starting with `_`). */
  extMethod?(method: string, params: unknown, context: RequestContext): Awaitable<unknown>;
  /** An extension notification (a method name starting with `_`). */
  extNotification?(method: string, params: unknown): Awaitable<void>;
}

/**
 * The agent's methods: wire name to {@link Agent} method (exactly the
 * schema's agent methods, `./methods`: the compiler checks it).
 */
export const AGENT_METHODS = {
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
} as const satisfies Record<AgentMethod, keyof Agent>;

/**
 * The client's methods: wire name to {@link Client} method (exactly the
 * schema's client methods, `./methods`: the compiler checks it).
 */
export const CLIENT_METHODS = {
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
} as const satisfies Record<ClientMethod, keyof Client>;

/**
 * The proxy chain's methods (`proxy_chains`; the schema's side `proxy`) a
 * role handles: wire name to host method, requests and notifications apart
 * (`proxy/successor` is both).
 */
export interface ProxyMethods<H> {
  readonly requests: Partial<Readonly<Record<ProxyRequestMethod, keyof H>>>;
  readonly notifications: Partial<Readonly<Record<ProxyNotificationMethod, keyof H>>>;
}

/**
 * The proxy-chain methods a proxy (an agent to its conductor) handles:
 * `proxy/initialize` and both kinds of `proxy/successor` (the conductor
 * calls them), as the Rust typed API.
 */
export const AGENT_PROXY_METHODS = {
  requests: { "proxy/initialize": "proxyInitialize", "proxy/successor": "proxySuccessor" },
  notifications: { "proxy/successor": "proxySuccessorNotification" },
} as const satisfies ProxyMethods<Agent>;

/**
 * The proxy-chain methods a conductor (a client to each proxy) handles:
 * both kinds of `proxy/successor` (the proxy calls them).
 */
export const CLIENT_PROXY_METHODS = {
  requests: { "proxy/successor": "proxySuccessor" },
  notifications: { "proxy/successor": "proxySuccessorNotification" },
} as const satisfies ProxyMethods<Client>;

type Host = Record<string, unknown>;
type Method = (this: Host, ...args: unknown[]) => unknown;
type Table = Readonly<Record<string, string>>;

/** A role's host methods by wire name, requests and notifications apart. */
interface Dispatch {
  readonly requests: Table;
  readonly notifications: Table;
}

/**
 * One role's {@link Dispatch}: `table` (`AGENT_METHODS`/`CLIENT_METHODS`)
 * split by each method's kind in `schema`, and the proxy chain's.
 */
function byKind(
  table: Table,
  schema: Readonly<Record<string, MethodInfo>>,
  proxy: Dispatch,
): Dispatch {
  const requests: Record<string, string> = { ...proxy.requests };
  const notifications: Record<string, string> = { ...proxy.notifications };
  for (const [wire, name] of Object.entries(table)) {
    (schema[wire]?.result === null ? notifications : requests)[wire] = name;
  }
  return { requests, notifications };
}

const AGENT_DISPATCH = byKind(AGENT_METHODS, AGENT_SCHEMA, AGENT_PROXY_METHODS);
const CLIENT_DISPATCH = byKind(CLIENT_METHODS, CLIENT_SCHEMA, CLIENT_PROXY_METHODS);

/**
 * Adapts a typed host object to the dynamic {@link Handler}. `dispatch`
 * names the host's method for each wire method and kind: a request is
 * never passed to a notification's method nor the reverse (the core
 * refuses those for the methods it routes, but passes an unstable method
 * whose feature is off unchecked).
 */
function serve(host: Host, dispatch: Dispatch): Handler {
  const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);
  const methodOf = (wire: string, notification: boolean): Method | undefined => {
    const table = notification ? dispatch.notifications : dispatch.requests;
    if (!own(table, wire)) {
      return undefined;
    }
    const fn = host[table[wire] as string];
    return typeof fn === "function" ? (fn as Method) : undefined;
  };
  const ext = (name: "extMethod" | "extNotification", wire: string): Method | undefined => {
    const fn = wire.startsWith("_") ? host[name] : undefined;
    return typeof fn === "function" ? (fn as Method) : undefined;
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
      throw new MethodNotFound(method);
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
abstract class TypedConnection {
  /** The dynamic API (method names and JSON values) on the same connection. */
  readonly connection: Connection;

  protected constructor(connection: Connection) {
    this.connection = connection;
  }

  protected call<T>(method: string, params: unknown, options?: CallOptions): Promise<T> {
    return this.connection.request(method, params, options) as Promise<T>;
  }

  /** Sends an extension request (`method` should start with `_`). */
  extMethod(method: string, params?: unknown, options?: CallOptions): Promise<unknown> {
    return this.connection.request(method, params, options);
  }

  /** Sends an extension notification. */
  extNotification(method: string, params?: unknown): Promise<void> {
    return this.connection.notify(method, params);
  }

  /** See {@link Connection.close}. */
  close(): Promise<void> {
    return this.connection.close();
  }

  /** See {@link Connection.closed}. */
  closed(): Promise<string> {
    return this.connection.closed();
  }

  /** See {@link Connection.terminated}. */
  terminated(): Promise<void> {
    return this.connection.terminated();
  }

  /** Why the connection closed, or `null` while it is open. */
  get closeReason(): string | null {
    return this.connection.closeReason;
  }

  /** The negotiated protocol version, once initialized. */
  get protocolVersion(): number | null {
    return this.connection.protocolVersion;
  }

  /** The capabilities the peer advertised (`{}` before `initialize`). */
  peerCapabilities(): Record<string, unknown> {
    return this.connection.peerCapabilities();
  }

  /** `await using conn = ...` closes it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** An agent object, or a function making one from its connection. */
export type AgentFactory = Agent | ((client: AgentConnection) => Agent);

function connectHost<C>(host: unknown, conn: C, what: string): Host {
  const made = typeof host === "function" ? (host as (c: C) => unknown)(conn) : host;
  if (made === null || typeof made !== "object") {
    throw new TypeError(
      `${what} must be an object (or a function returning one), not ${made === null ? "null" : typeof made}`,
    );
  }
  const hook = (made as Host).onConnect;
  if (typeof hook === "function") {
    (hook as Method).call(made as Host, conn);
  }
  return made as Host;
}

/**
 * The agent's side of a connection: what the agent asks of its client.
 * Made by {@link AgentConnection.serveStdio} (or {@link AgentConnection.fromFds}),
 * which hands it to the agent's `onConnect`. Each method is one ACP call;
 * errors, cancellation and threads as for {@link Connection.request}.
 */
export class AgentConnection extends TypedConnection {
  private constructor(connection: Connection) {
    super(connection);
  }

  /**
   * Serves `agent` on this process's stdin and stdout. Write nothing else to
   * stdout afterwards (log to stderr). See also {@link runAgent}.
   */
  static serveStdio(agent: AgentFactory, options: ConnectionOptions = {}): AgentConnection {
    return AgentConnection.make(agent, (handler) => Connection.fromStdio(handler, options));
  }

  /** Serves `agent` over descriptors it takes over (see {@link Connection.fromFds}). */
  static fromFds(
    readFd: number,
    writeFd: number,
    agent: AgentFactory,
    options: ConnectionOptions = {},
  ): AgentConnection {
    return AgentConnection.make(agent, (handler) =>
      Connection.fromFds(readFd, writeFd, handler, { ...options, role: "agent" }),
    );
  }

  /** @internal Serves `agent` on a server's remote connection (see {@link serve}). */
  static overRemote(
    id: number,
    agent: AgentFactory,
    opts: native.NativeOption[],
    hooks: Hooks,
  ): AgentConnection {
    return AgentConnection.make(agent, (handler) =>
      Connection.onRemote(id, "agent", handler, opts, hooks),
    );
  }

  private static make(
    agent: AgentFactory,
    connect: (handler: Handler) => Connection,
  ): AgentConnection {
    // The handler is bound before the host exists (so nothing the peer sends
    // can be missed) and dispatches to it once made.
    let host: Host | undefined;
    let handler: Handler | undefined;
    const late: Handler = {
      onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
      onNotification: (m, p) => handler?.onNotification?.(m, p),
    };
    const conn = new AgentConnection(connect(late));
    try {
      host = connectHost(agent, conn, "agent");
    } catch (e) {
      conn.connection.native.release();
      throw e;
    }
    handler = serve(host, AGENT_DISPATCH);
    return conn;
  }

  /** `session/update`: streams one update of a session to the client. */
  sessionUpdate(params: s.SessionNotification): Promise<void> {
    return this.connection.notify("session/update", params);
  }

  /** `session/request_permission`. */
  requestPermission(
    params: s.RequestPermissionRequest,
    options?: CallOptions,
  ): Promise<s.RequestPermissionResponse> {
    return this.call("session/request_permission", params, options);
  }

  /** `fs/read_text_file` (the client must advertise `fs.readTextFile`). */
  readTextFile(
    params: s.ReadTextFileRequest,
    options?: CallOptions,
  ): Promise<s.ReadTextFileResponse> {
    return this.call("fs/read_text_file", params, options);
  }

  /** `fs/write_text_file` (the client must advertise `fs.writeTextFile`). */
  writeTextFile(
    params: s.WriteTextFileRequest,
    options?: CallOptions,
  ): Promise<s.WriteTextFileResponse> {
    return this.call("fs/write_text_file", params, options);
  }

  /** `terminal/create` (the client must advertise `terminal`). */
  createTerminal(
    params: s.CreateTerminalRequest,
    options?: CallOptions,
  ): Promise<s.CreateTerminalResponse> {
    return this.call("terminal/create", params, options);
  }

  /** `terminal/output`. */
  terminalOutput(
    params: s.TerminalOutputRequest,
    options?: CallOptions,
  ): Promise<s.TerminalOutputResponse> {
    return this.call("terminal/output", params, options);
  }

  /** `terminal/release`. */
  releaseTerminal(
    params: s.ReleaseTerminalRequest,
    options?: CallOptions,
  ): Promise<s.ReleaseTerminalResponse> {
    return this.call("terminal/release", params, options);
  }

  /** `terminal/wait_for_exit`. */
  waitForTerminalExit(
    params: s.WaitForTerminalExitRequest,
    options?: CallOptions,
  ): Promise<s.WaitForTerminalExitResponse> {
    return this.call("terminal/wait_for_exit", params, options);
  }

  /** `terminal/kill`. */
  killTerminal(
    params: s.KillTerminalRequest,
    options?: CallOptions,
  ): Promise<s.KillTerminalResponse> {
    return this.call("terminal/kill", params, options);
  }

  /** `elicitation/create` (the client must advertise elicitation). */
  createElicitation(
    params: s.CreateElicitationRequest,
    options?: CallOptions,
  ): Promise<s.CreateElicitationResponse> {
    return this.call("elicitation/create", params, options);
  }

  /** `elicitation/complete`. */
  elicitationComplete(params: s.CompleteElicitationNotification): Promise<void> {
    return this.connection.notify("elicitation/complete", params);
  }

  // Unstable (the `unstable` option names the feature in brackets).

  /**
   * `mcp/message` to an MCP server of transport `acp` that the client
   * provides (`mcp_over_acp`).
   */
  mcpMessage(params: s.MessageMcpRequest, options?: CallOptions): Promise<s.MessageMcpResponse> {
    return this.call("mcp/message", params, options);
  }

  /** `auth/status_update`: the agent's authentication state changed (`auth_status`). */
  authStatusUpdate(params: s.AuthStatusUpdateNotification): Promise<void> {
    return this.connection.notify("auth/status_update", params);
  }

  /**
   * `proxy/successor` (`proxy_chains`): this proxy forwards a request
   * (`method`, `params`) to its successor through the conductor; the answer
   * is the successor's result, unchanged.
   */
  proxySuccessor(
    params: s.ProxySuccessorRequest,
    options?: CallOptions,
  ): Promise<s.ProxySuccessorResponse> {
    return this.call("proxy/successor", params, options);
  }

  /**
   * `proxy/successor` as a notification (`proxy_chains`): this proxy
   * forwards a notification to its successor.
   */
  proxySuccessorNotification(params: s.ProxySuccessorNotification): Promise<void> {
    return this.connection.notify("proxy/successor", params);
  }
}

/**
 * Serves `agent` on stdio until the client goes away (its stdin closes) and
 * everything is written: what an agent program's main awaits.
 */
export async function runAgent(
  agent: AgentFactory,
  options: ConnectionOptions = {},
): Promise<void> {
  const conn = AgentConnection.serveStdio(agent, options);
  await conn.closed();
  await conn.terminated();
}

/** A client object, or a function making one from its connection. */
export type ClientFactory = Client | ((agent: ClientConnection) => Client);

/**
 * The client's side of a connection: what the client asks of the agent.
 * Made by {@link ClientConnection.spawn} (or {@link ClientConnection.fromFds}),
 * which hands it to the client's `onConnect`. Call {@link initialize} first
 * (the core refuses anything else before it).
 */
export class ClientConnection extends TypedConnection {
  private constructor(connection: Connection) {
    super(connection);
  }

  /**
   * Starts the agent `command` with `args` and connects to its stdio (see
   * {@link Connection.spawnAgent} for `options`: `cwd`, `env`, `stderr`,
   * `graceAfterStdinCloseMs`, ...). Throws `SpawnError` if it cannot start.
   */
  static spawn(
    command: string,
    args: readonly string[] = [],
    client: ClientFactory = {},
    options: SpawnOptions = {},
  ): ClientConnection {
    return ClientConnection.make(client, (handler) =>
      Connection.spawnAgent(command, args, handler, options),
    );
  }

  /** Client side over descriptors it takes over (see {@link Connection.fromFds}). */
  static fromFds(
    readFd: number,
    writeFd: number,
    client: ClientFactory = {},
    options: ConnectionOptions = {},
  ): ClientConnection {
    return ClientConnection.make(client, (handler) =>
      Connection.fromFds(readFd, writeFd, handler, { ...options, role: "client" }),
    );
  }

  /**
   * Connects to the remote agent at `url` (see {@link Connection.connect}:
   * `ws://`/`wss://` WebSocket, `http://`/`https://` Streamable HTTP).
   * Rejects with `RemoteError` (`kind`, `status`) when it cannot be reached.
   */
  static async connect(
    url: string,
    client: ClientFactory = {},
    options: ConnectOptions = {},
  ): Promise<ClientConnection> {
    let handler: Handler | undefined;
    const late: Handler = {
      onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
      onNotification: (m, p) => handler?.onNotification?.(m, p),
    };
    const connection = await Connection.connect(url, late, options);
    const conn = new ClientConnection(connection);
    let host: Host;
    try {
      host = connectHost(client, conn, "client");
    } catch (e) {
      connection.native.release();
      throw e;
    }
    handler = serve(host, CLIENT_DISPATCH);
    return conn;
  }

  private static make(
    client: ClientFactory,
    connect: (handler: Handler) => Connection,
  ): ClientConnection {
    let handler: Handler | undefined;
    const late: Handler = {
      onRequest: (m, p, c) => handler?.onRequest?.(m, p, c),
      onNotification: (m, p) => handler?.onNotification?.(m, p),
    };
    const conn = new ClientConnection(connect(late));
    let host: Host;
    try {
      host = connectHost(client, conn, "client");
    } catch (e) {
      conn.connection.native.release();
      throw e;
    }
    handler = serve(host, CLIENT_DISPATCH);
    return conn;
  }

  /** `initialize`: negotiates the version and capabilities. */
  initialize(params: s.InitializeRequest, options?: CallOptions): Promise<s.InitializeResponse> {
    return this.call("initialize", params, options);
  }

  /** `authenticate`. */
  authenticate(
    params: s.AuthenticateRequest,
    options?: CallOptions,
  ): Promise<s.AuthenticateResponse> {
    return this.call("authenticate", params, options);
  }

  /** `logout`. */
  logout(params: s.LogoutRequest = {}, options?: CallOptions): Promise<s.LogoutResponse> {
    return this.call("logout", params, options);
  }

  /** `session/new`. */
  newSession(params: s.NewSessionRequest, options?: CallOptions): Promise<s.NewSessionResponse> {
    return this.call("session/new", params, options);
  }

  /** `session/load` (the agent must advertise `loadSession`). */
  loadSession(params: s.LoadSessionRequest, options?: CallOptions): Promise<s.LoadSessionResponse> {
    return this.call("session/load", params, options);
  }

  /** `session/resume` (the agent must advertise it). */
  resumeSession(
    params: s.ResumeSessionRequest,
    options?: CallOptions,
  ): Promise<s.ResumeSessionResponse> {
    return this.call("session/resume", params, options);
  }

  /** `session/list` (the agent must advertise it). */
  listSessions(
    params: s.ListSessionsRequest = {},
    options?: CallOptions,
  ): Promise<s.ListSessionsResponse> {
    return this.call("session/list", params, options);
  }

  /** `session/close` (the agent must advertise it). */
  closeSession(
    params: s.CloseSessionRequest,
    options?: CallOptions,
  ): Promise<s.CloseSessionResponse> {
    return this.call("session/close", params, options);
  }

  /** `session/delete` (the agent must advertise it). */
  deleteSession(
    params: s.DeleteSessionRequest,
    options?: CallOptions,
  ): Promise<s.DeleteSessionResponse> {
    return this.call("session/delete", params, options);
  }

  /** `session/set_mode`. */
  setSessionMode(
    params: s.SetSessionModeRequest,
    options?: CallOptions,
  ): Promise<s.SetSessionModeResponse> {
    return this.call("session/set_mode", params, options);
  }

  /** `session/set_config_option`. */
  setSessionConfigOption(
    params: s.SetSessionConfigOptionRequest,
    options?: CallOptions,
  ): Promise<s.SetSessionConfigOptionResponse> {
    return this.call("session/set_config_option", params, options);
  }

  /**
   * One prompt turn: resolves after every `session/update` the agent sent
   * before its answer was handled by `Client.sessionUpdate`. To end a turn
   * the ACP way call {@link cancel}; aborting `options.signal` cancels the
   * request itself (`$/cancel_request`).
   */
  prompt(params: s.PromptRequest, options?: CallOptions): Promise<s.PromptResponse> {
    return this.call("session/prompt", params, options);
  }

  /**
   * `session/cancel`: the agent winds the turn down and answers its prompt
   * `cancelled`; the session's pending permission requests are answered
   * `cancelled` by the core (their handlers' signals abort).
   */
  cancel(sessionId: string): Promise<void> {
    return this.connection.cancelSession(sessionId);
  }

  // Unstable (the `unstable` option names the feature in brackets).

  /**
   * `session/fork` (`session_fork`; the agent must advertise
   * `sessionCapabilities.fork`): the session the answer names is open
   * afterwards; the one it copies need not be open here.
   */
  forkSession(params: s.ForkSessionRequest, options?: CallOptions): Promise<s.ForkSessionResponse> {
    return this.call("session/fork", params, options);
  }

  /**
   * `session/archive` (`session_archive`; the agent must advertise
   * `sessionCapabilities.archive`): closes the session it names here.
   */
  archiveSession(
    params: s.ArchiveSessionRequest,
    options?: CallOptions,
  ): Promise<s.ArchiveSessionResponse> {
    return this.call("session/archive", params, options);
  }

  /** `session/unarchive` (`session_archive`; needs `sessionCapabilities.archive`). */
  unarchiveSession(
    params: s.UnarchiveSessionRequest,
    options?: CallOptions,
  ): Promise<s.UnarchiveSessionResponse> {
    return this.call("session/unarchive", params, options);
  }

  /**
   * `session/status` (`session_status`; needs `sessionCapabilities.status`);
   * may name any session the agent knows.
   */
  sessionStatus(
    params: s.SessionStatusRequest,
    options?: CallOptions,
  ): Promise<s.SessionStatusResponse> {
    return this.call("session/status", params, options);
  }

  /** `session/set_title` (`session_set_title`; needs `sessionCapabilities.title`). */
  setSessionTitle(
    params: s.SetSessionTitleRequest,
    options?: CallOptions,
  ): Promise<s.SetSessionTitleResponse> {
    return this.call("session/set_title", params, options);
  }

  /** `auth/status` (`auth_status`; needs `auth.status`). */
  authStatus(
    params: s.AuthStatusRequest = {},
    options?: CallOptions,
  ): Promise<s.AuthStatusResponse> {
    return this.call("auth/status", params, options);
  }

  /** `providers/list` (`llm_providers`; needs `providers`). */
  listProviders(
    params: s.ListProvidersRequest = {},
    options?: CallOptions,
  ): Promise<s.ListProvidersResponse> {
    return this.call("providers/list", params, options);
  }

  /** `providers/set` (`llm_providers`; needs `providers`). */
  setProvider(params: s.SetProviderRequest, options?: CallOptions): Promise<s.SetProviderResponse> {
    return this.call("providers/set", params, options);
  }

  /** `providers/disable` (`llm_providers`; needs `providers`). */
  disableProvider(
    params: s.DisableProviderRequest,
    options?: CallOptions,
  ): Promise<s.DisableProviderResponse> {
    return this.call("providers/disable", params, options);
  }

  /**
   * `mcp/message` as a notification to the agent, from an MCP server of
   * transport `acp` this client provides (`mcp_over_acp`).
   */
  mcpMessage(params: s.MessageMcpNotification): Promise<void> {
    return this.connection.notify("mcp/message", params);
  }

  /**
   * `proxy/initialize` (`proxy_chains`): this client, a conductor,
   * initializes the agent as a proxy. The same params, answer and rules as
   * {@link initialize}: it is this connection's `initialize`.
   */
  proxyInitialize(
    params: s.InitializeProxyRequest,
    options?: CallOptions,
  ): Promise<s.InitializeProxyResponse> {
    return this.call("proxy/initialize", params, options);
  }

  /**
   * `proxy/successor` (`proxy_chains`): the conductor delivers a request
   * (`method`, `params`) of the proxy's successor; the answer is the
   * proxy's result for it.
   */
  proxySuccessor(
    params: s.ProxySuccessorRequest,
    options?: CallOptions,
  ): Promise<s.ProxySuccessorResponse> {
    return this.call("proxy/successor", params, options);
  }

  /**
   * `proxy/successor` as a notification (`proxy_chains`): the conductor
   * delivers a notification of the proxy's successor.
   */
  proxySuccessorNotification(params: s.ProxySuccessorNotification): Promise<void> {
    return this.connection.notify("proxy/successor", params);
  }

  /** The spawned agent's process id. */
  get pid(): number | null {
    return this.connection.pid;
  }

  /**
   * Client side with `sessionModel: true`: the core's model of a session
   * (see {@link Connection.sessionSnapshot}).
   */
  sessionSnapshot(sessionId: string): Record<string, unknown> | null {
    return this.connection.sessionSnapshot(sessionId);
  }
}
