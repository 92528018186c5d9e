"""The examples in examples/python run as documented: the client drives the
agent through a whole turn (streamed reply, tool call, permission, stop
reason), locally and over remote ACP (remote_server.py and
remote_client.py, the README's remote quickstart), and every process exits
cleanly (libacp's threads outlive
`asyncio.run`; the interpreter's shutdown must not crash on them, which it
did in 8 runs out of 10 before the fix, so the check is repeated)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"


def test_the_example_client_drives_the_example_agent():
    for _ in range(5):
        run_once()


def run_once():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py"), sys.executable, str(EXAMPLES / "agent.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr}"
    assert "You said: hello" in out.stdout
    assert "[tool_call]" in out.stdout
    assert "[permission for t1: allowing]" in out.stdout
    assert out.stdout.rstrip().endswith("=> end_turn")


def test_the_readme_quickstarts_are_the_examples():
    readme = (EXAMPLES.parents[1] / "bindings" / "python" / "README.md").read_text()
    for name in ("agent.py", "client.py", "remote_server.py", "remote_client.py"):
        source = (EXAMPLES / name).read_text()
        body = source[source.index("import asyncio") :]
        assert f"```python\n{body}```" in readme, f"README quickstart differs from {name}"


def test_the_remote_quickstart_runs_as_documented():
    env = dict(os.environ, ACP_TOKEN="s3cret", PYTHONFAULTHANDLER="1")
    # Started as a terminal starts it, with Ctrl+C's default action: a test
    # run started in the background without job control (`make test &` in a
    # script) ignores SIGINT, and a child inherits an ignored signal (a
    # handler resets to the default on exec).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server = subprocess.Popen(
            [sys.executable, str(EXAMPLES / "remote_server.py"), "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        line = server.stdout.readline()  # "serving ws://... and http://..."
        assert line.startswith("serving ws://127.0.0.1:"), line + server.stderr.read()
        ws, http = line.split()[1], line.split()[3]
        for url in (ws, http):
            out = subprocess.run(
                [sys.executable, str(EXAMPLES / "remote_client.py"), url],
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
            )
            assert out.returncode == 0, f"{url}: exit {out.returncode}: {out.stderr}"
            assert "You said: hello" in out.stdout
            assert "[permission for t" in out.stdout
            assert out.stdout.rstrip().endswith("=> end_turn")
        # Without the token: refused before any agent code runs.
        out = subprocess.run(
            [sys.executable, str(EXAMPLES / "remote_client.py"), ws],
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in env.items() if k != "ACP_TOKEN"},
        )
        assert out.returncode == 1 and "unauthorized" in out.stderr, out.stderr
        server.send_signal(signal.SIGINT)  # Ctrl+C: a graceful shutdown
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # PYTHONFAULTHANDLER: SIGABRT prints every thread's stack.
            server.send_signal(signal.SIGABRT)
            server.wait(timeout=60)
            raise AssertionError(
                f"Ctrl+C did not stop the server: {server.stderr.read()}"
            ) from None
        assert code == 0, server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
        server.stderr.close()
