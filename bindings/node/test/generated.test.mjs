// Generated files are committed and must not drift (issue 11, item 4):
// ts/schema.ts and ts/methods.ts from the ACP v1 schema, lib/ (the compiled package, with the
// ESM entry lib/index.mjs) from ts/. The napi-generated native.js and
// native.d.ts are checked by scripts/test-node.sh, which builds the module.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { LIMIT_MS, ROOT } from "./support.mjs";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** @param {string[]} args @param {Record<string, string>} [env] */
function node(args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: PKG, timeout: 4 * LIMIT_MS, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`node ${args.join(" ")} failed:\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** Every file under `dir`, relative, sorted. @param {string} dir @returns {string[]} */
function files(dir) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

test("ts/schema.ts and ts/methods.ts are what the generator makes of the v1 schema", async () => {
  await node(["scripts/generate-schema.mjs", "--check"]);
});

test("lib/ is the compiled ts/ (npm run build:ts), ESM entry included", async () => {
  // Beside lib/, so that the build's `require("../native")` resolves.
  const out = fs.mkdtempSync(path.join(PKG, ".lib-check-"));
  try {
    await node([
      path.join(PKG, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      "tsconfig.json",
      "--outDir",
      out,
    ]);
    // The ESM entry is generated from the compiled CommonJS build.
    const { esmEntry } = await import(path.join(PKG, "scripts", "esm-entry.mjs"));
    fs.writeFileSync(path.join(out, "index.mjs"), esmEntry(out));
    assert.deepEqual(
      files(path.join(PKG, "lib")),
      files(out),
      "lib/ has other files than the build",
    );
    for (const f of files(out)) {
      const built = fs.readFileSync(path.join(out, f), "utf8");
      const committed = fs.readFileSync(path.join(PKG, "lib", f), "utf8");
      assert.equal(
        committed,
        built,
        `lib/${f} differs from the build of ts/: run npm run build:ts`,
      );
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
