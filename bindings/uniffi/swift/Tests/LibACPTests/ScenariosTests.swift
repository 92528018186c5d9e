// The shared, language-neutral scenarios (tests/scenarios/*.json, format in
// tests/scenarios/README.md) run through the Swift binding's dynamic API;
// the runner is Scenarios/ScenarioRunner.swift.
//
// XCTest cannot make one test method per file at run time, so
// `testScenarios` runs every file (sorted) and prints one line per scenario:
// `PASS name`, `XFAIL name (reason)` (a `known_failure` that fails),
// `FAIL name: details` or `XPASS name` (a `known_failure` that passes:
// remove the marker); each FAIL and XPASS is an `XCTFail`. `LIBACP_SCENARIO`
// (or `SCENARIO`; scripts/swift/run.sh passes on only `LIBACP_*` variables)
// runs only the scenarios whose name contains its text.
//
// `testScenariosOverWebSocket`, `...OverStreamableHTTP` and `...OverH2C` run
// them again over a remote link, as the Python runner does: the raw peer's
// bytes cross libacp's remote transport through `libacp-remote-splice`
// (`cargo build -p libacp-tests --bins`), the libacp side served by
// `AcpServer` (agent) or made by `AcpConnection.connect` (client). The
// scenarios of `notRemote` are skipped there, with the reason.
//
// The other tests check the runner itself: a runner that passes everything
// is worthless.
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LibACP

final class ScenariosTests: XCTestCase {
    /// tests/scenarios, found from this file's path (Tests/LibACPTests/ in
    /// the package bindings/uniffi/swift).
    static let scenarioDirectory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<6 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("tests").appendingPathComponent("scenarios")
    }()

    /// The names of the scenario files (without `.json`), sorted, filtered
    /// by `LIBACP_SCENARIO` / `SCENARIO`.
    static func scenarioNames() throws -> [String] {
        let files = try FileManager.default.contentsOfDirectory(atPath: scenarioDirectory.path)
        let names = files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
        let env = ProcessInfo.processInfo.environment
        guard let filter = env["LIBACP_SCENARIO"] ?? env["SCENARIO"], !filter.isEmpty else { return names }
        return names.filter { $0.contains(filter) }
    }

    override class func setUp() {
        super.setUp()
        // A write to a socket whose reader is gone must fail, not kill the process.
        signal(SIGPIPE, SIG_IGN)
    }

    func testScenarios() async throws {
        try await runAll(link: nil)
    }

    func testScenariosOverWebSocket() async throws {
        try await runAll(link: "websocket")
    }

    func testScenariosOverStreamableHTTP() async throws {
        try await runAll(link: "http")
    }

    func testScenariosOverH2C() async throws {
        try await runAll(link: "h2c")
    }

    /// Scenarios that cannot mean the same over a remote link, and why (as
    /// in the Rust and Python runners); every other one must pass over
    /// every link.
    static let notRemote = [
        "peer_closes_mid_turn": "a remote transport has no half-close: the agent ending its "
            + "output ends the connection, so no answer can follow",
    ]

    /// Runs every scenario (over `link`, if not `nil`), one line each.
    private func runAll(link: String?) async throws {
        let names = try Self.scenarioNames()
        XCTAssertFalse(names.isEmpty, "no scenarios in \(Self.scenarioDirectory.path) (or none matches the filter)")
        let over = link.map { " over \($0)" } ?? ""
        var counts: [String: Int] = [:]
        for name in names {
            if link != nil, let why = Self.notRemote[name] {
                counts["SKIP", default: 0] += 1
                print("SKIP \(name)\(over) (\(why))")
                continue
            }
            let (verdict, details) = await Self.runFile(name, link: link)
            counts[verdict, default: 0] += 1
            switch verdict {
            case "PASS", "XPASS":
                print("\(verdict) \(name)\(over)")
            default:
                print("\(verdict) \(name)\(over)\(verdict == "FAIL" ? ": " : " (")\(details)\(verdict == "FAIL" ? "" : ")")")
            }
            if verdict == "FAIL" {
                XCTFail("scenario \(name)\(over): \(details)")
            } else if verdict == "XPASS" {
                XCTFail("scenario \(name)\(over) is marked known_failure (\(details)) but passed (XPASS): remove the marker")
            }
        }
        let summary = ["PASS", "XFAIL", "FAIL", "XPASS", "SKIP"].map { "\(counts[$0, default: 0]) \($0)" }
        print("scenarios\(over): " + summary.joined(separator: ", "))
    }

    /// Runs one scenario file: its verdict (`PASS`, `XFAIL`, `FAIL`,
    /// `XPASS`) and the details (why it failed; for XFAIL and XPASS the
    /// known failure's reason).
    static func runFile(_ name: String, link: String? = nil) async -> (String, String) {
        let scenario: Scenarios.Scenario
        do {
            let url = scenarioDirectory.appendingPathComponent(name + ".json")
            scenario = try Scenarios.parseScenario(String(contentsOf: url, encoding: .utf8))
        } catch {
            return ("FAIL", "the file breaks the format: \(error)")
        }
        let failure = await Scenarios.run(scenario, link: link, splice: testBinary("libacp-remote-splice"))
        return verdict(knownFailure: scenario.knownFailure, failure: failure)
    }

    /// The verdict of a run: `failure` is why it failed (`nil`: it passed),
    /// `knownFailure` the file's `known_failure`.
    static func verdict(knownFailure: String?, failure: String?) -> (String, String) {
        switch (knownFailure, failure) {
        case (nil, nil): return ("PASS", "")
        case (nil, let why?): return ("FAIL", why)
        case (let reason?, let why?): return ("XFAIL", "\(reason)\n  \(why.replacingOccurrences(of: "\n", with: "\n  "))")
        case (let reason?, nil): return ("XPASS", reason)
        }
    }

    // -- the runner's own checks

    func testVerdicts() {
        XCTAssertEqual(Self.verdict(knownFailure: nil, failure: nil).0, "PASS")
        XCTAssertEqual(Self.verdict(knownFailure: nil, failure: "step 1").0, "FAIL")
        XCTAssertEqual(Self.verdict(knownFailure: "bug", failure: "step 1").0, "XFAIL")
        XCTAssertEqual(Self.verdict(knownFailure: "bug", failure: nil).0, "XPASS")
    }

    private func matches(_ pattern: JSONValue, _ value: JSONValue, known: Scenarios.Captures = [:]) -> Scenarios.Captures? {
        var bound: Scenarios.Captures = [:]
        return (try? Scenarios.match(pattern, value, known: known, bound: &bound)) != nil ? bound : nil
    }

    func testPatterns() throws {
        XCTAssertNotNil(matches(["a": 1], ["a": 1.0, "b": "extra"]), "subset match, numbers by value")
        XCTAssertNil(matches(["a": 1], ["a": true]), "booleans are not numbers")
        XCTAssertNil(matches(["a": "$absent"], ["a": .null]), "a null member is present")
        XCTAssertNotNil(matches(["a": "$absent"], ["b": 1]))
        XCTAssertNil(matches(["a": "$any"], [:]), "$any needs a present member")
        XCTAssertNil(matches([1, 2], [1, 2, 3]), "arrays match item by item")
        XCTAssertNotNil(matches("$$any", "$any"))
        XCTAssertNil(matches("$$any", 1))
        XCTAssertNotNil(matches("$/cancel_request", "$/cancel_request"), "other $ strings are literals")
        XCTAssertEqual(matches(["id": "$capture:x"], ["id": 7]), ["x": 7])
        XCTAssertNotNil(matches(["id": "$ref:x"], ["id": 7.0], known: ["x": 7]))
        XCTAssertNil(matches(["id": "$ref:y"], ["id": 7], known: ["x": 7]), "a $ref to nothing is a mismatch")
        XCTAssertNotNil(matches(["r": ["$one_of": ["a", "b"]]], ["r": "b"]))
        XCTAssertNil(matches(["r": ["$one_of": ["a", "b"]]], ["r": "c"]))

        var bound: Scenarios.Captures = [:]
        XCTAssertThrowsError(try Scenarios.match(["a": ["b/c": 1]], ["a": ["b/c": 2]], known: [:], bound: &bound)) {
            XCTAssertEqual(($0 as? Scenarios.Mismatch)?.path, "/a/b~1c")
        }

        XCTAssertEqual(try Scenarios.fill(["id": "$ref:x", "s": "$$ref:x"], ["x": 3]), ["id": 3, "s": "$ref:x"])
        XCTAssertThrowsError(try Scenarios.fill(["a": "$any"], [:]))
        XCTAssertThrowsError(try Scenarios.fill("$ref:nothing", [:]))

        var used = [false, false]
        bound = [:]
        XCTAssertTrue(Scenarios.pairUp([["k": "$capture:v"], ["k": 1]], [["k": 1], ["k": 2]], &used, known: [:], bound: &bound))
        XCTAssertEqual(bound, ["v": 2], "the pairing that matches all is found")
    }

    func testFormatErrors() {
        let bad = [
            #"{"description": "d", "role": "agent", "script": [], "typo": 1}"#,
            #"{"description": "d", "role": "editor", "script": []}"#,
            #"{"description": "d", "role": "agent", "script": [{"expect": {}, "send": {}}]}"#,
            #"{"description": "d", "role": "agent", "script": [{"action": "call", "method": "m", "param": {}}]}"#,
            #"{"description": "d", "role": "agent", "host": {"requests": [{"method": "m", "do": [{"respond": 1, "as": "x"}]}]}, "script": []}"#,
            #"{"description": "d", "role": "client", "options": {"require_auth": true}, "script": []}"#,
            #"{"description": "d", "role": "client", "options": {"unstable": "all"}, "script": []}"#,
        ]
        for text in bad {
            XCTAssertThrowsError(try Scenarios.parseScenario(text), text) {
                XCTAssertTrue($0 is Scenarios.FormatError, "\($0)")
            }
        }
        XCTAssertNoThrow(try Scenarios.parseScenario(
            #"{"description": "d", "role": "agent", "script": [{"note": "n", "expect_no_frame": 1}]}"#))
    }

    /// A scenario that must fail: the runner reports the step and the pointer.
    func testMismatchIsReported() async throws {
        let scenario = try Scenarios.parseScenario("""
            {"description": "initialize answered with a version the pattern does not expect", "role": "agent",
             "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1, "agentCapabilities": {}}}]}]},
             "script": [
               {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
               {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
             ]}
            """)
        let failure = await Scenarios.run(scenario)
        let text = try XCTUnwrap(failure, "a wrong expectation passed")
        XCTAssertTrue(text.hasPrefix("step 2 "), text)
        XCTAssertTrue(text.contains("at /result/protocolVersion: expected 2, got 1"), text)
    }

    /// A scenario that waits for a frame that never comes fails within the step limit.
    func testMissingFrameFails() async throws {
        let scenario = try Scenarios.parseScenario("""
            {"description": "nothing is sent, so nothing comes back", "role": "agent",
             "script": [{"expect": {"id": 1}}]}
            """)
        let failure = await Scenarios.run(scenario)
        XCTAssertTrue(failure?.contains("no frame within") ?? false, failure ?? "passed")
    }
}
