"""The Python agent (tests/interop_agent.py) driven by the Rust interop
client's whole check sequence: stream, permission, fs read/write,
terminal, session/cancel."""

import asyncio
import pathlib
import sys

AGENT = pathlib.Path(__file__).with_name("interop_agent.py")


async def test_python_agent_under_interop_client(interop_client):
    proc = await asyncio.create_subprocess_exec(
        interop_client,
        "--",
        sys.executable,
        str(AGENT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, (out.decode(), err.decode())
    assert out.decode().strip().endswith("OK")
