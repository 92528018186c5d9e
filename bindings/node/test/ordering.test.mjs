// Ordering and nested calls (DESIGN.md "Ordering", "No deadlock by
// design", decision 1): notifications one at a time in arrival order, a
// result only after the notifications received before it were handled, and
// calls from inside a notification handler exempt from that barrier.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import {
  closeBoth,
  deferred,
  dynamicPair,
  eventually,
  session,
  turns,
  within,
  INIT_PARAMS,
  INIT_RESULT,
  textOf,
} from "./support.mjs";

/** @param {string} sessionId @param {number} i */
function chunk(sessionId, i) {
  return {
    sessionId,
    update: {
      sessionUpdate: /** @type {const} */ ("agent_message_chunk"),
      content: { type: /** @type {const} */ ("text"), text: `${i}` },
    },
  };
}

test("await prompt() resolves after every session/update of the turn was handled, slow async handlers included", async () => {
  /** @type {string[]} */
  const handled = [];
  let running = 0;
  const pair = await session(
    {
      async prompt({ sessionId }) {
        for (let i = 0; i < 200; i++) {
          await pair.toClient.sessionUpdate(chunk(sessionId, i));
        }
        return { stopReason: "end_turn" };
      },
    },
    {
      async sessionUpdate({ update }) {
        running += 1;
        assert.equal(running, 1, "two session/update handlers ran at once");
        // Suspends for a few loop turns (slow rendering).
        await turns(Number(textOf(update) ?? 0) % 3);
        handled.push(/** @type {string} */ (textOf(update)));
        running -= 1;
      },
    },
  );
  const done = await within(
    pair.client.prompt({ sessionId: "s1", prompt: [{ type: "text", text: "go" }] }),
    "prompt",
  );
  assert.deepEqual(done, { stopReason: "end_turn" });
  assert.deepEqual(
    handled,
    Array.from({ length: 200 }, (_, i) => `${i}`),
  );
  await closeBoth(pair);
});

test("a notification handler may await a call to the peer (first and later handlers alike)", async () => {
  /** @type {unknown[]} */
  const answers = [];
  const pair = dynamicPair(
    {
      onRequest(method, params) {
        if (method === "initialize") return INIT_RESULT;
        if (method === "_double") return { n: /** @type {{n: number}} */ (params).n * 2 };
        throw new Error(`unexpected ${method}`);
      },
    },
    {
      async onNotification(method, params) {
        // The call's answer arrives after this very notification: it must
        // not wait behind it.
        answers.push(await pair.client.request("_double", params));
      },
    },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  for (let n = 1; n <= 3; n++) {
    await pair.agent.notify("_n", { n });
  }
  // The notifications are handled in order, each after its own call.
  await within(
    (async () => {
      while (answers.length < 3) await turns(1);
    })(),
    "the three handlers",
  );
  assert.deepEqual(answers, [{ n: 2 }, { n: 4 }, { n: 6 }]);
  await closeBoth(pair);
});

test("a call made outside a suspended notification handler still waits for the notifications before its answer", async () => {
  /** @type {string[]} */
  const order = [];
  const gate = deferred();
  const answerRead = deferred();
  const pair = dynamicPair(
    {
      async onRequest(method) {
        if (method === "initialize") return INIT_RESULT;
        if (method === "_c") {
          // N2 goes out before the answer.
          await pair.agent.notify("_n2", {});
          return { c: true };
        }
        throw new Error(`unexpected ${method}`);
      },
    },
    {
      async onNotification(method) {
        if (method === "_warmup") {
          await turns(1); // makes the binding follow handlers' async contexts
        } else if (method === "_n1") {
          order.push("n1 started");
          await gate.promise;
          order.push("n1 done");
        } else if (method === "_n2") {
          order.push("n2");
        }
      },
    },
    {
      client: {
        // At once: in wire order the trace would wait behind n1 too.
        orderedHooks: false,
        trace(direction, frame) {
          if (direction === "in" && frame.includes('"c":true')) answerRead.resolve();
        },
      },
    },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await pair.agent.notify("_warmup", {});
  await pair.agent.notify("_n1", {});
  await within(
    (async () => {
      while (!order.includes("n1 started")) await turns(1);
    })(),
    "n1's handler",
  );
  // Not from inside the handler: obeys the barrier.
  const call = pair.client.request("_c", {}).then((r) => {
    order.push("c resolved");
    return r;
  });
  await within(answerRead.promise, "the answer to _c being read");
  await turns(5);
  assert.deepEqual(order, ["n1 started"], "_c resolved while n1's handler was still running");
  gate.resolve();
  assert.deepEqual(await within(call, "_c"), { c: true });
  assert.deepEqual(order, ["n1 started", "n1 done", "n2", "c resolved"]);
  await closeBoth(pair);
});

test("requests start in arrival order and run concurrently; handlers may call the peer both ways", async () => {
  /** @type {string[]} */
  const started = [];
  const release = deferred();
  const pair = await session(
    {
      async extMethod(method, params) {
        started.push(method);
        if (method === "_slow") {
          await release.promise;
          return { slow: true };
        }
        if (method === "_nested") {
          // Agent -> client -> agent, from inside a request handler.
          const answer = await pair.toClient.extMethod("_ask_client", params);
          return { nested: answer };
        }
        return { fast: true };
      },
    },
    {
      async extMethod(method, params) {
        assert.equal(method, "_ask_client");
        return { back: await pair.client.extMethod("_fast", params) };
      },
    },
  );
  const slow = pair.client.extMethod("_slow", {});
  const fast = await within(pair.client.extMethod("_fast", {}), "_fast");
  assert.deepEqual(fast, { fast: true });
  const nested = await within(pair.client.extMethod("_nested", { x: 1 }), "_nested");
  assert.deepEqual(nested, { nested: { back: { fast: true } } });
  release.resolve();
  assert.deepEqual(await within(slow, "_slow"), { slow: true });
  assert.deepEqual(started, ["_slow", "_fast", "_nested", "_fast"]);
  await closeBoth(pair);
});

/**
 * A client with the core's `fs`, `trace` and `events` against an agent
 * whose prompt streams updates and reads files through the client: what
 * the client's hooks and handlers saw, in the order they saw it.
 * @param {Record<string, unknown>} clientOptions
 */
function hookedPair(clientOptions) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "libacp-node-hooks-")));
  fs.writeFileSync(path.join(dir, "f.txt"), "x");
  /** @type {string[]} */
  const log = [];
  const pair = dynamicPair(
    {
      async onRequest(method, params) {
        if (method === "initialize") return { protocolVersion: 1, agentCapabilities: {} };
        if (method === "session/new") return { sessionId: "s1" };
        for (let i = 0; i < 3; i++) {
          await pair.agent.notify("session/update", {
            sessionId: "s1",
            update: {
              sessionUpdate: "agent_message_chunk",
              content: { type: "text", text: `${i}` },
            },
          });
          await pair.agent.request("fs/read_text_file", {
            sessionId: "s1",
            path: path.join(dir, "f.txt"),
          });
        }
        return { stopReason: "end_turn", _meta: { turn: /** @type {any} */ (params)._meta.turn } };
      },
    },
    {
      onNotification(method) {
        log.push(`handled ${method}`);
      },
    },
    {
      client: {
        fs: true,
        ...clientOptions,
        /** @param {string} direction @param {string} frame */
        trace(direction, frame) {
          log.push(`${direction} ${frame}`);
        },
        /** @param {import("libacp").EngineEvent} event */
        events(event) {
          log.push(`event ${event.kind} ${JSON.stringify(event.details.id)}`);
        },
      },
    },
  );
  return { pair, log, dir };
}

test("trace and engine events reach the host in wire order, before the answer that follows them (issue 24)", async () => {
  const { pair, log, dir } = hookedPair({});
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await within(pair.client.request("session/new", { cwd: dir, mcpServers: [] }), "session/new");
  for (let turn = 0; turn < 20; turn++) {
    log.length = 0;
    const prompt = pair.client.request("session/prompt", {
      sessionId: "s1",
      prompt: [],
      _meta: { turn },
    });
    await within(prompt, `prompt ${turn}`);
    // Everything of the turn was seen when the prompt resolved.
    const seen = [...log];
    const served = seen.filter((l) => l.startsWith("event served"));
    assert.equal(served.length, 3, `turn ${turn}: ${seen.join("\n")}`);
    const answer = seen.findIndex(
      (l) => l.startsWith("in ") && l.includes('"stopReason"') && l.includes(`"turn":${turn}`),
    );
    assert.ok(
      answer >= 0,
      `turn ${turn}: the prompt's answer was not traced first:\n${seen.join("\n")}`,
    );
    // Wire order: each update traced then handled, each fs request traced,
    // served, its answer traced; the prompt's answer last.
    const shape = seen.map((l) =>
      l.startsWith("in ") && l.includes("session/update")
        ? "update"
        : l.startsWith("handled")
          ? "handled"
          : l.startsWith("in ") && l.includes("fs/read_text_file")
            ? "read"
            : l.startsWith("event served")
              ? "served"
              : l.startsWith("out ") && l.includes('"content":"x"')
                ? "answered"
                : l.startsWith("in ") && l.includes('"stopReason"')
                  ? "done"
                  : `other: ${l}`,
    );
    const step = ["update", "handled", "read", "served", "answered"];
    const want = ["out", ...step, ...step, ...step, "done"];
    // The client's own prompt request is traced first.
    assert.ok(seen[0].startsWith("out ") && seen[0].includes("session/prompt"), seen[0]);
    assert.deepEqual(["out", ...shape.slice(1)], want, `turn ${turn}:\n${seen.join("\n")}`);
  }
  await closeBoth(pair);
  fs.rmSync(dir, { recursive: true });
});

test("orderedHooks: false still delivers every frame and event, at once", async () => {
  const { pair, log, dir } = hookedPair({ orderedHooks: false });
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await within(pair.client.request("session/new", { cwd: dir, mcpServers: [] }), "session/new");
  await within(
    pair.client.request("session/prompt", { sessionId: "s1", prompt: [], _meta: { turn: 0 } }),
    "prompt",
  );
  await eventually(
    () =>
      log.filter((l) => l.startsWith("event served")).length === 3 &&
      log.some((l) => l.startsWith("in ") && l.includes('"stopReason"')),
    "every served event and the prompt's answer traced",
  );
  await closeBoth(pair);
  fs.rmSync(dir, { recursive: true });
});
