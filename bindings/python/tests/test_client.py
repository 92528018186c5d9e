"""A Python client driving target/debug/libacp-interop-agent."""

import asyncio

import libacp
import pytest

TIMEOUT = 20


class Recorder:
    """Collects agent text chunks; answers permission requests."""

    def __init__(self, choice="allow_once"):
        self.chunks = []
        self.choice = choice
        self.permission_requests = []

    async def on_notification(self, method, params):
        if method == "session/update":
            update = params["update"]
            if update["sessionUpdate"] == "agent_message_chunk":
                await asyncio.sleep(0.001)  # a slow handler: the barrier must still hold
                self.chunks.append(update["content"]["text"])

    async def on_request(self, method, params, request):
        if method == "session/request_permission":
            self.permission_requests.append(params)
            return {"outcome": {"outcome": "selected", "optionId": self.choice}}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})


async def start(agent, handler, tmp_path, **options):
    conn = libacp.Connection.spawn_agent([agent], handler, **options)
    init = await asyncio.wait_for(
        conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
    )
    session = await conn.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    return conn, init, session["sessionId"]


def prompt(session, text):
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


async def test_initialize_new_session_and_ordered_stream(interop_agent, tmp_path):
    rec = Recorder()
    conn, init, session = await start(interop_agent, rec, tmp_path)
    try:
        assert init["protocolVersion"] == 1
        assert conn.protocol_version == 1
        assert conn.role == "client"
        assert conn.pid
        assert conn.peer_capabilities()["loadSession"] is True
        assert conn.sessions() == [session]
        done = await asyncio.wait_for(
            conn.request("session/prompt", prompt(session, "stream 20")), TIMEOUT
        )
        # The ordering barrier: every update was handled before the answer.
        assert rec.chunks == [f"chunk {i}" for i in range(20)]
        assert done == {"stopReason": "end_turn"}
    finally:
        await conn.close()
    assert conn.close_reason == "closed locally"


async def test_permission_answered_by_python_handler(interop_agent, tmp_path):
    rec = Recorder()
    async with (await start(interop_agent, rec, tmp_path))[0] as conn:
        session = conn.sessions()[0]
        await asyncio.wait_for(
            conn.request("session/prompt", prompt(session, "permission")), TIMEOUT
        )
        assert len(rec.permission_requests) == 1
        assert rec.permission_requests[0]["toolCall"]["toolCallId"] == "perm-1"
        assert "permission: allow_once" in rec.chunks


async def test_cancel_session_ends_turn_cancelled(interop_agent, tmp_path):
    conn, _, session = await start(interop_agent, Recorder(), tmp_path)
    async with conn:
        waiting = asyncio.ensure_future(conn.request("session/prompt", prompt(session, "wait")))
        await asyncio.sleep(0.2)
        await conn.cancel_session(session)
        assert await asyncio.wait_for(waiting, TIMEOUT) == {"stopReason": "cancelled"}


async def test_task_cancellation_sends_cancel_request(interop_agent, tmp_path):
    frames = []
    conn, _, session = await start(
        interop_agent, Recorder(), tmp_path, trace=lambda d, f: frames.append((d, f))
    )
    async with conn:
        task = asyncio.ensure_future(conn.request("session/prompt", prompt(session, "wait")))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if any(d == "out" and "$/cancel_request" in f for d, f in frames):
                break
            await asyncio.sleep(0.02)
        assert any(d == "out" and "$/cancel_request" in f for d, f in frames)
        # The turn ended on both sides: the session takes a new prompt.
        await asyncio.sleep(0.1)
        done = await asyncio.wait_for(
            conn.request("session/prompt", prompt(session, "stream 2")), TIMEOUT
        )
        assert done == {"stopReason": "end_turn"}


async def test_peer_error_is_request_error(interop_agent, tmp_path):
    conn, _, session = await start(interop_agent, Recorder(), tmp_path)
    async with conn:
        with pytest.raises(libacp.RequestError) as err:
            await conn.request("session/prompt", prompt(session, "no such command"))
        assert err.value.code == -32602
        assert "unknown prompt" in str(err.value.data)


async def test_refusals(interop_agent, tmp_path):
    conn = libacp.Connection.spawn_agent([interop_agent], Recorder())
    async with conn:
        with pytest.raises(libacp.RefusedError) as err:
            await conn.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert err.value.kind == "NotInitialized"
        assert err.value.details["method"] == "session/new"
        await conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        # Audio prompts were not advertised by the agent: refused, never sent.
        session = (await conn.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "sessionId"
        ]
        audio = {
            "sessionId": session,
            "prompt": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
        }
        with pytest.raises(libacp.CapabilityError) as err:
            await conn.request("session/prompt", audio)
        assert err.value.kind == "CapabilityNotAdvertised"
        assert "audio" in err.value.capability
        assert isinstance(err.value, libacp.RefusedError)
        with pytest.raises(libacp.RefusedError) as err:
            await conn.request("session/prompt", prompt("nope", "stream 1"))
        assert err.value.kind == "UnknownSession"
        assert err.value.details["sessionId"] == "nope"


async def test_invalid_params(interop_agent):
    conn = libacp.Connection.spawn_agent([interop_agent])
    async with conn:
        with pytest.raises(libacp.InvalidParams) as err:
            await conn.request("initialize", {"protocolVersion": 1, "x": {1, 2}})
        assert "params.x" in err.value.detail
        with pytest.raises(libacp.InvalidParams):
            await conn.request("initialize", "not an object")
        assert isinstance(err.value, ValueError)


async def test_spawn_error():
    with pytest.raises(libacp.SpawnError) as err:
        libacp.Connection.spawn_agent(["/nonexistent/agent"])
    assert err.value.program == "/nonexistent/agent"


async def test_close_fails_pending_and_later_calls(interop_agent, tmp_path):
    conn, _, session = await start(interop_agent, Recorder(), tmp_path)
    waiting = asyncio.ensure_future(conn.request("session/prompt", prompt(session, "wait")))
    await asyncio.sleep(0.1)
    await conn.close()
    await conn.close()  # idempotent
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(waiting, TIMEOUT)
    with pytest.raises(libacp.ConnectionClosed):
        await conn.request("session/prompt", prompt(session, "stream 1"))
    assert await conn.closed() == "closed locally"


def test_needs_a_running_loop(interop_agent):
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        libacp.Connection.spawn_agent([interop_agent])


async def test_an_agent_that_exits_while_a_process_it_started_holds_its_stdout_closes(tmp_path):
    # Issue 14, defect 3: the agent exits without answering; the `sleep` it
    # started keeps its stdout open, so no end of stream comes. The call
    # still fails (after a short drain), naming the exit, and the
    # connection closes.
    conn = libacp.Connection.spawn_agent(
        ["sh", "-c", "sleep 1000 & read line; exit 5"],
        grace_after_stdin_close_ms=200,
        grace_after_sigterm_ms=200,
    )
    with pytest.raises(libacp.ConnectionClosed) as err:
        await asyncio.wait_for(
            conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
        )
    assert "the agent process exited (exit code 5)" in str(err.value)
    assert (await asyncio.wait_for(conn.wait_exit(), TIMEOUT)).code == 5
    await asyncio.wait_for(conn.closed(), TIMEOUT)
