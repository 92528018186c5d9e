"""The shared scenarios (tests/scenarios/*.json, format in
tests/scenarios/README.md) run through the Python binding's dynamic API.

Per scenario: a ``libacp.Connection`` made with ``Connection.from_socket`` on
one end of a Unix socketpair, in the scenario's role, whose handler is the
host (the vocabulary's rules and programs); this module is the scripted raw
peer on the other end, in asyncio. Over a remote link (WebSocket, Streamable
HTTP/1.1, h2c) the other end of the socketpair is the stdio of
``libacp-remote-splice`` (tests/bin/remote_splice.rs), which joins it to a
remote connection: the libacp side is then served by ``libacp.serve``
(agent; made when the peer connects, or over HTTP when its ``initialize``
arrives) or made by ``Connection.connect`` (client). The same rules as the Rust runner
(tests/rust/scenarios.rs) and the C++ one (tests/c/scenario_runner.cpp):
unknown keys are errors, every waiting step is bounded by 5 s and the whole
scenario by 60 s, mismatches are reported with the step, the JSON pointer
where value and pattern part, and the whole frame or event.

The binding's exceptions are the typed errors of the README's table:
``RequestError`` is ``Rpc`` (``code``, ``message``, ``data``),
``ConnectionClosed`` ``Closed``, ``Cancelled``, ``RequestTimeout``
``Timeout``, ``InvalidParams``, ``InvalidResult``, and a ``RefusedError``
(``CapabilityError`` included) ``Refused.<kind>`` with the members of its
``details`` (the core's ``Refusal::to_json``).

Two places where the Python API differs from the engine's and the runner
bridges them (both documented behaviour of the binding, not bugs):

* A superseded request (the core answered it already: a client's
  ``cancel_session`` answered the permission request, ``$/cancel_request``,
  the connection closed) has its handler's *task cancelled*. The vocabulary's
  programs carry on after such a cancellation (``wait_for_cancel`` then
  ``emit``; a pending ``call`` that fails ``Closed`` then ``emit``), so each
  program runs in its own task; the handler awaits it through
  ``asyncio.shield``. A program's answer after its handler was cancelled is
  dropped, which is what "a refused answer is ignored" means.
* A handler cannot end "without answering" (returning ``None`` answers
  ``null``). A program that ends without answering raises
  ``RequestError(-32603, ...)``, which is what the engine's dropped responder
  answers.
"""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import libacp

STEP_LIMIT = 5.0
SCENARIO_LIMIT = 60.0

_MISSING = object()


class FormatError(Exception):
    """The scenario file breaks the format."""


class StepFailure(Exception):
    """A step failed; the message says how."""


# ---------------------------------------------------------------------------
# The format, checked before anything runs (unknown keys are typos).

OPS = ("respond", "error", "notify", "call", "wait_for_cancel", "wait", "emit")
STEPS = (
    "send",
    "expect",
    "expect_unordered",
    "expect_event",
    "expect_events_unordered",
    "expect_no_frame",
    "expect_no_event",
    "close",
    "expect_closed",
    "action",
)
ACTIONS = {
    "call": ("method", "params"),
    "notify": ("method", "params"),
    "cancel_session": ("sessionId",),
    "release": ("gate",),
    "close": (),
}


@dataclass
class Rule:
    method: str
    params: Any  # _MISSING when the rule takes any params
    program: List[dict]


@dataclass
class Step:
    text: str
    verb: str
    obj: dict


@dataclass
class Scenario:
    role: str
    require_auth: bool = False
    unstable: Optional[List[str]] = None
    rules: List[Rule] = field(default_factory=list)
    script: List[Step] = field(default_factory=list)
    known_failure: Optional[str] = None


def short(v: Any) -> str:
    """Compact JSON, cut at 2000 characters."""
    s = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return s if len(s) <= 2000 else s[:2000] + "..."


def _object(v: Any, what: str) -> dict:
    if not isinstance(v, dict):
        raise FormatError(f"{what} must be a JSON object, not {short(v)}")
    return v


def _only_keys(obj: dict, allowed: tuple, what: str) -> None:
    for k in obj:
        if k not in allowed:
            raise FormatError(f"{what}: unknown key `{k}` (allowed: {', '.join(allowed)})")


def _string(obj: dict, key: str, what: str) -> str:
    if key not in obj:
        raise FormatError(f"{what}: `{key}` is required")
    if not isinstance(obj[key], str):
        raise FormatError(f"{what}: `{key}` must be a string, not {short(obj[key])}")
    return obj[key]


def _verb(obj: dict, verbs: tuple, what: str) -> str:
    found = [k for k in obj if k in verbs]
    if not found:
        raise FormatError(f"{what}: no verb (one of: {', '.join(verbs)}) in {short(obj)}")
    if len(found) > 1:
        raise FormatError(f"{what}: more than one verb in one object")
    return found[0]


def _true(v: Any, what: str) -> None:
    if v is not True:
        raise FormatError(f"{what}: the value must be `true`")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_op(op: Any, what: str) -> None:
    _object(op, what)
    verb = _verb(op, OPS, what)
    if verb in ("notify", "call"):
        escape = ("escape",) if verb == "call" else ()
        _only_keys(op, (verb, "note", "params", "as") + escape, what)
        _string(op, verb, what)
        if "as" in op:
            _string(op, "as", what)
        if "escape" in op:
            _true(op["escape"], what)
        return
    _only_keys(op, (verb, "note"), what)
    if verb == "error":
        e = _object(op["error"], what)
        _only_keys(e, ("code", "message", "data"), what)
        if not _is_int(e.get("code")):
            raise FormatError(f"{what}: `error.code` must be an integer")
        _string(e, "message", what)
    elif verb == "wait_for_cancel":
        _true(op[verb], what)
    elif verb == "wait":
        _string(op, "wait", what)


def _check_step(step: Any, what: str) -> Step:
    _object(step, what)
    verb = _verb(step, STEPS, what)
    if verb != "action":
        _only_keys(step, (verb, "note"), what)
    arg = step[verb]
    if verb in ("expect_unordered", "expect_events_unordered"):
        if not isinstance(arg, list) or not arg:
            raise FormatError(f"{what}: `{verb}` takes a non-empty array")
    elif verb in ("expect_no_frame", "expect_no_event"):
        if not _is_int(arg) or arg < 0:
            raise FormatError(f"{what}: a quiet period in milliseconds, not {short(arg)}")
    elif verb in ("close", "expect_closed"):
        _true(arg, what)
    elif verb == "action":
        action = _string(step, "action", what)
        if "as" in step:
            _string(step, "as", what)
        if action not in ACTIONS:
            raise FormatError(
                f"{what}: unknown action {json.dumps(action)} "
                "(call, notify, cancel_session, release, close)"
            )
        _only_keys(step, ("action", "as", "note") + ACTIONS[action], what)
        for key in ACTIONS[action]:
            if key != "params":
                _string(step, key, what)
    return Step(short(step), verb, step)


def parse_scenario(text: str) -> Scenario:
    try:
        v = json.loads(text)
    except ValueError as e:
        raise FormatError(f"not valid JSON: {e}") from None
    top = _object(v, "the scenario")
    _only_keys(
        top, ("description", "role", "options", "host", "script", "known_failure"), "the scenario"
    )
    _string(top, "description", "the scenario")
    role = _string(top, "role", "the scenario")
    if role not in ("agent", "client"):
        raise FormatError(f'`role` must be "agent" or "client", not {json.dumps(role)}')
    sc = Scenario(role=role)
    if "options" in top:
        options = _object(top["options"], "`options`")
        _only_keys(options, ("require_auth", "unstable"), "`options`")
        if "unstable" in options:
            names = options["unstable"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise FormatError("`options.unstable` must be an array of strings")
            sc.unstable = names
        if "require_auth" in options:
            if not isinstance(options["require_auth"], bool):
                raise FormatError("`options.require_auth` must be a boolean")
            sc.require_auth = options["require_auth"]
            if sc.require_auth and role != "agent":
                raise FormatError("`options.require_auth` is an agent option")
    if "host" in top:
        host = _object(top["host"], "`host`")
        _only_keys(host, ("requests",), "`host`")
        if not isinstance(host.get("requests"), list):
            raise FormatError("`host.requests` must be an array")
        for i, rule in enumerate(host["requests"]):
            what = f"host.requests[{i}]"
            _object(rule, what)
            _only_keys(rule, ("method", "params", "do", "note"), what)
            if not isinstance(rule.get("do"), list):
                raise FormatError(f"{what}: `do` must be an array of operations")
            for j, op in enumerate(rule["do"]):
                _check_op(op, f"{what}.do[{j}]")
            sc.rules.append(
                Rule(_string(rule, "method", what), rule.get("params", _MISSING), rule["do"])
            )
    if not isinstance(top.get("script"), list):
        raise FormatError("`script` must be an array of steps")
    sc.script = [_check_step(s, f"script[{i}]") for i, s in enumerate(top["script"])]
    if "known_failure" in top:
        sc.known_failure = _string(top, "known_failure", "the scenario")
    return sc


# ---------------------------------------------------------------------------
# Patterns and templates.


@dataclass
class Mismatch(Exception):
    path: str
    expected: str
    got: str

    def describe(self, what: str, pattern: Any, actual: Any) -> str:
        at = self.path or "(top level)"
        return (
            f"{what} does not match, at {at}: expected {self.expected}, got {self.got}\n"
            f"  expected {what}: {short(pattern)}\n"
            f"  got {what}:      {short(actual)}"
        )


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def json_eq(a: Any, b: Any) -> bool:
    """Numbers by value (1 equals 1.0), booleans never equal numbers,
    everything else structurally."""
    if _is_number(a) and _is_number(b):
        return a == b
    if _is_number(a) or _is_number(b):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and json_eq(v, b[k]) for k, v in a.items())
    if type(a) is not type(b):
        return False
    return a == b


def matches(pattern: Any, actual: Any, known: dict, bound: dict) -> None:
    """Raises Mismatch where ``actual`` parts from ``pattern``. ``known``
    holds the captures so far; new ones go to ``bound`` (kept by the caller
    only when the whole pattern matched)."""
    _match_at(pattern, actual, "", known, bound)


def _match_at(p: Any, a: Any, path: str, known: dict, bound: dict) -> None:
    if isinstance(p, str):
        if p.startswith("$$"):
            if isinstance(a, str) and a == p[1:]:
                return
            raise Mismatch(path, short(p[1:]), short(a))
        if p == "$any":
            return
        if p == "$absent":
            raise Mismatch(
                path, '"$absent" (only valid as the value of an object member)', short(a)
            )
        if p.startswith("$capture:"):
            bound[p[len("$capture:") :]] = a
            return
        if p.startswith("$ref:"):
            name = p[len("$ref:") :]
            v = bound.get(name, known.get(name, _MISSING))
            if v is _MISSING:
                raise Mismatch(path, f"{p} (but nothing was captured under `{name}`)", short(a))
            if json_eq(v, a):
                return
            raise Mismatch(path, f"{short(v)} ({p})", short(a))
    if isinstance(p, dict) and len(p) == 1 and "$one_of" in p:
        alternatives = p["$one_of"]
        if not isinstance(alternatives, list):
            raise Mismatch(path, "`$one_of` with an array", "a pattern error")
        why = []
        for alt in alternatives:
            trial = dict(bound)
            try:
                _match_at(alt, a, path, known, trial)
            except Mismatch as m:
                why.append(m.expected)
                continue
            bound.clear()
            bound.update(trial)
            return
        raise Mismatch(path, f"one of [{', '.join(why)}]", short(a))
    if isinstance(p, dict):
        if not isinstance(a, dict):
            raise Mismatch(path, "an object", short(a))
        for key, sub in p.items():
            here = f"{path}/{_pointer_token(key)}"
            if sub == "$absent":
                if key in a:
                    raise Mismatch(here, "no such member", short(a[key]))
                continue
            if key not in a:
                raise Mismatch(here, short(sub), "no such member")
            _match_at(sub, a[key], here, known, bound)
        return
    if isinstance(p, list):
        if not isinstance(a, list):
            raise Mismatch(path, "an array", short(a))
        if len(p) != len(a):
            raise Mismatch(path, f"an array of {len(p)} items", f"{len(a)} items: {short(a)}")
        for i, (sub, v) in enumerate(zip(p, a)):
            _match_at(sub, v, f"{path}/{i}", known, bound)
        return
    if not json_eq(p, a):
        raise Mismatch(path, short(p), short(a))


def fill(template: Any, known: dict) -> Any:
    """A template as a value: ``"$ref:name"`` becomes the captured value,
    ``"$$x"`` the string ``"$x"``; other placeholders are errors."""
    if isinstance(template, str):
        if template.startswith("$$"):
            return template[1:]
        if template.startswith("$ref:"):
            name = template[len("$ref:") :]
            if name not in known:
                raise StepFailure(f"{template}: nothing was captured under `{name}`")
            return known[name]
        if template in ("$any", "$absent") or template.startswith("$capture:"):
            raise StepFailure(f"{template} is a pattern, not a value")
        return template
    if isinstance(template, list):
        return [fill(v, known) for v in template]
    if isinstance(template, dict):
        if "$one_of" in template:
            raise StepFailure("`$one_of` is a pattern, not a value")
        return {k: fill(v, known) for k, v in template.items()}
    return template


def pair_up(patterns: list, values: list, used: list, known: dict, bound: dict) -> bool:
    """Pairs each pattern with a distinct value (backtracking; lists are
    short). Captures of earlier pairs are visible to later ones."""
    if not patterns:
        return True
    first, rest = patterns[0], patterns[1:]
    for j, value in enumerate(values):
        if used[j]:
            continue
        trial = dict(bound)
        try:
            matches(first, value, {**known, **bound}, trial)
        except Mismatch:
            continue
        used[j] = True
        if pair_up(rest, values, used, known, trial):
            bound.clear()
            bound.update(trial)
            return True
        used[j] = False
    return False


# ---------------------------------------------------------------------------
# Typed errors: the binding's exceptions as the README's table writes them.


def error_json(e: BaseException) -> dict:
    message = str(e)
    if isinstance(e, libacp.RequestError):
        v = {"kind": "Rpc", "code": e.code, "message": e.message}
        if e.data is not None:
            v["data"] = e.data
        return v
    if isinstance(e, libacp.RefusedError):  # CapabilityError included
        v = dict(e.details)
        v["kind"] = f"Refused.{e.kind}" if e.kind else "Refused"
        v["message"] = message
        return v
    for cls, kind in (
        (libacp.ConnectionClosed, "Closed"),
        (libacp.Cancelled, "Cancelled"),
        (libacp.RequestTimeout, "Timeout"),
        (libacp.InvalidParams, "InvalidParams"),
        (libacp.InvalidResult, "InvalidResult"),
    ):
        if isinstance(e, cls):
            return {"kind": kind, "message": message}
    return {"kind": f"Other: {type(e).__name__}", "message": message}


async def outcome(work: Any) -> dict:
    """Awaits a call (or notify, ...) and writes its outcome."""
    try:
        return {"result": await work}
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return {"error": error_json(e)}


# ---------------------------------------------------------------------------
# One scenario's run.

GARBAGE, EOF = "garbage", "eof"


class Host:
    """The libacp side's handler: picks a rule, runs its program."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def on_connect(self, connection: Any) -> None:
        """A served remote connection's: the server made it."""
        self.run.connected(connection)

    async def on_request(self, method: str, params: Any, request: Any) -> Any:
        run = self.run
        known = run.captures
        for rule in run.sc.rules:
            if rule.method != method:
                continue
            bound: dict = {}
            if rule.params is not _MISSING:
                try:
                    matches(rule.params, params, known, bound)
                except Mismatch:
                    continue
            run.captures.update(bound)
            program = run.spawn(run.program(rule, method, request))
            # The program goes on if this handler's task is cancelled (its
            # request superseded); see the module's docstring.
            return await asyncio.shield(program)
        raise libacp.RequestError(-32601, "Method not found", {"method": method})

    async def on_notification(self, method: str, params: Any) -> None:
        self.run.emit({"event": "notification", "method": method, "params": params})


class Run:
    def __init__(self, sc: Scenario, link: Optional[str] = None, splice: str = "") -> None:
        self.sc = sc
        self.link = link
        self.splice = splice
        self.made = asyncio.Event()
        self.server: Any = None
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.captures: dict = {}
        self.gates: Dict[str, asyncio.Event] = {}
        self.events: asyncio.Queue = asyncio.Queue()
        self.lines: asyncio.Queue = asyncio.Queue()
        self.problems: List[str] = []
        self.tasks: List[asyncio.Task] = []
        self.conn: Any = None
        self.sock: Optional[socket.socket] = None
        self.write_open = True

    # -- shared state

    def connected(self, connection: Any) -> None:
        self.conn = connection
        self.made.set()

    def emit(self, event: dict) -> None:
        self.events.put_nowait(event)

    def problem(self, what: str) -> None:
        self.problems.append(what)

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.append(task)
        return task

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    # -- the host's programs

    async def program(self, rule: Rule, method: str, request: Any) -> Any:
        what = f"the host's `{method}` handler"
        conn = self.conn
        for op in rule.program:
            try:
                if "respond" in op:
                    return fill(op["respond"], self.captures)
                if "error" in op:
                    e = fill(op["error"], self.captures)
                    raise libacp.RequestError(e["code"], e["message"], e.get("data"))
                if "notify" in op or "call" in op:
                    verb = "call" if "call" in op else "notify"
                    name = op[verb]
                    params = fill(op["params"], self.captures) if "params" in op else None
                    send = conn.request if verb == "call" else conn.notify
                    if op.get("escape") is True:
                        try:
                            result = {"result": await send(name, params)}
                        except Exception as e:
                            # The call's error escapes the handler as it is.
                            if "as" in op:
                                self.captures[op["as"]] = {"error": error_json(e)}
                            raise
                    else:
                        result = await outcome(send(name, params))
                    if "as" in op:
                        self.captures[op["as"]] = result
                    elif "error" in result:
                        self.problem(f"{what}: {verb} {name} failed: {short(result['error'])}")
                    continue
                if "wait_for_cancel" in op:
                    await request.wait_cancelled()
                    continue
                if "wait" in op:
                    await self.gate(op["wait"]).wait()
                    continue
                if "emit" in op:
                    self.emit({"event": "emit", "value": fill(op["emit"], self.captures)})
                    continue
            except StepFailure as e:
                self.problem(f"{what}: {e}")
                break
        # Ends without answering: what the engine's dropped responder answers.
        raise libacp.RequestError(
            -32603, "Internal error", "the host's program ended without answering"
        )

    # -- the peer's wire

    async def read_lines(self) -> None:
        loop = asyncio.get_running_loop()
        buf = b""
        while True:
            try:
                chunk = await loop.sock_recv(self.sock, 65536)
            except OSError as e:
                self.lines.put_nowait((GARBAGE, f"(read error: {e})"))
                chunk = b""
            if not chunk:
                self.lines.put_nowait((EOF, None))
                return
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                text = raw.decode("utf-8", errors="replace").rstrip("\r")
                try:
                    self.lines.put_nowait(("frame", json.loads(text)))
                except ValueError:
                    self.lines.put_nowait((GARBAGE, text))

    async def next_line(self, limit: float) -> Optional[Tuple[str, Any]]:
        """The next line (end of stream stays in the queue), None on timeout."""
        try:
            line = await asyncio.wait_for(self.lines.get(), limit)
        except asyncio.TimeoutError:
            return None
        if line[0] == EOF:
            self.lines.put_nowait(line)
        return line

    async def next_frame(self) -> Any:
        line = await self.next_line(STEP_LIMIT)
        if line is None:
            raise StepFailure(f"no frame within {STEP_LIMIT:g} s")
        kind, v = line
        if kind == EOF:
            raise StepFailure("got end of stream instead of a frame")
        if kind == GARBAGE:
            raise StepFailure(f"got a line that is not JSON: {json.dumps(v)}")
        return v

    async def next_event(self, limit: float = STEP_LIMIT) -> Any:
        try:
            return await asyncio.wait_for(self.events.get(), limit)
        except asyncio.TimeoutError:
            raise StepFailure(f"no host event within {limit:g} s") from None

    def unordered(self, what: str, patterns: list, got: list) -> None:
        known = self.captures
        bound: dict = {}
        if pair_up(patterns, got, [False] * len(got), known, bound):
            self.captures.update(bound)
            return
        report = [f"the {what}s do not match the patterns in any order"]
        for i, v in enumerate(got):
            report.append(f"  got {what} {i}: {short(v)}")
        for i, p in enumerate(patterns):
            fits, why = [], []
            for j, v in enumerate(got):
                try:
                    matches(p, v, known, {})
                    fits.append(j)
                except Mismatch as m:
                    why.append(
                        f"    vs {what} {j}: at {m.path or '(top level)'}: "
                        f"expected {m.expected}, got {m.got}"
                    )
            report.append(f"  pattern {i}: {short(p)} matches {what}s {fits}")
            if not fits:
                report.extend(why)
        raise StepFailure("\n".join(report))

    # -- the script

    async def step(self, s: Step) -> None:
        arg = s.obj[s.verb]
        loop = asyncio.get_running_loop()
        if s.verb == "send":
            line = (
                arg
                if isinstance(arg, str)
                else json.dumps(fill(arg, self.captures), separators=(",", ":"), ensure_ascii=False)
            )
            if not self.write_open:
                raise StepFailure("the peer already closed its write side")
            try:
                await asyncio.wait_for(
                    loop.sock_sendall(self.sock, (line + "\n").encode()), STEP_LIMIT
                )
            except asyncio.TimeoutError:
                raise StepFailure("could not write within the step limit") from None
            except OSError as e:
                raise StepFailure(f"write failed: {e}") from None
        elif s.verb == "expect":
            frame = await self.next_frame()
            bound: dict = {}
            try:
                matches(arg, frame, self.captures, bound)
            except Mismatch as m:
                raise StepFailure(m.describe("frame", arg, frame)) from None
            self.captures.update(bound)
        elif s.verb == "expect_unordered":
            frames = []
            for _ in arg:
                try:
                    frames.append(await self.next_frame())
                except StepFailure as e:
                    raise StepFailure(f"after {len(frames)} of {len(arg)} frames: {e}") from None
            self.unordered("frame", arg, frames)
        elif s.verb == "expect_event":
            event = await self.next_event()
            bound = {}
            try:
                matches(arg, event, self.captures, bound)
            except Mismatch as m:
                raise StepFailure(m.describe("event", arg, event)) from None
            self.captures.update(bound)
        elif s.verb == "expect_events_unordered":
            events = []
            for _ in arg:
                try:
                    events.append(await self.next_event())
                except StepFailure as e:
                    raise StepFailure(f"after {len(events)} of {len(arg)} events: {e}") from None
            self.unordered("event", arg, events)
        elif s.verb == "expect_no_frame":
            line = await self.next_line(arg / 1000)
            if line is not None:
                kind, v = line
                if kind == EOF:
                    raise StepFailure("got end of stream: libacp closed the connection")
                if kind == GARBAGE:
                    raise StepFailure(f"got an unexpected line that is not JSON: {json.dumps(v)}")
                raise StepFailure(f"got an unexpected frame: {short(v)}")
        elif s.verb == "expect_no_event":
            if self.events.empty() and arg > 0:
                try:
                    event = await asyncio.wait_for(self.events.get(), arg / 1000)
                except asyncio.TimeoutError:
                    return
            elif self.events.empty():
                return
            else:
                event = self.events.get_nowait()
            raise StepFailure(f"got an unexpected host event: {short(event)}")
        elif s.verb == "close":
            if self.write_open:
                self.write_open = False
                try:
                    self.sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        elif s.verb == "expect_closed":
            line = await self.next_line(STEP_LIMIT)
            if line is None:
                raise StepFailure(f"the connection was still open after {STEP_LIMIT:g} s")
            kind, v = line
            if kind == GARBAGE:
                raise StepFailure(f"expected end of stream, got a line: {json.dumps(v)}")
            if kind != EOF:
                raise StepFailure(f"expected end of stream, got a frame: {short(v)}")
        else:
            await self.action(s.obj)

    async def action(self, step: dict) -> None:
        kind = step["action"]
        name = step.get("as")
        if self.conn is None:  # a served remote connection is made on demand
            try:
                await asyncio.wait_for(self.made.wait(), STEP_LIMIT)
            except asyncio.TimeoutError:
                raise StepFailure("the connection was never made") from None
        conn = self.conn
        if kind in ("call", "notify"):
            params = fill(step["params"], self.captures) if "params" in step else None
            send = conn.request if kind == "call" else conn.notify
            work = send(step["method"], params)
        elif kind == "cancel_session":
            sid = fill(step["sessionId"], self.captures)
            if not isinstance(sid, str):
                raise StepFailure("`sessionId` must be a string")
            work = conn.cancel_session(sid)
        elif kind == "release":
            self.gate(step["gate"]).set()
            work = asyncio.sleep(0)
        else:  # close
            work = conn.close()

        async def settle() -> dict:
            result = await outcome(work)
            if name is not None:
                self.emit({"event": "returned", "as": name, **result})
            return result

        if name is not None:
            self.spawn(settle())
            return
        try:
            result = await asyncio.wait_for(outcome(work), STEP_LIMIT)
        except asyncio.TimeoutError:
            raise StepFailure(f"did not complete within {STEP_LIMIT:g} s") from None
        if "error" in result:
            raise StepFailure(f"failed: {short(result['error'])}")

    # -- the whole run

    async def run(self) -> Optional[str]:
        """Runs the scenario; returns why it failed, or None."""
        lib_end, peer_end = socket.socketpair()
        peer_end.setblocking(False)
        self.sock = peer_end
        options: Dict[str, Any] = {}
        if self.sc.require_auth:
            options["require_auth"] = True
        if self.sc.unstable is not None:
            options["unstable"] = self.sc.unstable
        try:
            if self.link is None:
                self.connected(
                    libacp.Connection.from_socket(lib_end, Host(self), role=self.sc.role, **options)
                )
            else:
                try:
                    await asyncio.wait_for(self.connect_remote(lib_end, options), STEP_LIMIT)
                except asyncio.TimeoutError:
                    return f"no remote connection within {STEP_LIMIT:g} s"
                finally:
                    lib_end.close()  # the splice process has its copy
        except (TypeError, ValueError) as e:  # an option the binding lacks
            lib_end.close()
            peer_end.close()
            return f"the binding cannot make this connection: {e}"
        self.spawn(self.read_lines())
        try:
            return await asyncio.wait_for(self._script(), SCENARIO_LIMIT)
        except asyncio.TimeoutError:
            return f"the scenario took over {SCENARIO_LIMIT:g} s"
        finally:
            await self.teardown()

    async def connect_remote(self, lib_end: socket.socket, options: Dict[str, Any]) -> None:
        """The libacp side over a remote link: the raw peer's socket is the
        stdin and stdout of `libacp-remote-splice`, which joins it to a
        remote connection. An agent is served by `libacp.serve` (made when
        the peer's connection arrives); a client connects to the splice's
        server."""
        http2 = ["--http2"] if self.link == "h2c" else []
        kind = "websocket" if self.link == "websocket" else "http"
        if self.sc.role == "agent":
            self.server = await libacp.serve("127.0.0.1:0", lambda: Host(self), **options)
            argv = [self.splice, "--connect", self.server.url(kind), *http2]
            self.proc = await asyncio.create_subprocess_exec(*argv, stdin=lib_end, stdout=lib_end)
            return
        self.proc = await asyncio.create_subprocess_exec(
            self.splice,
            "--listen",
            "127.0.0.1:0",
            stdin=lib_end,
            stdout=lib_end,
            stderr=asyncio.subprocess.PIPE,
        )
        assert self.proc.stderr is not None
        line = (await self.proc.stderr.readline()).decode()
        if not line.startswith("listening on "):
            raise StepFailure(f"libacp-remote-splice did not listen: {line!r}")
        address = line.split()[-1]
        scheme = "ws" if kind == "websocket" else "http"
        self.connected(
            await libacp.Connection.connect(
                f"{scheme}://{address}/acp",
                Host(self),
                http2_prior_knowledge=bool(http2),
                **options,
            )
        )

    async def _script(self) -> Optional[str]:
        for i, s in enumerate(self.sc.script):
            details = []
            try:
                await self.step(s)
            except StepFailure as e:
                details.append(str(e))
            details.extend(self.problems)
            self.problems.clear()
            if details:
                text = "\n".join(details).replace("\n", "\n    ")
                return f"step {i + 1} {s.text}\n    {text}"
        if self.problems:
            return "after the last step\n    " + "\n    ".join(self.problems)
        return None

    async def teardown(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.conn is not None:
            try:
                await asyncio.wait_for(self.conn.close(), STEP_LIMIT)
            except (asyncio.TimeoutError, libacp.AcpError):
                pass
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.sock is not None:
            self.sock.close()
        if self.server is not None:
            self.server.close()
        if self.proc is not None:
            try:
                await asyncio.wait_for(self.proc.wait(), STEP_LIMIT)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def run_scenario(sc: Scenario, link: Optional[str] = None, splice: str = "") -> Optional[str]:
    """Runs `sc`; returns why it failed, or None. `link`: None (a Unix
    socketpair) or a remote link, `"websocket"`, `"http"` or `"h2c"`, through
    the `splice` binary (`libacp-remote-splice`)."""
    return await Run(sc, link, splice).run()
