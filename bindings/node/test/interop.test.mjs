// Interop between libacp's Node binding and the official ACP SDKs, both
// directions, over real pipes (tests/interop/README.md has the check
// sequence and the SDK pins; scripts/setup-interop.sh installs them). The
// Node counterpart of bindings/python/tests/test_interop.py:
//
// * the official clients (TypeScript SDK `tests/interop/ts/client.mjs`,
//   Python SDK `tests/interop/python/client.py`, Rust SDK
//   `official-rust-client`) and the Rust libacp client
//   (`libacp-interop-client`) drive the libacp Node agent
//   `peers/interop-agent.mjs`;
// * the libacp Node client `peers/interop-client.mjs` runs the same check
//   sequence against the official agents (TypeScript, Python and Rust SDKs)
//   and against the libacp Node agent;
// * an official-TypeScript-SDK client, `peers/official-example-client.mjs`,
//   drives the quickstart agent `examples/node/agent.mjs` through what that
//   example does.
//
// Each run is one process printing `OK` or `FAIL: <reason>`, bounded by its
// own 30 s deadline and by a 60 s hang detector here. A missing official SDK
// fails the test (CI always installs them), saying how to install it.
//
//   cd bindings/node && node --test --test-concurrency=1 test/interop.test.mjs
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { ROOT } from "./support.mjs";

const PEERS = path.join(ROOT, "bindings", "node", "test", "peers");
const INTEROP = path.join(ROOT, "tests", "interop");
const TARGET = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug");
const SDK_PYTHON = path.join(ROOT, ".venv-interop", "bin", "python");
const TS_SDK = path.join(INTEROP, "ts", "node_modules", "@agentclientprotocol", "sdk");
const TIMEOUT_MS = 60_000;
const SETUP = "run scripts/setup-interop.sh";

const NODE = process.execPath;
const LIBACP_AGENT = [NODE, path.join(PEERS, "interop-agent.mjs")];
const LIBACP_CLIENT = [NODE, path.join(PEERS, "interop-client.mjs")];
const EXAMPLE_AGENT = [NODE, path.join(ROOT, "examples", "node", "agent.mjs")];

/** Whether the venv's Python imports the official SDK (asked once). */
let pythonSdkImports = /** @type {boolean | undefined} */ (undefined);

/**
 * The official Python SDK's interpreter running `script`.
 * @param {string} script
 */
function pythonSdk(script) {
  assert.ok(
    existsSync(SDK_PYTHON),
    `the official Python SDK is not installed (${SDK_PYTHON} is missing): ${SETUP}`,
  );
  pythonSdkImports ??= spawnSync(SDK_PYTHON, ["-c", "import acp"]).status === 0;
  assert.ok(
    pythonSdkImports,
    `the official Python SDK is not installed in ${SDK_PYTHON}: ${SETUP}`,
  );
  return [SDK_PYTHON, script];
}

/** Fails unless the official TypeScript SDK is installed. */
function requireTsSdk() {
  assert.ok(
    existsSync(path.join(TS_SDK, "package.json")),
    `the official TypeScript SDK is not installed (${TS_SDK} is missing): ${SETUP}`,
  );
}

/**
 * Node running one of the official TypeScript SDK's peers.
 * @param {string} script
 */
function tsSdk(script) {
  requireTsSdk();
  return [NODE, path.join(INTEROP, "ts", script)];
}

/**
 * A peer built by `cargo build -p libacp-tests --bins`.
 * @param {string} name
 */
function rustPeer(name) {
  const program = path.join(TARGET, name);
  assert.ok(existsSync(program), `${program} is not built: cargo build -p libacp-tests --bins`);
  return [program];
}

/**
 * Runs `command` from the repository root in its own process group; kills
 * the group if it has not ended within `TIMEOUT_MS` (a hang detector).
 * @param {string[]} command
 * @returns {Promise<{ code: number | null, signal: string | null, stdout: string, stderr: string, hung: boolean }>}
 */
function runBounded(command) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let hung = false;
    child.stdout.setEncoding("utf8").on("data", (text) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
    const timer = setTimeout(() => {
      hung = true;
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
    }, TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, hung });
    });
  });
}

/**
 * Runs `client -- agent...`; it must print OK (its last line) and exit 0.
 * @param {string[]} client
 * @param {string[]} agent
 */
async function converse(client, agent) {
  const command = [...client, "--", ...agent];
  const { code, signal, stdout, stderr, hung } = await runBounded(command);
  const output = `stdout:\n${stdout}\nstderr:\n${stderr.slice(-4000)}`;
  const what = command.join(" ");
  assert.ok(!hung, `${what}: no result within ${TIMEOUT_MS / 1000} s\n${output}`);
  const lines = stdout.trim().split("\n");
  assert.ok(
    code === 0 && lines.at(-1) === "OK",
    `${what}: exit ${code}${signal === null ? "" : ` (signal ${signal})`}\n${output}`,
  );
}

// -- official clients (and the Rust libacp client) driving the libacp Node agent

test("the official TypeScript client drives the libacp Node agent", async () => {
  await converse(tsSdk("client.mjs"), LIBACP_AGENT);
});

test("the official Python client drives the libacp Node agent", async () => {
  await converse(pythonSdk(path.join(INTEROP, "python", "client.py")), LIBACP_AGENT);
});

test("the official Rust client drives the libacp Node agent", async () => {
  await converse(rustPeer("official-rust-client"), LIBACP_AGENT);
});

test("the Rust libacp interop client drives the libacp Node agent", async () => {
  await converse(rustPeer("libacp-interop-client"), LIBACP_AGENT);
});

test("an official TypeScript SDK client drives the example agent", async () => {
  requireTsSdk();
  await converse([NODE, path.join(PEERS, "official-example-client.mjs")], EXAMPLE_AGENT);
});

// -- the libacp Node client driving official agents

test("the libacp Node client drives the official TypeScript agent", async () => {
  await converse(LIBACP_CLIENT, tsSdk("agent.mjs"));
});

test("the libacp Node client drives the official Python agent", async () => {
  await converse(LIBACP_CLIENT, pythonSdk(path.join(INTEROP, "python", "agent.py")));
});

test("the libacp Node client drives the official Rust agent", async () => {
  await converse(LIBACP_CLIENT, rustPeer("official-rust-agent"));
});

test("the libacp Node client drives the libacp Node agent", async () => {
  await converse(LIBACP_CLIENT, LIBACP_AGENT);
});
