// The examples (issue 11, item 8): the Electron-style client drives the
// example agent through two turns (one cancelled) and both processes exit
// by themselves; the README's quickstarts are the example files.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { LIMIT_MS, ROOT } from "./support.mjs";

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

test("the README's quickstarts are the example files", () => {
  const readme = fs.readFileSync(path.join(ROOT, "bindings", "node", "README.md"), "utf8");
  for (const name of ["agent.mjs", "electron-client.cjs"]) {
    const source = fs.readFileSync(path.join(EXAMPLES, name), "utf8");
    assert.ok(
      readme.includes("```js\n" + source + "```"),
      `the README's quickstart differs from examples/node/${name}`,
    );
  }
});
