"""Python values <-> JSON at the binding's edge: what a handler returns and
what the peer sends arrive intact (unicode, escapes, 64-bit integers,
floats, nesting, tuples), and values that are not JSON are refused with the
member's path, nothing sent."""

import asyncio
import socket

import libacp
import pytest

TIMEOUT = 20

TRICKY = {
    "text": 'quotes " backslash \\ newline \n tab \t nul \x00 bell \x07',
    "unicode": "é 😀 \u2028 \ud7ff",
    "ints": [0, -1, 2**53 + 1, -(2**63), 2**64 - 1],
    "floats": [0.5, -1e-300, 1.7976931348623157e308],
    "bools": [True, False, None],
    "nested": {"a": [{"b": [[[]], {}]}], "": "empty key"},
    "tuple": (1, "two", [3]),
}
EXPECTED = dict(TRICKY, tuple=[1, "two", [3]])


class Echo:
    def __init__(self) -> None:
        self.seen = []

    async def on_request(self, method, params, request):
        if method == "initialize":
            return {"protocolVersion": 1, "agentCapabilities": {}}
        self.seen.append(params)
        return params  # back as the result, converted both ways twice


async def pair(echo=None):
    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, echo or Echo(), role="agent")
    client = libacp.Connection.from_socket(b, None, role="client")
    await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    return agent, client


async def test_values_survive_the_round_trip_exactly():
    agent, client = await pair()
    got = await asyncio.wait_for(client.request("_ext/echo", TRICKY), TIMEOUT)
    assert got == EXPECTED
    assert isinstance(got["ints"][2], int) and isinstance(got["floats"][0], float)
    assert got["bools"][0] is True and got["bools"][2] is None
    # A list as params, and a large payload.
    big = ["x" * 100_000, {"y": "\\" * 50_000}]
    assert await asyncio.wait_for(client.request("_ext/echo", big), TIMEOUT) == big
    await client.close()
    await agent.close()


@pytest.mark.parametrize(
    "params, where",
    [
        ({"a": {1, 2}}, "params.a: set is not JSON"),
        ({"a": [1, {"b": object()}]}, "params.a[1].b: object is not JSON"),
        ({"a": {3: "x"}}, "params.a: keys must be str, not int"),
        ({"f": float("nan")}, "params.f: NaN is not a JSON number"),
        ({"i": 2**64}, "params.i: integer out of the 64-bit range"),
        (5, "params must be a dict or a list, not int"),
        ({1, 2}, "params must be a dict or a list, not set"),
    ],
)
async def test_values_that_are_not_json_are_refused_with_their_path(params, where):
    echo = Echo()
    agent, client = await pair(echo)
    with pytest.raises(libacp.InvalidParams) as err:
        await client.request("_ext/echo", params)
    assert where in err.value.detail
    # Nothing was sent: the agent's first request is the next one.
    assert await client.request("_ext/echo", {"ok": 1}) == {"ok": 1}
    assert echo.seen == [{"ok": 1}]
    await client.close()
    await agent.close()


async def test_too_deep_nesting_is_refused_not_overflowed():
    agent, client = await pair()
    deep: list = []
    node = deep
    for _ in range(600):
        node.append([])
        node = node[0]
    with pytest.raises(libacp.InvalidParams) as err:
        await client.request("_ext/echo", {"deep": deep})
    assert "nested deeper than" in err.value.detail
    await client.close()
    await agent.close()


async def test_a_result_that_is_not_json_answers_internal_error():
    class Bad:
        async def on_request(self, method, params, request):
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": {}}
            return {"when": object()}

    a, b = socket.socketpair()
    agent = libacp.Connection.from_socket(a, Bad(), role="agent")
    client = libacp.Connection.from_socket(b, None, role="client")
    await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    with pytest.raises(libacp.RequestError) as err:
        await client.request("_ext/x", {})
    assert err.value.code == -32603
    assert "result.when: object is not JSON" in str(err.value.data)
    await client.close()
    await agent.close()


def test_request_error_text_shows_its_data_capped():
    plain = libacp.RequestError(-32603, "Internal error")
    assert str(plain) == "JSON-RPC error -32603: Internal error"
    why = libacp.RequestError(-32000, "Authentication required", {"authMethods": [{"id": "key"}]})
    assert str(why) == (
        'JSON-RPC error -32000: Authentication required (data: {"authMethods": [{"id": "key"}]})'
    )
    assert why.data == {"authMethods": [{"id": "key"}]}
    big = str(libacp.RequestError(1, "m", "x" * 10_000))
    assert len(big) < 700 and big.endswith("(10002 characters))")
