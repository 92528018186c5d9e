"""Fault injection through the Python binding: the shared fault agents of
``tests/faults/`` (see its README), each spawned as a real process. Pending
calls fail promptly with :class:`libacp.ConnectionClosed`, the permission
handler's task is cancelled, the terminal the agent started is stopped, a
stalled peer cannot hang ``close``, a stderr flood is delivered whole, and
after rounds of every fault the process holds no more descriptors, threads
or child processes than before."""

import asyncio
import gc
import os
from pathlib import Path

import libacp
import pytest

TIMEOUT = 30
FAULTS = Path(__file__).resolve().parents[3] / "tests" / "faults"
GRACE_MS = 200


def agent(name):
    return str(FAULTS / name)


def prompt(text="go"):
    return {"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}


class Dialog:
    """A client host that keeps permission requests open until cancelled."""

    def __init__(self):
        self.opened = asyncio.Event()
        self.request = None
        self.handler_cancelled = False

    async def on_request(self, method, params, request):
        if method != "session/request_permission":
            raise libacp.RequestError(-32601, "Method not found", {"method": method})
        self.request = request
        self.opened.set()
        try:
            await asyncio.Event().wait()  # the dialog stays open
        except asyncio.CancelledError:
            self.handler_cancelled = True
            raise


async def client(argv, handler=None, **options):
    conn = libacp.Connection.spawn_agent(
        argv,
        handler,
        grace_after_stdin_close_ms=GRACE_MS,
        grace_after_sigterm_ms=GRACE_MS,
        **options,
    )
    await asyncio.wait_for(
        conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
    )
    await asyncio.wait_for(conn.request("session/new", {"cwd": "/tmp", "mcpServers": []}), TIMEOUT)
    return conn


def children():
    """This process's child processes (from /proc/*/stat's ppid)."""
    me = str(os.getpid())
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if stat.rpartition(")")[2].split()[1] == me:
            count += 1
    return count


def held():
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": len(os.listdir("/proc/self/task")),
        "children": children(),
    }


async def settles_back_to(baseline):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while True:
        gc.collect()
        now = held()
        if all(now[k] <= baseline[k] for k in baseline):
            return
        assert loop.time() < deadline, f"leaked: before {baseline}, after {now}"
        await asyncio.sleep(0.05)


async def the_prompt_fails_with_the_close(name):
    conn = await client([agent(name)])
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(conn.request("session/prompt", prompt()), TIMEOUT)
    await asyncio.wait_for(conn.wait_exit(), TIMEOUT)


def spawn_failures_are_clear_errors_at_once():
    cases = [
        (["/nonexistent/acp-agent"], {}, "No such file"),
        ([agent("not_executable.sh")], {}, "ermission denied"),
        ([agent("stops_reading.sh")], {"cwd": "/nonexistent/missing-dir"}, "No such file"),
    ]
    for argv, options, says in cases:
        with pytest.raises(libacp.SpawnError) as err:
            libacp.Connection.spawn_agent(argv, **options)
        assert says in str(err.value), str(err.value)


async def killed_while_the_host_holds_a_permission_request(tmp_path):
    go = tmp_path / "go"
    if go.exists():
        go.unlink()
    dialog = Dialog()
    conn = await client([agent("killed_mid_permission.sh"), str(tmp_path)], dialog)
    turn = asyncio.ensure_future(conn.request("session/prompt", prompt()))
    await asyncio.wait_for(dialog.opened.wait(), TIMEOUT)
    go.touch()
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(turn, TIMEOUT)
    # Told at once that the peer is gone; its task is cancelled when the
    # connection closes (after the flush grace given to running handlers).
    await asyncio.wait_for(dialog.request.wait_cancelled(), TIMEOUT)
    await asyncio.wait_for(conn.closed(), TIMEOUT)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not dialog.handler_cancelled:
        assert loop.time() < deadline, "the handler's task was not cancelled"
        await asyncio.sleep(0.01)
    await asyncio.wait_for(conn.wait_exit(), TIMEOUT)


async def killed_while_its_terminal_runs():
    before = children()
    conn = await client([agent("killed_mid_terminal.sh")], terminals=True)
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(conn.request("session/prompt", prompt()), TIMEOUT)
    status = await asyncio.wait_for(conn.wait_exit(), TIMEOUT)
    assert status.signal == 9, f"{status} (code 3: the client gave no terminalId)"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while children() > before:  # while the connection is still held
        assert loop.time() < deadline, "the terminal's `sleep 300` still runs"
        await asyncio.sleep(0.01)
    del conn


async def a_peer_that_stops_reading_cannot_hang_the_close():
    # The trace runs when the writer takes a frame, before writing it: once
    # the prompt is traced, its write has begun (and cannot finish).
    loop = asyncio.get_running_loop()
    writing = asyncio.Event()

    def trace(direction, frame):
        if direction == "out" and len(frame) > 1 << 20:
            loop.call_soon_threadsafe(writing.set)

    conn = await client([agent("stops_reading.sh")], trace=trace)
    turn = asyncio.ensure_future(conn.request("session/prompt", prompt("x" * (16 << 20))))
    await asyncio.wait_for(writing.wait(), TIMEOUT)
    await asyncio.wait_for(conn.close(), TIMEOUT)
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(turn, TIMEOUT)
    await asyncio.wait_for(conn.wait_exit(), TIMEOUT)


async def a_stderr_flood_does_not_stop_the_connection():
    lines = []
    conn = await client([agent("stderr_flood.sh")], stderr=lines.append)
    answer = await asyncio.wait_for(conn.request("session/prompt", prompt()), TIMEOUT)
    assert answer["stopReason"] == "end_turn"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while len(lines) < 20_000:
        assert loop.time() < deadline, f"{len(lines)} stderr lines"
        await asyncio.sleep(0.01)
    assert len(lines) == 20_000
    assert all(len(line) == 1000 for line in lines)
    await asyncio.wait_for(conn.close(), TIMEOUT)
    await asyncio.wait_for(conn.wait_exit(), TIMEOUT)


async def every_fault(tmp_path):
    spawn_failures_are_clear_errors_at_once()
    await killed_while_the_host_holds_a_permission_request(tmp_path)
    await the_prompt_fails_with_the_close("killed_mid_frame.sh")
    await the_prompt_fails_with_the_close("stdout_closed.sh")
    await killed_while_its_terminal_runs()
    await a_peer_that_stops_reading_cannot_hang_the_close()
    await a_stderr_flood_does_not_stop_the_connection()


async def test_faults_fail_pending_calls_promptly_and_leak_nothing(tmp_path):
    await every_fault(tmp_path)  # warm-up: what is made once
    await asyncio.sleep(0.2)
    gc.collect()
    baseline = held()
    for _ in range(2):
        await every_fault(tmp_path)
    await settles_back_to(baseline)
