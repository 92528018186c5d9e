"""The bench client on libacp's Python binding (dynamic API):
python libacp_client.py WORKLOAD [ARGS] -- AGENT_COMMAND..."""

from __future__ import annotations

import sys
from typing import Any, Optional

import libacp

import common

IMPL = "libacp-python"


class Handler:
    def __init__(self, tracker: common.Tracker) -> None:
        self.tracker = tracker

    def on_notification(self, method: str, params: Any) -> None:
        if method == "session/update":
            update = params["update"]
            if update.get("sessionUpdate") == "agent_message_chunk":
                self.tracker.chunk(params["sessionId"], update["content"]["text"])

    def on_request(self, method: str, params: Any, request: Any) -> Any:
        try:
            if method == "fs/read_text_file":
                return {"content": self.tracker.read(params["path"])}
            if method == "fs/write_text_file":
                self.tracker.write(params["path"], params["content"])
                return {}
        except ValueError as e:
            raise libacp.RequestError(-32602, str(e)) from None
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


async def run(workload: str, args: list[int], agent: list[str]) -> dict[str, Any]:
    tracker = common.Tracker()
    async with libacp.Connection.spawn_agent(agent, Handler(tracker), stderr=lambda line: print(line, file=sys.stderr)) as conn:
        await conn.request("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
        })

        async def new_session() -> str:
            return (await conn.request("session/new", {"cwd": common.SESSION_CWD, "mcpServers": []}))["sessionId"]

        async def prompt(session: str, text: str, resource: Optional[str]) -> str:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if resource is not None:
                blocks.append({"type": "resource", "resource": {"uri": common.RESOURCE_URI, "text": resource}})
            done = await conn.request("session/prompt", {"sessionId": session, "prompt": blocks})
            return done["stopReason"]

        return await common.drive(workload, args, tracker, new_session, prompt)


if __name__ == "__main__":
    sys.exit(common.main(IMPL, run))
