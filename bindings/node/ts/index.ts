/**
 * libacp for Node.js: the Agent Client Protocol on the libacp Rust engine.
 *
 * * The typed API: implement an {@link Agent} and serve it with
 *   {@link runAgent}, or implement a {@link Client} and drive an agent with
 *   {@link ClientConnection.spawn}.
 * * The dynamic API: {@link Connection}, method names and JSON values (for
 *   extension methods, proxies, tests).
 * * `schema`: the types of every ACP v1 type (also `libacp/schema`), the
 *   unstable extensions' included; {@link AGENT_SCHEMA} and
 *   {@link CLIENT_SCHEMA} the methods, {@link PROXY_REQUEST_SCHEMA} and
 *   {@link PROXY_NOTIFICATION_SCHEMA} the proxy chain's,
 *   {@link UNSTABLE_METHODS} the unstable ones.
 *
 * See README.md for the quickstarts and the threading and ordering rules.
 */

export {
  Connection,
  socketPair,
  type CallOptions,
  type ExitStatus,
  type Handler,
  type RequestContext,
  type RequestId,
  type Role,
} from "./connection";
export {
  AcpError,
  Cancelled,
  CapabilityError,
  ConnectionClosed,
  ErrorCode,
  InvalidParams,
  InvalidResult,
  MethodNotFound,
  RefusedError,
  RequestError,
  RemoteError,
  RequestTimeout,
  SpawnError,
} from "./errors";
export type {
  CommonOptions,
  ConnectOptions,
  ConnectionOptions,
  Direction,
  EngineEvent,
  Pairs,
  RemoteTransportOptions,
  ServeOptions,
  SpawnOptions,
} from "./options";
export {
  Server,
  serve,
  type Listen,
  type RemoteAgentFactory,
  type RemoteConnectionInfo,
  type ServerAddress,
} from "./server";
export {
  AGENT_METHODS,
  AGENT_PROXY_METHODS,
  AgentConnection,
  CLIENT_METHODS,
  CLIENT_PROXY_METHODS,
  ClientConnection,
  runAgent,
  type Agent,
  type AgentFactory,
  type Awaitable,
  type Client,
  type ClientFactory,
  type ProxyMethods,
} from "./typed";
export {
  AGENT_SCHEMA,
  CLIENT_SCHEMA,
  PROXY_NOTIFICATION_SCHEMA,
  PROXY_REQUEST_SCHEMA,
  UNSTABLE_METHODS,
  type AgentMethod,
  type ClientMethod,
  type MethodInfo,
  type ProxyNotificationMethod,
  type ProxyRequestMethod,
} from "./methods";
export type * as schema from "./schema";

/** The ACP protocol version this package speaks. */
export const PROTOCOL_VERSION = 1;
