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
import { Connection, type CallOptions, type RequestContext } from "./connection";
import { type ProxyNotificationMethod, type ProxyRequestMethod } from "./methods";
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
    initialize?(params: s.InitializeRequest, context: RequestContext): Awaitable<s.InitializeResponse>;
    authenticate?(params: s.AuthenticateRequest, context: RequestContext): Awaitable<s.AuthenticateResponse | void>;
    logout?(params: s.LogoutRequest, context: RequestContext): Awaitable<s.LogoutResponse | void>;
    newSession?(params: s.NewSessionRequest, context: RequestContext): Awaitable<s.NewSessionResponse>;
    loadSession?(params: s.LoadSessionRequest, context: RequestContext): Awaitable<s.LoadSessionResponse | void>;
    resumeSession?(params: s.ResumeSessionRequest, context: RequestContext): Awaitable<s.ResumeSessionResponse | void>;
    listSessions?(params: s.ListSessionsRequest, context: RequestContext): Awaitable<s.ListSessionsResponse>;
    closeSession?(params: s.CloseSessionRequest, context: RequestContext): Awaitable<s.CloseSessionResponse | void>;
    deleteSession?(params: s.DeleteSessionRequest, context: RequestContext): Awaitable<s.DeleteSessionResponse | void>;
    setSessionMode?(params: s.SetSessionModeRequest, context: RequestContext): Awaitable<s.SetSessionModeResponse | void>;
    setSessionConfigOption?(params: s.SetSessionConfigOptionRequest, context: RequestContext): Awaitable<s.SetSessionConfigOptionResponse>;
    /**
     * One prompt turn. `context.signal` aborts on `session/cancel`: wind down
     * and return (the answer is `stopReason: "cancelled"` either way).
     */
    prompt?(params: s.PromptRequest, context: RequestContext): Awaitable<s.PromptResponse>;
    /** `session/cancel` (the running prompt's signal has already aborted). */
    cancel?(params: s.CancelNotification): Awaitable<void>;
    /**
     * `session/fork` (`session_fork`; advertise `sessionCapabilities.fork`).
     * The session the answer names is open on this connection afterwards.
     */
    forkSession?(params: s.ForkSessionRequest, context: RequestContext): Awaitable<s.ForkSessionResponse>;
    /**
     * `session/archive` (`session_archive`; advertise
     * `sessionCapabilities.archive`). Closes the session it names here.
     */
    archiveSession?(params: s.ArchiveSessionRequest, context: RequestContext): Awaitable<s.ArchiveSessionResponse | void>;
    /** `session/unarchive` (`session_archive`; advertise `sessionCapabilities.archive`). */
    unarchiveSession?(params: s.UnarchiveSessionRequest, context: RequestContext): Awaitable<s.UnarchiveSessionResponse | void>;
    /** `session/status` (`session_status`; advertise `sessionCapabilities.status`). */
    sessionStatus?(params: s.SessionStatusRequest, context: RequestContext): Awaitable<s.SessionStatusResponse>;
    /** `session/set_title` (`session_set_title`; advertise `sessionCapabilities.title`). */
    setSessionTitle?(params: s.SetSessionTitleRequest, context: RequestContext): Awaitable<s.SetSessionTitleResponse>;
    /** `auth/status` (`auth_status`; advertise `auth.status`). */
    authStatus?(params: s.AuthStatusRequest, context: RequestContext): Awaitable<s.AuthStatusResponse>;
    /** `providers/list` (`llm_providers`; advertise `providers`). */
    listProviders?(params: s.ListProvidersRequest, context: RequestContext): Awaitable<s.ListProvidersResponse>;
    /** `providers/set` (`llm_providers`; advertise `providers`). */
    setProvider?(params: s.SetProviderRequest, context: RequestContext): Awaitable<s.SetProviderResponse | void>;
    /** `providers/disable` (`llm_providers`; advertise `providers`). */
    disableProvider?(params: s.DisableProviderRequest, context: RequestContext): Awaitable<s.DisableProviderResponse | void>;
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
    proxyInitialize?(params: s.InitializeProxyRequest, context: RequestContext): Awaitable<s.InitializeProxyResponse>;
    /**
     * `proxy/successor` from the conductor (`proxy_chains`): a request of this
     * proxy's successor (`method`, `params`); return the wrapped request's
     * result.
     */
    proxySuccessor?(params: s.ProxySuccessorRequest, context: RequestContext): Awaitable<s.ProxySuccessorResponse>;
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
    requestPermission?(params: s.RequestPermissionRequest, context: RequestContext): Awaitable<s.RequestPermissionResponse>;
    readTextFile?(params: s.ReadTextFileRequest, context: RequestContext): Awaitable<s.ReadTextFileResponse>;
    writeTextFile?(params: s.WriteTextFileRequest, context: RequestContext): Awaitable<s.WriteTextFileResponse | void>;
    createTerminal?(params: s.CreateTerminalRequest, context: RequestContext): Awaitable<s.CreateTerminalResponse>;
    terminalOutput?(params: s.TerminalOutputRequest, context: RequestContext): Awaitable<s.TerminalOutputResponse>;
    releaseTerminal?(params: s.ReleaseTerminalRequest, context: RequestContext): Awaitable<s.ReleaseTerminalResponse | void>;
    waitForTerminalExit?(params: s.WaitForTerminalExitRequest, context: RequestContext): Awaitable<s.WaitForTerminalExitResponse>;
    killTerminal?(params: s.KillTerminalRequest, context: RequestContext): Awaitable<s.KillTerminalResponse | void>;
    createElicitation?(params: s.CreateElicitationRequest, context: RequestContext): Awaitable<s.CreateElicitationResponse>;
    elicitationComplete?(params: s.CompleteElicitationNotification): Awaitable<void>;
    /**
     * `mcp/message` from the agent, to an MCP server of transport `acp` this
     * client provides (`mcp_over_acp`).
     */
    mcpMessage?(params: s.MessageMcpRequest, context: RequestContext): Awaitable<s.MessageMcpResponse>;
    /** `auth/status_update` (`auth_status`). */
    authStatusUpdate?(params: s.AuthStatusUpdateNotification): Awaitable<void>;
    /**
     * `proxy/successor` from a proxy (`proxy_chains`; this client is its
     * conductor): a request (`method`, `params`) it forwards to its successor;
     * return the successor's result.
     */
    proxySuccessor?(params: s.ProxySuccessorRequest, context: RequestContext): Awaitable<s.ProxySuccessorResponse>;
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
export declare const AGENT_METHODS: {
    readonly initialize: "initialize";
    readonly authenticate: "authenticate";
    readonly logout: "logout";
    readonly "session/new": "newSession";
    readonly "session/load": "loadSession";
    readonly "session/resume": "resumeSession";
    readonly "session/list": "listSessions";
    readonly "session/close": "closeSession";
    readonly "session/delete": "deleteSession";
    readonly "session/set_mode": "setSessionMode";
    readonly "session/set_config_option": "setSessionConfigOption";
    readonly "session/prompt": "prompt";
    readonly "session/cancel": "cancel";
    readonly "session/fork": "forkSession";
    readonly "session/archive": "archiveSession";
    readonly "session/unarchive": "unarchiveSession";
    readonly "session/status": "sessionStatus";
    readonly "session/set_title": "setSessionTitle";
    readonly "auth/status": "authStatus";
    readonly "providers/list": "listProviders";
    readonly "providers/set": "setProvider";
    readonly "providers/disable": "disableProvider";
    readonly "mcp/message": "mcpMessage";
};
/**
 * The client's methods: wire name to {@link Client} method (exactly the
 * schema's client methods, `./methods`: the compiler checks it).
 */
export declare const CLIENT_METHODS: {
    readonly "session/request_permission": "requestPermission";
    readonly "session/update": "sessionUpdate";
    readonly "fs/read_text_file": "readTextFile";
    readonly "fs/write_text_file": "writeTextFile";
    readonly "terminal/create": "createTerminal";
    readonly "terminal/output": "terminalOutput";
    readonly "terminal/release": "releaseTerminal";
    readonly "terminal/wait_for_exit": "waitForTerminalExit";
    readonly "terminal/kill": "killTerminal";
    readonly "elicitation/create": "createElicitation";
    readonly "elicitation/complete": "elicitationComplete";
    readonly "mcp/message": "mcpMessage";
    readonly "auth/status_update": "authStatusUpdate";
};
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
export declare const AGENT_PROXY_METHODS: {
    readonly requests: {
        readonly "proxy/initialize": "proxyInitialize";
        readonly "proxy/successor": "proxySuccessor";
    };
    readonly notifications: {
        readonly "proxy/successor": "proxySuccessorNotification";
    };
};
/**
 * The proxy-chain methods a conductor (a client to each proxy) handles:
 * both kinds of `proxy/successor` (the proxy calls them).
 */
export declare const CLIENT_PROXY_METHODS: {
    readonly requests: {
        readonly "proxy/successor": "proxySuccessor";
    };
    readonly notifications: {
        readonly "proxy/successor": "proxySuccessorNotification";
    };
};
/** What both typed connections share: the dynamic connection and its lifecycle. */
declare abstract class TypedConnection {
    /** The dynamic API (method names and JSON values) on the same connection. */
    readonly connection: Connection;
    protected constructor(connection: Connection);
    protected call<T>(method: string, params: unknown, options?: CallOptions): Promise<T>;
    /** Sends an extension request (`method` should start with `_`). */
    extMethod(method: string, params?: unknown, options?: CallOptions): Promise<unknown>;
    /** Sends an extension notification. */
    extNotification(method: string, params?: unknown): Promise<void>;
    /** See {@link Connection.close}. */
    close(): Promise<void>;
    /** See {@link Connection.closed}. */
    closed(): Promise<string>;
    /** See {@link Connection.terminated}. */
    terminated(): Promise<void>;
    /** Why the connection closed, or `null` while it is open. */
    get closeReason(): string | null;
    /** The negotiated protocol version, once initialized. */
    get protocolVersion(): number | null;
    /** The capabilities the peer advertised (`{}` before `initialize`). */
    peerCapabilities(): Record<string, unknown>;
    /** `await using conn = ...` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
}
/** An agent object, or a function making one from its connection. */
export type AgentFactory = Agent | ((client: AgentConnection) => Agent);
/**
 * The agent's side of a connection: what the agent asks of its client.
 * Made by {@link AgentConnection.serveStdio} (or {@link AgentConnection.fromFds}),
 * which hands it to the agent's `onConnect`. Each method is one ACP call;
 * errors, cancellation and threads as for {@link Connection.request}.
 */
export declare class AgentConnection extends TypedConnection {
    private constructor();
    /**
     * Serves `agent` on this process's stdin and stdout. Write nothing else to
     * stdout afterwards (log to stderr). See also {@link runAgent}.
     */
    static serveStdio(agent: AgentFactory, options?: ConnectionOptions): AgentConnection;
    /** Serves `agent` over descriptors it takes over (see {@link Connection.fromFds}). */
    static fromFds(readFd: number, writeFd: number, agent: AgentFactory, options?: ConnectionOptions): AgentConnection;
    /** @internal Serves `agent` on a server's remote connection (see {@link serve}). */
    static overRemote(id: number, agent: AgentFactory, opts: native.NativeOption[], hooks: Hooks): AgentConnection;
    private static make;
    /** `session/update`: streams one update of a session to the client. */
    sessionUpdate(params: s.SessionNotification): Promise<void>;
    /** `session/request_permission`. */
    requestPermission(params: s.RequestPermissionRequest, options?: CallOptions): Promise<s.RequestPermissionResponse>;
    /** `fs/read_text_file` (the client must advertise `fs.readTextFile`). */
    readTextFile(params: s.ReadTextFileRequest, options?: CallOptions): Promise<s.ReadTextFileResponse>;
    /** `fs/write_text_file` (the client must advertise `fs.writeTextFile`). */
    writeTextFile(params: s.WriteTextFileRequest, options?: CallOptions): Promise<s.WriteTextFileResponse>;
    /** `terminal/create` (the client must advertise `terminal`). */
    createTerminal(params: s.CreateTerminalRequest, options?: CallOptions): Promise<s.CreateTerminalResponse>;
    /** `terminal/output`. */
    terminalOutput(params: s.TerminalOutputRequest, options?: CallOptions): Promise<s.TerminalOutputResponse>;
    /** `terminal/release`. */
    releaseTerminal(params: s.ReleaseTerminalRequest, options?: CallOptions): Promise<s.ReleaseTerminalResponse>;
    /** `terminal/wait_for_exit`. */
    waitForTerminalExit(params: s.WaitForTerminalExitRequest, options?: CallOptions): Promise<s.WaitForTerminalExitResponse>;
    /** `terminal/kill`. */
    killTerminal(params: s.KillTerminalRequest, options?: CallOptions): Promise<s.KillTerminalResponse>;
    /** `elicitation/create` (the client must advertise elicitation). */
    createElicitation(params: s.CreateElicitationRequest, options?: CallOptions): Promise<s.CreateElicitationResponse>;
    /** `elicitation/complete`. */
    elicitationComplete(params: s.CompleteElicitationNotification): Promise<void>;
    /**
     * `mcp/message` to an MCP server of transport `acp` that the client
     * provides (`mcp_over_acp`).
     */
    mcpMessage(params: s.MessageMcpRequest, options?: CallOptions): Promise<s.MessageMcpResponse>;
    /** `auth/status_update`: the agent's authentication state changed (`auth_status`). */
    authStatusUpdate(params: s.AuthStatusUpdateNotification): Promise<void>;
    /**
     * `proxy/successor` (`proxy_chains`): this proxy forwards a request
     * (`method`, `params`) to its successor through the conductor; the answer
     * is the successor's result, unchanged.
     */
    proxySuccessor(params: s.ProxySuccessorRequest, options?: CallOptions): Promise<s.ProxySuccessorResponse>;
    /**
     * `proxy/successor` as a notification (`proxy_chains`): this proxy
     * forwards a notification to its successor.
     */
    proxySuccessorNotification(params: s.ProxySuccessorNotification): Promise<void>;
}
/**
 * Serves `agent` on stdio until the client goes away (its stdin closes) and
 * everything is written: what an agent program's main awaits.
 */
export declare function runAgent(agent: AgentFactory, options?: ConnectionOptions): Promise<void>;
/** A client object, or a function making one from its connection. */
export type ClientFactory = Client | ((agent: ClientConnection) => Client);
/**
 * The client's side of a connection: what the client asks of the agent.
 * Made by {@link ClientConnection.spawn} (or {@link ClientConnection.fromFds}),
 * which hands it to the client's `onConnect`. Call {@link initialize} first
 * (the core refuses anything else before it).
 */
export declare class ClientConnection extends TypedConnection {
    private constructor();
    /**
     * Starts the agent `command` with `args` and connects to its stdio (see
     * {@link Connection.spawnAgent} for `options`: `cwd`, `env`, `stderr`,
     * `graceAfterStdinCloseMs`, ...). Throws `SpawnError` if it cannot start.
     */
    static spawn(command: string, args?: readonly string[], client?: ClientFactory, options?: SpawnOptions): ClientConnection;
    /** Client side over descriptors it takes over (see {@link Connection.fromFds}). */
    static fromFds(readFd: number, writeFd: number, client?: ClientFactory, options?: ConnectionOptions): ClientConnection;
    /**
     * Connects to the remote agent at `url` (see {@link Connection.connect}:
     * `ws://`/`wss://` WebSocket, `http://`/`https://` Streamable HTTP).
     * Rejects with `RemoteError` (`kind`, `status`) when it cannot be reached.
     */
    static connect(url: string, client?: ClientFactory, options?: ConnectOptions): Promise<ClientConnection>;
    private static make;
    /** `initialize`: negotiates the version and capabilities. */
    initialize(params: s.InitializeRequest, options?: CallOptions): Promise<s.InitializeResponse>;
    /** `authenticate`. */
    authenticate(params: s.AuthenticateRequest, options?: CallOptions): Promise<s.AuthenticateResponse>;
    /** `logout`. */
    logout(params?: s.LogoutRequest, options?: CallOptions): Promise<s.LogoutResponse>;
    /** `session/new`. */
    newSession(params: s.NewSessionRequest, options?: CallOptions): Promise<s.NewSessionResponse>;
    /** `session/load` (the agent must advertise `loadSession`). */
    loadSession(params: s.LoadSessionRequest, options?: CallOptions): Promise<s.LoadSessionResponse>;
    /** `session/resume` (the agent must advertise it). */
    resumeSession(params: s.ResumeSessionRequest, options?: CallOptions): Promise<s.ResumeSessionResponse>;
    /** `session/list` (the agent must advertise it). */
    listSessions(params?: s.ListSessionsRequest, options?: CallOptions): Promise<s.ListSessionsResponse>;
    /** `session/close` (the agent must advertise it). */
    closeSession(params: s.CloseSessionRequest, options?: CallOptions): Promise<s.CloseSessionResponse>;
    /** `session/delete` (the agent must advertise it). */
    deleteSession(params: s.DeleteSessionRequest, options?: CallOptions): Promise<s.DeleteSessionResponse>;
    /** `session/set_mode`. */
    setSessionMode(params: s.SetSessionModeRequest, options?: CallOptions): Promise<s.SetSessionModeResponse>;
    /** `session/set_config_option`. */
    setSessionConfigOption(params: s.SetSessionConfigOptionRequest, options?: CallOptions): Promise<s.SetSessionConfigOptionResponse>;
    /**
     * One prompt turn: resolves after every `session/update` the agent sent
     * before its answer was handled by `Client.sessionUpdate`. To end a turn
     * the ACP way call {@link cancel}; aborting `options.signal` cancels the
     * request itself (`$/cancel_request`).
     */
    prompt(params: s.PromptRequest, options?: CallOptions): Promise<s.PromptResponse>;
    /**
     * `session/cancel`: the agent winds the turn down and answers its prompt
     * `cancelled`; the session's pending permission requests are answered
     * `cancelled` by the core (their handlers' signals abort).
     */
    cancel(sessionId: string): Promise<void>;
    /**
     * `session/fork` (`session_fork`; the agent must advertise
     * `sessionCapabilities.fork`): the session the answer names is open
     * afterwards; the one it copies need not be open here.
     */
    forkSession(params: s.ForkSessionRequest, options?: CallOptions): Promise<s.ForkSessionResponse>;
    /**
     * `session/archive` (`session_archive`; the agent must advertise
     * `sessionCapabilities.archive`): closes the session it names here.
     */
    archiveSession(params: s.ArchiveSessionRequest, options?: CallOptions): Promise<s.ArchiveSessionResponse>;
    /** `session/unarchive` (`session_archive`; needs `sessionCapabilities.archive`). */
    unarchiveSession(params: s.UnarchiveSessionRequest, options?: CallOptions): Promise<s.UnarchiveSessionResponse>;
    /**
     * `session/status` (`session_status`; needs `sessionCapabilities.status`);
     * may name any session the agent knows.
     */
    sessionStatus(params: s.SessionStatusRequest, options?: CallOptions): Promise<s.SessionStatusResponse>;
    /** `session/set_title` (`session_set_title`; needs `sessionCapabilities.title`). */
    setSessionTitle(params: s.SetSessionTitleRequest, options?: CallOptions): Promise<s.SetSessionTitleResponse>;
    /** `auth/status` (`auth_status`; needs `auth.status`). */
    authStatus(params?: s.AuthStatusRequest, options?: CallOptions): Promise<s.AuthStatusResponse>;
    /** `providers/list` (`llm_providers`; needs `providers`). */
    listProviders(params?: s.ListProvidersRequest, options?: CallOptions): Promise<s.ListProvidersResponse>;
    /** `providers/set` (`llm_providers`; needs `providers`). */
    setProvider(params: s.SetProviderRequest, options?: CallOptions): Promise<s.SetProviderResponse>;
    /** `providers/disable` (`llm_providers`; needs `providers`). */
    disableProvider(params: s.DisableProviderRequest, options?: CallOptions): Promise<s.DisableProviderResponse>;
    /**
     * `mcp/message` as a notification to the agent, from an MCP server of
     * transport `acp` this client provides (`mcp_over_acp`).
     */
    mcpMessage(params: s.MessageMcpNotification): Promise<void>;
    /**
     * `proxy/initialize` (`proxy_chains`): this client, a conductor,
     * initializes the agent as a proxy. The same params, answer and rules as
     * {@link initialize}: it is this connection's `initialize`.
     */
    proxyInitialize(params: s.InitializeProxyRequest, options?: CallOptions): Promise<s.InitializeProxyResponse>;
    /**
     * `proxy/successor` (`proxy_chains`): the conductor delivers a request
     * (`method`, `params`) of the proxy's successor; the answer is the
     * proxy's result for it.
     */
    proxySuccessor(params: s.ProxySuccessorRequest, options?: CallOptions): Promise<s.ProxySuccessorResponse>;
    /**
     * `proxy/successor` as a notification (`proxy_chains`): the conductor
     * delivers a notification of the proxy's successor.
     */
    proxySuccessorNotification(params: s.ProxySuccessorNotification): Promise<void>;
    /** The spawned agent's process id. */
    get pid(): number | null;
    /**
     * Client side with `sessionModel: true`: the core's model of a session
     * (see {@link Connection.sessionSnapshot}).
     */
    sessionSnapshot(sessionId: string): Record<string, unknown> | null;
}
export {};
