"""A complete ACP agent on libacp: streams a reply, reports a tool call,
asks for permission and ends the turn (early, if the client cancels it).
Run it under any ACP client, e.g.
`python examples/python/client.py python examples/python/agent.py` or
`./target/debug/demo-client --yes -- python examples/python/agent.py`.
"""

import asyncio
import itertools

import libacp
from libacp import helpers as h
from libacp import schema as acp


class EchoAgent(libacp.Agent):
    sessions = itertools.count(1)
    tool_calls = itertools.count(1)

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "agentInfo": {"name": "libacp-python-echo", "version": libacp.__version__},
        }

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return {"sessionId": f"s{next(self.sessions)}"}

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        sid = params["sessionId"]
        request = libacp.current_request()  # .cancelled: the client sent session/cancel

        async def update(u: acp.SessionUpdate) -> None:
            await self.client.session_update(h.session_notification(sid, u))

        text = " ".join(b["text"] for b in params["prompt"] if b["type"] == "text")
        for word in f"You said: {text or '(no text)'}".split():
            await asyncio.sleep(0.02)  # a model thinking
            if request.cancelled:
                return {"stopReason": "cancelled"}
            await update(h.update_agent_message_text(word + " "))
        tool = f"t{next(self.tool_calls)}"
        await update(h.start_tool_call(tool, "Touch nothing", kind="edit", status="pending"))
        answer = await self.client.request_permission(
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": tool},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            }
        )
        outcome = answer["outcome"]
        if outcome["outcome"] == "cancelled":
            return {"stopReason": "cancelled"}
        ok = outcome["outcome"] == "selected" and outcome["optionId"] == "yes"
        await update(h.update_tool_call(tool, status="completed" if ok else "failed"))
        return {"stopReason": "end_turn"}


if __name__ == "__main__":
    asyncio.run(libacp.run_agent(EchoAgent()))
