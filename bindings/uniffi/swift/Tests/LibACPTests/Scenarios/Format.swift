// The scenario file format (tests/scenarios/README.md), checked before
// anything runs: unknown keys are errors (they are typos), except `note`.
import Foundation
import LibACP

extension Scenarios {
    /// The scenario file breaks the format.
    struct FormatError: Error, CustomStringConvertible {
        let message: String
        init(_ message: String) { self.message = message }
        var description: String { message }
    }

    /// One rule of `host.requests`: the first rule whose `method` equals the
    /// request's and whose `params` pattern matches runs its `program`.
    struct Rule {
        let method: String
        /// The params pattern; `nil` when the rule takes any params.
        let params: JSONValue?
        /// The operations (`do`), checked.
        let program: [[String: JSONValue]]
    }

    /// One script step: its verb and its whole object.
    struct Step {
        /// The step as compact JSON, for reports.
        let text: String
        let verb: String
        let object: [String: JSONValue]

        /// The verb's argument.
        var argument: JSONValue { object[verb]! }
    }

    /// A parsed, checked scenario file.
    struct Scenario {
        let role: AcpRole
        var requireAuth = false
        /// `options.unstable`: the unstable features to turn on (`nil`: none).
        var unstable: [String]?
        var rules: [Rule] = []
        var script: [Step] = []
        /// Why the scenario is expected to fail (`known_failure`), if it is.
        var knownFailure: String?
    }

    static let operations = ["respond", "error", "notify", "call", "wait_for_cancel", "wait", "emit"]
    static let steps = [
        "send", "expect", "expect_unordered", "expect_event", "expect_events_unordered",
        "expect_no_frame", "expect_no_event", "close", "expect_closed", "action",
    ]
    /// Each action's own keys (besides `action`, `as` and `note`).
    static let actions: [String: [String]] = [
        "call": ["method", "params"],
        "notify": ["method", "params"],
        "cancel_session": ["sessionId"],
        "release": ["gate"],
        "close": [],
    ]

    /// Parses and checks a scenario file's text; throws `FormatError`.
    static func parseScenario(_ text: String) throws -> Scenario {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw FormatError("not valid JSON: \(error)")
        }
        let top = try object(value, "the scenario")
        try onlyKeys(top, ["description", "role", "options", "host", "script", "known_failure"], "the scenario")
        _ = try string(top, "description", "the scenario")
        let roleName = try string(top, "role", "the scenario")
        let role: AcpRole
        switch roleName {
        case "agent": role = .agent
        case "client": role = .client
        default: throw FormatError("`role` must be \"agent\" or \"client\", not \(quoted(roleName))")
        }
        var sc = Scenario(role: role)
        if let options = top["options"] {
            let o = try object(options, "`options`")
            try onlyKeys(o, ["require_auth", "unstable"], "`options`")
            if let auth = o["require_auth"] {
                guard case .bool(let b) = auth else { throw FormatError("`options.require_auth` must be a boolean") }
                if b && role != .agent { throw FormatError("`options.require_auth` is an agent option") }
                sc.requireAuth = b
            }
            if let unstable = o["unstable"] {
                guard case .array(let items) = unstable else {
                    throw FormatError("`options.unstable` must be an array of strings")
                }
                sc.unstable = try items.map {
                    guard case .string(let name) = $0 else {
                        throw FormatError("`options.unstable` must be an array of strings")
                    }
                    return name
                }
            }
        }
        if let host = top["host"] {
            sc.rules = try parseHost(host)
        }
        guard case .array(let steps)? = top["script"] else { throw FormatError("`script` must be an array of steps") }
        sc.script = try steps.enumerated().map { try checkStep($1, "script[\($0)]") }
        if top["known_failure"] != nil {
            sc.knownFailure = try string(top, "known_failure", "the scenario")
        }
        return sc
    }

    private static func parseHost(_ value: JSONValue) throws -> [Rule] {
        let host = try object(value, "`host`")
        try onlyKeys(host, ["requests"], "`host`")
        guard case .array(let requests)? = host["requests"] else { throw FormatError("`host.requests` must be an array") }
        return try requests.enumerated().map { i, value in
            let what = "host.requests[\(i)]"
            let rule = try object(value, what)
            try onlyKeys(rule, ["method", "params", "do", "note"], what)
            guard case .array(let ops)? = rule["do"] else { throw FormatError("\(what): `do` must be an array of operations") }
            let program = try ops.enumerated().map { try checkOperation($1, "\(what).do[\($0)]") }
            return Rule(method: try string(rule, "method", what), params: rule["params"], program: program)
        }
    }

    private static func checkOperation(_ value: JSONValue, _ what: String) throws -> [String: JSONValue] {
        let op = try object(value, what)
        let name = try verb(op, operations, what)
        if name == "notify" || name == "call" {
            try onlyKeys(op, [name, "note", "params", "as"] + (name == "call" ? ["escape"] : []), what)
            _ = try string(op, name, what)
            if op["as"] != nil { _ = try string(op, "as", what) }
            if let escape = op["escape"] { try isTrue(escape, what) }
            return op
        }
        try onlyKeys(op, [name, "note"], what)
        switch name {
        case "error":
            let e = try object(op["error"]!, what)
            try onlyKeys(e, ["code", "message", "data"], what)
            guard case .int? = e["code"] else { throw FormatError("\(what): `error.code` must be an integer") }
            _ = try string(e, "message", what)
        case "wait_for_cancel":
            try isTrue(op[name]!, what)
        case "wait":
            _ = try string(op, "wait", what)
        default:
            break
        }
        return op
    }

    private static func checkStep(_ value: JSONValue, _ what: String) throws -> Step {
        let step = try object(value, what)
        let name = try verb(step, steps, what)
        if name != "action" { try onlyKeys(step, [name, "note"], what) }
        let arg = step[name]!
        switch name {
        case "expect_unordered", "expect_events_unordered":
            guard case .array(let items) = arg, !items.isEmpty else {
                throw FormatError("\(what): `\(name)` takes a non-empty array")
            }
        case "expect_no_frame", "expect_no_event":
            guard case .int(let ms) = arg, ms >= 0 else {
                throw FormatError("\(what): a quiet period in milliseconds, not \(short(arg))")
            }
        case "close", "expect_closed":
            try isTrue(arg, what)
        case "action":
            let action = try string(step, "action", what)
            if step["as"] != nil { _ = try string(step, "as", what) }
            guard let keys = actions[action] else {
                throw FormatError("\(what): unknown action \(quoted(action)) (call, notify, cancel_session, release, close)")
            }
            try onlyKeys(step, ["action", "as", "note"] + keys, what)
            for key in keys where key != "params" {
                _ = try string(step, key, what)
            }
        default:
            break
        }
        return Step(text: short(value), verb: name, object: step)
    }

    // -- helpers

    private static func object(_ v: JSONValue, _ what: String) throws -> [String: JSONValue] {
        guard case .object(let o) = v else { throw FormatError("\(what) must be a JSON object, not \(short(v))") }
        return o
    }

    private static func onlyKeys(_ obj: [String: JSONValue], _ allowed: [String], _ what: String) throws {
        for k in obj.keys.sorted() where !allowed.contains(k) {
            throw FormatError("\(what): unknown key `\(k)` (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    private static func string(_ obj: [String: JSONValue], _ key: String, _ what: String) throws -> String {
        guard let v = obj[key] else { throw FormatError("\(what): `\(key)` is required") }
        guard case .string(let s) = v else { throw FormatError("\(what): `\(key)` must be a string, not \(short(v))") }
        return s
    }

    /// The one key of `obj` that is a verb of `verbs`.
    private static func verb(_ obj: [String: JSONValue], _ verbs: [String], _ what: String) throws -> String {
        let found = obj.keys.filter(verbs.contains)
        guard let first = found.first else {
            throw FormatError("\(what): no verb (one of: \(verbs.joined(separator: ", "))) in \(short(.object(obj)))")
        }
        guard found.count == 1 else { throw FormatError("\(what): more than one verb in one object") }
        return first
    }

    private static func isTrue(_ v: JSONValue, _ what: String) throws {
        guard v == .bool(true) else { throw FormatError("\(what): the value must be `true`") }
    }
}
