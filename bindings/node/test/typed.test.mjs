// The typed API (issue 11, item 2; the unstable methods, issue 23): the
// method tables cover the schema's exactly (from its x-method and x-side),
// every method reaches its handler with params and context, hosts
// may be plain objects, classes or factories, and extension methods route
// to extMethod/extNotification.
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";

import {
  AGENT_METHODS,
  AGENT_PROXY_METHODS,
  AGENT_SCHEMA,
  AgentConnection,
  CLIENT_METHODS,
  CLIENT_PROXY_METHODS,
  CLIENT_SCHEMA,
  ClientConnection,
  MethodNotFound,
  PROXY_NOTIFICATION_SCHEMA,
  PROXY_REQUEST_SCHEMA,
  UNSTABLE_METHODS,
  socketPair,
} from "libacp";

import { closeBoth, typedPair, turns, within, ROOT, INIT_PARAMS } from "./support.mjs";

/**
 * side -> wire name -> [params, result | null] of the methods that side
 * handles, from the x-side and x-method of spec/ts-sdk-2.4.0/v1/<name>.
 * @param {string} name
 * @returns {Record<string, Record<string, [string | null, string | null]>>}
 */
function schemaMethods(name) {
  const file = path.join(ROOT, "spec", "ts-sdk-2.4.0", "v1", name);
  /** @type {Record<string, Record<string, any>>} */
  const defs = JSON.parse(fs.readFileSync(file, "utf8")).$defs;
  /** @type {Record<string, Record<string, [string | null, string | null]>>} */
  const out = {};
  for (const [def, schema] of Object.entries(defs)) {
    const side = schema["x-side"];
    const method = schema["x-method"];
    if (typeof side !== "string" || typeof method !== "string") continue;
    const entry = ((out[side] ??= {})[method] ??= [null, null]);
    entry[def.endsWith("Response") ? 1 : 0] = def;
  }
  return out;
}

test("AGENT_METHODS and CLIENT_METHODS name exactly the schema's methods", () => {
  // The unstable schema's agent and client methods (not the protocol's
  // $/cancel_request, nor the proxy chain's methods).
  const every = schemaMethods("schema.unstable.json");
  const stable = schemaMethods("schema.json");
  assert.deepEqual(Object.keys(every).sort(), ["agent", "client", "protocol", "proxy"]);
  for (const [side, names, schema] of /** @type {const} */ ([
    ["agent", AGENT_METHODS, AGENT_SCHEMA],
    ["client", CLIENT_METHODS, CLIENT_SCHEMA],
  ])) {
    const wires = Object.keys(every[side] ?? {}).sort();
    assert.deepEqual(Object.keys(names).sort(), wires, side);
    assert.deepEqual(Object.keys(schema).sort(), wires, side);
    for (const wire of wires) {
      const [params, result] = /** @type {[string, string | null]} */ (every[side]?.[wire]);
      const info = /** @type {Record<string, import("libacp").MethodInfo>} */ (schema)[wire];
      assert.deepEqual(info, { params, result, stable: wire in (stable[side] ?? {}) }, wire);
      assert.equal(UNSTABLE_METHODS.has(wire), !info?.stable, wire);
    }
  }
  // mcp/message: a request the client handles, a notification the agent handles.
  assert.equal(AGENT_SCHEMA["mcp/message"].result, null);
  assert.equal(CLIENT_SCHEMA["mcp/message"].result, "MessageMcpResponse");
  assert.ok(UNSTABLE_METHODS.has("session/fork") && !UNSTABLE_METHODS.has("session/new"));
});

test("the proxy chain's tables are the schema's side proxy, each kind apart", () => {
  const every = schemaMethods("schema.unstable.json");
  const stable = schemaMethods("schema.json");
  const wires = Object.keys(every.proxy ?? {}).sort();
  assert.deepEqual(wires, ["proxy/initialize", "proxy/successor"]);
  assert.equal(stable.proxy, undefined);
  assert.deepEqual(PROXY_REQUEST_SCHEMA, {
    "proxy/initialize": {
      params: "InitializeProxyRequest",
      result: "InitializeProxyResponse",
      stable: false,
    },
    "proxy/successor": {
      params: "ProxySuccessorRequest",
      result: "ProxySuccessorResponse",
      stable: false,
    },
  });
  assert.deepEqual(PROXY_NOTIFICATION_SCHEMA, {
    "proxy/successor": { params: "ProxySuccessorNotification", result: null, stable: false },
  });
  for (const wire of wires) {
    assert.ok(UNSTABLE_METHODS.has(wire), wire);
  }
  // A proxy (agent role) handles proxy/initialize and both kinds of
  // proxy/successor, which the conductor (client role) calls; the conductor
  // handles both kinds of proxy/successor, which the proxy calls (as the
  // Rust typed API, core/src/typed.rs).
  assert.deepEqual(AGENT_PROXY_METHODS, {
    requests: { "proxy/initialize": "proxyInitialize", "proxy/successor": "proxySuccessor" },
    notifications: { "proxy/successor": "proxySuccessorNotification" },
  });
  assert.deepEqual(CLIENT_PROXY_METHODS, {
    requests: { "proxy/successor": "proxySuccessor" },
    notifications: { "proxy/successor": "proxySuccessorNotification" },
  });
  for (const name of ["proxyInitialize", "proxySuccessor", "proxySuccessorNotification"]) {
    assert.equal(typeof Reflect.get(ClientConnection.prototype, name), "function", name);
  }
  for (const name of ["proxySuccessor", "proxySuccessorNotification"]) {
    assert.equal(typeof Reflect.get(AgentConnection.prototype, name), "function", name);
  }
});

/**
 * Sample params for each agent method (enough for the core's checks).
 * @type {Record<string, unknown>}
 */
const AGENT_PARAMS = {
  authenticate: { methodId: "m" },
  logout: {},
  "session/new": { cwd: "/tmp", mcpServers: [] },
  "session/load": { sessionId: "s1", cwd: "/tmp", mcpServers: [] },
  "session/resume": { sessionId: "s1", cwd: "/tmp" },
  "session/list": {},
  "session/close": { sessionId: "s1" },
  "session/delete": { sessionId: "s1" },
  "session/set_mode": { sessionId: "s1", modeId: "m" },
  "session/set_config_option": { sessionId: "s1", configId: "c", value: "v" },
  "session/prompt": { sessionId: "s1", prompt: [] },
  "session/cancel": { sessionId: "s1" },
  "session/fork": { sessionId: "s1", cwd: "/tmp" },
  "session/archive": { sessionId: "s2" },
  "session/unarchive": { sessionId: "s2" },
  "session/status": { sessionId: "s1" },
  "session/set_title": { sessionId: "s1", title: "Tests" },
  "auth/status": {},
  "providers/list": {},
  "providers/set": { providerId: "main", apiType: "openai", baseUrl: "https://llm.example" },
  "providers/disable": { providerId: "main" },
  "mcp/message": { serverId: "m", requestId: "r", method: "ping" },
};

/** What each agent method answers in the test, by wire name. @type {Record<string, unknown>} */
const AGENT_RESULTS = {
  "session/new": { sessionId: "s1" },
  "session/list": { sessions: [] },
  "session/set_config_option": { configOptions: [] },
  "session/prompt": { stopReason: "end_turn" },
  "session/fork": { sessionId: "s2" },
  "session/status": { status: "open" },
  "session/set_title": { title: "Tests" },
  "auth/status": { state: "authenticated" },
  "providers/list": { providers: [] },
};

test("every agent method (the unstable ones on) reaches its typed handler with its params and a request context", async () => {
  /** @type {[string, unknown, unknown][]} */
  const calls = [];
  /** @type {Record<string, Function>} */
  const agent = {
    initialize: () => ({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        sessionCapabilities: {
          list: {},
          resume: {},
          close: {},
          delete: {},
          fork: {},
          archive: {},
          status: {},
          title: {},
        },
        auth: { logout: {}, status: {} },
        providers: {},
      },
      authMethods: [{ id: "m", name: "M" }],
    }),
  };
  for (const [wire, name] of Object.entries(AGENT_METHODS)) {
    if (wire === "initialize") continue;
    agent[name] = (/** @type {unknown} */ params, /** @type {any} */ context) => {
      calls.push([wire, params, context === undefined ? undefined : context.method]);
      return AGENT_RESULTS[wire] ?? {};
    };
  }
  const all = { unstable: ["all"] };
  const pair = typedPair(agent, {}, { agent: all, client: all });
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  const c = pair.client;
  await c.authenticate(/** @type {any} */ (AGENT_PARAMS.authenticate));
  await c.newSession(/** @type {any} */ (AGENT_PARAMS["session/new"]));
  await c.loadSession(/** @type {any} */ (AGENT_PARAMS["session/load"]));
  await c.resumeSession(/** @type {any} */ (AGENT_PARAMS["session/resume"]));
  await c.listSessions();
  await c.setSessionMode(/** @type {any} */ (AGENT_PARAMS["session/set_mode"]));
  await c.setSessionConfigOption(/** @type {any} */ (AGENT_PARAMS["session/set_config_option"]));
  await c.prompt(/** @type {any} */ (AGENT_PARAMS["session/prompt"]));
  await c.cancel("s1");
  await c.closeSession(/** @type {any} */ (AGENT_PARAMS["session/close"]));
  await c.deleteSession(/** @type {any} */ (AGENT_PARAMS["session/delete"]));
  await c.logout();
  await c.forkSession(/** @type {any} */ (AGENT_PARAMS["session/fork"]));
  await c.archiveSession(/** @type {any} */ (AGENT_PARAMS["session/archive"]));
  await c.unarchiveSession(/** @type {any} */ (AGENT_PARAMS["session/unarchive"]));
  await c.sessionStatus(/** @type {any} */ (AGENT_PARAMS["session/status"]));
  await c.setSessionTitle(/** @type {any} */ (AGENT_PARAMS["session/set_title"]));
  await c.authStatus();
  await c.listProviders();
  await c.setProvider(/** @type {any} */ (AGENT_PARAMS["providers/set"]));
  await c.disableProvider(/** @type {any} */ (AGENT_PARAMS["providers/disable"]));
  await c.mcpMessage(/** @type {any} */ (AGENT_PARAMS["mcp/message"]));
  await within(
    (async () => {
      while (calls.length < Object.keys(AGENT_METHODS).length - 1) await turns(1);
    })(),
    "every handler",
  );
  const byWire = Object.fromEntries(
    calls.map(([wire, params, method]) => [wire, { params, method }]),
  );
  for (const wire of Object.keys(AGENT_PARAMS)) {
    assert.ok(wire in byWire, `${wire} never reached its handler`);
    const notification = wire === "session/cancel" || wire === "mcp/message";
    const expectedContext = notification ? undefined : wire;
    assert.equal(byWire[wire]?.method, expectedContext, `${wire}'s context`);
  }
  assert.deepEqual(byWire["session/set_mode"]?.params, AGENT_PARAMS["session/set_mode"]);
  assert.deepEqual(byWire["providers/set"]?.params, AGENT_PARAMS["providers/set"]);
  assert.deepEqual(byWire["mcp/message"]?.params, AGENT_PARAMS["mcp/message"]);
  await closeBoth(pair);
});

test("every client method (the unstable ones on) reaches its typed handler (a class instance as the client)", async () => {
  /** @type {string[]} */
  const calls = [];
  class Editor {
    /** @param {unknown} _p */
    sessionUpdate(_p) {
      calls.push("session/update");
    }
    requestPermission() {
      calls.push("session/request_permission");
      return { outcome: { outcome: /** @type {const} */ ("cancelled") } };
    }
    readTextFile() {
      calls.push("fs/read_text_file");
      return { content: "x" };
    }
    writeTextFile() {
      calls.push("fs/write_text_file");
      return {};
    }
    createTerminal() {
      calls.push("terminal/create");
      return { terminalId: "t" };
    }
    terminalOutput() {
      calls.push("terminal/output");
      return { output: "", truncated: false };
    }
    releaseTerminal() {
      calls.push("terminal/release");
      return {};
    }
    waitForTerminalExit() {
      calls.push("terminal/wait_for_exit");
      return { exitCode: 0 };
    }
    killTerminal() {
      calls.push("terminal/kill");
      return {};
    }
    createElicitation() {
      calls.push("elicitation/create");
      return { action: "decline" };
    }
    elicitationComplete() {
      calls.push("elicitation/complete");
    }
    mcpMessage() {
      calls.push("mcp/message");
      return { result: { tools: [] } };
    }
    authStatusUpdate() {
      calls.push("auth/status_update");
    }
  }
  /** @type {import("libacp").AgentConnection | undefined} */
  let toClient;
  const all = { unstable: ["all"] };
  const pair = typedPair(
    (conn) => {
      toClient = conn;
      return {
        initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
        newSession: () => ({ sessionId: "s1" }),
      };
    },
    new Editor(),
    { agent: all, client: all },
  );
  await within(
    pair.client.initialize({
      protocolVersion: 1,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        elicitation: { form: {}, url: {} },
      },
    }),
    "initialize",
  );
  await within(pair.client.newSession({ cwd: "/tmp", mcpServers: [] }), "session/new");
  const a = /** @type {import("libacp").AgentConnection} */ (toClient);
  const sid = { sessionId: "s1" };
  const term = { ...sid, terminalId: "t" };
  await a.sessionUpdate({
    ...sid,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } },
  });
  await a.requestPermission({ ...sid, toolCall: { toolCallId: "t1" }, options: [] });
  await a.readTextFile({ ...sid, path: "/tmp/x" });
  await a.writeTextFile({ ...sid, path: "/tmp/x", content: "y" });
  await a.createTerminal({ ...sid, command: "true" });
  await a.terminalOutput(term);
  await a.waitForTerminalExit(term);
  await a.killTerminal(term);
  await a.releaseTerminal(term);
  const elicitation = await a
    .createElicitation(
      /** @type {any} */ ({
        ...sid,
        mode: "form",
        message: "?",
        requestedSchema: { type: "object", properties: {} },
      }),
    )
    .catch((e) => e);
  await a.elicitationComplete(/** @type {any} */ ({ elicitationId: "e1" })).catch((e) => e);
  const tools = await a.mcpMessage({ serverId: "m", requestId: "r", method: "tools/list" });
  assert.deepEqual(tools, { result: { tools: [] } });
  await a.authStatusUpdate({ state: "authenticated" });
  // Elicitation is a draft in v1: see below.
  const expected = Object.keys(CLIENT_METHODS).filter((w) => !w.startsWith("elicitation/"));
  await within(
    (async () => {
      while (!expected.every((wire) => calls.includes(wire))) await turns(1);
    })(),
    "the handlers",
  );
  for (const wire of expected) {
    assert.ok(calls.includes(wire), `${wire} never reached its handler (saw ${calls.join(", ")})`);
  }
  // Elicitation either reached the handler or was refused by the core's
  // v1 rules; it must not have failed any other way.
  assert.ok(
    calls.includes("elicitation/create") || elicitation instanceof Error,
    String(elicitation),
  );
  await closeBoth(pair);
});

test("extension methods route to extMethod / extNotification; other unknown methods answer -32601", async () => {
  /** @type {unknown[]} */
  const notes = [];
  const pair = typedPair({
    initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
    extMethod: (method, params, context) => ({ method, params, id: typeof context.id }),
    extNotification: (method, params) => void notes.push([method, params]),
  });
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  assert.deepEqual(await within(pair.client.extMethod("_x/y", { a: 1 }), "_x/y"), {
    method: "_x/y",
    params: { a: 1 },
    id: "number",
  });
  await pair.client.extNotification("_note", { b: 2 });
  await within(
    (async () => {
      while (notes.length < 1) await turns(1);
    })(),
    "the notification",
  );
  assert.deepEqual(notes, [["_note", { b: 2 }]]);
  const unknown = await pair.client.connection.request("nope/method", {}).catch((e) => e);
  assert.ok(unknown instanceof MethodNotFound, String(unknown));
  await closeBoth(pair);
});

test("a factory gets the connection; onConnect is called once before any request", async () => {
  /** @type {string[]} */
  const order = [];
  /** @type {unknown} */
  let factoryArg;
  const pair = typedPair((conn) => {
    factoryArg = conn;
    return {
      onConnect: (/** @type {unknown} */ c) => {
        order.push(c === factoryArg ? "onConnect(same connection)" : "onConnect(other)");
      },
      initialize: () => {
        order.push("initialize");
        return { protocolVersion: 1, agentCapabilities: {} };
      },
    };
  });
  assert.equal(factoryArg, pair.agent);
  await within(pair.client.initialize(INIT_PARAMS), "initialize");
  assert.deepEqual(order, ["onConnect(same connection)", "initialize"]);
  await closeBoth(pair);
});

test("an agent that is not an object is refused with TypeError, and nothing is left open", () => {
  assert.throws(() => typedPair(/** @type {any} */ (null)), /agent must be an object/);
  assert.throws(
    () => typedPair(/** @type {any} */ (() => 42)),
    /agent must be an object.*not number/,
  );
});

test("a request already waiting when the connection is made reaches the host's handler", async () => {
  // The descriptor is read on this thread: the first read must wait until
  // the typed layer has installed the host (after the constructor).
  const [a, b] = socketPair();
  const raw = new net.Socket({ fd: b, readable: true, writable: true });
  raw.setEncoding("utf8");
  const line = new Promise((resolve) => {
    let buffer = "";
    raw.on("data", (/** @type {string} */ d) => {
      buffer += d;
      if (buffer.includes("\n")) resolve(buffer.slice(0, buffer.indexOf("\n")));
    });
  });
  raw.write(
    JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT_PARAMS }) + "\n",
  );
  await turns(5);
  const agent = AgentConnection.fromFds(a, a, {
    initialize: () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true } }),
  });
  const answer = JSON.parse(/** @type {string} */ (await within(line, "the answer")));
  assert.deepEqual(answer.result.agentCapabilities, { loadSession: true });
  await within(agent.close(), "close");
  raw.destroy();
});
