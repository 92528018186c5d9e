import Foundation

/// A JSON value: the dynamic API's params and results, and the models' open
/// fields (`_meta`, extension data). Numbers keep their kind: an integer
/// that fits `Int64` is `.int`, anything else `.double`.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else if let o = try? c.decode([String: JSONValue].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Parses JSON text (any value, not only objects).
    public static func parse(_ text: String) throws -> JSONValue {
        try JSONParser.parse(text)
    }

    /// Compact JSON text (object keys sorted).
    public var jsonText: String { JSON.text(self) }

    /// `value` (a model) as JSON: the params of a wrapped message
    /// (`ProxySuccessorRequest.params`), say. A value that cannot be encoded
    /// throws `AcpError.InvalidArgument`.
    public init<T: Encodable>(encoding value: T) throws {
        self = try JSON.decode(JSONValue.self, JSON.encode(value), params: false)
    }

    /// This value decoded as `T` (a model): the result of a wrapped request
    /// (`ProxySuccessorResponse`), say. A value that does not decode throws
    /// `AcpError.InvalidResult`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSON.decode(T.self, jsonText, params: false)
    }

    /// The member `key` of an object; `nil` for a missing member or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The item at `index` of an array; `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    public var isNull: Bool { self == .null }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { jsonText }
}

/// The JSON text of every layer (JSONCodec.swift: compact, keys sorted, `/`
/// not escaped), so the wire text is the same everywhere.
enum JSON {
    static func text<T: Encodable>(_ value: T) -> String {
        // Encoding our own models and JSONValue cannot fail (no non-finite
        // floats are produced by parsing); a failure is a programming error
        // in a host's custom Encodable, reported as JSON null rather than a crash.
        (try? encode(value)) ?? "null"
    }

    /// Encodes `value` for the wire; a value that cannot be encoded throws
    /// `AcpError.InvalidArgument`.
    static func encode<T: Encodable>(_ value: T) throws -> String {
        do {
            var writer = JSONWriter()
            writer.write(try TreeEncoder.node(for: value, at: []))
            return writer.text
        } catch {
            throw AcpError.InvalidArgument(detail: "could not encode \(T.self): \(error)")
        }
    }

    /// Decodes a peer's params (a failure is the `-32602` a handler answers,
    /// `AcpError.invalidParams`) or a call's result (`InvalidResult`).
    static func decode<T: Decodable>(_ type: T.Type, _ text: String?, params: Bool) throws -> T {
        do {
            return try TreeDecoder.decode(T.self, from: JSONParser.parse(text ?? "null"), at: [])
        } catch {
            let detail = "\(T.self): \(describe(error))"
            throw params ? AcpError.invalidParams(detail) : AcpError.InvalidResult(detail: detail)
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let ctx):
            return "missing \(path(ctx.codingPath + [key]))"
        case DecodingError.typeMismatch(let type, let ctx):
            return "\(path(ctx.codingPath)) is not \(type)"
        case DecodingError.valueNotFound(let type, let ctx):
            return "\(path(ctx.codingPath)) is null, \(type) expected"
        case DecodingError.dataCorrupted(let ctx):
            return "\(path(ctx.codingPath)): \(ctx.debugDescription)"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        "/" + keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
    }
}
