"""How what the peer sends reaches the loop: the ordered inbox (batches,
in dispatch order, one wake-up per batch), its back-pressure, notification
handlers that call the peer, the notify fast path, and no reference cycles
left behind by requests."""

import asyncio
import gc
import json
import socket
import weakref

import libacp

TIMEOUT = 20


def frame(obj):
    return (json.dumps(obj) + "\n").encode()


async def raw_agent_peer(client_handler, **options):
    """A libacp client connection with a raw scripted agent on the other end."""
    a, b = socket.socketpair()
    conn = libacp.Connection.from_socket(a, client_handler, role="client", **options)
    reader, writer = await asyncio.open_unix_connection(sock=b)
    init = asyncio.ensure_future(
        conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    )
    line = await asyncio.wait_for(reader.readline(), TIMEOUT)
    req = json.loads(line)
    writer.write(frame({"jsonrpc": "2.0", "id": req["id"], "result": {"protocolVersion": 1}}))
    await asyncio.wait_for(init, TIMEOUT)
    new = asyncio.ensure_future(conn.request("session/new", {"cwd": "/tmp", "mcpServers": []}))
    req = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
    writer.write(frame({"jsonrpc": "2.0", "id": req["id"], "result": {"sessionId": "s1"}}))
    await asyncio.wait_for(new, TIMEOUT)
    return conn, reader, writer


def chunk(i):
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": str(i)},
            },
        },
    }


async def test_a_batch_of_updates_then_the_answer_arrive_in_order_with_mixed_handlers():
    seen = []

    class Client:
        async def on_notification(self, method, params):
            i = int(params["update"]["content"]["text"])
            if i % 7 == 0:  # some handlers suspend, most finish at once
                await asyncio.sleep(0)
            seen.append(i)

    conn, reader, writer = await raw_agent_peer(Client())
    prompt = asyncio.ensure_future(
        conn.request(
            "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]}
        )
    )
    req = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
    # 2000 updates and the answer in one write: they arrive as large batches.
    writer.write(
        b"".join(frame(chunk(i)) for i in range(2000))
        + frame({"jsonrpc": "2.0", "id": req["id"], "result": {"stopReason": "end_turn"}})
    )
    done = await asyncio.wait_for(prompt, TIMEOUT)
    assert done == {"stopReason": "end_turn"}
    assert seen == list(range(2000))  # every update handled, in order, before the answer
    await conn.close()
    writer.close()


async def test_a_notification_handler_may_call_the_peer_and_await_the_answer():
    answers = []

    class Client:
        async def on_notification(self, method, params):
            # Awaited inside the handler: its answer must not wait for the
            # handler (nor for the updates queued behind it) to finish.
            answers.append(
                await conn.request("_ext/ask", {"i": params["update"]["content"]["text"]})
            )

    conn, reader, writer = await raw_agent_peer(Client())
    writer.write(b"".join(frame(chunk(i)) for i in range(3)))
    for i in range(3):
        req = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
        assert req["method"] == "_ext/ask" and req["params"] == {"i": str(i)}
        writer.write(frame({"jsonrpc": "2.0", "id": req["id"], "result": {"ok": i}}))
    for _ in range(200):
        if len(answers) == 3:
            break
        await asyncio.sleep(0.01)
    assert answers == [{"ok": 0}, {"ok": 1}, {"ok": 2}]
    await conn.close()
    writer.close()


async def test_a_stuck_notification_handler_bounds_the_inbox_and_stops_the_reader():
    gate = asyncio.Event()
    handled = []

    class Client:
        async def on_notification(self, method, params):
            await gate.wait()
            handled.append(int(params["update"]["content"]["text"]))

    conn, reader, writer = await raw_agent_peer(Client(), incoming_queue=16)
    total = 20000
    data = b"".join(frame(chunk(i)) for i in range(total))
    sender = asyncio.ensure_future(_write_all(writer, data))
    await asyncio.sleep(1.0)
    inbox = conn._dispatcher.inbox
    # The peer's writes are blocked: the core stopped reading once the inbox
    # reached its high-water mark, and only a bounded amount is buffered.
    assert not sender.done()
    assert len(inbox) <= 256 + 1
    gate.set()
    await asyncio.wait_for(sender, TIMEOUT)
    for _ in range(500):
        if len(handled) == total:
            break
        await asyncio.sleep(0.02)
    assert handled == list(range(total))
    await conn.close()
    writer.close()


async def _write_all(writer, data):
    writer.write(data)
    await writer.drain()


async def test_notify_is_queued_at_once_while_there_is_room_and_waits_when_full():
    a, b = socket.socketpair()
    b.setblocking(False)
    # One place in the outgoing queue and a peer that reads nothing yet.
    agent = libacp.Connection.from_socket(a, None, role="agent", outgoing_queue=1)
    native = agent._native
    assert native.notify("_ext/one", {"n": 1}) is None  # queued without awaiting
    loop = asyncio.get_running_loop()
    blocked = None
    for n in range(2, 2000):
        pending = native.notify("_ext/more", {"n": n, "pad": "x" * 65536})
        if pending is None:
            continue  # there was room: queued at once
        try:
            await asyncio.wait_for(asyncio.shield(pending), 0.3)
        except asyncio.TimeoutError:
            blocked = pending  # waits for room: the peer reads nothing
            break
    assert blocked is not None, "notify never waited for room"
    # With one place in the queue it waits after a few frames (what the
    # socket buffers hold), not after the default 1024.
    assert n < 100, f"waited only at n={n}"
    received = bytearray()
    reader = asyncio.ensure_future(_drain_socket(loop, b, received))
    await asyncio.wait_for(blocked, TIMEOUT)
    await agent.close()
    await asyncio.wait_for(reader, TIMEOUT)  # ends at the agent's end of stream
    b.close()
    # Everything queued reached the peer, once, in order.
    sent = [json.loads(line)["params"]["n"] for line in received.splitlines()]
    assert sent == list(range(1, n + 1))


async def _drain_socket(loop, sock, into):
    while True:
        chunk = await loop.sock_recv(sock, 65536)
        if not chunk:
            return
        into.extend(chunk)


async def test_requests_leave_no_reference_cycles_behind():
    class Agent:
        async def on_request(self, method, params, request):
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": {}}
            return {"ok": True}

    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, Agent(), role="agent")
    reader, writer = await asyncio.open_unix_connection(sock=b)
    writer.write(
        frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    )
    await asyncio.wait_for(reader.readline(), TIMEOUT)
    requests = []
    original = libacp.Request.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        requests.append(weakref.ref(self))

    libacp.Request.__init__ = spy
    gc.collect()
    gc.disable()  # what is freed below is freed by reference counting alone
    try:
        for i in range(1, 51):
            writer.write(frame({"jsonrpc": "2.0", "id": i, "method": "_ext/x", "params": {}}))
            answer = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
            assert answer == {"jsonrpc": "2.0", "id": i, "result": {"ok": True}}
        await asyncio.sleep(0.05)
        alive = [r for r in requests if r() is not None]
        assert len(requests) == 50 and alive == []
    finally:
        gc.enable()
        libacp.Request.__init__ = original
    await agent.close()
    writer.close()
