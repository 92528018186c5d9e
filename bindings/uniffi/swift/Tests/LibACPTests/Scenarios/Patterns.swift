// Patterns and templates of the shared scenarios (tests/scenarios/README.md,
// "Patterns"): matching a JSON value against a pattern, with captures, and
// filling a template with what was captured.
import Foundation
import LibACP

/// The namespace of the scenario runner (keeps its names out of the test
/// target's, which other test files share).
enum Scenarios {}

extension Scenarios {
    /// Captured values by name.
    typealias Captures = [String: JSONValue]

    /// A step or a host program failed; the message says how.
    struct StepFailure: Error, CustomStringConvertible {
        let message: String
        init(_ message: String) { self.message = message }
        var description: String { message }
    }

    /// Where a value parts from a pattern: `path` is a JSON pointer (empty
    /// for the top level), `expected` and `got` short descriptions.
    struct Mismatch: Error {
        let path: String
        let expected: String
        let got: String

        /// The top-level `at ...` text.
        var at: String { path.isEmpty ? "(top level)" : path }

        /// The report of a failed `expect`/`expect_event`: where, what, and
        /// the whole pattern and value. `what` is `frame` or `event`.
        func describe(_ what: String, pattern: JSONValue, actual: JSONValue) -> String {
            """
            \(what) does not match, at \(at): expected \(expected), got \(got)
              expected \(what): \(short(pattern))
              got \(what):      \(short(actual))
            """
        }
    }

    /// Compact JSON (keys sorted), cut at 2000 characters.
    static func short(_ v: JSONValue) -> String {
        let s = v.jsonText
        return s.count <= 2000 ? s : String(s.prefix(2000)) + "..."
    }

    /// A JSON string literal of `text` (for reporting raw lines).
    static func quoted(_ text: String) -> String {
        JSONValue.string(text).jsonText
    }

    /// `key` as a JSON pointer token (`~` and `/` escaped).
    static func pointerToken(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    /// JSON equality: numbers by value (`1` equals `1.0`), booleans never
    /// equal numbers, arrays item by item, objects member by member.
    static func jsonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x == y
        case let (.int(x), .double(y)), let (.double(y), .int(x)): return Double(x) == y && Int64(exactly: y) == x
        case let (.double(x), .double(y)): return x == y
        case let (.array(x), .array(y)):
            return x.count == y.count && zip(x, y).allSatisfy { jsonEqual($0, $1) }
        case let (.object(x), .object(y)):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { jsonEqual(v, $0) } ?? false }
        case let (.string(x), .string(y)): return x == y
        case let (.bool(x), .bool(y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    /// Matches `actual` against `pattern`; throws `Mismatch` where they
    /// part. `known` holds the captures so far; new ones go to `bound`,
    /// which the caller keeps only when the whole pattern matched (a `$ref`
    /// sees `bound` first, then `known`).
    static func match(_ pattern: JSONValue, _ actual: JSONValue, known: Captures, bound: inout Captures) throws {
        try matchAt(pattern, actual, "", known, &bound)
    }

    private static func matchAt(
        _ p: JSONValue, _ a: JSONValue, _ path: String, _ known: Captures, _ bound: inout Captures
    ) throws {
        if case .string(let s) = p, try matchPlaceholder(s, a, path, known, &bound) {
            return
        }
        switch p {
        case .object(let members) where members.count == 1 && members["$one_of"] != nil:
            try matchOneOf(members["$one_of"]!, a, path, known, &bound)
        case .object(let members):
            guard case .object(let got) = a else { throw Mismatch(path: path, expected: "an object", got: short(a)) }
            // Sorted, so that the first mismatch reported is always the same.
            for key in members.keys.sorted() {
                let sub = members[key]!
                let here = path + "/" + pointerToken(key)
                if sub == .string("$absent") {
                    if let v = got[key] { throw Mismatch(path: here, expected: "no such member", got: short(v)) }
                    continue
                }
                guard let v = got[key] else { throw Mismatch(path: here, expected: short(sub), got: "no such member") }
                try matchAt(sub, v, here, known, &bound)
            }
        case .array(let items):
            guard case .array(let got) = a else { throw Mismatch(path: path, expected: "an array", got: short(a)) }
            guard items.count == got.count else {
                throw Mismatch(path: path, expected: "an array of \(items.count) items", got: "\(got.count) items: \(short(a))")
            }
            for (i, (sub, v)) in zip(items, got).enumerated() {
                try matchAt(sub, v, "\(path)/\(i)", known, &bound)
            }
        default:
            if !jsonEqual(p, a) { throw Mismatch(path: path, expected: short(p), got: short(a)) }
        }
    }

    /// A pattern string's own meaning (`$$...`, `$any`, `$absent`,
    /// `$capture:`, `$ref:`): true when `p` was one and matched, false for
    /// a literal string; throws `Mismatch` when it was one and did not match.
    private static func matchPlaceholder(
        _ p: String, _ a: JSONValue, _ path: String, _ known: Captures, _ bound: inout Captures
    ) throws -> Bool {
        if p.hasPrefix("$$") {
            let literal = String(p.dropFirst())
            if a == .string(literal) { return true }
            throw Mismatch(path: path, expected: short(.string(literal)), got: short(a))
        }
        if p == "$any" { return true }
        if p == "$absent" {
            throw Mismatch(path: path, expected: "\"$absent\" (only valid as the value of an object member)", got: short(a))
        }
        if p.hasPrefix("$capture:") {
            bound[String(p.dropFirst("$capture:".count))] = a
            return true
        }
        if p.hasPrefix("$ref:") {
            let name = String(p.dropFirst("$ref:".count))
            guard let v = bound[name] ?? known[name] else {
                throw Mismatch(path: path, expected: "\(p) (but nothing was captured under `\(name)`)", got: short(a))
            }
            if jsonEqual(v, a) { return true }
            throw Mismatch(path: path, expected: "\(short(v)) (\(p))", got: short(a))
        }
        return false
    }

    /// `{"$one_of": [...]}`: the first alternative that matches is used
    /// (its captures kept).
    private static func matchOneOf(
        _ alternatives: JSONValue, _ a: JSONValue, _ path: String, _ known: Captures, _ bound: inout Captures
    ) throws {
        guard case .array(let alts) = alternatives else {
            throw Mismatch(path: path, expected: "`$one_of` with an array", got: "a pattern error")
        }
        var why: [String] = []
        for alt in alts {
            var trial = bound
            do {
                try matchAt(alt, a, path, known, &trial)
            } catch let m as Mismatch {
                why.append(m.expected)
                continue
            }
            bound = trial
            return
        }
        throw Mismatch(path: path, expected: "one of [\(why.joined(separator: ", "))]", got: short(a))
    }

    /// A template as a value: `"$ref:NAME"` becomes the captured value,
    /// `"$$x"` the string `"$x"`; the other placeholders (`$any`, `$absent`,
    /// `$capture:`, `$one_of`) throw `StepFailure`, as does a `$ref` to
    /// nothing captured.
    static func fill(_ template: JSONValue, _ known: Captures) throws -> JSONValue {
        switch template {
        case .string(let s):
            if s.hasPrefix("$$") { return .string(String(s.dropFirst())) }
            if s.hasPrefix("$ref:") {
                let name = String(s.dropFirst("$ref:".count))
                guard let v = known[name] else { throw StepFailure("\(s): nothing was captured under `\(name)`") }
                return v
            }
            if s == "$any" || s == "$absent" || s.hasPrefix("$capture:") {
                throw StepFailure("\(s) is a pattern, not a value")
            }
            return template
        case .array(let items):
            return .array(try items.map { try fill($0, known) })
        case .object(let members):
            if members["$one_of"] != nil { throw StepFailure("`$one_of` is a pattern, not a value") }
            return .object(try members.mapValues { try fill($0, known) })
        default:
            return template
        }
    }

    /// Pairs each pattern with a distinct value, in any order (backtracking:
    /// the lists are short). Captures of earlier pairs are visible to later
    /// ones; on success `bound` holds all of them.
    static func pairUp(
        _ patterns: ArraySlice<JSONValue>, _ values: [JSONValue], _ used: inout [Bool],
        known: Captures, bound: inout Captures
    ) -> Bool {
        guard let first = patterns.first else { return true }
        let rest = patterns.dropFirst()
        let visible = known.merging(bound) { _, new in new }
        for (j, value) in values.enumerated() where !used[j] {
            var trial = bound
            guard (try? match(first, value, known: visible, bound: &trial)) != nil else { continue }
            used[j] = true
            if pairUp(rest, values, &used, known: known, bound: &trial) {
                bound = trial
                return true
            }
            used[j] = false
        }
        return false
    }
}
