/**
 * The options every constructor takes, checked here (a wrong type is a
 * `TypeError`, a bad value a `RangeError`, both naming the option; nothing
 * is started then) and passed to the native module. Durations are
 * milliseconds.
 */
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
/** The hooks the native module calls, made from the options. */
export interface Hooks {
    trace: ((arg: [string, string]) => void) | undefined;
    events: ((arg: [string, string, string]) => void) | undefined;
    stderr: ((line: string) => void) | undefined;
}
/** Checks `options` (allowing `extra` keys) and converts them. */
export declare function nativeOptions(options: Record<string, unknown> | undefined, spawn: boolean, extra?: readonly string[]): {
    native: NativeOptions;
    hooks: Hooks;
};
