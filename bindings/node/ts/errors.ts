/**
 * The errors libacp raises. Every failure of a call is an {@link AcpError}:
 * the peer's JSON-RPC error ({@link RequestError}), the connection closing
 * ({@link ConnectionClosed}), a cancellation or timeout, or a refusal by the
 * core before anything was sent ({@link RefusedError}, {@link CapabilityError},
 * {@link InvalidParams}). A handler throws {@link RequestError} to answer
 * with that error.
 */

/** The base of every libacp error. */
export class AcpError extends Error {
  override name = "AcpError";
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
export class RequestError extends AcpError {
  override name = "RequestError";
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }

  override toString(): string {
    const data = this.data === undefined ? "" : ` (data: ${stringify(this.data)})`;
    return `${this.name} ${this.code}: ${this.message}${data}`;
  }

  /** `-32601`: a handler does not support the method (the core's wording). */
  static methodNotFound(method: string): MethodNotFound {
    return new MethodNotFound(method);
  }
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
export class MethodNotFound extends RequestError {
  override name = "MethodNotFound";

  constructor(method: string, message = "Method not found", data: unknown = { method }) {
    super(-32601, message, data);
  }
}

/** The connection closed before (or while) the call ran. */
export class ConnectionClosed extends AcpError {
  override name = "ConnectionClosed";
  /** Why it closed. */
  readonly reason: string;

  constructor(message: string, reason: string) {
    super(message);
    this.reason = reason;
  }
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
export class RemoteError extends ConnectionClosed {
  override name = "RemoteError";
  /** What went wrong (the core's `RemoteErrorKind` name). */
  readonly kind: string;
  /** The HTTP status, when the server answered with one. */
  readonly status: number | null;

  constructor(message: string, reason: string, kind: string, status: number | null) {
    super(message, reason);
    this.kind = kind;
    this.status = status;
  }
}

/** The call was cancelled (its `AbortSignal` fired, or the handler's request was cancelled). */
export class Cancelled extends AcpError {
  override name = "Cancelled";
}

/** No answer within the call's timeout (the peer was sent `$/cancel_request`). */
export class RequestTimeout extends AcpError {
  override name = "RequestTimeout";
}

/** Params that are not JSON or break the spec's rules; nothing was sent. */
export class InvalidParams extends AcpError {
  override name = "InvalidParams";
  readonly detail: string;

  constructor(message: string, detail: string) {
    super(message);
    this.detail = detail;
  }
}

/** The peer's answer could not be read. */
export class InvalidResult extends AcpError {
  override name = "InvalidResult";
  readonly detail: string;

  constructor(message: string, detail: string) {
    super(message);
    this.detail = detail;
  }
}

/**
 * The core refused the call before sending anything: `kind` is the core's
 * refusal (`NotInitialized`, `AlreadyInitialized`, `UnknownSession`,
 * `PromptInProgress`, `WrongDirection`, `UnsupportedVersion`,
 * `CapabilityNotAdvertised`), `details` its fields as every binding reports them.
 */
export class RefusedError extends AcpError {
  override name = "RefusedError";
  readonly kind: string;
  readonly details: Record<string, unknown>;
  /** The refused method, when the refusal names one. */
  readonly method: string | undefined;

  constructor(message: string, details: Record<string, unknown>) {
    super(message);
    this.kind = String(details.kind);
    this.details = details;
    this.method = typeof details.method === "string" ? details.method : undefined;
  }
}

/** The peer did not advertise the capability the call needs. */
export class CapabilityError extends RefusedError {
  override name = "CapabilityError";
  /** The capability, for example `agentCapabilities.loadSession`. */
  readonly capability: string;

  constructor(message: string, details: Record<string, unknown>) {
    super(message, details);
    this.capability = String(details.capability);
  }
}

/** The agent command could not be started. */
export class SpawnError extends AcpError {
  override name = "SpawnError";
  readonly program: string;
  readonly error: string;

  constructor(message: string, program: string, error: string) {
    super(message);
    this.program = program;
    this.error = error;
  }
}

function methodOf(data: unknown): string {
  if (typeof data === "string") {
    return data;
  }
  const method = (data as { method?: unknown } | null)?.method;
  return typeof method === "string" ? method : "";
}

/** The peer's `-32601` as it came: its message and `data` (none added when it had none). */
function peerMethodNotFound(message: string, data: unknown): MethodNotFound {
  const e = new MethodNotFound(methodOf(data), message);
  (e as { data: unknown }).data = data;
  return e;
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
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

/**
 * A refused option: the core's message, as a `TypeError` (unknown name,
 * wrong type, an option that does not apply here) or a `RangeError`
 * (out of range), with `option` (the name as given) and `optionError`
 * (`"unknown"`, `"type"`, `"not_applicable"`, `"range"`).
 */
function optionError(e: NativeError): Error {
  const range = e.message.startsWith("RangeError: ");
  const text = e.message.replace(/^(RangeError|TypeError): /, "");
  const error = range || e.kind === "invalid_fds" ? new RangeError(text) : new TypeError(text);
  if (e.option !== undefined) {
    Object.assign(error, { option: e.option, optionError: e.optionError });
  }
  return error;
}

/** The error class for a native error object. */
export function fromNative(e: NativeError): Error {
  switch (e.kind) {
    case "rpc":
      return e.code === -32601
        ? peerMethodNotFound(e.message, e.data)
        : new RequestError(e.code ?? -32603, e.message, e.data);
    case "closed":
      return e.remote !== undefined
        ? new RemoteError(
            e.message,
            e.reason ?? "",
            e.remote.remoteKind ?? "io",
            e.remote.status ?? null,
          )
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
export function fromNativeText(text: string): Error {
  try {
    return fromNative(JSON.parse(text) as NativeError);
  } catch {
    return new AcpError(text);
  }
}

/** The JSON-RPC and ACP error codes, as the core uses them. */
export const ErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  REQUEST_CANCELLED: -32800,
  AUTH_REQUIRED: -32000,
  RESOURCE_NOT_FOUND: -32002,
} as const;
