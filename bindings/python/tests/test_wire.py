"""What reaches the wire and what comes back through it, seen by a raw peer on
the other end of a socket: calls and notifications leave in the order they
are made; a value Python cannot hold (a number beyond a double's range,
nesting deeper than the converter goes) never stalls the connection; the
descriptor contract of ``Connection.from_fds``. Each runs with the loop
reading the transport (the default) and with libacp's thread reading it."""

import asyncio
import json
import logging
import os
import socket

import libacp
import pytest

TIMEOUT = 20


@pytest.fixture(params=["loop", "engine"])
def reads(request, monkeypatch):
    monkeypatch.setenv("LIBACP_PYTHON_DRIVE_READS", "1" if request.param == "loop" else "0")
    return request.param


def frame(obj):
    return (json.dumps(obj) + "\n").encode()


async def raw_peer(handler=None, role="client"):
    a, b = socket.socketpair()
    conn = libacp.Connection.from_socket(a, handler, role=role)
    reader, writer = await asyncio.open_unix_connection(sock=b)
    return conn, reader, writer


async def read_json(reader):
    return json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))


async def test_calls_and_notifications_leave_in_the_order_they_are_made(reads):
    conn, reader, writer = await raw_peer()
    async with conn:
        calls = []
        for i in range(20):
            # Sent when made, not when awaited: the notification after it
            # must not overtake it.
            calls.append(conn.request("_r", {"i": i}))
            await conn.notify("_n", {"i": i})
        for i in range(20):
            for method in ("_r", "_n"):
                msg = await read_json(reader)
                assert (msg["method"], msg["params"]["i"]) == (method, i), msg
        for c in calls:
            c.cancel()
    writer.close()


async def test_a_request_python_cannot_hold_is_answered_invalid_params_and_the_next_is_handled(
    reads,
):
    class Agent:
        async def on_request(self, method, params, request):
            return {"echo": params}

    conn, reader, writer = await raw_peer(Agent(), role="agent")
    async with conn:
        writer.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1, "clientCapabilities": {}},
                }
            )
        )
        assert (await read_json(reader))["id"] == 1
        # 1e999999 is valid JSON but no double holds it.
        writer.write(b'{"jsonrpc":"2.0","id":2,"method":"_ext/x","params":{"x":1e999999}}\n')
        answer = await read_json(reader)
        assert answer["id"] == 2
        assert answer["error"]["code"] == libacp.INVALID_PARAMS
        assert "cannot represent" in answer["error"]["data"]
        deep = "[" * 300 + "1" + "]" * 300
        writer.write(f'{{"jsonrpc":"2.0","id":3,"method":"_ext/x","params":{deep}}}\n'.encode())
        answer = await read_json(reader)
        assert answer["id"] == 3 and "error" in answer, answer
        writer.write(frame({"jsonrpc": "2.0", "id": 4, "method": "_ext/x", "params": {"y": 1}}))
        assert await read_json(reader) == {
            "jsonrpc": "2.0",
            "id": 4,
            "result": {"echo": {"y": 1}},
        }
    writer.close()


async def test_a_notification_python_cannot_hold_is_dropped_and_logged_and_the_next_arrives(
    reads, caplog
):
    seen = []

    class Client:
        async def on_notification(self, method, params):
            seen.append(params)

    conn, reader, writer = await raw_peer(Client())
    async with conn:
        with caplog.at_level(logging.WARNING, logger="libacp"):
            writer.write(b'{"jsonrpc":"2.0","method":"_ext/n","params":{"x":1e999999}}\n')
            writer.write(frame({"jsonrpc": "2.0", "method": "_ext/n", "params": {"x": 2}}))
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.01)
        assert seen == [{"x": 2}]
        assert any("cannot represent" in r.getMessage() for r in caplog.records)
        # And a result Python cannot hold fails that call, not the next.
        first = conn.request("_ext/q", {})
        req = await read_json(reader)
        writer.write(f'{{"jsonrpc":"2.0","id":{req["id"]},"result":[1e999999]}}\n'.encode())
        with pytest.raises(libacp.InvalidResult):
            await asyncio.wait_for(first, TIMEOUT)
        second = conn.request("_ext/q", {})
        req = await read_json(reader)
        writer.write(frame({"jsonrpc": "2.0", "id": req["id"], "result": [3]}))
        assert await asyncio.wait_for(second, TIMEOUT) == [3]
    writer.close()


def fd_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


async def test_from_fds_refuses_what_it_cannot_take_and_leaves_it_to_the_caller():
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError, match="stream socket"):
            libacp.Connection.from_fds(r, r, role="agent")
        with pytest.raises(ValueError, match="not an open file descriptor"):
            libacp.Connection.from_fds(r, 1 << 30, role="agent")
        assert fd_open(r) and fd_open(w)
    finally:
        os.close(r)
        os.close(w)
    d1, d2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with pytest.raises(ValueError, match="stream socket"):
        libacp.Connection.from_fds(d1.fileno(), d2.fileno(), role="agent")
    assert fd_open(d1.fileno()) and fd_open(d2.fileno())
    d1.close()
    d2.close()


async def test_one_socket_given_twice_is_one_connection_whose_close_reaches_the_peer(reads):
    a, b = socket.socketpair()
    fd = a.detach()
    conn = libacp.Connection.from_fds(fd, fd, role="client")
    reader, writer = await asyncio.open_unix_connection(sock=b)
    call = conn.request("_ext/q", {})
    req = await read_json(reader)
    writer.write(frame({"jsonrpc": "2.0", "id": req["id"], "result": {"ok": 1}}))
    assert await asyncio.wait_for(call, TIMEOUT) == {"ok": 1}
    await conn.close()
    assert await asyncio.wait_for(reader.readline(), TIMEOUT) == b""
    writer.close()


async def test_a_request_flood_waits_for_the_host_instead_of_growing_its_inbox(reads):
    # Issue 14, defect 2: a peer sending requests to a host that does not
    # answer them is read no further once 1024 (the core's
    # incoming_requests) are in flight; answering lets the rest in, and
    # every request is answered once.
    parked = []
    more = asyncio.Event()

    class Agent:
        async def on_request(self, method, params, request):
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": {}}
            answer = asyncio.get_running_loop().create_future()
            parked.append(answer)
            more.set()
            return await answer

    conn, reader, writer = await raw_peer(Agent(), role="agent")
    async with conn:
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        writer.write(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        assert (await read_json(reader))["id"] == 0
        total = 3000
        for i in range(1, total + 1):
            writer.write(frame({"jsonrpc": "2.0", "id": i, "method": "_flood/q", "params": {}}))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while len(parked) < 1024:
            assert loop.time() < deadline, f"{len(parked)} requests reached the handler"
            more.clear()
            await asyncio.wait_for(more.wait(), TIMEOUT)
        # Nothing more arrives while none is answered.
        await asyncio.sleep(0.5)
        assert len(parked) == 1024
        answered = set()
        while len(answered) < total:
            for answer in parked:
                if not answer.done():
                    answer.set_result({})
            msg = await read_json(reader)
            assert msg["id"] not in answered and msg["result"] == {}, msg
            answered.add(msg["id"])
        assert answered == set(range(1, total + 1))
        assert len(parked) == total
    writer.close()
