/**
 * The options every constructor takes, checked here (a wrong type is a
 * `TypeError`, a bad value a `RangeError`, both naming the option; nothing
 * is started then) and passed to the native module. Durations are
 * milliseconds.
 */

import { debuglog } from "node:util";

import type { NativeOptions } from "../native";

/** A frame as the trace hook sees it: `"in"` (read) or `"out"` (written). */
export type Direction = "in" | "out";

/** Something the engine handled on its own (see `ConnectionOptions.events`). */
export interface EngineEvent {
  /**
   * `"oversized_frame"`, `"invalid_frame"`, `"bad_header"`,
   * `"unmatched_response"`, `"duplicate_request_id"`,
   * `"cancel_for_unknown_request"`, `"invalid_cancel"`, `"ignored"`,
   * `"handler_panicked"`, `"served"` (a request the core's `fs`/`terminal`
   * service answered for the host) or `"closed"` (the core's wording, the
   * same in every binding).
   */
  kind: string;
  /** A readable sentence. */
  message: string;
  /** The details (size, id, error, reason, ...). */
  details: Record<string, unknown>;
}

/** Connection settings (every field optional; defaults are the core's). */
export interface ConnectionOptions {
  /** `"ndjson"` (default) or `"content-length"`. */
  framing?: "ndjson" | "content-length";
  /** Largest frame accepted from the peer, in bytes (default 64 MiB). */
  maxFrameSize?: number;
  /** Default timeout of every outgoing call, in milliseconds (default none). */
  requestTimeout?: number;
  /** On close, how long queued frames may take to be written (default 2000 ms). */
  flushTimeout?: number;
  /** Outgoing frames queued before `notify` waits (default 1024). */
  outgoingQueue?: number;
  /** Incoming frames queued for dispatch before the reader waits (default 1024). */
  incomingQueue?: number;
  /**
   * Every frame, both ways: a callback `(direction, frame)` (called on the
   * JavaScript thread, after the fact, in order), or `true`/`"debug"` for
   * Node's `util.debuglog("libacp")` (shown with `NODE_DEBUG=libacp`).
   */
  trace?: ((direction: Direction, frame: string) => void) | boolean | "debug";
  /** Engine events (malformed frames, stray answers, the close, ...). */
  events?: (event: EngineEvent) => void;
  /** Agent side: `session/new|load|resume` need `authenticate` first. */
  requireAuth?: boolean;
  /** Client side: fold `session/update`s into `sessionSnapshot()`. */
  sessionModel?: boolean;
  /** Client side: answer `fs/*` in the core, inside each session's cwd. */
  fs?: boolean;
  /** Client side: answer `terminal/*` in the core with real processes. */
  terminals?: boolean;
}

/** How to start an agent process (client side). */
export interface SpawnOptions extends ConnectionOptions {
  /** Its working directory (default: this process's). */
  cwd?: string;
  /** Variables added to this process's environment (or the whole environment with `clearEnv`). */
  env?: Record<string, string>;
  /** Start from an empty environment. */
  clearEnv?: boolean;
  /** Each line the agent writes to its stderr (default: this process's stderr). */
  stderr?: (line: string) => void;
  /**
   * The close ladder's waits in milliseconds: after closing the agent's
   * stdin and again after SIGTERM, before SIGKILL (default 2000 each), or a
   * pair `[afterStdinClose, afterSigterm]`.
   */
  shutdownGrace?: number | [number, number];
}

const CONNECTION_KEYS = [
  "framing",
  "maxFrameSize",
  "requestTimeout",
  "flushTimeout",
  "outgoingQueue",
  "incomingQueue",
  "trace",
  "events",
  "requireAuth",
  "sessionModel",
  "fs",
  "terminals",
];
const SPAWN_KEYS = ["cwd", "env", "clearEnv", "stderr", "shutdownGrace"];

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

function expect(ok: boolean, name: string, what: string, value: unknown): void {
  if (!ok) {
    throw new TypeError(`${name} must be ${what}, not ${typeName(value)}`);
  }
}

function number(o: Record<string, unknown>, name: string): number | undefined {
  const v = o[name];
  if (v === undefined || v === null) {
    return undefined;
  }
  expect(typeof v === "number", name, "a number", v);
  return v as number;
}

function bool(o: Record<string, unknown>, name: string): boolean | undefined {
  const v = o[name];
  if (v === undefined || v === null) {
    return undefined;
  }
  expect(typeof v === "boolean", name, "a boolean", v);
  return v as boolean;
}

/** The hooks the native module calls, made from the options. */
export interface Hooks {
  trace: ((arg: [string, string]) => void) | undefined;
  events: ((arg: [string, string, string]) => void) | undefined;
  stderr: ((line: string) => void) | undefined;
}

const debug = debuglog("libacp");

/** Checks `options` (allowing `extra` keys) and converts them. */
export function nativeOptions(
  options: Record<string, unknown> | undefined,
  spawn: boolean,
  extra: readonly string[] = [],
): { native: NativeOptions; hooks: Hooks } {
  const o = options ?? {};
  expect(typeof o === "object" && !Array.isArray(o), "options", "an object", o);
  const known = new Set([...CONNECTION_KEYS, ...(spawn ? SPAWN_KEYS : []), ...extra]);
  for (const key of Object.keys(o)) {
    if (!known.has(key)) {
      throw new TypeError(
        `unknown option ${JSON.stringify(key)} (the options are: ${[...known].join(", ")})`,
      );
    }
  }
  const native: NativeOptions = {};
  const framing = o.framing;
  if (framing !== undefined && framing !== null) {
    expect(typeof framing === "string", "framing", "a string", framing);
    native.framing = framing as string;
  }
  native.maxFrameSize = number(o, "maxFrameSize");
  native.requestTimeoutMs = number(o, "requestTimeout");
  native.flushTimeoutMs = number(o, "flushTimeout");
  native.outgoingQueue = number(o, "outgoingQueue");
  native.incomingQueue = number(o, "incomingQueue");
  native.requireAuth = bool(o, "requireAuth");
  native.sessionModel = bool(o, "sessionModel");
  native.fs = bool(o, "fs");
  native.terminals = bool(o, "terminals");
  // The transport is read on this thread unless LIBACP_NODE_DRIVE_READS=0
  // (an engine thread then reads: the tests run both paths).
  native.driveReads = process.env.LIBACP_NODE_DRIVE_READS !== "0";
  const hooks: Hooks = { trace: undefined, events: undefined, stderr: undefined };
  const trace = o.trace;
  if (trace === true || trace === "debug") {
    hooks.trace = ([direction, frame]) => debug("%s %s", direction, frame);
  } else if (typeof trace === "function") {
    const fn = trace as (direction: Direction, frame: string) => void;
    hooks.trace = ([direction, frame]) => fn(direction as Direction, frame);
  } else if (trace !== undefined && trace !== null && trace !== false) {
    throw new TypeError(`trace must be a function, true or "debug", not ${typeName(trace)}`);
  }
  const events = o.events;
  if (events !== undefined && events !== null) {
    expect(typeof events === "function", "events", "a function", events);
    const fn = events as (event: EngineEvent) => void;
    hooks.events = ([kind, message, details]) =>
      fn({ kind, message, details: JSON.parse(details) as Record<string, unknown> });
  }
  if (spawn) {
    const cwd = o.cwd;
    if (cwd !== undefined && cwd !== null) {
      expect(typeof cwd === "string", "cwd", "a string", cwd);
      native.cwd = cwd as string;
    }
    const env = o.env;
    if (env !== undefined && env !== null) {
      expect(typeof env === "object" && !Array.isArray(env), "env", "an object", env);
      for (const [k, v] of Object.entries(env as Record<string, unknown>)) {
        expect(typeof v === "string", `env.${k}`, "a string", v);
      }
      native.env = env as Record<string, string>;
    }
    native.clearEnv = bool(o, "clearEnv");
    const stderr = o.stderr;
    if (stderr !== undefined && stderr !== null) {
      expect(typeof stderr === "function", "stderr", "a function", stderr);
      hooks.stderr = stderr as (line: string) => void;
      native.stderr = true;
    }
    const grace = o.shutdownGrace;
    if (grace !== undefined && grace !== null) {
      const pair = Array.isArray(grace) ? grace : [grace, grace];
      expect(
        pair.length === 2 && pair.every((g) => typeof g === "number"),
        "shutdownGrace",
        "milliseconds or a pair [afterStdinClose, afterSigterm]",
        grace,
      );
      native.graceAfterStdinCloseMs = pair[0] as number;
      native.graceAfterSigtermMs = pair[1] as number;
    }
  }
  return { native, hooks };
}
