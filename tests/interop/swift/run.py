#!/usr/bin/env python3
"""Interop of libacp's Swift binding with the official ACP SDKs, both ways.

The Swift counterpart of the Kotlin binding's InteropTest (see
tests/interop/README.md for the check sequence and the SDK pins):

* the libacp Swift client (libacp-swift-interop-client, this package) runs
  the check sequence against the official TypeScript, Python and Rust agents
  and against the libacp Swift agent;
* the official TypeScript, Python and Rust clients, and the Rust libacp
  interop client, drive the libacp Swift agent (libacp-swift-interop-agent).

Swift runs only inside the chroot of scripts/swift/run.sh, and node and the
Python SDK only outside it. So the Swift agent is run as
`scripts/swift/run.sh <agent>`, and for an agent that cannot run in the
chroot (TypeScript, Python) this script spawns the agent itself on two
pipes and hands the client its ends: `run.sh <client> --fds R W`. The
client then closes W at the end, and this script requires the agent to exit
0 within 5 s. Agents that run in the chroot (the Rust and Swift ones) are
spawned by the client: `run.sh <client> -- <agent>`.

Every pair runs in its own process group, bounded by a 60 s hang detector
(the whole group is killed on time-out; each client also has its own 30 s
deadline). Prints one line per pair, `PASS <pair> (<secs> s)` or
`FAIL <pair>: <reason>` followed by the tail of its stderr, and ends with
`Swift interop: N passed, M failed`; exits 1 if any failed.

Needs: the Swift chroot (scripts/swift/setup.sh, run by scripts/swift/run.sh),
target/release/libacp_uniffi.so (cargo build --release -p libacp-uniffi),
the Rust peers (cargo build -p libacp-tests --bins) and the official SDKs
(scripts/setup-interop.sh). Python 3 standard library only.

    python3 tests/interop/swift/run.py
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parents[3]
RUN_SH = str(REPO / "scripts" / "swift" / "run.sh")
PACKAGE = REPO / "tests" / "interop" / "swift"
INTEROP = REPO / "tests" / "interop"
LIB = REPO / "target" / "release"
SDK_PYTHON = REPO / ".venv-interop" / "bin" / "python"
TS_SDK = INTEROP / "ts" / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
SETUP = "run scripts/setup-interop.sh"

#: A hang detector, far above a pair's time (about 1 s), not a speed requirement.
LIMIT = 60
#: How long an agent may take to exit once its stdin is closed.
EXIT_GRACE = 5
BUILD_LIMIT = 900
STDERR_TAIL_LINES = 20


class Unavailable(Exception):
    """A peer that cannot run here; the message says how to get it."""


@dataclass
class Outcome:
    """How one run ended: `code` is None when it was killed as hung."""

    code: Optional[int]
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


def session_members(session: int) -> list[int]:
    """The processes of session `session` (Linux /proc; none elsewhere)."""
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...; comm may hold spaces and parens.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == session:
            members.append(int(entry.name))
    return members


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL to everything `process` started: its process group, and the
    rest of its session (start_new_session), since libacp spawns an agent
    in a process group of its own."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in session_members(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wait_bounded(process: subprocess.Popen, limit: float) -> Optional[int]:
    """The exit code of `process`, or None (its group killed) if it outlives `limit`."""
    try:
        return process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.wait()
        return None


def read(file) -> str:
    file.seek(0)
    return file.read().decode("utf-8", "replace")


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_bounded(command: list[str], limit: Optional[float] = None) -> Outcome:
    """Runs `command` from the repository root in its own process group,
    stdin on /dev/null; kills the group if it outlives `limit` (default
    LIMIT), and any of it still running afterwards."""
    limit = LIMIT if limit is None else limit
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        code = wait_bounded(process, limit)
        kill_group(process)
        return Outcome(code, read(out), read(err))


# -- the peers ---------------------------------------------------------------


def build() -> Path:
    """Builds this package in the chroot; returns its binaries' directory."""
    flags = ["--package-path", str(PACKAGE), "-Xlinker", f"-L{LIB}", "-Xlinker", "-rpath", "-Xlinker", str(LIB)]
    if not (LIB / "libacp_uniffi.so").exists():
        raise Unavailable(f"{LIB}/libacp_uniffi.so is not built: cargo build --release -p libacp-uniffi")
    built = run_bounded([RUN_SH, "swift", "build", *flags], limit=BUILD_LIMIT)
    if built.code != 0:
        hung = " (no result within %d s)" % BUILD_LIMIT if built.code is None else ""
        raise Unavailable(f"swift build failed: exit {built.code}{hung}\n{tail(built.stdout + built.stderr, 40)}")
    shown = run_bounded([RUN_SH, "swift", "build", *flags, "--show-bin-path"])
    if shown.code != 0 or not shown.last_line:
        raise Unavailable(f"swift build --show-bin-path failed: {tail(shown.stderr)}")
    return Path(shown.last_line)


def python_sdk(script: str) -> list[str]:
    """The official Python SDK's interpreter running `script`."""
    if not os.access(SDK_PYTHON, os.X_OK):
        raise Unavailable(f"the official Python SDK is not installed ({SDK_PYTHON} is missing): {SETUP}")
    if subprocess.run([str(SDK_PYTHON), "-c", "import acp"], capture_output=True).returncode != 0:
        raise Unavailable(f"the official Python SDK is not installed in {SDK_PYTHON}: {SETUP}")
    return [str(SDK_PYTHON), str(INTEROP / "python" / script)]


def ts_sdk(script: str) -> list[str]:
    """Node running one of the official TypeScript SDK's peers."""
    if not TS_SDK.exists():
        raise Unavailable(f"the official TypeScript SDK is not installed ({TS_SDK} is missing): {SETUP}")
    if shutil.which("node") is None:
        raise Unavailable("node is not on PATH (the official TypeScript SDK's peers need node >= 20)")
    return ["node", str(INTEROP / "ts" / script)]


def rust_peer(name: str) -> list[str]:
    """A peer built by `cargo build -p libacp-tests --bins` (runs in and out of the chroot)."""
    program = REPO / "target" / "debug" / name
    if not os.access(program, os.X_OK):
        raise Unavailable(f"{program} is not built: cargo build -p libacp-tests --bins")
    return [str(program)]


# -- the runs ----------------------------------------------------------------


def converse(client: list[str], agent: list[str]) -> Outcome:
    """`client -- agent...`: the client spawns the agent."""
    return run_bounded([*client, "--", *agent])


def converse_over_pipes(swift_client: str, agent: list[str]) -> Outcome:
    """The Swift client (in the chroot) with an agent spawned here, on the
    host: the agent gets two pipes as stdin/stdout, the client their other
    ends (`--fds R W`). Once the client is done (and has closed W), the
    agent must exit 0 within EXIT_GRACE seconds."""
    started = time.monotonic()
    agent_stdin_r, agent_stdin_w = os.pipe()
    agent_stdout_r, agent_stdout_w = os.pipe()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as agent_err:
        try:
            agent_process = subprocess.Popen(
                agent, cwd=REPO, stdin=agent_stdin_r, stdout=agent_stdout_w, stderr=agent_err,
                start_new_session=True,
            )
        except OSError:
            os.close(agent_stdout_r)
            os.close(agent_stdin_w)
            raise
        finally:
            # The agent holds its ends now.
            os.close(agent_stdin_r)
            os.close(agent_stdout_w)
        try:
            client_fds = (agent_stdout_r, agent_stdin_w)
            try:
                client = subprocess.Popen(
                    [RUN_SH, swift_client, "--fds", str(agent_stdout_r), str(agent_stdin_w)],
                    cwd=REPO, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    pass_fds=client_fds, start_new_session=True,
                )
            finally:
                # Only the client holds them now: its exit is the agent's EOF.
                for fd in client_fds:
                    os.close(fd)
            code = wait_bounded(client, LIMIT)
            kill_group(client)
            stderr = read(err) + "\n" + "".join(f"[agent] {line}\n" for line in read(agent_err).splitlines())
            outcome = Outcome(code, read(out), stderr)
            if code != 0 or outcome.last_line != "OK":
                return outcome
            left = max(0.0, LIMIT - (time.monotonic() - started))
            agent_code = wait_bounded(agent_process, min(EXIT_GRACE, left))
            if agent_code is None:
                return Outcome(1, f"FAIL: agent still running {EXIT_GRACE} s after its stdin was closed", stderr)
            if agent_code != 0:
                return Outcome(1, f"FAIL: agent exited with code {agent_code} after its stdin was closed", stderr)
            return outcome
        finally:
            kill_group(agent_process)
            agent_process.wait()


@dataclass
class Pair:
    name: str
    run: Callable[[], Outcome]


def pairs(bin_dir: Optional[Path]) -> list[Pair]:
    """The pairs, in order; `bin_dir` is None when the build failed."""
    def swift(name: str) -> str:
        if bin_dir is None:
            raise Unavailable("not run: the Swift build failed")
        return str(bin_dir / name)

    def swift_client() -> str:
        return swift("libacp-swift-interop-client")

    def swift_agent() -> list[str]:
        return [RUN_SH, swift("libacp-swift-interop-agent")]

    return [
        # The libacp Swift client driving the official agents (and the libacp Swift agent).
        Pair("libacp Swift client -> official TypeScript agent",
             lambda: converse_over_pipes(swift_client(), ts_sdk("agent.mjs"))),
        Pair("libacp Swift client -> official Python agent",
             lambda: converse_over_pipes(swift_client(), python_sdk("agent.py"))),
        Pair("libacp Swift client -> official Rust agent",
             lambda: converse([RUN_SH, swift_client()], rust_peer("official-rust-agent"))),
        Pair("libacp Swift client -> libacp Swift agent",
             lambda: converse([RUN_SH, swift_client()], [swift("libacp-swift-interop-agent")])),
        # Official clients (and the Rust libacp client) driving the libacp Swift agent.
        Pair("official TypeScript client -> libacp Swift agent",
             lambda: converse(ts_sdk("client.mjs"), swift_agent())),
        Pair("official Python client -> libacp Swift agent",
             lambda: converse(python_sdk("client.py"), swift_agent())),
        Pair("official Rust client -> libacp Swift agent",
             lambda: converse(rust_peer("official-rust-client"), swift_agent())),
        Pair("Rust libacp interop client -> libacp Swift agent",
             lambda: converse(rust_peer("libacp-interop-client"), swift_agent())),
    ]


def indent(text: str) -> str:
    return "".join(f"    | {line}\n" for line in text.splitlines())


def main() -> int:
    started = time.monotonic()
    bin_dir: Optional[Path] = None
    try:
        bin_dir = build()
        print(f"built tests/interop/swift in {time.monotonic() - started:.1f} s", flush=True)
    except Unavailable as e:
        reason, _, detail = str(e).partition("\n")
        print(f"FAIL build: {reason}\n{indent(detail)}", end="", flush=True)

    passed = failed = 0
    for pair in pairs(bin_dir):
        pair_started = time.monotonic()
        try:
            outcome = pair.run()
        except Unavailable as e:
            outcome = Outcome(1, f"FAIL: {e}", "")
        seconds = time.monotonic() - pair_started
        if outcome.code == 0 and outcome.last_line == "OK":
            passed += 1
            print(f"PASS {pair.name} ({seconds:.1f} s)", flush=True)
            continue
        failed += 1
        if outcome.code is None:
            reason = f"no result within {LIMIT} s (process group killed)"
        else:
            last = outcome.last_line
            reason = last[len("FAIL: "):] if last.startswith("FAIL: ") else f"exit {outcome.code}, last line {last!r}"
        print(f"FAIL {pair.name}: {reason} ({seconds:.1f} s)", flush=True)
        if outcome.stderr.strip():
            print(indent(tail(outcome.stderr)), end="", flush=True)
    print(f"Swift interop: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
