"""Connection options and the native responder: each core option exposed as
a keyword of the constructors, checked on the wire or in the host."""

import asyncio
import json
import logging
import signal
import socket
import sys
import threading
import time

import libacp
import pytest
from libacp import _libacp

TIMEOUT = 20
AUTH_METHODS = [{"id": "token", "name": "Token", "description": None}]


class Agent:
    """Answers initialize/authenticate/session/new; a prompt runs `script`."""

    def __init__(self, script=None):
        self.script = script
        self.ids = []
        self.requests = []

    async def on_request(self, method, params, request):
        self.ids.append(request.id)
        self.requests.append(request)
        if method == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": AUTH_METHODS}
        if method == "authenticate":
            return {}
        if method == "session/new":
            return {"sessionId": "s1"}
        if method == "session/prompt":
            if self.script is not None:
                await self.script(request.connection, params)
            return {"stopReason": "end_turn"}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


class Recorder:
    """A client handler that records what reaches it."""

    def __init__(self):
        self.requests = []
        self.notifications = []

    async def on_request(self, method, params, request):
        self.requests.append(method)
        raise libacp.RequestError(-32601, "Method not found", {"method": method})

    async def on_notification(self, method, params):
        self.notifications.append(params)


def connect(agent_handler, client_handler, agent_options=None, client_options=None):
    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, agent_handler, role="agent", **(agent_options or {}))
    client = libacp.Connection.from_socket(
        b, client_handler, role="client", **(client_options or {})
    )
    return agent, client


async def initialize(client, cwd="/tmp", new_session=True):
    await asyncio.wait_for(
        client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
    )
    if new_session:
        await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})


def chunk(i):
    """A `session/update` of session s1: agent message chunk `i`."""
    return {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": str(i)},
        },
    }


def prompt(text="go"):
    return {"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}


async def eventually(predicate, what):
    for _ in range(250):
        if predicate():
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


# ------------------------------------------------------------- the responder


async def test_no_on_request_is_answered_by_the_core():
    class NotificationsOnly:
        async def on_notification(self, method, params):
            pass

    agent, client = connect(NotificationsOnly(), Recorder())
    async with agent, client:
        with pytest.raises(libacp.RequestError) as err:
            await asyncio.wait_for(
                client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
                TIMEOUT,
            )
    code, message, data = _libacp.method_not_found("initialize")
    assert (err.value.code, err.value.message, err.value.data) == (code, message, data)
    assert (code, message, data) == (-32601, "Method not found", {"method": "initialize"})


async def test_handler_cancelling_itself_is_answered_request_cancelled():
    class SelfCancelling(Agent):
        async def on_request(self, method, params, request):
            if method == "session/prompt":
                raise asyncio.CancelledError()
            return await super().on_request(method, params, request)

    agent, client = connect(SelfCancelling(), Recorder())
    async with agent, client:
        await initialize(client)
        with pytest.raises(libacp.RequestError) as err:
            await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
        assert err.value.code == libacp.REQUEST_CANCELLED == -32800


async def test_request_error_with_unusable_data_answers_internal_error():
    class Bad(Agent):
        async def on_request(self, method, params, request):
            text = (params or {}).get("prompt", [{}])[0].get("text")
            if text == "set":
                raise libacp.RequestError(-32000, "bad data", {1, 2})
            if text == "code":
                raise libacp.RequestError("not a code", "bad code")  # type: ignore[arg-type]
            return await super().on_request(method, params, request)

    agent, client = connect(Bad(), Recorder())
    async with agent, client:
        await initialize(client)
        with pytest.raises(libacp.RequestError) as err:
            await client.request("session/prompt", prompt("set"))
        assert err.value.code == -32603
        assert "not JSON" in err.value.data
        with pytest.raises(libacp.RequestError) as err:
            await client.request("session/prompt", prompt("code"))
        assert err.value.code == -32603
        assert "unusable RequestError" in err.value.data


async def test_request_id_is_the_peers_id():
    frames = []
    handler = Agent()
    agent, client = connect(
        handler, Recorder(), client_options={"trace": lambda d, f: frames.append((d, f))}
    )
    async with agent, client:
        await initialize(client)
    sent = [json.loads(f)["id"] for d, f in frames if d == "out" and '"method"' in f]
    assert handler.ids == sent
    assert all(isinstance(i, int) for i in handler.ids)
    assert repr(handler.requests[0]) == f"<libacp.Request initialize id={sent[0]!r}>"


async def test_request_id_string_and_odd_numbers_are_exact():
    handler = Agent()
    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, handler, role="agent")
    reader, writer = await asyncio.open_unix_connection(sock=b)
    raw_ids = ['"abc-1"', "1.5", "123456789012345678901234567890"]
    methods = ["initialize", "_test/ping", "_test/ping"]
    async with agent:
        for raw_id, method in zip(raw_ids, methods):
            writer.write(
                (
                    f'{{"jsonrpc":"2.0","id":{raw_id},"method":"{method}","params":'
                    '{"protocolVersion":1,"clientCapabilities":{}}}\n'
                ).encode()
            )
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), TIMEOUT)
            assert f'"id":{raw_id}'.encode() in line  # echoed byte for byte
        writer.close()
    assert handler.ids == ["abc-1", 1.5, 123456789012345678901234567890]


# ------------------------------------------------------------- agent options


async def test_require_auth_gates_sessions_until_authenticate():
    agent, client = connect(Agent(), Recorder(), agent_options={"require_auth": True})
    async with agent, client:
        await initialize(client, new_session=False)
        with pytest.raises(libacp.RequestError) as err:
            await client.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        assert err.value.code == libacp.AUTH_REQUIRED == -32000
        assert err.value.data["authMethods"][0]["id"] == "token"
        await client.request("authenticate", {"methodId": "token"})
        session = await client.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        assert session == {"sessionId": "s1"}


# ------------------------------------------------------------- client services


async def test_fs_service_answers_in_the_core_inside_the_cwd(tmp_path):
    (tmp_path / "in.txt").write_text("inside\n")
    seen = {}

    async def script(conn, params):
        seen["caps"] = conn.peer_capabilities()
        read = await conn.request(
            "fs/read_text_file", {"sessionId": "s1", "path": str(tmp_path / "in.txt")}
        )
        seen["read"] = read["content"]
        await conn.request(
            "fs/write_text_file",
            {"sessionId": "s1", "path": str(tmp_path / "out.txt"), "content": "written"},
        )
        try:
            await conn.request("fs/read_text_file", {"sessionId": "s1", "path": "/etc/passwd"})
        except libacp.RequestError as e:
            seen["outside"] = e.code

    recorder = Recorder()
    events = []
    agent, client = connect(
        Agent(script), recorder, client_options={"fs": True, "events": events.append}
    )
    async with agent, client:
        await initialize(client, cwd=tmp_path)
        await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
        await eventually(lambda: len([e for e in events if e.kind == "served"]) == 3, "served")
    assert seen["caps"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert seen["read"] == "inside\n"
    assert (tmp_path / "out.txt").read_text() == "written"
    assert seen["outside"] in (-32602, -32002, -32603)
    assert recorder.requests == []  # the host's handler never saw them
    # ... but it is told what the core did for it, in order.
    served = [e.details for e in events if e.kind == "served"]
    assert [d["method"] for d in served] == [
        "fs/read_text_file",
        "fs/write_text_file",
        "fs/read_text_file",
    ]
    assert served[1]["subject"] == {"sessionId": "s1", "path": str(tmp_path / "out.txt")}
    assert served[1]["error"] is None and served[2]["error"]["code"] == seen["outside"]


async def test_terminals_service_runs_commands(tmp_path):
    seen = {}

    async def script(conn, params):
        seen["caps"] = conn.peer_capabilities()
        term = await conn.request(
            "terminal/create", {"sessionId": "s1", "command": "sh", "args": ["-c", "pwd; echo hi"]}
        )
        ids = {"sessionId": "s1", "terminalId": term["terminalId"]}
        seen["exit"] = await conn.request("terminal/wait_for_exit", ids)
        seen["output"] = (await conn.request("terminal/output", ids))["output"]
        await conn.request("terminal/release", ids)

    recorder = Recorder()
    agent, client = connect(Agent(script), recorder, client_options={"terminals": True})
    async with agent, client:
        await initialize(client, cwd=tmp_path)
        await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
    assert seen["caps"]["terminal"] is True
    assert seen["exit"]["exitCode"] == 0
    assert seen["output"] == f"{tmp_path.resolve()}\nhi\n"
    assert recorder.requests == []


async def test_session_model_snapshot():
    async def script(conn, params):
        for word in ["Hel", "lo"]:
            await conn.notify(
                "session/update",
                {
                    "sessionId": "s1",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": word},
                    },
                },
            )
        await conn.notify(
            "session/update",
            {
                "sessionId": "s1",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t1",
                    "title": "Edit",
                    "kind": "edit",
                    "status": "pending",
                },
            },
        )

    recorder = Recorder()
    agent, client = connect(Agent(script), recorder, client_options={"session_model": True})
    async with agent, client:
        await initialize(client)
        await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
        snapshot = client.session_snapshot("s1")
        assert client.session_snapshot("nope") is None
    assert snapshot is not None
    assert snapshot["sessionId"] == "s1"
    assert snapshot["entries"][0]["type"] == "agent_message"
    assert snapshot["entries"][0]["text"] == "Hello"
    assert snapshot["toolCalls"][0]["toolCallId"] == "t1"
    assert snapshot["toolCalls"][0]["status"] == "pending"
    assert len(recorder.notifications) == 3  # the host still sees every update


async def test_session_snapshot_without_the_model_raises():
    agent, client = connect(Agent(), Recorder())
    async with agent, client:
        with pytest.raises(RuntimeError, match="session_model=True"):
            client.session_snapshot("s1")


# ------------------------------------------------------------- spawned agents


async def test_exit_status_and_wait_exit():
    conn = libacp.Connection.spawn_agent([sys.executable, "-c", "import sys; sys.exit(3)"])
    async with conn:
        status = await asyncio.wait_for(conn.wait_exit(), TIMEOUT)
        assert status == libacp.ExitStatus(code=3, signal=None)
        assert not status.success and status.returncode == 3
        assert conn.exit_status == status


async def test_grace_ladder_sigterm_then_sigkill():
    stubborn = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', file=sys.stderr, flush=True); time.sleep(60)"
    )
    lines = []
    conn = libacp.Connection.spawn_agent(
        [sys.executable, "-c", stubborn],
        stderr=lines.append,
        grace_after_stdin_close_ms=100,
        grace_after_sigterm_ms=200,
    )
    await eventually(lambda: lines == ["ready"], "the agent to start")
    assert conn.exit_status is None
    started = time.monotonic()
    await conn.close()
    elapsed = time.monotonic() - started
    status = await asyncio.wait_for(conn.wait_exit(), TIMEOUT)
    assert status.signal == signal.SIGKILL and status.returncode == -signal.SIGKILL
    assert elapsed < 1.5  # the default ladder waits 2 s + 2 s

    polite = libacp.Connection.spawn_agent(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        grace_after_stdin_close_ms=100,
        grace_after_sigterm_ms=100,
    )
    await polite.close()
    assert (await polite.wait_exit()).signal == signal.SIGTERM


async def test_clear_env_starts_from_an_empty_environment():
    dump = "import os, sys; print(','.join(sorted(os.environ)), file=sys.stderr, flush=True)"

    async def env_of(**kwargs):
        lines = []
        conn = libacp.Connection.spawn_agent(
            [sys.executable, "-c", dump], stderr=lines.append, **kwargs
        )
        await asyncio.wait_for(conn.wait_exit(), TIMEOUT)
        await conn.close()
        await eventually(lambda: lines, "the agent's stderr")
        return set(lines[0].split(","))

    cleared = await env_of(env={"ONLY": "1"}, clear_env=True)
    assert "ONLY" in cleared and "PATH" not in cleared
    assert cleared - {"ONLY", "LC_CTYPE"} == set()  # Python may set LC_CTYPE itself
    inherited = await env_of(env={"ONLY": "1"})
    assert {"ONLY", "PATH"} <= inherited


async def test_wait_exit_without_a_spawned_agent_raises():
    agent, client = connect(Agent(), Recorder())
    async with agent, client:
        assert client.exit_status is None and client.pid is None
        with pytest.raises(RuntimeError, match="did not spawn an agent"):
            await client.wait_exit()


# ------------------------------------------------------------- events and trace


class Events:
    def __init__(self):
        self.events = []
        self.threads = set()

    def __call__(self, event):
        self.threads.add(threading.get_ident())
        self.events.append(event)

    def kinds(self):
        return [e.kind for e in self.events]


async def test_oversized_frame_event_on_the_event_loop():
    events = Events()
    agent, client = connect(
        Agent(), Recorder(), agent_options={"max_frame_size": 1024, "events": events}
    )
    async with agent, client:
        with pytest.raises(libacp.RequestError):
            await asyncio.wait_for(
                client.request(
                    "initialize",
                    {"protocolVersion": 1, "clientCapabilities": {}, "_meta": {"pad": "x" * 4096}},
                ),
                TIMEOUT,
            )
        await eventually(lambda: "oversized_frame" in events.kinds(), "the event")
    event = events.events[events.kinds().index("oversized_frame")]
    assert isinstance(event, libacp.Event)
    assert event.details["size"] > 4096
    assert event.details["answered"] is True
    assert isinstance(event.details["id"], int)
    assert "max_frame_size" in event.message
    assert events.threads == {threading.get_ident()}  # delivered on the loop


async def test_events_for_stray_response_invalid_frame_ignored_notification_and_close():
    events = Events()
    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, Agent(), role="agent", events=events)
    reader, writer = await asyncio.open_unix_connection(sock=b)
    writer.write(b'{"jsonrpc":"2.0","id":77,"result":{"late":true}}\n')
    writer.write(b"this is not json\n")
    writer.write(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}\n')
    await writer.drain()
    await eventually(lambda: len(events.events) >= 3, "three events")
    parse_error = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
    assert parse_error["error"]["code"] == -32700
    await agent.close()
    await eventually(lambda: "closed" in events.kinds(), "the closed event")
    writer.close()
    by_kind = {e.kind: e for e in events.events}
    assert by_kind["unmatched_response"].details == {"id": 77, "result": {"late": True}}
    assert by_kind["invalid_frame"].details["error"]["code"] == -32700
    assert by_kind["invalid_frame"].details["answered"] is True
    assert "before initialization" in by_kind["ignored"].message
    assert by_kind["closed"].details == {"reason": "closed locally"}
    assert events.kinds()[-1] == "closed"


async def test_events_hook_errors_are_logged(caplog):
    def broken(event):
        raise ValueError("hook bug")

    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, Agent(), role="agent", events=broken)
    b.sendall(b'{"jsonrpc":"2.0","id":5,"result":null}\n')
    await eventually(lambda: "events hook raised" in caplog.text, "the log record")
    await agent.close()
    b.close()


async def test_a_raising_trace_callback_goes_to_the_libacp_logger(caplog):
    def broken(direction, frame):
        raise RuntimeError("trace hook raised")

    caplog.set_level(logging.ERROR, logger="libacp")
    agent, client = connect(Agent(), Recorder(), client_options={"trace": broken})
    async with agent, client:
        await initialize(client)
    await eventually(
        lambda: any(
            r.name == "libacp" and r.exc_info and "trace hook raised" in str(r.exc_info[1])
            for r in caplog.records
        ),
        "the log record with its traceback",
    )


@pytest.mark.parametrize("trace", ["logging", True])
async def test_trace_to_the_wire_logger(caplog, trace):
    caplog.set_level(logging.DEBUG, logger="libacp.wire")
    agent, client = connect(Agent(), Recorder(), client_options={"trace": trace})
    async with agent, client:
        await initialize(client)
    wire = [r.getMessage() for r in caplog.records if r.name == "libacp.wire"]
    assert any(m.startswith("out ") and '"initialize"' in m for m in wire)
    assert any(m.startswith("in ") and '"sessionId":"s1"' in m for m in wire)
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "libacp.wire")


async def test_small_queues_and_flush_timeout_keep_order():
    async def script(conn, params):
        for i in range(200):
            await conn.notify("session/update", chunk(i))

    small = {"outgoing_queue": 1, "incoming_queue": 1, "flush_timeout_ms": 500}
    recorder = Recorder()
    agent, client = connect(Agent(script), recorder, agent_options=small, client_options=small)
    async with agent, client:
        await initialize(client)
        await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
    texts = [n["update"]["content"]["text"] for n in recorder.notifications]
    assert texts == [str(i) for i in range(200)]


async def test_request_timeout_option():
    async def slow(conn, params):
        await asyncio.sleep(5)

    agent, client = connect(Agent(slow), Recorder(), client_options={"request_timeout_ms": 200})
    async with agent, client:
        await initialize(client)
        with pytest.raises(libacp.RequestTimeout):
            await client.request("session/prompt", prompt())


# ------------------------------------------------------------- hooks in wire order


def _hooked(tmp_path, **client_options):
    """A client with the core's fs, trace and events, against an agent whose
    prompt streams updates and reads files through it; `log` holds what the
    client's hooks and handler saw, in that order."""
    (tmp_path / "f.txt").write_text("x")
    log = []

    async def script(conn, params):
        for i in range(3):
            await conn.notify("session/update", chunk(i))
            await conn.request(
                "fs/read_text_file", {"sessionId": "s1", "path": str(tmp_path / "f.txt")}
            )

    class Client(Recorder):
        async def on_notification(self, method, params):
            log.append(("handled", method))

    agent, client = connect(
        Agent(script),
        Client(),
        client_options={
            "fs": True,
            "trace": lambda direction, frame: log.append((direction, frame)),
            "events": lambda event: log.append(("event", event.kind)),
            **client_options,
        },
    )
    return agent, client, log


def _shape(entry):
    what, text = entry
    if what == "in" and "session/update" in text:
        return "update"
    if what == "handled":
        return "handled"
    if what == "in" and "fs/read_text_file" in text:
        return "read"
    if what == "event" and text == "served":
        return "served"
    if what == "out" and '"content":"x"' in text:
        return "answered"
    if what == "in" and '"stopReason"' in text:
        return "done"
    if what == "out" and "session/prompt" in text:
        return "prompt"
    return f"other: {entry}"


async def test_trace_and_events_reach_the_host_in_wire_order_before_the_answer(tmp_path):
    # Issue 24: a `served` event or a traced frame never arrives after the
    # answer that follows it on the wire (nor out of order).
    agent, client, log = _hooked(tmp_path)
    async with agent, client:
        await initialize(client, cwd=tmp_path)
        step = ["update", "handled", "read", "served", "answered"]
        for turn in range(20):
            log.clear()
            await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
            seen = [_shape(e) for e in log]
            assert seen == ["prompt", *step, *step, *step, "done"], (turn, log)


async def test_ordered_hooks_off_still_delivers_every_frame_and_event(tmp_path):
    agent, client, log = _hooked(tmp_path, ordered_hooks=False)
    async with agent, client:
        await initialize(client, cwd=tmp_path)
        await asyncio.wait_for(client.request("session/prompt", prompt()), TIMEOUT)
        await eventually(
            lambda: [_shape(e) for e in log].count("served") == 3
            and "done" in [_shape(e) for e in log],
            "every served event and the prompt's answer",
        )
