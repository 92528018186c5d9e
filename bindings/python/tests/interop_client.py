"""An ACP client on libacp's Python binding (dynamic API) that runs the
check sequence of tests/interop/README.md ("Client: the scripted check
sequence", as tests/interop/python/client.py and the Rust
libacp-interop-client do) against any agent:

    python interop_client.py -- AGENT_COMMAND [ARGS...]

initialize (fs and terminal advertised), session/new, prompts `stream 50`
(the 50 chunks in order, all handled before the prompt returns),
`permission` (answered by this client: allow_once), `read TMP/a.txt` and
`write TMP/b.txt hi` (fs/* answered by this client's handler, the write
really done), `terminal echo hi` (terminal/* run by this client: create,
wait_for_exit, output, release), `wait` + `cancel_session` (stopReason
cancelled), session/load of the session (the whole history replayed before
the load returns), then close (stdin closed, the agent must be gone within
5 s).

Prints exactly one line, `OK` (exit 0) or `FAIL: <reason>` (exit 1). Gives
up after 30 s. The agent's stderr is passed through to ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import libacp

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


def describe(update: Dict[str, Any]) -> str:
    content = update.get("content")
    text = (
        f" {show(content['text'])}"
        if isinstance(content, dict) and content.get("type") == "text"
        else ""
    )
    return f"{update.get('sessionUpdate')}{text}"


class Terminal:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.output = b""
        self.truncated = False
        self.exit_status: Optional[Dict[str, Any]] = None
        self.done = asyncio.Event()


class InteropClient:
    """The client's handlers: record what they are asked, answer as a real
    client would."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.updates: List[Tuple[str, Dict[str, Any]]] = []
        self.requests: List[Tuple[str, Dict[str, Any]]] = []
        self.terminals: Dict[str, Terminal] = {}
        self.next_terminal = 0

    def take_requests(self) -> List[Tuple[str, Dict[str, Any]]]:
        taken, self.requests = self.requests, []
        return taken

    def take_updates(self) -> List[Tuple[str, Dict[str, Any]]]:
        taken, self.updates = self.updates, []
        return taken

    async def on_notification(self, method: str, params: Any) -> None:
        if method == "session/update":
            self.updates.append((params.get("sessionId"), params.get("update") or {}))

    async def on_request(self, method: str, params: Any, request: Any) -> Any:
        if method == "session/request_permission":
            self.requests.append((method, params))
            option = next((o for o in params["options"] if o.get("kind") == "allow_once"), None)
            if option is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        if method == "fs/read_text_file":
            self.requests.append(
                (method, {"sessionId": params["sessionId"], "path": params["path"]})
            )
            return {"content": FILE_CONTENT}
        if method == "fs/write_text_file":
            self.requests.append(
                (
                    method,
                    {
                        "sessionId": params["sessionId"],
                        "path": params["path"],
                        "content": params["content"],
                    },
                )
            )
            with open(params["path"], "w", encoding="utf-8") as f:
                f.write(params["content"])
            return {}
        if method == "terminal/create":
            self.requests.append((method, params))
            return await self.create_terminal(params)
        if method.startswith("terminal/"):
            self.requests.append((method, params))
            terminal = self.terminals.get(params.get("terminalId"))
            if terminal is None:
                raise libacp.RequestError(
                    -32602,
                    "Invalid params",
                    {"details": f"unknown terminal {params.get('terminalId')}"},
                )
            if method == "terminal/output":
                result: Dict[str, Any] = {
                    "output": terminal.output.decode("utf-8", "replace"),
                    "truncated": terminal.truncated,
                }
                if terminal.exit_status is not None:
                    result["exitStatus"] = terminal.exit_status
                return result
            if method == "terminal/wait_for_exit":
                await terminal.done.wait()
                return dict(terminal.exit_status or {})
            if method == "terminal/kill":
                self.kill(terminal)
                return {}
            if method == "terminal/release":
                self.kill(terminal)
                del self.terminals[params["terminalId"]]
                return {}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})

    async def create_terminal(self, params: Dict[str, Any]) -> Dict[str, Any]:
        env = dict(os.environ)
        for var in params.get("env") or []:
            env[var["name"]] = var["value"]
        process = await asyncio.create_subprocess_exec(
            params["command"],
            *(params.get("args") or []),
            cwd=params.get("cwd") or self.work_dir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal = Terminal(process)
        terminal_id = f"term-{self.next_terminal}"
        self.next_terminal += 1
        self.terminals[terminal_id] = terminal
        limit = params.get("outputByteLimit")

        async def collect() -> None:
            assert process.stdout is not None
            while True:
                chunk = await process.stdout.read(65536)
                if not chunk:
                    break
                terminal.output += chunk
                if limit is not None and len(terminal.output) > limit:
                    terminal.output = terminal.output[-limit:]
                    terminal.truncated = True
            code = await process.wait()
            terminal.exit_status = (
                {"exitCode": code, "signal": None}
                if code >= 0
                else {"exitCode": None, "signal": signal.Signals(-code).name}
            )
            terminal.done.set()

        asyncio.get_running_loop().create_task(collect())
        return {"terminalId": terminal_id}

    @staticmethod
    def kill(terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            try:
                terminal.process.kill()
            except ProcessLookupError:
                pass

    def kill_all(self) -> None:
        for terminal in self.terminals.values():
            self.kill(terminal)


async def drive(conn: libacp.Connection, client: InteropClient, work_dir: str) -> None:
    history: List[Dict[str, Any]] = []  # what session/load must replay

    init = await conn.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
            },
            "clientInfo": {"name": "libacp-python-interop-client", "version": "0.0.0"},
        },
    )
    check(
        init.get("protocolVersion") == 1,
        f"initialize answered protocolVersion {init.get('protocolVersion')!r}",
    )
    check(
        (init.get("agentCapabilities") or {}).get("loadSession") is True,
        f"initialize answered agentCapabilities {show(init.get('agentCapabilities'))}; "
        "loadSession true is needed",
    )

    new = await conn.request("session/new", {"cwd": work_dir, "mcpServers": []})
    session_id = new.get("sessionId")
    check(isinstance(session_id, str) and session_id, f"session/new answered {show(new)}")

    async def prompt(text: str):
        """Sends one prompt; returns its result, the updates handled before
        it returned (libacp's ordering barrier: all of them) and the client
        requests the agent made meanwhile."""
        history.append({"sessionUpdate": "user_message_chunk", "text": text})
        client.take_updates()
        result = await conn.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )
        seen = []
        for sid, update in client.take_updates():
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
            seen.append(update)
        return result, seen, client.take_requests()

    def chunk_texts(seen: List[Dict[str, Any]]) -> List[Any]:
        return [
            (u.get("content") or {}).get("text")
            for u in seen
            if u.get("sessionUpdate") == "agent_message_chunk"
        ]

    # 1. Streaming: every update handled before the prompt returns.
    result, seen, _ = await prompt(f"stream {STREAM_COUNT}")
    check(result.get("stopReason") == "end_turn", f"stream: stopReason {show(result)}")
    got = [
        (u.get("content") or {}).get("text")
        if u.get("sessionUpdate") == "agent_message_chunk"
        else describe(u)
        for u in seen
    ]
    expected = [f"chunk {i}" for i in range(STREAM_COUNT)]
    check(
        got == expected,
        f"stream: before the response saw {len(got)} updates, expected {STREAM_COUNT} "
        f"chunks in order; first: {show(got[:3])}, last: {show(got[-3:])}",
    )

    # 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
    result, seen, reqs = await prompt("permission")
    check(result.get("stopReason") == "end_turn", f"permission: stopReason {show(result)}")
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
        "permission: expected tool_call, chunk, tool_call_update; saw "
        f"{show([describe(u) for u in seen])}",
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
    check(
        chunk.get("sessionUpdate") == "agent_message_chunk"
        and (chunk.get("content") or {}).get("text") == f"permission: {allow['optionId']}",
        f'permission: expected chunk "permission: {allow["optionId"]}", saw {describe(chunk)}',
    )
    check(
        tool_call_update.get("sessionUpdate") == "tool_call_update"
        and tool_call_update.get("toolCallId") == tool_call.get("toolCallId")
        and tool_call_update.get("status") == "completed",
        f"permission: last update {show(tool_call_update)}",
    )

    # 3. fs/read_text_file answered by this client.
    path = os.path.join(work_dir, "a.txt")
    result, seen, reqs = await prompt(f"read {path}")
    check(result.get("stopReason") == "end_turn", f"read: stopReason {show(result)}")
    check(
        reqs == [("fs/read_text_file", {"sessionId": session_id, "path": path})],
        f"read: expected one fs/read_text_file of {path}, got {show(reqs)}",
    )
    check(
        chunk_texts(seen) == [FILE_CONTENT] and len(seen) == 1,
        f"read: expected the one chunk {show(FILE_CONTENT)}, saw {show([describe(u) for u in seen])}",
    )

    # 4. fs/write_text_file, really written by this client.
    path = os.path.join(work_dir, "b.txt")
    result, seen, reqs = await prompt(f"write {path} hi")
    check(result.get("stopReason") == "end_turn", f"write: stopReason {show(result)}")
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

    # 5. terminal/* run by this client.
    result, seen, reqs = await prompt("terminal echo hi")
    check(result.get("stopReason") == "end_turn", f"terminal: stopReason {show(result)}")
    calls = [m for m, _ in reqs]
    check(
        calls
        == ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"],
        f"terminal: expected create, wait_for_exit, output, release; got {show(calls)}",
    )
    create = reqs[0][1]
    check(
        create["command"] == "sh" and create.get("args") == ["-c", "echo hi"],
        f"terminal: created {show({'command': create['command'], 'args': create.get('args')})}",
    )
    ids = {p["terminalId"] for _, p in reqs[1:]}
    check(len(ids) == 1, f"terminal: requests named terminals {show(sorted(ids))}")
    check(
        chunk_texts(seen) == ["hi\n"] and len(seen) == 1,
        f'terminal: expected the one chunk "hi\\n", saw {show([describe(u) for u in seen])}',
    )

    # 6. session/cancel during a turn.
    pending = asyncio.ensure_future(prompt("wait"))
    await asyncio.sleep(CANCEL_AFTER_S)
    check(not pending.done(), "wait: the prompt was answered before session/cancel was sent")
    await conn.cancel_session(session_id)
    result, _, _ = await pending
    check(
        result.get("stopReason") == "cancelled",
        f"wait: after session/cancel, stopReason {show(result)}",
    )

    # 7. session/load replays the history before it returns.
    client.take_updates()
    await conn.request("session/load", {"sessionId": session_id, "cwd": work_dir, "mcpServers": []})
    replayed = client.take_updates()
    check(
        all(sid == session_id for sid, _ in replayed), "load: replayed updates for another session"
    )
    got_history = [
        {"sessionUpdate": u.get("sessionUpdate"), "text": (u.get("content") or {}).get("text")}
        for _, u in replayed
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
            f"load: before the response saw {len(got_history)} replayed updates, expected "
            f"{len(history)}; first difference at {at}: got "
            f"{show(got_history[at] if at < len(got_history) else None)}, expected "
            f"{show(history[at] if at < len(history) else None)}"
        )


async def run(argv: List[str], work_dir: str, state: Dict[str, Any]) -> None:
    client = InteropClient(work_dir)
    state["client"] = client

    def stderr(line: str) -> None:  # on an engine thread
        print(line, file=sys.stderr, flush=True)

    try:
        conn = libacp.Connection.spawn_agent(argv, client, stderr=stderr)
    except libacp.SpawnError as e:
        raise CheckFailure(f"cannot start agent {argv[0]!r}: {e}") from None
    state["conn"] = conn
    sequence = asyncio.ensure_future(drive(conn, client, work_dir))
    closed = asyncio.ensure_future(conn.closed())
    done, _ = await asyncio.wait({sequence, closed}, return_when=asyncio.FIRST_COMPLETED)
    if sequence not in done:
        # The connection closed under the sequence: say why.
        try:
            await asyncio.wait_for(sequence, 1.0)
        except Exception as e:  # noqa: BLE001
            raise CheckFailure(f"the connection closed ({closed.result()}): {e}") from None
    closed.cancel()
    sequence.result()

    # Closing stdin must end the agent: close() closes it, then escalates to
    # SIGTERM and SIGKILL; the agent must be gone within the grace period.
    try:
        await asyncio.wait_for(conn.close(), EXIT_GRACE_S)
        await asyncio.wait_for(conn.terminated(), EXIT_GRACE_S)
    except asyncio.TimeoutError:
        raise CheckFailure(f"agent still running {EXIT_GRACE_S:g} s after close") from None


async def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("FAIL: usage: python interop_client.py -- AGENT_COMMAND [ARGS...]", flush=True)
        return 1
    work_dir = os.path.realpath(tempfile.mkdtemp(prefix="acp-interop-libacp-py-"))
    state: Dict[str, Any] = {}
    failure: Optional[str] = None
    try:
        await asyncio.wait_for(run(argv, work_dir, state), DEADLINE_S)
    except asyncio.TimeoutError:
        failure = f"no result within {DEADLINE_S:g} s"
    except libacp.RequestError as e:
        failure = f"agent answered error {e.code} {e.message!r}" + (
            f" data {show(e.data)}" if e.data is not None else ""
        )
    except Exception as e:  # noqa: BLE001 - any failure is reported, not raised
        failure = f"{type(e).__name__}: {e}" if not isinstance(e, CheckFailure) else str(e)
    finally:
        if "client" in state:
            state["client"].kill_all()
        if "conn" in state:
            try:
                await asyncio.wait_for(state["conn"].close(), EXIT_GRACE_S)
            except (asyncio.TimeoutError, libacp.AcpError):
                pass
        shutil.rmtree(work_dir, ignore_errors=True)
    if failure is None:
        print("OK", flush=True)
        return 0
    print("FAIL: " + " ".join(failure.split()), flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
