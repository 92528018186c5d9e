"use strict";
/**
 * The options every constructor takes, checked here (a wrong type is a
 * `TypeError`, a bad value a `RangeError`, both naming the option; nothing
 * is started then) and passed to the native module. Durations are
 * milliseconds.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.nativeOptions = nativeOptions;
const node_util_1 = require("node:util");
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
function typeName(v) {
    return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}
function expect(ok, name, what, value) {
    if (!ok) {
        throw new TypeError(`${name} must be ${what}, not ${typeName(value)}`);
    }
}
function number(o, name) {
    const v = o[name];
    if (v === undefined || v === null) {
        return undefined;
    }
    expect(typeof v === "number", name, "a number", v);
    return v;
}
function bool(o, name) {
    const v = o[name];
    if (v === undefined || v === null) {
        return undefined;
    }
    expect(typeof v === "boolean", name, "a boolean", v);
    return v;
}
const debug = (0, node_util_1.debuglog)("libacp");
/** Checks `options` (allowing `extra` keys) and converts them. */
function nativeOptions(options, spawn, extra = []) {
    const o = options ?? {};
    expect(typeof o === "object" && !Array.isArray(o), "options", "an object", o);
    const known = new Set([...CONNECTION_KEYS, ...(spawn ? SPAWN_KEYS : []), ...extra]);
    for (const key of Object.keys(o)) {
        if (!known.has(key)) {
            throw new TypeError(`unknown option ${JSON.stringify(key)} (the options are: ${[...known].join(", ")})`);
        }
    }
    const native = {};
    const framing = o.framing;
    if (framing !== undefined && framing !== null) {
        expect(typeof framing === "string", "framing", "a string", framing);
        native.framing = framing;
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
    const hooks = { trace: undefined, events: undefined, stderr: undefined };
    const trace = o.trace;
    if (trace === true || trace === "debug") {
        hooks.trace = ([direction, frame]) => debug("%s %s", direction, frame);
    }
    else if (typeof trace === "function") {
        const fn = trace;
        hooks.trace = ([direction, frame]) => fn(direction, frame);
    }
    else if (trace !== undefined && trace !== null && trace !== false) {
        throw new TypeError(`trace must be a function, true or "debug", not ${typeName(trace)}`);
    }
    const events = o.events;
    if (events !== undefined && events !== null) {
        expect(typeof events === "function", "events", "a function", events);
        const fn = events;
        hooks.events = ([kind, message, details]) => fn({ kind, message, details: JSON.parse(details) });
    }
    if (spawn) {
        const cwd = o.cwd;
        if (cwd !== undefined && cwd !== null) {
            expect(typeof cwd === "string", "cwd", "a string", cwd);
            native.cwd = cwd;
        }
        const env = o.env;
        if (env !== undefined && env !== null) {
            expect(typeof env === "object" && !Array.isArray(env), "env", "an object", env);
            for (const [k, v] of Object.entries(env)) {
                expect(typeof v === "string", `env.${k}`, "a string", v);
            }
            native.env = env;
        }
        native.clearEnv = bool(o, "clearEnv");
        const stderr = o.stderr;
        if (stderr !== undefined && stderr !== null) {
            expect(typeof stderr === "function", "stderr", "a function", stderr);
            hooks.stderr = stderr;
            native.stderr = true;
        }
        const grace = o.shutdownGrace;
        if (grace !== undefined && grace !== null) {
            const pair = Array.isArray(grace) ? grace : [grace, grace];
            expect(pair.length === 2 && pair.every((g) => typeof g === "number"), "shutdownGrace", "milliseconds or a pair [afterStdinClose, afterSigterm]", grace);
            native.graceAfterStdinCloseMs = pair[0];
            native.graceAfterSigtermMs = pair[1];
        }
    }
    return { native, hooks };
}
