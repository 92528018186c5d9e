// A complete ACP agent on libacp: says who it is (agentInfo), streams a reply,
// reports a tool call, asks for permission and ends the turn (early, if the
// client cancels it). Run it under any ACP client, e.g.
// `node examples/node/electron-client.cjs`.
import { setTimeout as sleep } from "node:timers/promises";
import { runAgent } from "libacp";

await runAgent((client) => {
  let sessions = 0;
  let toolCalls = 0;
  return {
    initialize: () => ({
      protocolVersion: 1,
      agentCapabilities: {},
      agentInfo: { name: "libacp-node-echo", version: "0.1.0" },
    }),
    newSession: () => ({ sessionId: `s${++sessions}` }),

    async prompt({ sessionId, prompt }, { signal }) {
      /** @param {import("libacp").schema.SessionUpdate} update */
      const send = (update) => client.sessionUpdate({ sessionId, update });
      const text = prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ");
      for (const word of `You said: ${text || "(no text)"}`.split(" ")) {
        await sleep(20); // a model thinking
        if (signal.aborted) return { stopReason: "cancelled" };
        await send({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `${word} ` },
        });
      }
      const toolCallId = `t${++toolCalls}`;
      await send({
        sessionUpdate: "tool_call",
        toolCallId,
        title: "Touch nothing",
        kind: "edit",
        status: "pending",
      });
      const { outcome } = await client.requestPermission({
        sessionId,
        toolCall: { toolCallId },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      if (outcome.outcome === "cancelled") return { stopReason: "cancelled" };
      const ok = outcome.outcome === "selected" && outcome.optionId === "yes";
      await send({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: ok ? "completed" : "failed",
      });
      return { stopReason: "end_turn" };
    },
  };
});
