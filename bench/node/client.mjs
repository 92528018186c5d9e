// The bench client on libacp's Node binding (typed API):
//   node client.mjs WORKLOAD [ARGS] -- AGENT_COMMAND...
// The workload driver, the checks and the result line are bench/ts/common.mjs's.
// `await prompt()` resolves after every session/update of the turn was
// handled (the core's ordering), so `settle` has nothing to wait for.
import { ClientConnection, ErrorCode, RequestError } from "libacp";

import { drive, emit, fail, invocation, RESOURCE_URI, SESSION_CWD, Tracker } from "../ts/common.mjs";

const IMPL = "libacp-node";

async function main() {
  const { workload, args, agent } = invocation(process.argv.slice(2));
  const tracker = new Tracker();
  /** Runs a tracker check; its failure answers the agent with -32602. */
  const checked = (f) => {
    try {
      return f();
    } catch (e) {
      throw new RequestError(ErrorCode.INVALID_PARAMS, String(e));
    }
  };
  const conn = ClientConnection.spawn(agent[0], agent.slice(1), {
    sessionUpdate({ sessionId, update }) {
      if (update.sessionUpdate === "agent_message_chunk") tracker.chunk(sessionId, update.content.text);
    },
    readTextFile: ({ path }) => checked(() => ({ content: tracker.read(path) })),
    writeTextFile: ({ path, content }) => checked(() => (tracker.write(path, content), {})),
  });
  await conn.initialize({
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const peer = {
    newSession: async () => (await conn.newSession({ cwd: SESSION_CWD, mcpServers: [] })).sessionId,
    prompt: async (sessionId, text, resource) => {
      const prompt = [{ type: "text", text }];
      if (resource !== null) prompt.push({ type: "resource", resource: { uri: RESOURCE_URI, text: resource } });
      return (await conn.prompt({ sessionId, prompt })).stopReason;
    },
    settle: async () => {},
  };
  const result = await drive(workload, args, tracker, peer);
  await conn.close();
  await conn.terminated();
  emit(IMPL, workload, result);
}

main().catch((e) => {
  fail(IMPL, process.argv[2] ?? "?", e?.stack ?? e);
  process.exit(1);
});
