// Shared pieces of the Swift bench programs: the prompt vocabulary, the
// payloads (byte for byte those of bench/rust/src/lib.rs and
// bench/ts/common.mjs), the command line, the client-side checks, the
// workload driver and the result line. A port of bench/kotlin's Common.kt.
import Foundation
import LibACP
#if canImport(Glibc)
import Glibc
#endif

let chunkLen = 100
let readLen = 1024
let sessionCwd = "/tmp"
let resourceURI = "file:///bench/resource.txt"
let writePath = "/bench/write.txt"
private let unit = "\"q\" \\ "
let line64 = String(String(repeating: unit, count: 11).prefix(63)) + "\n"
private let pad89 = String(String(repeating: unit, count: 15).prefix(89))

/// Built by bytes (the text is ASCII): `String.prefix(n)` walks grapheme
/// clusters, which took ~70 ms for W3's 8 MiB inside the timed write (the
/// agent builds its text there) and a walk per W2 read.
private let line64Bytes = Array(line64.utf8)

func textOf(_ n: Int) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(n)
    while bytes.count < n {
        bytes.append(contentsOf: line64Bytes.prefix(n - bytes.count))
    }
    return String(decoding: bytes, as: UTF8.self)
}

func chunkText(_ i: Int) -> String {
    let digits = String(i)
    return String(repeating: "0", count: max(0, 10 - digits.count)) + digits + " " + pad89
}

func chunkIndex(_ text: String) -> Int? {
    let bytes = Array(text.utf8)
    guard bytes.count == chunkLen, bytes[0..<10].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    return Int(String(decoding: bytes[0..<10], as: UTF8.self))
}

func readPath(_ i: Int) -> String { "/bench/read/\(i)" }

func readIndex(_ path: String) -> Int? {
    let prefix = "/bench/read/"
    guard path.hasPrefix(prefix) else { return nil }
    let rest = path.dropFirst(prefix.count)
    guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(rest)
}

/// `stream N`, `read M`, `write B`, `echo`: the command and its number.
func parseCommand(_ text: String) -> (String, Int)? {
    let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)
    guard let first = words.first else { return nil }
    if first == "echo" { return ("echo", 0) }
    guard ["stream", "read", "write"].contains(first), words.count > 1, let n = Int(words[1]) else { return nil }
    return (first, n)
}

private let defaults: [String: [Int]] = [
    "w1": [100000], "w2": [20000], "w3": [8 << 20, 5], "w4": [1000, 10, 64], "smoke": [],
]

struct Invocation {
    let workload: String
    let args: [Int]
    let readFd: Int32
    let writeFd: Int32
}

struct UsageError: Error, CustomStringConvertible {
    var description: String {
        "usage: bench-swift client (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) --fds R W"
    }
}

/// `WORKLOAD [ARGS] --fds R W` (bench/swift/client.py spawned the agent and
/// hands its pipes over: the Swift toolchain's chroot cannot run the other
/// implementations' agents).
func invocation(_ argv: [String]) throws -> Invocation {
    guard let split = argv.firstIndex(of: "--fds"), split >= 1, argv.count == split + 3,
          let wanted = defaults[argv[0]],
          let r = Int32(argv[split + 1]), let w = Int32(argv[split + 2]) else { throw UsageError() }
    let given = try argv[1..<split].map { (s: String) -> Int in
        guard let n = Int(s) else { throw UsageError() }
        return n
    }
    return Invocation(workload: argv[0], args: given + wanted.dropFirst(given.count), readFd: r, writeFd: w)
}

private func usage() -> JSONValue {
    var hwm: Int64 = 0
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) {
        hwm = Int64(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
    var ru = rusage()
    getrusage(RUSAGE_SELF.rawValue, &ru)
    let cpu = Double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + Double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6
    return ["client_rss_kb": .int(hwm), "client_cpu_s": .double(cpu)]
}

func emit(_ impl: String, _ workload: String, _ result: JSONValue) {
    print(JSONValue.object(["impl": .string(impl), "workload": .string(workload), "result": result, "usage": usage()]).jsonText)
}

func fail(_ impl: String, _ workload: String, _ error: Error) {
    print(JSONValue.object([
        "impl": .string(impl), "workload": .string(workload),
        "error": .string(String("\(error)".prefix(2000))), "usage": usage(),
    ]).jsonText)
}

func percentile(_ samples: [Double], _ p: Int) -> Double {
    if samples.isEmpty { return 0 }
    let s = samples.sorted()
    let rank = Int((Double(p) / 100 * Double(s.count)).rounded(.up))
    return s[min(max(rank, 1), s.count) - 1]
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// What the client saw, checked by the driver. Thread-safe.
final class Tracker: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [String: Int] = [:]
    private var readTimes: [Double] = []
    private var nextRead = 0
    private var expectedWrite: String?
    private var writes = 0
    private var errors: [String] = []

    func chunk(_ session: String, _ text: String) {
        lock.withLock {
            let seen = chunks[session] ?? 0
            guard chunkIndex(text) == seen else {
                if errors.count < 10 { errors.append("session \(session): chunk \(seen) was \(text.prefix(40))") }
                return
            }
            chunks[session] = seen + 1
        }
    }

    func read(_ path: String) throws -> String {
        try lock.withLock {
            readTimes.append(now() * 1000)
            let expected = nextRead
            nextRead += 1
            guard readIndex(path) == expected else {
                let e = "read \(expected) was of \(path)"
                errors.append(e)
                throw BenchFailure(e)
            }
            return textOf(readLen)
        }
    }

    func write(_ path: String, _ content: String) throws {
        try lock.withLock {
            guard path == writePath, content == expectedWrite else {
                let e = "write of \(content.utf8.count) bytes to \(path) is not the expected content"
                errors.append(e)
                throw BenchFailure(e)
            }
            writes += 1
        }
    }

    func check() throws {
        let errs = lock.withLock { errors }
        if !errs.isEmpty { throw BenchFailure(errs.prefix(10).joined(separator: "; ")) }
    }

    func takeChunks(_ session: String) -> Int { lock.withLock { chunks.removeValue(forKey: session) ?? 0 } }
    func resetReads() { lock.withLock { readTimes = []; nextRead = 0 } }
    func reads() -> [Double] { lock.withLock { readTimes } }
    func expect(write: String) { lock.withLock { expectedWrite = write } }
    func takeWrites() -> Int { lock.withLock { defer { writes = 0 }; return writes } }
}

/// What a client implementation gives the driver.
protocol BenchPeer: Sendable {
    func newSession() async throws -> String
    /// Sends a prompt (with an embedded text resource if given); its stop reason, in wire spelling.
    func prompt(_ session: String, _ text: String, _ resource: String?) async throws -> String
}

/// Runs the workload (see bench/ts/common.mjs `drive`).
func drive(_ workload: String, _ args: [Int], _ tracker: Tracker, _ peer: BenchPeer) async throws -> JSONValue {
    let session = try await peer.newSession()
    @Sendable func timed(_ text: String, _ resource: String? = nil, _ sid: String) async throws -> Double {
        let start = now()
        let stop = try await peer.prompt(sid, text, resource)
        let took = now() - start
        guard stop == "end_turn" else { throw BenchFailure("\(text.split(separator: " ")[0]): stopReason \(stop)") }
        return took
    }
    @Sendable func takeChunks(_ sid: String, _ n: Int) throws {
        try tracker.check()
        let got = tracker.takeChunks(sid)
        guard got == n else { throw BenchFailure("stream \(n): session \(sid) got \(got) chunks before the response") }
    }
    func stream(_ n: Int) async throws -> Double {
        let s = try await timed("stream \(n)", nil, session)
        try takeChunks(session, n)
        return s
    }
    func reads(_ m: Int) async throws -> (Double, [Double]) {
        tracker.resetReads()
        let took = try await timed("read \(m)", nil, session)
        try tracker.check()
        let t = tracker.reads()
        guard t.count == m else { throw BenchFailure("read \(m): got \(t.count) reads") }
        // Times are in milliseconds; the gaps in microseconds.
        return (took, t.count < 2 ? [] : (1..<t.count).map { (t[$0] - t[$0 - 1]) * 1000 })
    }
    func write(_ n: Int) async throws -> Double {
        tracker.expect(write: textOf(n))
        let took = try await timed("write \(n)", nil, session)
        try tracker.check()
        guard tracker.takeWrites() == 1 else { throw BenchFailure("write: not exactly one write") }
        return took
    }
    func sessions(_ count: Int, _ chunks: Int, _ inflight: Int) async throws -> Double {
        let start = now()
        let next = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(inflight, count) {
                group.addTask {
                    while next.take(below: count) {
                        let sid = try await peer.newSession()
                        _ = try await timed("stream \(chunks)", nil, sid)
                        try takeChunks(sid, chunks)
                    }
                }
            }
            try await group.waitForAll()
        }
        return now() - start
    }

    switch workload {
    case "w1":
        let n = args[0]
        let s = try await stream(n)
        return ["n": .int(Int64(n)), "seconds": .double(s), "per_s": .double(Double(n) / s)]
    case "w2":
        let m = args[0]
        let (s, gaps) = try await reads(m)
        return [
            "m": .int(Int64(m)), "seconds": .double(s), "per_s": .double(Double(m) / s),
            "p50_us": .double(percentile(gaps, 50)), "p99_us": .double(percentile(gaps, 99)),
        ]
    case "w3":
        let (n, reps) = (args[0], args[1])
        var writes: [Double] = []
        for _ in 0..<reps { writes.append(try await write(n)) }
        let text = textOf(n)
        var resources: [Double] = []
        for _ in 0..<reps { resources.append(try await timed("echo", text, session)) }
        return [
            "bytes": .int(Int64(n)), "reps": .int(Int64(reps)),
            "write_s": .double(percentile(writes, 50)), "resource_s": .double(percentile(resources, 50)),
            "write_samples": .array(writes.map { .double($0) }),
            "resource_samples": .array(resources.map { .double($0) }),
        ]
    case "w4":
        let (count, chunks, inflight) = (args[0], args[1], args[2])
        let s = try await sessions(count, chunks, inflight)
        return [
            "sessions": .int(Int64(count)), "chunks": .int(Int64(chunks)),
            "inflight": .int(Int64(inflight)), "seconds": .double(s),
        ]
    default:
        _ = try await stream(50)
        _ = try await reads(20)
        _ = try await write(10000)
        _ = try await timed("echo", textOf(10000), session)
        _ = try await sessions(8, 5, 4)
        return ["ok": true]
    }
}

/// Hands out numbers below a bound, once each (W4's session counter).
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0

    func take(below bound: Int) -> Bool {
        lock.withLock {
            guard next < bound else { return false }
            next += 1
            return true
        }
    }
}
