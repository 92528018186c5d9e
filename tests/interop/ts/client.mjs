// An ACP v1 client built only on the official TypeScript SDK
// (`@agentclientprotocol/sdk`).
//
//   node client.mjs -- AGENT_COMMAND [ARGS...]
//   node client.mjs --url URL
//
// Spawns the agent (in its own process group), or connects to a remote agent
// at URL (`ws://`/`wss://`: the SDK's experimental WebSocket client on the
// `ws` package; `http://`/`https://`: its experimental Streamable HTTP
// client), and runs the scripted check sequence described in ../README.md
// against it: initialize, session/new, prompts `stream 50`, `permission`,
// `read`, `write`, `terminal`, `wait` + session/cancel, then session/load of
// the session. Finally closes the agent's stdin and expects it to exit 0 (a
// remote agent: closes the connection, and that is all).
//
// Prints exactly `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up
// after 30 s. The agent's stderr is passed through to ours.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const DEADLINE_MS = 30_000;
const EXIT_GRACE_MS = 5_000;
const STREAM_COUNT = 50;
const FILE_CONTENT = "hello from client";
const CANCEL_AFTER_MS = 100;

class CheckFailure extends Error {}

function check(condition, message) {
  if (!condition) {
    throw new CheckFailure(message);
  }
}

const show = (value) => JSON.stringify(value);

let agentProcess;
let workDir;
let finished = false;

function cleanup() {
  if (agentProcess && agentProcess.exitCode === null && agentProcess.signalCode === null) {
    try {
      process.kill(-agentProcess.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  terminals.killAll();
  if (workDir) {
    rmSync(workDir, { recursive: true, force: true });
  }
}

function finish(error) {
  if (finished) {
    return;
  }
  finished = true;
  cleanup();
  if (error) {
    let reason = error instanceof Error ? error.message : String(error);
    if (error && typeof error.code === "number") {
      // A JSON-RPC error from the agent (the SDK's RequestError).
      reason = `agent answered error ${error.code} ${show(error.message)}${error.data === undefined ? "" : ` data ${show(error.data)}`}`;
    }
    process.stdout.write(`FAIL: ${reason.replace(/\s+/g, " ").trim()}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write("OK\n");
    process.exitCode = 0;
  }
  // Do not wait for lingering handles (a stuck agent, open pipes).
  setImmediate(() => process.exit(process.exitCode));
}

// ---------------------------------------------------------------------------
// What was seen, twice over:
// * `wire`: every message as it came off the agent's stdout, in wire order,
//   recorded by a tap below the SDK (remotely: in the order the transport
//   handed messages up, its event streams merged). The ordering checks ("all updates before
//   the response") use this, because the SDK runs notification handlers
//   concurrently with resolving responses (see README: SDK quirks).
// * `updates` / `requests`: what the SDK delivered to our handlers. Each
//   update on the wire must also reach the session/update handler, in order.

/** @type {Array<{kind: "update", sessionId: string, update: any} | {kind: "response", id: unknown}>} */
const wire = [];
/** Latest id the SDK used for each method we sent. */
const sentIds = new Map();

function tap(raw) {
  const incoming = new TransformStream({
    transform(message, controller) {
      if (message.method === "session/update" && !("id" in message)) {
        wire.push({ kind: "update", sessionId: message.params?.sessionId, update: message.params?.update });
      } else if (!("method" in message) && "id" in message) {
        wire.push({ kind: "response", id: message.id });
      }
      controller.enqueue(message);
    },
  });
  const writer = raw.writable.getWriter();
  const outgoing = new WritableStream({
    write(message) {
      if ("method" in message && "id" in message) {
        sentIds.set(message.method, message.id);
      }
      return writer.write(message);
    },
    close() {
      return writer.close();
    },
    abort(reason) {
      return writer.abort(reason);
    },
  });
  return { readable: raw.readable.pipeThrough(incoming), writable: outgoing };
}

/** @type {Array<{sessionId: string, update: any}>} */
let updates = [];
/** @type {Array<{method: string, params: any}>} */
let requests = [];

function takeRequests() {
  const taken = requests;
  requests = [];
  return taken;
}

/**
 * Sends a request and returns its result with the session/update
 * notifications that preceded its response on the wire (checked to have
 * reached our handler too, in the same order).
 */
async function call(ctx, method, params, options) {
  const start = wire.length;
  const handled = updates.length;
  const response = await ctx.request(method, params, options);
  const id = sentIds.get(method);
  const end = wire.findIndex((m, i) => i >= start && m.kind === "response" && m.id === id);
  check(end >= 0, `${method}: response not found on the wire`);
  const before = wire.slice(start, end).filter((m) => m.kind === "update");
  // The SDK may still be running the handlers of the last few updates.
  for (let spins = 0; updates.length - handled < before.length && spins < 1000; spins++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  const delivered = updates.slice(handled);
  check(
    show(delivered.slice(0, before.length).map(summary)) === show(before.map(summary)),
    `${method}: the session/update handler got ${delivered.length} updates, the wire carried ${before.length} before the response`,
  );
  check(
    delivered.length === before.length,
    `${method}: ${delivered.length - before.length} session/update notifications arrived after the response: ${show(delivered.slice(before.length).map((d) => describeUpdate(d.update)))}`,
  );
  updates = [];
  return { response, seen: before };
}

/** What must survive the SDK's decoding: session, kind, text, tool call id and status. */
function summary({ sessionId, update }) {
  return [sessionId, describeUpdate(update), update.toolCallId ?? null, update.status ?? null];
}

function describeUpdate(u) {
  const text = u.content?.type === "text" ? ` ${show(u.content.text)}` : "";
  return `${u.sessionUpdate}${text}`;
}

// ---------------------------------------------------------------------------
// A minimal real terminal implementation: runs the command, collects output.

const terminals = {
  next: 0,
  /** @type {Map<string, {child: import("node:child_process").ChildProcess, output: string, exit: Promise<{exitCode: number|null, signal: string|null}>, exitStatus: any}>} */
  live: new Map(),

  create(params) {
    const id = `term-${this.next++}`;
    const env = { ...process.env };
    for (const { name, value } of params.env ?? []) {
      env[name] = value;
    }
    const child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? workDir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const entry = { child, output: "", exitStatus: undefined, exit: undefined };
    const append = (data) => {
      entry.output += data.toString("utf8");
      const limit = params.outputByteLimit;
      if (limit != null && Buffer.byteLength(entry.output) > limit) {
        entry.output = Buffer.from(entry.output).subarray(-limit).toString("utf8");
        entry.truncated = true;
      }
    };
    child.stdout.on("data", append);
    child.stderr.on("data", append);
    entry.exit = new Promise((resolve) => {
      child.on("error", (error) => {
        entry.output += String(error);
        entry.exitStatus = { exitCode: 127, signal: null };
        resolve(entry.exitStatus);
      });
      // "close" fires after the output pipes are drained.
      child.on("close", (code, signal) => {
        entry.exitStatus = { exitCode: code, signal };
        resolve(entry.exitStatus);
      });
    });
    this.live.set(id, entry);
    return id;
  },

  get(id) {
    const entry = this.live.get(id);
    if (!entry) {
      throw new Error(`unknown terminal ${id}`);
    }
    return entry;
  },

  kill(id) {
    const entry = this.get(id);
    if (entry.exitStatus === undefined) {
      entry.child.kill("SIGKILL");
    }
  },

  release(id) {
    this.kill(id);
    this.live.delete(id);
  },

  killAll() {
    for (const entry of this.live.values()) {
      if (entry.exitStatus === undefined) {
        entry.child.kill("SIGKILL");
      }
    }
  },
};

// ---------------------------------------------------------------------------

const app = client({ name: "interop-ts-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    updates.push({ sessionId: params.sessionId, update: params.update });
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    requests.push({ method: "session/request_permission", params });
    const option =
      params.options.find((o) => o.kind === "allow_once") ??
      params.options.find((o) => o.optionId === "allow_once");
    if (!option) {
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    requests.push({ method: "fs/read_text_file", params });
    return { content: FILE_CONTENT };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    requests.push({ method: "fs/write_text_file", params });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest(methods.client.terminal.create, async ({ params }) => {
    requests.push({ method: "terminal/create", params });
    return { terminalId: terminals.create(params) };
  })
  .onRequest(methods.client.terminal.output, async ({ params }) => {
    requests.push({ method: "terminal/output", params });
    const entry = terminals.get(params.terminalId);
    const response = { output: entry.output, truncated: Boolean(entry.truncated) };
    if (entry.exitStatus !== undefined) {
      response.exitStatus = entry.exitStatus;
    }
    return response;
  })
  .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
    requests.push({ method: "terminal/wait_for_exit", params });
    return await terminals.get(params.terminalId).exit;
  })
  .onRequest(methods.client.terminal.kill, async ({ params }) => {
    requests.push({ method: "terminal/kill", params });
    terminals.kill(params.terminalId);
    return {};
  })
  .onRequest(methods.client.terminal.release, async ({ params }) => {
    requests.push({ method: "terminal/release", params });
    terminals.release(params.terminalId);
    return {};
  });

/** The scripted check sequence. */
async function drive(ctx) {
  const history = []; // what a session/load must replay, built from what we saw

  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: true,
    },
    clientInfo: { name: "interop-ts-client", version: "0.0.0" },
  });
  check(init.protocolVersion === 1, `initialize answered protocolVersion ${show(init.protocolVersion)}`);
  check(
    init.agentCapabilities?.loadSession === true,
    `initialize answered agentCapabilities ${show(init.agentCapabilities)}; loadSession true is needed`,
  );

  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  check(typeof sessionId === "string" && sessionId.length > 0, `session/new answered sessionId ${show(sessionId)}`);

  /** Sends a one-text-block prompt; returns the response and what arrived before it. */
  const prompt = async (text, options) => {
    history.push({ sessionUpdate: "user_message_chunk", text });
    const { response, seen } = await call(
      ctx,
      methods.agent.session.prompt,
      { sessionId, prompt: [{ type: "text", text }] },
      options,
    );
    for (const { sessionId: sid, update } of seen) {
      check(sid === sessionId, `prompt ${show(text)}: update for session ${show(sid)}, expected ${show(sessionId)}`);
      if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") {
        history.push({ sessionUpdate: "agent_message_chunk", text: update.content.text });
      }
    }
    return { response, seen: seen.map((s) => s.update), requests: takeRequests() };
  };

  const chunkTexts = (seen) =>
    seen.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text);

  // 1. Streaming: every update is handled before the prompt's response.
  {
    const { response, seen } = await prompt(`stream ${STREAM_COUNT}`);
    check(response.stopReason === "end_turn", `stream: stopReason ${show(response.stopReason)}`);
    const expected = Array.from({ length: STREAM_COUNT }, (_, i) => `chunk ${i}`);
    const got = seen.map((u) => (u.sessionUpdate === "agent_message_chunk" ? u.content?.text : describeUpdate(u)));
    check(
      show(got) === show(expected),
      `stream: before the response saw ${got.length} updates, expected ${STREAM_COUNT} chunks in order; first: ${show(got.slice(0, 3))}, last: ${show(got.slice(-3))}`,
    );
  }

  // 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
  {
    const { response, seen, requests: reqs } = await prompt("permission");
    check(response.stopReason === "end_turn", `permission: stopReason ${show(response.stopReason)}`);
    check(
      reqs.length === 1 && reqs[0].method === "session/request_permission",
      `permission: expected one session/request_permission, got ${show(reqs.map((r) => r.method))}`,
    );
    const req = reqs[0].params;
    check(req.sessionId === sessionId, `permission: request for session ${show(req.sessionId)}`);
    const allow = req.options.find((o) => o.kind === "allow_once");
    check(allow && req.options.some((o) => o.kind === "reject_once"), `permission: options ${show(req.options)}`);
    const kinds = seen.map(describeUpdate);
    check(seen.length === 3, `permission: expected tool_call, chunk, tool_call_update; saw ${show(kinds)}`);
    const [toolCall, chunk, toolCallUpdate] = seen;
    check(
      toolCall.sessionUpdate === "tool_call" &&
        (toolCall.status ?? "pending") === "pending" &&
        toolCall.kind === "edit" &&
        toolCall.title === "Edit file",
      `permission: first update ${show(toolCall)}`,
    );
    check(
      req.toolCall.toolCallId === toolCall.toolCallId,
      `permission: request is about tool call ${show(req.toolCall.toolCallId)}, not ${show(toolCall.toolCallId)}`,
    );
    const text = chunk.content?.text;
    check(
      chunk.sessionUpdate === "agent_message_chunk" &&
        (text === `permission: ${allow.optionId}` || text === "permission: allow_once"),
      `permission: expected chunk "permission: ${allow.optionId}", saw ${describeUpdate(chunk)}`,
    );
    check(
      toolCallUpdate.sessionUpdate === "tool_call_update" &&
        toolCallUpdate.toolCallId === toolCall.toolCallId &&
        toolCallUpdate.status === "completed",
      `permission: last update ${show(toolCallUpdate)}`,
    );
  }

  // 3. fs/read_text_file served by our handler.
  {
    const path = join(workDir, "a.txt");
    const { response, seen, requests: reqs } = await prompt(`read ${path}`);
    check(response.stopReason === "end_turn", `read: stopReason ${show(response.stopReason)}`);
    check(
      reqs.length === 1 && reqs[0].method === "fs/read_text_file" && reqs[0].params.path === path &&
        reqs[0].params.sessionId === sessionId,
      `read: expected one fs/read_text_file of ${path}, got ${show(reqs)}`,
    );
    check(show(chunkTexts(seen)) === show([FILE_CONTENT]) && seen.length === 1,
      `read: expected the one chunk ${show(FILE_CONTENT)}, saw ${show(seen.map(describeUpdate))}`);
  }

  // 4. fs/write_text_file.
  {
    const path = join(workDir, "b.txt");
    const { response, seen, requests: reqs } = await prompt(`write ${path} hi`);
    check(response.stopReason === "end_turn", `write: stopReason ${show(response.stopReason)}`);
    check(
      reqs.length === 1 && reqs[0].method === "fs/write_text_file" && reqs[0].params.path === path &&
        reqs[0].params.content === "hi" && reqs[0].params.sessionId === sessionId,
      `write: expected one fs/write_text_file of ${path} with "hi", got ${show(reqs)}`,
    );
    check(readFileSync(path, "utf8") === "hi", "write: the file does not hold what was written");
    check(show(chunkTexts(seen)) === show(["wrote"]) && seen.length === 1,
      `write: expected the one chunk "wrote", saw ${show(seen.map(describeUpdate))}`);
  }

  // 5. terminal/* really run by us.
  {
    const { response, seen, requests: reqs } = await prompt("terminal echo hi");
    check(response.stopReason === "end_turn", `terminal: stopReason ${show(response.stopReason)}`);
    const calls = reqs.map((r) => r.method);
    check(
      show(calls) === show(["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]),
      `terminal: expected create, wait_for_exit, output, release; got ${show(calls)}`,
    );
    const create = reqs[0].params;
    check(
      create.command === "sh" && show(create.args) === show(["-c", "echo hi"]),
      `terminal: created ${show({ command: create.command, args: create.args })}`,
    );
    const ids = new Set(reqs.map((r) => r.params.terminalId).filter(Boolean));
    check(ids.size === 1, `terminal: requests named terminals ${show([...ids])}`);
    check(show(chunkTexts(seen)) === show(["hi\n"]) && seen.length === 1,
      `terminal: expected the one chunk "hi\\n", saw ${show(seen.map(describeUpdate))}`);
  }

  // 6. session/cancel during a prompt turn.
  {
    let answered = false;
    const pending = prompt("wait").finally(() => {
      answered = true;
    });
    pending.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, CANCEL_AFTER_MS));
    check(!answered, "wait: the prompt was answered before session/cancel was sent");
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    const { response } = await pending;
    check(response.stopReason === "cancelled", `wait: after session/cancel, stopReason ${show(response.stopReason)}`);
  }

  // 7. session/load replays the history before answering.
  {
    const { seen } = await call(ctx, methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [] });
    const replay = seen.map(({ sessionId: sid, update }) => ({
      sid,
      sessionUpdate: update.sessionUpdate,
      text: update.content?.type === "text" ? update.content.text : undefined,
    }));
    check(replay.every((r) => r.sid === sessionId), "load: replayed updates for another session");
    const got = replay.map(({ sessionUpdate, text }) => ({ sessionUpdate, text }));
    if (show(got) !== show(history)) {
      const at = got.findIndex((g, i) => show(g) !== show(history[i]));
      throw new CheckFailure(
        `load: before the response saw ${got.length} replayed updates, expected ${history.length}; first difference at ${at}: got ${show(got[at])}, expected ${show(history[at])}`,
      );
    }
  }
}

/** A remote agent at `url`: the check sequence over the SDK's experimental transports. */
async function runRemote(url) {
  let raw;
  if (/^wss?:\/\//i.test(url)) {
    raw = createWebSocketStream(url, { WebSocket });
  } else if (/^https?:\/\//i.test(url)) {
    raw = createHttpStream(url);
  } else {
    throw new Error(`--url ${show(url)}: want ws://, wss://, http:// or https://`);
  }
  await app.connectWith(tap(raw), drive);
}

/** A local agent: spawned, driven over its stdin/stdout, then made to exit. */
async function runLocal(argv) {
  const child = spawn(argv[0], argv.slice(1), {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true, // own process group, so a wrapper and its children die together
  });
  agentProcess = child;
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const spawnFailed = new Promise((_, reject) => {
    child.on("error", (error) => reject(new Error(`cannot start agent ${show(argv[0])}: ${error.message}`)));
  });
  spawnFailed.catch(() => {});
  child.stdin.on("error", () => {}); // EPIPE when the agent dies; reported via the connection

  const stream = tap(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const agentGone = exited.then(({ code, signal }) => {
    throw new Error(`agent exited early (code ${code}, signal ${signal})`);
  });
  agentGone.catch(() => {});

  try {
    await Promise.race([app.connectWith(stream, drive), spawnFailed, agentGone]);
  } catch (error) {
    // Say so when the agent died: "connection closed" alone does not tell.
    const status = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 200))]);
    if (status && error instanceof Error && !/agent exited/.test(error.message)) {
      error.message += ` (agent exited: code ${status.code}, signal ${status.signal})`;
    }
    throw error;
  }

  // The agent must exit 0 once its stdin is closed.
  child.stdin.end();
  const timer = new Promise((resolve) => setTimeout(() => resolve(undefined), EXIT_GRACE_MS));
  const status = await Promise.race([exited, timer]);
  if (!status) {
    throw new Error(`agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed`);
  }
  if (status.code !== 0) {
    throw new Error(`agent exited with code ${status.code}, signal ${status.signal} after its stdin was closed`);
  }
}

async function main() {
  const argv = process.argv.slice(2);
  let url;
  if (argv[0] === "--url" && argv.length === 2) {
    url = argv[1];
  } else {
    if (argv[0] === "--") {
      argv.shift();
    }
    if (argv.length === 0) {
      process.stdout.write("FAIL: usage: node client.mjs -- AGENT_COMMAND [ARGS...] | --url URL\n");
      process.exit(1);
    }
  }

  // Not unref'd: it also keeps node from exiting silently on a stuck promise.
  setTimeout(() => finish(new Error(`no result within ${DEADLINE_MS / 1000} s`)), DEADLINE_MS);

  workDir = realpathSync(mkdtempSync(join(tmpdir(), "acp-interop-ts-")));

  if (url !== undefined) {
    await runRemote(url);
  } else {
    await runLocal(argv);
  }
}

main().then(
  () => finish(),
  (error) => finish(error),
);
