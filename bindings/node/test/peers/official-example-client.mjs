// A client built only on the official TypeScript SDK
// (`@agentclientprotocol/sdk`, installed in tests/interop/ts/node_modules by
// scripts/setup-interop.sh) driving examples/node/agent.mjs, the libacp
// quickstart agent, through what that example does: initialize,
// session/new, one prompt whose reply is streamed word by word, a tool call,
// a permission request (answered by the SDK client's handler) and its
// update, stopReason end_turn; then a second, long prompt cancelled with
// session/cancel once its first word arrived: stopReason cancelled, the
// reply cut short, no tool call; then stdin closed and the agent must exit
// 0. The Node counterpart of bindings/python/tests/official_sdk_example_client.py.
//
//   node bindings/node/test/peers/official-example-client.mjs -- AGENT_COMMAND [ARGS...]
//
// (The official interop client, tests/interop/ts/client.mjs, needs more than
// the example offers; interop-agent.mjs is the agent that passes it.)
//
// Prints `OK` (exit 0) or `FAIL: <reason>` (exit 1); gives up after 30 s and
// kills the agent's process group. The agent's stderr is passed through.
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

import { CheckFailure, check, show } from "./checks.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const SDK_HOME = path.join(ROOT, "tests", "interop", "ts");
const DEADLINE_MS = 30_000;
const EXIT_GRACE_MS = 5_000;
/** A prompt whose echo takes seconds to stream (a word every 20 ms). */
const LONG_PROMPT = Array.from({ length: 100 }, (_, i) => `word${i}`).join(" ");

/**
 * What the official SDK's values look like here (its own types live in
 * tests/interop/ts/node_modules, which type-checking this file must not need).
 * @typedef {{ type: string, text?: string }} Content
 * @typedef {{ sessionUpdate: string, content?: Content, toolCallId?: string,
 *   status?: string, kind?: string, title?: string }} Update
 * @typedef {{ sessionId: string } & Update} SeenUpdate
 * @typedef {{ optionId: string, name: string, kind: string }} PermissionOption
 * @typedef {{ sessionId: string, toolCall: { toolCallId: string },
 *   options: PermissionOption[] }} PermissionRequest
 * @typedef {Record<string, any>} Message a JSON-RPC message
 * @typedef {import("node:stream/web").ReadableStream<Message>} MessageReader
 * @typedef {import("node:stream/web").WritableStream<Message>} MessageWriter
 * @typedef {{ readable: MessageReader, writable: MessageWriter }} Stream
 * @typedef {{
 *   request(method: string, params: unknown): Promise<any>,
 *   notify(method: string, params: unknown): Promise<void>,
 * }} AgentContext the SDK's ClientContext
 * @typedef {{
 *   onNotification(method: string, handler: (n: { params: any }) => unknown): ClientApp,
 *   onRequest(method: string, handler: (r: { params: any }) => unknown): ClientApp,
 *   connectWith(stream: Stream, op: (context: AgentContext) => Promise<void>): Promise<void>,
 * }} ClientApp
 * @typedef {{
 *   client(options: { name: string }): ClientApp,
 *   ndJsonStream(
 *     output: import("node:stream/web").WritableStream<Uint8Array>,
 *     input: import("node:stream/web").ReadableStream<Uint8Array>,
 *   ): Stream,
 * }} Sdk
 */

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The official TypeScript SDK, or a failure saying how to install it. */
async function loadSdk() {
  let entry;
  try {
    entry = createRequire(path.join(SDK_HOME, "package.json")).resolve("@agentclientprotocol/sdk");
  } catch {
    throw new CheckFailure(
      `the official TypeScript SDK is not installed in ${SDK_HOME}/node_modules: ` +
        "run scripts/setup-interop.sh",
    );
  }
  return /** @type {Sdk} */ (await import(pathToFileURL(entry).href));
}

/**
 * The wire as read, below the SDK: every `session/update` and response in
 * the order it came off the agent's stdout, and the id of each request sent
 * (the SDK can resolve a request before its handlers ran the updates that
 * preceded it: tests/interop/README.md, quirks).
 */
class Wire {
  constructor() {
    /** @type {Array<{ kind: "update", update: SeenUpdate } | { kind: "response", id: unknown }>} */
    this.log = [];
    /** @type {Map<string, unknown>} the last id sent for each method */
    this.sentIds = new Map();
  }

  /**
   * `stream` with a tap on both directions.
   * @param {Stream} stream
   * @returns {Stream}
   */
  tap(stream) {
    const incoming = new TransformStream({
      /** @param {Message} message */
      transform: (message, controller) => {
        if (message.method === "session/update" && !("id" in message)) {
          const { sessionId, update } = message.params ?? {};
          this.log.push({ kind: "update", update: { sessionId, ...update } });
        } else if (!("method" in message) && "id" in message) {
          this.log.push({ kind: "response", id: message.id });
        }
        controller.enqueue(message);
      },
    });
    const writer = stream.writable.getWriter();
    const outgoing = new WritableStream({
      /** @param {Message} message */
      write: (message) => {
        if ("method" in message && "id" in message) this.sentIds.set(message.method, message.id);
        return writer.write(message);
      },
      close: () => writer.close(),
      abort: (reason) => writer.abort(reason),
    });
    return {
      readable: /** @type {MessageReader} */ (stream.readable.pipeThrough(incoming)),
      writable: /** @type {MessageWriter} */ (outgoing),
    };
  }

  /**
   * The updates between log position `start` and the response to the last
   * `method` request sent.
   * @param {number} start
   * @param {string} method
   */
  updatesBefore(start, method) {
    const id = this.sentIds.get(method);
    const end = this.log.findIndex((m, i) => i >= start && m.kind === "response" && m.id === id);
    check(end >= 0, `${method}: response not found on the wire`);
    return this.log.slice(start, end).flatMap((m) => (m.kind === "update" ? [m.update] : []));
  }
}

/**
 * The SDK client's handlers, recording what they got; not made from the
 * SDK's own handler types, so methods left out are answered `-32601`.
 */
class ExampleClient {
  constructor() {
    /** @type {SeenUpdate[]} */
    this.updates = [];
    /** @type {PermissionRequest[]} */
    this.permissions = [];
    /** Called once for each agent message chunk. */
    this.onChunk = () => {};
  }

  /** @param {{ sessionId: string, update: Update }} params */
  sessionUpdate({ sessionId, update }) {
    this.updates.push({ sessionId, ...update });
    if (update.sessionUpdate === "agent_message_chunk") this.onChunk();
  }

  /** @param {PermissionRequest} params */
  requestPermission(params) {
    this.permissions.push(params);
    const allow = params.options.find((o) => o.kind === "allow_once");
    if (allow === undefined) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  }

  /** @param {Sdk} sdk */
  app(sdk) {
    // session/update first: the SDK then runs its handler before resolving
    // a later response (tests/interop/README.md, quirks).
    return sdk
      .client({ name: "official-example-client" })
      .onNotification("session/update", ({ params }) => this.sessionUpdate(params))
      .onRequest("session/request_permission", ({ params }) => this.requestPermission(params));
  }
}

/**
 * Sends a request; returns its result and the updates that preceded its
 * response on the wire, checked to have reached the handler, in order, and
 * none after it.
 * @param {AgentContext} agent
 * @param {Wire} wire
 * @param {ExampleClient} client
 * @param {string} method
 * @param {unknown} params
 */
async function call(agent, wire, client, method, params) {
  const start = wire.log.length;
  const handled = client.updates.length;
  const result = await agent.request(method, params);
  const before = wire.updatesBefore(start, method);
  // The SDK may still be running the handlers of the last few updates.
  for (let spins = 0; client.updates.length - handled < before.length && spins < 1000; spins++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  const delivered = client.updates.slice(handled);
  check(
    show(delivered.map(summary)) === show(before.map(summary)),
    `${method}: the session/update handler got ${show(delivered.map(summary))}, ` +
      `the wire carried ${show(before.map(summary))} before the response`,
  );
  return { result, updates: delivered };
}

/**
 * What must survive the SDK's decoding: session, kind, text, tool call id
 * and status.
 * @param {SeenUpdate} update
 */
function summary(update) {
  const { sessionId, sessionUpdate, content, toolCallId, status } = update;
  return [sessionId, sessionUpdate, content?.text ?? null, toolCallId ?? null, status ?? null];
}

/** @param {SeenUpdate[]} updates */
function chunkTexts(updates) {
  return updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content?.text);
}

/**
 * The example's whole turn: its reply streamed word by word, a tool call,
 * a permission request about it, the tool call's update, end_turn.
 * @param {(text: string) => ReturnType<typeof call>} prompt
 * @param {ExampleClient} client
 * @param {string} sessionId
 */
async function checkTurn(prompt, client, sessionId) {
  const { result, updates } = await prompt("hello");
  check(result.stopReason === "end_turn", `prompt: stopReason ${show(result.stopReason)}`);
  check(
    updates.every((u) => u.sessionId === sessionId),
    `prompt: updates for another session: ${show(updates)}`,
  );
  const text = chunkTexts(updates).join("");
  check(text === "You said: hello ", `prompt: the streamed reply is ${show(text)}`);
  const kinds = updates.map((u) => u.sessionUpdate);
  check(
    show(kinds) ===
      show([...Array(3).fill("agent_message_chunk"), "tool_call", "tool_call_update"]),
    `prompt: updates ${show(kinds)}`,
  );
  const [toolCall, toolCallUpdate] = updates.slice(3);
  check(
    toolCall.kind === "edit" && (toolCall.status ?? "pending") === "pending",
    `prompt: tool call ${show(toolCall)}`,
  );
  check(
    client.permissions.length === 1,
    `prompt: ${client.permissions.length} permission requests`,
  );
  const permission = client.permissions[0];
  const optionKinds = permission.options.map((o) => o.kind).sort();
  check(
    permission.sessionId === sessionId &&
      permission.toolCall.toolCallId === toolCall.toolCallId &&
      show(optionKinds) === show(["allow_once", "reject_once"]),
    `prompt: permission request ${show(permission)}`,
  );
  check(
    toolCallUpdate.toolCallId === toolCall.toolCallId && toolCallUpdate.status === "completed",
    `prompt: tool call update ${show(toolCallUpdate)}`,
  );
}

/**
 * A turn cancelled once its first word arrived: stopReason cancelled, the
 * reply cut short (a prefix of the echo), no tool call, no permission request.
 * @param {(text: string) => ReturnType<typeof call>} prompt
 * @param {AgentContext} agent
 * @param {ExampleClient} client
 * @param {string} sessionId
 */
async function checkCancelledTurn(prompt, agent, client, sessionId) {
  client.permissions = [];
  /** @type {Promise<void>} */
  const firstChunk = new Promise((resolve) => (client.onChunk = resolve));
  const turn = prompt(LONG_PROMPT);
  turn.catch(() => {}); // awaited below; a failure must not go unhandled meanwhile
  await Promise.race([firstChunk, turn]);
  client.onChunk = () => {};
  await agent.notify("session/cancel", { sessionId });
  const { result, updates } = await turn;
  check(
    result.stopReason === "cancelled",
    `cancel: stopReason ${show(result.stopReason)} after session/cancel`,
  );
  const words = `You said: ${LONG_PROMPT}`.split(" ").map((w) => `${w} `);
  const texts = chunkTexts(updates);
  check(
    texts.length >= 1 &&
      texts.length < words.length &&
      show(texts) === show(words.slice(0, texts.length)),
    `cancel: the reply was ${texts.length} of ${words.length} words: ${show(texts.slice(0, 5))}...`,
  );
  check(
    updates.every((u) => u.sessionUpdate === "agent_message_chunk"),
    `cancel: updates ${show(updates.map((u) => u.sessionUpdate))}`,
  );
  check(
    client.permissions.length === 0,
    `cancel: ${client.permissions.length} permission requests`,
  );
}

/**
 * The sequence over the SDK's connection.
 * @param {AgentContext} agent
 * @param {Wire} wire
 * @param {ExampleClient} client
 * @param {string} workDir
 */
async function drive(agent, wire, client, workDir) {
  const init = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {},
    clientInfo: { name: "official-example-client", version: "0.0.0" },
  });
  check(init.protocolVersion === 1, `initialize: protocolVersion ${show(init.protocolVersion)}`);
  const created = await agent.request("session/new", { cwd: workDir, mcpServers: [] });
  const sessionId = created.sessionId;
  check(typeof sessionId === "string" && sessionId, `session/new: sessionId ${show(sessionId)}`);

  /** @param {string} text */
  const prompt = (text) =>
    call(agent, wire, client, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  await checkTurn(prompt, client, sessionId);
  await checkCancelledTurn(prompt, agent, client, sessionId);
}

/**
 * Starts the agent in its own process group, runs the sequence, then closes
 * the agent's stdin: it must exit 0 within the grace period.
 * @param {string[]} argv
 * @param {string} workDir
 * @param {{ process?: import("node:child_process").ChildProcess }} state
 */
async function run(argv, workDir, state) {
  const sdk = await loadSdk();
  const child = spawn(argv[0], argv.slice(1), {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true, // its own process group, killed whole on failure
  });
  state.process = child;
  /** @type {Promise<{ code: number | null, signal: string | null }>} */
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  /** @type {Promise<never>} */
  const failed = new Promise((_, reject) => {
    child.on("error", (e) => reject(new CheckFailure(`cannot start agent ${show(argv[0])}: ${e}`)));
    exited.then(({ code, signal }) =>
      reject(new CheckFailure(`agent exited early (code ${code}, signal ${signal})`)),
    );
  });
  failed.catch(() => {});
  child.stdin?.on("error", () => {}); // EPIPE when the agent dies; reported above
  const stdin = /** @type {import("node:stream").Writable} */ (child.stdin);
  const stdout = /** @type {import("node:stream").Readable} */ (child.stdout);

  const wire = new Wire();
  const stream = wire.tap(sdk.ndJsonStream(Writable.toWeb(stdin), Readable.toWeb(stdout)));
  const client = new ExampleClient();
  await Promise.race([
    client.app(sdk).connectWith(stream, (agent) => drive(agent, wire, client, workDir)),
    failed,
  ]);

  stdin.end();
  const status = await Promise.race([exited, sleep(EXIT_GRACE_MS)]);
  check(status, `agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed`);
  check(
    status.code === 0,
    `agent exited with code ${status.code}, signal ${status.signal} after its stdin was closed`,
  );
}

/**
 * A failure as one readable reason.
 * @param {unknown} error
 */
function explain(error) {
  if (error instanceof CheckFailure) return error.message;
  const e = /** @type {{ code?: unknown, message?: unknown, data?: unknown }} */ (error);
  if (error instanceof Error && typeof e.code === "number") {
    // A JSON-RPC error from the agent (the SDK's RequestError).
    const data = e.data === undefined ? "" : ` data ${show(e.data)}`;
    return `agent answered error ${e.code} ${show(e.message)}${data}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === "--") argv.shift();
  if (argv.length === 0) {
    console.log("FAIL: usage: node official-example-client.mjs -- AGENT_COMMAND [ARGS...]");
    return 1;
  }
  const workDir = realpathSync(mkdtempSync(path.join(tmpdir(), "acp-example-")));
  /** @type {{ process?: import("node:child_process").ChildProcess }} */
  const state = {};
  /** @type {string | null} */
  let failure = null;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new CheckFailure(`no result within ${DEADLINE_MS / 1000} s`)),
      DEADLINE_MS,
    );
  });
  try {
    await Promise.race([run(argv, workDir, state), deadline]);
  } catch (e) {
    failure = explain(e);
  } finally {
    clearTimeout(timer);
    const child = state.process;
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(workDir, { recursive: true, force: true });
  }
  if (failure === null) {
    console.log("OK");
    return 0;
  }
  console.log(`FAIL: ${failure.replace(/\s+/g, " ").trim()}`);
  return 1;
}

// Exit at once: the SDK's streams or a stuck agent must not keep this process alive.
process.exit(await main());
