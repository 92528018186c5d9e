"""Proxy chains (unstable ``proxy_chains``) through the typed API: a
conductor (a typed client) and a proxy (a typed agent) over a socketpair,
both with the feature on. The conductor initializes the proxy with
``proxy_initialize``; the proxy reaches its successor with
``proxy_successor`` (a request and a notification), which the conductor's
typed handlers get; the conductor delivers the successor's messages to the
proxy's typed handlers. Methods a host does not override answer ``-32601``
(requests) or are ignored (notifications)."""

import asyncio
import socket
from typing import Any, List, Optional, Tuple

import libacp
import pytest
from libacp import schema as acp

TIMEOUT = 20
PROXY_CHAINS = {"unstable": ["proxy_chains"]}
CLIENT_INIT: acp.InitializeRequest = {"protocolVersion": 1, "clientCapabilities": {}}


class Proxy(libacp.Agent):
    """Initializes its successor through the conductor before answering
    ``proxy/initialize``; answers what the conductor delivers after sending
    its successor a notification."""

    def __init__(self) -> None:
        self.seen: List[Tuple[str, Any]] = []

    async def proxy_initialize(
        self, params: acp.InitializeProxyRequest
    ) -> acp.InitializeProxyResponse:
        self.seen.append(("proxy_initialize", params))
        successor = await self.client.proxy_successor({"method": "initialize", "params": params})
        answer: acp.InitializeResponse = successor
        return answer

    async def proxy_successor(
        self, params: acp.ProxySuccessorRequest
    ) -> acp.ProxySuccessorResponse:
        self.seen.append(("request", params))
        await self.client.proxy_successor_notification(
            {"method": "_chain/hello", "params": {"from": "proxy"}}
        )
        return {"handledBy": "proxy", "method": params["method"], "seen": len(self.seen)}

    async def proxy_successor_notification(self, params: acp.ProxySuccessorNotification) -> None:
        self.seen.append(("notification", params))


class Conductor(libacp.Client):
    """Plays the proxy's successor: answers the forwarded ``initialize``."""

    def __init__(self) -> None:
        self.seen: List[Tuple[str, Any]] = []

    async def proxy_successor(
        self, params: acp.ProxySuccessorRequest
    ) -> acp.ProxySuccessorResponse:
        self.seen.append(("request", params))
        if params["method"] == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        raise libacp.RequestError(-32602, "the successor refused", {"method": params["method"]})

    async def proxy_successor_notification(self, params: acp.ProxySuccessorNotification) -> None:
        self.seen.append(("notification", params))


async def chain(
    proxy: Any, conductor: Any, options: Optional[dict] = None
) -> Tuple[libacp.AgentConnection, libacp.ClientConnection]:
    a, b = socket.socketpair()
    options = PROXY_CHAINS if options is None else options
    proxy_conn = libacp.AgentConnection.from_socket(a, proxy, **options)
    conn = libacp.ClientConnection.from_socket(b, conductor, **options)
    return proxy_conn, conn


async def test_a_typed_conductor_and_proxy_round_trip_every_proxy_method():
    proxy, conductor = Proxy(), Conductor()
    proxy_conn, conn = await chain(proxy, conductor)
    async with proxy_conn, conn:
        # proxy/initialize: the proxy's typed handler runs, forwards
        # initialize to its successor (the conductor's typed handler) and
        # answers with the successor's answer.
        init = await asyncio.wait_for(conn.proxy_initialize(CLIENT_INIT), TIMEOUT)
        assert init == {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        assert proxy.seen == [("proxy_initialize", CLIENT_INIT)]
        assert conductor.seen == [("request", {"method": "initialize", "params": CLIENT_INIT})]
        # proxy/initialize was this connection's initialize.
        assert conn.protocol_version == 1
        with pytest.raises(libacp.RefusedError) as again:
            await conn.initialize(CLIENT_INIT)
        assert again.value.kind == "AlreadyInitialized"

        # The conductor delivers the successor's messages to the proxy: a
        # notification, handled before the next request starts (arrival
        # order), then a request whose answer round-trips unchanged. The
        # proxy's handler sends its successor a notification first, which
        # the conductor's typed handler has seen when the answer arrives.
        update = {"sessionId": "s1", "update": {"sessionUpdate": "plan", "entries": []}}
        await conn.proxy_successor_notification({"method": "session/update", "params": update})
        answer = await asyncio.wait_for(
            conn.proxy_successor({"method": "session/request_permission", "params": {"x": 1}}),
            TIMEOUT,
        )
        assert answer == {
            "handledBy": "proxy",
            "method": "session/request_permission",
            "seen": 3,
        }
        assert proxy.seen[1:] == [
            ("notification", {"method": "session/update", "params": update}),
            ("request", {"method": "session/request_permission", "params": {"x": 1}}),
        ]
        assert conductor.seen[1:] == [
            ("notification", {"method": "_chain/hello", "params": {"from": "proxy"}})
        ]

        # The successor's error comes back to the proxy as the error of its
        # proxy/successor call, unchanged.
        with pytest.raises(libacp.RequestError) as refused:
            await proxy_conn.proxy_successor({"method": "session/new", "params": {}})
        assert refused.value.code == -32602
        assert refused.value.data == {"method": "session/new"}
        assert conductor.seen[-1] == ("request", {"method": "session/new", "params": {}})


class Plain(libacp.Agent):
    """Not a proxy: overrides no proxy method."""

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return {"protocolVersion": 1, "agentCapabilities": {}}


class Forwarder(libacp.Agent):
    """A proxy whose conductor overrides no proxy method: records how its
    forwarding is answered."""

    def __init__(self) -> None:
        self.errors: List[int] = []

    async def proxy_initialize(
        self, params: acp.InitializeProxyRequest
    ) -> acp.InitializeProxyResponse:
        try:
            await self.client.proxy_successor({"method": "initialize", "params": params})
        except libacp.RequestError as err:
            self.errors.append(err.code)
        return {"protocolVersion": 1, "agentCapabilities": {}}

    async def ext_method(self, method: str, params: Any) -> Any:
        # Once initialized: a notification and a request to the successor.
        await self.client.proxy_successor_notification({"method": "_chain/hello"})
        try:
            return await self.client.proxy_successor({"method": "session/new", "params": {}})
        except libacp.RequestError as err:
            self.errors.append(err.code)
            return {"errors": self.errors}


async def test_proxy_methods_not_overridden_answer_method_not_found():
    # A plain agent: proxy/initialize is -32601, and the connection is
    # still not initialized (initialize works afterwards).
    proxy_conn, conn = await chain(Plain(), libacp.Client())
    async with proxy_conn, conn:
        with pytest.raises(libacp.RequestError) as err:
            await asyncio.wait_for(conn.proxy_initialize(CLIENT_INIT), TIMEOUT)
        assert err.value.code == libacp.METHOD_NOT_FOUND
        assert (await conn.initialize(CLIENT_INIT))["protocolVersion"] == 1
        # The conductor's proxy/successor: -32601 for the request; the
        # notification is ignored (the connection goes on).
        await conn.proxy_successor_notification({"method": "session/update", "params": {}})
        with pytest.raises(libacp.RequestError) as err:
            await conn.proxy_successor({"method": "session/prompt", "params": {}})
        assert err.value.code == libacp.METHOD_NOT_FOUND

    # A default conductor (libacp.Client()): the proxy's forwarding request
    # is answered -32601, its notification ignored.
    forwarder = Forwarder()
    proxy_conn, conn = await chain(forwarder, None)
    async with proxy_conn, conn:
        init = await asyncio.wait_for(conn.proxy_initialize(CLIENT_INIT), TIMEOUT)
        assert init["protocolVersion"] == 1
        assert forwarder.errors == [libacp.METHOD_NOT_FOUND]
        answer = await asyncio.wait_for(conn.ext_method("_test/forward", {}), TIMEOUT)
        assert answer == {"errors": [libacp.METHOD_NOT_FOUND] * 2}


async def test_with_the_option_off_proxy_methods_reach_the_typed_handlers_unchecked():
    # Off, proxy/initialize is an extension method to the core: not an
    # initialize (no phase, no version check), and the typed hosts still
    # get it and proxy/successor.
    proxy, conductor = Proxy(), Conductor()
    proxy_conn, conn = await chain(proxy, conductor, {})
    async with proxy_conn, conn:
        init = await asyncio.wait_for(conn.proxy_initialize(CLIENT_INIT), TIMEOUT)
        assert init["agentCapabilities"] == {"loadSession": True}
        assert conn.protocol_version is None
        assert conductor.seen == [("request", {"method": "initialize", "params": CLIENT_INIT})]
