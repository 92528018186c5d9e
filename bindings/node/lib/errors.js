"use strict";
/**
 * The errors libacp raises. Every failure of a call is an {@link AcpError}:
 * the peer's JSON-RPC error ({@link RequestError}), the connection closing
 * ({@link ConnectionClosed}), a cancellation or timeout, or a refusal by the
 * core before anything was sent ({@link RefusedError}, {@link CapabilityError},
 * {@link InvalidParams}). A handler throws {@link RequestError} to answer
 * with that error.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ErrorCode = exports.SpawnError = exports.CapabilityError = exports.RefusedError = exports.InvalidResult = exports.InvalidParams = exports.RequestTimeout = exports.Cancelled = exports.RemoteError = exports.ConnectionClosed = exports.MethodNotFound = exports.RequestError = exports.AcpError = void 0;
exports.fromNative = fromNative;
exports.fromNativeText = fromNativeText;
/** The base of every libacp error. */
class AcpError extends Error {
    name = "AcpError";
}
exports.AcpError = AcpError;
/**
 * A JSON-RPC error: the peer's answer to a call, or what a handler throws to
 * answer with one. `toString()` shows `data` (where peers put the reason).
 *
 * One that escapes a handler is answered unchanged: the same code, message
 * and `data`. So a nested call's error that the handler does not catch
 * reaches the caller exactly as the peer sent it ({@link MethodNotFound}
 * included), as in the Rust, Python, Kotlin and Swift bindings and the ACP
 * SDKs.
 */
class RequestError extends AcpError {
    name = "RequestError";
    code;
    data;
    constructor(code, message, data) {
        super(message);
        this.code = code;
        this.data = data;
    }
    toString() {
        const data = this.data === undefined ? "" : ` (data: ${stringify(this.data)})`;
        return `${this.name} ${this.code}: ${this.message}${data}`;
    }
    /** `-32601`: a handler does not support the method (the core's wording). */
    static methodNotFound(method) {
        return new MethodNotFound(method);
    }
}
exports.RequestError = RequestError;
/**
 * `-32601`: what methods a host does not implement answer. `new
 * MethodNotFound(method)` is the core's answer for `method` ("Method not
 * found", `data: {method}`), which the typed API's defaults throw. A call
 * the peer answered `-32601` rejects with one too, carrying the peer's
 * message and `data` as they came (`data` absent when the peer sent none).
 *
 * Like every {@link RequestError}, one that escapes a handler answers its
 * request unchanged: a nested call's `-32601` reaches the caller as the
 * peer sent it, not as "method not found" for the handler's own method.
 */
class MethodNotFound extends RequestError {
    name = "MethodNotFound";
    constructor(method, message = "Method not found", data = { method }) {
        super(-32601, message, data);
    }
}
exports.MethodNotFound = MethodNotFound;
/** The connection closed before (or while) the call ran. */
class ConnectionClosed extends AcpError {
    name = "ConnectionClosed";
    /** Why it closed. */
    reason;
    constructor(message, reason) {
        super(message);
        this.reason = reason;
    }
}
exports.ConnectionClosed = ConnectionClosed;
/**
 * The remote transport failed: a connect that could not reach the agent
 * (`ClientConnection.connect` rejects with it), or a remote connection that
 * failed later (the server went away, refused the `initialize` POST, stopped
 * answering pings): then pending calls reject with it. `kind` is the core's
 * stable name, the same in every binding: `"invalid_url"`, `"dns"`,
 * `"refused"`, `"timeout"`, `"tls"`, `"unauthorized"`, `"forbidden"`,
 * `"not_found"`, `"version_refused"`, `"http"`, `"io"`; `status` the HTTP
 * status when the server answered with one.
 */
class RemoteError extends ConnectionClosed {
    name = "RemoteError";
    /** What went wrong (the core's `RemoteErrorKind` name). */
    kind;
    /** The HTTP status, when the server answered with one. */
    status;
    constructor(message, reason, kind, status) {
        super(message, reason);
        this.kind = kind;
        this.status = status;
    }
}
exports.RemoteError = RemoteError;
/** The call was cancelled (its `AbortSignal` fired, or the handler's request was cancelled). */
class Cancelled extends AcpError {
    name = "Cancelled";
}
exports.Cancelled = Cancelled;
/** No answer within the call's timeout (the peer was sent `$/cancel_request`). */
class RequestTimeout extends AcpError {
    name = "RequestTimeout";
}
exports.RequestTimeout = RequestTimeout;
/** Params that are not JSON or break the spec's rules; nothing was sent. */
class InvalidParams extends AcpError {
    name = "InvalidParams";
    detail;
    constructor(message, detail) {
        super(message);
        this.detail = detail;
    }
}
exports.InvalidParams = InvalidParams;
/** The peer's answer could not be read. */
class InvalidResult extends AcpError {
    name = "InvalidResult";
    detail;
    constructor(message, detail) {
        super(message);
        this.detail = detail;
    }
}
exports.InvalidResult = InvalidResult;
/**
 * The core refused the call before sending anything: `kind` is the core's
 * refusal (`NotInitialized`, `AlreadyInitialized`, `UnknownSession`,
 * `PromptInProgress`, `WrongDirection`, `UnsupportedVersion`,
 * `CapabilityNotAdvertised`), `details` its fields as every binding reports them.
 */
class RefusedError extends AcpError {
    name = "RefusedError";
    kind;
    details;
    /** The refused method, when the refusal names one. */
    method;
    constructor(message, details) {
        super(message);
        this.kind = String(details.kind);
        this.details = details;
        this.method = typeof details.method === "string" ? details.method : undefined;
    }
}
exports.RefusedError = RefusedError;
/** The peer did not advertise the capability the call needs. */
class CapabilityError extends RefusedError {
    name = "CapabilityError";
    /** The capability, for example `agentCapabilities.loadSession`. */
    capability;
    constructor(message, details) {
        super(message, details);
        this.capability = String(details.capability);
    }
}
exports.CapabilityError = CapabilityError;
/** The agent command could not be started. */
class SpawnError extends AcpError {
    name = "SpawnError";
    program;
    error;
    constructor(message, program, error) {
        super(message);
        this.program = program;
        this.error = error;
    }
}
exports.SpawnError = SpawnError;
function methodOf(data) {
    if (typeof data === "string") {
        return data;
    }
    const method = data?.method;
    return typeof method === "string" ? method : "";
}
/** The peer's `-32601` as it came: its message and `data` (none added when it had none). */
function peerMethodNotFound(message, data) {
    const e = new MethodNotFound(methodOf(data), message);
    e.data = data;
    return e;
}
function stringify(value) {
    try {
        return JSON.stringify(value);
    }
    catch {
        return String(value);
    }
}
/**
 * A refused option: the core's message, as a `TypeError` (unknown name,
 * wrong type, an option that does not apply here) or a `RangeError`
 * (out of range), with `option` (the name as given) and `optionError`
 * (`"unknown"`, `"type"`, `"not_applicable"`, `"range"`).
 */
function optionError(e) {
    const range = e.message.startsWith("RangeError: ");
    const text = e.message.replace(/^(RangeError|TypeError): /, "");
    const error = range || e.kind === "invalid_fds" ? new RangeError(text) : new TypeError(text);
    if (e.option !== undefined) {
        Object.assign(error, { option: e.option, optionError: e.optionError });
    }
    return error;
}
/** The error class for a native error object. */
function fromNative(e) {
    switch (e.kind) {
        case "rpc":
            return e.code === -32601
                ? peerMethodNotFound(e.message, e.data)
                : new RequestError(e.code ?? -32603, e.message, e.data);
        case "closed":
            return e.remote !== undefined
                ? new RemoteError(e.message, e.reason ?? "", e.remote.remoteKind ?? "io", e.remote.status ?? null)
                : new ConnectionClosed(e.message, e.reason ?? "");
        case "gone":
            return new ConnectionClosed(e.message, e.message);
        case "remote":
            return new RemoteError(e.message, e.message, e.remoteKind ?? "io", e.status ?? null);
        case "cancelled":
            return new Cancelled(e.message);
        case "timeout":
            return new RequestTimeout(e.message);
        case "invalid_params":
            return new InvalidParams(e.message, e.detail ?? "");
        case "invalid_result":
            return new InvalidResult(e.message, e.detail ?? "");
        case "refused": {
            const refusal = e.refusal ?? { kind: "Unknown" };
            return refusal.kind === "CapabilityNotAdvertised"
                ? new CapabilityError(e.message, refusal)
                : new RefusedError(e.message, refusal);
        }
        case "spawn":
            return new SpawnError(e.message, e.program ?? "", e.error ?? "");
        case "invalid_options":
        case "invalid_fds":
            return optionError(e);
        case "listen":
            return Object.assign(new Error(e.message), { code: "ERR_ACP_LISTEN" });
        default:
            return new AcpError(e.message);
    }
}
/** Parses a native error text. */
function fromNativeText(text) {
    try {
        return fromNative(JSON.parse(text));
    }
    catch {
        return new AcpError(text);
    }
}
/** The JSON-RPC and ACP error codes, as the core uses them. */
exports.ErrorCode = {
    PARSE_ERROR: -32700,
    INVALID_REQUEST: -32600,
    METHOD_NOT_FOUND: -32601,
    INVALID_PARAMS: -32602,
    INTERNAL_ERROR: -32603,
    REQUEST_CANCELLED: -32800,
    AUTH_REQUIRED: -32000,
    RESOURCE_NOT_FOUND: -32002,
};
