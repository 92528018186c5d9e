// Shared pieces of the Kotlin bench programs (bench/README.md): the prompt
// vocabulary, the payloads (byte for byte those of bench/rust/src/lib.rs and
// bench/ts/common.mjs), the command line, the client-side checks, the
// workload driver and the result line. A port of bench/ts/common.mjs.
package bench

import java.io.File
import java.lang.management.ManagementFactory
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

const val CHUNK_LEN = 100
const val READ_LEN = 1024
const val SESSION_CWD = "/tmp"
const val RESOURCE_URI = "file:///bench/resource.txt"
const val WRITE_PATH = "/bench/write.txt"
private const val UNIT = "\"q\" \\ "
val LINE64 = UNIT.repeat(11).substring(0, 63) + "\n"
private val PAD89 = UNIT.repeat(15).substring(0, 89)

fun textOf(n: Int): String = LINE64.repeat(n / 64 + 1).substring(0, n)

fun chunkText(i: Int): String = "%010d %s".format(i, PAD89)

fun chunkIndex(text: String): Int? =
    if (text.length == CHUNK_LEN && text.substring(0, 10).all { it.isDigit() }) text.substring(0, 10).toInt() else null

fun readPath(i: Int) = "/bench/read/$i"

fun readIndex(path: String): Int? = Regex("^/bench/read/(\\d+)$").find(path)?.groupValues?.get(1)?.toInt()

/** `stream N`, `read M`, `write B`, `echo`: the command and its number, or null. */
fun parseCommand(text: String): Pair<String, Int>? {
    val words = text.trim().split(Regex("\\s+"))
    if (words[0] == "echo") return "echo" to 0
    val n = words.getOrNull(1)?.toIntOrNull()
    return if (words[0] in setOf("stream", "read", "write") && n != null) words[0] to n else null
}

private val DEFAULTS = mapOf(
    "w1" to listOf(100000), "w2" to listOf(20000), "w3" to listOf(8 shl 20, 5),
    "w4" to listOf(1000, 10, 64), "smoke" to emptyList(),
)

class Invocation(val workload: String, val args: List<Int>, val agent: List<String>)

fun invocation(argv: Array<String>): Invocation {
    val split = argv.indexOf("--")
    require(split >= 1 && split < argv.size - 1 && argv[0] in DEFAULTS) {
        "usage: CLIENT (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) -- AGENT_COMMAND..."
    }
    val mine = argv.sliceArray(0 until split)
    val defaults = DEFAULTS.getValue(mine[0])
    val args = mine.drop(1).map { it.toInt() } + defaults.drop(mine.size - 1)
    return Invocation(mine[0], args, argv.drop(split + 1))
}

private fun usage(): JsonObject {
    val hwm = File("/proc/self/status").readLines().firstOrNull { it.startsWith("VmHWM:") }
        ?.split(Regex("\\s+"))?.get(1)?.toLong() ?: 0
    val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
    return JsonObject(mapOf("client_rss_kb" to JsonPrimitive(hwm), "client_cpu_s" to JsonPrimitive(os.processCpuTime / 1e9)))
}

fun emit(impl: String, workload: String, result: JsonObject) =
    println(JsonObject(mapOf("impl" to JsonPrimitive(impl), "workload" to JsonPrimitive(workload), "result" to result, "usage" to usage())))

fun fail(impl: String, workload: String, error: Throwable) =
    println(
        JsonObject(
            mapOf(
                "impl" to JsonPrimitive(impl), "workload" to JsonPrimitive(workload),
                "error" to JsonPrimitive(error.stackTraceToString().take(2000)), "usage" to usage(),
            ),
        ),
    )

fun percentile(samples: List<Double>, p: Int): Double {
    if (samples.isEmpty()) return 0.0
    val s = samples.sorted()
    val rank = Math.ceil(p / 100.0 * s.size).toInt()
    return s[rank.coerceIn(1, s.size) - 1]
}

/** What the client saw, checked by the driver. Thread-safe. */
class Tracker {
    val chunks = HashMap<String, Int>()
    var readTimes = ArrayList<Double>()
    var nextRead = 0
    var expectedWrite: String? = null
    var writes = 0
    val errors = ArrayList<String>()

    @Synchronized
    fun chunk(session: String, text: String) {
        val seen = chunks[session] ?: 0
        if (chunkIndex(text) != seen) {
            if (errors.size < 10) errors.add("session $session: chunk $seen was ${text.take(40)}")
            return
        }
        chunks[session] = seen + 1
    }

    @Synchronized
    fun read(path: String): String {
        readTimes.add(System.nanoTime() / 1e6)
        val expected = nextRead++
        if (readIndex(path) != expected) {
            val e = "read $expected was of $path"
            errors.add(e)
            throw IllegalStateException(e)
        }
        return textOf(READ_LEN)
    }

    @Synchronized
    fun write(path: String, content: String) {
        if (path != WRITE_PATH || content != expectedWrite) {
            val e = "write of ${content.length} chars to $path is not the expected content"
            errors.add(e)
            throw IllegalStateException(e)
        }
        writes++
    }

    @Synchronized
    fun check() {
        if (errors.isNotEmpty()) throw IllegalStateException(errors.take(10).joinToString("; "))
    }

    @Synchronized
    fun takeChunks(session: String): Int = chunks.remove(session) ?: 0
}

/** What a client implementation gives the driver. */
interface BenchPeer {
    suspend fun newSession(): String

    /** Sends a prompt (with an embedded text resource if given); its stop reason, in wire spelling. */
    suspend fun prompt(session: String, text: String, resource: String?): String
}

private fun now() = System.nanoTime() / 1e9

private fun num(v: Number) = JsonPrimitive(v)

/** Runs the workload (see bench/ts/common.mjs `drive`). */
suspend fun drive(workload: String, args: List<Int>, tracker: Tracker, peer: BenchPeer): JsonObject {
    val session = peer.newSession()
    suspend fun timed(text: String, resource: String? = null, sid: String = session): Double {
        val start = now()
        val stop = peer.prompt(sid, text, resource)
        val took = now() - start
        check(stop == "end_turn") { "${text.split(" ")[0]}: stopReason $stop" }
        return took
    }
    fun takeChunks(sid: String, n: Int) {
        tracker.check()
        val got = tracker.takeChunks(sid)
        check(got == n) { "stream $n: session $sid got $got chunks before the response" }
    }
    suspend fun stream(n: Int): Double = timed("stream $n").also { takeChunks(session, n) }
    suspend fun reads(m: Int): Pair<Double, List<Double>> {
        synchronized(tracker) {
            tracker.readTimes = ArrayList()
            tracker.nextRead = 0
        }
        val took = timed("read $m")
        tracker.check()
        val t = synchronized(tracker) { tracker.readTimes.toList() }
        check(t.size == m) { "read $m: got ${t.size} reads" }
        // readTimes are in milliseconds; the gaps in microseconds.
        return took to (1 until t.size).map { (t[it] - t[it - 1]) * 1000 }
    }
    suspend fun write(n: Int): Double {
        synchronized(tracker) { tracker.expectedWrite = textOf(n) }
        val took = timed("write $n")
        tracker.check()
        synchronized(tracker) {
            check(tracker.writes == 1) { "write: not exactly one write" }
            tracker.writes = 0
        }
        return took
    }
    suspend fun sessions(count: Int, chunks: Int, inflight: Int): Double = coroutineScope {
        val start = now()
        val lock = Mutex()
        var next = 0
        (0 until minOf(inflight, count)).map {
            async {
                while (lock.withLock { if (next < count) { next++; true } else false }) {
                    val sid = peer.newSession()
                    timed("stream $chunks", null, sid)
                    takeChunks(sid, chunks)
                }
            }
        }.awaitAll()
        now() - start
    }

    return when (workload) {
        "w1" -> {
            val n = args[0]
            val s = stream(n)
            JsonObject(mapOf("n" to num(n), "seconds" to num(s), "per_s" to num(n / s)))
        }
        "w2" -> {
            val m = args[0]
            val (s, gaps) = reads(m)
            JsonObject(
                mapOf(
                    "m" to num(m), "seconds" to num(s), "per_s" to num(m / s),
                    "p50_us" to num(percentile(gaps, 50)), "p99_us" to num(percentile(gaps, 99)),
                ),
            )
        }
        "w3" -> {
            val (n, reps) = args
            val writes = (0 until reps).map { write(n) }
            val text = textOf(n)
            val resources = (0 until reps).map { timed("echo", text) }
            JsonObject(
                mapOf(
                    "bytes" to num(n), "reps" to num(reps),
                    "write_s" to num(percentile(writes, 50)), "resource_s" to num(percentile(resources, 50)),
                    "write_samples" to JsonArray(writes.map { num(it) }),
                    "resource_samples" to JsonArray(resources.map { num(it) }),
                ),
            )
        }
        "w4" -> {
            val (count, chunks, inflight) = args
            val s = sessions(count, chunks, inflight)
            JsonObject(mapOf("sessions" to num(count), "chunks" to num(chunks), "inflight" to num(inflight), "seconds" to num(s)))
        }
        else -> {
            stream(50)
            reads(20)
            write(10000)
            timed("echo", textOf(10000))
            sessions(8, 5, 4)
            JsonObject(mapOf("ok" to JsonPrimitive(true)))
        }
    }
}

