// The examples (issue 11, item 8): the Electron-style client drives the
// example agent through two turns (one cancelled) and both processes exit
// by themselves; the README's quickstarts are the example files.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import readline from "node:readline";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { LIMIT_MS, ROOT, within } from "./support.mjs";

const EXAMPLES = path.join(ROOT, "examples", "node");

/** Runs the example client (which spawns the example agent). */
function runClient() {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["electron-client.cjs"],
      { cwd: EXAMPLES, timeout: 2 * LIMIT_MS },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

test("the example client drives the example agent: a whole turn, then a cancelled one", async () => {
  assert.ok(
    fs.existsSync(path.join(EXAMPLES, "node_modules", "libacp")),
    "examples/node is not installed: run npm ci in examples/node (scripts/test-node.sh does)",
  );
  for (let run = 0; run < 3; run++) {
    const { stdout } = /** @type {{ stdout: string }} */ (await runClient());
    assert.match(stdout, /You said: hello from Electron \n/);
    assert.match(stdout, /\[acp:update\] \{"kind":"tool_call"\}/);
    assert.match(stdout, /\[acp:permission\] \{"title":"t1"\}/);
    assert.match(stdout, /\[acp:turn-ended\] \{"stopReason":"end_turn"\}/);
    assert.match(stdout, /\[acp:turn-ended\] \{"stopReason":"cancelled"\}\n$/);
  }
});

/**
 * Runs the remote example client against `url`.
 * @param {string} url
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function runRemoteClient(url, env = {}) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["remote-client.mjs", url],
      { cwd: EXAMPLES, timeout: 2 * LIMIT_MS, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test("the remote quickstart: the example client runs a turn against the example server, over WebSocket and HTTP", async () => {
  const server = spawn(process.execPath, ["remote-agent.mjs"], {
    cwd: EXAMPLES,
    env: { ...process.env, ACP_TOKEN: "sesame" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => server.once("exit", (code) => resolve(code)));
  try {
    const lines = readline
      .createInterface({ input: /** @type {import("node:stream").Readable} */ (server.stdout) })
      [Symbol.asyncIterator]();
    const next = async () => (await within(lines.next(), "the server's output")).value;
    const urls = [await next(), await next()];
    assert.match(urls[0], /^ws:\/\/127\.0\.0\.1:\d+\/acp$/);
    assert.match(urls[1], /^http:\/\/127\.0\.0\.1:\d+\/acp$/);
    for (const url of urls) {
      const ok = await runRemoteClient(url, { ACP_TOKEN: "sesame" });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(
        ok.stdout,
        /You said: hello over the network\n\[permission: Touch nothing\]\n\[turn ended: end_turn\]\n$/,
      );
    }
    const refused = await runRemoteClient(urls[0], { ACP_TOKEN: "wrong" });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /cannot connect to ws:.* unauthorized 401/);
    server.kill("SIGTERM");
    assert.equal(await next(), "shut down");
    assert.equal(await within(exited, "the server's exit"), 0);
  } finally {
    server.kill("SIGKILL");
  }
});

test("the README's quickstarts are the example files", () => {
  const readme = fs.readFileSync(path.join(ROOT, "bindings", "node", "README.md"), "utf8");
  for (const name of [
    "agent.mjs",
    "electron-client.cjs",
    "remote-agent.mjs",
    "remote-client.mjs",
  ]) {
    const source = fs.readFileSync(path.join(EXAMPLES, name), "utf8");
    assert.ok(
      readme.includes("```js\n" + source + "```"),
      `the README's quickstart differs from examples/node/${name}`,
    );
  }
});
