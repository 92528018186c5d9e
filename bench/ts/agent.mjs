// The bench agent on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0), on stdin/stdout. See bench/README.md for the prompt vocabulary.
import { Readable, Writable } from "node:stream";

import { agent, methods, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

import { chunkText, parseCommand, READ_LEN, readPath, textOf, WRITE_PATH } from "./common.mjs";

let sessions = 0;

const app = agent({ name: "bench-ts-agent" })
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

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
