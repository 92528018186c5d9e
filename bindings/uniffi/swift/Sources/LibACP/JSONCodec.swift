import Foundation

// libacp's own JSON text <-> Codable path (what `JSON.encode`, `JSON.decode`,
// `JSONValue.parse` and `jsonText` use), instead of Foundation's
// JSONEncoder/JSONDecoder.
//
// Why: on Linux (swift-corelibs-foundation 6.0) both handle every escaped
// character of a string slowly. Measured in the release bench build, for the
// 8 MiB escape-dense text of bench W3 (3 escapes in 7 bytes): JSONEncoder
// 550-850 ms and JSONDecoder 270-340 ms, against 17 ms and 20 ms for 8 MiB
// without escapes; the 1 KiB answer of W2 cost 95 us to encode and 48 us to
// decode, more than the rest of a round trip. Here a string is scanned and
// copied by runs of plain bytes.
//
// The text is what JSONEncoder wrote with `.sortedKeys` and
// `.withoutEscapingSlashes` on Linux: compact, object members sorted as
// Swift compares strings (for ASCII names, by byte: `Zed` before `_meta`
// before `content`), `/` and non-ASCII text written as they are, integral
// doubles without `.0`. Decoding errors are the `DecodingError`s JSONDecoder throws (the
// messages built from them, `JSON.describe`, do not change).
//
// The values are trees of `JSONValue` in between: the text is parsed into
// one and a model is decoded from it (`TreeDecoder`); a model is encoded
// into nodes (`TreeEncoder`) that are then written out (`JSONWriter`).

// MARK: - Parsing

/// Parses JSON text into a `JSONValue`. Strict RFC 8259 (what libacp's core
/// accepts), nesting at most 512 deep (as JSONDecoder); errors are
/// `DecodingError.dataCorrupted`.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0
    private var depth = 0
    private static let maxDepth = 512

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            var parser = JSONParser(buffer)
            parser.skipSpace()
            let value = try parser.value()
            parser.skipSpace()
            guard parser.at == buffer.count else { throw parser.corrupted("unexpected text after the JSON value") }
            return value
        }
    }

    private func corrupted(_ what: String) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: [], debugDescription: "The given data was not valid JSON: \(what) at byte \(at)."))
    }

    private mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x0A, 0x0D, 0x09: at += 1
            default: return
            }
        }
    }

    private mutating func value() throws -> JSONValue {
        guard at < bytes.count else { throw corrupted("unexpected end of text") }
        switch bytes[at] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""):
            at += 1
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard bytes.count - at >= count else { throw corrupted("unexpected end of text") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for k in 0..<count where bytes[at + k] != expected[k] {
            throw corrupted("invalid literal")
        }
        at += count
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maxDepth { throw corrupted("nesting deeper than \(Self.maxDepth)") }
        at += 1
        skipSpace()
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
            at += 1
            return .object(members)
        }
        while true {
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw corrupted("expected a member name") }
            at += 1
            let key = try string()
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw corrupted("expected ':'") }
            at += 1
            skipSpace()
            members[key] = try value()
            skipSpace()
            guard at < bytes.count else { throw corrupted("unexpected end of text") }
            if bytes[at] == UInt8(ascii: ",") {
                at += 1
                skipSpace()
            } else if bytes[at] == UInt8(ascii: "}") {
                at += 1
                return .object(members)
            } else {
                throw corrupted("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var items: [JSONValue] = []
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
            at += 1
            return .array(items)
        }
        while true {
            items.append(try value())
            skipSpace()
            guard at < bytes.count else { throw corrupted("unexpected end of text") }
            if bytes[at] == UInt8(ascii: ",") {
                at += 1
                skipSpace()
            } else if bytes[at] == UInt8(ascii: "]") {
                at += 1
                return .array(items)
            } else {
                throw corrupted("expected ',' or ']'")
            }
        }
    }

    /// A string's contents, after its opening quote; leaves `at` after the
    /// closing one.
    private mutating func string() throws -> String {
        let start = at
        var escaped = false
        while at < bytes.count {
            let b = bytes[at]
            if b == 0x22 {
                break
            } else if b == 0x5C {
                escaped = true
                at += 2
            } else if b < 0x20 {
                throw corrupted("unescaped control character in a string")
            } else {
                at += 1
            }
        }
        guard at < bytes.count else { throw corrupted("unterminated string") }
        let end = at
        at += 1
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if !escaped { return String(decoding: raw, as: UTF8.self) }
        // Unescaped, the text is never longer than escaped.
        return try String(unsafeUninitializedCapacity: raw.count) { try JSONParser.unescape(raw, into: $0) }
    }

    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        func bad(_ what: String) -> DecodingError {
            DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not valid JSON: \(what)."))
        }
        func hex(_ i: Int) throws -> UInt32 {
            guard i + 4 <= raw.count else { throw bad("truncated \\u escape") }
            var v: UInt32 = 0
            for k in i..<(i + 4) {
                let c = raw[k]
                let d: UInt8
                switch c {
                case 0x30...0x39: d = c - 0x30
                case 0x41...0x46: d = c - 0x41 + 10
                case 0x61...0x66: d = c - 0x61 + 10
                default: throw bad("invalid \\u escape")
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        var i = 0
        var o = 0
        let n = raw.count
        while i < n {
            // Plain bytes, one by one: in escape-dense text (W3's: 3 escapes
            // in 7 bytes) the runs are too short for a copy call per run.
            let b = raw[i]
            if b != 0x5C {
                out[o] = b
                o += 1
                i += 1
                continue
            }
            // An escape: a backslash with a character after it (the scan
            // that found the closing quote made sure).
            let c = raw[i + 1]
            i += 2
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                out[o] = c
                o += 1
            case UInt8(ascii: "b"): out[o] = 0x08; o += 1
            case UInt8(ascii: "f"): out[o] = 0x0C; o += 1
            case UInt8(ascii: "n"): out[o] = 0x0A; o += 1
            case UInt8(ascii: "r"): out[o] = 0x0D; o += 1
            case UInt8(ascii: "t"): out[o] = 0x09; o += 1
            case UInt8(ascii: "u"):
                var scalar = try hex(i)
                i += 4
                if (0xD800..<0xDC00).contains(scalar), i + 6 <= n, raw[i] == 0x5C, raw[i + 1] == UInt8(ascii: "u") {
                    let low = try hex(i + 2)
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                // A lone surrogate is refused, as JSONDecoder refuses it.
                guard let s = Unicode.Scalar(scalar) else { throw bad("a lone surrogate in a \\u escape") }
                for b in UTF8.encode(s)! {
                    out[o] = b
                    o += 1
                }
            default:
                throw bad("invalid escape")
            }
        }
        return o
    }

    private mutating func number() throws -> JSONValue {
        let start = at
        var negative = false
        if bytes[at] == UInt8(ascii: "-") {
            negative = true
            at += 1
        }
        var integer: Int64 = 0
        var overflow = false
        let digits = at
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 {
            let d = Int64(bytes[at] - 0x30)
            let (m, o1) = integer.multipliedReportingOverflow(by: 10)
            let (s, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
            overflow = overflow || o1 || o2
            integer = s
            at += 1
        }
        let intDigits = at - digits
        guard intDigits > 0 else { throw corrupted("invalid value") }
        guard intDigits == 1 || bytes[digits] != 0x30 else { throw corrupted("a number with a leading zero") }
        var fractional = false
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            fractional = true
            at += 1
            let f = at
            while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
            guard at > f else { throw corrupted("a number without digits after '.'") }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            fractional = true
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            let e = at
            while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
            guard at > e else { throw corrupted("a number without exponent digits") }
        }
        if !fractional && !overflow { return .int(integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw corrupted("a number out of range") }
        // As JSONDecoder read numbers into JSONValue: an integral value that
        // fits Int64 is an integer.
        if d.rounded() == d, abs(d) < 9.2e18 { return .int(Int64(d)) }
        return .double(d)
    }
}

// MARK: - Decoding a model from a tree

/// A `Decoder` over a parsed `JSONValue`, with JSONDecoder's errors.
struct TreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, at path: [CodingKey]) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == String.self, case .string(let s) = value { return s as! T }
        return try T(from: TreeDecoder(value: value, codingPath: path))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .object(let members):
            return KeyedDecodingContainer(KeyedTree<Key>(members: members, codingPath: codingPath))
        case .null:
            throw DecodingError.valueNotFound([String: Any].self, DecodingError.Context(
                codingPath: codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead"))
        default:
            throw mismatch([String: Any].self, value, codingPath)
        }
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        switch value {
        case .array(let items):
            return UnkeyedTree(items: items, codingPath: codingPath)
        case .null:
            throw DecodingError.valueNotFound([Any].self, DecodingError.Context(
                codingPath: codingPath, debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
        default:
            throw mismatch([Any].self, value, codingPath)
        }
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        SingleTree(value: value, codingPath: codingPath)
    }
}

private func kind(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool: return "bool"
    case .int, .double: return "number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "a dictionary"
    }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [CodingKey]) -> DecodingError {
    DecodingError.typeMismatch(type, DecodingError.Context(
        codingPath: path, debugDescription: "Expected to decode \(type) but found \(kind(value)) instead."))
}

/// A primitive out of a tree value, as JSONDecoder reads it.
private enum Unbox {
    static func absent(_ type: Any.Type, _ path: [CodingKey]) -> DecodingError {
        DecodingError.valueNotFound(type, DecodingError.Context(
            codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
    }

    static func bool(_ v: JSONValue, _ path: [CodingKey]) throws -> Bool {
        switch v {
        case .bool(let b): return b
        case .null: throw absent(Bool.self, path)
        default: throw mismatch(Bool.self, v, path)
        }
    }

    static func string(_ v: JSONValue, _ path: [CodingKey]) throws -> String {
        switch v {
        case .string(let s): return s
        case .null: throw absent(String.self, path)
        default: throw mismatch(String.self, v, path)
        }
    }

    static func double(_ v: JSONValue, _ path: [CodingKey]) throws -> Double {
        switch v {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .null: throw absent(Double.self, path)
        default: throw mismatch(Double.self, v, path)
        }
    }

    static func integer<T: FixedWidthInteger>(_ v: JSONValue, _ path: [CodingKey]) throws -> T {
        switch v {
        case .int(let i):
            if let t = T(exactly: i) { return t }
        case .double(let d):
            if let t = T(exactly: d) { return t }
        case .null:
            throw absent(T.self, path)
        default:
            throw mismatch(T.self, v, path)
        }
        throw DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: path, debugDescription: "Parsed JSON number <\(v)> does not fit in \(T.self)."))
    }
}

private struct KeyedTree<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let v = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Unbox.bool(member(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try Unbox.string(member(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Unbox.double(member(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try Unbox.double(member(key), codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try Unbox.integer(member(key), codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try Unbox.integer(member(key), codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try TreeDecoder.decode(T.self, from: member(key), at: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TreeDecoder(value: member(key), codingPath: codingPath + [key]).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try TreeDecoder(value: member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> Decoder {
        TreeDecoder(value: members["super"] ?? .null, codingPath: codingPath + [AnyKey("super")])
    }

    func superDecoder(forKey key: Key) throws -> Decoder {
        TreeDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

/// The coding key of an array item (its index), as in JSONDecoder's paths.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedTree: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next(_ type: Any.Type) throws -> (JSONValue, [CodingKey]) {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { _ = try next(Any?.self); return false }
        if items[currentIndex] == .null {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, p) = try next(type); return try Unbox.bool(v, p) }
    mutating func decode(_ type: String.Type) throws -> String { let (v, p) = try next(type); return try Unbox.string(v, p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (v, p) = try next(type); return try Unbox.double(v, p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (v, p) = try next(type); return Float(try Unbox.double(v, p)) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (v, p) = try next(type); return try Unbox.integer(v, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (v, p) = try next(type); return try Unbox.integer(v, p) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, p) = try next(type)
        return try TreeDecoder.decode(T.self, from: v, at: p)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next([String: Any].self)
        return try TreeDecoder(value: v, codingPath: p).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        let (v, p) = try next([Any].self)
        return try TreeDecoder(value: v, codingPath: p).unkeyedContainer()
    }

    mutating func superDecoder() throws -> Decoder {
        let (v, p) = try next(Decoder.self)
        return TreeDecoder(value: v, codingPath: p)
    }
}

private struct SingleTree: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try Unbox.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Unbox.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Unbox.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try Unbox.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try Unbox.integer(value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Unbox.integer(value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Unbox.integer(value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Unbox.integer(value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Unbox.integer(value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Unbox.integer(value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Unbox.integer(value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Unbox.integer(value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Unbox.integer(value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Unbox.integer(value, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try TreeDecoder.decode(T.self, from: value, at: codingPath)
    }
}

// MARK: - Encoding a model into a tree

/// What a model encodes into: a value, or an object or array still being
/// filled (shared by the containers that fill it).
enum EncodedNode {
    case value(JSONValue)
    /// An integer JSONValue cannot hold (a UInt64 above Int64.max), as text.
    case number(String)
    case object(EncodedObject)
    case array(EncodedArray)
    /// What a super encoder wrote, once it is done.
    case deferred(TreeEncoder)
}

final class EncodedObject {
    var members: [String: EncodedNode] = [:]
}

final class EncodedArray {
    var items: [EncodedNode] = []
}

/// An `Encoder` building `EncodedNode`s. Asking it for a keyed container
/// twice gives the same object (a tagged union's payload, then its tag).
final class TreeEncoder: Encoder {
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var storage: EncodedNode?

    init(codingPath: [CodingKey]) {
        self.codingPath = codingPath
    }

    static func node<T: Encodable>(for value: T, at path: [CodingKey]) throws -> EncodedNode {
        if T.self == JSONValue.self { return .value(value as! JSONValue) }
        if T.self == String.self { return .value(.string(value as! String)) }
        let encoder = TreeEncoder(codingPath: path)
        try value.encode(to: encoder)
        // A value that encoded nothing is an empty object, as JSONEncoder writes it.
        return encoder.storage ?? .object(EncodedObject())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        if case .object(let existing) = storage {
            object = existing
        } else {
            object = EncodedObject()
            storage = .object(object)
        }
        return KeyedEncodingContainer(KeyedNode<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        let array: EncodedArray
        if case .array(let existing) = storage {
            array = existing
        } else {
            array = EncodedArray()
            storage = .array(array)
        }
        return UnkeyedNode(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        SingleNode(encoder: self)
    }
}

private func finite(_ d: Double, _ path: [CodingKey]) throws -> EncodedNode {
    guard d.isFinite else {
        throw EncodingError.invalidValue(d, EncodingError.Context(
            codingPath: path, debugDescription: "Unable to encode Double.\(d) directly in JSON."))
    }
    return .value(.double(d))
}

private func integer<T: FixedWidthInteger>(_ v: T) -> EncodedNode {
    if let i = Int64(exactly: v) { return .value(.int(i)) }
    return .number(String(v))
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: EncodedObject
    let codingPath: [CodingKey]

    private func put(_ node: EncodedNode, _ key: Key) {
        object.members[key.stringValue] = node
    }

    mutating func encodeNil(forKey key: Key) { put(.value(.null), key) }
    mutating func encode(_ value: Bool, forKey key: Key) { put(.value(.bool(value)), key) }
    mutating func encode(_ value: String, forKey key: Key) { put(.value(.string(value)), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try finite(value, codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try finite(Double(value), codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { put(integer(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) { put(integer(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try TreeEncoder.node(for: value, at: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        put(.object(nested), key)
        return KeyedEncodingContainer(KeyedNode<NestedKey>(object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        let nested = EncodedArray()
        put(.array(nested), key)
        return UnkeyedNode(array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> Encoder {
        let encoder = TreeEncoder(codingPath: codingPath + [AnyKey("super")])
        object.members["super"] = .deferred(encoder)
        return encoder
    }

    mutating func superEncoder(forKey key: Key) -> Encoder {
        let encoder = TreeEncoder(codingPath: codingPath + [key])
        put(.deferred(encoder), key)
        return encoder
    }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let array: EncodedArray
    let codingPath: [CodingKey]

    var count: Int { array.items.count }
    private var path: [CodingKey] { codingPath + [IndexKey(array.items.count)] }

    mutating func encodeNil() { array.items.append(.value(.null)) }
    mutating func encode(_ value: Bool) { array.items.append(.value(.bool(value))) }
    mutating func encode(_ value: String) { array.items.append(.value(.string(value))) }
    mutating func encode(_ value: Double) throws { array.items.append(try finite(value, path)) }
    mutating func encode(_ value: Float) throws { array.items.append(try finite(Double(value), path)) }
    mutating func encode(_ value: Int) { array.items.append(integer(value)) }
    mutating func encode(_ value: Int8) { array.items.append(integer(value)) }
    mutating func encode(_ value: Int16) { array.items.append(integer(value)) }
    mutating func encode(_ value: Int32) { array.items.append(integer(value)) }
    mutating func encode(_ value: Int64) { array.items.append(integer(value)) }
    mutating func encode(_ value: UInt) { array.items.append(integer(value)) }
    mutating func encode(_ value: UInt8) { array.items.append(integer(value)) }
    mutating func encode(_ value: UInt16) { array.items.append(integer(value)) }
    mutating func encode(_ value: UInt32) { array.items.append(integer(value)) }
    mutating func encode(_ value: UInt64) { array.items.append(integer(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        array.items.append(try TreeEncoder.node(for: value, at: path))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        let p = path
        array.items.append(.object(nested))
        return KeyedEncodingContainer(KeyedNode<NestedKey>(object: nested, codingPath: p))
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let p = path
        array.items.append(.array(nested))
        return UnkeyedNode(array: nested, codingPath: p)
    }

    mutating func superEncoder() -> Encoder {
        let encoder = TreeEncoder(codingPath: path)
        array.items.append(.deferred(encoder))
        return encoder
    }
}

private struct SingleNode: SingleValueEncodingContainer {
    let encoder: TreeEncoder
    var codingPath: [CodingKey] { encoder.codingPath }

    func encodeNil() { encoder.storage = .value(.null) }
    func encode(_ value: Bool) { encoder.storage = .value(.bool(value)) }
    func encode(_ value: String) { encoder.storage = .value(.string(value)) }
    func encode(_ value: Double) throws { encoder.storage = try finite(value, codingPath) }
    func encode(_ value: Float) throws { encoder.storage = try finite(Double(value), codingPath) }
    func encode(_ value: Int) { encoder.storage = integer(value) }
    func encode(_ value: Int8) { encoder.storage = integer(value) }
    func encode(_ value: Int16) { encoder.storage = integer(value) }
    func encode(_ value: Int32) { encoder.storage = integer(value) }
    func encode(_ value: Int64) { encoder.storage = integer(value) }
    func encode(_ value: UInt) { encoder.storage = integer(value) }
    func encode(_ value: UInt8) { encoder.storage = integer(value) }
    func encode(_ value: UInt16) { encoder.storage = integer(value) }
    func encode(_ value: UInt32) { encoder.storage = integer(value) }
    func encode(_ value: UInt64) { encoder.storage = integer(value) }

    func encode<T: Encodable>(_ value: T) throws {
        encoder.storage = try TreeEncoder.node(for: value, at: codingPath)
    }
}

// MARK: - Writing text

/// Writes trees as compact JSON text (see the file's notes for the format).
struct JSONWriter {
    private var out: [UInt8] = []

    init() {}

    /// The text written so far.
    var text: String { String(decoding: out, as: UTF8.self) }

    mutating func write(_ node: EncodedNode) {
        switch node {
        case .value(let v): write(v)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            for key in o.members.keys.sorted() {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                string(key)
                out.append(UInt8(ascii: ":"))
                write(o.members[key]!)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (k, item) in a.items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                write(item)
            }
            out.append(UInt8(ascii: "]"))
        case .deferred(let encoder):
            write(encoder.storage ?? .object(EncodedObject()))
        }
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            // As JSONEncoder: the shortest text that reads back the same,
            // without a trailing `.0`.
            var s = d.isFinite ? d.description : "null"
            if s.hasSuffix(".0") { s.removeLast(2) }
            out.append(contentsOf: s.utf8)
        case .string(let s): string(s)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                write(item)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            for key in members.keys.sorted() {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                string(key)
                out.append(UInt8(ascii: ":"))
                write(members[key]!)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A string, quoted and escaped: `"`, `\` and control characters; other
    /// bytes are copied as they are, one by one (in escape-dense text, W3's
    /// 3 escapes in 7 bytes, runs are too short for a copy call per run).
    private mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { src in
            out.reserveCapacity(out.count + src.count + src.count / 2 + 2)
            out.append(UInt8(ascii: "\""))
            for b in src {
                if b >= 0x20 && b != 0x22 && b != 0x5C {
                    out.append(b)
                    continue
                }
                out.append(UInt8(ascii: "\\"))
                switch b {
                case 0x22, 0x5C: out.append(b)
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(UInt8(ascii: "u"))
                    out.append(UInt8(ascii: "0"))
                    out.append(UInt8(ascii: "0"))
                    out.append(hex.utf8Start[Int(b >> 4)])
                    out.append(hex.utf8Start[Int(b & 0xF)])
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}
