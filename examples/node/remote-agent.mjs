// A remote ACP agent on libacp: one endpoint serving WebSocket and
// Streamable HTTP, an agent per remote connection (made on the JavaScript
// thread). Each turn streams a reply, asks for permission and ends. It
// prints its two URLs; SIGINT or SIGTERM shuts it down gracefully (a
// running turn finishes first).
//
//   node examples/node/remote-agent.mjs [PORT]   (default: a free port)
//
// With ACP_TOKEN set, clients must send `Authorization: Bearer $ACP_TOKEN`.
import { serve } from "libacp";

const server = await serve(
  `127.0.0.1:${process.argv[2] ?? 0}`,
  (client, { kind, remoteAddr }) => {
    console.error(`[${kind} connection from ${remoteAddr}]`);
    return {
      initialize: () => ({
        protocolVersion: 1,
        agentCapabilities: {},
        agentInfo: { name: "libacp-node-remote", version: "0.1.0" },
      }),
      newSession: () => ({ sessionId: "s1" }),

      async prompt({ sessionId, prompt }) {
        const text = prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ");
        await client.sessionUpdate({
          sessionId,
          update: {
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: `You said: ${text}` },
          },
        });
        const { outcome } = await client.requestPermission({
          sessionId,
          toolCall: { toolCallId: "t1", title: "Touch nothing" },
          options: [
            { optionId: "yes", name: "Allow", kind: "allow_once" },
            { optionId: "no", name: "Reject", kind: "reject_once" },
          ],
        });
        if (outcome.outcome === "cancelled") return { stopReason: "cancelled" };
        return { stopReason: "end_turn" };
      },
    };
  },
  { bearerTokens: process.env.ACP_TOKEN ? [process.env.ACP_TOKEN] : undefined },
);

console.log(server.url("websocket"));
console.log(server.url("http"));

for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => {
    server.shutdown().then(() => console.log("shut down"));
  });
}
