"""Bad option values raise TypeError/ValueError with a message naming the
option, before anything is started (no panic, no process, no fd leak)."""

import asyncio
import math
import os
import socket
import sys

import libacp
import pytest
from libacp import _libacp

BAD_OPTIONS = [
    (
        {"framing": "xml"},
        ValueError,
        '`framing` must be one of "ndjson", "content-length", not "xml"',
    ),
    ({"framing": 1}, TypeError, "`framing` must be a string, not a number"),
    (
        {"max_frame_size": 0},
        ValueError,
        "`max_frame_size` must be from 1 to 9007199254740992, not 0",
    ),
    ({"max_frame_size": -5}, ValueError, "`max_frame_size` must be from 1 to .*, not -5"),
    ({"max_frame_size": 2**70}, ValueError, "`max_frame_size` must be a whole number from 1 to"),
    ({"max_frame_size": 1.5}, ValueError, "`max_frame_size` must be a whole number .*, not 1.5"),
    ({"max_frame_size": True}, TypeError, "`max_frame_size` must be a whole number, not a boolean"),
    ({"outgoing_queue": 0}, ValueError, "`outgoing_queue` must be from 1 to 16777216, not 0"),
    ({"incoming_queue": 2**25}, ValueError, "`incoming_queue` must be from 1 to 16777216"),
    ({"incoming_requests": 0}, ValueError, "`incoming_requests` must be from 1 to 16777216"),
    (
        {"request_timeout_ms": -1},
        ValueError,
        "`request_timeout_ms` must be a finite number of milliseconds, more than 0, not -1",
    ),
    ({"request_timeout_ms": 0}, ValueError, "`request_timeout_ms` .* more than 0, not 0"),
    ({"request_timeout_ms": math.nan}, ValueError, "`request_timeout_ms` .* not NaN"),
    (
        {"request_timeout_ms": "1"},
        TypeError,
        "`request_timeout_ms` must be a number of milliseconds, not a string",
    ),
    ({"request_timeout_ms": 1e300}, ValueError, "`request_timeout_ms` must be a finite number"),
    ({"flush_timeout_ms": -0.5}, ValueError, "`flush_timeout_ms` .* 0 or more, not -0.5"),
    ({"flush_timeout_ms": math.inf}, ValueError, "`flush_timeout_ms` .* not inf"),
    ({"trace": "loud"}, ValueError, "trace must be a callable, True or \"logging\", not 'loud'"),
    ({"trace": 3}, TypeError, 'trace must be a callable, True or "logging", not int'),
    ({"events": "log"}, TypeError, "events must be callable, not str"),
    ({"fs": 1}, TypeError, "`fs` must be a boolean, not a number"),
    ({"session_model": "yes"}, TypeError, "`session_model` must be a boolean, not a string"),
    ({"terminals": 1}, TypeError, "`terminals` must be a boolean, not a number"),
    # Where an option applies is checked before its value (a client here).
    ({"require_auth": "no"}, ValueError, "`require_auth` does not apply here"),
    ({"fs": {1, 2}}, TypeError, "`fs` cannot be a set"),
    ({"colour": True}, TypeError, "unknown option `colour` \\(the options are: framing, "),
    ({"colour": None}, TypeError, "unknown option `colour`"),
    # The names before the option table (seconds, two names for one option).
    ({"request_timeout": 1}, TypeError, "unknown option `request_timeout`"),
    ({"flush_timeout": 1}, TypeError, "unknown option `flush_timeout`"),
    ({"terminal": True}, TypeError, "unknown option `terminal`"),
    # Options of other constructors: refused, not ignored.
    ({"cwd": "/tmp"}, ValueError, "`cwd` does not apply here: it applies to a client spawning"),
    ({"stderr": print}, ValueError, "`stderr` does not apply here: it is a callback"),
    ({"headers": {"A": "b"}}, ValueError, "`headers` does not apply here"),
    ({"bearer_tokens": ["t"]}, ValueError, "`bearer_tokens` does not apply here"),
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
        ("agent", "session_model", "client"),
    ],
)
async def test_option_of_the_other_role_is_refused(role, option, side):
    # The core's NotApplicable refusal, whatever the value (False too: the
    # option means nothing on this side).
    for value in (True, False):
        a, b = socket.socketpair()
        with pytest.raises(
            ValueError, match=f"`{option}` does not apply here: it applies to {side} connections"
        ):
            libacp.Connection.from_socket(a, role=role, **{option: value})
        a.close()
        b.close()


def table(use, *roles):
    """The names of the core's option table for a constructor."""
    return {
        row["name"]
        for row in _libacp.option_table()
        if use in row["uses"] and any(r in row["roles"] for r in roles)
    }


def keys(typed_dict):
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)


def test_the_typed_options_are_the_core_tables():
    # Each constructor's TypedDict lists exactly the options the core's table
    # applies to it (a renamed, added or removed option fails here).
    assert keys(libacp.ConnectionOptions) == table("local", "client", "agent")
    assert keys(libacp.SpawnOptions) == table("spawn", "client")
    assert keys(libacp.RemoteOptions) == table("connect", "client")
    assert keys(libacp.ServerOptions) == table("serve", "agent")
    assert keys(libacp.CommonOptions) == table("local", "client") & table("serve", "agent")
    names = {row["name"] for row in _libacp.option_table()}
    assert {"request_timeout_ms", "flush_timeout_ms", "terminals"} <= names
    assert not {"request_timeout", "flush_timeout", "terminal", "shutdown_grace"} & names


@pytest.mark.parametrize("role", ["client", "agent"])
async def test_none_keeps_every_default(role):
    a, b = socket.socketpair()
    none = {
        row["name"]: None
        for row in _libacp.option_table()
        if "local" in row["uses"] and role in row["roles"]
    }
    assert "framing" in none and "request_timeout_ms" in none
    async with libacp.Connection.from_socket(a, role=role, **none) as conn:
        assert conn.role == role
    b.close()


@pytest.mark.parametrize(
    "kwargs,exc,message",
    [
        ({"clear_env": 1}, TypeError, "`clear_env` must be a boolean, not a number"),
        (
            {"grace_after_stdin_close_ms": "1"},
            TypeError,
            "`grace_after_stdin_close_ms` must be a number of milliseconds, not a string",
        ),
        (
            {"grace_after_sigterm_ms": -1},
            ValueError,
            "`grace_after_sigterm_ms` must be a finite number of milliseconds, 0 or more",
        ),
        ({"shutdown_grace": 1}, TypeError, "unknown option `shutdown_grace`"),
        ({"stderr": 5}, TypeError, "`stderr` must be callable, not int"),
        ({"env": {"A=B": "x"}}, ValueError, '`env` holds "A=B", which is not a valid name'),
        ({"env": {"": "x"}}, ValueError, "which is not a valid name"),
        ({"env": [("A", 1)]}, TypeError, "`env` cannot be a list"),
        ({"cwd": 5}, TypeError, "`cwd` must be a string, not a number"),
        ({"headers": {"A": "b"}}, ValueError, "`headers` does not apply here"),
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
