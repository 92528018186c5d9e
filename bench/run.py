#!/usr/bin/env python3
"""Runs the ACP benchmark cells and prints the table (stdlib only).

Usually started by bench/run.sh, which builds and installs everything first.
See bench/README.md for the harness convention and the workloads.

  run.py [--quick] [--reps N] [--impls a,b] [--workloads w1,w2] [--json FILE]
  run.py --smoke            every client against every agent, tiny workloads
  run.py --remote ws,http   W1 and W2 over remote ACP: each implementation's
                            client against its own server (--listen), and
                            the server's RSS per idle WebSocket connection
                            (--idle N, default 1000)
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
        # The agent serves remote ACP with `--listen HOST:PORT` (first stderr
        # line `listening on HOST:PORT`, until stdin closes); the client takes
        # a URL where the agent command goes.
        "remote": True,
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
        # The agent serves remote ACP with `--listen HOST:PORT` (first stderr
        # line `listening on HOST:PORT`, until stdin closes); the client takes
        # a URL where the agent command goes.
        "remote": True,
    },
    "ts-sdk": {
        "client": ["node", str(BENCH / "ts" / "client.mjs")],
        "agent": ["node", str(BENCH / "ts" / "agent.mjs")],
        # The agent serves remote ACP with `--listen HOST:PORT` (first stderr
        # line `listening on HOST:PORT`, until stdin closes); the client takes
        # a URL where the agent command goes.
        "remote": True,
    },
    "libacp-kotlin": {
        "client": ["java", "-cp", KOTLIN_CP, "bench.LibacpKt", "client"],
        "agent": ["java", "-cp", KOTLIN_CP, "bench.LibacpKt", "agent"],
    },
    # The same programs with the Kotlin binding's JNI fast path switched off
    # (UniFFI's JNA calls only): the A/B of issue 24. Not in the default set.
    "libacp-kotlin-uniffi": {
        "client": ["java", "-Dlibacp.jni=false", "-cp", KOTLIN_CP, "bench.LibacpKt", "client"],
        "agent": ["java", "-Dlibacp.jni=false", "-cp", KOTLIN_CP, "bench.LibacpKt", "agent"],
        "default": False,
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
# An A/B of the Swift binding in one run: BENCH_SWIFT_BASE names another
# build of bench-swift (inside the repository, which the chroot sees; say the
# previous commit's, copied aside) timed as `libacp-swift-base`.
if os.environ.get("BENCH_SWIFT_BASE"):
    base = str(Path(os.environ["BENCH_SWIFT_BASE"]).resolve())
    IMPLS["libacp-swift-base"] = {
        "client": [sys.executable, str(BENCH / "swift" / "client.py"), "--bin", base],
        "agent": [str(ROOT / "scripts" / "swift" / "run.sh"), base, "agent"],
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


def requested(opts) -> list[str]:
    """The implementations `--impls` names, or every one that is in the default set."""
    if opts.impls:
        return opts.impls.split(",")
    return [i for i in IMPLS if IMPLS[i].get("default", True)]


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
    impls = [i for i in requested(opts) if i in IMPLS]
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


def start_server(agent: str, time_file: str | None) -> tuple[subprocess.Popen, int]:
    """Starts AGENT --listen 127.0.0.1:0 (under GNU time -v when time_file is
    given); returns it and its port."""
    cmd = ([GNU_TIME, "-v", "-o", time_file] if time_file else []) + IMPLS[agent]["agent"] + ["--listen", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline() if proc.stderr else ""
    m = re.search(r"listening on [^\s]*:(\d+)", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"{agent} --listen said {line.strip()!r}")
    # Keep draining its stderr.
    threading_drain(proc)
    return proc, int(m.group(1))


def threading_drain(proc: subprocess.Popen) -> None:
    import threading

    def drain() -> None:
        for _ in proc.stderr or []:
            pass

    threading.Thread(target=drain, daemon=True).start()


def stop_server(proc: subprocess.Popen) -> None:
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_remote_cell(impl: str, transport: str, workload: str, args: list[str]) -> dict:
    """IMPL's client against IMPL's server over TRANSPORT (ws or http)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as f:
        time_file = f.name
    record: dict = {"client": impl, "agent": impl, "workload": workload, "transport": transport}
    try:
        server, port = start_server(impl, time_file)
    except (OSError, RuntimeError) as e:
        record["error"] = str(e)
        return record
    url = f"{transport}://127.0.0.1:{port}/acp"
    cmd = [GNU_TIME, "-f", "", "--"] + IMPLS[impl]["client"] + [workload, *args, "--", url]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired:
        out, err, code = "", f"timed out after {TIMEOUT_S} s", -1
    stop_server(server)
    usage = parse_time_v(Path(time_file).read_text(errors="replace"))
    os.unlink(time_file)
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("{")), None)
    if line is None:
        record["error"] = f"exit {code}, no result line; stderr: {err.strip()[-600:]}"
        return record
    record.update(json.loads(line))
    record.update(usage)
    if "error" not in record and code != 0:
        record["error"] = f"client exit {code}: {err.strip()[-600:]}"
    return record


def rss_kb(pid: int) -> int:
    for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith("VmRSS:"):
            return int(ln.split()[1])
    return 0


def idle_cell(impl: str, n: int) -> dict:
    """IMPL's server with N idle WebSocket connections (opened and
    initialized by libacp's Rust bench client): its RSS before and after."""
    record: dict = {"server": impl, "connections": n}
    server, port = start_server(impl, None)
    try:
        # The server process itself (node, or the binary).
        before = rss_kb(server.pid)
        client = subprocess.Popen(
            [str(TARGET / "bench-libacp-client"), "idle", str(n), "--", f"ws://127.0.0.1:{port}/acp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        ready = client.stdout.readline() if client.stdout else ""
        if not ready.startswith("{"):
            client.kill()
            record["error"] = f"idle client: {ready!r} {client.stderr.read()[-400:] if client.stderr else ''}"
            return record
        time.sleep(1.0)
        after = rss_kb(server.pid)
        if client.stdin:
            client.stdin.close()
        client.wait(timeout=60)
        record.update({"rss_before_kb": before, "rss_after_kb": after, "per_connection_kib": (after - before) / n})
        return record
    finally:
        stop_server(server)


def remote(opts) -> int:
    """W1 and W2 over each remote transport, and RSS per idle connection."""
    impls = [i for i in requested(opts) if IMPLS.get(i, {}).get("remote")]
    transports = [t for t in opts.remote.split(",") if t in ("ws", "http")]
    workloads = [w for w in (opts.workloads.split(",") if opts.workloads else ["w1", "w2"]) if w in ("w1", "w2")]
    argsets = QUICK_ARGS if opts.quick else FULL_ARGS
    log(f"bench remote: {impls} over {transports}, {workloads} x {opts.reps} reps; {machine()}")
    records = []
    stdio = []  # libacp's own stdio W1, the reference of the remote W1 target
    for rep in range(opts.reps):
        if "w1" in workloads and "libacp-rust" in impls:
            rec = run_cell("libacp-rust", "libacp-rust", "w1", argsets["w1"])
            stdio.append(rec)
            log(f"  rep {rep + 1}/{opts.reps} stdio w1 libacp-rust: {rec.get('error') or rec['result']['seconds']}")
        for t in transports:
            for w in workloads:
                for impl in impls:
                    rec = run_remote_cell(impl, t, w, argsets[w])
                    rec["rep"] = rep
                    records.append(rec)
                    status = rec.get("error") or f"{primary(w, rec['result']):.3f} s"
                    log(f"  rep {rep + 1}/{opts.reps} {t} {w} {impl}: {status}")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"## Remote results ({now})\n\nMachine: {machine()}. Each implementation's client against its own server on 127.0.0.1; medians of {opts.reps} runs; args {json.dumps({w: argsets[w] for w in workloads})}.")
    stdio_w1 = med([r["result"]["seconds"] for r in stdio if "error" not in r])
    for t in transports:
        name = {"ws": "WebSocket", "http": "Streamable HTTP (HTTP/1.1)"}[t]
        print(f"\n## Over {name}")
        print(table([r for r in records if r["transport"] == t], impls, workloads))
        remote_w1 = med([r["result"]["seconds"] for r in records if r["transport"] == t and r["client"] == "libacp-rust" and r["workload"] == "w1" and "error" not in r])
        if stdio_w1 and remote_w1:
            print(f"\nlibacp-rust W1 over {name}: {fmt(remote_w1)} s; over stdio in the same run: {fmt(stdio_w1)} s ({ratio(remote_w1, stdio_w1)}).")
    idle = []
    if opts.idle:
        print(f"\n## Server RSS per idle WebSocket connection ({opts.idle} connections)\n")
        print("| server | RSS before MiB | RSS after MiB | KiB per connection | vs rust-sdk |")
        print("|---|---|---|---|---|")
        for impl in impls:
            try:
                rec = idle_cell(impl, opts.idle)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
                rec = {"server": impl, "error": str(e)}
            idle.append(rec)
            log(f"  idle {impl}: {rec.get('error') or rec['per_connection_kib']}")
        ref = next((r.get("per_connection_kib") for r in idle if r["server"] == "rust-sdk"), None)
        for r in idle:
            if "error" in r:
                print(f"| {r['server']} | - | - | failed: {r['error'][:80]} | - |")
                continue
            print(f"| {r['server']} | {r['rss_before_kb'] / 1024:.1f} | {r['rss_after_kb'] / 1024:.1f} | {r['per_connection_kib']:.1f} | {ratio(r['per_connection_kib'], ref)} |")
    errors = [r for r in records + idle if "error" in r]
    for r in errors:
        print(f"\nFAILED {r}")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"date": now, "machine": machine(), "records": records, "idle": idle}, indent=1))
    return 1 if errors else 0


def smoke(opts) -> int:
    """Every client against every agent on the `smoke` workload."""
    impls = [i for i in requested(opts) if i in IMPLS]
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
    p.add_argument("--remote", help="remote ACP: comma-separated transports (ws, http)")
    p.add_argument("--idle", type=int, default=1000, help="with --remote: idle WebSocket connections for the RSS measure (0: skip)")
    for w in WORKLOADS:
        p.add_argument(f"--{w}", help=f"override the {w} args, e.g. --{w} '{' '.join(FULL_ARGS[w])}'")
    opts = p.parse_args()
    if not Path(GNU_TIME).exists():
        log(f"bench: {GNU_TIME} (GNU time) is missing; bench/run.sh installs it")
        return 2
    if opts.remote:
        return remote(opts)
    return smoke(opts) if opts.smoke else bench(opts)


if __name__ == "__main__":
    sys.exit(main())
