"""Shared pieces of the Python bench programs (see bench/README.md): the
prompt vocabulary, the payloads (byte for byte the same as bench/rust/src/lib.rs),
the command line, the client-side checks, the workload driver, the result line."""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from typing import Any, Awaitable, Callable, Optional

CHUNK_LEN = 100
READ_LEN = 1024
SESSION_CWD = "/tmp"
RESOURCE_URI = "file:///bench/resource.txt"
WRITE_PATH = "/bench/write.txt"
_UNIT = '"q" \\ '
LINE64 = (_UNIT * 11)[:63] + "\n"
_PAD89 = (_UNIT * 15)[:89]


def text_of(n: int) -> str:
    return (LINE64 * (n // 64 + 1))[:n]


def chunk_text(i: int) -> str:
    return f"{i:010d} {_PAD89}"


def chunk_index(text: str) -> Optional[int]:
    if len(text) != CHUNK_LEN or not text[:10].isdigit():
        return None
    return int(text[:10])


def read_path(i: int) -> str:
    return f"/bench/read/{i}"


def read_index(path: str) -> Optional[int]:
    prefix = "/bench/read/"
    if path.startswith(prefix) and path[len(prefix):].isdigit():
        return int(path[len(prefix):])
    return None


def parse_command(text: str) -> Optional[tuple[str, int]]:
    words = text.split()
    if not words:
        return None
    if words[0] == "echo":
        return ("echo", 0)
    if words[0] in ("stream", "read", "write") and len(words) > 1 and words[1].isdigit():
        return (words[0], int(words[1]))
    return None


USAGE = "usage: CLIENT (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) -- AGENT_COMMAND..."
DEFAULTS = {"w1": [100000], "w2": [20000], "w3": [8 << 20, 5], "w4": [1000, 10, 64], "smoke": []}


def invocation(argv: list[str]) -> tuple[str, list[int], list[str]]:
    if "--" not in argv:
        raise SystemExit(USAGE)
    split = argv.index("--")
    mine, agent = argv[:split], argv[split + 1:]
    if not mine or not agent or mine[0] not in DEFAULTS:
        raise SystemExit(USAGE)
    defaults = DEFAULTS[mine[0]]
    args = [int(a) for a in mine[1:]] + defaults[len(mine) - 1:]
    return mine[0], args, agent


def usage() -> dict[str, Any]:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"client_rss_kb": ru.ru_maxrss, "client_cpu_s": ru.ru_utime + ru.ru_stime}


def emit(impl: str, workload: str, result: dict[str, Any]) -> None:
    print(json.dumps({"impl": impl, "workload": workload, "result": result, "usage": usage()}), flush=True)


def fail(impl: str, workload: str, error: str) -> int:
    print(json.dumps({"impl": impl, "workload": workload, "error": error, "usage": usage()}), flush=True)
    return 1


def percentile(samples: list[float], p: float) -> float:
    if not samples:
        return 0.0
    s = sorted(samples)
    rank = -(-p / 100.0 * len(s) // 1)  # ceil
    return s[min(max(int(rank), 1), len(s)) - 1]


class Tracker:
    """What a client saw, checked as it arrives."""

    def __init__(self) -> None:
        self.chunks: dict[str, int] = {}
        self.read_times: list[float] = []
        self.next_read = 0
        self.expected_write: Optional[str] = None
        self.writes = 0
        self.errors: list[str] = []

    def chunk(self, session: str, text: str) -> None:
        seen = self.chunks.get(session, 0)
        if chunk_index(text) != seen:
            if len(self.errors) < 10:
                self.errors.append(f"session {session}: chunk {seen} was {text!r}")
            return
        self.chunks[session] = seen + 1

    def read(self, path: str) -> str:
        self.read_times.append(time.perf_counter())
        expected = self.next_read
        self.next_read += 1
        if read_index(path) != expected:
            e = f"read {expected} was of {path!r}"
            self.errors.append(e)
            raise ValueError(e)
        return text_of(READ_LEN)

    def write(self, path: str, content: str) -> None:
        if path != WRITE_PATH or content != self.expected_write:
            e = f"write of {len(content)} bytes to {path!r} is not the expected content"
            self.errors.append(e)
            raise ValueError(e)
        self.writes += 1

    def check(self) -> None:
        if self.errors:
            raise RuntimeError("; ".join(self.errors[:10]))


# A peer: new_session() -> id; prompt(session, text, resource_text|None) -> stopReason.
NewSession = Callable[[], Awaitable[str]]
Prompt = Callable[[str, str, Optional[str]], Awaitable[str]]


async def drive(workload: str, args: list[int], tracker: Tracker, new_session: NewSession, prompt: Prompt) -> dict[str, Any]:
    session = await new_session()

    async def timed(text: str, res: Optional[str] = None, sid: Optional[str] = None) -> float:
        start = time.perf_counter()
        stop = await prompt(sid or session, text, res)
        took = time.perf_counter() - start
        if stop != "end_turn":
            raise RuntimeError(f"{text.split()[0]}: stopReason {stop!r}")
        tracker.check()
        return took

    async def stream(n: int) -> float:
        took = await timed(f"stream {n}")
        got = tracker.chunks.pop(session, 0)
        if got != n:
            raise RuntimeError(f"stream {n}: got {got} chunks before the response")
        return took

    async def reads(m: int) -> tuple[float, list[float]]:
        tracker.read_times, tracker.next_read = [], 0
        took = await timed(f"read {m}")
        times = tracker.read_times
        if len(times) != m:
            raise RuntimeError(f"read {m}: got {len(times)} reads")
        return took, [(b - a) * 1e6 for a, b in zip(times, times[1:])]

    async def write(n: int) -> float:
        tracker.expected_write = text_of(n)
        took = await timed(f"write {n}")
        if tracker.writes != 1:
            raise RuntimeError("write: not exactly one write")
        tracker.writes = 0
        return took

    async def sessions(count: int, chunks: int, inflight: int) -> float:
        gate = asyncio.Semaphore(inflight)

        async def one() -> None:
            async with gate:
                sid = await new_session()
                await timed(f"stream {chunks}", sid=sid)
            got = tracker.chunks.pop(sid, 0)
            if got != chunks:
                raise RuntimeError(f"w4: session {sid} got {got} chunks")

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - start

    if workload == "w1":
        (n,) = args[:1]
        s = await stream(n)
        return {"n": n, "seconds": s, "per_s": n / s}
    if workload == "w2":
        (m,) = args[:1]
        s, gaps = await reads(m)
        return {"m": m, "seconds": s, "per_s": m / s, "p50_us": percentile(gaps, 50), "p99_us": percentile(gaps, 99)}
    if workload == "w3":
        n, reps = args[:2]
        writes = [await write(n) for _ in range(reps)]
        text = text_of(n)
        resources = [await timed("echo", text) for _ in range(reps)]
        return {"bytes": n, "reps": reps, "write_s": percentile(writes, 50), "resource_s": percentile(resources, 50),
                "write_samples": writes, "resource_samples": resources}
    if workload == "w4":
        count, chunks, inflight = args[:3]
        s = await sessions(count, chunks, inflight)
        return {"sessions": count, "chunks": chunks, "inflight": inflight, "seconds": s}
    # smoke
    await stream(50)
    await reads(20)
    await write(10000)
    await timed("echo", text_of(10000))
    await sessions(8, 5, 4)
    return {"ok": True}


def main(impl: str, run: Callable[[str, list[int], list[str]], Awaitable[dict[str, Any]]]) -> int:
    workload = "?"
    try:
        workload, args, agent = invocation(sys.argv[1:])
        result = asyncio.run(run(workload, args, agent))
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported as the result line
        return fail(impl, workload, f"{type(e).__name__}: {e}")
    emit(impl, workload, result)
    return 0
