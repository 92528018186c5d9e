// Fault injection through the Node binding: the shared fault agents of
// tests/faults/ (see its README), spawned by path with
// ClientConnection.spawn, as tests/rust/faults.rs runs them against the
// core. Spawn failures throw SpawnError at once, naming the OS error; an
// agent killed in the middle of a permission request, of a frame or while
// its terminal runs, one that closes its stdout, one that stops reading and
// one flooding its stderr never leave a call pending, a handler's signal
// unaborted or a process running; and after a round of every fault (after
// a warm-up round) the process holds no more descriptors, threads or child
// processes than before. Every wait is a hang detector, never a check of
// speed. `node --test` runs each file in its own process, and this file's
// tests one at a time: the leak check sees only this file.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { ClientConnection, ConnectionClosed, SpawnError } from "libacp";

import { ROOT, deferred, eventually, guardUnhandledRejections, within } from "./support.mjs";

guardUnhandledRejections();

const FAULTS = path.join(ROOT, "tests", "faults");
const INIT = { protocolVersion: 1, clientCapabilities: {} };
/** @type {import("libacp").schema.PromptRequest} */
const PROMPT = { sessionId: "s1", prompt: [{ type: "text", text: "go" }] };
/** A short shutdown ladder: the fault agents ignore the end of their stdin. */
const GRACE = /** @type {[number, number]} */ ([200, 200]);

/** What this process holds: open descriptors, threads, child processes. */
function held() {
  const me = String(process.pid);
  let children = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid ...
    if (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] === me) children++;
  }
  return {
    fds: fs.readdirSync("/proc/self/fd").length,
    threads: fs.readdirSync("/proc/self/task").length,
    children,
  };
}

/**
 * Runs `body` with the fault agent `name`, and closes the connection
 * afterwards even if a check failed (an open connection keeps the process
 * alive).
 * @param {string} name
 * @param {(agent: ClientConnection) => Promise<void>} body
 * @param {string[]} [args]
 * @param {import("libacp").Client} [client]
 * @param {import("libacp").SpawnOptions} [options]
 */
async function withFaultAgent(name, body, args = [], client = {}, options = {}) {
  const agent = ClientConnection.spawn(path.join(FAULTS, name), args, client, {
    graceAfterStdinCloseMs: GRACE[0],
    graceAfterSigtermMs: GRACE[1],
    ...options,
  });
  try {
    await within(agent.initialize(INIT), `${name}: initialize`);
    await within(agent.newSession({ cwd: "/tmp", mcpServers: [] }), `${name}: session/new`);
    await body(agent);
  } finally {
    await within(agent.close(), `${name}: close`);
  }
}

/**
 * Resolves with the error `promise` rejects with (a hang detector).
 * @param {Promise<unknown>} promise
 * @param {string} what
 */
async function rejection(promise, what) {
  const outcome = await within(
    promise.then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    what,
  );
  assert.ok("error" in outcome, `${what}: resolved with ${JSON.stringify(outcome)}`);
  return outcome.error;
}

/**
 * Checks that `promise` rejects with ConnectionClosed.
 * @param {Promise<unknown>} promise
 * @param {string} what
 */
async function failsClosed(promise, what) {
  const error = await rejection(promise, what);
  assert.ok(error instanceof ConnectionClosed, `${what}: ${error}`);
}

// ---- the faults ----

function spawnFailures() {
  /** @type {[string, string | undefined, RegExp][]} */
  const cases = [
    ["/nonexistent/acp-agent", undefined, /No such file/],
    [path.join(FAULTS, "not_executable.sh"), undefined, /Permission denied/i],
    [path.join(FAULTS, "stops_reading.sh"), "/nonexistent/missing-dir", /No such file/],
  ];
  for (const [program, cwd, says] of cases) {
    assert.throws(
      () => ClientConnection.spawn(program, [], {}, { cwd, stderr: () => {} }),
      (/** @type {unknown} */ e) => {
        assert.ok(e instanceof SpawnError, `${program}: ${e}`);
        assert.equal(e.program, program);
        assert.match(e.error, says, `${program} (cwd ${cwd})`);
        return true;
      },
    );
  }
}

/**
 * The agent asks permission during a prompt, then is killed (SIGKILL)
 * while the handler holds the request: the prompt fails with
 * ConnectionClosed, the handler's signal aborts, and a late answer harms
 * nothing.
 * @param {number} round
 */
async function killedMidPermission(round) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `libacp-node-faults-${round}-`));
  /** @type {ReturnType<typeof deferred<import("libacp").RequestContext>>} */
  const asked = deferred();
  /** @type {ReturnType<typeof deferred<import("libacp").schema.RequestPermissionResponse>>} */
  const answer = deferred();
  const client = {
    /**
     * @param {import("libacp").schema.RequestPermissionRequest} params
     * @param {import("libacp").RequestContext} context
     */
    requestPermission(params, context) {
      assert.equal(params.toolCall.toolCallId, "t1");
      asked.resolve(context);
      return answer.promise; // a dialog left open
    },
  };
  try {
    await withFaultAgent(
      "killed_mid_permission.sh",
      async (agent) => {
        const turn = agent.prompt(PROMPT);
        const context = await within(asked.promise, "the permission request");
        assert.equal(context.method, "session/request_permission");
        assert.equal(context.signal.aborted, false);
        fs.writeFileSync(path.join(dir, "go"), "");
        await failsClosed(turn, "the prompt");
        if (!context.signal.aborted) {
          await within(
            new Promise((resolve) =>
              context.signal.addEventListener("abort", resolve, { once: true }),
            ),
            "the handler's signal",
          );
        }
        // The user clicks after all: the answer goes nowhere.
        answer.resolve({ outcome: { outcome: "selected", optionId: "a" } });
        await within(agent.terminated(), "terminated");
      },
      [dir],
      client,
    );
  } finally {
    answer.resolve({ outcome: { outcome: "cancelled" } });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * killed_mid_frame.sh dies halfway through its answer (the half frame is
 * never delivered); stdout_closed.sh closes its stdout and keeps running
 * (end of stream closes the connection, the shutdown ladder ends it). The
 * prompt fails with ConnectionClosed either way.
 * @param {string} name
 */
async function promptFailsWithTheClose(name) {
  await withFaultAgent(name, async (agent) => {
    await failsClosed(agent.prompt(PROMPT), `${name}: the prompt`);
    await within(agent.terminated(), `${name}: terminated`);
  });
}

/**
 * The agent has the core's terminal service start `sleep 300`, then is
 * killed: the prompt fails with ConnectionClosed, the agent died of signal
 * 9 (it exits 3 when the answer has no terminalId), and the `sleep` is
 * stopped and reaped while the host still holds the connection.
 */
async function killedMidTerminal() {
  const before = held().children;
  await withFaultAgent(
    "killed_mid_terminal.sh",
    async (agent) => {
      await failsClosed(agent.prompt(PROMPT), "the prompt");
      await within(agent.terminated(), "terminated");
      assert.deepEqual(
        await within(agent.connection.waitExit(), "waitExit"),
        { code: null, signal: 9 },
        "the agent is killed after its terminal started (code 3: no terminalId)",
      );
      await eventually(
        () => held().children <= before,
        "the terminal's `sleep 300` stopped and reaped while the connection is held",
      );
    },
    [],
    {},
    { terminals: true },
  );
}

/**
 * The agent stops reading (it sleeps, its stdin open) while a 16 MiB
 * prompt is being written: close() returns without waiting for the write,
 * the prompt fails with ConnectionClosed, the shutdown ladder ends the
 * agent.
 */
async function stopsReading() {
  // The trace runs when the writer takes a frame, before writing it: once
  // the prompt is traced, its write has begun (and cannot finish).
  /** @type {() => void} */
  let began = () => {};
  const writing = new Promise((resolve) => {
    began = () => resolve(undefined);
  });
  /** @type {(direction: string, frame: string) => void} */
  const trace = (direction, frame) => {
    if (direction === "out" && frame.length > 1 << 20) began();
  };
  await withFaultAgent(
    "stops_reading.sh",
    async (agent) => {
      const turn = agent.prompt({
        sessionId: "s1",
        prompt: [{ type: "text", text: "x".repeat(16 << 20) }],
      });
      const failed = failsClosed(turn, "the 16 MiB prompt");
      await within(writing, "the prompt's write begins");
      await within(agent.close(), "close with a 16 MiB prompt unwritten");
      await failed;
      await within(agent.terminated(), "terminated");
    },
    [],
    {},
    { trace },
  );
}

/**
 * The agent writes 20,000 lines of 1,000 bytes to stderr, then answers
 * end_turn: the answer arrives and (`everyLine`) the stderr callback gets
 * every line. The binding's inbox holds 256 items: the core reads the
 * agent's stderr no further while it is full (`Inbox::forward_stderr`), so
 * nothing is dropped; a line it had dropped would show as a
 * "[N stderr lines dropped: ...]" prefix on the next one, which is counted.
 * The leak check's rounds leave the count to the test of its own.
 * @param {boolean} [everyLine]
 */
async function stderrFlood(everyLine = true) {
  let lines = 0;
  let dropped = 0;
  /** @param {string} line */
  const stderr = (line) => {
    lines++;
    // What the core prefixes to the next line when it dropped some.
    const m = /^\[(\d+) stderr lines dropped/.exec(line);
    if (m) dropped += Number(m[1]);
  };
  await withFaultAgent(
    "stderr_flood.sh",
    async (agent) => {
      const answer = await within(agent.prompt(PROMPT), "the answer after the flood");
      assert.equal(answer.stopReason, "end_turn");
      if (!everyLine) return;
      await eventually(
        () => lines + dropped >= 20_000,
        `every stderr line (${lines} so far, ${dropped} dropped)`,
      );
      await within(agent.close(), "close");
      await within(agent.terminated(), "terminated");
      assert.equal(dropped, 0, `the core dropped ${dropped} of the 20,000 stderr lines`);
      assert.equal(lines, 20_000);
    },
    [],
    {},
    { stderr },
  );
}

// ---- the tests ----

test("spawn failures throw SpawnError at once, naming the OS error", () => {
  spawnFailures();
});

test("killed_mid_permission: the prompt fails closed, the handler's signal aborts, a late answer is harmless", async () => {
  await killedMidPermission(0);
});

test("killed_mid_frame: the prompt fails closed", async () => {
  await promptFailsWithTheClose("killed_mid_frame.sh");
});

test("killed_mid_terminal: the prompt fails closed, the agent died of signal 9, its terminal is reaped at once", async () => {
  await killedMidTerminal();
});

test("stdout_closed: the prompt fails closed and the agent is ended", async () => {
  await promptFailsWithTheClose("stdout_closed.sh");
});

test("stops_reading: close() returns with a 16 MiB prompt unwritten, the prompt fails closed", async () => {
  await stopsReading();
});

test("stderr_flood: the answer arrives and the stderr callback gets all 20,000 lines", async () => {
  await stderrFlood();
});

test("a round of every fault leaks no descriptor, thread or child process", async () => {
  /** @param {number} round */
  const everyFault = async (round) => {
    spawnFailures();
    await killedMidPermission(round);
    await promptFailsWithTheClose("killed_mid_frame.sh");
    await promptFailsWithTheClose("stdout_closed.sh");
    await stderrFlood(false);
    await killedMidTerminal();
    await stopsReading();
  };
  // The flood's line count is left to its own test (stderr_flood above):
  // here the flood only has to be answered and closed.
  await everyFault(1); // warm-up: what is made once (runtime threads, ...)
  const baseline = held();
  await everyFault(2);
  await everyFault(3);
  const deadline = Date.now() + 60_000;
  let now = held();
  while (
    now.fds > baseline.fds ||
    now.threads > baseline.threads ||
    now.children > baseline.children
  ) {
    assert.ok(
      Date.now() < deadline,
      `leaked: before ${JSON.stringify(baseline)}, after ${JSON.stringify(now)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    now = held();
  }
  // No garbage collection is needed for this: a closed connection releases
  // its descriptors and threads without its JavaScript object being
  // collected.
});
