"use strict";
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
Object.defineProperty(exports, "__esModule", { value: true });
exports.PROTOCOL_VERSION = exports.UNSTABLE_METHODS = exports.PROXY_REQUEST_SCHEMA = exports.PROXY_NOTIFICATION_SCHEMA = exports.CLIENT_SCHEMA = exports.AGENT_SCHEMA = exports.runAgent = exports.ClientConnection = exports.CLIENT_PROXY_METHODS = exports.CLIENT_METHODS = exports.AgentConnection = exports.AGENT_PROXY_METHODS = exports.AGENT_METHODS = exports.serve = exports.Server = exports.SpawnError = exports.RequestTimeout = exports.RemoteError = exports.RequestError = exports.RefusedError = exports.MethodNotFound = exports.InvalidResult = exports.InvalidParams = exports.ErrorCode = exports.ConnectionClosed = exports.CapabilityError = exports.Cancelled = exports.AcpError = exports.socketPair = exports.Connection = void 0;
var connection_1 = require("./connection");
Object.defineProperty(exports, "Connection", { enumerable: true, get: function () { return connection_1.Connection; } });
Object.defineProperty(exports, "socketPair", { enumerable: true, get: function () { return connection_1.socketPair; } });
var errors_1 = require("./errors");
Object.defineProperty(exports, "AcpError", { enumerable: true, get: function () { return errors_1.AcpError; } });
Object.defineProperty(exports, "Cancelled", { enumerable: true, get: function () { return errors_1.Cancelled; } });
Object.defineProperty(exports, "CapabilityError", { enumerable: true, get: function () { return errors_1.CapabilityError; } });
Object.defineProperty(exports, "ConnectionClosed", { enumerable: true, get: function () { return errors_1.ConnectionClosed; } });
Object.defineProperty(exports, "ErrorCode", { enumerable: true, get: function () { return errors_1.ErrorCode; } });
Object.defineProperty(exports, "InvalidParams", { enumerable: true, get: function () { return errors_1.InvalidParams; } });
Object.defineProperty(exports, "InvalidResult", { enumerable: true, get: function () { return errors_1.InvalidResult; } });
Object.defineProperty(exports, "MethodNotFound", { enumerable: true, get: function () { return errors_1.MethodNotFound; } });
Object.defineProperty(exports, "RefusedError", { enumerable: true, get: function () { return errors_1.RefusedError; } });
Object.defineProperty(exports, "RequestError", { enumerable: true, get: function () { return errors_1.RequestError; } });
Object.defineProperty(exports, "RemoteError", { enumerable: true, get: function () { return errors_1.RemoteError; } });
Object.defineProperty(exports, "RequestTimeout", { enumerable: true, get: function () { return errors_1.RequestTimeout; } });
Object.defineProperty(exports, "SpawnError", { enumerable: true, get: function () { return errors_1.SpawnError; } });
var server_1 = require("./server");
Object.defineProperty(exports, "Server", { enumerable: true, get: function () { return server_1.Server; } });
Object.defineProperty(exports, "serve", { enumerable: true, get: function () { return server_1.serve; } });
var typed_1 = require("./typed");
Object.defineProperty(exports, "AGENT_METHODS", { enumerable: true, get: function () { return typed_1.AGENT_METHODS; } });
Object.defineProperty(exports, "AGENT_PROXY_METHODS", { enumerable: true, get: function () { return typed_1.AGENT_PROXY_METHODS; } });
Object.defineProperty(exports, "AgentConnection", { enumerable: true, get: function () { return typed_1.AgentConnection; } });
Object.defineProperty(exports, "CLIENT_METHODS", { enumerable: true, get: function () { return typed_1.CLIENT_METHODS; } });
Object.defineProperty(exports, "CLIENT_PROXY_METHODS", { enumerable: true, get: function () { return typed_1.CLIENT_PROXY_METHODS; } });
Object.defineProperty(exports, "ClientConnection", { enumerable: true, get: function () { return typed_1.ClientConnection; } });
Object.defineProperty(exports, "runAgent", { enumerable: true, get: function () { return typed_1.runAgent; } });
var methods_1 = require("./methods");
Object.defineProperty(exports, "AGENT_SCHEMA", { enumerable: true, get: function () { return methods_1.AGENT_SCHEMA; } });
Object.defineProperty(exports, "CLIENT_SCHEMA", { enumerable: true, get: function () { return methods_1.CLIENT_SCHEMA; } });
Object.defineProperty(exports, "PROXY_NOTIFICATION_SCHEMA", { enumerable: true, get: function () { return methods_1.PROXY_NOTIFICATION_SCHEMA; } });
Object.defineProperty(exports, "PROXY_REQUEST_SCHEMA", { enumerable: true, get: function () { return methods_1.PROXY_REQUEST_SCHEMA; } });
Object.defineProperty(exports, "UNSTABLE_METHODS", { enumerable: true, get: function () { return methods_1.UNSTABLE_METHODS; } });
/** The ACP protocol version this package speaks. */
exports.PROTOCOL_VERSION = 1;
