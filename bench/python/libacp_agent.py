"""The bench agent on libacp's Python binding (dynamic API), on stdin/stdout."""

from __future__ import annotations

import asyncio
from typing import Any

import libacp

import common


class BenchAgent:
    def __init__(self) -> None:
        self.sessions = 0

    async def on_request(self, method: str, params: Any, request: Any) -> Any:
        if method == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"embeddedContext": True}},
                    "authMethods": []}
        if method == "session/new":
            self.sessions += 1
            return {"sessionId": f"libacp-py-{self.sessions}"}
        if method == "session/prompt":
            conn, sid = request.connection, params["sessionId"]
            text = next((b["text"] for b in params["prompt"] if b.get("type") == "text"), "")
            command = common.parse_command(text)
            if command is None:
                raise libacp.RequestError(-32602, "unknown bench command", {"prompt": text})
            kind, n = command
            if kind == "stream":
                for i in range(n):
                    await conn.notify("session/update", {"sessionId": sid, "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": common.chunk_text(i)}}})
            elif kind == "read":
                for i in range(n):
                    file = await conn.request("fs/read_text_file", {"sessionId": sid, "path": common.read_path(i)})
                    if len(file["content"]) != common.READ_LEN:
                        raise libacp.RequestError(-32603, f"read {i}: {len(file['content'])} bytes")
            elif kind == "write":
                await conn.request("fs/write_text_file",
                                   {"sessionId": sid, "path": common.WRITE_PATH, "content": common.text_of(n)})
            return {"stopReason": "end_turn"}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


async def main() -> None:
    conn = libacp.Connection.from_stdio(BenchAgent())
    await conn.closed()
    await conn.terminated()


if __name__ == "__main__":
    asyncio.run(main())
