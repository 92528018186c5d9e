import Foundation

/// A coding key for any member name: what the generated models (Models.swift)
/// decode with, so that members the schema does not name are kept in `extra`.
struct AnyKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) {
        stringValue = name
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }

    /// The members of `c` not in `known`, as JSON.
    static func extra(_ c: KeyedDecodingContainer<AnyKey>, known: Set<String>) throws -> [String: JSONValue] {
        var extra: [String: JSONValue] = [:]
        for key in c.allKeys where !known.contains(key.stringValue) {
            extra[key.stringValue] = try c.decode(JSONValue.self, forKey: key)
        }
        return extra
    }

    /// Writes `extra` (members named by the schema are skipped: the typed
    /// fields win).
    static func encodeExtra(_ extra: [String: JSONValue], into c: inout KeyedEncodingContainer<AnyKey>, known: Set<String>) throws {
        for (key, value) in extra where !known.contains(key) {
            try c.encode(value, forKey: AnyKey(key))
        }
    }
}
