// The shared, language-neutral scenarios (tests/scenarios/*.json) run through
// the Node binding's dynamic API: one test per file (adding a file adds a
// test). A scenario marked `known_failure` that fails is an XFAIL (reported
// as a TODO); one that passes fails the test (XPASS: remove the marker). The
// runner itself is scenario-runner.mjs, a port of the Python binding's
// (bindings/python/tests/test_scenarios.py is this file's model); the last
// tests here check the runner (a runner that passes everything is
// worthless).
//
// Each scenario runs twice, as in Python: with Node's loop reading the
// transport (a libuv poll handle, the default) and with libacp's own thread
// reading it (LIBACP_NODE_DRIVE_READS=0, what a tty or a file on stdin
// gets). Both must behave alike.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import {
  FormatError,
  Mismatch,
  SCENARIO_LIMIT_MS,
  StepFailure,
  fill,
  matches,
  pairUp,
  parseScenario,
  runScenario,
} from "./scenario-runner.mjs";
import { LIMIT_MS, ROOT, guardUnhandledRejections, within } from "./support.mjs";

guardUnhandledRejections();

const SCENARIOS = path.join(ROOT, "tests", "scenarios");
const FILES = fs
  .readdirSync(SCENARIOS)
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -".json".length))
  .sort();

test("there are scenarios", () => {
  assert.ok(FILES.length > 0, `no scenarios in ${SCENARIOS}`);
});

for (const [reads, env] of [
  ["loop", "1"],
  ["engine", "0"],
]) {
  for (const name of FILES) {
    test(`scenario ${name} (${reads} reads)`, async (t) => {
      process.env.LIBACP_NODE_DRIVE_READS = env;
      try {
        await runFile(name, t);
      } finally {
        delete process.env.LIBACP_NODE_DRIVE_READS;
      }
    });
  }
}

/**
 * Runs one scenario file; a known failure that fails is a TODO.
 * @param {string} name
 * @param {import("node:test").TestContext} t
 */
async function runFile(name, t) {
  const sc = parseScenario(fs.readFileSync(path.join(SCENARIOS, `${name}.json`), "utf8"));
  // The runner bounds every step and the scenario; this is a last safety
  // net so that nothing can hang the suite.
  const failure = await within(runScenario(sc), `scenario ${name}`, SCENARIO_LIMIT_MS + LIMIT_MS);
  if (sc.knownFailure !== null) {
    if (failure !== null) {
      t.todo(`XFAIL, known failure: ${sc.knownFailure}\n  ${failure}`);
      return;
    }
    assert.fail(`marked known_failure (${sc.knownFailure}) but passed (XPASS): remove the marker`);
  }
  if (failure !== null) {
    assert.fail(`scenario ${name}: ${failure}`);
  }
}

// ---------------------------------------------------------------------------
// The runner's own checks (the same as the Rust, C++ and Python runners').

/**
 * @param {unknown} p
 * @param {unknown} a
 * @param {Map<string, unknown>} [known]
 */
function ok(p, a, known = new Map()) {
  try {
    matches(p, a, known, new Map());
    return true;
  } catch (e) {
    if (!(e instanceof Mismatch)) throw e;
    return false;
  }
}

test("patterns match as documented", () => {
  assert.ok(ok({ a: 1 }, { a: 1.0, b: 2 }), "subset, numbers by value");
  assert.ok(ok({ a: "$absent" }, { b: 1 }));
  assert.ok(!ok({ a: "$absent" }, { a: null }));
  assert.ok(ok({ a: "$any" }, { a: null }));
  assert.ok(!ok({ a: "$any" }, {}));
  assert.ok(!ok([1], [1, 2]), "arrays match whole");
  assert.ok(ok({ $one_of: ["x", "y"] }, "y"));
  assert.ok(!ok({ $one_of: ["x", "y"] }, "z"));
  assert.ok(ok("$$any", "$any"));
  assert.ok(!ok("$$any", "other"));
  assert.ok(ok("$/cancel_request", "$/cancel_request"));
  assert.ok(!ok(1, true) && !ok(true, 1) && !ok(0, false), "booleans are not numbers");
  assert.ok(!ok(null, 0) && !ok("1", 1));

  /** @type {Map<string, unknown>} */
  const bound = new Map();
  matches({ id: "$capture:id" }, { id: 7 }, new Map(), bound);
  assert.deepEqual(bound, new Map([["id", 7]]));
  assert.ok(ok("$ref:id", 7, bound));
  assert.ok(!ok("$ref:id", 8, bound));
  assert.ok(!ok("$ref:nothing", 8, bound));

  assert.throws(
    () =>
      matches(
        { result: { stopReason: "cancelled" } },
        { id: 3, result: { stopReason: "end_turn" } },
        new Map(),
        new Map(),
      ),
    (/** @type {unknown} */ m) => {
      assert.ok(m instanceof Mismatch);
      assert.deepEqual(
        [m.path, m.expected, m.got],
        ["/result/stopReason", '"cancelled"', '"end_turn"'],
      );
      return true;
    },
  );

  assert.deepEqual(fill({ id: "$ref:id", m: "$$x", l: ["$ref:id"] }, bound), {
    id: 7,
    m: "$x",
    l: [7],
  });
  assert.throws(() => fill({ a: "$any" }, new Map()), StepFailure);
  assert.throws(() => fill("$ref:nothing", new Map()), StepFailure);

  /** @type {Map<string, unknown>} */
  const paired = new Map();
  assert.ok(
    pairUp(
      [{ id: "$capture:x" }, { id: 1 }],
      [{ id: 2 }, { id: 1 }],
      [false, false],
      new Map(),
      paired,
    ),
  );
  assert.equal(paired.get("x"), 2, "backtracks past the first fit");
});

const BAD = [
  '{"role": "agent", "script": []}',
  '{"description": "", "role": "editor", "script": []}',
  '{"description": "", "role": "agent", "script": [], "extra": 1}',
  '{"description": "", "role": "agent", "script": [{"sned": {}}]}',
  '{"description": "", "role": "agent", "script": [{"send": {}, "expect": {}}]}',
  '{"description": "", "role": "agent", "script": [{"action": "dance"}]}',
  '{"description": "", "role": "agent", "script": [{"expect_no_frame": "long"}]}',
  '{"description": "", "role": "client", "options": {"require_auth": true}, "script": []}',
  '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"reply": 1}]}]}, "script": []}',
  '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"error": {"code": "x", "message": ""}}]}]}, "script": []}',
  '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"notify": "y", "escape": true}]}]}, "script": []}',
  '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"call": "y", "escape": false}]}]}, "script": []}',
];

for (const [i, bad] of BAD.entries()) {
  test(`bad scenario files are refused (${i + 1}: ${bad})`, () => {
    assert.throws(() => parseScenario(bad), FormatError);
  });
}

test("a wrong expectation fails with a precise diff", async () => {
  let err = await runScenario(
    parseScenario(`{"description": "", "role": "agent",
    "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
    "script": [
      {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
      {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
    ]}`),
  );
  assert.ok(err !== null);
  assert.ok(err.startsWith("step 2 "), err);
  assert.ok(err.includes("at /result/protocolVersion: expected 2, got 1"), err);
  assert.ok(
    err.includes('got frame:      {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'),
    err,
  );

  // Python waits 200 ms for the -32700 answer; here the quiet period is the
  // hang detector's (the answer ends it at once), so a slow machine passes.
  err = await runScenario(
    parseScenario(`{"description": "", "role": "agent",
    "script": [{"send": "garbage"}, {"expect_no_frame": ${LIMIT_MS}}]}`),
  );
  assert.ok(err !== null && err.includes("unexpected frame") && err.includes("-32700"), `${err}`);
});

test("without a rule the host answers method not found", async () => {
  const err = await runScenario(
    parseScenario(`{"description": "", "role": "agent",
    "script": [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
               {"expect": {"id": 1, "error": {"code": -32601, "data": {"method": "initialize"}}}}]}`),
  );
  assert.equal(err, null, `${err}`);
});
