// The unstable interop client, built only on the official TypeScript SDK's
// unstable API (`@agentclientprotocol/sdk/unstable`).
//
//   node unstable-client.mjs -- AGENT_COMMAND [ARGS...]
//
// Spawns the agent (in its own process group) and runs the unstable check
// sequence of ../README.md ("Unstable methods"): every unstable v1 method an
// agent handles (session/fork, archive, unarchive, status, set_title,
// auth/status, providers/list|set|disable), mcp/message served by an MCP
// server this client provides over ACP (`McpOverAcpProvider`, declared in
// session/new with transport `acp`), and auth/status_update; then the
// unstable payloads of ../unstable-payloads.json, each compared member by
// member with what the SDK decoded: `systemPrompt` on session/new and
// session/fork (echoed by the agent), `usage` in a prompt's answer, and the
// plan operation and subagent session updates (this client advertises `plan`
// and `subagents`). The same sequence as `official-rust-client --unstable`
// and `libacp-interop-client --unstable`. Finally closes the agent's stdin
// and expects it to exit 0.
//
// Prints exactly `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up
// after 30 s. The agent's stderr is passed through to ours.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

import { client, McpOverAcpProvider, methods, ndJsonStream } from "@agentclientprotocol/sdk/unstable";

const DEADLINE_MS = 30_000;
const EXIT_GRACE_MS = 5_000;
const SERVER_ID = "interop-tools-1";
const SERVER_NAME = "interop-tools";
/** The payloads both ends of the sequence know (../unstable-payloads.json). */
const payloads = JSON.parse(readFileSync(new URL("../unstable-payloads.json", import.meta.url), "utf8"));

class CheckFailure extends Error {}

function check(condition, message) {
  if (!condition) {
    throw new CheckFailure(message);
  }
}

const show = (value) => JSON.stringify(value);

/** Deep equality on JSON values (key order ignored). */
function same(label, actual, expected) {
  const canonical = (v) =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]))
        : v;
  check(show(canonical(actual)) === show(canonical(expected)), `${label}: got ${show(actual)}, expected ${show(expected)}`);
}

let agentProcess;
let workDir;
let finished = false;

function finish(error) {
  if (finished) {
    return;
  }
  finished = true;
  if (agentProcess && agentProcess.exitCode === null && agentProcess.signalCode === null) {
    try {
      process.kill(-agentProcess.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (workDir) {
    rmSync(workDir, { recursive: true, force: true });
  }
  if (error) {
    let reason = error instanceof Error ? error.message : String(error);
    if (error && typeof error.code === "number") {
      reason = `agent answered error ${error.code} ${show(error.message)}${error.data === undefined ? "" : ` data ${show(error.data)}`}`;
    }
    process.stdout.write(`FAIL: ${reason.replace(/\s+/g, " ").trim()}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write("OK\n");
    process.exitCode = 0;
  }
  setImmediate(() => process.exit(process.exitCode));
}

// The wire below the SDK: how many session/update and auth/status_update
// notifications preceded each response. The SDK runs notification handlers
// concurrently with resolving responses (see ../README.md), so after a
// prompt we wait until the handlers have seen what the wire carried.
/** @type {Array<{kind: "notification", method: string} | {kind: "response", id: unknown}>} */
const wire = [];
const sentIds = new Map();

function tap(raw) {
  const incoming = new TransformStream({
    transform(message, controller) {
      if ("method" in message && !("id" in message)) {
        wire.push({ kind: "notification", method: message.method });
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
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable: raw.readable.pipeThrough(incoming), writable: outgoing };
}

/** What the handlers got: `{sessionId, update}`, auth/status_update params, mcp/message params. */
let updates = [];
let authUpdates = [];
let mcpRequests = [];

const mcp = new McpOverAcpProvider();

const app = client({ name: "interop-ts-unstable-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    updates.push({ sessionId: params.sessionId, update: params.update });
  })
  .onNotification(methods.client.auth.statusUpdate, ({ params }) => {
    authUpdates.push(params);
  })
  .onRequest(methods.client.mcp.message, (context) => {
    mcpRequests.push(context.params);
    return mcp.handleRequest(context);
  });

/**
 * Sends a request and waits until every notification that preceded its
 * response on the wire reached our handlers.
 */
async function call(ctx, method, params) {
  const start = wire.length;
  const before = { updates: updates.length, auth: authUpdates.length };
  const response = await ctx.request(method, params);
  const id = sentIds.get(method);
  const end = wire.findIndex((m, i) => i >= start && m.kind === "response" && m.id === id);
  check(end >= 0, `${method}: response not found on the wire`);
  const carried = (name) => wire.slice(start, end).filter((m) => m.kind === "notification" && m.method === name).length;
  const want = { updates: carried("session/update"), auth: carried("auth/status_update") };
  for (
    let spins = 0;
    (updates.length - before.updates < want.updates || authUpdates.length - before.auth < want.auth) && spins < 1000;
    spins++
  ) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  check(
    updates.length - before.updates === want.updates && authUpdates.length - before.auth === want.auth,
    `${method}: the handlers got ${updates.length - before.updates} session/update and ${authUpdates.length - before.auth} auth/status_update, the wire carried ${want.updates} and ${want.auth} before the response`,
  );
  return response;
}

/** A prompt that must end the turn: its answer and the updates before it (all for the session), as decoded. */
async function promptTurn(ctx, sessionId, text) {
  updates = [];
  const response = await call(ctx, methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  check(response.stopReason === "end_turn", `prompt ${show(text)}: stopReason ${show(response.stopReason)}`);
  for (const u of updates) {
    check(u.sessionId === sessionId, `prompt ${show(text)}: an update for session ${show(u.sessionId)}, expected ${show(sessionId)}`);
  }
  const got = updates.map((u) => u.update);
  updates = [];
  return { response, updates: got };
}

/** A prompt that must end the turn; the texts of its agent_message_chunks. */
async function turn(ctx, sessionId, text) {
  const { updates: got } = await promptTurn(ctx, sessionId, text);
  return got.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text);
}

/** The prompt `system`: the agent's one chunk `system: <JSON>`, parsed (the systemPrompt it got, or null). */
async function systemPromptIn(ctx, sessionId) {
  const said = await turn(ctx, sessionId, "system");
  check(said.length === 1 && said[0].startsWith("system: "), `system in ${sessionId}: saw ${show(said)}`);
  return JSON.parse(said[0].slice("system: ".length));
}

/**
 * A prompt whose updates must be exactly `expected` (payloads of
 * ../unstable-payloads.json), member by member as decoded, then the chunk
 * `COMMAND: N updates`.
 */
async function payloadTurn(ctx, sessionId, command, expected) {
  const { updates: got } = await promptTurn(ctx, sessionId, command);
  const last = got.at(-1);
  check(
    last?.sessionUpdate === "agent_message_chunk" && last.content?.text === `${command}: ${expected.length} updates`,
    `${command}: the last update is ${show(last)}, expected the chunk ${show(`${command}: ${expected.length} updates`)}`,
  );
  check(got.length === expected.length + 1, `${command}: ${got.length - 1} updates before the chunk, expected ${expected.length}`);
  expected.forEach((update, i) => same(`${command}: update ${i}`, got[i], update));
}

/** A request that must fail with `code`; returns the error's data. */
async function refused(ctx, label, method, params, code) {
  try {
    const response = await ctx.request(method, params);
    throw new CheckFailure(`${label}: expected error ${code}, got ${show(response)}`);
  } catch (error) {
    if (error instanceof CheckFailure) {
      throw error;
    }
    check(error?.code === code, `${label}: expected error ${code}, got ${error?.code} ${show(error?.message)}`);
    return error.data;
  }
}

async function status(ctx, sessionId, expected) {
  same(`session/status ${sessionId}`, await ctx.request(methods.agent.session.status, { sessionId }), { status: expected });
}

function providers(backupCurrent) {
  const backup = { providerId: "backup", supported: ["openai"], required: false };
  if (backupCurrent) {
    backup.current = backupCurrent;
  }
  return {
    providers: [
      {
        providerId: "main",
        supported: ["anthropic", "openai"],
        required: true,
        current: { apiType: "anthropic", baseUrl: "https://llm.example.invalid/anthropic" },
      },
      backup,
    ],
  };
}

/** The echo tool of the MCP server this client provides. */
async function echoServer({ method, params, notify }) {
  if (method !== "tools/call" || params?.name !== "echo") {
    return { error: { code: -32601, message: `no tool ${method} ${show(params?.name)}` } };
  }
  await notify("notifications/progress", { progressToken: params._meta?.progressToken, progress: 1, total: 1 });
  return { result: { content: [{ type: "text", text: `echo: ${params.arguments?.text}` }], isError: false } };
}

/** The unstable check sequence. */
async function drive(ctx) {
  // 1. initialize: the unstable capabilities.
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { plan: {}, subagents: {} },
    clientInfo: { name: "interop-ts-unstable-client", version: "0.0.0" },
  });
  const caps = init.agentCapabilities ?? {};
  check(
    caps.loadSession === true &&
      ["fork", "archive", "status", "title"].every((c) => typeof caps.sessionCapabilities?.[c] === "object") &&
      typeof caps.auth?.status === "object" &&
      typeof caps.providers === "object" &&
      caps.mcpCapabilities?.acp === true &&
      typeof caps.sessionCapabilities?.systemPrompt?.mode?.override === "object",
    `initialize: agentCapabilities ${show(caps)} lack an unstable capability`,
  );

  // 2. session/new with our MCP server of transport acp.
  const tools = mcp.registerServer(ctx, { name: SERVER_NAME, serverId: SERVER_ID, handler: echoServer });
  const { sessionId: main } = await ctx.request(methods.agent.session.new, {
    cwd: workDir,
    mcpServers: [tools.declaration],
  });

  // 3. Some history.
  same("stream 2", await turn(ctx, main, "stream 2"), ["chunk 0", "chunk 1"]);

  // 4. auth/status.
  same("auth/status", await ctx.request(methods.agent.auth.status, {}), {
    state: "authenticated",
    accounts: [{ label: "Interop account", email: "interop@example.invalid", active: true }],
  });

  // 5. mcp/message during a prompt; our progress notification reaches the agent first.
  mcpRequests = [];
  const mcpChunks = await turn(ctx, main, "mcp hello");
  check(
    mcpRequests.length === 1 &&
      mcpRequests[0].serverId === SERVER_ID &&
      mcpRequests[0].method === "tools/call" &&
      mcpRequests[0].params?.name === "echo" &&
      mcpRequests[0].params?.arguments?.text === "hello" &&
      mcpRequests[0].params?._meta?.["io.modelcontextprotocol/protocolVersion"] === "2026-07-28" &&
      typeof mcpRequests[0].requestId === "string" &&
      mcpRequests[0].requestId !== "",
    `mcp: the agent sent ${show(mcpRequests)}`,
  );
  same("mcp", mcpChunks, ["mcp: echo: hello [notifications/progress]"]);

  // 6. auth/status_update during a prompt, before its answer.
  authUpdates = [];
  const authChunks = await turn(ctx, main, "auth unauthenticated");
  check(
    authUpdates.length === 1 && authUpdates[0].state === "unauthenticated" && (authUpdates[0].accounts ?? []).length === 0,
    `auth: auth/status_update ${show(authUpdates)}`,
  );
  same("auth", authChunks, ["auth: unauthenticated"]);
  const auth = await ctx.request(methods.agent.auth.status, {});
  check(auth.state === "unauthenticated" && (auth.accounts ?? []).length === 0, `auth/status after auth/status_update: ${show(auth)}`);

  // 7. providers/list, set, disable.
  same("providers/list", await ctx.request(methods.agent.providers.list, {}), providers());
  same(
    "providers/set",
    await ctx.request(methods.agent.providers.set, {
      providerId: "backup",
      apiType: "openai",
      baseUrl: "http://127.0.0.1:9/v1",
      headers: { "x-interop": "1" },
    }),
    {},
  );
  same(
    "providers/list after set",
    await ctx.request(methods.agent.providers.list, {}),
    providers({ apiType: "openai", baseUrl: "http://127.0.0.1:9/v1" }),
  );
  const disableMain = await refused(ctx, "providers/disable main", methods.agent.providers.disable, { providerId: "main" }, -32602);
  same("providers/disable main: data.providerId", disableMain?.providerId, "main");
  same("providers/disable", await ctx.request(methods.agent.providers.disable, { providerId: "backup" }), {});
  same("providers/list after disable", await ctx.request(methods.agent.providers.list, {}), providers());

  // 8. session/fork: a new session, usable for prompts.
  const { sessionId: fork } = await ctx.request(methods.agent.session.fork, { sessionId: main, cwd: workDir });
  check(typeof fork === "string" && fork !== "" && fork !== main, `session/fork answered sessionId ${show(fork)}`);
  same("fork: stream 3", await turn(ctx, fork, "stream 3"), ["chunk 0", "chunk 1", "chunk 2"]);

  // 9. session/set_title (trimmed by the agent), session/status.
  same(
    "session/set_title",
    await ctx.request(methods.agent.session.setTitle, { sessionId: fork, title: "  Forked interop session  " }),
    { title: "Forked interop session" },
  );
  await status(ctx, fork, "open");
  await status(ctx, main, "open");

  // 10. session/archive closes the session; unarchive keeps it saved; session/load opens it.
  same("session/archive", await ctx.request(methods.agent.session.archive, { sessionId: main }), {});
  await status(ctx, main, "saved");
  const archived = await refused(
    ctx,
    "prompt of the archived session",
    methods.agent.session.prompt,
    { sessionId: main, prompt: [{ type: "text", text: "stream 1" }] },
    -32002,
  );
  same("prompt of the archived session: data.sessionId", archived?.sessionId, main);
  same("session/unarchive", await ctx.request(methods.agent.session.unarchive, { sessionId: main }), {});
  await status(ctx, main, "saved");
  updates = [];
  await call(ctx, methods.agent.session.load, { sessionId: main, cwd: workDir, mcpServers: [tools.declaration] });
  const first = updates[0]?.update;
  check(
    first?.sessionUpdate === "user_message_chunk" && first.content?.text === "stream 2",
    `session/load: the replay starts with ${show(first)}`,
  );
  await status(ctx, main, "open");
  same("stream 1 after load", await turn(ctx, main, "stream 1"), ["chunk 0"]);

  // 11. An unknown session: -32002 with its id.
  const unknown = await refused(ctx, "session/status nope", methods.agent.session.status, { sessionId: "nope" }, -32002);
  same("session/status nope: data.sessionId", unknown?.sessionId, "nope");

  // 12. systemPrompt (the agent advertised it, override mode included), as the agent got it.
  const { append, override, unsupported } = payloads.systemPrompt;
  const { sessionId: prompted } = await ctx.request(methods.agent.session.new, {
    cwd: workDir,
    mcpServers: [],
    systemPrompt: append,
  });
  same("system after session/new with systemPrompt append", await systemPromptIn(ctx, prompted), append);
  const { sessionId: overridden } = await ctx.request(methods.agent.session.fork, {
    sessionId: prompted,
    cwd: workDir,
    systemPrompt: override,
  });
  same("system after session/fork with systemPrompt override", await systemPromptIn(ctx, overridden), override);
  same("system in S, loaded without systemPrompt", await systemPromptIn(ctx, main), payloads.systemPrompt.none);
  const badMode = await refused(
    ctx,
    "session/new with an unsupported systemPrompt mode",
    methods.agent.session.new,
    { cwd: workDir, mcpServers: [], systemPrompt: unsupported },
    -32602,
  );
  same("session/new with an unsupported systemPrompt mode: data.mode", badMode?.mode, unsupported.mode);

  // 13. usage in a prompt's answer.
  const { response: used } = await promptTurn(ctx, main, "usage");
  same("usage", used.usage, payloads.usage);

  // 14. Plan operations, 15. subagent session updates (with their states).
  await payloadTurn(ctx, main, "plan", payloads.plan);
  await payloadTurn(ctx, main, "subagent", payloads.subagent);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === "--") {
    argv.shift();
  }
  if (argv.length === 0) {
    process.stdout.write("FAIL: usage: node unstable-client.mjs -- AGENT_COMMAND [ARGS...]\n");
    process.exit(1);
  }
  setTimeout(() => finish(new Error(`no result within ${DEADLINE_MS / 1000} s`)), DEADLINE_MS);
  workDir = realpathSync(mkdtempSync(join(tmpdir(), "acp-interop-ts-unstable-")));

  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"], detached: true });
  agentProcess = child;
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const spawnFailed = new Promise((_, reject) => {
    child.on("error", (error) => reject(new Error(`cannot start agent ${show(argv[0])}: ${error.message}`)));
  });
  spawnFailed.catch(() => {});
  child.stdin.on("error", () => {});
  const agentGone = exited.then(({ code, signal }) => {
    throw new Error(`agent exited early (code ${code}, signal ${signal})`);
  });
  agentGone.catch(() => {});

  const stream = tap(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  await Promise.race([app.connectWith(stream, drive), spawnFailed, agentGone]);

  child.stdin.end();
  const status = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), EXIT_GRACE_MS))]);
  if (!status) {
    throw new Error(`agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed`);
  }
  if (status.code !== 0) {
    throw new Error(`agent exited with code ${status.code}, signal ${status.signal} after its stdin was closed`);
  }
}

main().then(
  () => finish(),
  (error) => finish(error),
);
