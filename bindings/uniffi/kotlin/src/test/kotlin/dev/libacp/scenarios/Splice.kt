package dev.libacp.scenarios

import com.sun.jna.LastErrorException
import com.sun.jna.Library
import com.sun.jna.Memory
import com.sun.jna.Native
import com.sun.jna.Pointer
import com.sun.jna.StringArray
import com.sun.jna.ptr.IntByReference
import java.io.File
import java.io.FileInputStream
import java.util.concurrent.CompletableFuture
import kotlin.concurrent.thread
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withTimeoutOrNull

/**
 * The libc calls that start `libacp-remote-splice` with a socket as its
 * stdin and stdout (JNA): the JVM's `ProcessBuilder` cannot give a child a
 * descriptor it did not open (it closes every other descriptor in the
 * child), so the runner spawns it with `posix_spawnp` and reaps it with
 * `waitpid`.
 */
@Suppress("FunctionName")
private interface Spawn : Library {
    fun posix_spawn_file_actions_init(actions: Pointer): Int

    fun posix_spawn_file_actions_adddup2(actions: Pointer, fd: Int, newfd: Int): Int

    fun posix_spawn_file_actions_destroy(actions: Pointer): Int

    /** Returns 0, or the error number (it does not set `errno`). */
    fun posix_spawnp(pid: IntByReference, file: String, actions: Pointer, attrp: Pointer?, argv: StringArray, envp: StringArray): Int

    @Throws(LastErrorException::class)
    fun waitpid(pid: Int, status: IntByReference, options: Int): Int

    @Throws(LastErrorException::class)
    fun kill(pid: Int, signal: Int): Int

    @Throws(LastErrorException::class)
    fun pipe2(fds: IntArray, flags: Int): Int

    companion object {
        val INSTANCE: Spawn by lazy { Native.load("c", Spawn::class.java) }

        const val EINTR = 4
        const val O_CLOEXEC = 0x80000
        const val SIGKILL = 9

        /** Large enough for glibc's `posix_spawn_file_actions_t` (80 bytes on x86_64). */
        const val FILE_ACTIONS_SIZE = 256L
    }
}

/**
 * A running `libacp-remote-splice` (tests/bin/remote_splice.rs) whose stdin
 * and stdout are [socket] (the descriptor stays the caller's: close it once
 * this is made, the child has its copy). With [captureStderr] its stderr is
 * a pipe read by [stderrLine] (the first line, `listening on HOST:PORT`
 * with `--listen`) and then copied to this process's stderr; otherwise it
 * is this process's.
 */
internal class Splice(binary: File, args: List<String>, socket: Int, captureStderr: Boolean) {
    private val libc = Spawn.INSTANCE
    private val pid: Int
    private val exited = CompletableFuture<Int>()

    /** The first line it writes on stderr (with `captureStderr`); `null` at end of stream. */
    val stderrLine = CompletableFuture<String?>()

    init {
        val pipe = IntArray(2)
        if (captureStderr) libc.pipe2(pipe, Spawn.O_CLOEXEC)
        val actions = Memory(Spawn.FILE_ACTIONS_SIZE)
        check(libc.posix_spawn_file_actions_init(actions) == 0) { "posix_spawn_file_actions_init failed" }
        try {
            // dup2 clears close-on-exec on the copies: the child keeps 0, 1 (and 2).
            check(libc.posix_spawn_file_actions_adddup2(actions, socket, 0) == 0)
            check(libc.posix_spawn_file_actions_adddup2(actions, socket, 1) == 0)
            if (captureStderr) check(libc.posix_spawn_file_actions_adddup2(actions, pipe[1], 2) == 0)
            val argv = StringArray((listOf(binary.path) + args).toTypedArray())
            val envp = StringArray(System.getenv().map { (k, v) -> "$k=$v" }.toTypedArray())
            val child = IntByReference()
            val error = libc.posix_spawnp(child, binary.path, actions, null, argv, envp)
            check(error == 0) { "cannot start $binary: error $error" }
            pid = child.value
        } finally {
            libc.posix_spawn_file_actions_destroy(actions)
            if (captureStderr) closeDescriptor(pipe[1])
        }
        thread(name = "splice-reaper-$pid", isDaemon = true) { exited.complete(reap()) }
        if (captureStderr) {
            // A pipe (unlike a socket) reopens through /proc.
            val stream = FileInputStream("/proc/self/fd/${pipe[0]}")
            closeDescriptor(pipe[0])
            thread(name = "splice-stderr-$pid", isDaemon = true) {
                stream.bufferedReader().use { reader ->
                    stderrLine.complete(reader.readLine())
                    reader.lineSequence().forEach { System.err.println("libacp-remote-splice: $it") }
                }
            }
        }
    }

    /** Waits for the child's exit; its raw wait status. */
    private fun reap(): Int {
        val status = IntByReference()
        while (true) {
            try {
                libc.waitpid(pid, status, 0)
                return status.value
            } catch (e: LastErrorException) {
                if (e.errorCode != Spawn.EINTR) return -1
            }
        }
    }

    /** Waits up to [ms] milliseconds for it to exit, then kills it (SIGKILL) and reaps it. */
    suspend fun waitOrKill(ms: Long) {
        if (withTimeoutOrNull(ms) { exited.await() } != null) return
        try {
            libc.kill(pid, Spawn.SIGKILL)
        } catch (e: LastErrorException) {
            // It exited just now.
        }
        exited.await()
    }
}
