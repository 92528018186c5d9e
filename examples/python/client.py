"""An ACP client on libacp: spawns the agent command given as arguments,
prints what it streams, allows every permission, prints the stop reason.
Usage: `python examples/python/client.py AGENT_COMMAND...`.
"""

import asyncio
import os
import sys
from typing import List

import libacp
from libacp import schema as acp


class Printer(libacp.Client):
    async def session_update(self, params: acp.SessionNotification) -> None:
        update = params["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            content = update["content"]
            print(
                content["text"] if content["type"] == "text" else f"[{content['type']}]",
                end="",
                flush=True,
            )
        else:
            print(f"\n[{update['sessionUpdate']}]", flush=True)

    async def request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        print(f"\n[permission for {params['toolCall']['toolCallId']}: allowing]")
        return {"outcome": {"outcome": "selected", "optionId": params["options"][0]["optionId"]}}


async def main(argv: List[str]) -> None:
    async with libacp.ClientConnection.spawn(argv, Printer()) as agent:
        await agent.initialize({"protocolVersion": 1, "clientCapabilities": {}})
        session = await agent.new_session({"cwd": os.getcwd(), "mcpServers": []})
        done = await agent.prompt(
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hello"}]}
        )
        print(f"\n=> {done['stopReason']}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
