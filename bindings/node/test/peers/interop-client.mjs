// An ACP client on libacp's Node binding (typed API) that runs the check
// sequence of tests/interop/README.md ("Client: the scripted check
// sequence", as tests/interop/ts/client.mjs and
// bindings/python/tests/interop_client.py do) against any agent:
//
//   node bindings/node/test/peers/interop-client.mjs -- AGENT_COMMAND [ARGS...]
//
// initialize (fs and terminal advertised), session/new, prompts `stream 50`
// (the 50 chunks in order, all handled before the prompt returns),
// `permission` (answered by this client: allow_once), `read TMP/a.txt` and
// `write TMP/b.txt hi` (fs/* answered by this client's handlers, the write
// really done), `terminal echo hi` (terminal/* run by this client: create,
// wait_for_exit, output, release), `wait` + `cancel` (stopReason cancelled),
// session/load of the session (the whole history replayed before the load
// returns), then close (stdin closed: the agent must exit 0 within 5 s).
//
// Prints exactly one line, `OK` (exit 0) or `FAIL: <reason>` (exit 1). Gives
// up after 30 s and kills the agent's process group. The agent's stderr is
// passed through to ours.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

import { ClientConnection, RequestError, SpawnError } from "libacp";

import { CheckFailure, check, show } from "./checks.mjs";

const DEADLINE_MS = 30_000;
const EXIT_GRACE_MS = 5_000;
const STREAM_COUNT = 50;
const FILE_CONTENT = "hello from client";
const CANCEL_AFTER_MS = 100;

/**
 * @typedef {import("libacp").schema.SessionUpdate} SessionUpdate
 * @typedef {[method: string, params: Record<string, unknown>]} Request
 * @typedef {{ sessionUpdate: string, text: unknown }} HistoryEntry
 * @typedef {import("libacp").Client} Client
 */

/**
 * The text of an update's text content, else undefined.
 * @param {SessionUpdate} update
 */
function textOf(update) {
  const { content } = /** @type {{ content?: { type?: unknown, text?: unknown } }} */ (update);
  return content?.type === "text" ? content.text : undefined;
}

/** @param {SessionUpdate} update */
function describe(update) {
  const text = textOf(update);
  return `${update.sessionUpdate}${text === undefined ? "" : ` ${show(text)}`}`;
}

/**
 * `promise`, or a rejection with `message` after `ms`.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} message
 * @returns {Promise<T>}
 */
function within(promise, ms, message) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailure(message)), ms);
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, limit])).finally(() =>
    clearTimeout(timer),
  );
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A command run for the agent: its merged output and how it ended. */
class Terminal {
  /**
   * @param {import("node:child_process").ChildProcess} child
   * @param {number | null | undefined} limit the output byte limit
   */
  constructor(child, limit) {
    this.child = child;
    this.output = Buffer.alloc(0);
    this.truncated = false;
    /** @type {{ exitCode: number | null, signal: string | null } | undefined} */
    this.exitStatus = undefined;
    /** @param {Buffer} chunk */
    const append = (chunk) => {
      this.output = Buffer.concat([this.output, chunk]);
      if (limit != null && this.output.length > limit) {
        this.output = this.output.subarray(this.output.length - limit);
        this.truncated = true;
      }
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    /** @type {Promise<{ exitCode: number | null, signal: string | null }>} */
    this.done = new Promise((resolve) => {
      child.on("error", (error) => {
        append(Buffer.from(String(error)));
        this.exitStatus ??= { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      // "close" comes after the output pipes are drained.
      child.on("close", (code, signal) => {
        this.exitStatus ??= { exitCode: code, signal };
        resolve(this.exitStatus);
      });
    });
  }

  kill() {
    if (this.exitStatus === undefined) this.child.kill("SIGKILL");
  }
}

/**
 * The client's handlers: record what they are asked, answer as a real
 * client would.
 * @implements {Client}
 */
class InteropClient {
  /** @param {string} workDir */
  constructor(workDir) {
    this.workDir = workDir;
    /** @type {Array<[sessionId: string, update: SessionUpdate]>} */
    this.updates = [];
    /** @type {Request[]} */
    this.requests = [];
    /** @type {Map<string, Terminal>} */
    this.terminals = new Map();
    this.nextTerminal = 0;
  }

  takeRequests() {
    const taken = this.requests;
    this.requests = [];
    return taken;
  }

  takeUpdates() {
    const taken = this.updates;
    this.updates = [];
    return taken;
  }

  /** @param {import("libacp").schema.SessionNotification} params */
  sessionUpdate(params) {
    this.updates.push([params.sessionId, params.update]);
  }

  /**
   * @param {import("libacp").schema.RequestPermissionRequest} params
   * @returns {import("libacp").schema.RequestPermissionResponse}
   */
  requestPermission(params) {
    this.requests.push(["session/request_permission", params]);
    const option = params.options.find((o) => o.kind === "allow_once");
    if (option === undefined) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  /** @param {import("libacp").schema.ReadTextFileRequest} params */
  readTextFile(params) {
    this.requests.push(["fs/read_text_file", { sessionId: params.sessionId, path: params.path }]);
    return { content: FILE_CONTENT };
  }

  /** @param {import("libacp").schema.WriteTextFileRequest} params */
  writeTextFile(params) {
    const { sessionId, path, content } = params;
    this.requests.push(["fs/write_text_file", { sessionId, path, content }]);
    writeFileSync(path, content, "utf8");
    return {};
  }

  /** @param {import("libacp").schema.CreateTerminalRequest} params */
  createTerminal(params) {
    this.requests.push(["terminal/create", params]);
    /** @type {NodeJS.ProcessEnv} */
    const env = { ...process.env };
    for (const { name, value } of params.env ?? []) env[name] = value;
    const child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? this.workDir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const terminalId = `term-${this.nextTerminal++}`;
    this.terminals.set(terminalId, new Terminal(child, params.outputByteLimit));
    return { terminalId };
  }

  /** @param {import("libacp").schema.TerminalOutputRequest} params */
  terminalOutput(params) {
    const terminal = this.terminal("terminal/output", params);
    return {
      output: terminal.output.toString("utf8"),
      truncated: terminal.truncated,
      ...(terminal.exitStatus === undefined ? {} : { exitStatus: terminal.exitStatus }),
    };
  }

  /** @param {import("libacp").schema.WaitForTerminalExitRequest} params */
  async waitForTerminalExit(params) {
    return { ...(await this.terminal("terminal/wait_for_exit", params).done) };
  }

  /** @param {import("libacp").schema.KillTerminalRequest} params */
  killTerminal(params) {
    this.terminal("terminal/kill", params).kill();
    return {};
  }

  /** @param {import("libacp").schema.ReleaseTerminalRequest} params */
  releaseTerminal(params) {
    this.terminal("terminal/release", params).kill();
    this.terminals.delete(params.terminalId);
    return {};
  }

  /**
   * Records a terminal request and returns the terminal it names.
   * @param {string} method
   * @param {{ sessionId: string, terminalId: string }} params
   */
  terminal(method, params) {
    this.requests.push([method, params]);
    const terminal = this.terminals.get(params.terminalId);
    if (terminal === undefined) {
      throw new RequestError(-32602, "Invalid params", {
        details: `unknown terminal ${params.terminalId}`,
      });
    }
    return terminal;
  }

  killAll() {
    for (const terminal of this.terminals.values()) terminal.kill();
  }
}

/**
 * The session the checks run in: sends prompts and collects what came with
 * them.
 */
class Turns {
  /**
   * @param {ClientConnection} agent
   * @param {InteropClient} client
   * @param {string} sessionId
   */
  constructor(agent, client, sessionId) {
    this.agent = agent;
    this.client = client;
    this.sessionId = sessionId;
    /** @type {HistoryEntry[]} what session/load must replay */
    this.history = [];
  }

  /**
   * Sends one prompt; returns its result, the updates handled before it
   * returned (libacp's ordering barrier: all of them) and the client
   * requests the agent made meanwhile.
   * @param {string} text
   */
  async prompt(text) {
    this.history.push({ sessionUpdate: "user_message_chunk", text });
    this.client.takeUpdates();
    const result = await this.agent.prompt({
      sessionId: this.sessionId,
      prompt: [{ type: "text", text }],
    });
    /** @type {SessionUpdate[]} */
    const seen = [];
    for (const [sid, update] of this.client.takeUpdates()) {
      check(
        sid === this.sessionId,
        `prompt ${show(text)}: update for session ${show(sid)}, expected ${show(this.sessionId)}`,
      );
      if (update.sessionUpdate === "agent_message_chunk" && textOf(update) !== undefined) {
        this.history.push({ sessionUpdate: "agent_message_chunk", text: textOf(update) });
      }
      seen.push(update);
    }
    return { result, seen, requests: this.client.takeRequests() };
  }
}

/** @param {SessionUpdate[]} seen */
function chunkTexts(seen) {
  return seen.filter((u) => u.sessionUpdate === "agent_message_chunk").map(textOf);
}

/**
 * 1. Streaming: every update handled before the prompt returns.
 * @param {Turns} turns
 */
async function checkStream(turns) {
  const { result, seen } = await turns.prompt(`stream ${STREAM_COUNT}`);
  check(result.stopReason === "end_turn", `stream: stopReason ${show(result)}`);
  const got = seen.map((u) =>
    u.sessionUpdate === "agent_message_chunk" ? textOf(u) : describe(u),
  );
  const expected = Array.from({ length: STREAM_COUNT }, (_, i) => `chunk ${i}`);
  check(
    isDeepStrictEqual(got, expected),
    `stream: before the response saw ${got.length} updates, expected ${STREAM_COUNT} ` +
      `chunks in order; first: ${show(got.slice(0, 3))}, last: ${show(got.slice(-3))}`,
  );
}

/**
 * 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
 * @param {Turns} turns
 */
async function checkPermission(turns) {
  const { result, seen, requests } = await turns.prompt("permission");
  check(result.stopReason === "end_turn", `permission: stopReason ${show(result)}`);
  const methods = requests.map(([method]) => method);
  check(
    isDeepStrictEqual(methods, ["session/request_permission"]),
    `permission: expected one session/request_permission, got ${show(methods)}`,
  );
  const request = /** @type {import("libacp").schema.RequestPermissionRequest} */ (requests[0][1]);
  check(
    request.sessionId === turns.sessionId,
    `permission: request for session ${show(request.sessionId)}`,
  );
  const allow = request.options.find((o) => o.kind === "allow_once");
  check(
    allow !== undefined && request.options.some((o) => o.kind === "reject_once"),
    `permission: options ${show(request.options)}`,
  );
  check(
    seen.length === 3,
    `permission: expected tool_call, chunk, tool_call_update; saw ${show(seen.map(describe))}`,
  );
  const [toolCall, chunk, toolCallUpdate] = seen;
  check(
    toolCall.sessionUpdate === "tool_call" &&
      (toolCall.status ?? "pending") === "pending" &&
      toolCall.kind === "edit" &&
      toolCall.title === "Edit file",
    `permission: first update ${show(toolCall)}`,
  );
  check(
    request.toolCall.toolCallId === toolCall.toolCallId,
    `permission: request is about tool call ${show(request.toolCall.toolCallId)}, ` +
      `not ${show(toolCall.toolCallId)}`,
  );
  check(
    chunk.sessionUpdate === "agent_message_chunk" &&
      textOf(chunk) === `permission: ${allow.optionId}`,
    `permission: expected chunk "permission: ${allow.optionId}", saw ${describe(chunk)}`,
  );
  check(
    toolCallUpdate.sessionUpdate === "tool_call_update" &&
      toolCallUpdate.toolCallId === toolCall.toolCallId &&
      toolCallUpdate.status === "completed",
    `permission: last update ${show(toolCallUpdate)}`,
  );
}

/**
 * 3. fs/read_text_file answered by this client.
 * @param {Turns} turns
 * @param {string} workDir
 */
async function checkRead(turns, workDir) {
  const file = path.join(workDir, "a.txt");
  const { result, seen, requests } = await turns.prompt(`read ${file}`);
  check(result.stopReason === "end_turn", `read: stopReason ${show(result)}`);
  check(
    isDeepStrictEqual(requests, [
      ["fs/read_text_file", { sessionId: turns.sessionId, path: file }],
    ]),
    `read: expected one fs/read_text_file of ${file}, got ${show(requests)}`,
  );
  check(
    isDeepStrictEqual(chunkTexts(seen), [FILE_CONTENT]) && seen.length === 1,
    `read: expected the one chunk ${show(FILE_CONTENT)}, saw ${show(seen.map(describe))}`,
  );
}

/**
 * 4. fs/write_text_file, really written by this client.
 * @param {Turns} turns
 * @param {string} workDir
 */
async function checkWrite(turns, workDir) {
  const file = path.join(workDir, "b.txt");
  const { result, seen, requests } = await turns.prompt(`write ${file} hi`);
  check(result.stopReason === "end_turn", `write: stopReason ${show(result)}`);
  check(
    isDeepStrictEqual(requests, [
      ["fs/write_text_file", { sessionId: turns.sessionId, path: file, content: "hi" }],
    ]),
    `write: expected one fs/write_text_file of ${file} with "hi", got ${show(requests)}`,
  );
  check(readFileSync(file, "utf8") === "hi", "write: the file does not hold what was written");
  check(
    isDeepStrictEqual(chunkTexts(seen), ["wrote"]) && seen.length === 1,
    `write: expected the one chunk "wrote", saw ${show(seen.map(describe))}`,
  );
}

/**
 * 5. terminal/* run by this client.
 * @param {Turns} turns
 */
async function checkTerminal(turns) {
  const { result, seen, requests } = await turns.prompt("terminal echo hi");
  check(result.stopReason === "end_turn", `terminal: stopReason ${show(result)}`);
  const calls = requests.map(([method]) => method);
  check(
    isDeepStrictEqual(calls, [
      "terminal/create",
      "terminal/wait_for_exit",
      "terminal/output",
      "terminal/release",
    ]),
    `terminal: expected create, wait_for_exit, output, release; got ${show(calls)}`,
  );
  const create = requests[0][1];
  check(
    create.command === "sh" && isDeepStrictEqual(create.args, ["-c", "echo hi"]),
    `terminal: created ${show({ command: create.command, args: create.args })}`,
  );
  const ids = new Set(requests.slice(1).map(([, params]) => params.terminalId));
  check(ids.size === 1, `terminal: requests named terminals ${show([...ids])}`);
  check(
    isDeepStrictEqual(chunkTexts(seen), ["hi\n"]) && seen.length === 1,
    `terminal: expected the one chunk "hi\\n", saw ${show(seen.map(describe))}`,
  );
}

/**
 * 6. session/cancel during a turn.
 * @param {Turns} turns
 */
async function checkCancel(turns) {
  let answered = false;
  const pending = turns.prompt("wait").finally(() => {
    answered = true;
  });
  pending.catch(() => {}); // awaited below; a failure must not go unhandled meanwhile
  await sleep(CANCEL_AFTER_MS);
  check(!answered, "wait: the prompt was answered before session/cancel was sent");
  await turns.agent.cancel(turns.sessionId);
  const { result } = await pending;
  check(
    result.stopReason === "cancelled",
    `wait: after session/cancel, stopReason ${show(result)}`,
  );
}

/**
 * 7. session/load replays the history before it returns.
 * @param {Turns} turns
 * @param {string} workDir
 */
async function checkLoad(turns, workDir) {
  const { agent, client, sessionId, history } = turns;
  client.takeUpdates();
  await agent.loadSession({ sessionId, cwd: workDir, mcpServers: [] });
  const replayed = client.takeUpdates();
  check(
    replayed.every(([sid]) => sid === sessionId),
    "load: replayed updates for another session",
  );
  const got = replayed.map(([, u]) => ({ sessionUpdate: u.sessionUpdate, text: textOf(u) }));
  if (!isDeepStrictEqual(got, history)) {
    const length = Math.max(got.length, history.length);
    let at = 0;
    while (at < length && isDeepStrictEqual(got[at], history[at])) at++;
    throw new CheckFailure(
      `load: before the response saw ${got.length} replayed updates, expected ` +
        `${history.length}; first difference at ${at}: got ${show(got[at] ?? null)}, ` +
        `expected ${show(history[at] ?? null)}`,
    );
  }
}

/**
 * The check sequence, from initialize to session/load.
 * @param {ClientConnection} agent
 * @param {InteropClient} client
 * @param {string} workDir
 */
async function drive(agent, client, workDir) {
  const init = await agent.initialize({
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: "libacp-node-interop-client", version: "0.0.0" },
  });
  check(
    init.protocolVersion === 1,
    `initialize answered protocolVersion ${show(init.protocolVersion)}`,
  );
  check(
    init.agentCapabilities?.loadSession === true,
    `initialize answered agentCapabilities ${show(init.agentCapabilities)}; ` +
      "loadSession true is needed",
  );

  const created = await agent.newSession({ cwd: workDir, mcpServers: [] });
  const sessionId = created.sessionId;
  check(
    typeof sessionId === "string" && sessionId.length > 0,
    `session/new answered ${show(created)}`,
  );

  const turns = new Turns(agent, client, sessionId);
  await checkStream(turns);
  await checkPermission(turns);
  await checkRead(turns, workDir);
  await checkWrite(turns, workDir);
  await checkTerminal(turns);
  await checkCancel(turns);
  await checkLoad(turns, workDir);
}

/**
 * Starts the agent, runs the sequence, then closes the agent's stdin: it
 * must exit 0 within the grace period (close() sends SIGTERM after it).
 * @param {string[]} argv
 * @param {string} workDir
 * @param {{ client?: InteropClient, agent?: ClientConnection }} state
 */
async function run(argv, workDir, state) {
  const client = new InteropClient(workDir);
  state.client = client;
  /** @type {ClientConnection} */
  let agent;
  try {
    agent = ClientConnection.spawn(argv[0], argv.slice(1), client, {
      graceAfterStdinCloseMs: EXIT_GRACE_MS,
      graceAfterSigtermMs: 1_000,
    });
  } catch (e) {
    if (e instanceof SpawnError)
      throw new CheckFailure(`cannot start agent ${show(argv[0])}: ${e}`);
    throw e;
  }
  state.agent = agent;
  const sequence = drive(agent, client, workDir);
  const closed = agent.closed();
  const first = await Promise.race([sequence.then(() => "done"), closed.then(() => "closed")]);
  if (first === "closed") {
    // The connection closed under the sequence: say why.
    try {
      await within(sequence, 1_000, "the sequence did not end");
    } catch (e) {
      throw new CheckFailure(`the connection closed (${await closed}): ${explain(e)}`);
    }
  }

  await within(
    agent.close().then(() => agent.terminated()),
    EXIT_GRACE_MS * 2,
    `agent still running ${EXIT_GRACE_MS / 1000} s after close`,
  );
  const status = agent.connection.exitStatus ?? (await agent.connection.waitExit());
  check(
    status.signal === null,
    `agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed ` +
      `(ended by signal ${status.signal})`,
  );
  check(status.code === 0, `agent exited with code ${status.code} after its stdin was closed`);
}

/**
 * A failure as one readable reason.
 * @param {unknown} error
 */
function explain(error) {
  if (error instanceof CheckFailure) return error.message;
  if (error instanceof RequestError) {
    const data = error.data === undefined ? "" : ` data ${show(error.data)}`;
    return `agent answered error ${error.code} ${show(error.message)}${data}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Ends what is left after a failure: the client's terminals, the agent's
 * whole process group, the connection.
 * @param {{ client?: InteropClient, agent?: ClientConnection }} state
 */
async function cleanUp(state) {
  state.client?.killAll();
  const agent = state.agent;
  if (agent === undefined) return;
  if (agent.connection.exitStatus === null && agent.pid !== null) {
    try {
      process.kill(-agent.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await within(agent.close(), EXIT_GRACE_MS, "close").catch(() => {});
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === "--") argv.shift();
  if (argv.length === 0) {
    console.log("FAIL: usage: node interop-client.mjs -- AGENT_COMMAND [ARGS...]");
    return 1;
  }
  const workDir = realpathSync(mkdtempSync(path.join(tmpdir(), "acp-interop-libacp-node-")));
  /** @type {{ client?: InteropClient, agent?: ClientConnection }} */
  const state = {};
  /** @type {string | null} */
  let failure = null;
  try {
    await within(
      run(argv, workDir, state),
      DEADLINE_MS,
      `no result within ${DEADLINE_MS / 1000} s`,
    );
  } catch (e) {
    failure = explain(e);
    await cleanUp(state);
  } finally {
    state.client?.killAll();
    rmSync(workDir, { recursive: true, force: true });
  }
  if (failure === null) {
    console.log("OK");
    return 0;
  }
  console.log(`FAIL: ${failure.replace(/\s+/g, " ").trim()}`);
  return 1;
}

// Exit at once: a stuck agent or terminal must not keep this process alive.
process.exit(await main());
