/**
 * The options every constructor takes: the core's one option table
 * (`core/src/options.rs`, names camelCased), checked by the core (an
 * unknown name, a wrong type or an option that does not apply is a
 * `TypeError`, a value out of range a `RangeError`, both with the core's
 * message naming the option; nothing is started then). Durations are
 * milliseconds, sizes bytes. Callbacks (`trace`, `events`, `stderr`) stay
 * here.
 */

import { debuglog } from "node:util";

import type { NativeOption } from "../native";

/** A frame as the trace hook sees it: `"in"` (read) or `"out"` (written). */
export type Direction = "in" | "out";

/** Something the engine handled on its own (see `ConnectionOptions.events`). */
export interface EngineEvent {
  /**
   * `"oversized_frame"`, `"invalid_frame"`, `"bad_header"`,
   * `"unmatched_response"`, `"duplicate_request_id"`,
   * `"cancel_for_unknown_request"`, `"invalid_cancel"`, `"ignored"`,
   * `"handler_panicked"`, `"served"` (a request the core's `fs`/`terminal`
   * service answered for the host), `"payload_rule"` (a part of a message
   * that needs a capability the peer did not advertise: `details` has
   * `rule`, `withheld` (true: removed from our answer; false: received from
   * the peer and delivered), `method`, `field` (a JSON pointer) and
   * `capability`) or `"closed"` (the core's wording, the same in every
   * binding).
   */
  kind: string;
  /** A readable sentence. */
  message: string;
  /** The details (size, id, error, reason, ...). */
  details: Record<string, unknown>;
}

/**
 * Settings every connection takes (every field optional; `undefined` or
 * `null` keeps the core's default). The names, units (milliseconds, bytes)
 * and ranges are the core's one option table (`core/src/options.rs`),
 * camelCased: the same options as every other binding.
 */
export interface CommonOptions {
  /** Largest message accepted from the peer, in bytes (default 64 MiB). */
  maxFrameSize?: number;
  /** Default timeout of every outgoing call, in milliseconds (default none). */
  requestTimeoutMs?: number;
  /**
   * After the peer's end of stream (or on close), how long requests in
   * flight get to answer and queued messages to be written (default 2000 ms).
   */
  flushTimeoutMs?: number;
  /** Outgoing messages queued before `notify` waits (default 1024). */
  outgoingQueue?: number;
  /** Incoming messages queued for dispatch before the reader waits (default 1024). */
  incomingQueue?: number;
  /** Requests from the peer in flight (received, not answered) before the reader waits (default 1024). */
  incomingRequests?: number;
  /**
   * Every frame, both ways: a callback `(direction, frame)` (called on the
   * JavaScript thread, in wire order: see `orderedHooks`), or
   * `true`/`"debug"` for Node's `util.debuglog("libacp")` (shown with
   * `NODE_DEBUG=libacp`).
   */
  trace?: ((direction: Direction, frame: string) => void) | boolean | "debug";
  /**
   * Engine events (malformed frames, stray answers, requests the core
   * served for you, the close, ...), on the JavaScript thread, in wire
   * order: see `orderedHooks`.
   */
  events?: (event: EngineEvent) => void;
  /**
   * Whether `trace` and `events` run in wire order with the handlers
   * (default `true`): a frame or an event reaches its callback after the
   * notifications received before it were handled, and before the answer
   * that follows it on the wire resolves its promise (so after
   * `await prompt()` every `served` event of the turn was seen). `false`:
   * as soon as the engine sees it, never waiting for a suspended
   * notification handler, possibly after that answer.
   */
  orderedHooks?: boolean;
  /**
   * The unstable ACP v1 extensions to speak: `["all"]` or feature names as
   * the Rust SDK names them (`"unstable_session_fork"` or `"session_fork"`).
   * Default none: their methods are then extension methods to the core
   * (passed along unchecked). An unknown name is a `RangeError`.
   */
  unstable?: readonly string[];
  /** Agent side: `session/new|load|resume` need `authenticate` first. */
  requireAuth?: boolean;
  /** Client side: fold `session/update`s into `sessionSnapshot()`. */
  sessionModel?: boolean;
  /** Client side: answer `fs/*` in the core, inside each session's cwd. */
  fs?: boolean;
  /** Client side: answer `terminal/*` in the core with real processes. */
  terminals?: boolean;
}

/** Settings of a connection over a byte stream (stdio, descriptors, a spawned agent). */
export interface ConnectionOptions extends CommonOptions {
  /** `"ndjson"` (default) or `"content-length"`. */
  framing?: "ndjson" | "content-length";
}

/** Name and value pairs: an object, or an array of `[name, value]`. */
export type Pairs = Record<string, string> | readonly (readonly [string, string])[];

/** How to start an agent process (client side). */
export interface SpawnOptions extends ConnectionOptions {
  /** Its working directory (default: this process's). */
  cwd?: string;
  /** Variables added to this process's environment (or the whole environment with `clearEnv`). */
  env?: Pairs;
  /** Start from an empty environment. */
  clearEnv?: boolean;
  /** Each line the agent writes to its stderr (default: this process's stderr). */
  stderr?: (line: string) => void;
  /** On close, how long the agent gets to exit after its stdin is closed, before SIGTERM (default 2000 ms). */
  graceAfterStdinCloseMs?: number;
  /** On close, how long the agent gets to exit after SIGTERM, before SIGKILL (default 2000 ms). */
  graceAfterSigtermMs?: number;
}

/** What the remote transport takes, client and server alike. */
export interface RemoteTransportOptions {
  /** WebSocket pings (and a server's SSE keep-alive comments), ms (default 20000). */
  keepaliveIntervalMs?: number;
  /** Largest WebSocket message, POST body or event accepted, in bytes (default 64 MiB). */
  maxMessageSize?: number;
  /** Messages queued per direction between the network and the engine (default 1024). */
  queue?: number;
}

/** A client connecting to a remote agent by URL ({@link ClientConnection.connect}). */
export interface ConnectOptions extends CommonOptions, RemoteTransportOptions {
  /** Extra HTTP headers sent on the handshake and every request (for example `Authorization`). */
  headers?: Pairs;
  /** A PEM file of CA certificates trusted beside the platform's roots (`wss://`, `https://`). */
  caFile?: string;
  /** Name resolution and TCP connect, ms (default 10000). */
  connectTimeoutMs?: number;
  /** TLS and the HTTP or WebSocket handshake, ms (default 10000). */
  handshakeTimeoutMs?: number;
  /** For `http(s)://` URLs: try a WebSocket upgrade first, fall back to Streamable HTTP. */
  preferWebsocket?: boolean;
  /** Speak HTTP/2 without TLS (h2c) on `http://` (over TLS, ALPN decides). */
  http2PriorKnowledge?: boolean;
}

/** A remote server ({@link serve}): the server's settings and its agent connections'. */
export interface ServeOptions extends CommonOptions, RemoteTransportOptions {
  /** The endpoint's path (default `/acp`). */
  path?: string;
  /** A PEM certificate chain; with `tlsKey` the server speaks TLS only. */
  tlsCert?: string;
  /** The PEM private key of `tlsCert`. */
  tlsKey?: string;
  /** `Origin` values allowed (`*` for any); requests without an `Origin` are always allowed. */
  allowedOrigins?: readonly string[];
  /** Tokens accepted in `Authorization: Bearer`; when set, other requests get 401 before any agent code runs. */
  bearerTokens?: readonly string[];
  /** Remote connections served at once; one more gets 503 (default 4096). */
  maxConnections?: number;
  /** A connection from which nothing arrived for this long is closed, ms (default 60000). */
  idleTimeoutMs?: number;
  /** On shutdown, how long connections with requests in flight get to answer them, ms (default 10000). */
  shutdownGraceMs?: number;
  /** Serve WebSocket upgrades (default true). */
  websocket?: boolean;
  /** Serve Streamable HTTP (default true). */
  streamableHttp?: boolean;
}

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** The hooks the native module calls, made from the options. */
export interface Hooks {
  trace: ((direction: Direction, frame: string) => void) | undefined;
  events: ((event: EngineEvent) => void) | undefined;
  stderr: ((line: string) => void) | undefined;
}

const debug = debuglog("libacp");

/** One option as the native module takes it: the JavaScript value, tagged. */
function tagged(name: string, v: unknown): NativeOption {
  switch (typeof v) {
    case "undefined":
      return { name, type: "null" };
    case "boolean":
      return { name, type: "bool", bool: v };
    case "number":
      return { name, type: "number", number: v };
    case "string":
      return { name, type: "text", text: v };
    case "function":
      return { name, type: "callback" };
  }
  if (v === null) {
    return { name, type: "null" };
  }
  if (Array.isArray(v)) {
    if (v.every((item) => typeof item === "string")) {
      return { name, type: "list", texts: v as string[] };
    }
    if (
      v.every(
        (item) =>
          Array.isArray(item) && item.length === 2 && item.every((x) => typeof x === "string"),
      )
    ) {
      return { name, type: "list", pairs: v as string[][] };
    }
    return invalid(name, "must hold only strings, or only [name, value] pairs of strings");
  }
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const pairs = Object.entries(v as Record<string, unknown>);
    for (const [k, x] of pairs) {
      if (typeof x !== "string") {
        return invalid(name, `values must be strings, not ${typeName(x)} (at ${k})`);
      }
    }
    return { name, type: "pairs", pairs: pairs as string[][] };
  }
  return invalid(name, `cannot be ${typeName(v)}`);
}

/**
 * A value no option takes: the core checks the name and where it applies
 * first, then refuses it with `why` (a `TypeError`).
 */
function invalid(name: string, why: string): NativeOption {
  return { name, type: "invalid", text: `\`${name}\` ${why}` };
}

/**
 * The options as the native module takes them (each checked and applied
 * there by the core's `Settings::set`, which refuses an unknown name, a
 * wrong type, a value out of range, or an option that does not apply to
 * this constructor), and the callbacks, kept here. `extra` keys are the
 * constructor's own (`role`), not options.
 */
export function nativeOptions(
  options: object | undefined,
  extra: readonly string[] = [],
): { native: NativeOption[]; hooks: Hooks } {
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== "object" || Array.isArray(o)) {
    throw new TypeError(`options must be an object, not ${typeName(o)}`);
  }
  const hooks: Hooks = { trace: undefined, events: undefined, stderr: undefined };
  const native: NativeOption[] = [];
  for (const [name, v] of Object.entries(o)) {
    if (extra.includes(name)) {
      continue;
    }
    if (v !== undefined && v !== null) {
      if (name === "trace") {
        if (v === true || v === "debug") {
          hooks.trace = (direction, frame) => debug("%s %s", direction, frame);
        } else if (typeof v === "function") {
          hooks.trace = v as (direction: Direction, frame: string) => void;
        } else if (v !== false) {
          throw new TypeError(`\`trace\` must be a function, true or "debug", not ${typeName(v)}`);
        }
        native.push({ name, type: "callback" });
        continue;
      }
      if (name === "events" || name === "stderr") {
        if (typeof v !== "function") {
          throw new TypeError(`\`${name}\` must be a function, not ${typeName(v)}`);
        }
        if (name === "events") {
          hooks.events = v as (event: EngineEvent) => void;
        } else {
          hooks.stderr = v as (line: string) => void;
        }
      }
    }
    native.push(tagged(name, v));
  }
  return { native, hooks };
}

/**
 * The transport is read on this thread unless LIBACP_NODE_DRIVE_READS=0
 * (an engine thread then reads: the tests run both paths).
 */
export function driveReads(): boolean {
  return process.env.LIBACP_NODE_DRIVE_READS !== "0";
}
