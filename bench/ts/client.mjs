// The bench client on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0): node client.mjs WORKLOAD [ARGS] -- AGENT_COMMAND...
//
// SDK quirk (tests/interop/README.md): the receive loop does not await
// dispatch, so `await ctx.request("session/prompt")` can resume before the
// last session/update handlers ran. session/update is registered first, and
// `settle` yields to the event loop (bounded) until the chunks are counted.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

import { drive, emit, fail, invocation, RESOURCE_URI, SESSION_CWD, Tracker } from "./common.mjs";

const IMPL = "ts-sdk";

async function main() {
  const { workload, args, agent } = invocation(process.argv.slice(2));
  const tracker = new Tracker();
  const app = client({ name: "bench-ts-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === "agent_message_chunk") tracker.chunk(params.sessionId, u.content.text);
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      try {
        return { content: tracker.read(params.path) };
      } catch (e) {
        throw RequestError.invalidParams({ details: String(e) });
      }
    })
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      try {
        tracker.write(params.path, params.content);
      } catch (e) {
        throw RequestError.invalidParams({ details: String(e) });
      }
      return {};
    });
  // A URL instead of a command: the SDK's experimental remote clients.
  let child = null;
  let exited = Promise.resolve();
  let stream;
  if (/^wss?:\/\//.test(agent[0])) {
    const { createWebSocketStream } = await import("@agentclientprotocol/sdk/experimental/ws-client");
    const { WebSocket } = await import("ws");
    stream = createWebSocketStream(agent[0], { WebSocket });
  } else if (/^https?:\/\//.test(agent[0])) {
    const { createHttpStream } = await import("@agentclientprotocol/sdk/experimental/http-client");
    stream = createHttpStream(agent[0]);
  } else {
    child = spawn(agent[0], agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    child.stdin.on("error", () => {});
    exited = new Promise((resolve) => child.on("exit", resolve));
    stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  }
  let result;
  await app.connectWith(stream, async (ctx) => {
    await ctx.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    const peer = {
      newSession: async () => (await ctx.request(methods.agent.session.new, { cwd: SESSION_CWD, mcpServers: [] })).sessionId,
      prompt: async (sessionId, text, resource) => {
        const prompt = [{ type: "text", text }];
        if (resource !== null) prompt.push({ type: "resource", resource: { uri: RESOURCE_URI, text: resource } });
        return (await ctx.request(methods.agent.session.prompt, { sessionId, prompt })).stopReason;
      },
      settle: async (sid, n) => {
        for (let spins = 0; (tracker.chunks.get(sid) ?? 0) < n && spins < 1000; spins++) {
          await new Promise((resolve) => setImmediate(resolve));
        }
      },
    };
    result = await drive(workload, args, tracker, peer);
  });
  child?.stdin.end();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  emit(IMPL, workload, result);
  process.exit(0);
}

main().catch((e) => {
  fail(IMPL, process.argv[2] ?? "?", e?.stack ?? e);
  process.exit(1);
});
