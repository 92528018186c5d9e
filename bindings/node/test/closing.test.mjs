// Closing (DESIGN.md "Lifetimes", decision 2): close() and the peer going
// away reject every pending call at once, abort the handlers' signals, and
// leave nothing behind; no unhandled rejection escapes from libacp.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import { ConnectionClosed, RefusedError } from "libacp";

import {
  closeBoth,
  deferred,
  guardUnhandledRejections,
  session,
  waitingAgent,
  within,
} from "./support.mjs";

guardUnhandledRejections();

/** The package directory (the workers load it by path). */
const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("close() rejects every pending call with ConnectionClosed and is idempotent", async () => {
  const s = waitingAgent();
  const pair = await session(s.agent);
  // Each call's outcome is taken at once (a rejection nobody handles yet is
  // the test's, not libacp's).
  const calls = [1, 2, 3].map((i) =>
    pair.client.extMethod("_stuck", { i }).then(
      () => null,
      (e) => e,
    ),
  );
  await within(s.started.promise, "a handler to start");
  await within(Promise.all([pair.client.close(), pair.client.close()]), "two closes");
  for (const call of calls) {
    const error = await within(call, "a pending call");
    assert.ok(error instanceof ConnectionClosed, String(error));
  }
  assert.match(pair.client.closeReason ?? "", /closed locally/);
  await within(pair.client.close(), "a third close");
  await closeBoth(pair);
});

test("the peer going away rejects pending calls and cancels the handlers it was running", async () => {
  const s = waitingAgent();
  const pair = await session(s.agent);
  const call = pair.client.extMethod("_stuck", {}).catch((e) => e);
  await within(s.started.promise, "the handler");
  // The client side goes away: the agent's running handler is cancelled
  // (it gets flushTimeoutMs to answer; decision 2 of DESIGN.md).
  const agentCall = pair.toClient.extMethod("_never_answered", {}).catch((e) => e);
  await within(pair.client.close(), "client close");
  assert.ok((await within(call, "the client's call")) instanceof ConnectionClosed);
  assert.ok((await within(agentCall, "the agent's call")) instanceof ConnectionClosed);
  await within(s.aborted.promise, "the agent handler's signal");
  assert.equal(s.seen.cancelled, true);
  assert.match(await within(pair.agent.closed(), "agent closed()"), /peer closed/);
  await closeBoth(pair);
});

test("calls and notifications after close are refused with ConnectionClosed, never sent", async () => {
  const pair = await session({});
  await within(pair.client.close(), "close");
  await assert.rejects(pair.client.extMethod("_late", {}), ConnectionClosed);
  await assert.rejects(pair.client.extNotification("_late", {}), ConnectionClosed);
  await assert.rejects(
    pair.client.prompt({ sessionId: "s1", prompt: [] }),
    (e) => e instanceof ConnectionClosed || e instanceof RefusedError,
  );
  assert.equal(typeof (await within(pair.client.closed(), "closed()")), "string");
  await within(pair.client.terminated(), "terminated()");
  await closeBoth(pair);
});

test("closed() and terminated() resolve for a connection already closed (the loop stays alive for them)", async () => {
  const pair = await session({});
  await within(pair.agent.close(), "agent close");
  // Asked after the close was seen: their answers come later and must
  // still arrive (the event loop is held while they are pending).
  const reason = await within(pair.client.closed(), "client closed()");
  assert.match(reason, /peer closed|closed locally/);
  await within(pair.client.terminated(), "client terminated()");
  await within(pair.agent.terminated(), "agent terminated()");
});

/** A worker that opens a connection pair, makes a call that never ends, then says "open". */
const WORKER = `
const { AgentConnection, ClientConnection, socketPair } = require(${JSON.stringify(PKG)});
const { parentPort } = require("node:worker_threads");
const [a, b] = socketPair();
AgentConnection.fromFds(a, a, {
  initialize: () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true } }),
  extMethod: () => new Promise(() => {}),
});
const client = ClientConnection.fromFds(b, b);
client.initialize({ protocolVersion: 1, clientCapabilities: {} }).then((r) => {
  client.extMethod("_never", {}).catch(() => {});
  parentPort.postMessage(JSON.stringify(r.agentCapabilities));
});
`;

test("connections work in worker threads, and terminating a worker with them open leaves this process running", async () => {
  // Each worker has its own loop: the poll handles reading there are closed
  // by the env's cleanup (a crash here once took the whole process down).
  for (let i = 0; i < 3; i++) {
    const worker = new Worker(WORKER, { eval: true });
    const said = await within(
      new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      }),
      "the worker's round trip",
    );
    assert.equal(said, '{"loadSession":true}');
    assert.equal(await within(worker.terminate(), "terminate"), 1);
  }
});
