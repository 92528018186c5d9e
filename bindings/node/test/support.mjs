// Shared by the Node tests: both roles in one process over a socket pair,
// hang detectors, and small promise tools. Limits here are hang detectors,
// far above the expected time (the suite must pass on a slow, loaded
// machine): nothing is timed.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { setImmediate as immediate } from "node:timers/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { AgentConnection, ClientConnection, Connection, socketPair } from "libacp";

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** A hang detector's limit for one step, in milliseconds. */
export const LIMIT_MS = 30_000;

/**
 * `promise`, or a rejection naming `what` if it has not settled within
 * `ms` (a hang detector).
 * @template T
 * @param {Promise<T>} promise
 * @param {string} what
 * @param {number} [ms]
 * @returns {Promise<T>}
 */
export function within(promise, what, ms = LIMIT_MS) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * A promise with its resolve function outside.
 * @template [T=void]
 */
export function deferred() {
  /** @type {(value: T) => void} */
  let resolve = () => {};
  /** @type {(error: unknown) => void} */
  let reject = () => {};
  /** @type {Promise<T>} */
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets the event loop run `n` turns (pending I/O callbacks included). */
export async function turns(n = 5) {
  for (let i = 0; i < n; i++) {
    await immediate();
  }
}

/** What a minimal agent answers to `initialize`. */
export const INIT_RESULT = { protocolVersion: 1, agentCapabilities: {} };
/** What a minimal client sends as `initialize`. */
export const INIT_PARAMS = { protocolVersion: 1, clientCapabilities: {} };

/**
 * A typed agent and client connected over a socket pair, in this process.
 * @param {import("libacp").AgentFactory} agent
 * @param {import("libacp").ClientFactory} [client]
 * @param {{ agent?: import("libacp").ConnectionOptions, client?: import("libacp").ConnectionOptions }} [options]
 */
export function typedPair(agent, client = {}, options = {}) {
  const [a, b] = socketPair();
  const agentSide = AgentConnection.fromFds(a, a, agent, options.agent ?? {});
  const clientSide = ClientConnection.fromFds(b, b, client, options.client ?? {});
  return { agent: agentSide, client: clientSide };
}

/**
 * A dynamic agent and client connected over a socket pair, in this process.
 * @param {import("libacp").Handler} agentHandler
 * @param {import("libacp").Handler} [clientHandler]
 * @param {{ agent?: import("libacp").ConnectionOptions, client?: import("libacp").ConnectionOptions }} [options]
 */
export function dynamicPair(agentHandler, clientHandler = {}, options = {}) {
  const [a, b] = socketPair();
  const agent = Connection.fromFds(a, a, agentHandler, { ...options.agent, role: "agent" });
  const client = Connection.fromFds(b, b, clientHandler, { ...options.client, role: "client" });
  return { agent, client };
}

/**
 * A typed pair, initialized, with one session `s1` open (the agent answers
 * `initialize` and `session/new` unless `agent` does).
 * @param {import("libacp").Agent} agent
 * @param {import("libacp").Client} [client]
 * @param {{ agent?: import("libacp").ConnectionOptions, client?: import("libacp").ConnectionOptions }} [options]
 */
export async function session(agent, client = {}, options = {}) {
  /** @type {import("libacp").AgentConnection | undefined} */
  let toClient;
  const pair = typedPair(
    (c) => {
      toClient = c;
      return { initialize: () => INIT_RESULT, newSession: () => ({ sessionId: "s1" }), ...agent };
    },
    client,
    options,
  );
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  await within(pair.client.newSession({ cwd: "/tmp", mcpServers: [] }), "session/new");
  return { ...pair, toClient: /** @type {import("libacp").AgentConnection} */ (toClient) };
}

/**
 * Closes both sides of a pair.
 * @param {{ agent: { close(): Promise<void> }, client: { close(): Promise<void> } }} pair
 */
export async function closeBoth(pair) {
  await within(Promise.all([pair.client.close(), pair.agent.close()]), "close");
}

/**
 * An agent whose `_wait` request waits for its signal, recording how it
 * ended and answering `answer` (or throwing the signal's reason).
 * @param {{ answer?: unknown }} [options]
 */
export function waitingAgent(options = {}) {
  const started = deferred();
  const aborted = deferred();
  /** @type {{ cancelled?: boolean, superseded?: boolean, reason?: unknown }} */
  const seen = {};
  return {
    started,
    aborted,
    seen,
    agent: {
      /**
       * @param {string} _method
       * @param {unknown} _params
       * @param {import("libacp").RequestContext} context
       */
      async extMethod(_method, _params, context) {
        started.resolve();
        await new Promise((resolve) =>
          context.signal.addEventListener("abort", resolve, { once: true }),
        );
        seen.cancelled = context.cancelled;
        seen.superseded = context.superseded;
        seen.reason = context.signal.reason;
        aborted.resolve();
        if ("answer" in options) return options.answer;
        throw context.signal.reason;
      },
    },
  };
}

/**
 * Fails the test file if any promise rejection goes unhandled while its
 * tests run (libacp must never let one escape). Call at the top level.
 */
export function guardUnhandledRejections() {
  /** @type {unknown[]} */
  const unhandled = [];
  /** @param {unknown} reason */
  const onUnhandled = (reason) => unhandled.push(reason);
  before(() => process.on("unhandledRejection", onUnhandled));
  after(() => {
    process.off("unhandledRejection", onUnhandled);
    assert.deepEqual(unhandled, [], "libacp let a rejection go unhandled");
  });
}

/**
 * The text of a `session/update` that carries a text content block (a
 * message or thought chunk), else undefined.
 * @param {import("libacp").schema.SessionUpdate} update
 * @returns {string | undefined}
 */
export function textOf(update) {
  const { content } = /** @type {{ content?: { type?: unknown, text?: unknown } }} */ (update);
  return content?.type === "text" && typeof content.text === "string" ? content.text : undefined;
}

/**
 * Resolves once `predicate()` is true, checked every few milliseconds; for
 * what arrives on its own schedule (trace and event callbacks are not
 * ordered with the calls' answers). Rejects after `ms` (a hang detector).
 * @param {() => boolean} predicate
 * @param {string} what
 * @param {number} [ms]
 */
export async function eventually(predicate, what, ms = LIMIT_MS) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not seen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
