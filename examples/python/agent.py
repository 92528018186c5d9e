"""A complete ACP agent on libacp: streams a reply, reports a tool call,
asks for permission and ends the turn. Run it under any ACP client, e.g.
`python examples/python/client.py python examples/python/agent.py` or
`./target/debug/demo-client --yes -- python examples/python/agent.py`.
"""

import asyncio
import libacp


class EchoAgent:
    async def on_request(self, method, params, request):
        if method == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {}}
        if method == "session/new":
            return {"sessionId": "s1"}
        if method == "session/prompt":
            conn, sid = request.connection, params["sessionId"]
            text = " ".join(b.get("text", "") for b in params["prompt"])

            async def update(u):
                await conn.notify("session/update", {"sessionId": sid, "update": u})

            for word in f"You said: {text}".split():
                await update({"sessionUpdate": "agent_message_chunk",
                              "content": {"type": "text", "text": word + " "}})
            await update({"sessionUpdate": "tool_call", "toolCallId": "t1",
                          "title": "Touch nothing", "kind": "edit", "status": "pending"})
            answer = await conn.request("session/request_permission", {
                "sessionId": sid, "toolCall": {"toolCallId": "t1"},
                "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                            {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
            ok = answer["outcome"].get("optionId") == "yes"
            await update({"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                          "status": "completed" if ok else "failed"})
            return {"stopReason": "cancelled" if request.cancelled else "end_turn"}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


async def main():
    conn = libacp.Connection.from_stdio(EchoAgent())
    await conn.closed()
    await conn.terminated()

asyncio.run(main())
