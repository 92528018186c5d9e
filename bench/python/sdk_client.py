"""The bench client on the official Python SDK (agent-client-protocol 0.12.1):
python sdk_client.py WORKLOAD [ARGS] -- AGENT_COMMAND...

Spawns the agent itself (the SDK's spawn_agent_process trims the
environment and never reads the agent's stderr) and uses connect_to_agent.
After a `stream` prompt it yields until the turn's updates were handled
(the SDK can resolve the response first)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Optional

from acp import RequestError, connect_to_agent, embedded_text_resource, resource_block, text_block
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse, WriteTextFileResponse

import common

IMPL = "python-sdk"


class BenchClient:
    def __init__(self, tracker: common.Tracker) -> None:
        self.tracker = tracker

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.tracker.chunk(session_id, update.content.text)

    async def read_text_file(self, session_id: str, path: str, line: Any = None, limit: Any = None, **kwargs: Any) -> ReadTextFileResponse:
        try:
            return ReadTextFileResponse(content=self.tracker.read(path))
        except ValueError as e:
            raise RequestError.invalid_params({"details": str(e)}) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        try:
            self.tracker.write(path, content)
        except ValueError as e:
            raise RequestError.invalid_params({"details": str(e)}) from None
        return WriteTextFileResponse()


async def run(workload: str, args: list[int], agent: list[str]) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        *agent, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None,
        limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES,
    )
    assert process.stdin is not None and process.stdout is not None
    tracker = common.Tracker()
    conn = connect_to_agent(BenchClient(tracker), process.stdin, process.stdout)
    try:
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)),
        )

        async def new_session() -> str:
            return (await conn.new_session(cwd=common.SESSION_CWD, mcp_servers=[])).session_id

        async def prompt(session: str, text: str, resource: Optional[str]) -> str:
            blocks: list[Any] = [text_block(text)]
            if resource is not None:
                blocks.append(resource_block(embedded_text_resource(common.RESOURCE_URI, resource)))
            done = await conn.prompt(session_id=session, prompt=blocks)
            # SDK quirk (tests/interop/README.md): each notification is
            # handled in a task of its own and a response resolves its
            # future at once, so the prompt can return before the turn's
            # last session/update handlers ran (seen in CI: 0 of 50). Yield
            # to the loop (bounded) until the chunks are counted, as the
            # TypeScript SDK's bench client does.
            command = common.parse_command(text)
            if command is not None and command[0] == "stream":
                for _ in range(100_000):
                    if tracker.chunks.get(session, 0) >= command[1]:
                        break
                    await asyncio.sleep(0)
            return done.stop_reason

        return await common.drive(workload, args, tracker, new_session, prompt)
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            process.kill()
        await conn.close()


if __name__ == "__main__":
    sys.exit(common.main(IMPL, run))
