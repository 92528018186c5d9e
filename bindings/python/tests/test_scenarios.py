"""The shared, language-neutral scenarios (tests/scenarios/*.json) run through
the Python binding's dynamic API: one test per file (adding a file adds a
test). A scenario marked `known_failure` that fails is an XFAIL; one that
passes fails the test (XPASS: remove the marker). The runner itself is
scenario_runner.py; the last tests here check the runner (a runner that
passes everything is worthless)."""

import asyncio
import pathlib

import pytest
from conftest import peer
from scenario_runner import (
    SCENARIO_LIMIT,
    FormatError,
    Mismatch,
    StepFailure,
    fill,
    matches,
    pair_up,
    parse_scenario,
    run_scenario,
)

SCENARIOS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "scenarios"
FILES = sorted(p.stem for p in SCENARIOS.glob("*.json"))


def test_there_are_scenarios():
    assert FILES, f"no scenarios in {SCENARIOS}"


@pytest.mark.parametrize("reads", ["loop", "engine"])
@pytest.mark.parametrize("name", FILES)
async def test_scenario(name, reads, monkeypatch):
    # "loop": the event loop reads the transport itself (add_reader, the
    # default); "engine": libacp's own thread reads it (loops that cannot
    # watch descriptors). Both must behave alike.
    monkeypatch.setenv("LIBACP_PYTHON_DRIVE_READS", "1" if reads == "loop" else "0")
    sc = parse_scenario((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    # The runner bounds every step (5 s) and the scenario (60 s); this is a
    # last safety net so that nothing can hang the suite.
    failure = await asyncio.wait_for(run_scenario(sc), SCENARIO_LIMIT + 15)
    if sc.known_failure is not None:
        if failure is not None:
            pytest.xfail(f"known failure: {sc.known_failure}\n  {failure}")
        pytest.fail(
            f"marked known_failure ({sc.known_failure}) but passed (XPASS): remove the marker"
        )
    if failure is not None:
        pytest.fail(f"scenario {name}: {failure}", pytrace=False)


# Scenarios that cannot mean the same over a remote link, and why (as in the
# Rust runner, tests/rust/scenarios.rs); every other one must pass over
# every link.
NOT_REMOTE = {
    "peer_closes_mid_turn": "a remote transport has no half-close: the agent ending its "
    "output ends the connection, so no answer can follow",
}


@pytest.mark.parametrize("link", ["websocket", "http", "h2c"])
@pytest.mark.parametrize("name", FILES)
async def test_scenario_over_a_remote_link(name, link):
    # The libacp side served by libacp.serve (agent) or made by
    # Connection.connect (client); the raw peer's bytes cross libacp's
    # remote transport through libacp-remote-splice.
    if name in NOT_REMOTE:
        pytest.skip(NOT_REMOTE[name])
    sc = parse_scenario((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    failure = await asyncio.wait_for(
        run_scenario(sc, link, peer("libacp-remote-splice")), SCENARIO_LIMIT + 15
    )
    if sc.known_failure is not None:
        if failure is not None:
            pytest.xfail(f"known failure: {sc.known_failure}\n  {failure}")
        pytest.fail(
            f"marked known_failure ({sc.known_failure}) but passed (XPASS): remove the marker"
        )
    if failure is not None:
        pytest.fail(f"scenario {name} over {link}: {failure}", pytrace=False)


# ---------------------------------------------------------------------------
# The runner's own checks (the same as the Rust and C++ runners').


def ok(p, a, known=None):
    try:
        matches(p, a, known or {}, {})
        return True
    except Mismatch:
        return False


def test_patterns_match_as_documented():
    assert ok({"a": 1}, {"a": 1.0, "b": 2}), "subset, numbers by value"
    assert ok({"a": "$absent"}, {"b": 1})
    assert not ok({"a": "$absent"}, {"a": None})
    assert ok({"a": "$any"}, {"a": None})
    assert not ok({"a": "$any"}, {})
    assert not ok([1], [1, 2]), "arrays match whole"
    assert ok({"$one_of": ["x", "y"]}, "y")
    assert not ok({"$one_of": ["x", "y"]}, "z")
    assert ok("$$any", "$any")
    assert not ok("$$any", "other")
    assert ok("$/cancel_request", "$/cancel_request")
    assert not ok(1, True) and not ok(True, 1) and not ok(0, False), "booleans are not numbers"
    assert not ok(None, 0) and not ok("1", 1)

    bound = {}
    matches({"id": "$capture:id"}, {"id": 7}, {}, bound)
    assert bound == {"id": 7}
    assert ok("$ref:id", 7, bound)
    assert not ok("$ref:id", 8, bound)
    assert not ok("$ref:nothing", 8, bound)

    with pytest.raises(Mismatch) as m:
        matches(
            {"result": {"stopReason": "cancelled"}},
            {"id": 3, "result": {"stopReason": "end_turn"}},
            {},
            {},
        )
    assert (m.value.path, m.value.expected, m.value.got) == (
        "/result/stopReason",
        '"cancelled"',
        '"end_turn"',
    )

    assert fill({"id": "$ref:id", "m": "$$x", "l": ["$ref:id"]}, bound) == {
        "id": 7,
        "m": "$x",
        "l": [7],
    }
    with pytest.raises(StepFailure):
        fill({"a": "$any"}, {})
    with pytest.raises(StepFailure):
        fill("$ref:nothing", {})

    bound = {}
    assert pair_up(
        [{"id": "$capture:x"}, {"id": 1}], [{"id": 2}, {"id": 1}], [False, False], {}, bound
    )
    assert bound["x"] == 2, "backtracks past the first fit"


@pytest.mark.parametrize(
    "bad",
    [
        '{"role": "agent", "script": []}',
        '{"description": "", "role": "editor", "script": []}',
        '{"description": "", "role": "agent", "script": [], "extra": 1}',
        '{"description": "", "role": "agent", "script": [{"sned": {}}]}',
        '{"description": "", "role": "agent", "script": [{"send": {}, "expect": {}}]}',
        '{"description": "", "role": "agent", "script": [{"action": "dance"}]}',
        '{"description": "", "role": "agent", "script": [{"expect_no_frame": "long"}]}',
        '{"description": "", "role": "client", "options": {"require_auth": true}, "script": []}',
        '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"reply": 1}]}]}, "script": []}',
        '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"error": {"code": "x", "message": ""}}]}]}, "script": []}',
        '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"notify": "y", "escape": true}]}]}, "script": []}',
        '{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"call": "y", "escape": false}]}]}, "script": []}',
    ],
)
def test_bad_scenario_files_are_refused(bad):
    with pytest.raises(FormatError):
        parse_scenario(bad)


async def test_a_wrong_expectation_fails_with_a_precise_diff():
    err = await run_scenario(
        parse_scenario("""{"description": "", "role": "agent",
        "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
        "script": [
          {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
          {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
        ]}""")
    )
    assert err is not None
    assert err.startswith("step 2 "), err
    assert "at /result/protocolVersion: expected 2, got 1" in err, err
    assert 'got frame:      {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}' in err, err

    err = await run_scenario(
        parse_scenario("""{"description": "", "role": "agent",
        "script": [{"send": "garbage"}, {"expect_no_frame": 200}]}""")
    )
    assert err is not None and "unexpected frame" in err and "-32700" in err, err


async def test_without_a_rule_the_host_answers_method_not_found():
    err = await run_scenario(
        parse_scenario("""{"description": "", "role": "agent",
        "script": [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
                   {"expect": {"id": 1, "error": {"code": -32601, "data": {"method": "initialize"}}}}]}""")
    )
    assert err is None, err
