/**
 * The errors libacp raises. Every failure of a call is an {@link AcpError}:
 * the peer's JSON-RPC error ({@link RequestError}), the connection closing
 * ({@link ConnectionClosed}), a cancellation or timeout, or a refusal by the
 * core before anything was sent ({@link RefusedError}, {@link CapabilityError},
 * {@link InvalidParams}). A handler throws {@link RequestError} to answer
 * with that error.
 */
/** The base of every libacp error. */
export declare class AcpError extends Error {
    name: string;
}
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
export declare class RequestError extends AcpError {
    name: string;
    readonly code: number;
    readonly data: unknown;
    constructor(code: number, message: string, data?: unknown);
    toString(): string;
    /** `-32601`: a handler does not support the method (the core's wording). */
    static methodNotFound(method: string): MethodNotFound;
}
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
export declare class MethodNotFound extends RequestError {
    name: string;
    constructor(method: string, message?: string, data?: unknown);
}
/** The connection closed before (or while) the call ran. */
export declare class ConnectionClosed extends AcpError {
    name: string;
    /** Why it closed. */
    readonly reason: string;
    constructor(message: string, reason: string);
}
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
export declare class RemoteError extends ConnectionClosed {
    name: string;
    /** What went wrong (the core's `RemoteErrorKind` name). */
    readonly kind: string;
    /** The HTTP status, when the server answered with one. */
    readonly status: number | null;
    constructor(message: string, reason: string, kind: string, status: number | null);
}
/** The call was cancelled (its `AbortSignal` fired, or the handler's request was cancelled). */
export declare class Cancelled extends AcpError {
    name: string;
}
/** No answer within the call's timeout (the peer was sent `$/cancel_request`). */
export declare class RequestTimeout extends AcpError {
    name: string;
}
/** Params that are not JSON or break the spec's rules; nothing was sent. */
export declare class InvalidParams extends AcpError {
    name: string;
    readonly detail: string;
    constructor(message: string, detail: string);
}
/** The peer's answer could not be read. */
export declare class InvalidResult extends AcpError {
    name: string;
    readonly detail: string;
    constructor(message: string, detail: string);
}
/**
 * The core refused the call before sending anything: `kind` is the core's
 * refusal (`NotInitialized`, `AlreadyInitialized`, `UnknownSession`,
 * `PromptInProgress`, `WrongDirection`, `UnsupportedVersion`,
 * `CapabilityNotAdvertised`), `details` its fields as every binding reports them.
 */
export declare class RefusedError extends AcpError {
    name: string;
    readonly kind: string;
    readonly details: Record<string, unknown>;
    /** The refused method, when the refusal names one. */
    readonly method: string | undefined;
    constructor(message: string, details: Record<string, unknown>);
}
/** The peer did not advertise the capability the call needs. */
export declare class CapabilityError extends RefusedError {
    name: string;
    /** The capability, for example `agentCapabilities.loadSession`. */
    readonly capability: string;
    constructor(message: string, details: Record<string, unknown>);
}
/** The agent command could not be started. */
export declare class SpawnError extends AcpError {
    name: string;
    readonly program: string;
    readonly error: string;
    constructor(message: string, program: string, error: string);
}
/** An error object from the native module (see `src/deliveries.rs`). */
export interface NativeError {
    kind: string;
    message: string;
    code?: number;
    data?: unknown;
    reason?: string;
    detail?: string;
    program?: string;
    error?: string;
    refusal?: Record<string, unknown>;
    remote?: NativeError;
    remoteKind?: string;
    status?: number | null;
    option?: string;
    optionError?: string;
}
/** The error class for a native error object. */
export declare function fromNative(e: NativeError): Error;
/** Parses a native error text. */
export declare function fromNativeText(text: string): Error;
/** The JSON-RPC and ACP error codes, as the core uses them. */
export declare const ErrorCode: {
    readonly PARSE_ERROR: -32700;
    readonly INVALID_REQUEST: -32600;
    readonly METHOD_NOT_FOUND: -32601;
    readonly INVALID_PARAMS: -32602;
    readonly INTERNAL_ERROR: -32603;
    readonly REQUEST_CANCELLED: -32800;
    readonly AUTH_REQUIRED: -32000;
    readonly RESOURCE_NOT_FOUND: -32002;
};
