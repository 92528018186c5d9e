"""A complete ACP agent on libacp: streams a reply, reports a tool call,
asks for permission and ends the turn. Run it under any ACP client, e.g.
`python examples/python/client.py python examples/python/agent.py` or
`./target/debug/demo-client --yes -- python examples/python/agent.py`.
"""

import asyncio
import itertools

import libacp
from libacp import schema as acp


class EchoAgent(libacp.Agent):
    sessions = itertools.count(1)

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return {"protocolVersion": 1, "agentCapabilities": {}}

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return {"sessionId": f"s{next(self.sessions)}"}

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        sid = params["sessionId"]

        async def update(u: acp.SessionUpdate) -> None:
            await self.client.session_update({"sessionId": sid, "update": u})

        text = " ".join(b["text"] for b in params["prompt"] if b["type"] == "text")
        for word in f"You said: {text}".split():
            await update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": word + " "},
                }
            )
        await update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Touch nothing",
                "kind": "edit",
                "status": "pending",
            }
        )
        answer = await self.client.request_permission(
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": "t1"},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            }
        )
        outcome = answer["outcome"]
        ok = outcome["outcome"] == "selected" and outcome["optionId"] == "yes"
        await update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed" if ok else "failed",
            }
        )
        return {"stopReason": "end_turn"}


if __name__ == "__main__":
    asyncio.run(libacp.run_agent(EchoAgent()))
