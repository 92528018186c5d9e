"""The examples in examples/python run as documented: the client drives the
agent through a whole turn (streamed reply, tool call, permission, stop
reason), and both processes exit cleanly (libacp's threads outlive
`asyncio.run`; the interpreter's shutdown must not crash on them, which it
did in 8 runs out of 10 before the fix, so the check is repeated)."""

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
    for name in ("agent.py", "client.py"):
        source = (EXAMPLES / name).read_text()
        body = source[source.index("import asyncio") :]
        assert f"```python\n{body}```" in readme, f"README quickstart differs from {name}"
