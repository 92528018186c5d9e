package dev.libacp.scenarios

import com.sun.jna.LastErrorException
import com.sun.jna.Library
import com.sun.jna.Memory
import com.sun.jna.Native
import com.sun.jna.NativeLong
import com.sun.jna.Pointer
import java.io.ByteArrayOutputStream
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import kotlin.concurrent.thread
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement

/**
 * The few libc calls the raw peer needs on a socket descriptor (JNA: the
 * JVM cannot wrap a descriptor it did not open, and `/proc/self/fd` does not
 * reopen sockets). Each throws [LastErrorException] (with `errno`) on -1.
 */
@Suppress("FunctionName")
private interface LibC : Library {
    @Throws(LastErrorException::class)
    fun read(fd: Int, buf: Pointer, count: NativeLong): NativeLong

    @Throws(LastErrorException::class)
    fun send(fd: Int, buf: Pointer, len: NativeLong, flags: Int): NativeLong

    @Throws(LastErrorException::class)
    fun shutdown(fd: Int, how: Int): Int

    @Throws(LastErrorException::class)
    fun close(fd: Int): Int

    companion object {
        val INSTANCE: LibC by lazy { Native.load("c", LibC::class.java) }

        const val EINTR = 4
        const val SHUT_WR = 1
        const val SHUT_RDWR = 2

        /** `send` flag: a closed peer gives `EPIPE`, not `SIGPIPE`. */
        const val MSG_NOSIGNAL = 0x4000
    }
}

/** Closes descriptor [fd], ignoring errors (for descriptors nobody took over). */
internal fun closeDescriptor(fd: Int) {
    try {
        LibC.INSTANCE.close(fd)
    } catch (e: LastErrorException) {
        // Nothing more to do with it.
    }
}

/** A line the peer read: a JSON frame, a line that is not JSON, or the end of the stream. */
sealed interface Line {
    /** A line holding one JSON value. */
    data class Frame(val value: JsonElement) : Line

    /** A line that is not JSON (or a read error, in parentheses). */
    data class Garbage(val text: String) : Line

    /** The end of the stream: libacp closed its write side. */
    data object Eof : Line
}

/**
 * The scripted raw peer's end of the socket pair, descriptor [fd] (owned
 * from construction on; [close] closes it).
 *
 * A reader thread turns the incoming bytes into [Line]s, queued: a step
 * that times out loses nothing, not even a partial line (bytes are split
 * at newlines before decoding, so a character cut between two reads is
 * whole again). The end of the stream stays queued once read ([nextLine]
 * keeps giving it). [send] writes on a writer thread so that a step can
 * give up on a write that blocks.
 */
internal class RawPeer(private val fd: Int) : AutoCloseable {
    private val libc = LibC.INSTANCE
    private val lines = TimedQueue<Line>()
    private val writer: ExecutorService = Executors.newSingleThreadExecutor { r ->
        Thread(r, "scenario-peer-writer-$fd").apply { isDaemon = true }
    }
    private val reader = thread(name = "scenario-peer-reader-$fd", isDaemon = true) { readLines() }

    /** Whether the peer's write side is still open (no `close` step yet). */
    @Volatile
    var writeOpen = true
        private set

    private fun readLines() {
        val chunk = Memory(CHUNK.toLong())
        val pending = ByteArrayOutputStream()
        while (true) {
            val n = try {
                libc.read(fd, chunk, NativeLong(CHUNK.toLong())).toInt()
            } catch (e: LastErrorException) {
                if (e.errorCode == LibC.EINTR) continue
                lines.put(Line.Garbage("(read error: ${e.message})"))
                0
            }
            if (n <= 0) {
                lines.put(Line.Eof)
                return
            }
            val bytes = chunk.getByteArray(0, n)
            var start = 0
            for (i in 0 until n) {
                if (bytes[i] == NEWLINE) {
                    pending.write(bytes, start, i - start)
                    lines.put(parseLine(pending.toByteArray()))
                    pending.reset()
                    start = i + 1
                }
            }
            pending.write(bytes, start, n - start)
        }
    }

    private fun parseLine(raw: ByteArray): Line {
        val text = raw.toString(Charsets.UTF_8).removeSuffix("\r")
        return try {
            Line.Frame(Json.parseToJsonElement(text))
        } catch (e: SerializationException) {
            Line.Garbage(text)
        }
    }

    /** The next line, `null` if none comes within [ms] milliseconds (the end of the stream stays queued). */
    suspend fun nextLine(ms: Long): Line? {
        val line = lines.get(ms)
        if (line == Line.Eof) lines.put(line)
        return line
    }

    /**
     * Writes [text] (a whole frame and its newline); throws [StepFailure] if
     * the write side is closed, the write fails, or it does not complete
     * within [limitMs].
     */
    suspend fun send(text: String, limitMs: Long) {
        if (!writeOpen) throw StepFailure("the peer already closed its write side")
        val bytes = text.toByteArray(Charsets.UTF_8)
        val written = CompletableFuture.runAsync({ writeAll(bytes) }, writer)
        val done = try {
            withTimeoutOrNull(limitMs) { written.await() ?: true } // a Void future completes with null
        } catch (e: LastErrorException) {
            throw StepFailure("write failed: ${e.message}")
        }
        done ?: throw StepFailure("could not write within the step limit")
    }

    private fun writeAll(bytes: ByteArray) {
        val buf = Memory(bytes.size.toLong().coerceAtLeast(1))
        buf.write(0, bytes, 0, bytes.size)
        var offset = 0L
        while (offset < bytes.size) {
            try {
                offset += libc.send(fd, buf.share(offset), NativeLong(bytes.size - offset), LibC.MSG_NOSIGNAL).toLong()
            } catch (e: LastErrorException) {
                if (e.errorCode != LibC.EINTR) throw e
            }
        }
    }

    /** Closes the peer's write side (libacp reads end of stream). Idempotent. */
    fun closeWrite() {
        if (!writeOpen) return
        writeOpen = false
        try {
            libc.shutdown(fd, LibC.SHUT_WR)
        } catch (e: LastErrorException) {
            // libacp closed the socket first: nothing left to end.
        }
    }

    /** Stops the reader and the writer and closes the descriptor. */
    override fun close() {
        writeOpen = false
        try {
            libc.shutdown(fd, LibC.SHUT_RDWR) // wakes the reader's read()
        } catch (e: LastErrorException) {
            // Already shut down both ways.
        }
        reader.join(JOIN_MS)
        writer.shutdownNow()
        closeDescriptor(fd)
    }

    private companion object {
        const val CHUNK = 65536
        const val NEWLINE = '\n'.code.toByte()
        const val JOIN_MS = 5000L
    }
}
