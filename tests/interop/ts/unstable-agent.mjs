// The unstable interop agent, built only on the official TypeScript SDK's
// unstable API (`@agentclientprotocol/sdk/unstable`), serving on its
// stdin/stdout. It advertises and serves every unstable v1 method an agent
// handles (session/fork, archive, unarchive, status, set_title, auth/status,
// providers/list|set|disable), and during a prompt it calls mcp/message on
// the client (`McpOverAcpCaller`) and sends auth/status_update. It also
// takes and sends the unstable payloads of ../unstable-payloads.json: a
// `systemPrompt` on session/new, load and fork (advertised with its
// `override` mode), `usage` in a prompt's answer, and the plan operation and
// subagent session updates, which it sends only when the client advertised
// `plan` / `subagents`. The same behaviour as `official-rust-agent
// --unstable` and `libacp-interop-agent --unstable`; ../README.md
// ("Unstable methods", "Unstable payloads") has the details. Prompt
// commands: `stream N`, `mcp TEXT`, `auth STATE`, `system`, `usage`,
// `plan`, `subagent`.
//
// It exits 0 once its stdin closes. Diagnostics go to stderr only: stdout
// carries nothing but ACP messages.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import {
  agent,
  McpOverAcpCaller,
  methods,
  ndJsonStream,
  RequestError,
} from "@agentclientprotocol/sdk/unstable";

/**
 * @typedef {{
 *   cwd: string,
 *   history: Array<{ sessionUpdate: string, content: { type: "text", text: string } }>,
 *   open: boolean,
 *   archived: boolean,
 *   title: string | undefined,
 *   acpServers: string[],
 *   systemPrompt: object | null,
 * }} Session
 */

/** The payloads both ends of the unstable sequence know (../unstable-payloads.json). */
const payloads = JSON.parse(readFileSync(new URL("../unstable-payloads.json", import.meta.url), "utf8"));
/** The client's capabilities, from initialize. */
let clientCapabilities = {};

/** @type {Map<string, Session>} */
const sessions = new Map();
let authState = "authenticated";
const providers = [
  {
    providerId: "main",
    supported: ["anthropic", "openai"],
    required: true,
    current: { apiType: "anthropic", baseUrl: "https://llm.example.invalid/anthropic" },
  },
  { providerId: "backup", supported: ["openai"], required: false },
];
let mcpRequests = 0;
/** `{serverId, requestId, method}` of every mcp/message notification received. */
let mcpNotifications = [];
const mcp = new McpOverAcpCaller({ clientInfo: { name: "interop-ts-unstable-agent", version: "0.0.0" } });

function textChunk(kind, text) {
  return { sessionUpdate: kind, content: { type: "text", text } };
}

function getSession(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) {
    throw RequestError.sessionNotFound(sessionId);
  }
  return session;
}

/**
 * The `systemPrompt` of a session/new, load or fork, as this agent applies
 * it (`null`: none), or -32602 for what it cannot apply: a mode other than
 * `append` and `override`, or content that is not only text blocks.
 */
function systemPromptOf(params) {
  const systemPrompt = params.systemPrompt ?? null;
  if (systemPrompt === null) {
    return null;
  }
  if (systemPrompt.mode !== "append" && systemPrompt.mode !== "override") {
    throw RequestError.invalidParams({ mode: systemPrompt.mode, details: "unsupported system prompt mode" });
  }
  if (systemPrompt.content.length === 0 || systemPrompt.content.some((b) => b.type !== "text")) {
    throw RequestError.invalidParams({ details: "a system prompt is one or more text blocks" });
  }
  return systemPrompt;
}

function newSession(params, history = []) {
  const systemPrompt = systemPromptOf(params);
  const sessionId = `ts-${randomUUID()}`;
  sessions.set(sessionId, {
    cwd: params.cwd,
    history,
    open: true,
    archived: false,
    title: undefined,
    acpServers: (params.mcpServers ?? []).filter((s) => s.type === "acp").map((s) => s.serverId),
    systemPrompt,
  });
  return sessionId;
}

function accounts(state) {
  return state === "authenticated"
    ? [{ label: "Interop account", email: "interop@example.invalid", active: true }]
    : [];
}

function findProvider(providerId) {
  const provider = providers.find((p) => p.providerId === providerId);
  if (!provider) {
    throw RequestError.invalidParams({ providerId, details: "unknown provider" });
  }
  return provider;
}

const app = agent({ name: "interop-ts-unstable-agent" })
  .onRequest(methods.agent.initialize, async ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        sessionCapabilities: {
          fork: {},
          archive: {},
          status: {},
          title: {},
          systemPrompt: { mode: { override: {} } },
        },
        auth: { status: {} },
        providers: {},
        mcpCapabilities: { acp: true },
      },
      authMethods: [],
      agentInfo: { name: "interop-ts-unstable-agent", version: "0.0.0" },
    };
  })
  .onRequest(methods.agent.session.new, async ({ params }) => ({
    sessionId: newSession(params),
  }))
  .onRequest(methods.agent.session.load, async ({ params, client }) => {
    const session = getSession(params.sessionId);
    session.systemPrompt = systemPromptOf(params);
    session.cwd = params.cwd;
    session.open = true;
    session.acpServers = (params.mcpServers ?? []).filter((s) => s.type === "acp").map((s) => s.serverId);
    for (const update of session.history) {
      await client.notify(methods.client.session.update, { sessionId: params.sessionId, update });
    }
    return {};
  })
  .onNotification(methods.agent.mcp.message, (context) => {
    const { serverId, requestId, method } = context.params;
    mcpNotifications.push({ serverId, requestId, method });
    return mcp.handleNotification(context);
  })
  .onRequest(methods.agent.session.fork, async ({ params }) => {
    const source = getSession(params.sessionId);
    const sessionId = newSession(params, [...source.history]);
    sessions.get(sessionId).title = source.title;
    return { sessionId };
  })
  .onRequest(methods.agent.session.status, async ({ params }) => ({
    status: getSession(params.sessionId).open ? "open" : "saved",
  }))
  .onRequest(methods.agent.session.archive, async ({ params }) => {
    const session = getSession(params.sessionId);
    session.archived = true;
    session.open = false;
    return {};
  })
  .onRequest(methods.agent.session.unarchive, async ({ params }) => {
    getSession(params.sessionId).archived = false;
    return {};
  })
  .onRequest(methods.agent.session.setTitle, async ({ params }) => {
    const session = getSession(params.sessionId);
    const title = params.title.trim();
    if (title === "") {
      throw RequestError.invalidParams({ title: params.title, details: "the title is empty once trimmed" });
    }
    session.title = title;
    return { title };
  })
  .onRequest(methods.agent.auth.status, async () => ({ state: authState, accounts: accounts(authState) }))
  .onRequest(methods.agent.providers.list, async () => ({ providers: structuredClone(providers) }))
  .onRequest(methods.agent.providers.set, async ({ params }) => {
    const provider = findProvider(params.providerId);
    if (!provider.supported.includes(params.apiType)) {
      throw RequestError.invalidParams({
        providerId: params.providerId,
        apiType: params.apiType,
        details: "protocol not supported by this provider",
      });
    }
    // Headers are accepted, not reported back: the list shows non-secret routing only.
    provider.current = { apiType: params.apiType, baseUrl: params.baseUrl };
    return {};
  })
  .onRequest(methods.agent.providers.disable, async ({ params }) => {
    const provider = findProvider(params.providerId);
    if (provider.required) {
      throw RequestError.invalidParams({
        providerId: params.providerId,
        details: "a required provider cannot be disabled",
      });
    }
    delete provider.current;
    return {};
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    const session = getSession(sessionId);
    if (!session.open) {
      // Archived and not loaded since: not active.
      throw RequestError.sessionNotFound(sessionId);
    }
    const text = params.prompt.find((b) => b.type === "text")?.text ?? "";
    session.history.push(textChunk("user_message_chunk", text));
    const say = async (message) => {
      const chunk = textChunk("agent_message_chunk", message);
      session.history.push(chunk);
      await client.notify(methods.client.session.update, { sessionId, update: chunk });
    };
    const [command, ...rest] = text.trim().split(/\s+/);
    const argText = text.trim().slice(command.length).trim();
    /** Sends `updates` (payloads of ../unstable-payloads.json) if the client advertised `capability`. */
    const sendIfAdvertised = async (capability, updates) => {
      if (clientCapabilities[capability] == null) {
        await say(`${command}: not advertised`);
        return;
      }
      for (const update of updates) {
        await client.notify(methods.client.session.update, { sessionId, update });
      }
      await say(`${command}: ${updates.length} updates`);
    };
    switch (command) {
      case "stream": {
        const n = Number.parseInt(rest[0] ?? "", 10);
        if (!Number.isInteger(n) || n < 0) {
          throw RequestError.invalidParams({ prompt: text }, "stream needs a count");
        }
        for (let i = 0; i < n; i++) {
          await say(`chunk ${i}`);
        }
        break;
      }
      case "mcp": {
        const serverId = session.acpServers[0];
        if (serverId === undefined) {
          throw RequestError.invalidParams({ prompt: text, details: "the session has no MCP server of transport acp" });
        }
        const requestId = `ts-mcp-${++mcpRequests}`;
        const viaCaller = [];
        const outcome = await mcp.request(
          client,
          serverId,
          "tools/call",
          { name: "echo", arguments: { text: argText }, _meta: { progressToken: requestId } },
          { requestId, onNotification: (n) => viaCaller.push(n.method) },
        );
        // The SDK resolves a response at once but walks a notification's
        // handler chain through awaits: a notification right before the
        // response is handled after `mcp.request` returned, and the caller
        // has dropped its listener by then (../README.md, "Unstable
        // methods"). Our own handler records it; one macrotask lets the
        // chain (microtasks only) finish.
        await new Promise((resolve) => setImmediate(resolve));
        const mine = (n) => n.serverId === serverId && n.requestId === requestId;
        const notifications = mcpNotifications.filter(mine).map((n) => n.method);
        mcpNotifications = mcpNotifications.filter((n) => !mine(n));
        if (viaCaller.length !== notifications.length) {
          console.error(
            `ts-unstable-agent: McpOverAcpCaller's onNotification got ${viaCaller.length} of the ${notifications.length} mcp/message notifications for ${requestId}`,
          );
        }
        const said =
          "result" in outcome
            ? (outcome.result?.content?.[0]?.text ?? `result ${JSON.stringify(outcome.result)}`)
            : `error ${outcome.error.code} ${outcome.error.message}`;
        await say(`mcp: ${said} [${notifications.join(", ")}]`);
        break;
      }
      case "auth": {
        authState = argText;
        await client.notify(methods.client.auth.statusUpdate, { state: authState, accounts: accounts(authState) });
        await say(`auth: ${argText}`);
        break;
      }
      case "system":
        await say(`system: ${JSON.stringify(session.systemPrompt)}`);
        break;
      case "usage":
        return { stopReason: "end_turn", usage: payloads.usage };
      case "plan":
        await sendIfAdvertised("plan", payloads.plan);
        break;
      case "subagent":
        await sendIfAdvertised("subagents", payloads.subagent);
        break;
      default:
        throw RequestError.invalidParams({ prompt: text }, `unknown prompt command ${JSON.stringify(command ?? "")}`);
    }
    return { stopReason: "end_turn" };
  });

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
