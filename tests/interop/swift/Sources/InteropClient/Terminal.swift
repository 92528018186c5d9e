import Foundation
import InteropSupport
import LibACP
#if canImport(Glibc)
import Glibc
#endif

/// `kill(2)` (a free function: `Terminal.kill()` hides the C one inside the class).
private func sendSignal(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// A command run for the agent (`terminal/create`): its stdout and stderr
/// merged into one output, kept to the last `limit` bytes, and how it ended.
/// The output is drained before the exit status is set, so a
/// `terminal/output` after `terminal/wait_for_exit` has all of it.
final class Terminal: @unchecked Sendable {
    private let process: Process?
    private let limit: Int?
    private let captured = Locked<(output: Data, truncated: Bool)>((Data(), false))
    /// How the command ended, once it has.
    let exit = Promise<TerminalExitStatus>()

    /// Starts `command` with `args` in `cwd`, stdin on /dev/null, `env` added
    /// to this process's environment. A command that cannot be started
    /// ends at once with exit code 127 and the reason as its output.
    init(command: String, args: [String], cwd: String, env: [EnvVariable], limit: Int?) {
        self.limit = limit
        let process = Process()
        let pipe = Pipe()
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: cwd)
        process.environment = ProcessInfo.processInfo.environment.merging(
            env.map { ($0.name, $0.value) }, uniquingKeysWith: { _, new in new })
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            guard let executable = Terminal.resolve(command) else {
                throw CheckFailure("\(command): command not found")
            }
            process.executableURL = URL(fileURLWithPath: executable)
            try process.run()
        } catch {
            self.process = nil
            captured.withLock { $0.output = Data("\(error)".utf8) }
            exit.fulfil(TerminalExitStatus(exitCode: 127))
            return
        }
        self.process = process
        // This end's copy of the write side, so that the reader sees EOF
        // when the command (and whatever inherited its output) is done.
        try? pipe.fileHandleForWriting.close()
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reader.availableData  // blocks; empty at EOF
                if chunk.isEmpty { break }
                append(chunk)
            }
            process.waitUntilExit()
            exit.fulfil(Terminal.status(of: process))
        }
    }

    private func append(_ chunk: Data) {
        captured.withLock { captured in
            captured.output.append(chunk)
            guard let limit, captured.output.count > limit else { return }
            var kept = captured.output.suffix(limit)
            // Cut at a character boundary: drop UTF-8 continuation bytes.
            while let first = kept.first, first & 0xC0 == 0x80 { kept = kept.dropFirst() }
            captured.output = Data(kept)
            captured.truncated = true
        }
    }

    /// The output so far, and whether its beginning was dropped.
    var output: (text: String, truncated: Bool) {
        captured.withLock { (String(decoding: $0.output, as: UTF8.self), $0.truncated) }
    }

    /// Kills the command (SIGKILL) unless it has ended.
    func kill() {
        guard let process, exit.valueIfSet == nil, process.isRunning else { return }
        sendSignal(process.processIdentifier, SIGKILL)
    }

    /// `command` as a path: as given when it has a slash, else found in `PATH`.
    private static func resolve(_ command: String) -> String? {
        if command.contains("/") { return command }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":")
            .map { "\($0)/\(command)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static let signalNames: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
        SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
    ]

    /// An ended process's status as ACP says it: an exit code, or a signal name.
    private static func status(of process: Process) -> TerminalExitStatus {
        let code = process.terminationStatus
        if process.terminationReason == .uncaughtSignal {
            return TerminalExitStatus(signal: signalNames[code] ?? "SIG\(code)")
        }
        return TerminalExitStatus(exitCode: Int64(code))
    }
}
