// The shared scenarios (tests/scenarios/*.json, format in
// tests/scenarios/README.md) run through the Node binding's dynamic API: a
// port of bindings/python/tests/scenario_runner.py, with the same structure
// and names (in camelCase) so the two can be compared.
//
// Per scenario: a libacp `Connection` made with `Connection.fromFds` on one
// end of `socketPair()`, in the scenario's role, whose handler is the host
// (the vocabulary's rules and programs); this module is the scripted raw
// peer on the other end, a `net.Socket` on the other descriptor. The same
// rules as the Rust, C++ and Python runners: unknown keys are errors, every
// waiting step is bounded and so is the whole scenario, mismatches are
// reported with the step, the JSON pointer where value and pattern part,
// and the whole frame or event.
//
// Limits: the format says 5 s a step and 60 s a scenario; here a step gets
// LIMIT_MS (support.mjs, 30 s) and a scenario four times that. They are hang
// detectors, and this suite must pass on a slow, loaded machine. Quiet
// periods (`expect_no_frame`, `expect_no_event`) are the scenarios' own.
//
// The binding's errors are the typed errors of the README's table:
// `RequestError` (`MethodNotFound` included) is `Rpc` (`code`, `message`,
// `data`), `ConnectionClosed` `Closed`, `Cancelled`, `RequestTimeout`
// `Timeout`, `InvalidParams`, `InvalidResult`, and a `RefusedError`
// (`CapabilityError` included) `Refused.<kind>` with the members of its
// `details` (the core's `Refusal::to_json`).
//
// Where the Node API differs from the Python one (documented behaviour of
// the binding, not bugs):
//
// * A superseded request (the core answered it already: a client's
//   `cancelSession` answered the permission request, `$/cancel_request`, the
//   connection closed) keeps its handler running: its `context.signal`
//   aborts. So a program runs as the handler itself (Python runs each in a
//   task of its own, shielded from the handler's cancellation). A program's
//   answer after that is refused by the core and dropped, which is what "a
//   refused answer is ignored" means.
// * A handler cannot end "without answering" (returning `undefined`
//   answers `null`). A program that ends without answering throws
//   `RequestError(-32603, ...)`, which is what the engine's dropped
//   responder answers (as in Python).
// * At the end, Python cancels the programs still running; here they stop
//   before their next operation, the gates they wait on give way, and
//   closing the connection aborts their signals and fails their calls.
import fs from "node:fs";
import net from "node:net";

import {
  Cancelled,
  Connection,
  ConnectionClosed,
  InvalidParams,
  InvalidResult,
  MethodNotFound,
  RefusedError,
  RequestError,
  RequestTimeout,
  socketPair,
} from "libacp";

import { LIMIT_MS, deferred, within } from "./support.mjs";

/** How long one waiting step may take, in milliseconds (a hang detector). */
export const STEP_LIMIT_MS = LIMIT_MS;
/** How long a whole scenario may take, in milliseconds (a hang detector). */
export const SCENARIO_LIMIT_MS = 4 * LIMIT_MS;

/** A rule's `params` when the rule takes any params. */
const MISSING = Symbol("missing");

/** The scenario file breaks the format. */
export class FormatError extends Error {
  name = "FormatError";
}

/** A step failed; the message says how. */
export class StepFailure extends Error {
  name = "StepFailure";
}

// ---------------------------------------------------------------------------
// The format, checked before anything runs (unknown keys are typos).

/** @typedef {Record<string, any>} JsonObject a JSON object from a scenario file */
/** @typedef {Map<string, unknown>} Captures captured values by name */
/** @typedef {import("libacp").Handler} Handler */

const OPS = ["respond", "error", "notify", "call", "wait_for_cancel", "wait", "emit"];
const STEPS = [
  "send",
  "expect",
  "expect_unordered",
  "expect_event",
  "expect_events_unordered",
  "expect_no_frame",
  "expect_no_event",
  "close",
  "expect_closed",
  "action",
];
/** @type {Record<string, string[]>} */
const ACTIONS = {
  call: ["method", "params"],
  notify: ["method", "params"],
  cancel_session: ["sessionId"],
  release: ["gate"],
  close: [],
};

/**
 * @typedef {object} Rule
 * @property {string} method
 * @property {unknown} params `MISSING` when the rule takes any params
 * @property {JsonObject[]} program
 */

/**
 * @typedef {object} Step
 * @property {string} text
 * @property {string} verb
 * @property {JsonObject} obj
 */

/**
 * @typedef {object} Scenario
 * @property {"agent" | "client"} role
 * @property {boolean} requireAuth
 * @property {string[] | null} unstable `options.unstable`: the connection option `unstable`
 * @property {Rule[]} rules
 * @property {Step[]} script
 * @property {string | null} knownFailure
 */

/**
 * Compact JSON, cut at 2000 characters.
 * @param {unknown} v
 */
export function short(v) {
  const s = JSON.stringify(v) ?? String(v);
  return s.length <= 2000 ? s : `${s.slice(0, 2000)}...`;
}

/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * @param {unknown} v
 * @param {string} what
 * @returns {JsonObject}
 */
function object(v, what) {
  if (!isObject(v)) {
    throw new FormatError(`${what} must be a JSON object, not ${short(v)}`);
  }
  return v;
}

/**
 * @param {JsonObject} obj
 * @param {string[]} allowed
 * @param {string} what
 */
function onlyKeys(obj, allowed, what) {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) {
      throw new FormatError(`${what}: unknown key \`${k}\` (allowed: ${allowed.join(", ")})`);
    }
  }
}

/**
 * @param {JsonObject} obj
 * @param {string} key
 * @param {string} what
 * @returns {string}
 */
function string(obj, key, what) {
  if (!Object.hasOwn(obj, key)) {
    throw new FormatError(`${what}: \`${key}\` is required`);
  }
  if (typeof obj[key] !== "string") {
    throw new FormatError(`${what}: \`${key}\` must be a string, not ${short(obj[key])}`);
  }
  return obj[key];
}

/**
 * @param {JsonObject} obj
 * @param {string[]} verbs
 * @param {string} what
 * @returns {string}
 */
function verb(obj, verbs, what) {
  const found = Object.keys(obj).filter((k) => verbs.includes(k));
  if (found.length === 0) {
    throw new FormatError(`${what}: no verb (one of: ${verbs.join(", ")}) in ${short(obj)}`);
  }
  if (found.length > 1) {
    throw new FormatError(`${what}: more than one verb in one object`);
  }
  return /** @type {string} */ (found[0]);
}

/**
 * @param {unknown} v
 * @param {string} what
 */
function isTrue(v, what) {
  if (v !== true) {
    throw new FormatError(`${what}: the value must be \`true\``);
  }
}

/** @param {unknown} v */
function isInt(v) {
  return Number.isInteger(v);
}

/**
 * @param {unknown} value
 * @param {string} what
 */
function checkOp(value, what) {
  const op = object(value, what);
  const name = verb(op, OPS, what);
  if (name === "notify" || name === "call") {
    const keys = [name, "note", "params", "as"];
    onlyKeys(op, name === "call" ? [...keys, "escape"] : keys, what);
    string(op, name, what);
    if (Object.hasOwn(op, "as")) {
      string(op, "as", what);
    }
    if (Object.hasOwn(op, "escape")) {
      isTrue(op.escape, what);
    }
    return;
  }
  onlyKeys(op, [name, "note"], what);
  if (name === "error") {
    const e = object(op.error, what);
    onlyKeys(e, ["code", "message", "data"], what);
    if (!isInt(e.code)) {
      throw new FormatError(`${what}: \`error.code\` must be an integer`);
    }
    string(e, "message", what);
  } else if (name === "wait_for_cancel") {
    isTrue(op[name], what);
  } else if (name === "wait") {
    string(op, "wait", what);
  }
}

/**
 * @param {JsonObject} step
 * @param {string} what
 */
function checkAction(step, what) {
  const action = string(step, "action", what);
  if (Object.hasOwn(step, "as")) {
    string(step, "as", what);
  }
  const keys = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
  if (keys === undefined) {
    throw new FormatError(
      `${what}: unknown action ${JSON.stringify(action)} ` +
        "(call, notify, cancel_session, release, close)",
    );
  }
  onlyKeys(step, ["action", "as", "note", ...keys], what);
  for (const key of keys) {
    if (key !== "params") {
      string(step, key, what);
    }
  }
}

/**
 * @param {unknown} value
 * @param {string} what
 * @returns {Step}
 */
function checkStep(value, what) {
  const step = object(value, what);
  const name = verb(step, STEPS, what);
  if (name !== "action") {
    onlyKeys(step, [name, "note"], what);
  }
  const arg = step[name];
  if (name === "expect_unordered" || name === "expect_events_unordered") {
    if (!Array.isArray(arg) || arg.length === 0) {
      throw new FormatError(`${what}: \`${name}\` takes a non-empty array`);
    }
  } else if (name === "expect_no_frame" || name === "expect_no_event") {
    if (!isInt(arg) || arg < 0) {
      throw new FormatError(`${what}: a quiet period in milliseconds, not ${short(arg)}`);
    }
  } else if (name === "close" || name === "expect_closed") {
    isTrue(arg, what);
  } else if (name === "action") {
    checkAction(step, what);
  }
  return { text: short(step), verb: name, obj: step };
}

/**
 * @param {JsonObject} top
 * @param {Scenario} sc
 */
function parseOptions(top, sc) {
  const options = object(top.options, "`options`");
  onlyKeys(options, ["require_auth", "unstable"], "`options`");
  if (Object.hasOwn(options, "unstable")) {
    const names = options.unstable;
    if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) {
      throw new FormatError("`options.unstable` must be an array of strings");
    }
    sc.unstable = /** @type {string[]} */ (names);
  }
  if (Object.hasOwn(options, "require_auth")) {
    if (typeof options.require_auth !== "boolean") {
      throw new FormatError("`options.require_auth` must be a boolean");
    }
    sc.requireAuth = options.require_auth;
    if (sc.requireAuth && sc.role !== "agent") {
      throw new FormatError("`options.require_auth` is an agent option");
    }
  }
}

/**
 * @param {JsonObject} top
 * @param {Scenario} sc
 */
function parseHost(top, sc) {
  const host = object(top.host, "`host`");
  onlyKeys(host, ["requests"], "`host`");
  if (!Array.isArray(host.requests)) {
    throw new FormatError("`host.requests` must be an array");
  }
  host.requests.forEach((/** @type {unknown} */ value, /** @type {number} */ i) => {
    const what = `host.requests[${i}]`;
    const rule = object(value, what);
    onlyKeys(rule, ["method", "params", "do", "note"], what);
    if (!Array.isArray(rule.do)) {
      throw new FormatError(`${what}: \`do\` must be an array of operations`);
    }
    rule.do.forEach((/** @type {unknown} */ op, /** @type {number} */ j) =>
      checkOp(op, `${what}.do[${j}]`),
    );
    sc.rules.push({
      method: string(rule, "method", what),
      params: Object.hasOwn(rule, "params") ? rule.params : MISSING,
      program: rule.do,
    });
  });
}

/**
 * A scenario file's text, checked.
 * @param {string} text
 * @returns {Scenario}
 */
export function parseScenario(text) {
  /** @type {unknown} */
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new FormatError(`not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const top = object(v, "the scenario");
  onlyKeys(
    top,
    ["description", "role", "options", "host", "script", "known_failure"],
    "the scenario",
  );
  string(top, "description", "the scenario");
  const role = string(top, "role", "the scenario");
  if (role !== "agent" && role !== "client") {
    throw new FormatError(`\`role\` must be "agent" or "client", not ${JSON.stringify(role)}`);
  }
  /** @type {Scenario} */
  const sc = {
    role,
    requireAuth: false,
    unstable: null,
    rules: [],
    script: [],
    knownFailure: null,
  };
  if (Object.hasOwn(top, "options")) {
    parseOptions(top, sc);
  }
  if (Object.hasOwn(top, "host")) {
    parseHost(top, sc);
  }
  if (!Array.isArray(top.script)) {
    throw new FormatError("`script` must be an array of steps");
  }
  sc.script = top.script.map((/** @type {unknown} */ s, /** @type {number} */ i) =>
    checkStep(s, `script[${i}]`),
  );
  if (Object.hasOwn(top, "known_failure")) {
    sc.knownFailure = string(top, "known_failure", "the scenario");
  }
  return sc;
}

// ---------------------------------------------------------------------------
// Patterns and templates.

/** Where a value parts from a pattern. */
export class Mismatch extends Error {
  name = "Mismatch";

  /**
   * @param {string} path a JSON pointer
   * @param {string} expected
   * @param {string} got
   */
  constructor(path, expected, got) {
    super(`at ${path || "(top level)"}: expected ${expected}, got ${got}`);
    this.path = path;
    this.expected = expected;
    this.got = got;
  }

  /**
   * @param {string} what `frame` or `event`
   * @param {unknown} pattern
   * @param {unknown} actual
   */
  describe(what, pattern, actual) {
    const at = this.path || "(top level)";
    return (
      `${what} does not match, at ${at}: expected ${this.expected}, got ${this.got}\n` +
      `  expected ${what}: ${short(pattern)}\n` +
      `  got ${what}:      ${short(actual)}`
    );
  }
}

/** @param {string} key */
function pointerToken(key) {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * @param {unknown} v
 * @returns {v is number}
 */
function isNumber(v) {
  return typeof v === "number";
}

/**
 * Numbers by value (1 equals 1.0), booleans never equal numbers, everything
 * else structurally.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function jsonEq(a, b) {
  if (isNumber(a) || isNumber(b)) {
    return a === b;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const entries = Object.entries(a);
    return (
      entries.length === Object.keys(b).length &&
      entries.every(([k, v]) => Object.hasOwn(b, k) && jsonEq(v, b[k]))
    );
  }
  return a === b;
}

/**
 * Throws {@link Mismatch} where `actual` parts from `pattern`. `known` holds
 * the captures so far; new ones go to `bound` (kept by the caller only when
 * the whole pattern matched).
 * @param {unknown} pattern
 * @param {unknown} actual
 * @param {Captures} known
 * @param {Captures} bound
 */
export function matches(pattern, actual, known, bound) {
  matchAt(pattern, actual, "", known, bound);
}

/**
 * A pattern string's own meaning (`$$...`, `$any`, `$absent`, `$capture:`,
 * `$ref:`); false for a literal string.
 * @param {string} p
 * @param {unknown} a
 * @param {string} path
 * @param {Captures} known
 * @param {Captures} bound
 * @returns {boolean} whether `p` was a placeholder (and matched)
 */
function matchPlaceholder(p, a, path, known, bound) {
  if (p.startsWith("$$")) {
    if (a === p.slice(1)) {
      return true;
    }
    throw new Mismatch(path, short(p.slice(1)), short(a));
  }
  if (p === "$any") {
    return true;
  }
  if (p === "$absent") {
    throw new Mismatch(path, '"$absent" (only valid as the value of an object member)', short(a));
  }
  if (p.startsWith("$capture:")) {
    bound.set(p.slice("$capture:".length), a);
    return true;
  }
  if (p.startsWith("$ref:")) {
    const name = p.slice("$ref:".length);
    const has = bound.has(name) || known.has(name);
    if (!has) {
      throw new Mismatch(path, `${p} (but nothing was captured under \`${name}\`)`, short(a));
    }
    const v = bound.has(name) ? bound.get(name) : known.get(name);
    if (jsonEq(v, a)) {
      return true;
    }
    throw new Mismatch(path, `${short(v)} (${p})`, short(a));
  }
  return false;
}

/**
 * @param {unknown} alternatives
 * @param {unknown} a
 * @param {string} path
 * @param {Captures} known
 * @param {Captures} bound
 */
function matchOneOf(alternatives, a, path, known, bound) {
  if (!Array.isArray(alternatives)) {
    throw new Mismatch(path, "`$one_of` with an array", "a pattern error");
  }
  /** @type {string[]} */
  const why = [];
  for (const alt of alternatives) {
    const trial = new Map(bound);
    try {
      matchAt(alt, a, path, known, trial);
    } catch (e) {
      if (!(e instanceof Mismatch)) throw e;
      why.push(e.expected);
      continue;
    }
    bound.clear();
    trial.forEach((v, k) => bound.set(k, v));
    return;
  }
  throw new Mismatch(path, `one of [${why.join(", ")}]`, short(a));
}

/**
 * @param {JsonObject} p
 * @param {unknown} a
 * @param {string} path
 * @param {Captures} known
 * @param {Captures} bound
 */
function matchObject(p, a, path, known, bound) {
  if (!isObject(a)) {
    throw new Mismatch(path, "an object", short(a));
  }
  for (const [key, sub] of Object.entries(p)) {
    const here = `${path}/${pointerToken(key)}`;
    if (sub === "$absent") {
      if (Object.hasOwn(a, key)) {
        throw new Mismatch(here, "no such member", short(a[key]));
      }
      continue;
    }
    if (!Object.hasOwn(a, key)) {
      throw new Mismatch(here, short(sub), "no such member");
    }
    matchAt(sub, a[key], here, known, bound);
  }
}

/**
 * @param {unknown[]} p
 * @param {unknown} a
 * @param {string} path
 * @param {Captures} known
 * @param {Captures} bound
 */
function matchArray(p, a, path, known, bound) {
  if (!Array.isArray(a)) {
    throw new Mismatch(path, "an array", short(a));
  }
  if (p.length !== a.length) {
    throw new Mismatch(path, `an array of ${p.length} items`, `${a.length} items: ${short(a)}`);
  }
  p.forEach((sub, i) => matchAt(sub, a[i], `${path}/${i}`, known, bound));
}

/**
 * @param {unknown} p
 * @param {unknown} a
 * @param {string} path
 * @param {Captures} known
 * @param {Captures} bound
 */
function matchAt(p, a, path, known, bound) {
  if (typeof p === "string" && matchPlaceholder(p, a, path, known, bound)) {
    return;
  }
  if (isObject(p) && Object.keys(p).length === 1 && Object.hasOwn(p, "$one_of")) {
    matchOneOf(p.$one_of, a, path, known, bound);
  } else if (isObject(p)) {
    matchObject(p, a, path, known, bound);
  } else if (Array.isArray(p)) {
    matchArray(p, a, path, known, bound);
  } else if (!jsonEq(p, a)) {
    throw new Mismatch(path, short(p), short(a));
  }
}

/**
 * A template as a value: `"$ref:name"` becomes the captured value, `"$$x"`
 * the string `"$x"`; other placeholders are errors.
 * @param {unknown} template
 * @param {Captures} known
 * @returns {unknown}
 */
export function fill(template, known) {
  if (typeof template === "string") {
    if (template.startsWith("$$")) {
      return template.slice(1);
    }
    if (template.startsWith("$ref:")) {
      const name = template.slice("$ref:".length);
      if (!known.has(name)) {
        throw new StepFailure(`${template}: nothing was captured under \`${name}\``);
      }
      return known.get(name);
    }
    if (template === "$any" || template === "$absent" || template.startsWith("$capture:")) {
      throw new StepFailure(`${template} is a pattern, not a value`);
    }
    return template;
  }
  if (Array.isArray(template)) {
    return template.map((v) => fill(v, known));
  }
  if (isObject(template)) {
    if (Object.hasOwn(template, "$one_of")) {
      throw new StepFailure("`$one_of` is a pattern, not a value");
    }
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fill(v, known)]));
  }
  return template;
}

/**
 * Pairs each pattern with a distinct value (backtracking; lists are
 * short). Captures of earlier pairs are visible to later ones.
 * @param {unknown[]} patterns
 * @param {unknown[]} values
 * @param {boolean[]} used
 * @param {Captures} known
 * @param {Captures} bound
 * @returns {boolean}
 */
export function pairUp(patterns, values, used, known, bound) {
  if (patterns.length === 0) {
    return true;
  }
  const [first, ...rest] = patterns;
  for (let j = 0; j < values.length; j++) {
    if (used[j]) {
      continue;
    }
    const trial = new Map(bound);
    try {
      matches(first, values[j], new Map([...known, ...bound]), trial);
    } catch (e) {
      if (!(e instanceof Mismatch)) throw e;
      continue;
    }
    used[j] = true;
    if (pairUp(rest, values, used, known, trial)) {
      bound.clear();
      trial.forEach((v, k) => bound.set(k, v));
      return true;
    }
    used[j] = false;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Typed errors: the binding's errors as the README's table writes them.

/**
 * @param {unknown} e
 * @returns {JsonObject}
 */
export function errorJson(e) {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof RequestError) {
    /** @type {JsonObject} */
    const v = { kind: "Rpc", code: e.code, message: e.message };
    if (e.data !== undefined && e.data !== null) {
      v.data = e.data;
    }
    return v;
  }
  if (e instanceof RefusedError) {
    // CapabilityError included
    return { ...e.details, kind: e.kind ? `Refused.${e.kind}` : "Refused", message };
  }
  /** @type {[Function, string][]} */
  const kinds = [
    [ConnectionClosed, "Closed"],
    [Cancelled, "Cancelled"],
    [RequestTimeout, "Timeout"],
    [InvalidParams, "InvalidParams"],
    [InvalidResult, "InvalidResult"],
  ];
  for (const [cls, kind] of kinds) {
    if (e instanceof cls) {
      return { kind, message };
    }
  }
  return { kind: `Other: ${e instanceof Error ? e.name : typeof e}`, message };
}

/**
 * Runs a call (or notify, ...) and writes its outcome: `{ result }` (`null`
 * for nothing) or `{ error }`. Never rejects.
 * @param {() => Promise<unknown>} work
 * @returns {Promise<JsonObject>}
 */
export async function outcome(work) {
  try {
    const result = await work();
    return { result: result === undefined ? null : result };
  } catch (e) {
    // every failure is an outcome
    return { error: errorJson(e) };
  }
}

// ---------------------------------------------------------------------------
// One scenario's run.

/**
 * A line the peer read: a JSON frame, a line that is not JSON, or the end of
 * the stream.
 * @typedef {{ kind: "frame", value: unknown } | { kind: "garbage", text: string } | { kind: "eof" }} Line
 */

/**
 * A queue whose `get` gives up after a while without losing what comes
 * later (Python's `asyncio.Queue` with `wait_for`).
 * @template T
 */
class Queue {
  /** @type {T[]} */
  items = [];
  /** @type {((item: T) => void)[]} */
  waiters = [];

  /** @param {T} item */
  put(item) {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter(item);
    } else {
      this.items.push(item);
    }
  }

  empty() {
    return this.items.length === 0;
  }

  /** @returns {T | undefined} */
  takeNow() {
    return this.items.shift();
  }

  /**
   * The next item, or `undefined` if none comes within `ms`.
   * @param {number} ms
   * @returns {Promise<T | undefined>}
   */
  get(ms) {
    if (this.items.length > 0) {
      return Promise.resolve(this.items.shift());
    }
    return new Promise((resolve) => {
      /** @param {T} item */
      const waiter = (item) => {
        clearTimeout(timer);
        resolve(item);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolve(undefined);
      }, ms);
      this.waiters.push(waiter);
    });
  }
}

/** @param {number} ms */
function seconds(ms) {
  return `${ms / 1000} s`;
}

/**
 * The libacp side's handler: picks a rule, runs its program.
 * @implements {Handler}
 */
class Host {
  /** @param {Run} run */
  constructor(run) {
    this.run = run;
  }

  /**
   * @param {string} method
   * @param {unknown} params
   * @param {import("libacp").RequestContext} context
   */
  onRequest(method, params, context) {
    const run = this.run;
    for (const rule of run.sc.rules) {
      if (rule.method !== method) {
        continue;
      }
      /** @type {Captures} */
      const bound = new Map();
      if (rule.params !== MISSING) {
        try {
          matches(rule.params, params ?? null, run.captures, bound);
        } catch (e) {
          if (!(e instanceof Mismatch)) throw e;
          continue;
        }
      }
      bound.forEach((v, k) => run.captures.set(k, v));
      // The program goes on if the request is superseded (see the module's docs).
      return run.spawn(run.program(rule, method, context));
    }
    throw new MethodNotFound(method);
  }

  /**
   * @param {string} method
   * @param {unknown} params
   */
  onNotification(method, params) {
    this.run.emit({ event: "notification", method, params: params ?? null });
  }
}

/** One scenario's run: the connection, the peer's socket, the queues. */
class Run {
  /** @param {Scenario} sc */
  constructor(sc) {
    this.sc = sc;
    /** @type {Captures} */
    this.captures = new Map();
    /** @type {Map<string, ReturnType<typeof deferred<void>>>} */
    this.gates = new Map();
    /** @type {Queue<JsonObject>} */
    this.events = new Queue();
    /** @type {Queue<Line>} */
    this.lines = new Queue();
    /** @type {string[]} */
    this.problems = [];
    /** @type {Promise<unknown>[]} */
    this.tasks = [];
    /** @type {Connection | null} */
    this.conn = null;
    /** @type {net.Socket | null} */
    this.sock = null;
    this.writeOpen = true;
    /** Resolved at the end: the programs still waiting give way. */
    this.stop = deferred();
    this.stopped = false;
  }

  // -- shared state

  /** @param {JsonObject} event */
  emit(event) {
    this.events.put(event);
  }

  /** @param {string} what */
  problem(what) {
    this.problems.push(what);
  }

  /**
   * @template T
   * @param {Promise<T>} task
   * @returns {Promise<T>}
   */
  spawn(task) {
    this.tasks.push(task);
    return task;
  }

  /** @param {string} name */
  gate(name) {
    let gate = this.gates.get(name);
    if (gate === undefined) {
      gate = deferred();
      this.gates.set(name, gate);
    }
    return gate;
  }

  /**
   * Waits for `promise`, or until the run stops.
   * @param {Promise<unknown>} promise
   */
  async until(promise) {
    await Promise.race([promise, this.stop.promise]);
  }

  /** @returns {Connection} */
  get connection() {
    if (this.conn === null) {
      throw new Error("no connection yet");
    }
    return this.conn;
  }

  // -- the host's programs

  /**
   * @param {Rule} rule
   * @param {string} method
   * @param {import("libacp").RequestContext} context
   */
  async program(rule, method, context) {
    const what = `the host's \`${method}\` handler`;
    for (const op of rule.program) {
      if (this.stopped) {
        break;
      }
      try {
        const answer = await this.operation(op, context, what);
        if (answer !== undefined) {
          return answer.result;
        }
      } catch (e) {
        if (!(e instanceof StepFailure)) throw e;
        this.problem(`${what}: ${e.message}`);
        break;
      }
    }
    // Ends without answering: what the engine's dropped responder answers.
    throw new RequestError(-32603, "Internal error", "the host's program ended without answering");
  }

  /**
   * One operation of a program: `{ result }` when it answers, `undefined`
   * to go on; throws `RequestError` for an `error` operation, and a
   * failed `call`'s own error with `escape`.
   * @param {JsonObject} op
   * @param {import("libacp").RequestContext} context
   * @param {string} what
   * @returns {Promise<{ result: unknown } | undefined>}
   */
  async operation(op, context, what) {
    if (Object.hasOwn(op, "respond")) {
      return { result: fill(op.respond, this.captures) };
    }
    if (Object.hasOwn(op, "error")) {
      const e = /** @type {JsonObject} */ (fill(op.error, this.captures));
      throw new RequestError(e.code, e.message, e.data);
    }
    if (Object.hasOwn(op, "notify") || Object.hasOwn(op, "call")) {
      await this.send(op, what);
    } else if (Object.hasOwn(op, "wait_for_cancel")) {
      await this.until(aborted(context.signal));
    } else if (Object.hasOwn(op, "wait")) {
      await this.until(this.gate(op.wait).promise);
    } else if (Object.hasOwn(op, "emit")) {
      this.emit({ event: "emit", value: fill(op.emit, this.captures) });
    }
    return undefined;
  }

  /**
   * A program's `call` or `notify`. With `escape`, a failed call's error
   * is rethrown: it escapes the handler as the binding's own error.
   * @param {JsonObject} op
   * @param {string} what
   */
  async send(op, what) {
    const verb = Object.hasOwn(op, "call") ? "call" : "notify";
    const name = op[verb];
    const params = Object.hasOwn(op, "params") ? fill(op.params, this.captures) : undefined;
    const conn = this.connection;
    /** @type {{ error: unknown } | undefined} */
    let escaped;
    const result = await outcome(async () => {
      try {
        return await (verb === "call" ? conn.request(name, params) : conn.notify(name, params));
      } catch (e) {
        if (op.escape === true) {
          escaped = { error: e };
        }
        throw e;
      }
    });
    if (escaped !== undefined) {
      if (Object.hasOwn(op, "as")) {
        this.captures.set(op.as, result);
      }
      throw escaped.error;
    }
    if (Object.hasOwn(op, "as")) {
      this.captures.set(op.as, result);
    } else if (Object.hasOwn(result, "error")) {
      this.problem(`${what}: ${verb} ${name} failed: ${short(result.error)}`);
    }
  }

  // -- the peer's wire

  /** Turns the peer's incoming bytes into lines (a queue: timeouts lose nothing). */
  readLines() {
    const sock = /** @type {net.Socket} */ (this.sock);
    let buffer = "";
    let ended = false;
    const end = () => {
      if (!ended) {
        ended = true;
        this.lines.put({ kind: "eof" });
      }
    };
    sock.setEncoding("utf8");
    sock.on("data", (/** @type {string} */ chunk) => {
      buffer += chunk;
      let i;
      while ((i = buffer.indexOf("\n")) >= 0) {
        this.line(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
      }
    });
    sock.on("end", end);
    sock.on("close", end);
    sock.on("error", (/** @type {NodeJS.ErrnoException} */ e) => {
      // Write errors are the `send` step's; a read error ends the stream.
      if (e.syscall === "read") {
        this.lines.put({ kind: "garbage", text: `(read error: ${e.message})` });
      }
    });
  }

  /** @param {string} raw */
  line(raw) {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    try {
      this.lines.put({ kind: "frame", value: JSON.parse(text) });
    } catch {
      this.lines.put({ kind: "garbage", text });
    }
  }

  /**
   * The next line (the end of the stream stays in the queue), `undefined`
   * if none comes within `ms`.
   * @param {number} ms
   */
  async nextLine(ms) {
    const line = await this.lines.get(ms);
    if (line?.kind === "eof") {
      this.lines.put(line);
    }
    return line;
  }

  async nextFrame() {
    const line = await this.nextLine(STEP_LIMIT_MS);
    if (line === undefined) {
      throw new StepFailure(`no frame within ${seconds(STEP_LIMIT_MS)}`);
    }
    if (line.kind === "eof") {
      throw new StepFailure("got end of stream instead of a frame");
    }
    if (line.kind === "garbage") {
      throw new StepFailure(`got a line that is not JSON: ${JSON.stringify(line.text)}`);
    }
    return line.value;
  }

  async nextEvent(ms = STEP_LIMIT_MS) {
    const event = await this.events.get(ms);
    if (event === undefined) {
      throw new StepFailure(`no host event within ${seconds(ms)}`);
    }
    return event;
  }

  /**
   * @param {string} what `frame` or `event`
   * @param {unknown[]} patterns
   * @param {unknown[]} got
   */
  unordered(what, patterns, got) {
    const known = this.captures;
    /** @type {Captures} */
    const bound = new Map();
    if (
      pairUp(
        patterns,
        got,
        got.map(() => false),
        known,
        bound,
      )
    ) {
      bound.forEach((v, k) => this.captures.set(k, v));
      return;
    }
    const report = [`the ${what}s do not match the patterns in any order`];
    got.forEach((v, i) => report.push(`  got ${what} ${i}: ${short(v)}`));
    patterns.forEach((p, i) => report.push(...this.whyUnpaired(what, p, i, got)));
    throw new StepFailure(report.join("\n"));
  }

  /**
   * Which values one pattern of an `_unordered` step matches, and why not.
   * @param {string} what
   * @param {unknown} p
   * @param {number} i
   * @param {unknown[]} got
   */
  whyUnpaired(what, p, i, got) {
    /** @type {number[]} */
    const fits = [];
    /** @type {string[]} */
    const why = [];
    got.forEach((v, j) => {
      try {
        matches(p, v, this.captures, new Map());
        fits.push(j);
      } catch (e) {
        if (!(e instanceof Mismatch)) throw e;
        why.push(
          `    vs ${what} ${j}: at ${e.path || "(top level)"}: expected ${e.expected}, got ${e.got}`,
        );
      }
    });
    const report = [`  pattern ${i}: ${short(p)} matches ${what}s [${fits.join(", ")}]`];
    return fits.length === 0 ? [...report, ...why] : report;
  }

  // -- the script

  /** @param {Step} s */
  async step(s) {
    const arg = s.obj[s.verb];
    switch (s.verb) {
      case "send":
        return this.sendFrame(arg);
      case "expect":
        return this.expect(arg);
      case "expect_unordered":
        return this.expectUnordered(arg);
      case "expect_event":
        return this.expectEvent(arg);
      case "expect_events_unordered":
        return this.expectEventsUnordered(arg);
      case "expect_no_frame":
        return this.expectNoFrame(arg);
      case "expect_no_event":
        return this.expectNoEvent(arg);
      case "close":
        return this.closeWrite();
      case "expect_closed":
        return this.expectClosed();
      default:
        return this.action(s.obj);
    }
  }

  /** @param {unknown} arg */
  async sendFrame(arg) {
    const line = typeof arg === "string" ? arg : JSON.stringify(fill(arg, this.captures));
    if (!this.writeOpen) {
      throw new StepFailure("the peer already closed its write side");
    }
    const sock = /** @type {net.Socket} */ (this.sock);
    /** @type {Promise<Error | null | undefined>} */
    const written = new Promise((resolve) => sock.write(`${line}\n`, resolve));
    let error;
    try {
      error = await within(written, "the write", STEP_LIMIT_MS);
    } catch {
      throw new StepFailure("could not write within the step limit");
    }
    if (error) {
      throw new StepFailure(`write failed: ${error.message}`);
    }
  }

  /** @param {unknown} pattern */
  async expect(pattern) {
    const frame = await this.nextFrame();
    this.match("frame", pattern, frame);
  }

  /**
   * Matches one frame or event, keeping its captures.
   * @param {string} what
   * @param {unknown} pattern
   * @param {unknown} value
   */
  match(what, pattern, value) {
    /** @type {Captures} */
    const bound = new Map();
    try {
      matches(pattern, value, this.captures, bound);
    } catch (e) {
      if (!(e instanceof Mismatch)) throw e;
      throw new StepFailure(e.describe(what, pattern, value));
    }
    bound.forEach((v, k) => this.captures.set(k, v));
  }

  /** @param {unknown[]} patterns */
  async expectUnordered(patterns) {
    const frames = [];
    for (let i = 0; i < patterns.length; i++) {
      try {
        frames.push(await this.nextFrame());
      } catch (e) {
        if (!(e instanceof StepFailure)) throw e;
        throw new StepFailure(`after ${frames.length} of ${patterns.length} frames: ${e.message}`);
      }
    }
    this.unordered("frame", patterns, frames);
  }

  /** @param {unknown} pattern */
  async expectEvent(pattern) {
    const event = await this.nextEvent();
    this.match("event", pattern, event);
  }

  /** @param {unknown[]} patterns */
  async expectEventsUnordered(patterns) {
    const events = [];
    for (let i = 0; i < patterns.length; i++) {
      try {
        events.push(await this.nextEvent());
      } catch (e) {
        if (!(e instanceof StepFailure)) throw e;
        throw new StepFailure(`after ${events.length} of ${patterns.length} events: ${e.message}`);
      }
    }
    this.unordered("event", patterns, events);
  }

  /** @param {number} ms */
  async expectNoFrame(ms) {
    const line = await this.nextLine(ms);
    if (line === undefined) {
      return;
    }
    if (line.kind === "eof") {
      throw new StepFailure("got end of stream: libacp closed the connection");
    }
    if (line.kind === "garbage") {
      throw new StepFailure(
        `got an unexpected line that is not JSON: ${JSON.stringify(line.text)}`,
      );
    }
    throw new StepFailure(`got an unexpected frame: ${short(line.value)}`);
  }

  /** @param {number} ms */
  async expectNoEvent(ms) {
    let event;
    if (this.events.empty() && ms > 0) {
      event = await this.events.get(ms);
    } else {
      event = this.events.takeNow();
    }
    if (event !== undefined) {
      throw new StepFailure(`got an unexpected host event: ${short(event)}`);
    }
  }

  closeWrite() {
    if (this.writeOpen) {
      this.writeOpen = false;
      this.sock?.end();
    }
  }

  async expectClosed() {
    const line = await this.nextLine(STEP_LIMIT_MS);
    if (line === undefined) {
      throw new StepFailure(`the connection was still open after ${seconds(STEP_LIMIT_MS)}`);
    }
    if (line.kind === "garbage") {
      throw new StepFailure(`expected end of stream, got a line: ${JSON.stringify(line.text)}`);
    }
    if (line.kind !== "eof") {
      throw new StepFailure(`expected end of stream, got a frame: ${short(line.value)}`);
    }
  }

  /** @param {JsonObject} step */
  async action(step) {
    const name = Object.hasOwn(step, "as") ? /** @type {string} */ (step.as) : undefined;
    const work = this.actionWork(step);
    const settled = outcome(work);
    if (name !== undefined) {
      this.spawn(settled.then((result) => this.emit({ event: "returned", as: name, ...result })));
      return;
    }
    let result;
    try {
      result = await within(settled, "the action", STEP_LIMIT_MS);
    } catch {
      throw new StepFailure(`did not complete within ${seconds(STEP_LIMIT_MS)}`);
    }
    if (Object.hasOwn(result, "error")) {
      throw new StepFailure(`failed: ${short(result.error)}`);
    }
  }

  /**
   * What an action does, started when called (templates are filled first).
   * @param {JsonObject} step
   * @returns {() => Promise<unknown>}
   */
  actionWork(step) {
    const conn = this.connection;
    switch (step.action) {
      case "call":
      case "notify": {
        const params = Object.hasOwn(step, "params") ? fill(step.params, this.captures) : undefined;
        return step.action === "call"
          ? () => conn.request(step.method, params)
          : () => conn.notify(step.method, params);
      }
      case "cancel_session": {
        const sid = fill(step.sessionId, this.captures);
        if (typeof sid !== "string") {
          throw new StepFailure("`sessionId` must be a string");
        }
        return () => conn.cancelSession(sid);
      }
      case "release":
        this.gate(step.gate).resolve();
        return async () => null;
      default: // close
        return () => conn.close();
    }
  }

  // -- the whole run

  /**
   * Runs the scenario.
   * @returns {Promise<string | null>} why it failed, or null
   */
  async run() {
    const [libEnd, peerEnd] = socketPair();
    /** @type {import("libacp").ConnectionOptions & { role: import("libacp").Role }} */
    const options = { role: this.sc.role };
    if (this.sc.requireAuth) {
      options.requireAuth = true;
    }
    if (this.sc.unstable !== null) {
      options.unstable = this.sc.unstable;
    }
    try {
      this.conn = Connection.fromFds(libEnd, libEnd, new Host(this), options);
    } catch (e) {
      if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
      // an option the binding lacks
      fs.closeSync(libEnd);
      fs.closeSync(peerEnd);
      return `the binding cannot make this connection: ${e.message}`;
    }
    this.sock = new net.Socket({
      fd: peerEnd,
      readable: true,
      writable: true,
      allowHalfOpen: true,
    });
    this.readLines();
    try {
      return await within(this.script(), "the scenario", SCENARIO_LIMIT_MS);
    } catch (e) {
      return `the scenario took over ${seconds(SCENARIO_LIMIT_MS)} (${String(e)})`;
    } finally {
      await this.teardown();
    }
  }

  /** @returns {Promise<string | null>} */
  async script() {
    for (const [i, s] of this.sc.script.entries()) {
      /** @type {string[]} */
      const details = [];
      try {
        await this.step(s);
      } catch (e) {
        details.push(e instanceof StepFailure ? e.message : `the runner failed: ${stackOf(e)}`);
      }
      details.push(...this.problems);
      this.problems.length = 0;
      if (details.length > 0) {
        const text = details.join("\n").replaceAll("\n", "\n    ");
        return `step ${i + 1} ${s.text}\n    ${text}`;
      }
    }
    if (this.problems.length > 0) {
      return `after the last step\n    ${this.problems.join("\n    ")}`;
    }
    return null;
  }

  async teardown() {
    this.stopped = true;
    this.stop.resolve();
    if (this.conn !== null) {
      await within(this.conn.close(), "closing the connection", STEP_LIMIT_MS).catch(() => {});
    }
    await within(Promise.allSettled(this.tasks), "the host's tasks", STEP_LIMIT_MS).catch(() => {});
    this.sock?.destroy();
  }
}

/**
 * Resolves once `signal` aborts.
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function aborted(signal) {
  if (signal.aborted) {
    return Promise.resolve();
  }
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

/** @param {unknown} e */
function stackOf(e) {
  return e instanceof Error ? (e.stack ?? String(e)) : String(e);
}

/**
 * Runs one scenario.
 * @param {Scenario} sc
 * @returns {Promise<string | null>} why it failed, or null
 */
export function runScenario(sc) {
  return new Run(sc).run();
}
