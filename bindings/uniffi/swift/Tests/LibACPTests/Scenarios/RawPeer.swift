// The scripted peer's end of the wire: one end of a socket pair, read by a
// thread of its own that turns bytes into lines (a queue, so that a step's
// timeout never loses a partial line), written with plain `send`.
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LibACP

extension Scenarios {
    /// A line the peer read: a JSON frame, a line that is not JSON (or a
    /// read error), or the end of the stream.
    enum Line {
        case frame(JSONValue)
        case garbage(String)
        case endOfStream
    }

    /// The peer's socket. Owns `fd` until `close()`.
    final class RawPeer: @unchecked Sendable {
        /// What the peer read, in order; `.endOfStream` is the last item.
        let lines = AsyncQueue<Line>()
        private let fd: Int32
        private let readerDone = Latch()
        private let lock = NSLock()
        private var writeOpen = true
        private var closed = false

        /// Takes `fd` (a stream socket) and starts reading it.
        init(fd: Int32) {
            self.fd = fd
            #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let thread = Thread { [self] in readLoop() }
            thread.name = "scenario peer reader"
            thread.start()
        }

        /// Reads until end of stream (or an error), splitting lines at `\n`
        /// (a trailing `\r` is dropped) and queueing them.
        private func readLoop() {
            defer { readerDone.open() }
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 {
                    lines.put(.garbage("(read error: \(String(cString: strerror(errno))))"))
                }
                if n <= 0 {
                    lines.put(.endOfStream)
                    return
                }
                buffer.append(contentsOf: chunk[0..<n])
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    var raw = buffer[..<newline]
                    if raw.last == UInt8(ascii: "\r") { raw = raw.dropLast() }
                    let text = String(decoding: raw, as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    if let v = try? JSONValue.parse(text) {
                        lines.put(.frame(v))
                    } else {
                        lines.put(.garbage(text))
                    }
                }
            }
        }

        /// The next line, or `nil` if none comes within `timeout` seconds.
        /// The end of the stream stays in the queue (every later read sees it).
        func nextLine(timeout: TimeInterval) async -> Line? {
            let line = await lines.get(timeout: timeout)
            if case .endOfStream? = line { lines.put(.endOfStream) }
            return line
        }

        /// Writes `text` plus `\n`, all of it, within `timeout` seconds;
        /// throws `StepFailure` otherwise. Runs on a Dispatch thread (a
        /// blocking write must not hold a thread of the cooperative pool).
        func writeLine(_ text: String, timeout: TimeInterval) async throws {
            guard lock.withLock({ writeOpen }) else { throw StepFailure("the peer already closed its write side") }
            let bytes = Array((text + "\n").utf8)
            let fd = self.fd
            let result: String?? = await Scenarios.within(timeout, cancelOnTimeout: false) {
                await withCheckedContinuation { (c: CheckedContinuation<String?, Never>) in
                    DispatchQueue.global().async { c.resume(returning: RawPeer.sendAll(fd, bytes)) }
                }
            }
            switch result {
            case nil: throw StepFailure("could not write within \(timeout) s")
            case let error??: throw StepFailure("write failed: \(error)")
            case .some(nil): return
            }
        }

        /// Writes all of `bytes` to `fd` (no SIGPIPE): `nil`, or why not.
        private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += n
            }
            return nil
        }

        /// Closes the write side: libacp reads end of stream. Idempotent.
        func closeWrite() {
            let first: Bool = lock.withLock {
                defer { writeOpen = false }
                return writeOpen
            }
            if first { _ = shutdown(fd, Int32(SHUT_WR)) }
        }

        /// Stops the reader (at most `timeout` seconds) and closes the
        /// socket. Idempotent.
        func close(timeout: TimeInterval) async {
            let first: Bool = lock.withLock {
                defer { closed = true; writeOpen = false }
                return !closed
            }
            guard first else { return }
            // Both directions: the reader's `read` returns 0 and the thread ends.
            _ = shutdown(fd, Int32(SHUT_RDWR))
            _ = await Scenarios.within(timeout) { [readerDone] in await readerDone.wait() }
            closeDescriptor(fd)
        }
    }
}

#if canImport(Glibc)
/// `send` flags: no SIGPIPE when libacp has closed its end.
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let noSignal: Int32 = 0
#endif

/// `close(2)` (the name is taken inside `RawPeer`).
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
