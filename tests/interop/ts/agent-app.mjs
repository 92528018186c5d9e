// The interop agent built only on the official TypeScript SDK
// (`@agentclientprotocol/sdk`), as a module: agent.mjs serves it on
// stdin/stdout, remote-agent.mjs over WebSocket and Streamable HTTP. The
// prompt commands it understands are listed in ../README.md. Diagnostics go
// to stderr only.

import { randomUUID } from "node:crypto";

import { agent, methods, RequestError } from "@agentclientprotocol/sdk";

/**
 * @typedef {{ sessionUpdate: string, content: { type: "text", text: string } }} HistoryEntry
 * @typedef {{
 *   cwd: string,
 *   history: HistoryEntry[],
 *   cancelled: boolean,
 *   cancelWaiters: Array<() => void>,
 * }} Session
 */

function log(...args) {
  console.error("ts-agent:", ...args);
}

function textChunk(kind, text) {
  return { sessionUpdate: kind, content: { type: "text", text } };
}

/** @param {Map<string, Session>} sessions */
function getSession(sessions, sessionId) {
  const session = sessions.get(sessionId);
  if (!session) {
    throw RequestError.sessionNotFound(sessionId);
  }
  return session;
}

function firstText(prompt) {
  for (const block of prompt) {
    if (block.type === "text") {
      return block.text;
    }
  }
  return "";
}

/** Resolves when session/cancel arrives for the session (or the request is aborted). */
function untilCancelled(session, signal) {
  return new Promise((resolve, reject) => {
    if (session.cancelled) {
      resolve();
      return;
    }
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    session.cancelWaiters.push(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/**
 * A fresh agent app with its own sessions: the one agent.mjs serves on stdio,
 * and the one remote-agent.mjs makes for each remote connection. It satisfies
 * the SDK's `AgentConnector` (`app.connect(stream)`).
 */
export function createAgentApp() {
  /** @type {Map<string, Session>} */
  const sessions = new Map();
  let toolCallCounter = 0;

  return agent({ name: "interop-ts-agent" })
    .onRequest(methods.agent.initialize, async ({ params }) => {
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
        agentInfo: { name: "interop-ts-agent", version: "0.0.0" },
      };
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      const sessionId = `ts-${randomUUID()}`;
      sessions.set(sessionId, {
        cwd: params.cwd,
        history: [],
        cancelled: false,
        cancelWaiters: [],
      });
      return { sessionId };
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      const session = getSession(sessions, params.sessionId);
      session.cwd = params.cwd;
      // Replay the whole history before answering: the SDK writes messages in
      // the order they are sent, so every update precedes the response.
      for (const update of session.history) {
        await client.notify(methods.client.session.update, {
          sessionId: params.sessionId,
          update,
        });
      }
      return {};
    })
    .onNotification(methods.agent.session.cancel, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (!session) {
        log(`session/cancel for unknown session ${params.sessionId}`);
        return;
      }
      session.cancelled = true;
      for (const wake of session.cancelWaiters.splice(0)) {
        wake();
      }
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
      const { sessionId } = params;
      const session = getSession(sessions, sessionId);
      session.cancelled = false;
      const text = firstText(params.prompt);
      session.history.push(textChunk("user_message_chunk", text));

      const update = (u) => client.notify(methods.client.session.update, { sessionId, update: u });
      const say = async (message) => {
        const chunk = textChunk("agent_message_chunk", message);
        session.history.push(chunk);
        await update(chunk);
      };
      const done = () => ({ stopReason: session.cancelled ? "cancelled" : "end_turn" });

      const [command, ...rest] = text.trim().split(/\s+/);
      const argText = text.trim().slice(command.length).trim();

      switch (command) {
        case "stream": {
          const n = Number.parseInt(rest[0] ?? "", 10);
          if (!Number.isInteger(n) || n < 0) {
            throw RequestError.invalidParams({ prompt: text }, "stream needs a count");
          }
          for (let i = 0; i < n; i++) {
            await say(`chunk ${i}`);
          }
          return done();
        }
        case "permission": {
          const toolCallId = `call-${++toolCallCounter}`;
          await update({
            sessionUpdate: "tool_call",
            toolCallId,
            title: "Edit file",
            kind: "edit",
            status: "pending",
          });
          const response = await client.request(
            methods.client.session.requestPermission,
            {
              sessionId,
              toolCall: { toolCallId, title: "Edit file", kind: "edit", status: "pending" },
              options: [
                { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
                { optionId: "reject_once", name: "Reject once", kind: "reject_once" },
              ],
            },
            { cancellationSignal: signal },
          );
          const { outcome } = response;
          const label = outcome.outcome === "selected" ? outcome.optionId : outcome.outcome;
          await say(`permission: ${label}`);
          const allowed = outcome.outcome === "selected" && outcome.optionId.startsWith("allow");
          await update({
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: allowed ? "completed" : "failed",
          });
          if (outcome.outcome === "cancelled") {
            return { stopReason: "cancelled" };
          }
          return done();
        }
        case "read": {
          const { content } = await client.request(
            methods.client.fs.readTextFile,
            { sessionId, path: argText },
            { cancellationSignal: signal },
          );
          await say(content);
          return done();
        }
        case "write": {
          const path = rest[0] ?? "";
          const content = argText.slice(path.length).trimStart();
          await client.request(
            methods.client.fs.writeTextFile,
            { sessionId, path, content },
            { cancellationSignal: signal },
          );
          await say("wrote");
          return done();
        }
        case "terminal": {
          const terminal = await client.createTerminal(
            { sessionId, command: "sh", args: ["-c", argText], cwd: session.cwd },
            { cancellationSignal: signal },
          );
          try {
            await terminal.waitForExit();
            const { output } = await terminal.currentOutput();
            await say(output);
          } finally {
            await terminal.release();
          }
          return done();
        }
        case "wait": {
          await untilCancelled(session, signal);
          return { stopReason: "cancelled" };
        }
        default:
          throw RequestError.invalidParams({ prompt: text }, `unknown prompt command ${JSON.stringify(command ?? "")}`);
      }
    });
}
