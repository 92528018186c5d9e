"""Both roles in Python, in-process: two connections over a socketpair."""

import asyncio
import os
import socket

import libacp
import pytest

TIMEOUT = 20


class Agent:
    def __init__(self):
        self.seen = []
        self.cancelled_tasks = []
        self.cancel_flags = []

    async def on_request(self, method, params, request):
        self.seen.append(method)
        if method == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {}}
        if method == "session/new":
            return {"sessionId": "s1"}
        if method == "session/prompt":
            text = params["prompt"][0]["text"]
            conn = request.connection
            if text == "fail":
                raise libacp.RequestError(-32042, "custom failure", {"why": [1, "two"]})
            if text == "crash":
                raise KeyError("boom")
            if text == "nested":
                answer = await conn.request(
                    "session/request_permission",
                    {
                        "sessionId": "s1",
                        "toolCall": {"toolCallId": "t1"},
                        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                    },
                )
                for i in range(5):
                    await conn.notify(
                        "session/update",
                        {
                            "sessionId": "s1",
                            "update": {
                                "sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": f"{i}"},
                            },
                        },
                    )
                return {"stopReason": "end_turn", "_meta": {"answer": answer}}
            if text == "client-error":
                try:
                    await conn.request(
                        "session/request_permission",
                        {
                            "sessionId": "s1",
                            "toolCall": {"toolCallId": "t1"},
                            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                        },
                    )
                except libacp.RequestError as e:
                    return {"stopReason": "end_turn", "_meta": {"code": e.code, "data": e.data}}
            if text == "hang":  # ignores session/cancel, waits to be superseded
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    self.cancelled_tasks.append(request.cancelled)
                    raise
            if text == "cooperative":  # session/cancel: flag + wait_cancelled
                await asyncio.wait_for(request.wait_cancelled(), TIMEOUT)
                self.cancel_flags.append(request.cancelled)
                return {"stopReason": "end_turn"}  # the core answers cancelled
            return {"stopReason": "end_turn"}
        raise libacp.RequestError(-32601, "Method not found")


class Client:
    def __init__(self, permission_error=False):
        self.updates = []
        self.permission_error = permission_error

    async def on_notification(self, method, params):
        await asyncio.sleep(0.001)
        self.updates.append(params["update"]["content"]["text"])

    async def on_request(self, method, params, request):
        if self.permission_error:
            raise libacp.RequestError(-32000, "nope", {"detail": "denied"})
        return {"outcome": {"outcome": "selected", "optionId": "ok"}}


async def pair(agent, client):
    a, b = socket.socketpair()
    agent_conn = libacp.Connection.from_socket(a, agent, role="agent")
    client_conn = libacp.Connection.from_socket(b, client, role="client")
    await asyncio.wait_for(
        client_conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
    )
    await client_conn.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    return agent_conn, client_conn


def prompt(text):
    return {"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}


async def test_nested_request_and_ordering():
    agent, client = Agent(), Client()
    a, c = await pair(agent, client)
    try:
        done = await asyncio.wait_for(c.request("session/prompt", prompt("nested")), TIMEOUT)
        assert done["stopReason"] == "end_turn"
        assert done["_meta"]["answer"] == {"outcome": {"outcome": "selected", "optionId": "ok"}}
        assert client.updates == ["0", "1", "2", "3", "4"]
        assert a.role == "agent" and c.role == "client"
    finally:
        await c.close()
        await a.close()


async def test_request_error_from_handler_reaches_peer():
    a, c = await pair(Agent(), Client())
    async with a, c:
        with pytest.raises(libacp.RequestError) as err:
            await c.request("session/prompt", prompt("fail"))
        assert err.value.code == -32042
        assert err.value.message == "custom failure"
        assert err.value.data == {"why": [1, "two"]}
        with pytest.raises(libacp.RequestError) as err:
            await c.request("session/prompt", prompt("crash"))
        assert err.value.code == -32603
        assert "KeyError" in err.value.data


async def test_client_handler_error_reaches_agent():
    a, c = await pair(Agent(), Client(permission_error=True))
    async with a, c:
        done = await c.request("session/prompt", prompt("client-error"))
        assert done["_meta"] == {"code": -32000, "data": {"detail": "denied"}}


async def test_abandoned_call_cancels_handler_task():
    agent = Agent()
    a, c = await pair(agent, Client())
    async with a, c:
        task = asyncio.ensure_future(c.request("session/prompt", prompt("hang")))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if agent.cancelled_tasks:
                break
            await asyncio.sleep(0.02)
        # The agent's handler task was cancelled, with request.cancelled set.
        assert agent.cancelled_tasks == [True]


async def test_session_cancel_answers_cancelled():
    agent = Agent()
    a, c = await pair(agent, Client())
    async with a, c:
        task = asyncio.ensure_future(c.request("session/prompt", prompt("cooperative")))
        await asyncio.sleep(0.1)
        await c.cancel_session("s1")
        done = await asyncio.wait_for(task, TIMEOUT)
        assert done == {"stopReason": "cancelled"}
        assert agent.cancel_flags == [True]


async def test_peer_close_fails_pending_calls():
    a, c = await pair(Agent(), Client())
    task = asyncio.ensure_future(c.request("session/prompt", prompt("hang")))
    await asyncio.sleep(0.1)
    await a.close()
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(task, TIMEOUT)
    assert await asyncio.wait_for(c.closed(), TIMEOUT) == "the peer closed the connection"
    await c.close()


async def test_unknown_method_without_handler():
    a, c = await pair(Agent(), Client())
    async with a, c:
        with pytest.raises(libacp.RequestError) as err:
            await c.request("_custom/thing", {"x": 1})
        assert err.value.code == -32601


async def test_pipes_via_fds():
    a_r, c_w = os.pipe()
    c_r, a_w = os.pipe()
    a = libacp.Connection.from_fds(a_r, a_w, Agent(), role="agent", framing="content-length")
    c = libacp.Connection.from_fds(c_r, c_w, Client(), role="client", framing="content-length")
    async with a, c:
        init = await asyncio.wait_for(
            c.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
        )
        assert init["protocolVersion"] == 1


def test_bad_options():
    async def go():
        a, b = socket.socketpair()
        with pytest.raises(ValueError, match="framing"):
            libacp.Connection.from_socket(a, role="agent", framing="xml")
        with pytest.raises(ValueError, match="role"):
            libacp.Connection.from_fds(b.fileno(), b.fileno(), role="editor")
        a.close()  # refused: both stayed the caller's
        b.close()

    asyncio.run(go())
