// The shared scenarios (tests/scenarios/*.json, format in
// tests/scenarios/README.md) run through the Swift binding's dynamic API: a
// port of bindings/node/test/scenario-runner.mjs and
// bindings/python/tests/scenario_runner.py, with the same structure and
// names, so the runners can be compared.
//
// Per scenario: an `AcpConnection` made with `AcpConnection.fromFds` on one
// end of `socketPair()`, in the scenario's role, whose handler is the host
// (the vocabulary's rules and programs, `Host`); `RawPeer` is the scripted
// raw peer on the other end. Over a remote link (WebSocket, Streamable
// HTTP/1.1, h2c), as in the Python runner, the other end of the socket pair
// is the stdin and stdout of `libacp-remote-splice` (tests/bin/remote_splice.rs),
// which joins it to a remote connection: the libacp side is then served by
// `AcpServer` (agent; made when the peer connects, or over HTTP when its
// `initialize` arrives) or made by `AcpConnection.connect` (client). The same rules as the other runners: unknown
// keys are errors, every waiting step is bounded by 5 s and the whole
// scenario by 60 s (hang detectors), mismatches are reported with the step,
// the JSON pointer where value and pattern part, and the whole frame or event.
//
// The binding's errors are the typed errors of the README's table (see
// `errorJSON`): `AcpError.Rpc` is `Rpc` (`code`, `message`, `data`),
// `.Refused` `Refused.<kind>` with its `method`, `capability`, `sessionId`
// and `version` (parsed), and `.Closed`, `.Cancelled`, `.Timeout`,
// `.InvalidParams`, `.InvalidResult` their names.
//
// Where the Swift API differs from the engine's (documented behaviour of
// the binding, not bugs), as in Python:
//
// * A superseded request (libacp answered it already: a client's
//   `cancelSession` answered the permission request, `$/cancel_request`, the
//   connection closed) has its handler's task cancelled, and so has a
//   request the peer cancelled. The vocabulary's programs carry on after
//   that (`wait_for_cancel` then `emit`; a pending `call` that fails
//   `Closed` then `emit`), so each program runs in a task of its own, which
//   the handler awaits; the handler's cancellation is the program's
//   `wait_for_cancel` signal. A program's answer after libacp answered is
//   refused by libacp and dropped: "a refused answer is ignored".
// * A handler cannot end "without answering" (returning answers a result).
//   A program that ends without answering throws `AcpError.Rpc(-32603)`,
//   which is what the engine's dropped responder answers.
// * At the end, the programs still waiting (a gate, a cancellation) give
//   way and stop before their next operation; `shutdown()` then fails their
//   pending calls `Closed`.
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LibACP

extension Scenarios {
    /// How long one waiting step may take, in seconds (a hang detector).
    static let stepLimit: TimeInterval = 5
    /// How long a whole scenario may take, in seconds (a hang detector).
    static let scenarioLimit: TimeInterval = 60

    /// Runs one scenario: `nil` when it passed, else why it failed (the
    /// step, its text and what went wrong).
    /// `link`: `nil` (a Unix socket pair) or a remote link, `"websocket"`,
    /// `"http"` or `"h2c"`, through the `splice` binary (`libacp-remote-splice`).
    static func run(_ scenario: Scenario, link: String? = nil, splice: String = "") async -> String? {
        await Run(scenario, link: link, splice: splice).run()
    }

    // -----------------------------------------------------------------------
    // Typed errors: the binding's errors as the README's table writes them.

    /// A failed call's error as the README's typed-error object: `kind`,
    /// `message` and the kind's own members.
    static func errorJSON(_ error: Error) -> JSONValue {
        guard let e = error as? AcpError else {
            return ["kind": .string("Other: \(type(of: error))"), "message": .string("\(error)")]
        }
        switch e {
        case let .Rpc(code, detail, data):
            var v: [String: JSONValue] = ["kind": "Rpc", "code": .int(code), "message": .string(detail)]
            if let data {
                // Data that does not parse cannot come from libacp; keep it as text.
                v["data"] = (try? JSONValue.parse(data)) ?? .string(data)
            }
            return .object(v)
        case let .Refused(kind, method, capability, sessionId, version, detail):
            var v: [String: JSONValue] = ["kind": .string("Refused.\(kind)"), "message": .string(detail)]
            if let method { v["method"] = .string(method) }
            if let capability { v["capability"] = .string(capability) }
            if let sessionId { v["sessionId"] = .string(sessionId) }
            if let version { v["version"] = (try? JSONValue.parse(version)) ?? .string(version) }
            return .object(v)
        case let .InvalidParams(detail): return ["kind": "InvalidParams", "message": .string(detail)]
        case let .InvalidResult(detail): return ["kind": "InvalidResult", "message": .string(detail)]
        case let .Closed(detail): return ["kind": "Closed", "message": .string(detail)]
        // A remote transport's failure closed the connection: a close, in
        // the scenarios' vocabulary (as Python's and Node's RemoteError is a
        // ConnectionClosed).
        case let .Remote(_, _, detail): return ["kind": "Closed", "message": .string(detail)]
        case let .Cancelled(detail): return ["kind": "Cancelled", "message": .string(detail)]
        case let .Timeout(detail): return ["kind": "Timeout", "message": .string(detail)]
        default:
            // Spawn, InvalidArgument, Internal: not in the table.
            let name = String(describing: e).prefix { $0.isLetter }
            return ["kind": .string("Other: \(name)"), "message": .string(String(reflecting: e))]
        }
    }

    /// Runs a call (or notify, ...) and writes its outcome: `{"result": R}`
    /// or `{"error": E}` (a typed error). Never throws.
    static func outcome(_ work: () async throws -> JSONValue) async -> [String: JSONValue] {
        do {
            return ["result": try await work()]
        } catch {
            return ["error": errorJSON(error)]
        }
    }

    // -----------------------------------------------------------------------
    // The host.

    /// The libacp side's handler: picks the first matching rule and runs its
    /// program; records every notification as a host event.
    final class Host: AcpHandler, @unchecked Sendable {
        /// Weak: the connection (which holds this handler) belongs to the run.
        private weak var run: Run?

        init(_ run: Run) {
            self.run = run
        }

        func onRequest(_ call: IncomingCall) async throws -> JSONValue {
            guard let run, let rule = run.pickRule(call) else {
                throw AcpError.methodNotFound(call.method)
            }
            // Opened when this handler's task is cancelled: the peer cancelled
            // the request, or libacp answered it already.
            let cancelled = Latch()
            let program = run.startProgram(rule, method: call.method, cancelled: cancelled)
            let answer = await withTaskCancellationHandler {
                await program.value
            } onCancel: {
                cancelled.open()
            }
            return try answer.get()
        }

        func onNotification(method: String, params: JSONValue?) async {
            run?.emit(["event": "notification", "method": .string(method), "params": params ?? .null])
        }
    }

    // -----------------------------------------------------------------------
    // One scenario's run.

    /// One scenario's run: the connection, the peer, the host's shared state
    /// (captures, gates, events, problems) and the script.
    final class Run: @unchecked Sendable {
        let scenario: Scenario
        /// `nil`, `"websocket"`, `"http"` or `"h2c"`.
        let link: String?
        /// The path of `libacp-remote-splice` (remote links).
        let splice: String
        /// Opened once the connection is made (a served one, on demand).
        let made = Latch()
        /// The host events, in the order they were recorded.
        let events = AsyncQueue<JSONValue>()
        /// Opened at the end: the programs still waiting give way.
        let stop = Latch()

        private let lock = NSLock()
        private var captures: Captures = [:]
        private var gates: [String: Latch] = [:]
        /// Host errors (a program's failed `call`, a bad template), reported
        /// with the step during which they happened.
        private var problems: [String] = []
        /// Background work (programs, background actions), awaited at the end.
        private var tasks: [Task<Void, Never>] = []
        private var conn: AcpConnection?
        private var peer: RawPeer?
        /// Over a remote link: the server (agent role) and the splice process.
        private var server: AcpServer?
        private var process: Process?

        init(_ scenario: Scenario, link: String?, splice: String) {
            self.scenario = scenario
            self.link = link
            self.splice = splice
        }

        /// The connection is made: actions may use it.
        func connected(_ connection: AcpConnection) {
            lock.withLock { conn = connection }
            made.open()
        }

        // -- shared state (any thread)

        /// The captures so far.
        var known: Captures { lock.withLock { captures } }

        /// Keeps captures (a later one replaces an earlier one of the same name).
        func keep(_ bound: Captures) {
            lock.withLock { captures.merge(bound) { _, new in new } }
        }

        /// Records a host event.
        func emit(_ event: JSONValue) {
            events.put(event)
        }

        /// Records a host error.
        func problem(_ what: String) {
            lock.withLock { problems.append(what) }
        }

        /// Takes the host errors recorded so far.
        private func takeProblems() -> [String] {
            lock.withLock {
                defer { problems = [] }
                return problems
            }
        }

        /// Gate `name` (created closed).
        func gate(_ name: String) -> Latch {
            lock.withLock {
                if let g = gates[name] { return g }
                let g = Latch()
                gates[name] = g
                return g
            }
        }

        /// Runs `work` in the background; the end of the run waits for it.
        func spawn(_ work: @escaping @Sendable () async -> Void) {
            let task = Task { await work() }
            lock.withLock { tasks.append(task) }
        }

        /// The connection (set before the first step).
        var connection: AcpConnection {
            get throws {
                guard let c = lock.withLock({ conn }) else { throw StepFailure("no connection") }
                return c
            }
        }

        // -- the host's programs

        /// The first rule for `call`'s method whose params pattern matches
        /// (absent params match as `null`); its captures are kept.
        func pickRule(_ call: IncomingCall) -> Rule? {
            let params = ((try? call.params) ?? nil) ?? .null
            let known = self.known
            for rule in scenario.rules where rule.method == call.method {
                var bound: Captures = [:]
                if let pattern = rule.params {
                    guard (try? match(pattern, params, known: known, bound: &bound)) != nil else { continue }
                }
                keep(bound)
                return rule
            }
            return nil
        }

        /// Starts `rule`'s program in a task of its own (not cancelled with
        /// the handler's); its value is the handler's answer.
        func startProgram(_ rule: Rule, method: String, cancelled: Latch) -> Task<Result<JSONValue, AcpError>, Never> {
            let program = Task { await self.program(rule, method: method, cancelled: cancelled) }
            spawn { _ = await program.value }
            return program
        }

        /// Runs a program's operations in order: the answer (`respond`,
        /// `error`), or `-32603` when it ends without one.
        private func program(_ rule: Rule, method: String, cancelled: Latch) async -> Result<JSONValue, AcpError> {
            let what = "the host's `\(method)` handler"
            for op in rule.program {
                if stop.isOpen { break }
                do {
                    if let answer = try await operation(op, cancelled: cancelled, what: what) {
                        return answer
                    }
                } catch {
                    problem("\(what): \(error)")
                    break
                }
            }
            // Ends without answering: what the engine's dropped responder answers.
            return .failure(.Rpc(code: -32603, detail: "Internal error",
                                 data: JSONValue.string("the host's program ended without answering").jsonText))
        }

        /// One operation: the answer when it answers, `nil` to go on.
        /// Throws `StepFailure` for a bad template.
        private func operation(
            _ op: [String: JSONValue], cancelled: Latch, what: String
        ) async throws -> Result<JSONValue, AcpError>? {
            if let template = op["respond"] {
                return .success(try fill(template, known))
            }
            if let template = op["error"] {
                let e = try fill(template, known)
                return .failure(.rpc(code: e["code"]?.intValue ?? -32603, message: e["message"]?.stringValue ?? "",
                                     data: e["data"]))
            }
            if op["notify"] != nil || op["call"] != nil {
                if let escaped = try await send(op, what: what) {
                    return .failure(escaped)
                }
            } else if op["wait_for_cancel"] != nil {
                await Latch.firstOpen([cancelled, stop])
            } else if let name = op["wait"]?.stringValue {
                await Latch.firstOpen([gate(name), stop])
            } else if let template = op["emit"] {
                emit(["event": "emit", "value": try fill(template, known)])
            }
            return nil
        }

        /// A program's `call` or `notify`: its outcome is captured (`as`),
        /// or a failure is a host error. With `escape`, a failed call's
        /// error is returned, for the handler to throw as it is.
        private func send(_ op: [String: JSONValue], what: String) async throws -> AcpError? {
            let verb = op["call"] != nil ? "call" : "notify"
            let method = op[verb]!.stringValue!
            let params = try op["params"].map { try fill($0, known) }
            let conn = try connection
            var escaped: Error?
            let result = await outcome {
                do {
                    if verb == "call" { return try await conn.call(method, params: params) }
                    try await conn.notify(method, params: params)
                    return .null
                } catch {
                    if op["escape"] != nil { escaped = error }
                    throw error
                }
            }
            if let name = op["as"]?.stringValue {
                keep([name: .object(result)])
            }
            if let escaped {
                return escaped as? AcpError ?? .Internal(detail: String(describing: escaped))
            }
            if op["as"] == nil, let error = result["error"] {
                problem("\(what): \(verb) \(method) failed: \(short(error))")
            }
            return nil
        }

        // -- the peer's wire

        private var wire: RawPeer {
            get throws {
                guard let p = lock.withLock({ peer }) else { throw StepFailure("no peer") }
                return p
            }
        }

        /// The next frame (within the step limit); throws `StepFailure` on
        /// a timeout, end of stream or a line that is not JSON.
        private func nextFrame() async throws -> JSONValue {
            switch try await wire.nextLine(timeout: stepLimit) {
            case nil: throw StepFailure("no frame within \(seconds(stepLimit))")
            case .endOfStream?: throw StepFailure("got end of stream instead of a frame")
            case .garbage(let text)?: throw StepFailure("got a line that is not JSON: \(quoted(text))")
            case .frame(let v)?: return v
            }
        }

        /// The next host event (within the step limit).
        private func nextEvent() async throws -> JSONValue {
            guard let event = await events.get(timeout: stepLimit) else {
                throw StepFailure("no host event within \(seconds(stepLimit))")
            }
            return event
        }

        // -- the script

        /// Runs one step; throws `StepFailure` when it fails.
        private func step(_ s: Step) async throws {
            let arg = s.argument
            switch s.verb {
            case "send": try await sendFrame(arg)
            case "expect": try matchOne("frame", pattern: arg, value: try await nextFrame())
            case "expect_unordered": try await expectUnordered(arg.arrayValue!)
            case "expect_event": try matchOne("event", pattern: arg, value: try await nextEvent())
            case "expect_events_unordered": try await expectEventsUnordered(arg.arrayValue!)
            case "expect_no_frame": try await expectNoFrame(milliseconds: arg.intValue!)
            case "expect_no_event": try await expectNoEvent(milliseconds: arg.intValue!)
            case "close": try wire.closeWrite()
            case "expect_closed": try await expectClosed()
            default: try await action(s.object)
            }
        }

        /// `send`: a string as it is, anything else as compact JSON (a template).
        private func sendFrame(_ arg: JSONValue) async throws {
            let line: String
            if case .string(let text) = arg {
                line = text
            } else {
                line = try fill(arg, known).jsonText
            }
            try await wire.writeLine(line, timeout: stepLimit)
        }

        /// Matches one frame or event, keeping its captures.
        private func matchOne(_ what: String, pattern: JSONValue, value: JSONValue) throws {
            var bound: Captures = [:]
            do {
                try match(pattern, value, known: known, bound: &bound)
            } catch let m as Mismatch {
                throw StepFailure(m.describe(what, pattern: pattern, actual: value))
            }
            keep(bound)
        }

        private func expectUnordered(_ patterns: [JSONValue]) async throws {
            var frames: [JSONValue] = []
            for _ in patterns {
                do {
                    frames.append(try await nextFrame())
                } catch {
                    throw StepFailure("after \(frames.count) of \(patterns.count) frames: \(error)")
                }
            }
            try unordered("frame", patterns, frames)
        }

        private func expectEventsUnordered(_ patterns: [JSONValue]) async throws {
            var got: [JSONValue] = []
            for _ in patterns {
                do {
                    got.append(try await nextEvent())
                } catch {
                    throw StepFailure("after \(got.count) of \(patterns.count) events: \(error)")
                }
            }
            try unordered("event", patterns, got)
        }

        /// Pairs `patterns` with `got` in any order, keeping the captures;
        /// else reports every value and, for each pattern, which values it
        /// matches (and, when none, why not).
        private func unordered(_ what: String, _ patterns: [JSONValue], _ got: [JSONValue]) throws {
            let known = self.known
            var bound: Captures = [:]
            var used = [Bool](repeating: false, count: got.count)
            if pairUp(patterns[...], got, &used, known: known, bound: &bound) {
                keep(bound)
                return
            }
            var report = ["the \(what)s do not match the patterns in any order"]
            for (i, v) in got.enumerated() {
                report.append("  got \(what) \(i): \(short(v))")
            }
            for (i, p) in patterns.enumerated() {
                var fits: [Int] = []
                var why: [String] = []
                for (j, v) in got.enumerated() {
                    var scratch: Captures = [:]
                    do {
                        try match(p, v, known: known, bound: &scratch)
                        fits.append(j)
                    } catch let m as Mismatch {
                        why.append("    vs \(what) \(j): at \(m.at): expected \(m.expected), got \(m.got)")
                    } catch {}
                }
                report.append("  pattern \(i): \(short(p)) matches \(what)s \(fits)")
                if fits.isEmpty { report += why }
            }
            throw StepFailure(report.joined(separator: "\n"))
        }

        private func expectNoFrame(milliseconds ms: Int64) async throws {
            switch try await wire.nextLine(timeout: Double(ms) / 1000) {
            case nil: return
            case .endOfStream?: throw StepFailure("got end of stream: libacp closed the connection")
            case .garbage(let text)?: throw StepFailure("got an unexpected line that is not JSON: \(quoted(text))")
            case .frame(let v)?: throw StepFailure("got an unexpected frame: \(short(v))")
            }
        }

        private func expectNoEvent(milliseconds ms: Int64) async throws {
            let event: JSONValue?
            if events.isEmpty && ms > 0 {
                event = await events.get(timeout: Double(ms) / 1000)
            } else {
                event = events.takeNow()
            }
            if let event {
                throw StepFailure("got an unexpected host event: \(short(event))")
            }
        }

        private func expectClosed() async throws {
            switch try await wire.nextLine(timeout: stepLimit) {
            case nil: throw StepFailure("the connection was still open after \(seconds(stepLimit))")
            case .endOfStream?: return
            case .garbage(let text)?: throw StepFailure("expected end of stream, got a line: \(quoted(text))")
            case .frame(let v)?: throw StepFailure("expected end of stream, got a frame: \(short(v))")
            }
        }

        /// A host action. With `as` it runs in the background and its
        /// outcome becomes a `returned` event; without, the step waits for
        /// it (the step limit) and fails unless it succeeds.
        private func action(_ step: [String: JSONValue]) async throws {
            // A served remote connection is made on demand.
            if await within(stepLimit, { await self.made.wait() }) == nil {
                throw StepFailure("the connection was never made")
            }
            let work = try actionWork(step)
            if let name = step["as"]?.stringValue {
                spawn {
                    let result = await outcome(work)
                    self.emit(.object(result.merging(["event": "returned", "as": .string(name)]) { _, new in new }))
                }
                return
            }
            guard let result = await within(stepLimit, { await outcome(work) }) else {
                throw StepFailure("did not complete within \(seconds(stepLimit))")
            }
            if let error = result["error"] {
                throw StepFailure("failed: \(short(error))")
            }
        }

        /// What an action does, as work to start (templates are filled now;
        /// `release` opens its gate now).
        private func actionWork(_ step: [String: JSONValue]) throws -> @Sendable () async throws -> JSONValue {
            let conn = try connection
            switch step["action"]!.stringValue! {
            case "call", "notify":
                let method = step["method"]!.stringValue!
                let params = try step["params"].map { try fill($0, known) }
                if step["action"]?.stringValue == "call" {
                    return { try await conn.call(method, params: params) }
                }
                return {
                    try await conn.notify(method, params: params)
                    return .null
                }
            case "cancel_session":
                guard case .string(let sessionId) = try fill(step["sessionId"]!, known) else {
                    throw StepFailure("`sessionId` must be a string")
                }
                return {
                    try await conn.cancelSession(sessionId)
                    return .null
                }
            case "release":
                gate(step["gate"]!.stringValue!).open()
                return { .null }
            default: // close
                return {
                    await conn.shutdown()
                    return .null
                }
            }
        }

        // -- the whole run

        /// Runs the scenario: `nil` when it passed, else why it failed.
        func run() async -> String? {
            let fds: [Int32]
            do {
                fds = try socketPair()
            } catch {
                return "socketPair failed: \(error)"
            }
            let (libEnd, peerEnd) = (fds[0], fds[1])
            // Given only when the scenario asks for them (`require_auth` is an
            // agent option); an unknown feature name is the binding's error.
            let options = ConnectOptions(requireAuth: scenario.requireAuth ? true : nil, unstable: scenario.unstable)
            if let link {
                let made = await within(stepLimit) { () -> Result<Void, Error> in
                    do {
                        return .success(try await self.connectRemote(libEnd, link: link, options: options))
                    } catch {
                        return .failure(error)
                    }
                }
                _ = closeFd(libEnd) // the splice process has its copy
                switch made {
                case nil:
                    _ = closeFd(peerEnd)
                    await teardown()
                    return "no remote connection within \(seconds(stepLimit))"
                case .failure(let error)?:
                    _ = closeFd(peerEnd)
                    await teardown()
                    return "the binding cannot make this connection: \(error)"
                case .success?:
                    break
                }
            } else {
                do {
                    connected(try AcpConnection.fromFds(
                        role: scenario.role, readFd: libEnd, writeFd: libEnd, handler: Host(self), options: options
                    ))
                } catch {
                    _ = closeFd(libEnd)
                    _ = closeFd(peerEnd)
                    return "the binding cannot make this connection: \(error)"
                }
            }
            lock.withLock { peer = RawPeer(fd: peerEnd) }
            let failure = await within(scenarioLimit) { await self.script() }
            await teardown()
            guard let failure else { return "the scenario took over \(seconds(scenarioLimit))" }
            return failure
        }

        /// The libacp side over a remote link: the raw peer's socket (`libEnd`)
        /// is the stdin and stdout of `libacp-remote-splice`, which joins it
        /// to a remote connection. An agent is served by `AcpServer` (made
        /// when the peer's connection arrives); a client connects to the
        /// splice's server.
        private func connectRemote(_ libEnd: Int32, link: String, options: ConnectOptions) async throws {
            let http2 = link == "h2c"
            let kind = link == "websocket" ? "websocket" : "http"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: splice)
            process.standardInput = FileHandle(fileDescriptor: libEnd, closeOnDealloc: false)
            process.standardOutput = FileHandle(fileDescriptor: libEnd, closeOnDealloc: false)
            if scenario.role == .agent {
                let server = try await AcpServer.serve(listen: "127.0.0.1:0", options: options) { connection in
                    self.connected(connection)
                    return Host(self)
                }
                lock.withLock { self.server = server }
                process.arguments = ["--connect", try server.url(kind: kind)] + (http2 ? ["--http2"] : [])
                try process.run()
                lock.withLock { self.process = process }
                return
            }
            let errors = Pipe()
            process.arguments = ["--listen", "127.0.0.1:0"]
            process.standardError = errors
            try process.run()
            lock.withLock { self.process = process }
            let line = await Self.firstLine(errors.fileHandleForReading)
            guard line.hasPrefix("listening on "), let address = line.split(separator: " ").last else {
                throw StepFailure("libacp-remote-splice did not listen: \(quoted(line))")
            }
            var remote = options
            remote.http2PriorKnowledge = http2 ? true : nil
            let scheme = kind == "websocket" ? "ws" : "http"
            connected(try await AcpConnection.connect(url: "\(scheme)://\(address)/acp", handler: Host(self), options: remote))
        }

        /// The first line read from `handle` (without its newline; what was
        /// read if it ended first), then the rest drained until it ends, on
        /// a thread of its own (so that the writer never blocks).
        private static func firstLine(_ handle: FileHandle) async -> String {
            await withCheckedContinuation { (c: CheckedContinuation<String, Never>) in
                let thread = Thread {
                    var line: [UInt8] = []
                    var answered = false
                    var byte: UInt8 = 0
                    while true {
                        let n = read(handle.fileDescriptor, &byte, 1)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { break }
                        if answered { continue }
                        if byte == UInt8(ascii: "\n") {
                            answered = true
                            c.resume(returning: String(decoding: line, as: UTF8.self))
                        } else {
                            line.append(byte)
                        }
                    }
                    if !answered { c.resume(returning: String(decoding: line, as: UTF8.self)) }
                    try? handle.close()
                }
                thread.name = "splice stderr"
                thread.start()
            }
        }

        /// The steps in order: `nil` when all passed, else the first failure
        /// (with the host errors recorded during its step).
        private func script() async -> String? {
            for (i, s) in scenario.script.enumerated() {
                var details: [String] = []
                do {
                    try await step(s)
                } catch {
                    details.append("\(error)")
                }
                details += takeProblems()
                if !details.isEmpty {
                    let text = details.joined(separator: "\n").replacingOccurrences(of: "\n", with: "\n    ")
                    return "step \(i + 1) \(s.text)\n    \(text)"
                }
            }
            let left = takeProblems()
            if !left.isEmpty {
                return "after the last step\n    " + left.joined(separator: "\n    ")
            }
            return nil
        }

        /// Stops the programs still waiting, closes the connection, waits
        /// for the background work and closes the peer (each bounded).
        private func teardown() async {
            stop.open()
            if let c = lock.withLock({ conn }) {
                _ = await within(stepLimit) { await c.shutdown() }
            }
            let pending = lock.withLock { tasks }
            _ = await within(stepLimit) {
                for task in pending { await task.value }
            }
            if let p = lock.withLock({ peer }) {
                await p.close(timeout: stepLimit)
            }
            lock.withLock { conn = nil }
            // The splice ends once its stdin is closed (the peer) or its remote
            // connection is gone (the server).
            lock.withLock { server }?.close()
            if let process = lock.withLock({ process }) {
                let exited = await within(stepLimit, cancelOnTimeout: false) { () -> Bool in
                    await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                        DispatchQueue.global().async {
                            process.waitUntilExit()
                            c.resume(returning: true)
                        }
                    }
                }
                if exited == nil {
                    kill(process.processIdentifier, SIGKILL)
                }
            }
            lock.withLock { server = nil; process = nil }
        }
    }

    /// `1 s`, `0.5 s`.
    static func seconds(_ s: TimeInterval) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }
}

/// `close(2)`.
private func closeFd(_ fd: Int32) -> Int32 {
    close(fd)
}
