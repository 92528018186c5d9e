// The unstable v1 extensions through the Node binding (issue 23): the
// connection option `unstable`, the typed API of every unstable method
// (both roles in Node over a socket pair), the `payload_rule` engine event
// and the session model's notices and compactions.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";

import {
  CapabilityError,
  ClientConnection,
  Connection,
  InvalidParams,
  RefusedError,
  RequestError,
  socketPair,
} from "libacp";

import {
  closeBoth,
  eventually,
  guardUnhandledRejections,
  typedPair,
  within,
  INIT_PARAMS,
} from "./support.mjs";

guardUnhandledRejections();

const ALL = { unstable: ["all"] };
const PROMPT = [{ type: /** @type {const} */ ("text"), text: "hi" }];

/**
 * An agent implementing every unstable agent method; a prompt calls the
 * client's `mcp/message` and sends `auth/status_update`.
 * @param {{ advertise?: boolean }} [options]
 */
function unstableAgent({ advertise = true } = {}) {
  /** @type {[string, unknown][]} */
  const seen = [];
  /** @type {import("libacp").AgentConnection | undefined} */
  let client;
  /** @type {import("libacp").AgentFactory} */
  const factory = (conn) => {
    client = conn;
    return {
      initialize: () => ({
        protocolVersion: 1,
        agentCapabilities: advertise
          ? {
              sessionCapabilities: { fork: {}, archive: {}, status: {}, title: {} },
              auth: { status: {} },
              providers: {},
            }
          : {},
      }),
      newSession: () => ({ sessionId: "s1" }),
      prompt: async (params) => {
        const to = /** @type {import("libacp").AgentConnection} */ (client);
        const tools = await to.mcpMessage({
          serverId: "editor-tools",
          requestId: "r1",
          method: "tools/list",
        });
        await to.authStatusUpdate({ state: "authenticated" });
        return {
          stopReason: "end_turn",
          _meta: { session: params.sessionId, tools, seen: seen.length },
        };
      },
      forkSession: (params) => {
        seen.push(["fork", params]);
        return { sessionId: `${params.sessionId}-fork` };
      },
      archiveSession: (params) => void seen.push(["archive", params]),
      unarchiveSession: (params) => void seen.push(["unarchive", params]),
      // A status this schema does not list: decoded as it came.
      sessionStatus: (params) => ({ status: params.sessionId === "gone" ? "evicted" : "saved" }),
      setSessionTitle: (params) => ({ title: params.title.trim() }),
      authStatus: () => ({
        state: "not_required",
        accounts: [{ label: "Local", active: true }],
      }),
      listProviders: () => ({
        providers: [
          {
            providerId: "main",
            supported: ["openai", "future-protocol"],
            required: false,
            futureMember: 1,
          },
        ],
      }),
      setProvider: (params) => void seen.push(["setProvider", params]),
      disableProvider: (params) => void seen.push(["disableProvider", params]),
      mcpMessage: (params) => void seen.push(["mcp", params]),
    };
  };
  return { factory, seen };
}

/** A client implementing the unstable client methods, recording them. */
function unstableClient() {
  /** @type {[string, unknown][]} */
  const seen = [];
  /** @type {import("libacp").Client} */
  const client = {
    mcpMessage: (params) => {
      seen.push(["mcp", params.method]);
      return { result: { tools: [] } };
    },
    authStatusUpdate: (params) => void seen.push(["auth", params.state]),
  };
  return { client, seen };
}

test("every unstable method round-trips typed, unstable: ['all'] on both sides", async () => {
  const agent = unstableAgent();
  const client = unstableClient();
  const pair = typedPair(agent.factory, client.client, { agent: ALL, client: ALL });
  const c = pair.client;
  await within(c.initialize(INIT_PARAMS), "initialize");
  const { sessionId: s1 } = await c.newSession({ cwd: "/tmp", mcpServers: [] });
  const fork = await c.forkSession({ sessionId: s1, cwd: "/tmp" });
  assert.deepEqual(fork, { sessionId: "s1-fork" });
  assert.deepEqual(await c.sessionStatus({ sessionId: "elsewhere" }), { status: "saved" });
  assert.deepEqual(await c.sessionStatus({ sessionId: "gone" }), { status: "evicted" });
  assert.deepEqual(await c.setSessionTitle({ sessionId: fork.sessionId, title: " Tests " }), {
    title: "Tests",
  });
  const auth = await c.authStatus();
  assert.equal(auth.state, "not_required");
  assert.equal(auth.accounts?.[0]?.label, "Local");
  const providers = await c.listProviders();
  assert.deepEqual(providers.providers[0]?.supported, ["openai", "future-protocol"]);
  assert.equal(/** @type {any} */ (providers.providers[0]).futureMember, 1);
  const provider = { providerId: "main", apiType: "openai", baseUrl: "https://llm.example/v1" };
  // A handler that returns nothing answers {} (the core reads null as {}).
  assert.deepEqual(await c.setProvider(provider), {});
  assert.deepEqual(await c.disableProvider({ providerId: "main" }), {});
  // A notification to the agent, handled before the next request starts.
  await c.mcpMessage({ serverId: "editor-tools", requestId: "r0", method: "ping" });

  // The fork is open here: a prompt for it goes out, and the agent's nested
  // mcp/message and auth/status_update reach the typed client before the
  // prompt's answer.
  const answer = await within(c.prompt({ sessionId: fork.sessionId, prompt: PROMPT }), "prompt");
  assert.deepEqual(answer._meta, {
    session: "s1-fork",
    tools: { result: { tools: [] } },
    seen: 4,
  });
  assert.deepEqual(client.seen, [
    ["mcp", "tools/list"],
    ["auth", "authenticated"],
  ]);
  assert.deepEqual(
    agent.seen.map(([kind]) => kind),
    ["fork", "setProvider", "disableProvider", "mcp"],
  );
  assert.deepEqual(agent.seen[1]?.[1], provider);
  assert.deepEqual(agent.seen[3]?.[1], {
    serverId: "editor-tools",
    requestId: "r0",
    method: "ping",
  });

  // Archived: closed on this connection, so a prompt for it is refused.
  assert.deepEqual(await c.archiveSession({ sessionId: s1 }), {});
  const refused = await c.prompt({ sessionId: s1, prompt: PROMPT }).catch((e) => e);
  assert.ok(refused instanceof RefusedError, String(refused));
  assert.equal(refused.kind, "UnknownSession");
  assert.deepEqual(await c.unarchiveSession({ sessionId: s1 }), {});
  assert.deepEqual(agent.seen.slice(-2), [
    ["archive", { sessionId: "s1" }],
    ["unarchive", { sessionId: "s1" }],
  ]);
  await closeBoth(pair);
});

test("with unstable on, unstable methods are gated like stable ones", async () => {
  // The agent advertises none of them: each call is refused locally, nothing
  // is sent, and the agent's handlers never run.
  const agent = unstableAgent({ advertise: false });
  const pair = typedPair(agent.factory, {}, { agent: ALL, client: ALL });
  const c = pair.client;
  await within(c.initialize(INIT_PARAMS), "initialize");
  /** @type {[() => Promise<unknown>, string][]} */
  const calls = [
    [() => c.forkSession({ sessionId: "s0", cwd: "/tmp" }), "sessionCapabilities.fork"],
    [() => c.archiveSession({ sessionId: "s0" }), "sessionCapabilities.archive"],
    [() => c.sessionStatus({ sessionId: "s0" }), "sessionCapabilities.status"],
    [() => c.setSessionTitle({ sessionId: "s0", title: "t" }), "sessionCapabilities.title"],
    [() => c.authStatus(), "auth.status"],
    [() => c.listProviders(), "providers"],
  ];
  for (const [call, capability] of calls) {
    const error = await call().catch((e) => e);
    assert.ok(error instanceof CapabilityError, String(error));
    assert.equal(error.capability, `agentCapabilities.${capability}`);
  }
  // mcp/message as a request is the client's to handle: refused here.
  const wrong = await c.connection
    .request("mcp/message", { serverId: "m", requestId: "r", method: "x" })
    .catch((e) => e);
  assert.ok(wrong instanceof RefusedError, String(wrong));
  assert.equal(wrong.kind, "WrongDirection");
  assert.deepEqual(agent.seen, []);
  await closeBoth(pair);
});

test("with unstable off, unstable methods pass as extension methods, each to its own kind of handler", async () => {
  // Neither side turns the features on and the agent advertises nothing: the
  // core neither routes nor checks them (no capability, no open session, a
  // relative cwd), and the typed hosts still get them.
  const agent = unstableAgent({ advertise: false });
  const client = unstableClient();
  /** @type {import("libacp").AgentConnection | undefined} */
  let toClient;
  const pair = typedPair((conn) => {
    toClient = conn;
    return /** @type {(c: unknown) => import("libacp").Agent} */ (agent.factory)(conn);
  }, client.client);
  const c = pair.client;
  await within(c.initialize(INIT_PARAMS), "initialize");
  assert.deepEqual(await c.forkSession({ sessionId: "nowhere", cwd: "relative" }), {
    sessionId: "nowhere-fork",
  });
  assert.deepEqual(await c.sessionStatus({ sessionId: "nowhere" }), { status: "saved" });
  await c.mcpMessage({ serverId: "m", requestId: "r", method: "ping" });
  // The reverse direction too: the agent's calls reach the typed client.
  const a = /** @type {import("libacp").AgentConnection} */ (toClient);
  assert.deepEqual(await a.mcpMessage({ serverId: "m", requestId: "r", method: "t" }), {
    result: { tools: [] },
  });
  await a.authStatusUpdate({ state: "unauthenticated" });
  // A request named like a notification method (and the reverse) is not
  // passed to that method.
  const wrong = await c.connection
    .request("mcp/message", { serverId: "m", requestId: "x", method: "ping" })
    .catch((e) => e);
  assert.ok(wrong instanceof RequestError && wrong.code === -32601, String(wrong));
  await c.connection.notify("session/fork", { sessionId: "x", cwd: "/tmp" });
  // Requests start in arrival order: the notifications above were handled
  // (or dropped) before this one runs.
  assert.deepEqual(await c.sessionStatus({ sessionId: "s" }), { status: "saved" });
  assert.deepEqual(
    agent.seen.map(([kind]) => kind),
    ["fork", "mcp"],
  );
  await eventually(() => client.seen.length === 2, "the client's notification");
  assert.deepEqual(client.seen, [
    ["mcp", "t"],
    ["auth", "unauthenticated"],
  ]);
  await closeBoth(pair);
});

test("an unknown unstable feature is a RangeError naming the option; both spellings work", async () => {
  const [a, b] = socketPair();
  try {
    assert.throws(
      () => Connection.fromFds(a, a, {}, { role: "agent", unstable: ["forks"] }),
      (/** @type {any} */ e) =>
        e instanceof RangeError &&
        /** @type {any} */ (e).option === "unstable" &&
        /"forks".*"unstable_session_fork"/.test(e.message),
    );
    assert.throws(
      () => Connection.fromFds(b, b, {}, { role: "client", unstable: ["all", "nope"] }),
      (/** @type {any} */ e) => e instanceof RangeError && /"nope"/.test(e.message),
    );
    assert.throws(
      () => Connection.fromFds(b, b, {}, { role: "client", unstable: /** @type {any} */ ("all") }),
      (/** @type {any} */ e) =>
        e instanceof TypeError && /** @type {any} */ (e).option === "unstable",
    );
  } finally {
    // Refused before anything was taken over: the descriptors are ours.
    net.Socket.prototype.destroy.call(new net.Socket({ fd: a }));
    net.Socket.prototype.destroy.call(new net.Socket({ fd: b }));
  }
  for (const name of ["session_fork", "unstable_session_fork"]) {
    const options = { unstable: [name] };
    const pair = typedPair(unstableAgent().factory, unstableClient().client, {
      agent: options,
      client: options,
    });
    const c = pair.client;
    await within(c.initialize(INIT_PARAMS), "initialize");
    // On: validated (a relative cwd is refused locally) ...
    const invalid = await c.forkSession({ sessionId: "s0", cwd: "relative" }).catch((e) => e);
    assert.ok(invalid instanceof InvalidParams, String(invalid));
    // ... and the fork's session is open afterwards.
    const fork = await c.forkSession({ sessionId: "s0", cwd: "/tmp" });
    const answer = await within(c.prompt({ sessionId: fork.sessionId, prompt: PROMPT }), "prompt");
    assert.equal(answer.stopReason, "end_turn");
    await closeBoth(pair);
  }
});

test("the payload_rule event reaches the events hook: withheld from our answer", async () => {
  /** @type {import("libacp").EngineEvent[]} */
  const events = [];
  const pair = typedPair(
    {
      initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
      newSession: () => ({
        sessionId: "s1",
        configOptions: [
          { id: "thinking", name: "Thinking", type: "boolean", currentValue: false },
          {
            id: "model",
            name: "Model",
            type: "select",
            currentValue: "fast",
            options: [{ value: "fast", name: "Fast" }],
          },
        ],
      }),
    },
    {},
    { agent: { events: (e) => void events.push(e) } },
  );
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  // The client did not advertise session.configOptions.boolean: the boolean
  // option was removed from the answer, the select one kept.
  const session = await pair.client.newSession({ cwd: "/tmp", mcpServers: [] });
  assert.deepEqual(
    session.configOptions?.map((o) => o.id),
    ["model"],
  );
  await eventually(() => events.some((e) => e.kind === "payload_rule"), "the payload_rule event");
  const rules = events.filter((e) => e.kind === "payload_rule");
  assert.equal(rules.length, 1);
  assert.deepEqual(rules[0]?.details, {
    rule: "boolean_config_option",
    withheld: true,
    method: "session/new",
    field: "/configOptions/0/type",
    capability: "clientCapabilities.session.configOptions.boolean",
  });
  assert.match(rules[0]?.message ?? "", /clientCapabilities\.session\.configOptions\.boolean/);
  await closeBoth(pair);
});

test("the payload_rule event reaches the events hook: received from the peer", async () => {
  // A raw agent answers with a boolean config option the client did not
  // advertise: delivered as received, and reported (withheld false).
  /** @type {import("libacp").EngineEvent[]} */
  const events = [];
  const [libEnd, rawEnd] = socketPair();
  const conn = Connection.fromFds(
    libEnd,
    libEnd,
    {},
    { role: "client", events: (e) => void events.push(e) },
  );
  const raw = new net.Socket({ fd: rawEnd, readable: true, writable: true });
  raw.setEncoding("utf8");
  /** @type {string[]} */
  const lines = [];
  let buffer = "";
  raw.on("data", (/** @type {string} */ d) => {
    buffer += d;
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      lines.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
  /** @param {unknown} result */
  const answer = async (result) => {
    await eventually(() => lines.length > 0, "a request from the client");
    const request = JSON.parse(/** @type {string} */ (lines.shift()));
    raw.write(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }) + "\n");
  };
  const init = conn.request("initialize", INIT_PARAMS);
  await answer({ protocolVersion: 1, agentCapabilities: {} });
  await within(init, "initialize");
  const created = conn.request("session/new", { cwd: "/tmp", mcpServers: [] });
  const option = { id: "t", name: "T", type: "boolean", currentValue: true };
  await answer({ sessionId: "s1", configOptions: [option] });
  assert.deepEqual(/** @type {any} */ (await within(created, "session/new")).configOptions, [
    option,
  ]);
  await eventually(() => events.some((e) => e.kind === "payload_rule"), "the payload_rule event");
  assert.deepEqual(
    events.filter((e) => e.kind === "payload_rule").map((e) => e.details),
    [
      {
        rule: "boolean_config_option",
        withheld: false,
        method: "session/new",
        field: "/configOptions/0/type",
        capability: "clientCapabilities.session.configOptions.boolean",
      },
    ],
  );
  await within(conn.close(), "close");
  raw.destroy();
});

test("the session snapshot shows the notices and compactions the agent sent", async () => {
  /** @type {import("libacp").AgentConnection | undefined} */
  let toClient;
  const pair = typedPair(
    (conn) => {
      toClient = conn;
      return {
        initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
        newSession: () => ({ sessionId: "s1" }),
        prompt: async () => {
          const to = /** @type {import("libacp").AgentConnection} */ (toClient);
          /** @type {import("libacp").schema.SessionUpdate[]} */
          const updates = [
            { sessionUpdate: "notice", severity: "warning", title: "Slow" },
            { sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" },
            {
              sessionUpdate: "compaction_summary_chunk",
              compactionId: "c1",
              content: { type: "text", text: "Summary." },
            },
          ];
          for (const update of updates) await to.sessionUpdate({ sessionId: "s1", update });
          return { stopReason: "end_turn" };
        },
      };
    },
    {},
    { client: { sessionModel: true } },
  );
  const c = /** @type {ClientConnection} */ (pair.client);
  await within(
    c.initialize({
      protocolVersion: 1,
      clientCapabilities: { session: { notices: {}, compaction: {} } },
    }),
    "initialize",
  );
  await c.newSession({ cwd: "/tmp", mcpServers: [] });
  await within(c.prompt({ sessionId: "s1", prompt: PROMPT }), "prompt");
  const snapshot = /** @type {any} */ (c.sessionSnapshot("s1"));
  assert.deepEqual(
    snapshot.notices.map((/** @type {any} */ n) => [n.severity, n.title]),
    [["warning", "Slow"]],
  );
  assert.equal(snapshot.noticesDropped, 0);
  assert.equal(snapshot.compactions.length, 1);
  const [compaction] = snapshot.compactions;
  assert.equal(compaction.compactionId, "c1");
  assert.equal(compaction.status, "in_progress");
  assert.equal(compaction.summaryText, "Summary.");
  assert.ok(
    snapshot.entries.some(
      (/** @type {any} */ e) => e.type === "compaction" && e.compactionId === "c1",
    ),
  );
  await closeBoth(pair);
});
