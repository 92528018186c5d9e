"""Bad option values raise TypeError/ValueError with a message naming the
option, before anything is started (no panic, no process, no fd leak)."""

import asyncio
import math
import os
import socket
import sys

import libacp
import pytest

BAD_OPTIONS = [
    ({"framing": "xml"}, ValueError, 'framing must be "ndjson" or "content-length", not "xml"'),
    ({"framing": 1}, TypeError, "framing must be a str, not int"),
    ({"max_frame_size": 0}, ValueError, "max_frame_size must be between 1 and"),
    ({"max_frame_size": -5}, ValueError, "max_frame_size must be between 1 and .*, not -5"),
    ({"max_frame_size": 2**70}, ValueError, "max_frame_size must be between 1 and"),
    ({"max_frame_size": 1.5}, TypeError, "max_frame_size must be an int, not float"),
    ({"max_frame_size": True}, TypeError, "max_frame_size must be an int, not bool"),
    ({"outgoing_queue": 0}, ValueError, "outgoing_queue must be between 1 and 16777216, not 0"),
    ({"incoming_queue": 2**25}, ValueError, "incoming_queue must be between 1 and 16777216"),
    (
        {"request_timeout": -1},
        ValueError,
        "request_timeout must be a finite number of seconds, more than 0, not -1",
    ),
    ({"request_timeout": 0}, ValueError, "request_timeout .* more than 0, not 0"),
    ({"request_timeout": math.nan}, ValueError, "request_timeout .* not nan"),
    (
        {"request_timeout": "1"},
        TypeError,
        r"request_timeout must be a number of seconds \(int or "
        r"float\), not str",
    ),
    ({"request_timeout": 1e300}, ValueError, "request_timeout: 1e\\+300 seconds is too long"),
    ({"flush_timeout": -0.5}, ValueError, "flush_timeout .* 0 or more, not -0.5"),
    ({"flush_timeout": math.inf}, ValueError, "flush_timeout .* not inf"),
    ({"trace": "loud"}, ValueError, "trace must be a callable, True or \"logging\", not 'loud'"),
    ({"trace": 3}, TypeError, 'trace must be a callable, True or "logging", not int'),
    ({"events": "log"}, TypeError, "events must be callable, not str"),
    ({"fs": 1}, TypeError, "fs must be a bool, not int"),
    ({"session_model": "yes"}, TypeError, "session_model must be a bool, not str"),
    ({"terminals": 1}, TypeError, "terminals must be a bool, not int"),
    ({"terminal": 1}, TypeError, "terminal must be a bool, not int"),
    ({"require_auth": "no"}, TypeError, "require_auth must be a bool, not str"),
    ({"colour": True}, TypeError, 'unexpected option "colour" \\(the options are: framing, '),
    ({"colour": None}, TypeError, 'unexpected option "colour"'),
]


@pytest.mark.parametrize(
    "options,exc,message",
    BAD_OPTIONS,
    ids=[next(iter(o)) + "=" + repr(next(iter(o.values()))) for o, _, _ in BAD_OPTIONS],
)
async def test_bad_option_is_refused_and_the_socket_left_alone(options, exc, message):
    a, b = socket.socketpair()
    with pytest.raises(exc, match=message):
        libacp.Connection.from_socket(a, role="client", **options)
    # Refused before the connection took it: still the caller's, still open.
    a.sendall(b"x")
    assert b.recv(1) == b"x"
    a.close()
    b.close()


@pytest.mark.parametrize("options,exc,message", BAD_OPTIONS[:3])
async def test_bad_option_on_every_constructor(options, exc, message):
    with pytest.raises(exc, match=message):
        libacp.Connection.from_stdio(**options)
    r, w = os.pipe()
    try:
        with pytest.raises(exc, match=message):
            libacp.Connection.from_fds(r, w, role="agent", **options)
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(exc, match=message):
        libacp.Connection.spawn_agent([sys.executable, "-c", "raise SystemExit(9)"], **options)


@pytest.mark.parametrize(
    "role,option,side",
    [
        ("client", "require_auth", "agent"),
        ("agent", "fs", "client"),
        ("agent", "terminals", "client"),
        ("agent", "terminal", "client"),
        ("agent", "session_model", "client"),
    ],
)
async def test_option_of_the_other_role_is_refused(role, option, side):
    a, b = socket.socketpair()
    with pytest.raises(
        ValueError, match=f"{option} applies to the {side} side; this connection is the {role}"
    ):
        libacp.Connection.from_socket(a, role=role, **{option: True})
    a.close()
    b.close()
    # False is the default and fine on either side.
    a, b = socket.socketpair()
    async with libacp.Connection.from_socket(a, role=role, **{option: False}):
        pass
    b.close()


async def test_none_keeps_every_default():
    a, b = socket.socketpair()
    none = {name: None for name in libacp.ConnectionOptions.__annotations__}
    async with libacp.Connection.from_socket(a, role="client", **none) as conn:
        assert conn.role == "client"
    b.close()


@pytest.mark.parametrize(
    "kwargs,exc,message",
    [
        ({"clear_env": 1}, TypeError, "clear_env must be a bool, not int"),
        ({"shutdown_grace": "1"}, TypeError, "shutdown_grace must be a number of seconds"),
        ({"shutdown_grace": -1}, ValueError, "shutdown_grace must be a finite number of seconds"),
        (
            {"shutdown_grace": (1,)},
            ValueError,
            r"shutdown_grace must be seconds or a pair "
            r"\(after_stdin_close, after_sigterm\), not 1 items",
        ),
        ({"shutdown_grace": (1, -2)}, ValueError, r"shutdown_grace\[1\] must be a finite number"),
        ({"stderr": 5}, TypeError, "stderr must be callable, not int"),
        ({"env": {"A=B": "x"}}, ValueError, 'env: "A=B" is not a valid environment variable name'),
        ({"env": {"": "x"}}, ValueError, "is not a valid environment variable name"),
    ],
)
async def test_bad_spawn_arguments(kwargs, exc, message, tmp_path):
    marker = tmp_path / "started"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    with pytest.raises(exc, match=message):
        libacp.Connection.spawn_agent(argv, **kwargs)
    await asyncio.sleep(0.2)
    assert not marker.exists()  # refused before anything was started


async def test_empty_program_is_refused():
    with pytest.raises(ValueError, match="argv must name a program"):
        libacp.Connection.spawn_agent([])
    with pytest.raises(ValueError, match="the program\\) is empty"):
        libacp.Connection.spawn_agent([""])


async def test_bad_request_timeout():
    a, b = socket.socketpair()
    async with libacp.Connection.from_socket(a, role="client") as conn:
        with pytest.raises(
            ValueError, match="timeout must be a finite number of seconds, more than 0, not -1"
        ):
            await conn.request("initialize", {}, timeout=-1)
        with pytest.raises(TypeError, match="timeout must be a number of seconds"):
            await conn.request("initialize", {}, timeout="soon")  # type: ignore[arg-type]
    b.close()
