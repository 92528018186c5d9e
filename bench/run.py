#!/usr/bin/env python3
"""Runs the ACP benchmark cells and prints the table (stdlib only).

Usually started by bench/run.sh, which builds and installs everything first.
See bench/README.md for the harness convention and the workloads.

  run.py [--quick] [--reps N] [--impls a,b] [--workloads w1,w2] [--json FILE]
  run.py --smoke            every client against every agent, tiny workloads
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
VENV_PY = BENCH / ".venv" / "bin" / "python"
GNU_TIME = "/usr/bin/time"


def kotlin_classpath() -> str:
    """The Kotlin bench programs' classpath (written by bench/run.sh's Maven build)."""
    built = BENCH / "kotlin" / "target"
    try:
        deps = (built / "classpath.txt").read_text().strip()
    except OSError:
        return str(built / "classes")
    return f"{built / 'classes'}:{deps}"


KOTLIN_CP = kotlin_classpath()

# Every implementation: its client and agent commands, and the workloads it
# is timed on (the raw baseline is W1 and W2 only). New implementations
# are one more entry here.
IMPLS: dict[str, dict] = {
    "raw": {
        "client": [str(TARGET / "bench-raw-client")],
        "agent": [str(TARGET / "bench-raw-agent")],
        "workloads": {"w1", "w2"},
        "smoke_client": True,
    },
    "libacp-rust": {
        "client": [str(TARGET / "bench-libacp-client")],
        "agent": [str(TARGET / "bench-libacp-agent")],
    },
    "libacp-c": {
        "client": [str(BENCH / "c" / "build" / "bench-c-client")],
        "agent": [str(BENCH / "c" / "build" / "bench-c-agent")],
    },
    "libacp-python": {
        "client": [str(VENV_PY), str(BENCH / "python" / "libacp_client.py")],
        "agent": [str(VENV_PY), str(BENCH / "python" / "libacp_agent.py")],
    },
    "libacp-node": {
        "client": ["node", str(BENCH / "node" / "client.mjs")],
        "agent": ["node", str(BENCH / "node" / "agent.mjs")],
    },
    "rust-sdk": {
        "client": [str(TARGET / "bench-sdk-client")],
        "agent": [str(TARGET / "bench-sdk-agent")],
    },
    "ts-sdk": {
        "client": ["node", str(BENCH / "ts" / "client.mjs")],
        "agent": ["node", str(BENCH / "ts" / "agent.mjs")],
    },
    "libacp-kotlin": {
        "client": ["java", "-cp", KOTLIN_CP, "bench.LibacpKt", "client"],
        "agent": ["java", "-cp", KOTLIN_CP, "bench.LibacpKt", "agent"],
    },
    "kotlin-sdk": {
        "client": ["java", "-cp", KOTLIN_CP, "bench.SdkKt", "client"],
        "agent": ["java", "-cp", KOTLIN_CP, "bench.SdkKt", "agent"],
    },
    "python-sdk": {
        "client": [str(VENV_PY), str(BENCH / "python" / "sdk_client.py")],
        "agent": [str(VENV_PY), str(BENCH / "python" / "sdk_agent.py")],
    },
}

# libacp's Swift binding: the programs run in the Swift toolchain's chroot
# (scripts/swift/run.sh); the client through bench/swift/client.py, which
# spawns the agent on the host and hands its pipes over. Present when
# bench/run.sh could build them (the chroot needs root).
SWIFT_BIN = BENCH / "swift" / ".build" / "release" / "bench-swift"
if SWIFT_BIN.exists():
    IMPLS["libacp-swift"] = {
        "client": [sys.executable, str(BENCH / "swift" / "client.py")],
        "agent": [str(ROOT / "scripts" / "swift" / "run.sh"), str(SWIFT_BIN), "agent"],
    }

WORKLOADS = ["w1", "w2", "w3", "w4"]
FULL_ARGS = {"w1": ["100000"], "w2": ["20000"], "w3": ["8388608", "5"], "w4": ["1000", "10", "64"]}
QUICK_ARGS = {"w1": ["20000"], "w2": ["4000"], "w3": ["1048576", "3"], "w4": ["200", "10", "64"]}
TIMEOUT_S = 600


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_time_v(text: str) -> dict:
    """Peak RSS and CPU of the agent from GNU time -v."""
    out = {}
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["agent_rss_kb"] = int(m.group(1))
    u = re.search(r"User time \(seconds\): ([\d.]+)", text)
    s = re.search(r"System time \(seconds\): ([\d.]+)", text)
    if u and s:
        out["agent_cpu_s"] = float(u.group(1)) + float(s.group(1))
    m = re.search(r"Exit status: (\d+)", text)
    if m:
        out["agent_exit"] = int(m.group(1))
    return out


def run_cell(client: str, agent: str, workload: str, args: list[str], timeout: float = TIMEOUT_S) -> dict:
    """One run of CLIENT WORKLOAD ARGS -- time -v AGENT; the client's JSON line
    plus the agent's usage (or an "error")."""
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as f:
        time_file = f.name
    # The client runs under GNU time too: Linux carries the RSS high-water
    # mark of the process that execs into ru_maxrss, so a client forked
    # straight from this (larger) Python process would report our RSS.
    cmd = (
        [GNU_TIME, "-f", "", "--"]
        + IMPLS[client]["client"]
        + [workload, *args, "--", GNU_TIME, "-v", "-o", time_file]
        + IMPLS[agent]["agent"]
    )
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, code = f"timed out after {timeout} s", -1
    wall = time.monotonic() - started
    # The client may exit before GNU time has written the agent's usage.
    agent_usage: dict = {}
    for _ in range(100):
        text = Path(time_file).read_text(errors="replace")
        agent_usage = parse_time_v(text)
        if "agent_rss_kb" in agent_usage:
            break
        time.sleep(0.05)
    os.unlink(time_file)
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("{")), None)
    record: dict = {"client": client, "agent": agent, "workload": workload, "wall_s": wall}
    if line is None:
        record["error"] = f"exit {code}, no result line; stderr: {err.strip()[-600:]}"
        return record
    try:
        parsed = json.loads(line)
    except json.JSONDecodeError as e:
        record["error"] = f"bad result line {line[:200]!r}: {e}"
        return record
    record.update(parsed)
    record.update(agent_usage)
    if "error" not in record and code != 0:
        record["error"] = f"client exit {code}: {err.strip()[-600:]}"
    if "error" not in record and agent_usage.get("agent_exit", 0) not in (0,):
        # A non-zero agent exit after a verified result is reported, not fatal.
        record["agent_warning"] = f"agent exit status {agent_usage['agent_exit']}"
    return record


def primary(workload: str, result: dict) -> float:
    """The cell's main time in seconds (lower is better)."""
    if workload == "w3":
        return result["write_s"]
    return result["seconds"]


def machine() -> str:
    cpu = "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Linux {platform.release()}"


def fmt(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}x"


def med(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def table(records: list[dict], impls: list[str], workloads: list[str]) -> str:
    """Markdown tables of medians and ratios (time / reference time)."""
    lines = []
    for w in workloads:
        rows = {}
        for impl in impls:
            ok = [r for r in records if r["client"] == impl and r["workload"] == w and "error" not in r]
            failed = [r for r in records if r["client"] == impl and r["workload"] == w and "error" in r]
            if not ok and not failed:
                continue
            res = [r["result"] for r in ok]
            rows[impl] = {
                "n": len(ok),
                "failed": len(failed),
                "time": med([primary(w, x) for x in res]),
                "resource": med([x.get("resource_s") for x in res]) if w == "w3" else None,
                "per_s": med([x.get("per_s") for x in res]),
                "p50": med([x.get("p50_us") for x in res]),
                "p99": med([x.get("p99_us") for x in res]),
                "crss": med([r["usage"]["client_rss_kb"] / 1024 for r in ok]),
                "arss": med([r.get("agent_rss_kb", 0) / 1024 for r in ok]),
                "ccpu": med([r["usage"]["client_cpu_s"] for r in ok]),
                "acpu": med([r.get("agent_cpu_s") for r in ok]),
            }
        if not rows:
            continue
        ref_sdk = rows.get("rust-sdk", {}).get("time")
        ref_raw = rows.get("raw", {}).get("time")
        ref_ts = rows.get("ts-sdk", {}).get("time")
        ref_kt = rows.get("kotlin-sdk", {}).get("time")
        title = {
            "w1": "W1 stream: one prompt `stream N` (time to the response, all N chunks checked in order)",
            "w2": "W2 read: one prompt `read M` (sequential fs/read_text_file round trips)",
            "w3": "W3 large payloads: `write B` (time) and a prompt with a B-byte embedded resource (median of reps per connection)",
            "w4": "W4 sessions: S x (session/new + prompt `stream K`), at most 64 in flight",
        }[w]
        lines.append(f"\n### {title}\n")
        if w == "w1":
            head = ["impl", "runs", "time s", "chunks/s", "vs rust-sdk", "vs ts-sdk", "vs kotlin-sdk", "vs raw", "client MiB", "agent MiB", "client cpu s", "agent cpu s"]
        elif w == "w2":
            head = ["impl", "runs", "time s", "round trips/s", "p50 us", "p99 us", "vs rust-sdk", "vs ts-sdk", "vs kotlin-sdk", "vs raw", "client MiB", "agent MiB", "client cpu s", "agent cpu s"]
        elif w == "w3":
            head = ["impl", "runs", "write s", "resource s", "write vs rust-sdk", "resource vs rust-sdk", "write vs ts-sdk", "client MiB", "agent MiB", "client cpu s", "agent cpu s"]
        else:
            head = ["impl", "runs", "time s", "vs rust-sdk", "vs ts-sdk", "client MiB", "agent MiB", "client MiB vs rust-sdk", "agent MiB vs rust-sdk", "client cpu s", "agent cpu s"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        sdk = rows.get("rust-sdk", {})
        for impl, r in rows.items():
            runs = f"{r['n']}" + (f" ({r['failed']} failed)" if r["failed"] else "")
            if w == "w1":
                cells = [impl, runs, fmt(r["time"]), fmt(r["per_s"]), ratio(r["time"], ref_sdk), ratio(r["time"], ref_ts), ratio(r["time"], ref_kt), ratio(r["time"], ref_raw)]
            elif w == "w2":
                cells = [impl, runs, fmt(r["time"]), fmt(r["per_s"]), fmt(r["p50"]), fmt(r["p99"]), ratio(r["time"], ref_sdk), ratio(r["time"], ref_ts), ratio(r["time"], ref_kt), ratio(r["time"], ref_raw)]
            elif w == "w3":
                cells = [impl, runs, fmt(r["time"]), fmt(r["resource"]), ratio(r["time"], ref_sdk), ratio(r["resource"], sdk.get("resource")), ratio(r["time"], ref_ts)]
            else:
                cells = [impl, runs, fmt(r["time"]), ratio(r["time"], ref_sdk), ratio(r["time"], ref_ts)]
            cells += [fmt(r["crss"]), fmt(r["arss"])]
            if w == "w4":
                cells += [ratio(r["crss"], sdk.get("crss")), ratio(r["arss"], sdk.get("arss"))]
            cells += [fmt(r["ccpu"]), fmt(r["acpu"])]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bench(opts) -> int:
    impls = [i for i in (opts.impls.split(",") if opts.impls else IMPLS) if i in IMPLS]
    workloads = opts.workloads.split(",") if opts.workloads else WORKLOADS
    argsets = QUICK_ARGS if opts.quick else FULL_ARGS
    for w in workloads:
        if opts.__dict__.get(w):
            argsets = {**argsets, w: opts.__dict__[w].split()}
    cells = [(w, i) for w in workloads for i in impls if w in IMPLS[i].get("workloads", set(WORKLOADS))]
    log(f"bench: {len(cells)} cells x {opts.reps} reps, round-robin; {machine()}")
    records = []
    started = time.monotonic()
    for rep in range(opts.reps):
        for w, impl in cells:
            rec = run_cell(impl, impl, w, argsets[w])
            rec["rep"] = rep
            records.append(rec)
            status = rec.get("error") or f"{primary(w, rec['result']):.3f} s"
            log(f"  rep {rep + 1}/{opts.reps} {w} {impl}: {status}")
    elapsed = time.monotonic() - started
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"## Results ({now})\n\n"
        f"Machine: {machine()}. Medians of {opts.reps} runs per cell, run round-robin; "
        f"workload args {json.dumps({w: argsets[w] for w in workloads})}; total {elapsed:.0f} s. "
        "Ratios are time / reference time from the same run (lower is better); MiB are peak RSS "
        "(client: getrusage, agent: GNU time -v).\n"
    )
    text = header + table(records, impls, workloads)
    print(text)
    errors = [r for r in records if "error" in r]
    for r in errors:
        print(f"\nFAILED {r['workload']} {r['client']} (rep {r['rep'] + 1}): {r['error']}")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"date": now, "machine": machine(), "args": argsets, "records": records}, indent=1))
    return 1 if errors else 0


def smoke(opts) -> int:
    """Every client against every agent on the `smoke` workload."""
    impls = [i for i in (opts.impls.split(",") if opts.impls else IMPLS) if i in IMPLS]
    pairs = [(c, a) for c in impls for a in impls]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        results = list(pool.map(lambda p: run_cell(p[0], p[1], "smoke", [], timeout=60), pairs))
    failed = [r for r in results if "error" in r]
    width = max(len(i) for i in impls)
    print(f"cross-check (client rows x agent columns), {time.monotonic() - started:.0f} s:")
    print(" " * (width + 2) + " ".join(f"{a[:10]:>10}" for a in impls))
    for c in impls:
        row = [r for r in results if r["client"] == c]
        print(f"{c:<{width}}  " + " ".join(f"{('ok' if 'error' not in r else 'FAIL'):>10}" for r in row))
    for r in failed:
        print(f"FAIL {r['client']} -> {r['agent']}: {r['error']}")
    print(f"bench smoke: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="cross-check every client against every agent (tiny)")
    p.add_argument("--quick", action="store_true", help="smaller N for a fast look")
    p.add_argument("--reps", type=int, default=3, help="runs per cell (default 3)")
    p.add_argument("--impls", help="comma-separated implementations (default all)")
    p.add_argument("--workloads", help="comma-separated workloads (default w1,w2,w3,w4)")
    p.add_argument("--jobs", type=int, default=2, help="parallel runs in --smoke (default 2)")
    p.add_argument("--json", help="also write every record to this file")
    for w in WORKLOADS:
        p.add_argument(f"--{w}", help=f"override the {w} args, e.g. --{w} '{' '.join(FULL_ARGS[w])}'")
    opts = p.parse_args()
    if not Path(GNU_TIME).exists():
        log(f"bench: {GNU_TIME} (GNU time) is missing; bench/run.sh installs it")
        return 2
    return smoke(opts) if opts.smoke else bench(opts)


if __name__ == "__main__":
    sys.exit(main())
