// Errors as classes (issue 11, item 5) and bad input: the peer's JSON-RPC
// errors, what handlers throw, the core's refusals, values that are not
// JSON. Never a crash, a hang or an unhandled rejection.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AcpError,
  CapabilityError,
  ErrorCode,
  InvalidParams,
  MethodNotFound,
  RefusedError,
  RequestError,
} from "libacp";

import {
  closeBoth,
  dynamicPair,
  guardUnhandledRejections,
  session,
  typedPair,
  within,
  INIT_PARAMS,
} from "./support.mjs";

guardUnhandledRejections();

/**
 * The rejection of `promise` (fails if it resolves).
 * @param {Promise<unknown>} promise
 * @returns {Promise<any>}
 */
async function rejection(promise) {
  const outcome = await within(
    promise.then(
      (v) => ({ v }),
      (e) => ({ e }),
    ),
    "the call",
  );
  assert.ok("e" in outcome, `resolved with ${JSON.stringify("v" in outcome ? outcome.v : null)}`);
  return outcome.e;
}

test("a RequestError thrown by a handler reaches the caller with code, message and data; toString shows data", async () => {
  const pair = await session({
    extMethod() {
      throw new RequestError(-32042, "custom failure", { why: [1, "two"] });
    },
  });
  const e = await rejection(pair.client.extMethod("_fail", {}));
  assert.ok(e instanceof RequestError && e instanceof AcpError && e instanceof Error);
  assert.equal(e.code, -32042);
  assert.equal(e.message, "custom failure");
  assert.deepEqual(e.data, { why: [1, "two"] });
  assert.equal(String(e), 'RequestError -32042: custom failure (data: {"why":[1,"two"]})');
  await closeBoth(pair);
});

test("a handler that throws anything else answers -32603 naming the error; a rejected promise too", async () => {
  const pair = await session({
    async extMethod(method) {
      if (method === "_throw") throw new TypeError("boom");
      return Promise.reject(new Error("rejected"));
    },
  });
  for (const [method, text] of [
    ["_throw", "TypeError: boom"],
    ["_reject", "Error: rejected"],
  ]) {
    const e = await rejection(pair.client.extMethod(method, {}));
    assert.ok(e instanceof RequestError, String(e));
    assert.equal(e.code, ErrorCode.INTERNAL_ERROR);
    assert.match(JSON.stringify(e.data), new RegExp(text));
  }
  await closeBoth(pair);
});

test("methods a host does not implement answer -32601 with data.method (MethodNotFound)", async () => {
  const pair = await session({});
  const e = await rejection(pair.client.extMethod("_nope", {}));
  assert.ok(e instanceof MethodNotFound && e instanceof RequestError);
  assert.equal(e.code, -32601);
  assert.deepEqual(e.data, { method: "_nope" });
  const e2 = await rejection(pair.client.setSessionMode({ sessionId: "s1", modeId: "x" }));
  assert.ok(e2 instanceof MethodNotFound);
  // A handler may throw MethodNotFound itself.
  const thrower = await session({
    extMethod(method) {
      throw new MethodNotFound(method);
    },
  });
  const e3 = await rejection(thrower.client.extMethod("_thrown", {}));
  assert.ok(e3 instanceof MethodNotFound);
  assert.deepEqual(e3.data, { method: "_thrown" });
  await closeBoth(pair);
  await closeBoth(thrower);
});

test("a nested call's error that escapes a handler answers the request unchanged (a -32601 too)", async () => {
  // What the client answers the agent's permission request with, in turn.
  const refusals = [
    new RequestError(-32601, "probe: not supported", { probe: true }),
    new RequestError(-32601, "no data"),
    new MethodNotFound("session/request_permission"),
    new RequestError(-32000, "auth", { authMethods: [] }),
  ];
  let turn = 0;
  const pair = await session(
    {
      async prompt({ sessionId }) {
        // Not caught: the nested call's error escapes the prompt handler.
        await pair.toClient.requestPermission({
          sessionId,
          toolCall: { toolCallId: "t1" },
          options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }],
        });
        return { stopReason: "end_turn" };
      },
    },
    {
      requestPermission() {
        throw refusals[turn++];
      },
    },
  );
  try {
    for (const refusal of refusals) {
      const e = await rejection(
        pair.client.prompt({ sessionId: "s1", prompt: [{ type: "text", text: "go" }] }),
      );
      assert.ok(e instanceof RequestError, String(e));
      assert.equal(e.code, refusal.code);
      assert.equal(e.message, refusal.message);
      assert.deepEqual(e.data, refusal.data, "not -32601 for session/prompt");
      assert.equal(e instanceof MethodNotFound, refusal.code === -32601);
    }
  } finally {
    await closeBoth(pair);
  }
});

test("a result that is not JSON answers -32603 (the handler's error is logged, nothing crashes)", async () => {
  const pair = await session({
    extMethod(method) {
      if (method === "_bigint") return { n: 1n };
      /** @type {Record<string, unknown>} */
      const cycle = {};
      cycle.self = cycle;
      return cycle;
    },
  });
  for (const method of ["_bigint", "_cycle"]) {
    const e = await rejection(pair.client.extMethod(method, {}));
    assert.ok(e instanceof RequestError, String(e));
    assert.equal(e.code, -32603);
  }
  // The connection goes on.
  await within(pair.client.extNotification("_still_here", {}), "a notification");
  await closeBoth(pair);
});

test("params that are not JSON, or not an object or array, are refused before anything is sent", async () => {
  const pair = await session({ extMethod: () => ({}) });
  await assert.rejects(pair.client.extMethod("_x", { n: 1n }), TypeError);
  const e = await rejection(pair.client.extMethod("_x", 42));
  assert.ok(e instanceof InvalidParams, String(e));
  assert.equal(typeof e.detail, "string");
  await closeBoth(pair);
});

test("calls the protocol forbids are refused locally with the core's refusal fields", async () => {
  const pair = typedPair({ initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }) });
  // Nothing but initialize before initialize.
  const early = await rejection(pair.client.newSession({ cwd: "/tmp", mcpServers: [] }));
  assert.ok(early instanceof RefusedError, String(early));
  assert.equal(early.kind, "NotInitialized");
  assert.equal(early.method, "session/new");
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  // session/load was not advertised.
  const load = await rejection(
    pair.client.loadSession({ sessionId: "s", cwd: "/tmp", mcpServers: [] }),
  );
  assert.ok(load instanceof CapabilityError && load instanceof RefusedError, String(load));
  assert.equal(load.kind, "CapabilityNotAdvertised");
  assert.match(load.capability, /loadSession/);
  assert.equal(load.details.kind, "CapabilityNotAdvertised");
  // The agent may not read files the client did not offer.
  const read = await rejection(pair.agent.readTextFile({ sessionId: "s", path: "/etc/hostname" }));
  assert.ok(read instanceof CapabilityError, String(read));
  await closeBoth(pair);
});

test("an unknown session is refused; a second initialize too", async () => {
  const pair = await session({ prompt: () => ({ stopReason: "end_turn" }) });
  const unknown = await rejection(pair.client.prompt({ sessionId: "nope", prompt: [] }));
  assert.ok(unknown instanceof RefusedError, String(unknown));
  assert.equal(unknown.kind, "UnknownSession");
  const again = await rejection(pair.client.initialize(INIT_PARAMS));
  assert.ok(again instanceof RefusedError, String(again));
  assert.equal(again.kind, "AlreadyInitialized");
  await closeBoth(pair);
});

test("handler errors are reported on stderr, never thrown into the event loop", async () => {
  /** @type {string[]} */
  const written = [];
  const write = process.stderr.write;
  process.stderr.write = /** @type {any} */ (
    (/** @type {string} */ chunk) => {
      written.push(String(chunk));
      return true;
    }
  );
  try {
    const pair = dynamicPair(
      { onRequest: () => ({ protocolVersion: 1, agentCapabilities: {} }) },
      {
        onNotification() {
          throw new Error("notification handler failed");
        },
      },
    );
    await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
    await pair.agent.notify("_n", {});
    await within(
      pair.client.request("_after", {}).catch(() => null),
      "a later call",
    );
    await closeBoth(pair);
  } finally {
    process.stderr.write = write;
  }
  assert.ok(
    written.some((w) => w.includes("notification handler failed")),
    `stderr: ${written.join("")}`,
  );
});
