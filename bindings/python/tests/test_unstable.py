"""The unstable v1 extensions through the Python binding: the connection
option ``unstable``, the typed API of every unstable method (both roles in
Python over a socketpair), the ``payload_rule`` engine event and the session
model's notices and compactions."""

import asyncio
import json
import socket
from typing import Any, List, Tuple

import libacp
import pytest
from libacp import schema as acp

TIMEOUT = 20
ALL = {"unstable": ["all"]}
SESSION_CAPS: acp.SessionCapabilities = {"fork": {}, "archive": {}, "status": {}, "title": {}}


class UnstableAgent(libacp.Agent):
    """Implements every unstable agent method; a prompt calls the client's
    ``mcp/message`` and sends ``auth/status_update``."""

    def __init__(self, advertise: bool = True) -> None:
        self.advertise = advertise
        self.seen: List[Tuple[str, Any]] = []

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        caps: acp.AgentCapabilities = {}
        if self.advertise:
            caps = {
                "sessionCapabilities": SESSION_CAPS,
                "auth": {"status": {}},
                "providers": {},
            }
        return {"protocolVersion": 1, "agentCapabilities": caps}

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return {"sessionId": "s1"}

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        tools = await self.client.mcp_message(
            {"serverId": "editor-tools", "requestId": "r1", "method": "tools/list"}
        )
        await self.client.auth_status_update({"state": "authenticated"})
        return {
            "stopReason": "end_turn",
            "_meta": {"session": params["sessionId"], "tools": tools, "seen": len(self.seen)},
        }

    async def fork_session(self, params: acp.ForkSessionRequest) -> acp.ForkSessionResponse:
        self.seen.append(("fork", params))
        return {"sessionId": f"{params['sessionId']}-fork"}

    async def archive_session(
        self, params: acp.ArchiveSessionRequest
    ) -> acp.ArchiveSessionResponse:
        self.seen.append(("archive", params))
        return {}

    async def unarchive_session(
        self, params: acp.UnarchiveSessionRequest
    ) -> acp.UnarchiveSessionResponse:
        self.seen.append(("unarchive", params))
        return {}

    async def session_status(self, params: acp.SessionStatusRequest) -> acp.SessionStatusResponse:
        # A status this schema does not list: decoded as it came.
        return {"status": "evicted" if params["sessionId"] == "gone" else "saved"}

    async def set_session_title(
        self, params: acp.SetSessionTitleRequest
    ) -> acp.SetSessionTitleResponse:
        return {"title": params["title"].strip()}

    async def auth_status(self, params: acp.AuthStatusRequest) -> acp.AuthStatusResponse:
        return {"state": "not_required", "accounts": [{"label": "Local", "active": True}]}

    async def list_providers(self, params: acp.ListProvidersRequest) -> acp.ListProvidersResponse:
        return {
            "providers": [
                {
                    "providerId": "main",
                    "supported": ["openai", "future-protocol"],
                    "required": False,
                    "futureMember": 1,  # type: ignore[typeddict-unknown-key]
                }
            ]
        }

    async def set_provider(self, params: acp.SetProviderRequest) -> acp.SetProviderResponse:
        self.seen.append(("set_provider", params))
        return {}

    async def disable_provider(
        self, params: acp.DisableProviderRequest
    ) -> acp.DisableProviderResponse:
        self.seen.append(("disable_provider", params))
        return {}

    async def mcp_message(self, params: acp.MessageMcpNotification) -> None:
        self.seen.append(("mcp", params))


class UnstableClient(libacp.Client):
    def __init__(self) -> None:
        self.seen: List[Tuple[str, Any]] = []

    async def mcp_message(self, params: acp.MessageMcpRequest) -> acp.MessageMcpResponse:
        self.seen.append(("mcp", params["method"]))
        return {"result": {"tools": []}}

    async def auth_status_update(self, params: acp.AuthStatusUpdateNotification) -> None:
        self.seen.append(("auth", params["state"]))


async def pair(agent: Any, client: Any, agent_options=None, client_options=None):
    a, b = socket.socketpair()
    agent_conn = libacp.AgentConnection.from_socket(a, agent, **(agent_options or {}))
    conn = libacp.ClientConnection.from_socket(b, client, **(client_options or {}))
    await asyncio.wait_for(
        conn.initialize({"protocolVersion": 1, "clientCapabilities": {}}), TIMEOUT
    )
    return agent_conn, conn


async def test_every_unstable_method_round_trips_typed():
    agent, client = UnstableAgent(), UnstableClient()
    agent_conn, conn = await pair(agent, client, ALL, ALL)
    async with agent_conn, conn:
        s1 = (await conn.new_session({"cwd": "/tmp", "mcpServers": []}))["sessionId"]
        fork = await conn.fork_session({"sessionId": s1, "cwd": "/tmp"})
        assert fork == {"sessionId": "s1-fork"}
        assert await conn.session_status({"sessionId": "elsewhere"}) == {"status": "saved"}
        assert await conn.session_status({"sessionId": "gone"}) == {"status": "evicted"}
        title = await conn.set_session_title({"sessionId": fork["sessionId"], "title": " Tests "})
        assert title == {"title": "Tests"}
        auth = await conn.auth_status({})
        assert auth["state"] == "not_required" and auth["accounts"][0]["label"] == "Local"
        providers = await conn.list_providers({})
        assert providers["providers"][0]["supported"] == ["openai", "future-protocol"]
        assert providers["providers"][0]["futureMember"] == 1  # type: ignore[typeddict-item]
        provider: acp.SetProviderRequest = {
            "providerId": "main",
            "apiType": "openai",
            "baseUrl": "https://llm.example/v1",
        }
        assert await conn.set_provider(provider) == {}
        assert await conn.disable_provider({"providerId": "main"}) == {}
        # A notification to the agent, handled before the next request
        # starts (arrival order).
        await conn.mcp_message({"serverId": "editor-tools", "requestId": "r0", "method": "ping"})

        # The fork is open here: a prompt for it goes out, and the agent's
        # nested mcp/message and auth/status_update reach the typed client
        # before the prompt's answer.
        answer = await asyncio.wait_for(
            conn.prompt(
                {"sessionId": fork["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
            ),
            TIMEOUT,
        )
        meta = answer.get("_meta") or {}
        assert meta["session"] == "s1-fork"
        assert meta["tools"] == {"result": {"tools": []}}
        assert client.seen == [("mcp", "tools/list"), ("auth", "authenticated")]
        assert [kind for kind, _ in agent.seen] == [
            "fork",
            "set_provider",
            "disable_provider",
            "mcp",
        ]
        assert meta["seen"] == 4
        assert agent.seen[-1][1]["requestId"] == "r0"

        # Archived: closed on this connection, so a prompt for it is refused.
        assert await conn.archive_session({"sessionId": s1}) == {}
        with pytest.raises(libacp.RefusedError) as refused:
            await conn.prompt({"sessionId": s1, "prompt": [{"type": "text", "text": "hi"}]})
        assert refused.value.kind == "UnknownSession"
        assert await conn.unarchive_session({"sessionId": s1}) == {}
        assert agent.seen[-2:] == [
            ("archive", {"sessionId": "s1"}),
            ("unarchive", {"sessionId": "s1"}),
        ]


async def test_unstable_methods_are_gated_like_stable_ones_when_on():
    # The agent advertises none of them: each call is refused locally,
    # nothing is sent, and the agent's handlers never run.
    agent = UnstableAgent(advertise=False)
    agent_conn, conn = await pair(agent, libacp.Client(), ALL, ALL)
    async with agent_conn, conn:
        calls = [
            (conn.fork_session, {"sessionId": "s0", "cwd": "/tmp"}, "fork"),
            (conn.archive_session, {"sessionId": "s0"}, "archive"),
            (conn.session_status, {"sessionId": "s0"}, "status"),
            (conn.set_session_title, {"sessionId": "s0", "title": "t"}, "title"),
            (conn.auth_status, {}, "auth.status"),
            (conn.list_providers, {}, "providers"),
        ]
        for call, params, capability in calls:
            with pytest.raises(libacp.CapabilityError) as refused:
                await call(params)
            assert (refused.value.capability or "").endswith(capability)
        # mcp/message as a request is the client's to handle: refused here.
        with pytest.raises(libacp.RefusedError) as wrong:
            await conn.connection.request(
                "mcp/message", {"serverId": "m", "requestId": "r", "method": "x"}
            )
        assert wrong.value.kind == "WrongDirection"
        assert agent.seen == []


async def test_with_the_option_off_unstable_methods_pass_as_extension_methods():
    # Neither side turns the features on and the agent advertises nothing:
    # the core neither routes nor checks them (no capability, no session, a
    # relative cwd), and the typed hosts still get them.
    agent, client = UnstableAgent(advertise=False), UnstableClient()
    agent_conn, conn = await pair(agent, client)
    async with agent_conn, conn:
        fork = await conn.fork_session({"sessionId": "nowhere", "cwd": "relative"})
        assert fork == {"sessionId": "nowhere-fork"}
        assert await conn.session_status({"sessionId": "nowhere"}) == {"status": "saved"}
        assert await conn.auth_status({}) == {
            "state": "not_required",
            "accounts": [{"label": "Local", "active": True}],
        }
        await conn.mcp_message({"serverId": "m", "requestId": "r", "method": "ping"})
        # The reverse direction too: the agent's calls reach the typed client.
        tools = await agent_conn.mcp_message({"serverId": "m", "requestId": "r", "method": "t"})
        assert tools == {"result": {"tools": []}}
        await agent_conn.auth_status_update({"state": "unauthenticated"})
        # Each kind goes to its own handler only: a request named like a
        # notification method (and the reverse) is not passed to it.
        with pytest.raises(libacp.RequestError) as err:
            await conn.connection.request(
                "mcp/message", {"serverId": "m", "requestId": "x", "method": "ping"}
            )
        assert err.value.code == -32601
        await conn.connection.notify("session/fork", {"sessionId": "x", "cwd": "/tmp"})
        # Requests start in arrival order: the notifications above were
        # handled (or dropped) before this one runs.
        assert await conn.session_status({"sessionId": "s"}) == {"status": "saved"}
        assert [kind for kind, _ in agent.seen] == ["fork", "mcp"]
        for _ in range(100):
            if len(client.seen) == 2:
                break
            await asyncio.sleep(0.01)
        assert client.seen == [("mcp", "t"), ("auth", "unauthenticated")]


async def test_an_unknown_feature_is_an_option_error():
    a, b = socket.socketpair()
    try:
        with pytest.raises(ValueError, match=r'unstable.*"forks".*"unstable_session_fork"'):
            libacp.AgentConnection.from_socket(a, libacp.Agent(), unstable=["forks"])
        with pytest.raises(ValueError, match='"nope"'):
            libacp.Connection.from_socket(b, object(), role="client", unstable=["all", "nope"])
        with pytest.raises(TypeError, match="unstable"):
            libacp.Connection.from_socket(b, object(), role="client", unstable="all")  # type: ignore[arg-type]
    finally:
        a.close()
        b.close()


async def test_both_spellings_of_a_feature_turn_it_on():
    for name in ("session_fork", "unstable_session_fork"):
        agent = UnstableAgent()
        options = {"unstable": [name]}
        agent_conn, conn = await pair(agent, UnstableClient(), options, options)
        async with agent_conn, conn:
            # On: validated (a relative cwd is refused locally)...
            with pytest.raises(libacp.InvalidParams):
                await conn.fork_session({"sessionId": "s0", "cwd": "relative"})
            # ... and the fork's session is open afterwards.
            fork = await conn.fork_session({"sessionId": "s0", "cwd": "/tmp"})
            answer = await asyncio.wait_for(
                conn.prompt(
                    {"sessionId": fork["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
                ),
                TIMEOUT,
            )
            assert answer["stopReason"] == "end_turn"


class ConfigAgent(libacp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return {"protocolVersion": 1, "agentCapabilities": {}}

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        fast: acp.SessionConfigSelectOption = {"value": "fast", "name": "Fast"}
        return {
            "sessionId": "s1",
            "configOptions": [
                {"id": "thinking", "name": "Thinking", "type": "boolean", "currentValue": False},
                {
                    "id": "model",
                    "name": "Model",
                    "type": "select",
                    "currentValue": "fast",
                    "options": [fast],
                },
            ],
        }


async def test_payload_rule_events_reach_the_event_hook():
    events: List[libacp.Event] = []
    agent_conn, conn = await pair(ConfigAgent(), libacp.Client(), {"events": events.append})
    async with agent_conn, conn:
        session = await conn.new_session({"cwd": "/tmp", "mcpServers": []})
        # The client did not advertise session.configOptions.boolean: the
        # boolean option was removed from the answer, the select one kept.
        assert [o["id"] for o in session.get("configOptions") or []] == ["model"]
        for _ in range(200):
            if any(e.kind == "payload_rule" for e in events):
                break
            await asyncio.sleep(0.01)
    rules = [e for e in events if e.kind == "payload_rule"]
    assert len(rules) == 1, events
    assert rules[0].details == {
        "rule": "boolean_config_option",
        "withheld": True,
        "method": "session/new",
        "field": "/configOptions/0/type",
        "capability": "clientCapabilities.session.configOptions.boolean",
    }
    assert "clientCapabilities.session.configOptions.boolean" in rules[0].message


async def test_payload_rule_event_for_what_the_peer_sent():
    # A raw agent answers with a boolean config option the client did not
    # advertise: delivered as received, and reported (withheld False).
    events: List[libacp.Event] = []
    lib_end, raw = socket.socketpair()
    conn = libacp.Connection.from_socket(lib_end, object(), role="client", events=events.append)
    reader, writer = await asyncio.open_connection(sock=raw)

    async def answer(result: Any) -> None:
        request = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))
        frame = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        writer.write(json.dumps(frame).encode() + b"\n")
        await writer.drain()

    async with conn:
        init = asyncio.ensure_future(
            conn.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        )
        await answer({"protocolVersion": 1, "agentCapabilities": {}})
        await asyncio.wait_for(init, TIMEOUT)
        new = asyncio.ensure_future(conn.request("session/new", {"cwd": "/tmp", "mcpServers": []}))
        option = {"id": "t", "name": "T", "type": "boolean", "currentValue": True}
        await answer({"sessionId": "s1", "configOptions": [option]})
        assert (await asyncio.wait_for(new, TIMEOUT))["configOptions"] == [option]
        for _ in range(200):
            if any(e.kind == "payload_rule" for e in events):
                break
            await asyncio.sleep(0.01)
    writer.close()
    rules = [e.details for e in events if e.kind == "payload_rule"]
    assert rules == [
        {
            "rule": "boolean_config_option",
            "withheld": False,
            "method": "session/new",
            "field": "/configOptions/0/type",
            "capability": "clientCapabilities.session.configOptions.boolean",
        }
    ]


class NoticeAgent(libacp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return {"protocolVersion": 1, "agentCapabilities": {}}

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return {"sessionId": "s1"}

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        updates: List[acp.SessionUpdate] = [
            {"sessionUpdate": "notice", "severity": "warning", "title": "Slow"},
            {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"},
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "c1",
                "content": {"type": "text", "text": "Summary."},
            },
        ]
        for update in updates:
            await self.client.session_update({"sessionId": "s1", "update": update})
        return {"stopReason": "end_turn"}


async def test_session_snapshot_shows_notices_and_compactions():
    a, b = socket.socketpair()
    agent_conn = libacp.AgentConnection.from_socket(a, NoticeAgent())
    conn = libacp.ClientConnection.from_socket(b, session_model=True)
    async with agent_conn, conn:
        await conn.initialize(
            {
                "protocolVersion": 1,
                "clientCapabilities": {"session": {"notices": {}, "compaction": {}}},
            }
        )
        await conn.new_session({"cwd": "/tmp", "mcpServers": []})
        await asyncio.wait_for(
            conn.prompt({"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}), TIMEOUT
        )
        snapshot = conn.connection.session_snapshot("s1")
    assert snapshot is not None
    assert [(n["severity"], n["title"]) for n in snapshot["notices"]] == [("warning", "Slow")]
    assert snapshot["noticesDropped"] == 0
    [compaction] = snapshot["compactions"]
    assert compaction["compactionId"] == "c1"
    assert compaction["status"] == "in_progress"
    assert compaction["summaryText"] == "Summary."
    assert {"type": "compaction", "compactionId": "c1"} in snapshot["entries"]
