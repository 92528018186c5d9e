// An ACP agent on libacp's Node binding (typed API), serving on stdio: the
// Node counterpart of bindings/python/tests/interop_agent_full.py. It
// implements the whole prompt command vocabulary of tests/interop/README.md
// (`stream N`, `permission`, `read PATH`, `write PATH TEXT`,
// `terminal CMD...`, `wait`), advertises `loadSession` and records each
// session's history (the prompt texts as `user_message_chunk`s, the agent's
// text chunks) as the turns run; `session/load` replays it as
// `session/update`s before its answer. An unknown session is `-32002` with
// `data.sessionId`; an unknown command `-32602`.
//
//   node bindings/node/test/peers/interop-agent.mjs
//
// Driven by the official SDKs' interop clients and by interop-client.mjs in
// test/interop.test.mjs. It exits 0 once its stdin closes; logs go to stderr.
import { randomUUID } from "node:crypto";

import { RequestError, runAgent } from "libacp";

/**
 * @typedef {import("libacp").schema.SessionUpdate} SessionUpdate
 * @typedef {import("libacp").schema.StopReason} StopReason
 * @typedef {import("libacp").RequestContext} RequestContext
 * @typedef {{ cwd: string, history: SessionUpdate[] }} Session
 */

/** @param {string} message */
function log(message) {
  process.stderr.write(`node-agent: ${message}\n`);
}

/**
 * @param {"user_message_chunk" | "agent_message_chunk"} kind
 * @param {string} text
 * @returns {SessionUpdate}
 */
function textChunk(kind, text) {
  return { sessionUpdate: kind, content: { type: "text", text } };
}

/** @param {import("libacp").schema.ContentBlock[]} prompt */
function firstText(prompt) {
  for (const block of prompt) {
    if (block.type === "text") return block.text;
  }
  return "";
}

/**
 * `text` split at its first space: the command and its argument text.
 * @param {string} text
 */
function partition(text) {
  const space = text.indexOf(" ");
  return space < 0 ? [text, ""] : [text.slice(0, space), text.slice(space + 1)];
}

/**
 * Resolves once `signal` aborts (on `session/cancel`, `$/cancel_request` or
 * the connection closing).
 * @param {AbortSignal} signal
 */
function untilAborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}

class InteropAgent {
  /** @param {import("libacp").AgentConnection} client */
  constructor(client) {
    this.client = client;
    /** @type {Map<string, Session>} */
    this.sessions = new Map();
    this.toolCalls = 0;
  }

  /** @param {string} sessionId */
  session(sessionId) {
    const session = this.sessions.get(sessionId);
    if (session === undefined) {
      throw new RequestError(-32002, "Resource not found", { sessionId });
    }
    return session;
  }

  /** @param {import("libacp").schema.InitializeRequest} params */
  initialize(params) {
    if (params.protocolVersion !== 1) {
      log(`client asked for protocol version ${params.protocolVersion}; answering 1`);
    }
    return {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
      },
      authMethods: [],
      agentInfo: { name: "libacp-node-interop-agent", version: "0.1.0" },
    };
  }

  /** @param {import("libacp").schema.NewSessionRequest} params */
  newSession(params) {
    const sessionId = `node-${randomUUID()}`;
    this.sessions.set(sessionId, { cwd: params.cwd, history: [] });
    return { sessionId };
  }

  /** @param {import("libacp").schema.LoadSessionRequest} params */
  async loadSession(params) {
    const session = this.session(params.sessionId);
    session.cwd = params.cwd;
    for (const update of [...session.history]) {
      await this.client.sessionUpdate({ sessionId: params.sessionId, update });
    }
    return {};
  }

  /** @param {import("libacp").schema.CancelNotification} params */
  cancel(params) {
    // The core has already aborted the session's prompt turn.
    if (!this.sessions.has(params.sessionId)) {
      log(`session/cancel for unknown session ${params.sessionId}`);
    }
  }

  /**
   * @param {import("libacp").schema.PromptRequest} params
   * @param {RequestContext} context
   */
  async prompt(params, context) {
    const session = this.session(params.sessionId);
    const text = firstText(params.prompt);
    session.history.push(textChunk("user_message_chunk", text));
    return { stopReason: await this.run(params.sessionId, session, text, context) };
  }

  /**
   * Runs one prompt command; returns its stop reason.
   * @param {string} sessionId
   * @param {Session} session
   * @param {string} command
   * @param {RequestContext} context
   * @returns {Promise<StopReason>}
   */
  async run(sessionId, session, command, context) {
    const client = this.client;
    const [verb, rest] = partition(command);
    /** @param {SessionUpdate} update */
    const update = (update) => client.sessionUpdate({ sessionId, update });
    /** @param {string} text */
    const say = (text) => {
      const chunk = textChunk("agent_message_chunk", text);
      session.history.push(chunk);
      return update(chunk);
    };

    if (verb === "stream") {
      const n = Number(rest);
      if (!Number.isInteger(n) || n < 0) {
        throw new RequestError(-32602, "Invalid params", `stream needs a count, not ${rest}`);
      }
      for (let i = 0; i < n; i++) await say(`chunk ${i}`);
    } else if (verb === "permission") {
      const toolCallId = `call-${++this.toolCalls}`;
      await update({
        sessionUpdate: "tool_call",
        toolCallId,
        title: "Edit file",
        kind: "edit",
        status: "pending",
      });
      const { outcome } = await client.requestPermission({
        sessionId,
        toolCall: { toolCallId },
        options: [
          { optionId: "allow_once", name: "Allow", kind: "allow_once" },
          { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        ],
      });
      const chosen = outcome.outcome === "selected" ? outcome.optionId : outcome.outcome;
      await say(`permission: ${chosen}`);
      const allowed = outcome.outcome === "selected" && chosen.startsWith("allow");
      await update({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: allowed ? "completed" : "failed",
      });
      if (outcome.outcome === "cancelled") return "cancelled";
    } else if (verb === "read") {
      const file = await client.readTextFile({ sessionId, path: rest.trim() });
      await say(file.content);
    } else if (verb === "write") {
      const [path, content] = partition(rest);
      await client.writeTextFile({ sessionId, path, content });
      await say("wrote");
    } else if (verb === "terminal") {
      const { terminalId } = await client.createTerminal({
        sessionId,
        command: "sh",
        args: ["-c", rest],
        cwd: session.cwd,
      });
      const ids = { sessionId, terminalId };
      try {
        await client.waitForTerminalExit(ids);
        const { output } = await client.terminalOutput(ids);
        await say(output);
      } finally {
        await client.releaseTerminal(ids);
      }
    } else if (verb === "wait") {
      await untilAborted(context.signal);
      return "cancelled";
    } else {
      throw new RequestError(-32602, "Invalid params", `unknown prompt ${JSON.stringify(command)}`);
    }
    // A session/cancel during the turn makes it `cancelled`.
    return context.cancelled ? "cancelled" : "end_turn";
  }
}

await runAgent((client) => new InteropAgent(client));
