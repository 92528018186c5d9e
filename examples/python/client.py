"""An ACP client on libacp: spawns the agent command given as arguments,
prints what it streams, allows every permission, prints the stop reason.
Usage: `python examples/python/client.py AGENT_COMMAND...`.
"""

import asyncio
import os
import sys
import libacp


class Printer:
    async def on_notification(self, method, params):
        update = params["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            print(update["content"].get("text", ""), end="", flush=True)
        else:
            print(f"\n[{update['sessionUpdate']}]", flush=True)

    async def on_request(self, method, params, request):
        if method == "session/request_permission":
            print(f"\n[permission for {params['toolCall']['toolCallId']}: allowing]")
            return {"outcome": {"outcome": "selected",
                                "optionId": params["options"][0]["optionId"]}}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


async def main(argv):
    async with libacp.Connection.spawn_agent(argv, Printer()) as conn:
        await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = await conn.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        done = await conn.request("session/prompt", {
            "sessionId": session["sessionId"],
            "prompt": [{"type": "text", "text": "hello"}]})
        print(f"\n=> {done['stopReason']}")

asyncio.run(main(sys.argv[1:]))
