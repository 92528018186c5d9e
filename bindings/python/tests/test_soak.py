"""Soak through the Python binding: a mixed workload (connections made and
closed, sessions, streamed turns, permission round trips, cancelled turns)
for LIBACP_SOAK_SECS seconds (default 10; 600 is the 10-minute run), after
which descriptors and threads are where they were after a warm-up and RSS
within a bound a per-cycle leak would cross. The amount of work depends on
the machine; the checks compare the process with itself."""

import asyncio
import gc
import os
import socket
import time
from typing import Any, Dict, Tuple

import libacp
from libacp import helpers as h

TIMEOUT = 60
SESSIONS = 5


def held() -> Tuple[int, int, int]:
    """Open descriptors, threads and RSS (KiB) of this process."""
    fds = len(os.listdir("/proc/self/fd"))
    rss = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return fds, len(os.listdir("/proc/self/task")), rss


class SoakAgent(libacp.Agent):
    def __init__(self) -> None:
        self.sessions = 0
        #: Set when a "wait" turn has started (then the client cancels it).
        self.waiting = asyncio.Event()

    async def initialize(self, params: Any) -> Any:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"sessionCapabilities": {"close": {}}},
        }

    async def new_session(self, params: Any) -> Any:
        self.sessions += 1
        return {"sessionId": f"s{self.sessions}"}

    async def close_session(self, params: Any) -> Any:
        return {}

    async def prompt(self, params: Any) -> Any:
        sid = params["sessionId"]
        text = params["prompt"][0]["text"]
        request = libacp.current_request()
        if text == "wait":
            self.waiting.set()
            await request.wait_cancelled()
            return {"stopReason": "cancelled"}
        if text == "permission":
            answer = await self.client.request_permission(
                {
                    "sessionId": sid,
                    "toolCall": {"toolCallId": "t"},
                    "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
                }
            )
            return {"stopReason": "end_turn", "_meta": answer}
        for i in range(20):
            await self.client.session_update(
                h.session_notification(sid, h.update_agent_message_text(f"chunk {i} "))
            )
        return {"stopReason": "end_turn"}


class SoakClient(libacp.Client):
    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, params: Any) -> None:
        self.updates += 1

    async def request_permission(self, params: Any) -> Any:
        return {"outcome": {"outcome": "selected", "optionId": "a"}}


async def cycle(counts: Dict[str, int]) -> None:
    a, b = socket.socketpair()
    agent_host = SoakAgent()
    agent = libacp.AgentConnection.from_socket(a, agent_host)
    client_host = SoakClient()
    conn = libacp.ClientConnection.from_socket(b, client_host)
    async with agent, conn:
        await conn.initialize({"protocolVersion": 1, "clientCapabilities": {}})
        for _ in range(SESSIONS):
            sid = (await conn.new_session({"cwd": "/tmp", "mcpServers": []}))["sessionId"]

            def prompt(text: str, sid: str = sid) -> Any:
                return {"sessionId": sid, "prompt": [h.text_block(text)]}

            await conn.prompt(prompt("stream"))
            await conn.prompt(prompt("permission"))
            waiting = asyncio.ensure_future(conn.prompt(prompt("wait")))
            await agent_host.waiting.wait()  # the turn is running: cancel it
            agent_host.waiting.clear()
            await conn.cancel(sid)
            assert (await waiting)["stopReason"] == "cancelled"
            await conn.close_session({"sessionId": sid})
            counts["turns"] += 3
    counts["updates"] += client_host.updates
    counts["connections"] += 1


async def test_a_mixed_workload_does_not_grow_descriptors_threads_or_memory() -> None:
    secs = float(os.environ.get("LIBACP_SOAK_SECS", "10"))
    counts = {"connections": 0, "turns": 0, "updates": 0}
    for _ in range(10):  # warm-up: the engine's threads, interpreter caches
        await asyncio.wait_for(cycle(counts), TIMEOUT)
    gc.collect()
    before = held()
    started = time.monotonic()
    while time.monotonic() - started < secs:
        await asyncio.wait_for(cycle(counts), TIMEOUT)
    gc.collect()
    after = held()
    for _ in range(100):  # what the last connections hold is released late
        if after[0] <= before[0] and after[1] <= before[1]:
            break
        await asyncio.sleep(0.05)
        gc.collect()
        after = held()
    print(
        f"python soak: {counts} in {time.monotonic() - started:.1f} s; before {before}, after {after}"
    )
    assert after[0] <= before[0], f"descriptors grew: {before} -> {after}"
    assert after[1] <= before[1], f"threads grew: {before} -> {after}"
    bound = before[2] + before[2] // 4 + 16 * 1024
    assert after[2] <= bound, f"RSS grew: {before[2]} KiB -> {after[2]} KiB (bound {bound})"
