import Foundation

// `AcpError` (generated from the Rust enum) is the binding's one error type:
// every call throws it, and a handler throws it to answer with a JSON-RPC
// error. These helpers give it the JSON-RPC view.

extension AcpError {
    /// The JSON-RPC error code: the peer's for `.Rpc`; for the others (a
    /// local failure), `-32603`, the code libacp answers with when a handler
    /// throws one, as in every libacp binding: a nested call's local failure
    /// (`.InvalidParams` of the handler's own call, `.Refused`, `.Timeout`,
    /// `.Cancelled`) never blames the caller's request. A handler refuses
    /// the peer's params with `invalidParams(_:)`, an `.Rpc` `-32602`.
    public var code: Int64 {
        switch self {
        case .Rpc(let code, _, _): return code
        default: return -32603
        }
    }

    /// The `data` of a `.Rpc` error, parsed (`nil` when absent or not JSON).
    public var data: JSONValue? {
        if case .Rpc(_, _, let data?) = self { return try? JSONValue.parse(data) }
        return nil
    }

    /// `-32601` with `data: {"method": method}`, as libacp answers unhandled methods.
    public static func methodNotFound(_ method: String) -> AcpError {
        .Rpc(code: -32601, detail: "Method not found", data: JSONValue.object(["method": .string(method)]).jsonText)
    }

    /// `-32602` `"Invalid params"` with `detail` as `data`: the handler
    /// refuses the peer's params (what libacp answers for params that break
    /// the spec's rules, and the typed API for params that do not decode).
    public static func invalidParams(_ detail: String) -> AcpError {
        .Rpc(code: -32602, detail: "Invalid params", data: JSONValue.string(detail).jsonText)
    }

    /// An error with this code, message and `data`.
    public static func rpc(code: Int64, message: String, data: JSONValue? = nil) -> AcpError {
        .Rpc(code: code, detail: message, data: data?.jsonText)
    }

    /// What a handler's error becomes on the wire: an `AcpError` as it is
    /// (libacp answers an `.Rpc` unchanged, any other kind `-32603`), a
    /// decoding error `-32602`, anything else `-32603` with its description.
    /// So a nested call's `.Rpc` error that escapes a handler is answered
    /// unchanged (code, message, `data`), a `-32601` too: it is not
    /// rewritten into `methodNotFound` for the handler's own method.
    static func from(_ error: Error) -> AcpError {
        switch error {
        case let e as AcpError: return e
        case is DecodingError: return .invalidParams("\(error)")
        default: return .Internal(detail: "\(error)")
        }
    }
}
