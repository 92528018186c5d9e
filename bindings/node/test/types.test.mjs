// The types (issue 11, item 4): `tsc --strict --noEmit` passes on a file
// that uses every public name (test/types/public-api.ts, against the built
// lib/*.d.ts as a user's project sees them) and on the examples.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { LIMIT_MS, ROOT } from "./support.mjs";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TSC = path.join(PKG, "node_modules", "typescript", "bin", "tsc");

/** Runs tsc with `args`; rejects with its output if it fails. @param {string[]} args */
function tsc(args) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [TSC, ...args],
      { cwd: PKG, timeout: 4 * LIMIT_MS },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`tsc ${args.join(" ")} failed:\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

test("every export of the package is used in test/types/public-api.ts", () => {
  const index = fs.readFileSync(path.join(PKG, "lib", "index.d.ts"), "utf8");
  const names = new Set();
  for (const block of index.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
    for (const item of /** @type {string} */ (block[1]).split(",")) {
      const name = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  for (const m of index.matchAll(/export (?:declare )?(?:const|function|class) (\w+)/g))
    names.add(m[1]);
  for (const m of index.matchAll(/export type \* as (\w+)/g)) names.add(m[1]);
  assert.ok(names.size > 30, `only ${names.size} exports found: the parser is out of date`);
  const used = fs.readFileSync(path.join(PKG, "test", "types", "public-api.ts"), "utf8");
  const missing = [...names].filter((n) => !new RegExp(`\\b${n}\\b`).test(used));
  assert.deepEqual(missing, [], "exports public-api.ts does not use");
});

test("tsc --strict --noEmit passes on test/types/public-api.ts", async () => {
  await tsc(["-p", "test/types"]);
});

test("tsc --strict --noEmit (checkJs) passes on the examples", async () => {
  assert.ok(fs.existsSync(path.join(ROOT, "examples", "node", "tsconfig.json")));
  await tsc(["-p", path.join(ROOT, "examples", "node")]);
});
