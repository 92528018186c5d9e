// Spawned agents and process lifetimes: args, cwd, env, stderr lines to a
// callback, exit statuses, spawn failures, and "process exit with nothing
// left running" (issue 11, items 2, 6 and 9).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ClientConnection, ConnectionClosed, SpawnError } from "libacp";

import { LIMIT_MS, within } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const ECHO_AGENT = path.join(here, "peers", "echo-agent.mjs");
const SPAWNING_CLIENT = path.join(here, "peers", "spawning-client.mjs");
const INIT = { protocolVersion: 1, clientCapabilities: {} };

/** @param {import("libacp").SpawnOptions} [options] @param {import("libacp").Client} [client] */
function spawnEcho(options = {}, client = {}) {
  return ClientConnection.spawn(process.execPath, [ECHO_AGENT], client, options);
}

/** Whether a process with this id exists. @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === "EPERM";
  }
}

/** Waits (bounded) until `pid` is gone. @param {number} pid */
async function gone(pid) {
  const deadline = Date.now() + LIMIT_MS;
  while (alive(pid)) {
    assert.ok(Date.now() < deadline, `process ${pid} is still running`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs the spawning client in `mode`; resolves with its stdout once it has
 * exited by itself (rejects if it had to be killed).
 * @param {string} mode
 */
function runClient(mode) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [SPAWNING_CLIENT, mode],
      { timeout: LIMIT_MS },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`${mode}: ${error.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** The agent pid a spawning client printed. @param {string} stdout */
function agentPid(stdout) {
  const m = /^pid (\d+)$/m.exec(stdout);
  assert.ok(m, `no pid in ${stdout}`);
  return Number(m[1]);
}

test("a spawned agent gets cwd and env, and exits 0 when the connection closes", async () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "libacp-node-"));
  const agent = spawnEcho({ cwd, env: { LIBACP_TEST_VALUE: "from the client" } });
  assert.equal(typeof agent.pid, "number");
  await within(agent.initialize(INIT), "initialize");
  const seen = await within(
    agent.extMethod("_do", { what: "env", name: "LIBACP_TEST_VALUE" }),
    "_do env",
  );
  assert.deepEqual(seen, { cwd: fs.realpathSync(cwd), value: "from the client" });
  const exited = agent.connection.waitExit();
  await within(agent.close(), "close");
  assert.deepEqual(await within(exited, "waitExit"), { code: 0, signal: null });
  assert.deepEqual(agent.connection.exitStatus, { code: 0, signal: null });
  fs.rmSync(cwd, { recursive: true });
});

test("clearEnv starts the agent with only the given environment", async () => {
  const agent = spawnEcho({ clearEnv: true, env: { ONLY: "this" } });
  await within(agent.initialize(INIT), "initialize");
  const seen = /** @type {{ value: unknown }} */ (
    await within(agent.extMethod("_do", { what: "env", name: "HOME" }), "_do env")
  );
  assert.equal(seen.value, null);
  await within(agent.close(), "close");
});

test("the agent's stderr lines reach the stderr callback in order", async () => {
  /** @type {string[]} */
  const lines = [];
  const agent = spawnEcho({ stderr: (line) => lines.push(line) });
  await within(agent.initialize(INIT), "initialize");
  const sent = Array.from({ length: 50 }, (_, i) => `line ${i} ünïcode`);
  await within(agent.extMethod("_do", { what: "stderr", lines: sent }), "_do stderr");
  await within(agent.close(), "close");
  await within(agent.terminated(), "terminated");
  assert.deepEqual(lines, sent);
});

test("an agent that dies mid-call rejects the call with ConnectionClosed and reports its exit code", async () => {
  const agent = spawnEcho({ stderr: () => {} });
  await within(agent.initialize(INIT), "initialize");
  const call = agent.extMethod("_do", { what: "exit", code: 3 }).catch((e) => e);
  assert.ok((await within(call, "the call")) instanceof ConnectionClosed);
  assert.deepEqual(await within(agent.connection.waitExit(), "waitExit"), {
    code: 3,
    signal: null,
  });
  assert.match(await within(agent.closed(), "closed"), /peer closed/);
  await within(agent.close(), "close");
});

test("a command that cannot start throws SpawnError naming it", () => {
  assert.throws(
    () => ClientConnection.spawn("/nonexistent/libacp-agent", ["--x"]),
    (/** @type {unknown} */ e) =>
      e instanceof SpawnError &&
      e.program === "/nonexistent/libacp-agent" &&
      /No such file/i.test(e.error),
  );
});

test("spawn options are checked before anything starts", () => {
  assert.throws(() => ClientConnection.spawn(/** @type {any} */ (42)), TypeError);
  assert.throws(() => ClientConnection.spawn("node", /** @type {any} */ ("x")), TypeError);
  assert.throws(
    () => spawnEcho(/** @type {any} */ ({ env: { A: 1 } })),
    /`env` values must be strings, not number \(at A\)/,
  );
  assert.throws(
    () => spawnEcho({ env: [["A=B", "c"]] }),
    (e) => e instanceof RangeError && /A=B/.test(e.message),
  );
  assert.throws(
    () => spawnEcho({ graceAfterSigtermMs: -1 }),
    (e) => e instanceof RangeError && /graceAfterSigtermMs/.test(e.message),
  );
  assert.throws(
    () => spawnEcho(/** @type {any} */ ({ shutdownGrace: [1] })),
    /unknown option `shutdownGrace`/,
  );
  assert.throws(() => spawnEcho(/** @type {any} */ ({ cwdd: "/" })), /unknown option `cwdd`/);
  assert.throws(
    () => spawnEcho(/** @type {any} */ ({ caFile: "/ca.pem" })),
    (e) => e instanceof TypeError && /`caFile` does not apply here/.test(e.message),
  );
});

test("a client that closes and returns from main exits by itself, its agent gone", async () => {
  const stdout = await within(runClient("close"), "the client process");
  assert.match(stdout, /main returned/);
  await within(gone(agentPid(stdout)), "the agent to be gone");
});

test("a client whose agent exits on its own exits by itself after closed()", async () => {
  const stdout = await within(runClient("peer"), "the client process");
  assert.match(stdout, /closed: the peer closed the connection/);
  await within(gone(agentPid(stdout)), "the agent to be gone");
});

test("a client that calls process.exit() with its agent running leaves no agent behind", async () => {
  const stdout = await within(runClient("exit"), "the client process");
  await within(gone(agentPid(stdout)), "the agent to be killed");
});
