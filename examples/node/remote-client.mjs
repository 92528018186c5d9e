// A client of a remote ACP agent on libacp: connects by URL (ws:// or
// wss:// for WebSocket, http:// or https:// for Streamable HTTP), runs one
// turn, answers the agent's permission request, and disconnects.
//
//   node examples/node/remote-client.mjs URL
//
// With ACP_TOKEN set, it sends `Authorization: Bearer $ACP_TOKEN`.
import { ClientConnection, RemoteError } from "libacp";

const url = process.argv[2] ?? "ws://127.0.0.1:8080/acp";
const token = process.env.ACP_TOKEN;

/** @type {ClientConnection} */
let agent;
try {
  agent = await ClientConnection.connect(
    url,
    {
      sessionUpdate({ update }) {
        if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
          process.stdout.write(update.content.text);
        }
      },
      requestPermission({ toolCall, options }) {
        console.log(`\n[permission: ${toolCall.title ?? toolCall.toolCallId}]`);
        const allow = options.find((o) => o.kind === "allow_once") ?? options[0];
        if (allow === undefined) return { outcome: { outcome: "cancelled" } };
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      },
    },
    { headers: token ? { Authorization: `Bearer ${token}` } : {} },
  );
} catch (e) {
  // `kind`: refused, dns, timeout, tls, unauthorized, not_found, ...
  if (e instanceof RemoteError) {
    console.error(`cannot connect to ${url}: ${e.kind} ${e.status ?? ""} ${e.message}`);
    process.exit(2);
  }
  throw e;
}

try {
  await agent.initialize({ protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await agent.newSession({ cwd: process.cwd(), mcpServers: [] });
  const { stopReason } = await agent.prompt({
    sessionId,
    prompt: [{ type: "text", text: "hello over the network" }],
  });
  console.log(`[turn ended: ${stopReason}]`);
} finally {
  await agent.close();
}
