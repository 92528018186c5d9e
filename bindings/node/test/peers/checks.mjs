// The check helpers the interop client peers share (plain JavaScript, no
// libacp import: the official-SDK client uses them too).

/** A failed check: the client prints `FAIL: <message>` and exits 1. */
export class CheckFailure extends Error {}

/**
 * Throws a {@link CheckFailure} with `message` unless `condition` holds.
 * @param {unknown} condition
 * @param {string} message
 * @returns {asserts condition}
 */
export function check(condition, message) {
  if (!condition) throw new CheckFailure(message);
}

/** A value as JSON for a message (String() when it is not JSON). @param {unknown} value */
export function show(value) {
  return JSON.stringify(value) ?? String(value);
}
