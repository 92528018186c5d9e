/**
 * One method of the schema: the names of its params and result types in
 * `./schema` (`result` null: a notification), and whether it is stable.
 */
export interface MethodInfo {
    readonly params: string;
    readonly result: string | null;
    readonly stable: boolean;
}
/** The methods the agent handles (the client calls them), by wire name. */
export declare const AGENT_SCHEMA: {
    readonly "auth/status": {
        readonly params: "AuthStatusRequest";
        readonly result: "AuthStatusResponse";
        readonly stable: false;
    };
    readonly authenticate: {
        readonly params: "AuthenticateRequest";
        readonly result: "AuthenticateResponse";
        readonly stable: true;
    };
    readonly initialize: {
        readonly params: "InitializeRequest";
        readonly result: "InitializeResponse";
        readonly stable: true;
    };
    readonly logout: {
        readonly params: "LogoutRequest";
        readonly result: "LogoutResponse";
        readonly stable: true;
    };
    readonly "mcp/message": {
        readonly params: "MessageMcpNotification";
        readonly result: null;
        readonly stable: false;
    };
    readonly "providers/disable": {
        readonly params: "DisableProviderRequest";
        readonly result: "DisableProviderResponse";
        readonly stable: false;
    };
    readonly "providers/list": {
        readonly params: "ListProvidersRequest";
        readonly result: "ListProvidersResponse";
        readonly stable: false;
    };
    readonly "providers/set": {
        readonly params: "SetProviderRequest";
        readonly result: "SetProviderResponse";
        readonly stable: false;
    };
    readonly "session/archive": {
        readonly params: "ArchiveSessionRequest";
        readonly result: "ArchiveSessionResponse";
        readonly stable: false;
    };
    readonly "session/cancel": {
        readonly params: "CancelNotification";
        readonly result: null;
        readonly stable: true;
    };
    readonly "session/close": {
        readonly params: "CloseSessionRequest";
        readonly result: "CloseSessionResponse";
        readonly stable: true;
    };
    readonly "session/delete": {
        readonly params: "DeleteSessionRequest";
        readonly result: "DeleteSessionResponse";
        readonly stable: true;
    };
    readonly "session/fork": {
        readonly params: "ForkSessionRequest";
        readonly result: "ForkSessionResponse";
        readonly stable: false;
    };
    readonly "session/list": {
        readonly params: "ListSessionsRequest";
        readonly result: "ListSessionsResponse";
        readonly stable: true;
    };
    readonly "session/load": {
        readonly params: "LoadSessionRequest";
        readonly result: "LoadSessionResponse";
        readonly stable: true;
    };
    readonly "session/new": {
        readonly params: "NewSessionRequest";
        readonly result: "NewSessionResponse";
        readonly stable: true;
    };
    readonly "session/prompt": {
        readonly params: "PromptRequest";
        readonly result: "PromptResponse";
        readonly stable: true;
    };
    readonly "session/resume": {
        readonly params: "ResumeSessionRequest";
        readonly result: "ResumeSessionResponse";
        readonly stable: true;
    };
    readonly "session/set_config_option": {
        readonly params: "SetSessionConfigOptionRequest";
        readonly result: "SetSessionConfigOptionResponse";
        readonly stable: true;
    };
    readonly "session/set_mode": {
        readonly params: "SetSessionModeRequest";
        readonly result: "SetSessionModeResponse";
        readonly stable: true;
    };
    readonly "session/set_title": {
        readonly params: "SetSessionTitleRequest";
        readonly result: "SetSessionTitleResponse";
        readonly stable: false;
    };
    readonly "session/status": {
        readonly params: "SessionStatusRequest";
        readonly result: "SessionStatusResponse";
        readonly stable: false;
    };
    readonly "session/unarchive": {
        readonly params: "UnarchiveSessionRequest";
        readonly result: "UnarchiveSessionResponse";
        readonly stable: false;
    };
};
/** The methods the client handles (the agent calls them), by wire name. */
export declare const CLIENT_SCHEMA: {
    readonly "auth/status_update": {
        readonly params: "AuthStatusUpdateNotification";
        readonly result: null;
        readonly stable: false;
    };
    readonly "elicitation/complete": {
        readonly params: "CompleteElicitationNotification";
        readonly result: null;
        readonly stable: true;
    };
    readonly "elicitation/create": {
        readonly params: "CreateElicitationRequest";
        readonly result: "CreateElicitationResponse";
        readonly stable: true;
    };
    readonly "fs/read_text_file": {
        readonly params: "ReadTextFileRequest";
        readonly result: "ReadTextFileResponse";
        readonly stable: true;
    };
    readonly "fs/write_text_file": {
        readonly params: "WriteTextFileRequest";
        readonly result: "WriteTextFileResponse";
        readonly stable: true;
    };
    readonly "mcp/message": {
        readonly params: "MessageMcpRequest";
        readonly result: "MessageMcpResponse";
        readonly stable: false;
    };
    readonly "session/request_permission": {
        readonly params: "RequestPermissionRequest";
        readonly result: "RequestPermissionResponse";
        readonly stable: true;
    };
    readonly "session/update": {
        readonly params: "SessionNotification";
        readonly result: null;
        readonly stable: true;
    };
    readonly "terminal/create": {
        readonly params: "CreateTerminalRequest";
        readonly result: "CreateTerminalResponse";
        readonly stable: true;
    };
    readonly "terminal/kill": {
        readonly params: "KillTerminalRequest";
        readonly result: "KillTerminalResponse";
        readonly stable: true;
    };
    readonly "terminal/output": {
        readonly params: "TerminalOutputRequest";
        readonly result: "TerminalOutputResponse";
        readonly stable: true;
    };
    readonly "terminal/release": {
        readonly params: "ReleaseTerminalRequest";
        readonly result: "ReleaseTerminalResponse";
        readonly stable: true;
    };
    readonly "terminal/wait_for_exit": {
        readonly params: "WaitForTerminalExitRequest";
        readonly result: "WaitForTerminalExitResponse";
        readonly stable: true;
    };
};
/**
 * The proxy chain's requests (unstable `unstable_proxy_chains`; the schema's
 * side `proxy`, between a conductor and its proxies), by wire name.
 */
export declare const PROXY_REQUEST_SCHEMA: {
    readonly "proxy/initialize": {
        readonly params: "InitializeProxyRequest";
        readonly result: "InitializeProxyResponse";
        readonly stable: false;
    };
    readonly "proxy/successor": {
        readonly params: "ProxySuccessorRequest";
        readonly result: "ProxySuccessorResponse";
        readonly stable: false;
    };
};
/**
 * The proxy chain's notifications (unstable `unstable_proxy_chains`; the schema's
 * side `proxy`, between a conductor and its proxies), by wire name.
 */
export declare const PROXY_NOTIFICATION_SCHEMA: {
    readonly "proxy/successor": {
        readonly params: "ProxySuccessorNotification";
        readonly result: null;
        readonly stable: false;
    };
};
/** The wire names of the agent's methods. */
export type AgentMethod = keyof typeof AGENT_SCHEMA;
/** The wire names of the client's methods. */
export type ClientMethod = keyof typeof CLIENT_SCHEMA;
/** The wire names of the proxy chain's requests. */
export type ProxyRequestMethod = keyof typeof PROXY_REQUEST_SCHEMA;
/** The wire names of the proxy chain's notifications. */
export type ProxyNotificationMethod = keyof typeof PROXY_NOTIFICATION_SCHEMA;
/**
 * The methods of the unstable v1 extensions (in schema.unstable.json, not in
 * schema.json): the core routes and checks them only on a connection whose
 * `unstable` option turns their feature on; otherwise they are extension
 * methods to it (passed to the host unchecked).
 */
export declare const UNSTABLE_METHODS: ReadonlySet<string>;
