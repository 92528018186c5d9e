// The bench agent on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0), on stdin/stdout. See bench/README.md for the prompt vocabulary.
//
// `--listen HOST:PORT`: served remotely by the SDK's experimental server
// (AcpServer with its Node adapters and `ws`: WebSocket and Streamable HTTP
// on one port), a fresh agent per connection, until stdin closes; the first
// stderr line is `listening on HOST:PORT`.
import http from "node:http";
import { Readable, Writable } from "node:stream";

import { agent, methods, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

import { chunkText, parseCommand, READ_LEN, readPath, textOf, WRITE_PATH } from "./common.mjs";

let sessions = 0;

const makeApp = () =>
  agent({ name: "bench-ts-agent" })
  .onRequest(methods.agent.initialize, async () => ({
    protocolVersion: 1,
    agentCapabilities: { promptCapabilities: { embeddedContext: true } },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, async () => ({ sessionId: `ts-${++sessions}` }))
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    const text = params.prompt.find((b) => b.type === "text")?.text ?? "";
    const command = parseCommand(text);
    if (!command) throw RequestError.invalidParams({ prompt: text }, "unknown bench command");
    const [kind, n] = command;
    if (kind === "stream") {
      for (let i = 0; i < n; i++) {
        await client.notify(methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunkText(i) } },
        });
      }
    } else if (kind === "read") {
      for (let i = 0; i < n; i++) {
        const { content } = await client.request(methods.client.fs.readTextFile, { sessionId, path: readPath(i) });
        if (content.length !== READ_LEN) throw RequestError.internalError({ read: i, length: content.length });
      }
    } else if (kind === "write") {
      await client.request(methods.client.fs.writeTextFile, { sessionId, path: WRITE_PATH, content: textOf(n) });
    }
    return { stopReason: "end_turn" };
  });

const listen = process.argv[2] === "--listen" ? process.argv[3] : null;
if (listen) {
  const { AcpServer } = await import("@agentclientprotocol/sdk/experimental/server");
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import(
    "@agentclientprotocol/sdk/experimental/node"
  );
  const { WebSocketServer } = await import("ws");
  const at = listen.lastIndexOf(":");
  const acp = new AcpServer({ createAgent: makeApp });
  const server = http.createServer(createNodeHttpHandler(acp));
  server.on("upgrade", createNodeWebSocketUpgradeHandler(acp, new WebSocketServer({ noServer: true })));
  server.listen(Number(listen.slice(at + 1)), listen.slice(0, at), () => {
    console.error(`listening on ${server.address().address}:${server.address().port}`);
  });
  process.stdin.on("data", () => {});
  process.stdin.on("end", async () => {
    await acp.close();
    process.exit(0);
  });
} else {
  const connection = makeApp().connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  await connection.closed;
  process.exit(0);
}
