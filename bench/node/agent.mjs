// The bench agent on libacp's Node binding (typed API), on stdin/stdout.
// See bench/README.md for the prompt vocabulary; the payloads and the
// command parsing are bench/ts/common.mjs's (plain JavaScript, shared).
import { ErrorCode, RequestError, runAgent } from "libacp";

import { chunkText, parseCommand, READ_LEN, readPath, textOf, WRITE_PATH } from "../ts/common.mjs";

await runAgent((client) => {
  let sessions = 0;
  return {
    initialize: () => ({
      protocolVersion: 1,
      agentCapabilities: { promptCapabilities: { embeddedContext: true } },
      authMethods: [],
    }),
    newSession: () => ({ sessionId: `libacp-node-${++sessions}` }),
    async prompt({ sessionId, prompt }) {
      const text = prompt.find((b) => b.type === "text")?.text ?? "";
      const command = parseCommand(text);
      if (!command) throw new RequestError(ErrorCode.INVALID_PARAMS, "unknown bench command", { prompt: text });
      const [kind, n] = command;
      if (kind === "stream") {
        for (let i = 0; i < n; i++) {
          await client.sessionUpdate({
            sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunkText(i) } },
          });
        }
      } else if (kind === "read") {
        for (let i = 0; i < n; i++) {
          const { content } = await client.readTextFile({ sessionId, path: readPath(i) });
          if (content.length !== READ_LEN) {
            throw new RequestError(ErrorCode.INTERNAL_ERROR, `read ${i}: ${content.length} bytes`);
          }
        }
      } else if (kind === "write") {
        await client.writeTextFile({ sessionId, path: WRITE_PATH, content: textOf(n) });
      }
      return { stopReason: "end_turn" };
    },
  };
});
