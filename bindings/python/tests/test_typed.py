"""The typed API (libacp.Agent / libacp.Client, AgentConnection /
ClientConnection, libacp.schema): both roles in Python over a socketpair,
plus the checks that keep the generated models and the method tables in
step with the schema."""

import asyncio
import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import libacp
import pytest
from libacp import schema as acp

ROOT = Path(__file__).resolve().parents[3]
TIMEOUT = 20


class TypedAgent(libacp.Agent):
    def __init__(self) -> None:
        self.cancel_seen: List[bool] = []
        self.notified: List[Any] = []

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        caps = params["clientCapabilities"]
        assert caps.get("fs", {}).get("readTextFile") is True
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False},
            "futureMember": {"kept": True},
        }  # type: ignore[typeddict-unknown-key]

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return {"sessionId": "s1"}

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        sid = params["sessionId"]
        block = params["prompt"][0]
        text = block["text"] if block["type"] == "text" else ""
        request = libacp.current_request()
        if text == "read":
            got = await self.client.read_text_file({"sessionId": sid, "path": "/tmp/x.txt"})
            for line in got["content"].splitlines():
                await self.client.session_update(
                    {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": line},
                        },
                    }
                )
            return {"stopReason": "end_turn"}
        if text == "stream":
            for i in range(30):
                await self.client.session_update(
                    {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": str(i)},
                        },
                    }
                )
            # A variant this schema does not know: passes through as a dict.
            await self.client.connection.notify(
                "session/update",
                {
                    "sessionId": sid,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "tail", "futureField": [1, 2]},
                    },
                },
            )
            return {"stopReason": "end_turn"}
        if text == "wait":
            await asyncio.wait_for(request.wait_cancelled(), TIMEOUT)
            self.cancel_seen.append(request.cancelled)
            return {"stopReason": "end_turn"}  # the core answers "cancelled"
        if text == "fail":
            raise libacp.RequestError(-32042, "typed failure", {"why": "asked"})
        if text == "ask":
            # Not caught: the client's refusal escapes this handler.
            await self.client.request_permission(
                {
                    "sessionId": sid,
                    "toolCall": {"toolCallId": "t1"},
                    "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
                }
            )
        return {"stopReason": "end_turn"}

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_echo":
            return {"echo": params}
        if method == "_count":  # how many extension notifications came first
            return {"notified": len(self.notified)}
        if method == "_elsewhere":  # a -32601 naming another method
            raise libacp.MethodNotFound("_other")
        raise libacp.MethodNotFound(method)

    async def ext_notification(self, method: str, params: Any) -> None:
        self.notified.append((method, params))


class TypedClient(libacp.Client):
    def __init__(self) -> None:
        self.chunks: List[str] = []
        self.raw: List[Dict[str, Any]] = []

    async def session_update(self, params: acp.SessionNotification) -> None:
        await asyncio.sleep(0.001)  # slow handler: the ordering barrier must hold
        update = params["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            content = update["content"]
            if content["type"] == "text":
                self.chunks.append(content["text"])
                self.raw.append(dict(content))

    async def read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
        assert libacp.current_request().method == "fs/read_text_file"
        return {"content": f"read {params['path']}\nline two"}


async def pair(agent: Any, client: Any):
    a, b = socket.socketpair()
    agent_conn = libacp.AgentConnection.from_socket(a, agent)
    client_conn = libacp.ClientConnection.from_socket(b, client)
    init = await client_conn.initialize(
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}},
        }
    )
    return agent_conn, client_conn, init


async def test_typed_roles_talk_with_nested_calls_ordering_and_unknown_members():
    agent, client = TypedAgent(), TypedClient()
    agent_conn, conn, init = await pair(agent, client)
    assert agent.client is agent_conn and client.agent is conn
    assert init["futureMember"] == {"kept": True}  # type: ignore[typeddict-item]
    session = await conn.new_session({"cwd": "/tmp", "mcpServers": []})
    assert session == {"sessionId": "s1"}

    done = await asyncio.wait_for(
        conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "read"}]}), TIMEOUT
    )
    assert done["stopReason"] == "end_turn"
    assert client.chunks == ["read /tmp/x.txt", "line two"]

    client.chunks.clear()
    done = await asyncio.wait_for(
        conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "stream"}]}), TIMEOUT
    )
    # Every update was handled (in order) before the prompt's answer arrived.
    assert client.chunks == [str(i) for i in range(30)] + ["tail"]
    assert client.raw[-1]["futureField"] == [1, 2]
    await conn.close()
    await agent_conn.close()


async def test_typed_errors_cancel_and_extensions():
    agent, client = TypedAgent(), TypedClient()
    agent_conn, conn, _ = await pair(agent, client)
    await conn.new_session({"cwd": "/tmp", "mcpServers": []})

    with pytest.raises(libacp.RequestError) as err:
        await conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "fail"}]})
    assert (err.value.code, err.value.message, err.value.data) == (
        -32042,
        "typed failure",
        {"why": "asked"},
    )

    # Not overridden by TypedAgent: answered -32601 with the method name.
    with pytest.raises(libacp.RequestError) as err:
        await conn.set_session_mode({"sessionId": "s1", "modeId": "x"})
    assert err.value.code == -32601 and err.value.data == {"method": "session/set_mode"}

    assert await conn.ext_method("_echo", {"a": 1}) == {"echo": {"a": 1}}
    with pytest.raises(libacp.RequestError) as err:
        await conn.ext_method("_nobody", {})
    assert err.value.code == -32601
    await conn.ext_notification("_note", {"n": 1})
    # Sent before the next request, so handled before that request starts.
    assert await conn.ext_method("_count", {}) == {"notified": 1}

    turn = asyncio.ensure_future(
        conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "wait"}]})
    )
    await asyncio.sleep(0.2)
    await conn.cancel("s1")
    done = await asyncio.wait_for(turn, TIMEOUT)
    assert done["stopReason"] == "cancelled"
    assert agent.cancel_seen == [True]
    # The same shape as every other call works too.
    turn = asyncio.ensure_future(
        conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "wait"}]})
    )
    await asyncio.sleep(0.2)
    await conn.cancel({"sessionId": "s1"})
    assert (await asyncio.wait_for(turn, TIMEOUT))["stopReason"] == "cancelled"
    with pytest.raises(TypeError, match="cancel"):
        await conn.cancel(7)  # type: ignore[arg-type]
    assert agent.notified == [("_note", {"n": 1})]
    await conn.close()
    await agent_conn.close()


class RefusingClient(TypedClient):
    """Refuses permission requests with errors of its own, in turn."""

    def __init__(self, refusals: List[libacp.RequestError]) -> None:
        super().__init__()
        self.refusals = refusals

    async def request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        raise self.refusals.pop(0)


async def test_a_nested_error_that_escapes_a_handler_is_answered_unchanged():
    # TypedClient does not override request_permission: its default -32601
    # names session/request_permission, and the prompt's answer keeps it.
    for client, expected in [
        (TypedClient(), [(-32601, "Method not found", {"method": "session/request_permission"})]),
        (
            RefusingClient(
                [
                    libacp.RequestError(-32601, "probe: not supported", {"probe": True}),
                    libacp.RequestError(-32601, "no data"),
                    libacp.RequestError(-32000, "auth", {"authMethods": []}),
                ]
            ),
            [
                (-32601, "probe: not supported", {"probe": True}),
                (-32601, "no data", None),
                (-32000, "auth", {"authMethods": []}),
            ],
        ),
    ]:
        agent_conn, conn, _ = await pair(TypedAgent(), client)
        await conn.new_session({"cwd": "/tmp", "mcpServers": []})
        for want in expected:
            with pytest.raises(libacp.RequestError) as err:
                await asyncio.wait_for(
                    conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "ask"}]}),
                    TIMEOUT,
                )
            assert (err.value.code, err.value.message, err.value.data) == want
        # A MethodNotFound raised for another method keeps its own data too.
        with pytest.raises(libacp.RequestError) as err:
            await conn.ext_method("_elsewhere", {})
        assert err.value.code == -32601 and err.value.data == {"method": "_other"}
        await conn.close()
        await agent_conn.close()


async def test_duck_typed_hosts_and_default_client():
    class Minimal:  # no base class: only what it defines is served
        async def initialize(self, params: Any) -> Any:
            return {"protocolVersion": 1, "agentCapabilities": {}}

    a, b = socket.socketpair()
    agent_conn = libacp.AgentConnection.from_socket(a, Minimal())
    conn = libacp.ClientConnection.from_socket(b)  # default Client: answers -32601
    await conn.initialize({"protocolVersion": 1, "clientCapabilities": {}})
    assert conn.protocol_version == 1
    with pytest.raises(libacp.RequestError) as err:
        await conn.new_session({"cwd": "/tmp", "mcpServers": []})
    assert err.value.code == -32601
    with pytest.raises(libacp.RequestError) as err:
        await agent_conn.ext_method("_ask", {})
    assert err.value.code == -32601
    await conn.close()
    await agent_conn.close()


def test_current_request_outside_a_handler():
    with pytest.raises(LookupError):
        libacp.current_request()


def schema_methods(name: str) -> Dict[str, set]:
    """side -> the wire names of the methods that side handles, from the
    x-side/x-method of spec/ts-sdk-2.4.0/v1/<name>."""
    defs = json.loads((ROOT / "spec" / "ts-sdk-2.4.0" / "v1" / name).read_text())["$defs"]
    out: Dict[str, set] = {}
    for d in defs.values():
        if "x-method" in d:
            out.setdefault(d["x-side"], set()).add(d["x-method"])
    return out


def test_method_tables_cover_the_schema():
    from libacp._typed import (
        AGENT_HANDLERS,
        AGENT_PROXY_HANDLERS,
        CLIENT_HANDLERS,
        CLIENT_PROXY_HANDLERS,
    )

    assert set(AGENT_HANDLERS) == set(acp.AGENT_METHODS)
    assert set(CLIENT_HANDLERS) == set(acp.CLIENT_METHODS)
    # Every agent method has its handler on Agent and its call on
    # ClientConnection; every client method its handler on Client and its
    # call on AgentConnection (notifications included).
    for wire, name in AGENT_HANDLERS.items():
        assert callable(getattr(libacp.Agent, name)), wire
        assert callable(getattr(libacp.ClientConnection, name)), wire
    for wire, name in CLIENT_HANDLERS.items():
        assert callable(getattr(libacp.Client, name)), wire
        assert callable(getattr(libacp.AgentConnection, name)), wire
    # The tables are the unstable schema's agent and client methods (not
    # the protocol's $/cancel_request nor the proxy chain's); the unstable
    # ones are those the stable schema lacks.
    every, stable = schema_methods("schema.unstable.json"), schema_methods("schema.json")
    assert set(every) == {"agent", "client", "protocol", "proxy"}
    assert every["agent"] == set(AGENT_HANDLERS)
    assert every["client"] == set(CLIENT_HANDLERS)
    assert "mcp/message" in AGENT_HANDLERS and "mcp/message" in CLIENT_HANDLERS
    assert acp.AGENT_METHODS["mcp/message"] == ("MessageMcpNotification", None)
    assert acp.CLIENT_METHODS["mcp/message"] == ("MessageMcpRequest", "MessageMcpResponse")
    assert libacp.UNSTABLE_METHODS == (every["agent"] | every["client"] | every["proxy"]) - (
        stable["agent"] | stable["client"]
    )
    # The proxy chain's (side "proxy"): a proxy (agent role) handles
    # proxy/initialize and both kinds of proxy/successor, which the
    # conductor (client role) calls; the conductor handles both kinds of
    # proxy/successor, which the proxy calls (as core/src/typed.rs).
    assert {wire for wire, _ in acp.PROXY_METHODS} == every["proxy"]
    assert acp.PROXY_METHODS == {
        ("proxy/initialize", False): ("InitializeProxyRequest", "InitializeProxyResponse"),
        ("proxy/successor", False): ("ProxySuccessorRequest", "ProxySuccessorResponse"),
        ("proxy/successor", True): ("ProxySuccessorNotification", None),
    }
    assert AGENT_PROXY_HANDLERS == {
        ("proxy/initialize", False): "proxy_initialize",
        ("proxy/successor", False): "proxy_successor",
        ("proxy/successor", True): "proxy_successor_notification",
    }
    assert CLIENT_PROXY_HANDLERS == {
        ("proxy/successor", False): "proxy_successor",
        ("proxy/successor", True): "proxy_successor_notification",
    }
    for name in AGENT_PROXY_HANDLERS.values():
        assert callable(getattr(libacp.Agent, name)), name
    for name in ("proxy_initialize", "proxy_successor", "proxy_successor_notification"):
        assert callable(getattr(libacp.ClientConnection, name)), name
    for name in CLIENT_PROXY_HANDLERS.values():
        assert callable(getattr(libacp.Client, name)), name
        assert callable(getattr(libacp.AgentConnection, name)), name
    assert "session/fork" in libacp.UNSTABLE_METHODS
    assert "session/new" not in libacp.UNSTABLE_METHODS
    # The names of the official Python SDK where it has the method, of
    # libacp's Rust typed API (core/src/typed.rs) where it does not.
    assert AGENT_HANDLERS["session/fork"] == "fork_session"
    assert AGENT_HANDLERS["providers/set"] == "set_provider"
    assert AGENT_HANDLERS["session/status"] == "session_status"


def test_generated_models_are_current():
    gen = ROOT / "bindings" / "python" / "codegen" / "generate_schema.py"
    out = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_every_spec_method_gets_a_python_name_or_the_generator_fails():
    path = ROOT / "bindings" / "python" / "codegen" / "generate_schema.py"
    spec = importlib.util.spec_from_file_location("generate_schema", path)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.python_name("session/set_mode") == "set_session_mode"
    assert gen.python_name("terminal/wait_for_exit") == "wait_for_terminal_exit"
    assert gen.python_name("session/fork") == "fork_session"
    with pytest.raises(SystemExit, match="no Python name for session/frobnicate"):
        gen.python_name("session/frobnicate")
    schema = ROOT / "spec" / "ts-sdk-2.4.0" / "v1"
    defs = json.loads((schema / "schema.unstable.json").read_text())["$defs"]
    stable = json.loads((schema / "schema.json").read_text())["$defs"]
    for name in ("TerminalOutputRequest", "TerminalOutputResponse"):
        del defs[name]
    with pytest.raises(SystemExit, match="PYTHON_NAMES names methods the schema does not have"):
        gen.methods_module(defs, stable, ("0", "0"))
    # A proxy method of the schema that PROXY_HANDLED_BY does not give to a
    # role fails too.
    defs["FrobProxyNotification"] = {"x-side": "proxy", "x-method": "proxy/frob"}
    with pytest.raises(SystemExit, match="PROXY_HANDLED_BY"):
        gen.proxy_methods(defs)


def test_models_are_plain_dicts():
    block = acp.TextContentBlock(type="text", text="hi")
    assert block == {"type": "text", "text": "hi"} and type(block) is dict
    assert acp.PromptRequest.__required_keys__ == frozenset({"sessionId", "prompt"})
    assert "_meta" in acp.PromptRequest.__optional_keys__
