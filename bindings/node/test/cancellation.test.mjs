// Cancellation both ways: AbortSignal on outgoing calls ($/cancel_request,
// abandon or keep waiting), the handler context's signal on incoming ones
// ($/cancel_request, session/cancel for a prompt, superseded), timeouts.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Cancelled, RequestError, RequestTimeout } from "libacp";

import { closeBoth, deferred, session, waitingAgent, within } from "./support.mjs";

test("aborting a call rejects it with Cancelled at once and the peer's handler sees $/cancel_request", async () => {
  const w = waitingAgent();
  const pair = await session(w.agent);
  const abort = new AbortController();
  const call = pair.client.extMethod("_wait", {}, { signal: abort.signal });
  await within(w.started.promise, "the handler to start");
  abort.abort();
  await assert.rejects(within(call, "the call"), Cancelled);
  await within(w.aborted.promise, "the handler's signal");
  assert.equal(w.seen.cancelled, true);
  assert.ok(w.seen.reason instanceof Cancelled, `reason: ${String(w.seen.reason)}`);
  await closeBoth(pair);
});

test("with keepWaiting, an aborted call gets the peer's answer: -32800 from a handler that stops", async () => {
  const w = waitingAgent();
  const pair = await session(w.agent);
  const abort = new AbortController();
  const call = pair.client.extMethod("_wait", {}, { signal: abort.signal, keepWaiting: true });
  await within(w.started.promise, "the handler to start");
  abort.abort();
  const error = await within(
    call.then(
      () => null,
      (e) => e,
    ),
    "the call",
  );
  assert.ok(error instanceof RequestError, String(error));
  assert.equal(error.code, -32800);
  await closeBoth(pair);
});

test("a signal already aborted rejects the call without sending it", async () => {
  const w = waitingAgent();
  const pair = await session(w.agent);
  const abort = new AbortController();
  abort.abort(new Error("gave up"));
  await assert.rejects(pair.client.extMethod("_wait", {}, { signal: abort.signal }), /gave up/);
  // Nothing reached the agent: a later call is the first it sees.
  const second = new AbortController();
  const call = pair.client.extMethod("_wait", {}, { signal: second.signal });
  await within(w.started.promise, "the second call's handler");
  second.abort();
  await assert.rejects(call, Cancelled);
  await closeBoth(pair);
});

test("session/cancel aborts the prompt's signal and the prompt answers cancelled whatever it returns", async () => {
  const started = deferred();
  /** @type {boolean | undefined} */
  let sawCancel;
  const pair = await session({
    async prompt(_params, { signal }) {
      started.resolve();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { stopReason: "end_turn" }; // the core makes it "cancelled"
    },
    cancel() {
      sawCancel = true;
    },
  });
  const turn = pair.client.prompt({ sessionId: "s1", prompt: [{ type: "text", text: "wait" }] });
  await within(started.promise, "the prompt handler");
  await within(pair.client.cancel("s1"), "cancel");
  assert.deepEqual(await within(turn, "the prompt"), { stopReason: "cancelled" });
  assert.equal(sawCancel, true);
  await closeBoth(pair);
});

test("session/cancel answers the session's pending permission request cancelled and aborts its handler", async () => {
  const asked = deferred();
  const handlerAborted = deferred();
  /** @type {unknown} */
  let outcome;
  const pair = await session(
    {
      async prompt({ sessionId }) {
        const answer = await pair.toClient.requestPermission({
          sessionId,
          toolCall: { toolCallId: "t1" },
          options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }],
        });
        outcome = answer.outcome;
        return { stopReason: "end_turn" };
      },
    },
    {
      async requestPermission(_params, { signal }) {
        asked.resolve();
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        handlerAborted.resolve();
        return { outcome: { outcome: "selected", optionId: "yes" } }; // too late: refused
      },
    },
  );
  const turn = pair.client.prompt({ sessionId: "s1", prompt: [{ type: "text", text: "go" }] });
  await within(asked.promise, "the permission request");
  await within(pair.client.cancel("s1"), "cancel");
  await within(handlerAborted.promise, "the permission handler's signal");
  assert.deepEqual(await within(turn, "the prompt"), { stopReason: "cancelled" });
  assert.deepEqual(outcome, { outcome: "cancelled" });
  await closeBoth(pair);
});

test("a call with a timeout fails with RequestTimeout and the peer is sent $/cancel_request", async () => {
  const w = waitingAgent();
  const pair = await session(w.agent);
  const call = pair.client.extMethod("_wait", {}, { timeout: 50 });
  await assert.rejects(within(call, "the call"), RequestTimeout);
  await within(w.aborted.promise, "the handler's signal");
  assert.equal(w.seen.cancelled, true);
  await closeBoth(pair);
});

test("the requestTimeoutMs option applies to every call; timeout: 0 overrides it", async () => {
  const w = waitingAgent();
  const pair = await session(w.agent, {}, { client: { requestTimeoutMs: 50 } });
  await assert.rejects(within(pair.client.extMethod("_wait", {}), "the call"), RequestTimeout);
  const abort = new AbortController();
  const untimed = pair.client.extMethod("_x", {}, { timeout: 0, signal: abort.signal });
  // Bounded by the hang detector only; aborted to end it.
  const raced = await Promise.race([
    untimed.then(
      () => "settled",
      () => "settled",
    ),
    new Promise((r) => setTimeout(() => r("pending"), 200)),
  ]);
  assert.equal(raced, "pending");
  abort.abort();
  await assert.rejects(untimed, Cancelled);
  await closeBoth(pair);
});
