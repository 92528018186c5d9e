package dev.libacp

import java.io.File
import java.io.InputStream
import java.util.concurrent.TimeUnit
import kotlin.concurrent.thread
import kotlin.test.Test
import kotlin.test.assertTrue
import kotlin.test.fail
import org.junit.jupiter.api.BeforeAll

/**
 * Interop between libacp's Kotlin binding and the official ACP SDKs, both
 * directions, over real pipes (tests/interop/README.md has the check
 * sequence and the SDK pins; scripts/setup-interop.sh installs the
 * TypeScript and Python SDKs). The Kotlin counterpart of
 * bindings/node/test/interop.test.mjs:
 *
 * * the libacp Kotlin client `interop/InteropClient.kt` runs the check
 *   sequence against the official agents (TypeScript, Python, Rust and
 *   Kotlin SDKs) and against the libacp Kotlin agent;
 * * the official clients (TypeScript, Python, Rust and Kotlin SDKs; and the
 *   Rust libacp client) drive the libacp Kotlin agent
 *   `interop/InteropAgent.kt`.
 *
 * Each run is one process printing `OK` or `FAIL: <reason>`, bounded by its
 * own 30 s deadline and by the [LIMIT] hang detector here. The official
 * Kotlin SDK's peers (tests/interop/kotlin, a Maven project) are built here
 * first. A missing official SDK fails the test, saying how to install it.
 *
 *   cd bindings/uniffi/kotlin && mvn -B -q test -Dtest=InteropTest
 */
class InteropTest {
    companion object {
        private val interop = File(repo, "tests/interop")
        private val sdkPython = File(repo, ".venv-interop/bin/python")
        private val tsSdk = File(interop, "ts/node_modules/@agentclientprotocol/sdk/package.json")
        private val officialKotlin = File(interop, "kotlin")
        private const val SETUP = "run scripts/setup-interop.sh"

        private val java = File(System.getProperty("java.home"), "bin/java").path

        /** This JVM's classpath: the binding, its test classes and the native library. */
        private val testClasspath: String = System.getProperty("java.class.path")
        private val libacpAgent = listOf(java, "-cp", testClasspath, "dev.libacp.interop.InteropAgentKt")
        private val libacpClient = listOf(java, "-cp", testClasspath, "dev.libacp.interop.InteropClientKt")

        /** The official Kotlin SDK peers' classpath, or why there is none. */
        private var officialKotlinClasspath: Result<String> = Result.failure(IllegalStateException("not built"))

        /** Builds tests/interop/kotlin (its own pinned Maven project) into a classpath file. */
        @BeforeAll
        @JvmStatic
        fun buildOfficialKotlinPeers() {
            val command = listOf(
                "mvn", "-q", "-B", "-ntp", "-Dstyle.color=never",
                "-f", File(officialKotlin, "pom.xml").path,
                "package", "dependency:build-classpath",
            )
            officialKotlinClasspath = runCatching {
                val started = System.nanoTime()
                val run = runBounded(command, limitSeconds = 600)
                check(!run.hung && run.code == 0) {
                    "${command.joinToString(" ")}: exit ${run.code}${if (run.hung) " (no result within 600 s)" else ""}\n" +
                        "${run.stdout}\n${run.stderr.takeLast(4000)}"
                }
                println("interop: built tests/interop/kotlin in ${seconds(started)}")
                val jars = File(officialKotlin, "target/classpath.txt").readText().trim()
                "${File(officialKotlin, "target/classes").path}${File.pathSeparator}$jars"
            }
        }

        private fun seconds(since: Long) = "%.1f s".format((System.nanoTime() - since) / 1e9)

        private class Run(val code: Int?, val stdout: String, val stderr: String, val hung: Boolean)

        private fun drain(input: InputStream, into: StringBuffer) = thread(isDaemon = true) {
            input.bufferedReader().use { reader ->
                val buffer = CharArray(8192)
                while (true) {
                    val n = reader.read(buffer)
                    if (n < 0) break
                    into.append(buffer, 0, n)
                }
            }
        }

        /**
         * Runs [command] from the repository root in its own process group
         * (`setsid`); kills the group if it has not ended within
         * [limitSeconds] (a hang detector).
         */
        private fun runBounded(command: List<String>, limitSeconds: Long = LIMIT.inWholeSeconds): Run {
            val process = ProcessBuilder(listOf("setsid") + command)
                .directory(repo)
                .redirectInput(ProcessBuilder.Redirect.from(File("/dev/null")))
                .start()
            val stdout = StringBuffer()
            val stderr = StringBuffer()
            val readers = listOf(drain(process.inputStream, stdout), drain(process.errorStream, stderr))
            val ended = process.waitFor(limitSeconds, TimeUnit.SECONDS)
            if (!ended) {
                // setsid made it the leader of its own group: SIGKILL to all of it.
                ProcessBuilder("kill", "-KILL", "--", "-${process.pid()}").start().waitFor(5, TimeUnit.SECONDS)
                process.destroyForcibly()
                process.waitFor(5, TimeUnit.SECONDS)
            }
            readers.forEach { it.join(5_000) }
            return Run(if (ended) process.exitValue() else null, stdout.toString(), stderr.toString(), !ended)
        }

        /** The official Python SDK's interpreter running [script]. */
        private fun pythonSdk(script: String): List<String> {
            assertTrue(sdkPython.canExecute(), "the official Python SDK is not installed ($sdkPython is missing): $SETUP")
            val imports = ProcessBuilder(sdkPython.path, "-c", "import acp").start().waitFor() == 0
            assertTrue(imports, "the official Python SDK is not installed in $sdkPython: $SETUP")
            return listOf(sdkPython.path, File(interop, "python/$script").path)
        }

        /** Node running one of the official TypeScript SDK's peers. */
        private fun tsSdk(script: String): List<String> {
            assertTrue(tsSdk.exists(), "the official TypeScript SDK is not installed ($tsSdk is missing): $SETUP")
            return listOf("node", File(interop, "ts/$script").path)
        }

        /** A peer built by `cargo build -p libacp-tests --bins`. */
        private fun rustPeer(name: String): List<String> {
            val program = testBinary(name)
            assertTrue(program.canExecute(), "$program is not built: cargo build -p libacp-tests --bins")
            return listOf(program.path)
        }

        /** The official Kotlin SDK's peer [mainClass] (interop.agent.AgentKt / interop.client.ClientKt). */
        private fun kotlinSdk(mainClass: String): List<String> {
            val classpath = officialKotlinClasspath.getOrElse {
                fail("the official Kotlin SDK peers (tests/interop/kotlin) did not build: ${it.message}")
            }
            return listOf(java, "-cp", classpath, mainClass)
        }
    }

    /** Runs `client -- agent...`; it must print OK (its last line) and exit 0. */
    private fun converse(client: List<String>, agent: List<String>) {
        val command = client + "--" + agent
        val what = command.joinToString(" ") { if (it == testClasspath || it.contains(File.pathSeparator)) "<classpath>" else it }
        val started = System.nanoTime()
        val run = runBounded(command)
        val output = "stdout:\n${run.stdout}\nstderr:\n${run.stderr.takeLast(4000)}"
        assertTrue(!run.hung, "$what: no result within ${LIMIT.inWholeSeconds} s\n$output")
        val last = run.stdout.trim().lines().lastOrNull()
        assertTrue(run.code == 0 && last == "OK", "$what: exit ${run.code}\n$output")
        println("interop: $what: OK in ${seconds(started)}")
    }

    // -- the libacp Kotlin client driving the official agents (and the libacp Kotlin agent)

    @Test
    fun `the libacp Kotlin client drives the official TypeScript agent`() =
        converse(libacpClient, tsSdk("agent.mjs"))

    @Test
    fun `the libacp Kotlin client drives the official Python agent`() =
        converse(libacpClient, pythonSdk("agent.py"))

    @Test
    fun `the libacp Kotlin client drives the official Rust agent`() =
        converse(libacpClient, rustPeer("official-rust-agent"))

    @Test
    fun `the libacp Kotlin client drives the official Kotlin agent`() =
        converse(libacpClient, kotlinSdk("interop.agent.AgentKt"))

    @Test
    fun `the libacp Kotlin client drives the libacp Kotlin agent`() =
        converse(libacpClient, libacpAgent)

    // -- official clients (and the Rust libacp client) driving the libacp Kotlin agent

    @Test
    fun `the official TypeScript client drives the libacp Kotlin agent`() =
        converse(tsSdk("client.mjs"), libacpAgent)

    @Test
    fun `the official Python client drives the libacp Kotlin agent`() =
        converse(pythonSdk("client.py"), libacpAgent)

    @Test
    fun `the official Rust client drives the libacp Kotlin agent`() =
        converse(rustPeer("official-rust-client"), libacpAgent)

    @Test
    fun `the official Kotlin client drives the libacp Kotlin agent`() =
        converse(kotlinSdk("interop.client.ClientKt"), libacpAgent)

    @Test
    fun `the Rust libacp interop client drives the libacp Kotlin agent`() =
        converse(rustPeer("libacp-interop-client"), libacpAgent)
}
