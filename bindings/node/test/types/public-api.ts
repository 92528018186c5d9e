// Uses every public name of the package, type-checked with
// `tsc --strict --noEmit` (test/types.test.mjs checks that every export of
// lib/index.d.ts appears here). Never run.
import {
  AGENT_METHODS,
  AGENT_PROXY_METHODS,
  AGENT_SCHEMA,
  AcpError,
  AgentConnection,
  CLIENT_METHODS,
  CLIENT_PROXY_METHODS,
  CLIENT_SCHEMA,
  Cancelled,
  CapabilityError,
  ClientConnection,
  Connection,
  ConnectionClosed,
  ErrorCode,
  InvalidParams,
  InvalidResult,
  MethodNotFound,
  PROTOCOL_VERSION,
  PROXY_NOTIFICATION_SCHEMA,
  PROXY_REQUEST_SCHEMA,
  RefusedError,
  RemoteError,
  RequestError,
  RequestTimeout,
  Server,
  SpawnError,
  UNSTABLE_METHODS,
  runAgent,
  serve,
  socketPair,
  type Agent,
  type AgentFactory,
  type AgentMethod,
  type Awaitable,
  type CallOptions,
  type Client,
  type ClientFactory,
  type ClientMethod,
  type CommonOptions,
  type ConnectOptions,
  type ConnectionOptions,
  type Direction,
  type EngineEvent,
  type ExitStatus,
  type Handler,
  type Listen,
  type MethodInfo,
  type Pairs,
  type ProxyMethods,
  type ProxyNotificationMethod,
  type ProxyRequestMethod,
  type RemoteAgentFactory,
  type RemoteConnectionInfo,
  type RemoteTransportOptions,
  type ServeOptions,
  type ServerAddress,
  type RequestContext,
  type RequestId,
  type Role,
  type SpawnOptions,
  type schema,
} from "libacp";
import type { PromptRequest, SessionNotification } from "libacp/schema";

const methods: string[] = [...Object.keys(AGENT_METHODS), ...Object.keys(CLIENT_METHODS)];
const forkInfo: MethodInfo = AGENT_SCHEMA["session/fork"];
const agentMethod: AgentMethod = "session/fork";
const clientMethod: ClientMethod = "mcp/message";
const notification: null = CLIENT_SCHEMA["auth/status_update"].result;
const unstable: boolean = UNSTABLE_METHODS.has(agentMethod) && !forkInfo.stable;
void [clientMethod, notification, unstable];
const proxyRequest: ProxyRequestMethod = "proxy/initialize";
const proxyNotification: ProxyNotificationMethod = "proxy/successor";
const proxyInfo: MethodInfo = PROXY_REQUEST_SCHEMA[proxyRequest];
const proxyNotificationResult: null = PROXY_NOTIFICATION_SCHEMA[proxyNotification].result;
const proxyHandlers: ProxyMethods<Agent> = AGENT_PROXY_METHODS;
const conductorHandlers: ProxyMethods<Client> = CLIENT_PROXY_METHODS;
void [proxyInfo, proxyNotificationResult, proxyHandlers, conductorHandlers];
const version: 1 = PROTOCOL_VERSION;
const code: -32601 = ErrorCode.METHOD_NOT_FOUND;

const agent: Agent = {
  initialize: (params: schema.InitializeRequest): schema.InitializeResponse => ({
    protocolVersion: params.protocolVersion,
    agentCapabilities: { loadSession: false },
  }),
  newSession: async () => ({ sessionId: "s1" }),
  async prompt(params: PromptRequest, context: RequestContext): Promise<schema.PromptResponse> {
    const id: RequestId = context.id;
    const signal: AbortSignal = context.signal;
    const c: Connection = context.connection;
    void [id, signal, c, context.cancelled, context.superseded, context.method, params.sessionId];
    return { stopReason: signal.aborted ? "cancelled" : "end_turn" };
  },
  cancel: (params: schema.CancelNotification) => void params.sessionId,
  forkSession: (params: schema.ForkSessionRequest) => ({ sessionId: `${params.sessionId}-fork` }),
  mcpMessage: (params: schema.MessageMcpNotification) => void params.requestId,
  proxyInitialize: (params: schema.InitializeProxyRequest): schema.InitializeProxyResponse => ({
    protocolVersion: params.protocolVersion,
  }),
  proxySuccessor: (params: schema.ProxySuccessorRequest): schema.ProxySuccessorResponse => ({
    method: params.method,
  }),
  proxySuccessorNotification: (params: schema.ProxySuccessorNotification) => void params.method,
  extMethod: (method: string, params: unknown) => ({ method, params }),
};
const factory: AgentFactory = (client: AgentConnection) => {
  void client.sessionUpdate({ sessionId: "s1", update: { sessionUpdate: "plan", entries: [] } });
  return agent;
};

const client: Client = {
  sessionUpdate(params: SessionNotification): Awaitable<void> {
    if (params.update.sessionUpdate === "agent_message_chunk") {
      const text: string = params.update.content.type === "text" ? params.update.content.text : "";
      void text;
    }
  },
  requestPermission: async (params) => ({
    outcome: { outcome: "selected", optionId: params.options[0]?.optionId ?? "none" },
  }),
  mcpMessage: (params: schema.MessageMcpRequest): schema.MessageMcpResponse => ({
    result: { method: params.method },
  }),
  authStatusUpdate: (params: schema.AuthStatusUpdateNotification) => void params.state,
  proxySuccessor: async (params: schema.ProxySuccessorRequest) => ({ forwarded: params.method }),
  proxySuccessorNotification: (params: schema.ProxySuccessorNotification) => void params.params,
};
const clientFactory: ClientFactory = () => client;

const options: ConnectionOptions = {
  framing: "ndjson",
  maxFrameSize: 1 << 20,
  requestTimeoutMs: 1000,
  flushTimeoutMs: 500,
  incomingRequests: 16,
  outgoingQueue: 16,
  incomingQueue: 16,
  trace: (direction: Direction, frame: string) => void [direction, frame],
  events: (event: EngineEvent) => void [event.kind, event.message, event.details],
  sessionModel: true,
  unstable: ["session_fork", "unstable_mcp_over_acp"],
};
const spawnOptions: SpawnOptions = {
  ...options,
  cwd: "/tmp",
  env: { A: "b" },
  clearEnv: false,
  stderr: (line: string) => void line,
  graceAfterStdinCloseMs: 100,
  graceAfterSigtermMs: 100,
};
const role: Role = "client";
const handler: Handler = {
  onRequest: (method, params, context) => ({ method, params, id: context.id }),
  onNotification: async () => {},
};

const common: CommonOptions = { requestTimeoutMs: 10, maxFrameSize: 1 << 20 };
const transport: RemoteTransportOptions = {
  keepaliveIntervalMs: 5000,
  maxMessageSize: 1 << 20,
  queue: 64,
};
const pairs: Pairs = [["Authorization", "Bearer t"]];
const connectOptions: ConnectOptions = {
  ...common,
  ...transport,
  headers: pairs,
  caFile: "/ca.pem",
  connectTimeoutMs: 1000,
  handshakeTimeoutMs: 1000,
  preferWebsocket: true,
  http2PriorKnowledge: false,
};
const serveOptions: ServeOptions = {
  ...common,
  ...transport,
  path: "/acp",
  tlsCert: "/cert.pem",
  tlsKey: "/key.pem",
  allowedOrigins: ["*"],
  bearerTokens: ["t"],
  maxConnections: 10,
  idleTimeoutMs: 60_000,
  shutdownGraceMs: 1000,
  websocket: true,
  streamableHttp: true,
  requireAuth: false,
};
const remoteAgent: RemoteAgentFactory = (conn: AgentConnection, info: RemoteConnectionInfo) => {
  void [conn, info.kind, info.connectionId, info.remoteAddr];
  return agent;
};

async function remote(): Promise<void> {
  const listen: Listen = { host: "127.0.0.1", port: 0 };
  const server: Server = await serve(listen, remoteAgent, serveOptions);
  const address: ServerAddress = server.address;
  const url: string = server.url("websocket") + server.url("http");
  const count: number = server.connections;
  const editor: ClientConnection = await ClientConnection.connect(
    server.url(),
    client,
    connectOptions,
  );
  const dynamic: Connection = await Connection.connect(url, handler, connectOptions);
  try {
    await editor.initialize({ protocolVersion: 1, clientCapabilities: {} });
  } catch (e) {
    if (e instanceof RemoteError) {
      const kind: string = e.kind;
      const status: number | null = e.status;
      void [kind, status, e.reason];
    }
  }
  await server.shutdown();
  server.close();
  void [address.address, address.port, address.family, count, dynamic];
}

async function use(): Promise<void> {
  const [a, b] = socketPair();
  const served: AgentConnection = AgentConnection.fromFds(a, a, factory, options);
  const editor: ClientConnection = ClientConnection.fromFds(b, b, clientFactory, options);
  const init: schema.InitializeResponse = await editor.initialize({
    protocolVersion: 1,
    clientCapabilities: {},
  });
  const { sessionId } = await editor.newSession({ cwd: "/tmp", mcpServers: [] });
  const abort = new AbortController();
  const call: CallOptions = { signal: abort.signal, keepWaiting: true, timeout: 0 };
  const done: schema.PromptResponse = await editor.prompt(
    { sessionId, prompt: [{ type: "text", text: "hi" }] },
    call,
  );
  await editor.cancel(sessionId);
  const fork: schema.ForkSessionResponse = await editor.forkSession({ sessionId, cwd: "/tmp" });
  await editor.mcpMessage({ serverId: "m", requestId: "r", method: "ping" });
  const tools: schema.MessageMcpResponse = await served.mcpMessage({
    serverId: "m",
    requestId: "r",
    method: "tools/list",
  });
  await served.authStatusUpdate({ state: "authenticated" });
  void [fork.sessionId, tools];
  const chain: schema.InitializeProxyResponse = await editor.proxyInitialize({
    protocolVersion: 1,
    clientCapabilities: {},
  });
  const delivered: schema.ProxySuccessorResponse = await editor.proxySuccessor(
    { method: "session/request_permission", params: { sessionId } },
    call,
  );
  await editor.proxySuccessorNotification({ method: "session/update" });
  const forwarded: schema.ProxySuccessorResponse = await served.proxySuccessor({
    method: "initialize",
    params: { protocolVersion: 1 },
  });
  await served.proxySuccessorNotification({ method: "_hello", params: {} });
  void [chain.protocolVersion, delivered, forwarded];
  const spawned = ClientConnection.spawn("agent", ["--flag"], client, spawnOptions);
  const status: ExitStatus = await spawned.connection.waitExit();
  const dynamic = Connection.fromFds(0, 1, handler, { role });
  const stdio = Connection.fromStdio(handler, options);
  const child = Connection.spawnAgent("agent", [], handler, spawnOptions);
  const result: unknown = await dynamic.request("_x", {}, call);
  await dynamic.notify("_y", {});
  await dynamic.cancelSession("s1");
  const reason: string = await dynamic.closed();
  await dynamic.terminated();
  const closeReason: string | null = dynamic.closeReason;
  const pid: number | null = child.pid;
  const exit: ExitStatus | null = child.exitStatus;
  const caps: Record<string, unknown> = served.peerCapabilities();
  const sessions: string[] = stdio.sessions();
  const snap: Record<string, unknown> | null = editor.sessionSnapshot(sessionId);
  const v: number | null = editor.protocolVersion;
  await runAgent(agent, options);
  await served.close();
  await using disposable = editor;
  void [
    init,
    done,
    status,
    result,
    reason,
    closeReason,
    pid,
    exit,
    caps,
    sessions,
    snap,
    v,
    disposable,
  ];
  void [methods, version, code, served.closeReason, editor.pid, editor.closeReason];
}

function errors(e: unknown): string {
  if (e instanceof MethodNotFound) return `${e.code} ${String(e.data)}`;
  if (e instanceof RequestError) return `${e.code} ${e.message} ${String(e.data)} ${e.toString()}`;
  if (e instanceof CapabilityError) return `${e.capability} ${e.kind} ${e.method ?? ""}`;
  if (e instanceof RefusedError) return `${e.kind} ${JSON.stringify(e.details)} ${e.method ?? ""}`;
  if (e instanceof ConnectionClosed) return e.reason;
  if (e instanceof Cancelled || e instanceof RequestTimeout) return e.message;
  if (e instanceof InvalidParams || e instanceof InvalidResult) return e.detail;
  if (e instanceof SpawnError) return `${e.program}: ${e.error}`;
  if (e instanceof AcpError) return e.name;
  return String(e);
}

void use;
void remote;
void errors;
void new RequestError(-32000, "x", { y: 1 });
