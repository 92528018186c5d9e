// A complete ACP agent on libacp: streams a reply, reports a tool call, asks
// for permission and ends the turn (early, if the client cancels it). Run it
// under any ACP client, e.g. `node examples/node/electron-client.cjs`.
import { setTimeout as sleep } from "node:timers/promises";
import { runAgent } from "libacp";

await runAgent((client) => {
  let sessions = 0;
  return {
    initialize: () => ({ protocolVersion: 1, agentCapabilities: {} }),
    newSession: () => ({ sessionId: `s${++sessions}` }),

    async prompt({ sessionId, prompt }, { signal }) {
      /** @param {import("libacp").schema.SessionUpdate} update */
      const send = (update) => client.sessionUpdate({ sessionId, update });
      const text = prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ");
      for (const word of `You said: ${text}`.split(" ")) {
        await sleep(20); // a model thinking
        if (signal.aborted) return { stopReason: "cancelled" };
        await send({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `${word} ` },
        });
      }
      await send({
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "Touch nothing",
        kind: "edit",
        status: "pending",
      });
      const { outcome } = await client.requestPermission({
        sessionId,
        toolCall: { toolCallId: "t1" },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      const ok = outcome.outcome === "selected" && outcome.optionId === "yes";
      await send({
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: ok ? "completed" : "failed",
      });
      return { stopReason: "end_turn" };
    },
  };
});
