"""An ACP v1 client built only on the official Python SDK (`agent-client-protocol`).

    python client.py -- AGENT_COMMAND [ARGS...]

Spawns the agent (in its own process group) and runs the scripted check
sequence described in ../README.md against it: initialize, session/new,
prompts `stream 50`, `permission`, `read`, `write`, `terminal`, `wait` +
session/cancel, then session/load of the session. Finally closes the agent's
stdin and expects it to exit 0.

Prints exactly `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up
after 30 s. The agent's stderr is passed through to ours.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from acp import (
    CreateTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestError,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
    connect_to_agent,
    text_block,
)
from acp.connection import StreamDirection, StreamEvent
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    TerminalExitStatus,
)

DEADLINE_S = 30.0
EXIT_GRACE_S = 5.0
STREAM_COUNT = 50
FILE_CONTENT = "hello from client"
CANCEL_AFTER_S = 0.1


class CheckFailure(Exception):
    pass


def check(condition: Any, message: str) -> None:
    if not condition:
        raise CheckFailure(message)


def show(value: Any) -> str:
    return json.dumps(value, default=str)


def dump(model: Any) -> Any:
    """A received pydantic model as wire-shaped JSON (camelCase keys)."""
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return model


def describe(update: dict[str, Any]) -> str:
    content = update.get("content")
    text = (
        f" {show(content['text'])}"
        if isinstance(content, dict) and content.get("type") == "text"
        else ""
    )
    return f"{update.get('sessionUpdate')}{text}"


def summary(session_id: str, update: dict[str, Any]) -> list[Any]:
    """What must survive the SDK's decoding: session, kind, text, tool call id and status."""
    return [session_id, describe(update), update.get("toolCallId"), update.get("status")]


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    output: str = ""
    truncated: bool = False
    exit_status: TerminalExitStatus | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class InteropClient:
    """The client-side handlers: record what they are asked, answer as a real client would."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.terminals: dict[str, Terminal] = {}
        self._next_terminal = 0

    def take_requests(self) -> list[tuple[str, dict[str, Any]]]:
        taken, self.requests = self.requests, []
        return taken

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, dump(update)))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.requests.append(
            (
                "session/request_permission",
                {
                    "sessionId": session_id,
                    "toolCall": dump(tool_call),
                    "options": [dump(o) for o in options],
                },
            )
        )
        option = next((o for o in options if o.kind == "allow_once"), None) or next(
            (o for o in options if o.option_id == "allow_once"), None
        )
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.requests.append(("fs/read_text_file", {"sessionId": session_id, "path": path}))
        return ReadTextFileResponse(content=FILE_CONTENT)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.requests.append(
            ("fs/write_text_file", {"sessionId": session_id, "path": path, "content": content})
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return WriteTextFileResponse()

    # A minimal real terminal implementation: runs the command, collects output.

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self.requests.append(
            (
                "terminal/create",
                {"sessionId": session_id, "command": command, "args": args, "cwd": cwd},
            )
        )
        child_env = dict(os.environ)
        for var in env or []:
            child_env[var.name] = var.value
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd or self.work_dir,
            env=child_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal = Terminal(process)
        terminal_id = f"term-{self._next_terminal}"
        self._next_terminal += 1
        self.terminals[terminal_id] = terminal

        async def collect() -> None:
            assert process.stdout is not None
            raw = b""
            while chunk := await process.stdout.read(65536):
                raw += chunk
                if output_byte_limit is not None and len(raw) > output_byte_limit:
                    raw = raw[-output_byte_limit:]
                    terminal.truncated = True
                terminal.output = raw.decode("utf-8", errors="ignore")
            code = await process.wait()
            terminal.exit_status = (
                TerminalExitStatus(exit_code=code)
                if code >= 0
                else TerminalExitStatus(signal=signal.Signals(-code).name)
            )
            terminal.done.set()

        asyncio.get_running_loop().create_task(collect())
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, terminal_id: str) -> Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"details": f"unknown terminal {terminal_id}"})
        return terminal

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.requests.append(
            ("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
        )
        terminal = self._terminal(terminal_id)
        return TerminalOutputResponse(
            output=terminal.output, truncated=terminal.truncated, exit_status=terminal.exit_status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.requests.append(
            ("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
        )
        terminal = self._terminal(terminal_id)
        await terminal.done.wait()
        assert terminal.exit_status is not None
        return WaitForTerminalExitResponse(
            exit_code=terminal.exit_status.exit_code, signal=terminal.exit_status.signal
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.requests.append(
            ("terminal/kill", {"sessionId": session_id, "terminalId": terminal_id})
        )
        self._kill(self._terminal(terminal_id))
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.requests.append(
            ("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
        )
        self._kill(self._terminal(terminal_id))
        del self.terminals[terminal_id]
        return ReleaseTerminalResponse()

    @staticmethod
    def _kill(terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            try:
                terminal.process.kill()
            except ProcessLookupError:
                pass

    def kill_all(self) -> None:
        for terminal in self.terminals.values():
            self._kill(terminal)


class Wire:
    """Every message as it came off the agent's stdout, in wire order.

    The SDK reports each incoming message to its stream observers from the
    receive loop, before dispatching it, so this is exact. The ordering checks
    ("all updates before the response") use it; the handler-level view must
    agree with it.
    """

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def observe(self, event: StreamEvent) -> None:
        if event.direction != StreamDirection.INCOMING:
            return
        message = event.message
        if message.get("method") == "session/update" and "id" not in message:
            params = message.get("params") or {}
            self.log.append(("update", (params.get("sessionId"), params.get("update") or {})))
        elif "method" not in message and "id" in message:
            self.log.append(("response", message.get("id")))


async def call(
    client: InteropClient, wire: Wire, label: str, request: Any
) -> tuple[Any, list[dict[str, Any]]]:
    """Awaits a request; returns its result and the session/update notifications
    that preceded its response on the wire (checked to have reached our
    handler too, in the same order). Requests are sent one at a time, so the
    first response on the wire after `start` is this one's."""
    start = len(wire.log)
    handled = len(client.updates)
    response = await request
    end = next((i for i in range(start, len(wire.log)) if wire.log[i][0] == "response"), None)
    check(end is not None, f"{label}: response not found on the wire")
    before = [entry for kind, entry in wire.log[start:end] if kind == "update"]
    for _ in range(1000):  # the SDK may still be running the last handlers
        if len(client.updates) - handled >= len(before):
            break
        await asyncio.sleep(0)
    delivered = client.updates[handled:]
    check(
        [summary(*d) for d in delivered[: len(before)]] == [summary(*b) for b in before],
        f"{label}: the session/update handler got {len(delivered)} updates, "
        f"the wire carried {len(before)} before the response",
    )
    check(
        len(delivered) == len(before),
        f"{label}: {len(delivered) - len(before)} session/update notifications arrived after the response: "
        f"{show([describe(u) for _, u in delivered[len(before) :]])}",
    )
    client.updates.clear()
    return response, before


async def drive(conn: Any, client: InteropClient, wire: Wire, work_dir: str) -> None:
    history: list[dict[str, str]] = []  # what a session/load must replay, built from what we saw

    init = await conn.initialize(
        protocol_version=1,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        ),
        client_info=Implementation(name="interop-py-client", version="0.0.0"),
    )
    check(
        init.protocol_version == 1, f"initialize answered protocolVersion {init.protocol_version!r}"
    )
    check(
        init.agent_capabilities is not None and init.agent_capabilities.load_session is True,
        f"initialize answered agentCapabilities {show(dump(init.agent_capabilities))}; loadSession true is needed",
    )

    new = await conn.new_session(cwd=work_dir, mcp_servers=[])
    session_id = new.session_id
    check(
        isinstance(session_id, str) and session_id, f"session/new answered sessionId {session_id!r}"
    )

    async def prompt(
        text: str,
    ) -> tuple[Any, list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
        history.append({"sessionUpdate": "user_message_chunk", "text": text})
        response, seen = await call(
            client,
            wire,
            f"prompt {text!r}",
            conn.prompt(session_id=session_id, prompt=[text_block(text)]),
        )
        updates = []
        for sid, update in seen:
            check(
                sid == session_id,
                f"prompt {text!r}: update for session {sid!r}, expected {session_id!r}",
            )
            content = update.get("content") or {}
            if (
                update.get("sessionUpdate") == "agent_message_chunk"
                and content.get("type") == "text"
            ):
                history.append({"sessionUpdate": "agent_message_chunk", "text": content["text"]})
            updates.append(update)
        return response, updates, client.take_requests()

    def chunk_texts(seen: list[dict[str, Any]]) -> list[Any]:
        return [
            (u.get("content") or {}).get("text")
            for u in seen
            if u.get("sessionUpdate") == "agent_message_chunk"
        ]

    # 1. Streaming: every update before the prompt's response.
    response, seen, _ = await prompt(f"stream {STREAM_COUNT}")
    check(response.stop_reason == "end_turn", f"stream: stopReason {response.stop_reason!r}")
    got = [
        (u.get("content") or {}).get("text")
        if u.get("sessionUpdate") == "agent_message_chunk"
        else describe(u)
        for u in seen
    ]
    expected = [f"chunk {i}" for i in range(STREAM_COUNT)]
    check(
        got == expected,
        f"stream: before the response saw {len(got)} updates, expected {STREAM_COUNT} chunks in order; "
        f"first: {show(got[:3])}, last: {show(got[-3:])}",
    )

    # 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
    response, seen, reqs = await prompt("permission")
    check(response.stop_reason == "end_turn", f"permission: stopReason {response.stop_reason!r}")
    check(
        [m for m, _ in reqs] == ["session/request_permission"],
        f"permission: expected one session/request_permission, got {show([m for m, _ in reqs])}",
    )
    req = reqs[0][1]
    check(req["sessionId"] == session_id, f"permission: request for session {req['sessionId']!r}")
    allow = next((o for o in req["options"] if o.get("kind") == "allow_once"), None)
    check(
        allow is not None and any(o.get("kind") == "reject_once" for o in req["options"]),
        f"permission: options {show(req['options'])}",
    )
    check(
        len(seen) == 3,
        f"permission: expected tool_call, chunk, tool_call_update; saw {show([describe(u) for u in seen])}",
    )
    tool_call, chunk, tool_call_update = seen
    check(
        tool_call.get("sessionUpdate") == "tool_call"
        and tool_call.get("status", "pending") == "pending"
        and tool_call.get("kind") == "edit"
        and tool_call.get("title") == "Edit file",
        f"permission: first update {show(tool_call)}",
    )
    check(
        req["toolCall"].get("toolCallId") == tool_call.get("toolCallId"),
        f"permission: request is about tool call {req['toolCall'].get('toolCallId')!r}, "
        f"not {tool_call.get('toolCallId')!r}",
    )
    text = (chunk.get("content") or {}).get("text")
    check(
        chunk.get("sessionUpdate") == "agent_message_chunk"
        and text in (f"permission: {allow['optionId']}", "permission: allow_once"),
        f'permission: expected chunk "permission: {allow["optionId"]}", saw {describe(chunk)}',
    )
    check(
        tool_call_update.get("sessionUpdate") == "tool_call_update"
        and tool_call_update.get("toolCallId") == tool_call.get("toolCallId")
        and tool_call_update.get("status") == "completed",
        f"permission: last update {show(tool_call_update)}",
    )

    # 3. fs/read_text_file served by our handler.
    path = os.path.join(work_dir, "a.txt")
    response, seen, reqs = await prompt(f"read {path}")
    check(response.stop_reason == "end_turn", f"read: stopReason {response.stop_reason!r}")
    check(
        reqs == [("fs/read_text_file", {"sessionId": session_id, "path": path})],
        f"read: expected one fs/read_text_file of {path}, got {show(reqs)}",
    )
    check(
        chunk_texts(seen) == [FILE_CONTENT] and len(seen) == 1,
        f"read: expected the one chunk {show(FILE_CONTENT)}, saw {show([describe(u) for u in seen])}",
    )

    # 4. fs/write_text_file.
    path = os.path.join(work_dir, "b.txt")
    response, seen, reqs = await prompt(f"write {path} hi")
    check(response.stop_reason == "end_turn", f"write: stopReason {response.stop_reason!r}")
    check(
        reqs == [("fs/write_text_file", {"sessionId": session_id, "path": path, "content": "hi"})],
        f'write: expected one fs/write_text_file of {path} with "hi", got {show(reqs)}',
    )
    with open(path, encoding="utf-8") as f:
        check(f.read() == "hi", "write: the file does not hold what was written")
    check(
        chunk_texts(seen) == ["wrote"] and len(seen) == 1,
        f'write: expected the one chunk "wrote", saw {show([describe(u) for u in seen])}',
    )

    # 5. terminal/* really run by us.
    response, seen, reqs = await prompt("terminal echo hi")
    check(response.stop_reason == "end_turn", f"terminal: stopReason {response.stop_reason!r}")
    calls = [m for m, _ in reqs]
    check(
        calls
        == ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"],
        f"terminal: expected create, wait_for_exit, output, release; got {show(calls)}",
    )
    create = reqs[0][1]
    check(
        create["command"] == "sh" and create["args"] == ["-c", "echo hi"],
        f"terminal: created {show({'command': create['command'], 'args': create['args']})}",
    )
    ids = {p["terminalId"] for _, p in reqs[1:]}
    check(len(ids) == 1, f"terminal: requests named terminals {show(sorted(ids))}")
    check(
        chunk_texts(seen) == ["hi\n"] and len(seen) == 1,
        f'terminal: expected the one chunk "hi\\n", saw {show([describe(u) for u in seen])}',
    )

    # 6. session/cancel during a prompt turn.
    pending = asyncio.ensure_future(prompt("wait"))
    await asyncio.sleep(CANCEL_AFTER_S)
    check(not pending.done(), "wait: the prompt was answered before session/cancel was sent")
    await conn.cancel(session_id=session_id)
    response, _, _ = await pending
    check(
        response.stop_reason == "cancelled",
        f"wait: after session/cancel, stopReason {response.stop_reason!r}",
    )

    # 7. session/load replays the history before answering.
    _, seen_load = await call(
        client,
        wire,
        "session/load",
        conn.load_session(cwd=work_dir, session_id=session_id, mcp_servers=[]),
    )
    check(
        all(sid == session_id for sid, _ in seen_load), "load: replayed updates for another session"
    )
    got_history = [
        {"sessionUpdate": u.get("sessionUpdate"), "text": (u.get("content") or {}).get("text")}
        for _, u in seen_load
    ]
    if got_history != history:
        at = next(
            (
                i
                for i in range(max(len(got_history), len(history)))
                if i >= len(got_history) or i >= len(history) or got_history[i] != history[i]
            ),
            0,
        )
        raise CheckFailure(
            f"load: before the response saw {len(got_history)} replayed updates, expected {len(history)}; "
            f"first difference at {at}: got {show(got_history[at] if at < len(got_history) else None)}, "
            f"expected {show(history[at] if at < len(history) else None)}"
        )


async def run(argv: list[str], work_dir: str, state: dict[str, Any]) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # pass the agent's stderr through
            start_new_session=True,  # own process group, so a wrapper and its children die together
            limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES,
        )
    except OSError as e:
        raise CheckFailure(f"cannot start agent {argv[0]!r}: {e}") from None
    state["process"] = process
    assert process.stdin is not None and process.stdout is not None

    client = InteropClient(work_dir)
    state["client"] = client
    wire = Wire()
    conn = connect_to_agent(client, process.stdin, process.stdout, observers=[wire.observe])

    sequence = asyncio.ensure_future(drive(conn, client, wire, work_dir))
    exited = asyncio.ensure_future(process.wait())
    finished, _ = await asyncio.wait({sequence, exited}, return_when=asyncio.FIRST_COMPLETED)
    if sequence not in finished:
        sequence.cancel()
        raise CheckFailure(f"agent exited early (code {process.returncode})")
    try:
        sequence.result()
    except (CheckFailure, RequestError):
        raise
    except Exception as e:
        # Say so when the agent died: "connection closed" alone does not tell.
        try:
            code = await asyncio.wait_for(asyncio.shield(exited), 0.2)
        except asyncio.TimeoutError:
            raise e from None
        raise CheckFailure(f"{e or type(e).__name__} (agent exited: code {code})") from None

    # The agent must exit 0 once its stdin is closed.
    process.stdin.close()
    try:
        code = await asyncio.wait_for(exited, EXIT_GRACE_S)
    except asyncio.TimeoutError:
        raise CheckFailure(
            f"agent still running {EXIT_GRACE_S:g} s after its stdin was closed"
        ) from None
    finally:
        await conn.close()
    check(code == 0, f"agent exited with code {code} after its stdin was closed")


def kill_group(process: asyncio.subprocess.Process | None) -> None:
    if process is not None and process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("FAIL: usage: python client.py -- AGENT_COMMAND [ARGS...]", flush=True)
        return 1

    work_dir = os.path.realpath(tempfile.mkdtemp(prefix="acp-interop-py-"))
    state: dict[str, Any] = {}
    failure: str | None = None
    try:
        await asyncio.wait_for(run(argv, work_dir, state), DEADLINE_S)
    except asyncio.TimeoutError:
        failure = f"no result within {DEADLINE_S:g} s"
    except RequestError as e:
        failure = f"agent answered error {e.code} {str(e)!r}" + (
            f" data {show(e.data)}" if e.data is not None else ""
        )
    except Exception as e:  # noqa: BLE001 - any failure is reported, not raised
        failure = str(e) or type(e).__name__
    finally:
        kill_group(state.get("process"))
        if "client" in state:
            state["client"].kill_all()
        shutil.rmtree(work_dir, ignore_errors=True)

    if failure is None:
        print("OK", flush=True)
        return 0
    print("FAIL: " + " ".join(failure.split()), flush=True)
    return 1


if __name__ == "__main__":
    # The SDK logs handler errors with `logging`; keep them on stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    sys.exit(asyncio.run(main()))
