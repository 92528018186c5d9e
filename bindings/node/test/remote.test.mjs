// Remote ACP from Node (issue 22): a Node client (`ClientConnection.connect`)
// against a Node server (`serve`) over WebSocket and Streamable HTTP on
// 127.0.0.1, the remote options through the core's option table, typed
// connect errors (`RemoteError`: refused, unauthorized), and a graceful
// shutdown that lets a running turn finish. Loopback only; every wait is a
// hang detector.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";

import { ClientConnection, ConnectionClosed, RemoteError, serve } from "libacp";

import { INIT_PARAMS, deferred, textOf, within } from "./support.mjs";

/**
 * An agent that streams a word, asks for permission and ends the turn;
 * `gate`, when given, holds each turn until it resolves.
 * @param {{ gate?: Promise<void>, started?: () => void }} [hooks]
 * @returns {(client: import("libacp").AgentConnection) => import("libacp").Agent}
 */
function agent(hooks = {}) {
  return (client) => ({
    initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
    newSession: () => ({ sessionId: "s1" }),
    async prompt({ sessionId }) {
      hooks.started?.();
      await hooks.gate;
      await client.sessionUpdate({
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } },
      });
      const { outcome } = await client.requestPermission({
        sessionId,
        toolCall: { toolCallId: "t1", title: "Touch nothing" },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      const ok = outcome.outcome === "selected" && outcome.optionId === "yes";
      return { stopReason: ok ? "end_turn" : "refusal" };
    },
  });
}

/**
 * A client recording what it saw, allowing every permission request.
 * @param {string[]} seen
 * @returns {import("libacp").Client}
 */
function client(seen) {
  return {
    sessionUpdate({ update }) {
      seen.push(`update:${textOf(update)}`);
    },
    requestPermission({ toolCall }) {
      seen.push(`permission:${toolCall.toolCallId}`);
      return { outcome: { outcome: "selected", optionId: "yes" } };
    },
  };
}

test("http2PriorKnowledge speaks h2c to the server; preferWebsocket upgrades an http:// URL", async () => {
  const server = await serve("127.0.0.1:0", agent());
  try {
    for (const options of [{ http2PriorKnowledge: true }, { preferWebsocket: true }]) {
      /** @type {string[]} */
      const seen = [];
      const conn = await within(
        ClientConnection.connect(server.url("http"), client(seen), options),
        "connect",
      );
      await within(conn.initialize(INIT_PARAMS), "initialize");
      const { sessionId } = await within(
        conn.newSession({ cwd: "/", mcpServers: [] }),
        "newSession",
      );
      const result = await within(
        conn.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] }),
        "prompt",
      );
      assert.deepEqual(result, { stopReason: "end_turn" }, JSON.stringify(options));
      assert.deepEqual(seen, ["update:hello", "permission:t1"]);
      await within(conn.close(), "close");
    }
  } finally {
    server.close();
  }
});

test("close() ends every connection at once: the client's pending prompt rejects", async () => {
  const started = deferred();
  const server = await serve(
    "127.0.0.1:0",
    agent({ gate: new Promise(() => {}), started: started.resolve }),
  );
  const conn = await within(ClientConnection.connect(server.url("websocket"), {}), "connect");
  await within(conn.initialize(INIT_PARAMS), "initialize");
  const { sessionId } = await within(conn.newSession({ cwd: "/", mcpServers: [] }), "newSession");
  const turn = conn.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] });
  await within(started.promise, "the turn started");
  server.close();
  const error = await within(
    turn.then(
      () => undefined,
      (e) => e,
    ),
    "the prompt fails",
  );
  assert.ok(error instanceof ConnectionClosed, `got ${String(error)}`);
  assert.equal(server.connections, 0);
  assert.throws(() => server.url(), /the server is closed/);
  await conn.close();
});

for (const kind of /** @type {const} */ (["websocket", "http"])) {
  test(`a Node client runs a whole turn with a permission request against a Node server (${kind})`, async () => {
    /** @type {import("libacp").RemoteConnectionInfo[]} */
    const infos = [];
    const make = agent();
    const server = await serve(
      "127.0.0.1:0",
      (conn, info) => {
        infos.push(info);
        return make(conn);
      },
      { keepaliveIntervalMs: 5_000 },
    );
    try {
      assert.equal(server.address.address, "127.0.0.1");
      assert.ok(server.address.port > 0);
      const url = server.url(kind);
      assert.match(url, kind === "websocket" ? /^ws:\/\/127\.0\.0\.1:\d+\/acp$/ : /^http:\/\//);
      /** @type {string[]} */
      const seen = [];
      const conn = await within(
        ClientConnection.connect(url, client(seen), { connectTimeoutMs: 10_000, queue: 64 }),
        "connect",
      );
      await within(conn.initialize(INIT_PARAMS), "initialize");
      const { sessionId } = await within(
        conn.newSession({ cwd: "/", mcpServers: [] }),
        "newSession",
      );
      const result = await within(
        conn.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] }),
        "prompt",
      );
      assert.deepEqual(result, { stopReason: "end_turn" });
      assert.deepEqual(seen, ["update:hello", "permission:t1"]);
      assert.equal(server.connections, 1);
      assert.equal(infos.length, 1);
      assert.equal(infos[0]?.kind, kind);
      assert.match(infos[0]?.remoteAddr ?? "", /^127\.0\.0\.1:\d+$/);
      await within(conn.close(), "close");
    } finally {
      await within(server.shutdown(), "shutdown");
    }
  });
}

test("connecting where nobody listens rejects with RemoteError kind refused", async () => {
  const port = await new Promise((resolve) => {
    const probe = net.createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {net.AddressInfo} */ (probe.address());
      probe.close(() => resolve(port));
    });
  });
  for (const url of [`ws://127.0.0.1:${port}/acp`, `http://127.0.0.1:${port}/acp`]) {
    const error = await within(
      ClientConnection.connect(url, {}).then(
        async (conn) => {
          // Streamable HTTP connects on the first request.
          try {
            await conn.initialize(INIT_PARAMS);
          } finally {
            await conn.close();
          }
        },
        (e) => e,
      ),
      `connect ${url}`,
    ).catch((/** @type {any} */ e) => e);
    assert.ok(error instanceof RemoteError, `${url}: got ${String(error)}`);
    assert.ok(error instanceof ConnectionClosed);
    assert.equal(error.kind, "refused", `${url}: ${error.message}`);
    assert.equal(error.status, null);
  }
});

test("a wrong bearer token is refused with RemoteError unauthorized, 401 (websocket and http)", async () => {
  let started = 0;
  const make = agent();
  const server = await serve(
    "127.0.0.1:0",
    (conn) => {
      started++;
      return make(conn);
    },
    { bearerTokens: ["right"] },
  );
  try {
    const headers = { Authorization: "Bearer wrong" };
    const ws = await within(
      ClientConnection.connect(server.url("websocket"), {}, { headers }).catch((e) => e),
      "ws connect",
    );
    assert.ok(ws instanceof RemoteError, `got ${String(ws)}`);
    assert.equal(ws.kind, "unauthorized");
    assert.equal(ws.status, 401);

    // Streamable HTTP: the refusal is the initialize POST's.
    const conn = await within(
      ClientConnection.connect(
        server.url("http"),
        {},
        { headers: [["Authorization", "Bearer wrong"]] },
      ),
      "http connect",
    );
    const http = await within(conn.initialize(INIT_PARAMS), "initialize").catch((e) => e);
    assert.ok(http instanceof RemoteError, `got ${String(http)}`);
    assert.equal(http.kind, "unauthorized");
    assert.equal(http.status, 401);
    await conn.close();
    assert.equal(started, 0, "agent code ran for a refused request");

    // The right token gets through.
    const good = await within(
      ClientConnection.connect(
        server.url("websocket"),
        {},
        {
          headers: { Authorization: "Bearer right" },
        },
      ),
      "good connect",
    );
    await within(good.initialize(INIT_PARAMS), "good initialize");
    await good.close();
    assert.equal(started, 1);
  } finally {
    server.close();
  }
});

test("shutdown lets a running turn finish, then closes", async () => {
  const gate = deferred();
  const started = deferred();
  const server = await serve(
    "127.0.0.1:0",
    agent({ gate: gate.promise, started: started.resolve }),
    {
      shutdownGraceMs: 20_000,
    },
  );
  /** @type {string[]} */
  const seen = [];
  const conn = await within(
    ClientConnection.connect(server.url("websocket"), client(seen)),
    "connect",
  );
  await within(conn.initialize(INIT_PARAMS), "initialize");
  const { sessionId } = await within(conn.newSession({ cwd: "/", mcpServers: [] }), "newSession");
  const turn = conn.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] });
  await within(started.promise, "the turn started");
  const shutdown = server.shutdown();
  let done = false;
  void shutdown.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(done, false, "shutdown did not wait for the running turn");
  gate.resolve();
  assert.deepEqual(await within(turn, "the turn"), { stopReason: "end_turn" });
  assert.deepEqual(seen, ["update:hello", "permission:t1"]);
  await within(shutdown, "shutdown");
  assert.equal(server.connections, 0);
  await within(conn.closed(), "the client sees the close");
  await conn.close();
});

test("remote options go through the core's table, by name, with its refusals", async () => {
  const cases = [
    [
      { connectTimeoutMs: 0 },
      RangeError,
      "range",
      /`connectTimeoutMs` must be a finite number of milliseconds, more than 0/,
    ],
    [
      { preferWebsocket: "yes" },
      TypeError,
      "type",
      /`preferWebsocket` must be a boolean, not a string/,
    ],
    [{ headers: 5 }, TypeError, "type", /`headers` must be name and value pairs, not a number/],
    [{ headers: { "A\nB": "x" } }, RangeError, "range", /`headers` holds "A\\nB"/],
    [{ framing: "ndjson" }, TypeError, "not_applicable", /`framing` does not apply here/],
    [{ bearerTokens: ["x"] }, TypeError, "not_applicable", /`bearerTokens` does not apply here/],
    [{ connectTimeout: 5 }, TypeError, "unknown", /unknown option `connectTimeout`/],
  ];
  for (const [options, type, kind, message] of cases) {
    const error = await ClientConnection.connect(
      "ws://127.0.0.1:9/acp",
      {},
      /** @type {any} */ (options),
    ).catch((/** @type {any} */ e) => e);
    assert.ok(
      error instanceof /** @type {Function} */ (type),
      `${JSON.stringify(options)}: got ${String(error)}`,
    );
    assert.match(/** @type {any} */ (error).message, /** @type {RegExp} */ (message));
    assert.equal(/** @type {any} */ (error).optionError, kind);
  }
  const serveCases = [
    [{ maxConnections: 0 }, RangeError, "range", /maxConnections/],
    [{ idleTimeoutMs: -5 }, RangeError, "range", /idleTimeoutMs/],
    [
      { allowedOrigins: "*" },
      TypeError,
      "type",
      /`allowedOrigins` must be a list of strings, not a string/,
    ],
    [{ caFile: "/ca.pem" }, TypeError, "not_applicable", /`caFile` does not apply here/],
    [{ fs: true }, TypeError, "not_applicable", /`fs` does not apply here/],
    [{ shutdownGrace: 1 }, TypeError, "unknown", /unknown option `shutdownGrace`/],
  ];
  for (const [options, type, kind, message] of serveCases) {
    const error = await serve("127.0.0.1:0", {}, /** @type {any} */ (options)).catch(
      (/** @type {any} */ e) => e,
    );
    assert.ok(
      error instanceof /** @type {Function} */ (type),
      `${JSON.stringify(options)}: got ${String(error)}`,
    );
    assert.match(/** @type {any} */ (error).message, /** @type {RegExp} */ (message));
    assert.equal(/** @type {any} */ (error).optionError, kind);
  }
  // An invalid URL is the connect's own error.
  const bad = await ClientConnection.connect("ftp://x/acp", {}).catch((e) => e);
  assert.ok(bad instanceof RemoteError);
  assert.equal(bad.kind, "invalid_url");
});
