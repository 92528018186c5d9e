// Proxy chains (unstable `proxy_chains`) through the typed API: a conductor
// (a typed client) and a proxy (a typed agent) over a socket pair, both
// with the feature on. The conductor initializes the proxy with
// `proxyInitialize`; the proxy reaches its successor with `proxySuccessor`
// (a request and a notification), which the conductor's typed handlers
// get; the conductor delivers the successor's messages to the proxy's
// typed handlers. Methods a host leaves out answer `-32601` (requests) or
// are ignored (notifications).
import assert from "node:assert/strict";
import { test } from "node:test";

import { ErrorCode, RefusedError, RequestError } from "libacp";

import { closeBoth, guardUnhandledRejections, typedPair, within, INIT_PARAMS } from "./support.mjs";

guardUnhandledRejections();

const PROXY_CHAINS = { unstable: ["proxy_chains"] };
const BOTH_ON = { agent: PROXY_CHAINS, client: PROXY_CHAINS };
const SUCCESSOR_INIT = { protocolVersion: 1, agentCapabilities: { loadSession: true } };

/**
 * A proxy: initializes its successor through the conductor before
 * answering `proxy/initialize`; answers what the conductor delivers after
 * sending its successor a notification.
 */
function proxy() {
  /** @type {[string, unknown][]} */
  const seen = [];
  /** @type {import("libacp").AgentFactory} */
  const factory = (conductor) => ({
    proxyInitialize: async (params) => {
      seen.push(["proxyInitialize", params]);
      const successor = await conductor.proxySuccessor({ method: "initialize", params });
      return /** @type {import("libacp").schema.InitializeProxyResponse} */ (successor);
    },
    proxySuccessor: async (params, context) => {
      seen.push(["request", params]);
      await conductor.proxySuccessorNotification({
        method: "_chain/hello",
        params: { from: "proxy" },
      });
      return {
        handledBy: "proxy",
        method: params.method,
        context: context.method,
        seen: seen.length,
      };
    },
    proxySuccessorNotification: (params) => void seen.push(["notification", params]),
  });
  return { seen, factory };
}

/** A conductor playing the proxy's successor: answers the forwarded `initialize`. */
function conductor() {
  /** @type {[string, unknown][]} */
  const seen = [];
  /** @type {import("libacp").Client} */
  const client = {
    proxySuccessor: (params) => {
      seen.push(["request", params]);
      if (params.method === "initialize") {
        return SUCCESSOR_INIT;
      }
      throw new RequestError(-32602, "the successor refused", { method: params.method });
    },
    proxySuccessorNotification: (params) => void seen.push(["notification", params]),
  };
  return { seen, client };
}

test("a typed conductor and proxy round-trip every proxy method", async () => {
  const p = proxy();
  const c = conductor();
  /** @type {import("libacp").AgentConnection | undefined} */
  let toConductor;
  const pair = typedPair(
    (conn) => {
      toConductor = conn;
      return p.factory(conn);
    },
    c.client,
    BOTH_ON,
  );
  const conn = pair.client;
  // proxy/initialize: the proxy's typed handler runs, forwards initialize
  // to its successor (the conductor's typed handler) and answers with the
  // successor's answer.
  const init = await within(conn.proxyInitialize(INIT_PARAMS), "proxy/initialize");
  assert.deepEqual(init, SUCCESSOR_INIT);
  assert.deepEqual(p.seen, [["proxyInitialize", INIT_PARAMS]]);
  assert.deepEqual(c.seen, [["request", { method: "initialize", params: INIT_PARAMS }]]);
  // proxy/initialize was this connection's initialize.
  assert.equal(conn.protocolVersion, 1);
  const again = await conn.initialize(INIT_PARAMS).catch((e) => e);
  assert.ok(again instanceof RefusedError && again.kind === "AlreadyInitialized", String(again));

  // The conductor delivers the successor's messages to the proxy: a
  // notification, handled before the next request starts (arrival order),
  // then a request whose answer round-trips unchanged. The proxy's handler
  // sends its successor a notification first, which the conductor's typed
  // handler has seen when the answer arrives.
  const update = { sessionId: "s1", update: { sessionUpdate: "plan", entries: [] } };
  await conn.proxySuccessorNotification({ method: "session/update", params: update });
  const answer = await within(
    conn.proxySuccessor({ method: "session/request_permission", params: { x: 1 } }),
    "proxy/successor",
  );
  assert.deepEqual(answer, {
    handledBy: "proxy",
    method: "session/request_permission",
    context: "proxy/successor",
    seen: 3,
  });
  assert.deepEqual(p.seen.slice(1), [
    ["notification", { method: "session/update", params: update }],
    ["request", { method: "session/request_permission", params: { x: 1 } }],
  ]);
  assert.deepEqual(c.seen.slice(1), [
    ["notification", { method: "_chain/hello", params: { from: "proxy" } }],
  ]);

  // The successor's error comes back to the proxy as the error of its
  // proxy/successor call, unchanged.
  const to = /** @type {import("libacp").AgentConnection} */ (toConductor);
  const refused = await to.proxySuccessor({ method: "session/new", params: {} }).catch((e) => e);
  assert.ok(refused instanceof RequestError && refused.code === -32602, String(refused));
  assert.deepEqual(refused.data, { method: "session/new" });
  assert.deepEqual(c.seen.at(-1), ["request", { method: "session/new", params: {} }]);
  await closeBoth(pair);
});

test("proxy methods left out answer -32601 (requests) or are ignored (notifications)", async () => {
  // An agent that is not a proxy: proxy/initialize is -32601 and the
  // connection is still not initialized (initialize works afterwards).
  const plain = typedPair(
    { initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }) },
    {},
    BOTH_ON,
  );
  const notFound = await plain.client.proxyInitialize(INIT_PARAMS).catch((e) => e);
  assert.ok(
    notFound instanceof RequestError && notFound.code === ErrorCode.METHOD_NOT_FOUND,
    String(notFound),
  );
  assert.equal((await plain.client.initialize(INIT_PARAMS)).protocolVersion, 1);
  // The conductor's proxy/successor: -32601 for the request; the
  // notification is ignored (the connection goes on).
  await plain.client.proxySuccessorNotification({ method: "session/update", params: {} });
  const request = await plain.client
    .proxySuccessor({ method: "session/prompt", params: {} })
    .catch((e) => e);
  assert.ok(
    request instanceof RequestError && request.code === ErrorCode.METHOD_NOT_FOUND,
    String(request),
  );
  await closeBoth(plain);

  // A conductor with no proxy handler: the proxy's forwarding request is
  // answered -32601, its notification ignored.
  /** @type {number[]} */
  const errors = [];
  /** @type {import("libacp").AgentFactory} */
  const forwarder = (conductor) => {
    /** @param {Promise<unknown>} call */
    const record = (call) =>
      call.catch((e) => {
        errors.push(e instanceof RequestError ? e.code : 0);
        return { errors };
      });
    return {
      proxyInitialize: async (params) => {
        await record(conductor.proxySuccessor({ method: "initialize", params }));
        return { protocolVersion: 1, agentCapabilities: {} };
      },
      // Once initialized: a notification and a request to the successor.
      extMethod: async () => {
        await conductor.proxySuccessorNotification({ method: "_chain/hello" });
        return record(conductor.proxySuccessor({ method: "session/new", params: {} }));
      },
    };
  };
  const pair = typedPair(forwarder, {}, BOTH_ON);
  const init = await within(pair.client.proxyInitialize(INIT_PARAMS), "proxy/initialize");
  assert.equal(init.protocolVersion, 1);
  assert.deepEqual(errors, [ErrorCode.METHOD_NOT_FOUND]);
  const answer = await within(pair.client.extMethod("_test/forward", {}), "_test/forward");
  assert.deepEqual(answer, { errors: [ErrorCode.METHOD_NOT_FOUND, ErrorCode.METHOD_NOT_FOUND] });
  await closeBoth(pair);
});

test("with the option off, proxy methods reach the typed handlers unchecked", async () => {
  // Off, proxy/initialize is an extension method to the core: not an
  // initialize (no phase, no version check), and the typed hosts still get
  // it and proxy/successor.
  const p = proxy();
  const c = conductor();
  const pair = typedPair(p.factory, c.client);
  const init = await within(pair.client.proxyInitialize(INIT_PARAMS), "proxy/initialize");
  assert.deepEqual(init, SUCCESSOR_INIT);
  assert.equal(pair.client.protocolVersion, null);
  assert.deepEqual(c.seen, [["request", { method: "initialize", params: INIT_PARAMS }]]);
  await closeBoth(pair);
});
