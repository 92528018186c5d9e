// The core's options and services through the Node constructors (issue 11,
// item 7): checked values, framing, frame size, queues, trace, engine
// events, the auth requirement, and the client services (session model,
// sandboxed fs, terminals).
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { Connection, ErrorCode, RequestError, socketPair } from "libacp";

import {
  closeBoth,
  dynamicPair,
  session,
  turns,
  within,
  INIT_PARAMS,
  textOf,
  eventually,
} from "./support.mjs";

/**
 * Makes a client connection over one end of a socket pair with `options`,
 * expecting it to throw; returns the error and whether the descriptor was
 * left open (refused options take nothing over).
 * @param {Record<string, unknown>} options
 */
function refused(options) {
  const [a, b] = socketPair();
  /** @type {unknown} */
  let error;
  try {
    Connection.fromFds(a, a, {}, /** @type {any} */ ({ ...options, role: "client" }));
  } catch (e) {
    error = e;
  }
  const open = (() => {
    try {
      fs.fstatSync(a);
      return true;
    } catch {
      return false;
    }
  })();
  if (open) fs.closeSync(a);
  fs.closeSync(b);
  return { error, open };
}

// The core's option table decides (`Settings::set`): its messages, its
// refusal kinds (`optionError`: unknown, type, range, not_applicable).
const BAD = [
  [
    { framing: "xml" },
    RangeError,
    "range",
    /`framing` must be one of "ndjson", "content-length", not "xml"/,
  ],
  [{ framing: 1 }, TypeError, "type", /`framing` must be a string, not a number/],
  [{ maxFrameSize: 0 }, RangeError, "range", /`maxFrameSize` must be from 1 to/],
  [{ maxFrameSize: 1.5 }, RangeError, "range", /`maxFrameSize` must be a whole number/],
  [
    { maxFrameSize: "big" },
    TypeError,
    "type",
    /`maxFrameSize` must be a whole number, not a string/,
  ],
  [{ outgoingQueue: 0 }, RangeError, "range", /outgoingQueue/],
  [{ incomingQueue: 2 ** 25 }, RangeError, "range", /incomingQueue/],
  [{ incomingRequests: 0 }, RangeError, "range", /incomingRequests/],
  [
    { requestTimeoutMs: -1 },
    RangeError,
    "range",
    /`requestTimeoutMs` must be a finite number of milliseconds, more than 0/,
  ],
  [{ requestTimeoutMs: 0 }, RangeError, "range", /requestTimeoutMs/],
  [{ requestTimeoutMs: NaN }, RangeError, "range", /requestTimeoutMs/],
  [{ flushTimeoutMs: Infinity }, RangeError, "range", /flushTimeoutMs/],
  [
    { flushTimeoutMs: "1s" },
    TypeError,
    "type",
    /`flushTimeoutMs` must be a number of milliseconds, not a string/,
  ],
  [{ fs: 1 }, TypeError, "type", /`fs` must be a boolean, not a number/],
  [{ sessionModel: "yes" }, TypeError, "type", /`sessionModel` must be a boolean/],
  [{ terminals: 1 }, TypeError, "type", /`terminals` must be a boolean/],
  [
    { requireAuth: "no" },
    TypeError,
    "not_applicable",
    /`requireAuth` does not apply here: it applies to agent connections/,
  ],
  [
    { colour: true },
    TypeError,
    "unknown",
    /unknown option `colour` \(the options are: framing, max_frame_size, /,
  ],
  [{ requestTimeout: 5 }, TypeError, "unknown", /unknown option `requestTimeout`/], // renamed: requestTimeoutMs
  [
    { cwd: "/" },
    TypeError,
    "not_applicable",
    /`cwd` does not apply here: it applies to a client spawning its agent/,
  ],
  [{ headers: { A: "b" } }, TypeError, "not_applicable", /`headers` does not apply here/],
  [{ bearerTokens: ["t"] }, TypeError, "not_applicable", /`bearerTokens` does not apply here/],
  [
    { stderr: () => {} },
    TypeError,
    "not_applicable",
    /`stderr` does not apply here: it is a callback/,
  ],
];

for (const [options, type, kind, message] of BAD) {
  test(`option ${JSON.stringify(options)} is refused with ${/** @type {Function} */ (type).name} (${kind}), the descriptor left alone`, () => {
    const { error, open } = refused(/** @type {Record<string, unknown>} */ (options));
    assert.ok(error instanceof /** @type {Function} */ (type), `got ${String(error)}`);
    assert.match(/** @type {Error} */ (error).message, /** @type {RegExp} */ (message));
    assert.equal(/** @type {any} */ (error).optionError, kind);
    assert.equal(/** @type {any} */ (error).option, Object.keys(options)[0]);
    assert.ok(open, "the descriptor was taken over although the options were refused");
  });
}

// The callbacks (kept by the binding, checked in JavaScript), and values no
// option takes (the core checks the name first).
const BAD_VALUES = [
  [{ trace: "loud" }, /`trace` must be a function, true or "debug", not string/],
  [{ events: "log" }, /`events` must be a function, not string/],
  [{ maxFrameSize: 10n }, /`maxFrameSize` cannot be bigint/],
  [{ nope: 10n }, /unknown option `nope`/],
  [{ cwd: [1, 2] }, /`cwd` does not apply here/],
];

for (const [options, message] of BAD_VALUES) {
  test(`option ${JSON.stringify(Object.keys(options))} with a value no option takes is refused with TypeError`, () => {
    const { error, open } = refused(/** @type {Record<string, unknown>} */ (options));
    assert.ok(error instanceof TypeError, `got ${String(error)}`);
    assert.match(/** @type {Error} */ (error).message, /** @type {RegExp} */ (message));
    assert.ok(open);
  });
}

test("an option of the other role is refused (agent: requireAuth; client: fs, terminals, sessionModel)", () => {
  for (const option of ["fs", "terminals", "sessionModel"]) {
    const [a, b] = socketPair();
    assert.throws(
      () => Connection.fromFds(a, a, {}, { role: "agent", [option]: true }),
      (e) => e instanceof TypeError && /applies to client connections/.test(e.message),
    );
    fs.closeSync(a);
    fs.closeSync(b);
  }
  const [a, b] = socketPair();
  assert.throws(
    () => Connection.fromFds(a, a, {}, { role: "client", requireAuth: true }),
    (e) => e instanceof TypeError && /applies to agent connections/.test(e.message),
  );
  fs.closeSync(a);
  fs.closeSync(b);
});

test("fromFds refuses a role that is not client or agent, and descriptors that are not open", () => {
  assert.throws(
    () => Connection.fromFds(0, 1, {}, /** @type {any} */ ({ role: "server" })),
    TypeError,
  );
  assert.throws(() => Connection.fromFds(1_000_000, 1_000_000, {}, { role: "client" }), RangeError);
});

test("undefined and null options keep every default", async () => {
  const pair = dynamicPair(
    { onRequest: () => ({ protocolVersion: 1, agentCapabilities: {} }) },
    {},
    {
      client: /** @type {any} */ ({
        framing: undefined,
        maxFrameSize: null,
        trace: null,
        events: undefined,
        fs: null,
      }),
    },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await closeBoth(pair);
});

test("Content-Length framing carries a whole conversation", async () => {
  const framing = /** @type {const} */ ("content-length");
  const pair = await session(
    { extMethod: (_m, p) => ({ echo: p }) },
    {},
    { agent: { framing }, client: { framing } },
  );
  const text = "é\n\r\n{}".repeat(1000);
  assert.deepEqual(await within(pair.client.extMethod("_e", { text }), "_e"), { echo: { text } });
  await closeBoth(pair);
});

test("a frame over maxFrameSize is answered and reported as an event; the connection goes on", async () => {
  /** @type {import("libacp").EngineEvent[]} */
  const events = [];
  const pair = await session(
    { extMethod: () => ({ ok: true }) },
    {},
    { agent: { maxFrameSize: 1024, events: (e) => events.push(e) } },
  );
  const error = await within(
    pair.client.extMethod("_big", { pad: "x".repeat(4096) }).catch((e) => e),
    "_big",
  );
  assert.ok(error instanceof RequestError, String(error));
  await eventually(
    () => events.some((e) => e.kind === "oversized_frame"),
    "the oversized_frame event",
  );
  const event = /** @type {import("libacp").EngineEvent} */ (
    events.find((e) => e.kind === "oversized_frame")
  );
  assert.ok(/** @type {number} */ (event.details.size) > 4096);
  assert.equal(event.details.answered, true);
  assert.match(event.message, /max_frame_size|maxFrameSize|limit/);
  assert.deepEqual(await within(pair.client.extMethod("_small", {}), "_small"), { ok: true });
  await closeBoth(pair);
});

test("engine events: a stray response, a frame that is not JSON, an ignored notification, the close", async () => {
  /** @type {import("libacp").EngineEvent[]} */
  const events = [];
  const [a, b] = socketPair();
  const agent = Connection.fromFds(a, a, {}, { role: "agent", events: (e) => events.push(e) });
  const raw = new net.Socket({ fd: b, readable: true, writable: true });
  /** @type {string[]} */
  const lines = [];
  raw.setEncoding("utf8");
  let buffer = "";
  raw.on("data", (/** @type {string} */ d) => {
    buffer += d;
    let i;
    while ((i = buffer.indexOf("\n")) >= 0) {
      lines.push(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
    }
  });
  raw.write('{"jsonrpc":"2.0","id":77,"result":{"late":true}}\n');
  raw.write("this is not json\n");
  raw.write('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}\n');
  await eventually(() => events.length >= 3 && lines.length >= 1, "three events and an answer");
  assert.equal(JSON.parse(/** @type {string} */ (lines[0])).error.code, ErrorCode.PARSE_ERROR);
  await within(agent.close(), "close");
  await eventually(() => events.some((e) => e.kind === "closed"), "the closed event");
  raw.destroy();
  const byKind = Object.fromEntries(events.map((e) => [e.kind, e]));
  assert.deepEqual(byKind.unmatched_response?.details, { id: 77, result: { late: true } });
  assert.equal(/** @type {any} */ (byKind.invalid_frame?.details).error.code, -32700);
  assert.match(byKind.ignored?.message ?? "", /before initialization/);
  assert.deepEqual(byKind.closed?.details, { reason: "closed locally" });
  assert.equal(events.at(-1)?.kind, "closed");
});

test("trace sees every frame both ways; trace: true logs through util.debuglog('libacp')", async () => {
  /** @type {[string, string][]} */
  const frames = [];
  const pair = await session(
    {},
    {},
    { client: { trace: (direction, frame) => frames.push([direction, frame]) } },
  );
  await within(pair.client.close(), "close");
  // Trace calls are queued to the loop on their own: not ordered with close().
  await eventually(
    () => frames.some(([d, f]) => d === "out" && f.includes('"initialize"')),
    "the initialize request traced",
  );
  await eventually(
    () => frames.some(([d, f]) => d === "in" && f.includes('"sessionId":"s1"')),
    "the new session's answer traced",
  );
  await closeBoth(pair);
  const logged = await session({}, {}, { client: { trace: true } });
  await closeBoth(logged);
});

test("small queues and a short flush timeout keep every notification, in order", async () => {
  /** @type {string[]} */
  const texts = [];
  const small = { outgoingQueue: 1, incomingQueue: 1, flushTimeoutMs: 500 };
  const pair = await session(
    {
      async prompt({ sessionId }) {
        for (let i = 0; i < 200; i++) {
          await pair.toClient.sessionUpdate({
            sessionId,
            update: {
              sessionUpdate: "agent_message_chunk",
              content: { type: "text", text: `${i}` },
            },
          });
        }
        return { stopReason: "end_turn" };
      },
    },
    {
      sessionUpdate: ({ update }) => void texts.push(/** @type {string} */ (textOf(update))),
    },
    { agent: small, client: small },
  );
  await within(pair.client.prompt({ sessionId: "s1", prompt: [] }), "prompt");
  assert.deepEqual(
    texts,
    Array.from({ length: 200 }, (_, i) => `${i}`),
  );
  await closeBoth(pair);
});

test("requireAuth: sessions need authenticate first (-32000 with the auth methods)", async () => {
  const authMethods = [{ id: "token", name: "Token", description: null }];
  const pair = dynamicPair(
    {
      onRequest(method) {
        if (method === "initialize")
          return { protocolVersion: 1, agentCapabilities: {}, authMethods };
        if (method === "authenticate") return {};
        if (method === "session/new") return { sessionId: "s1" };
        throw new Error(method);
      },
    },
    {},
    { agent: { requireAuth: true } },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  const error = await within(
    pair.client.request("session/new", { cwd: "/tmp", mcpServers: [] }).catch((e) => e),
    "session/new",
  );
  assert.ok(error instanceof RequestError, String(error));
  assert.equal(error.code, ErrorCode.AUTH_REQUIRED);
  assert.equal(/** @type {any} */ (error.data).authMethods[0].id, "token");
  await within(pair.client.request("authenticate", { methodId: "token" }), "authenticate");
  assert.deepEqual(
    await within(
      pair.client.request("session/new", { cwd: "/tmp", mcpServers: [] }),
      "session/new",
    ),
    { sessionId: "s1" },
  );
  await closeBoth(pair);
});

test("fs: true answers fs/* in the core, inside the session's cwd; the host's handlers never see them", async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "libacp-node-fs-")));
  fs.writeFileSync(path.join(dir, "in.txt"), "inside\n");
  /** @type {string[]} */
  const hostSaw = [];
  /** @type {Record<string, unknown>} */
  const seen = {};
  const pair = dynamicPair(
    {
      async onRequest(method) {
        if (method === "initialize") return { protocolVersion: 1, agentCapabilities: {} };
        if (method === "session/new") return { sessionId: "s1" };
        seen.caps = pair.agent.peerCapabilities();
        seen.read = await pair.agent.request("fs/read_text_file", {
          sessionId: "s1",
          path: path.join(dir, "in.txt"),
        });
        await pair.agent.request("fs/write_text_file", {
          sessionId: "s1",
          path: path.join(dir, "out.txt"),
          content: "written",
        });
        seen.outside = await pair.agent
          .request("fs/read_text_file", { sessionId: "s1", path: "/etc/passwd" })
          .catch((e) => e.code);
        return { stopReason: "end_turn" };
      },
    },
    { onRequest: (method) => void hostSaw.push(method) },
    { client: { fs: true } },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await within(pair.client.request("session/new", { cwd: dir, mcpServers: [] }), "session/new");
  await within(pair.client.request("session/prompt", { sessionId: "s1", prompt: [] }), "prompt");
  assert.deepEqual(/** @type {any} */ (seen.caps).fs, { readTextFile: true, writeTextFile: true });
  assert.deepEqual(seen.read, { content: "inside\n" });
  assert.equal(fs.readFileSync(path.join(dir, "out.txt"), "utf8"), "written");
  assert.ok(
    [-32602, -32002, -32603].includes(/** @type {number} */ (seen.outside)),
    String(seen.outside),
  );
  assert.deepEqual(hostSaw, []);
  await closeBoth(pair);
  fs.rmSync(dir, { recursive: true });
});

test("terminals: true runs terminal/* commands in the core", async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "libacp-node-term-")));
  /** @type {Record<string, any>} */
  const seen = {};
  const pair = dynamicPair(
    {
      async onRequest(method) {
        if (method === "initialize") return { protocolVersion: 1, agentCapabilities: {} };
        if (method === "session/new") return { sessionId: "s1" };
        seen.caps = pair.agent.peerCapabilities();
        const term = /** @type {{terminalId: string}} */ (
          await pair.agent.request("terminal/create", {
            sessionId: "s1",
            command: "sh",
            args: ["-c", "pwd; echo hi"],
          })
        );
        const ids = { sessionId: "s1", terminalId: term.terminalId };
        seen.exit = await pair.agent.request("terminal/wait_for_exit", ids);
        seen.output = /** @type {{output: string}} */ (
          await pair.agent.request("terminal/output", ids)
        ).output;
        await pair.agent.request("terminal/release", ids);
        return { stopReason: "end_turn" };
      },
    },
    {},
    { client: { terminals: true } },
  );
  await within(pair.client.request("initialize", INIT_PARAMS), "initialize");
  await within(pair.client.request("session/new", { cwd: dir, mcpServers: [] }), "session/new");
  await within(pair.client.request("session/prompt", { sessionId: "s1", prompt: [] }), "prompt");
  assert.equal(seen.caps.terminal, true);
  assert.equal(seen.exit.exitCode, 0);
  assert.equal(seen.output, `${dir}\nhi\n`);
  await closeBoth(pair);
  fs.rmSync(dir, { recursive: true });
});

test("sessionModel: true folds session/updates into sessionSnapshot(); the host still sees every update", async () => {
  /** @type {unknown[]} */
  const updates = [];
  const pair = await session(
    {
      async prompt({ sessionId }) {
        for (const text of ["Hel", "lo"]) {
          await pair.toClient.sessionUpdate({
            sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
          });
        }
        await pair.toClient.sessionUpdate({
          sessionId,
          update: {
            sessionUpdate: "tool_call",
            toolCallId: "t1",
            title: "Edit",
            kind: "edit",
            status: "pending",
          },
        });
        return { stopReason: "end_turn" };
      },
    },
    { sessionUpdate: (u) => void updates.push(u) },
    { client: { sessionModel: true } },
  );
  await within(pair.client.prompt({ sessionId: "s1", prompt: [] }), "prompt");
  const snapshot = /** @type {any} */ (pair.client.sessionSnapshot("s1"));
  assert.equal(pair.client.sessionSnapshot("nope"), null);
  assert.equal(snapshot.sessionId, "s1");
  assert.equal(snapshot.entries[0].type, "agent_message");
  assert.equal(snapshot.entries[0].text, "Hello");
  assert.equal(snapshot.toolCalls[0].toolCallId, "t1");
  assert.equal(updates.length, 3);
  await closeBoth(pair);
});

test("sessionSnapshot() without the session model throws, naming the option", async () => {
  const pair = await session({});
  assert.throws(() => pair.client.sessionSnapshot("s1"), /sessionModel: true/);
  await closeBoth(pair);
});
