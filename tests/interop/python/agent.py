"""An ACP v1 agent built only on the official Python SDK (`agent-client-protocol`),
serving on its stdin/stdout. libacp's clients (and client.py / client.mjs here)
drive it. The prompt commands it understands are listed in ../README.md.

It exits 0 once its stdin closes. Diagnostics go to stderr only: stdout carries
nothing but ACP messages.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from acp import (
    Client,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    update_agent_message_text,
    update_user_message_text,
)
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    Implementation,
    PermissionOption,
    PromptCapabilities,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)


def log(message: str) -> None:
    print(f"py-agent: {message}", file=sys.stderr, flush=True)


def session_not_found(session_id: str) -> RequestError:
    # The Python SDK's RequestError.resource_not_found() takes a URI; ACP asks
    # for data.sessionId on an unknown session, as the TypeScript SDK sends.
    return RequestError(-32002, "Resource not found", {"sessionId": session_id})


@dataclass
class Session:
    cwd: str
    history: list[UserMessageChunk | AgentMessageChunk] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


class InteropAgent:
    def __init__(self) -> None:
        self._conn: Client | None = None
        self._sessions: dict[str, Session] = {}
        self._tool_calls = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> Client:
        assert self._conn is not None
        return self._conn

    def _session(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise session_not_found(session_id)
        return session

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if protocol_version != 1:
            log(f"client asked for protocol version {protocol_version}; answering 1")
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
            ),
            auth_methods=[],
            agent_info=Implementation(name="interop-py-agent", version="0.0.0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = f"py-{uuid.uuid4()}"
        self._sessions[session_id] = Session(cwd=cwd)
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        session = self._session(session_id)
        session.cwd = cwd
        # Replay the whole history before answering: the SDK writes messages in
        # the order they are sent, so every update precedes the response.
        for update in list(session.history):
            await self.conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            log(f"session/cancel for unknown session {session_id}")
            return
        session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        session.cancelled.clear()
        text = next((block.text for block in prompt if getattr(block, "type", None) == "text"), "")
        session.history.append(update_user_message_text(text))

        async def say(message: str) -> None:
            chunk = update_agent_message_text(message)
            session.history.append(chunk)
            await self.conn.session_update(session_id=session_id, update=chunk)

        def done() -> PromptResponse:
            return PromptResponse(
                stop_reason="cancelled" if session.cancelled.is_set() else "end_turn"
            )

        stripped = text.strip()
        command, _, arg_text = stripped.partition(" ")
        arg_text = arg_text.strip()

        if command == "stream":
            try:
                n = int(arg_text)
            except ValueError:
                raise RequestError.invalid_params(
                    {"prompt": text, "details": "stream needs a count"}
                ) from None
            for i in range(n):
                await say(f"chunk {i}")
            return done()

        if command == "permission":
            self._tool_calls += 1
            tool_call_id = f"call-{self._tool_calls}"
            await self.conn.session_update(
                session_id=session_id,
                update=ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=tool_call_id,
                    title="Edit file",
                    kind="edit",
                    status="pending",
                ),
            )
            response = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=tool_call_id, title="Edit file", kind="edit", status="pending"
                ),
                options=[
                    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
                    PermissionOption(
                        option_id="reject_once", name="Reject once", kind="reject_once"
                    ),
                ],
            )
            outcome = response.outcome
            label = outcome.option_id if outcome.outcome == "selected" else outcome.outcome
            await say(f"permission: {label}")
            allowed = outcome.outcome == "selected" and outcome.option_id.startswith("allow")
            await self.conn.session_update(
                session_id=session_id,
                update=ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=tool_call_id,
                    status="completed" if allowed else "failed",
                ),
            )
            if outcome.outcome == "cancelled":
                return PromptResponse(stop_reason="cancelled")
            return done()

        if command == "read":
            file = await self.conn.read_text_file(session_id=session_id, path=arg_text)
            await say(file.content)
            return done()

        if command == "write":
            path, _, content = arg_text.partition(" ")
            await self.conn.write_text_file(
                session_id=session_id, path=path, content=content.lstrip()
            )
            await say("wrote")
            return done()

        if command == "terminal":
            terminal = await self.conn.create_terminal(
                session_id=session_id, command="sh", args=["-c", arg_text], cwd=session.cwd
            )
            try:
                await self.conn.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=terminal.terminal_id
                )
                output = await self.conn.terminal_output(
                    session_id=session_id, terminal_id=terminal.terminal_id
                )
                await say(output.output)
            finally:
                await self.conn.release_terminal(
                    session_id=session_id, terminal_id=terminal.terminal_id
                )
            return done()

        if command == "wait":
            await session.cancelled.wait()
            return PromptResponse(stop_reason="cancelled")

        raise RequestError.invalid_params(
            {"prompt": text, "details": f"unknown prompt command {command!r}"}
        )


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _copy(source: int, target: int) -> None:
    with open(source, "rb", buffering=0) as src, open(target, "wb", buffering=0) as dst:
        while data := src.read(65536):
            dst.write(data)


def ensure_pollable_stdio() -> threading.Thread | None:
    """Make fds 0 and 1 things asyncio can watch.

    The SDK wires stdio with `loop.connect_read_pipe` / `connect_write_pipe`.
    When stdin is /dev/null or a regular file, epoll refuses it: the error is
    only logged and the agent then waits forever instead of seeing end of
    input. When stdout is a regular file, startup fails with "Pipe transport is
    only for pipes, sockets and character devices". In those cases, relay the
    descriptor through a pipe from a thread. Returns the stdout relay, to be
    joined after closing fd 1 so that no output is lost.
    """
    if not _pollable(0):
        source = os.dup(0)
        read_end, write_end = os.pipe()
        os.dup2(read_end, 0)
        os.close(read_end)
        threading.Thread(
            target=_copy, args=(source, write_end), name="stdin-relay", daemon=True
        ).start()
    if not _pollable(1):
        target = os.dup(1)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.close(write_end)
        relay = threading.Thread(
            target=_copy, args=(read_end, target), name="stdout-relay", daemon=True
        )
        relay.start()
        return relay
    return None


async def main() -> None:
    await run_agent(InteropAgent())


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    stdout_relay = ensure_pollable_stdio()
    try:
        asyncio.run(main())
    finally:
        if stdout_relay is not None:
            sys.stdout.flush()
            os.close(1)
            stdout_relay.join(timeout=5)
    sys.exit(0)
