"""Remote ACP through the Python binding: a Python client
(``ClientConnection.connect`` / ``Connection.connect``) against a Python
server (``libacp.serve``) over WebSocket and Streamable HTTP on 127.0.0.1:
whole turns with a permission request, typed connect failures, the
server's bearer tokens, graceful shutdown and close, and the remote options
refused by name before anything starts. Every wait is bounded far above the
time it needs (the suite must pass on two busy cores)."""

import asyncio
import socket

import libacp
import pytest

TIMEOUT = 30
KINDS = ["websocket", "http"]
INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def text_update(sid, text):
    return {
        "sessionId": sid,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
    }


class EchoAgent(libacp.Agent):
    """Streams three words, asks for permission, reports what it got."""

    started = 0  # agents made by the server's factory (the class itself)

    def __init__(self):
        type(self).started += 1
        self.turn_started = asyncio.Event()
        self.release = None  # an asyncio.Event the turn waits for, if set

    async def initialize(self, params):
        return {"protocolVersion": 1, "agentCapabilities": {}}

    async def new_session(self, params):
        return {"sessionId": "s1"}

    async def prompt(self, params):
        sid = params["sessionId"]
        self.turn_started.set()
        if self.release is not None:
            await self.release.wait()
        for word in ("one", "two", "three"):
            await self.client.session_update(text_update(sid, word))
        answer = await self.client.request_permission(
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": "t1"},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            }
        )
        await self.client.session_update(text_update(sid, answer["outcome"]["optionId"]))
        return {"stopReason": "end_turn"}


class Recorder(libacp.Client):
    def __init__(self):
        self.texts = []
        self.permissions = 0

    async def session_update(self, params):
        self.texts.append(params["update"]["content"]["text"])

    async def request_permission(self, params):
        self.permissions += 1
        return {"outcome": {"outcome": "selected", "optionId": "yes"}}


async def turn(agent):
    await asyncio.wait_for(agent.initialize(INIT), TIMEOUT)
    session = await asyncio.wait_for(agent.new_session({"cwd": "/tmp", "mcpServers": []}), TIMEOUT)
    return await asyncio.wait_for(
        agent.prompt(
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
        ),
        TIMEOUT,
    )


def free_port():
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_turn_with_a_permission_request_over_each_transport(kind):
    async with await libacp.serve("127.0.0.1:0", EchoAgent) as server:
        host, port = server.address
        assert host == "127.0.0.1" and port > 0
        scheme = "ws" if kind == "websocket" else "http"
        assert server.url(kind) == f"{scheme}://127.0.0.1:{port}/acp"
        client = Recorder()
        async with await libacp.ClientConnection.connect(server.url(kind), client) as agent:
            done = await turn(agent)
            assert server.connections == 1
        # Every update of the turn was handled before prompt() returned.
        assert done == {"stopReason": "end_turn"}
        assert client.texts == ["one", "two", "three", "yes"]
        assert client.permissions == 1


async def test_dynamic_handlers_on_both_sides():
    """Also: a served connection's ``remote`` says how its client came."""

    class Agent:
        def __init__(self):
            self.methods = []
            self.remote = None

        def on_connect(self, connection):
            self.remote = connection.remote

        async def on_request(self, method, params, request):
            self.methods.append(method)
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": {}}
            if method == "_echo":
                back = await request.connection.request("_ping", {"n": params["n"]})
                return {"n": back["n"] + 1}
            raise libacp.MethodNotFound(method)

    class Client:
        async def on_request(self, method, params, request):
            return {"n": params["n"] * 10}

    agents = []

    def factory():
        agents.append(Agent())
        return agents[-1]

    async with await libacp.serve(("127.0.0.1", 0), factory) as server:
        conn = await libacp.Connection.connect(server.url("websocket"), Client())
        async with conn:
            await asyncio.wait_for(conn.request("initialize", INIT), TIMEOUT)
            assert await asyncio.wait_for(conn.request("_echo", {"n": 4}), TIMEOUT) == {"n": 41}
        assert [a.methods for a in agents] == [["initialize", "_echo"]]
        # How the client came, as the served connection sees it.
        remote = agents[0].remote
        assert isinstance(remote, libacp.RemoteInfo), remote
        assert remote.kind == "websocket"
        assert remote.connection_id
        assert remote.remote_address[0] == "127.0.0.1"
        assert conn.remote is None  # a client's own connection


async def test_a_refused_port_is_a_typed_error():
    url = f"ws://127.0.0.1:{free_port()}/acp"
    with pytest.raises(libacp.RemoteError) as err:
        await asyncio.wait_for(libacp.ClientConnection.connect(url), TIMEOUT)
    assert err.value.kind == "refused"
    assert err.value.status is None and err.value.reason is None
    assert isinstance(err.value, libacp.ConnectionClosed)
    with pytest.raises(libacp.RemoteError) as err:
        await libacp.Connection.connect("ftp://127.0.0.1/acp")
    assert err.value.kind == "invalid_url"


async def test_a_wrong_token_is_401_and_no_agent_runs():
    EchoAgent.started = 0
    async with await libacp.serve("127.0.0.1:0", EchoAgent, bearer_tokens=["s3cret"]) as server:
        wrong = {"Authorization": "Bearer wrong"}
        # WebSocket: the upgrade is refused.
        with pytest.raises(libacp.RemoteError) as err:
            await asyncio.wait_for(
                libacp.ClientConnection.connect(server.url("websocket"), headers=wrong), TIMEOUT
            )
        assert (err.value.kind, err.value.status) == ("unauthorized", 401)
        # Streamable HTTP: the first POST is `initialize`; it fails with the
        # same typed reason, and the connection is closed with it.
        agent = await libacp.ClientConnection.connect(server.url("http"), headers=wrong)
        with pytest.raises(libacp.RemoteError) as err:
            await asyncio.wait_for(agent.initialize(INIT), TIMEOUT)
        assert (err.value.kind, err.value.status) == ("unauthorized", 401)
        assert err.value.reason is not None and "401" in err.value.reason
        reason = await asyncio.wait_for(agent.closed(), TIMEOUT)
        assert "401" in reason
        assert EchoAgent.started == 0, "no agent code ran"
        # The right token, as (name, value) pairs: a whole turn.
        for kind in KINDS:
            right = [("Authorization", "Bearer s3cret")]
            async with await libacp.ClientConnection.connect(
                server.url(kind), Recorder(), headers=right
            ) as agent:
                assert (await turn(agent))["stopReason"] == "end_turn"
        assert EchoAgent.started == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_shutdown_lets_a_running_turn_finish(kind):
    agents = []

    def factory():
        agents.append(EchoAgent())
        agents[-1].release = asyncio.Event()
        return agents[-1]

    # A grace far above what the turn needs, even on busy cores.
    server = await libacp.serve("127.0.0.1:0", factory, shutdown_grace_ms=60_000)
    client = Recorder()
    agent = await libacp.ClientConnection.connect(server.url(kind), client)
    await asyncio.wait_for(agent.initialize(INIT), TIMEOUT)
    await asyncio.wait_for(agent.new_session({"cwd": "/tmp", "mcpServers": []}), TIMEOUT)
    running = asyncio.ensure_future(
        agent.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]})
    )
    await asyncio.wait_for(agents[0].turn_started.wait(), TIMEOUT)
    shutting = asyncio.ensure_future(server.shutdown())
    await asyncio.sleep(0.2)  # the shutdown is under way, waiting for the turn
    assert not shutting.done()
    # No new connection is accepted meanwhile.
    with pytest.raises(libacp.AcpError):
        other = await asyncio.wait_for(libacp.ClientConnection.connect(server.url(kind)), TIMEOUT)
        await asyncio.wait_for(other.initialize(INIT), TIMEOUT)
    agents[0].release.set()
    done = await asyncio.wait_for(running, TIMEOUT)
    assert done == {"stopReason": "end_turn"}
    assert client.texts == ["one", "two", "three", "yes"]
    await asyncio.wait_for(shutting, 60 + TIMEOUT)
    assert server.connections == 0
    assert len(agents) == 1
    await asyncio.wait_for(agent.closed(), TIMEOUT)
    await asyncio.wait_for(server.serve_forever(), TIMEOUT)  # returns once shut down


async def test_close_ends_running_turns_at_once():
    agents = []

    def factory():
        agents.append(EchoAgent())
        agents[-1].release = asyncio.Event()  # never set: the turn waits
        return agents[-1]

    server = await libacp.serve("127.0.0.1:0", factory)
    agent = await libacp.ClientConnection.connect(server.url("websocket"), Recorder())
    await asyncio.wait_for(agent.initialize(INIT), TIMEOUT)
    await asyncio.wait_for(agent.new_session({"cwd": "/tmp", "mcpServers": []}), TIMEOUT)
    running = asyncio.ensure_future(
        agent.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]})
    )
    await asyncio.wait_for(agents[0].turn_started.wait(), TIMEOUT)
    server.close()
    server.close()  # idempotent
    with pytest.raises(libacp.ConnectionClosed):
        await asyncio.wait_for(running, TIMEOUT)
    assert server.connections == 0
    with pytest.raises(libacp.RemoteError) as err:
        await asyncio.wait_for(libacp.ClientConnection.connect(server.url()), TIMEOUT)
    assert err.value.kind == "refused"


async def test_a_factory_that_raises_refuses_that_connection_only(caplog):
    calls = []

    def factory():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no agent for you")
        return EchoAgent()

    async with await libacp.serve("127.0.0.1:0", factory) as server:
        with pytest.raises(libacp.ConnectionClosed):
            agent = await asyncio.wait_for(
                libacp.ClientConnection.connect(server.url("websocket")), TIMEOUT
            )
            await asyncio.wait_for(agent.initialize(INIT), TIMEOUT)
        async with await libacp.ClientConnection.connect(server.url(), Recorder()) as agent:
            assert (await turn(agent))["stopReason"] == "end_turn"
    assert "no agent for you" in caplog.text


async def test_connection_options_reach_each_served_connection():
    frames = []
    async with await libacp.serve(
        "127.0.0.1:0",
        EchoAgent,
        trace=lambda direction, frame: frames.append(direction),
        max_frame_size=1 << 20,
        request_timeout_ms=10_000,
    ) as server:
        async with await libacp.ClientConnection.connect(
            server.url("http"), Recorder(), connect_timeout_ms=5_000, queue=64
        ) as agent:
            await turn(agent)
    assert "in" in frames and "out" in frames


BAD_CONNECT = [
    ({"colour": 1}, TypeError, "unknown option `colour`"),
    ({"connect_timeout_ms": 0}, ValueError, "`connect_timeout_ms` must be a finite number"),
    ({"prefer_websocket": "yes"}, TypeError, "`prefer_websocket` must be a boolean"),
    ({"headers": "Authorization: x"}, TypeError, "`headers` must be name and value pairs"),
    ({"headers": {"X": "a\nb"}}, ValueError, '`headers` holds "X"'),
    ({"queue": 0}, ValueError, "`queue` must be from 1 to"),
    ({"framing": "ndjson"}, ValueError, "`framing` does not apply here"),
    ({"bearer_tokens": ["t"]}, ValueError, "`bearer_tokens` does not apply here"),
    ({"require_auth": True}, ValueError, "`require_auth` does not apply here"),
]


@pytest.mark.parametrize(
    "options,exc,message", BAD_CONNECT, ids=[next(iter(o)) for o, _, _ in BAD_CONNECT]
)
async def test_bad_connect_options_are_refused_before_dialing(options, exc, message):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"ws://127.0.0.1:{listener.getsockname()[1]}/acp"
        with pytest.raises(exc, match=message):
            await libacp.Connection.connect(url, **options)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody dialed


BAD_SERVE = [
    ({"colour": 1}, TypeError, "unknown option `colour`"),
    ({"bearer_tokens": "s3cret"}, TypeError, "`bearer_tokens` must be a list of strings"),
    ({"bearer_tokens": [""]}, ValueError, "`bearer_tokens` must hold non-empty strings"),
    ({"idle_timeout_ms": -1}, ValueError, "`idle_timeout_ms` must be a finite number"),
    ({"max_connections": 0}, ValueError, "`max_connections` must be from 1 to"),
    ({"headers": {"A": "b"}}, ValueError, "`headers` does not apply here"),
    ({"fs": True}, ValueError, "`fs` does not apply here"),
    ({"framing": "ndjson"}, ValueError, "`framing` does not apply here"),
]


@pytest.mark.parametrize(
    "options,exc,message", BAD_SERVE, ids=[next(iter(o)) for o, _, _ in BAD_SERVE]
)
async def test_bad_server_options_are_refused_before_binding(options, exc, message):
    port = free_port()
    with pytest.raises(exc, match=message):
        await libacp.serve(("127.0.0.1", port), EchoAgent, **options)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # still free: nothing was bound


async def test_a_bad_listen_address():
    with pytest.raises(ValueError, match="listen must be"):
        await libacp.serve(8080, EchoAgent)  # type: ignore[arg-type]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            await libacp.serve(taken.getsockname(), EchoAgent)
