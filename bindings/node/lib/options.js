"use strict";
/**
 * The options every constructor takes: the core's one option table
 * (`core/src/options.rs`, names camelCased), checked by the core (an
 * unknown name, a wrong type or an option that does not apply is a
 * `TypeError`, a value out of range a `RangeError`, both with the core's
 * message naming the option; nothing is started then). Durations are
 * milliseconds, sizes bytes. Callbacks (`trace`, `events`, `stderr`) stay
 * here.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.nativeOptions = nativeOptions;
exports.driveReads = driveReads;
const node_util_1 = require("node:util");
function typeName(v) {
    return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}
const debug = (0, node_util_1.debuglog)("libacp");
/** One option as the native module takes it: the JavaScript value, tagged. */
function tagged(name, v) {
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
            return { name, type: "list", texts: v };
        }
        if (v.every((item) => Array.isArray(item) && item.length === 2 && item.every((x) => typeof x === "string"))) {
            return { name, type: "list", pairs: v };
        }
        return invalid(name, "must hold only strings, or only [name, value] pairs of strings");
    }
    if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
        const pairs = Object.entries(v);
        for (const [k, x] of pairs) {
            if (typeof x !== "string") {
                return invalid(name, `values must be strings, not ${typeName(x)} (at ${k})`);
            }
        }
        return { name, type: "pairs", pairs: pairs };
    }
    return invalid(name, `cannot be ${typeName(v)}`);
}
/**
 * A value no option takes: the core checks the name and where it applies
 * first, then refuses it with `why` (a `TypeError`).
 */
function invalid(name, why) {
    return { name, type: "invalid", text: `\`${name}\` ${why}` };
}
/**
 * The options as the native module takes them (each checked and applied
 * there by the core's `Settings::set`, which refuses an unknown name, a
 * wrong type, a value out of range, or an option that does not apply to
 * this constructor), and the callbacks, kept here. `extra` keys are the
 * constructor's own (`role`), not options.
 */
function nativeOptions(options, extra = []) {
    const o = (options ?? {});
    if (typeof o !== "object" || Array.isArray(o)) {
        throw new TypeError(`options must be an object, not ${typeName(o)}`);
    }
    const hooks = { trace: undefined, events: undefined, stderr: undefined };
    const native = [];
    for (const [name, v] of Object.entries(o)) {
        if (extra.includes(name)) {
            continue;
        }
        if (v !== undefined && v !== null) {
            if (name === "trace") {
                if (v === true || v === "debug") {
                    hooks.trace = (direction, frame) => debug("%s %s", direction, frame);
                }
                else if (typeof v === "function") {
                    hooks.trace = v;
                }
                else if (v !== false) {
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
                    hooks.events = v;
                }
                else {
                    hooks.stderr = v;
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
function driveReads() {
    return process.env.LIBACP_NODE_DRIVE_READS !== "0";
}
