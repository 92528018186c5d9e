#!/usr/bin/env python3
"""The libacp-swift bench client, as the harness runs it (bench/README.md):

    client.py [--bin BENCH_SWIFT] WORKLOAD [ARGS] -- AGENT_COMMAND...

The Swift client runs in the Swift toolchain's chroot (scripts/swift/run.sh),
where the other implementations' agents (node, python, java) cannot run. So
this spawns the agent here, on the host, with pipes for its stdin and stdout,
and starts `bench-swift client WORKLOAD [ARGS] --fds R W` with those pipes
inherited. The Swift client prints the result line and measures itself (its
own getrusage); this wrapper only waits. Exits with the client's status, or
1 if the agent did not exit within 10 s after the client closed its pipes.
`--bin` runs another build of bench-swift (run.py's BENCH_SWIFT_BASE).
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
ROOT = BENCH.parent
BIN = BENCH / "swift" / ".build" / "release" / "bench-swift"


def main() -> int:
    argv = sys.argv[1:]
    binary = BIN
    if argv[:1] == ["--bin"] and len(argv) > 1:
        binary, argv = Path(argv[1]), argv[2:]
    if "--" not in argv or argv.index("--") == 0 or argv.index("--") == len(argv) - 1:
        print("usage: client.py WORKLOAD [ARGS] -- AGENT_COMMAND...", file=sys.stderr)
        return 2
    split = argv.index("--")
    mine, agent_cmd = argv[:split], argv[split + 1 :]
    to_agent_r, to_agent_w = os.pipe()
    from_agent_r, from_agent_w = os.pipe()
    try:
        agent = subprocess.Popen(agent_cmd, stdin=to_agent_r, stdout=from_agent_w, start_new_session=True)
    except OSError as e:
        print(f"client.py: cannot start the agent {agent_cmd[0]}: {e}", file=sys.stderr)
        return 1
    finally:
        os.close(to_agent_r)
        os.close(from_agent_w)
    try:
        client = subprocess.run(
            [str(ROOT / "scripts" / "swift" / "run.sh"), str(binary), "client", *mine,
             "--fds", str(from_agent_r), str(to_agent_w)],
            pass_fds=(from_agent_r, to_agent_w),
            cwd=ROOT,
            check=False,
        )
    finally:
        os.close(from_agent_r)
        os.close(to_agent_w)
    try:
        agent.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(agent.pid, signal.SIGKILL)
        agent.wait()
        print("client.py: the agent was still running 10 s after the client closed its stdin", file=sys.stderr)
        return client.returncode or 1
    return client.returncode


if __name__ == "__main__":
    sys.exit(main())
