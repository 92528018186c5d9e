"""The bench agent on the official Python SDK (agent-client-protocol 0.12.1),
on stdin/stdout via run_agent."""

from __future__ import annotations

import asyncio
from typing import Any

from acp import Client, InitializeResponse, NewSessionResponse, PromptResponse, RequestError, run_agent
from acp.schema import AgentCapabilities, AgentMessageChunk, PromptCapabilities, TextContentBlock

import common


class BenchAgent:
    def __init__(self) -> None:
        self._conn: Client | None = None
        self.sessions = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(prompt_capabilities=PromptCapabilities(embedded_context=True)),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self.sessions += 1
        return NewSessionResponse(session_id=f"py-sdk-{self.sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self._conn is not None
        conn = self._conn
        text = next((b.text for b in prompt if getattr(b, "type", None) == "text"), "")
        command = common.parse_command(text)
        if command is None:
            raise RequestError.invalid_params({"prompt": text, "details": "unknown bench command"})
        kind, n = command
        if kind == "stream":
            for i in range(n):
                await conn.session_update(
                    session_id=session_id,
                    update=AgentMessageChunk(session_update="agent_message_chunk",
                                             content=TextContentBlock(type="text", text=common.chunk_text(i))),
                )
        elif kind == "read":
            for i in range(n):
                file = await conn.read_text_file(session_id=session_id, path=common.read_path(i))
                if len(file.content) != common.READ_LEN:
                    raise RequestError.internal_error({"details": f"read {i}: {len(file.content)} bytes"})
        elif kind == "write":
            await conn.write_text_file(session_id=session_id, path=common.WRITE_PATH, content=common.text_of(n))
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent()))
