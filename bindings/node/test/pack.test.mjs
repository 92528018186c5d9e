// Installing as Node users do (issue 11, item 1): the tarball of `npm pack`
// and the package folder, each installed into an empty directory; both
// module systems load it, its types resolve for both, and it works.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { LIMIT_MS } from "./support.mjs";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NPM_LIMIT_MS = 10 * LIMIT_MS;

/**
 * Runs `command` in `cwd`; resolves with its stdout, rejects with its output.
 * @param {string} command @param {string[]} args @param {string} cwd
 * @returns {Promise<string>}
 */
function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, timeout: NPM_LIMIT_MS, maxBuffer: 1 << 24 },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(
              `${command} ${args.join(" ")} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`,
            ),
          );
        else resolve(stdout);
      },
    );
  });
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];

/** A script that loads the package with require() and does a round trip. */
const CJS_CHECK = `
const { ClientConnection, AgentConnection, socketPair, RequestError } = require("libacp");
const [a, b] = socketPair();
AgentConnection.fromFds(a, a, { initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }) });
const client = ClientConnection.fromFds(b, b);
client.initialize({ protocolVersion: 1, clientCapabilities: {} }).then(async (r) => {
  await client.close();
  console.log("cjs", r.protocolVersion, typeof RequestError);
});
`;

/** The same through import, with the schema subpath. */
const ESM_CHECK = `
import { ClientConnection, AgentConnection, socketPair, PROTOCOL_VERSION } from "libacp";
import libacp from "libacp";
import "libacp/schema";
const [a, b] = socketPair();
AgentConnection.fromFds(a, a, { initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }) });
const client = ClientConnection.fromFds(b, b);
const r = await client.initialize({ protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
await client.close();
console.log("esm", r.protocolVersion, libacp.ClientConnection === ClientConnection);
`;

/** TypeScript consumers, ESM (.mts) and CommonJS (.cts). */
const TS_ESM = `import { ClientConnection, type Agent } from "libacp";
import type { PromptResponse } from "libacp/schema";
const agent: Agent = { prompt: (): PromptResponse => ({ stopReason: "end_turn" }) };
export const spawn: typeof ClientConnection.spawn = ClientConnection.spawn;
export { agent };
`;
const TS_CJS = `import libacp = require("libacp");
import type { schema } from "libacp";
const done: schema.PromptResponse = { stopReason: "cancelled" };
export const spawn = libacp.ClientConnection.spawn;
export { done };
`;

/**
 * Checks an installed package in `dir`: require, import, and types.
 * @param {string} dir
 */
async function checkInstalled(dir) {
  fs.writeFileSync(path.join(dir, "check.cjs"), CJS_CHECK);
  fs.writeFileSync(path.join(dir, "check.mjs"), ESM_CHECK);
  assert.equal((await run(process.execPath, ["check.cjs"], dir)).trim(), "cjs 1 function");
  assert.equal((await run(process.execPath, ["check.mjs"], dir)).trim(), "esm 1 true");
  fs.writeFileSync(path.join(dir, "esm.mts"), TS_ESM);
  fs.writeFileSync(path.join(dir, "cjs.cts"), TS_CJS);
  const tsc = path.join(PKG, "node_modules", "typescript", "bin", "tsc");
  const types = path.join(PKG, "node_modules", "@types");
  await run(
    process.execPath,
    [
      tsc,
      "--strict",
      "--noEmit",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
      "--target",
      "es2022",
      "--typeRoots",
      types,
      "--types",
      "node",
      "esm.mts",
      "cjs.cts",
    ],
    dir,
  );
}

/** @type {string[]} */
const temporary = [];
/** A new empty directory, removed after the tests. */
function emptyDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "libacp-node-install-"));
  temporary.push(dir);
  return dir;
}

/** @type {string} */
let tarball;
before(async () => {
  const out = emptyDir();
  const stdout = await run(npm, ["pack", "--pack-destination", out, ...quiet], PKG);
  tarball = path.join(out, stdout.trim().split("\n").pop() ?? "");
});
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

test("the npm pack tarball carries the built module, the compiled package and its types, and nothing else", async () => {
  const listing = await run("tar", ["-tzf", tarball], path.dirname(tarball));
  const entries = listing
    .trim()
    .split("\n")
    .map((e) => e.replace(/^package\//, ""))
    .sort();
  for (const expected of [
    "package.json",
    "README.md",
    "lib/index.js",
    "lib/index.mjs",
    "lib/index.d.ts",
    "lib/schema.d.ts",
    "native.js",
    "native.d.ts",
    "scripts/install.js",
  ]) {
    assert.ok(
      entries.includes(expected),
      `${expected} is missing from the tarball: ${entries.join(", ")}`,
    );
  }
  assert.ok(
    entries.some((e) => /^libacp\.[a-z0-9-]+\.node$/.test(e)),
    "no native module in the tarball",
  );
  assert.deepEqual(
    entries.filter((e) => e.startsWith("ts/") || e.startsWith("src/") || e.startsWith("test/")),
    [],
  );
});

test("the tarball installs into an empty directory; require, import and types work", async () => {
  const dir = emptyDir();
  await run(npm, ["install", tarball, ...quiet], dir);
  await checkInstalled(dir);
});

test("the package folder installs into an empty directory; require, import and types work", async () => {
  const dir = emptyDir();
  await run(npm, ["install", PKG, ...quiet], dir);
  await checkInstalled(dir);
});
