"""Interop between libacp's Python binding and the official ACP SDKs, both
directions, over real pipes (tests/interop/README.md has the check sequence
and the SDK pins; scripts/setup-interop.sh installs them):

* the official clients (Python SDK `tests/interop/python/client.py`, and,
  cheaply, the TypeScript and Rust SDK ones) drive a libacp Python agent,
  `interop_agent_full.py` (interop_agent.py plus session/load with history);
* an official-Python-SDK client drives the quickstart agent
  `examples/python/agent.py` through what that example does;
* the libacp Python client `interop_client.py` runs the same check sequence
  against the official agents (Python SDK, TypeScript SDK, Rust SDK) and
  against the libacp Python agent.

Each run is one process printing `OK` or `FAIL: <reason>`, bounded by its
own 30 s deadline and by a 60 s timeout here. Tests that need an official
SDK that is not installed are skipped, saying how to install it.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parents[2]
INTEROP = ROOT / "tests" / "interop"
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"
SDK_PYTHON = ROOT / ".venv-interop" / "bin" / "python"
TIMEOUT_S = 60

LIBACP_AGENT = [sys.executable, str(TESTS / "interop_agent_full.py")]
LIBACP_CLIENT = [sys.executable, str(TESTS / "interop_client.py")]
EXAMPLE_AGENT = [sys.executable, str(ROOT / "examples" / "python" / "agent.py")]


def python_sdk(script: pathlib.Path) -> list:
    if not SDK_PYTHON.exists():
        pytest.skip(
            f"the official Python SDK is not installed ({SDK_PYTHON} is missing): "
            "run scripts/setup-interop.sh"
        )
    return [str(SDK_PYTHON), str(script)]


def ts_sdk(script: str) -> list:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the official TypeScript SDK runs on node >= 20)")
    if not (INTEROP / "ts" / "node_modules" / "@agentclientprotocol").exists():
        pytest.skip("the official TypeScript SDK is not installed: run scripts/setup-interop.sh")
    return [node, str(INTEROP / "ts" / script)]


def rust_sdk(name: str) -> list:
    path = TARGET / name
    if not path.exists():
        pytest.skip(f"{path} is not built: cargo build -p libacp-tests --bins")
    return [str(path)]


def converse(client: list, agent: list) -> None:
    """Runs `client -- agent...`; it must print OK and exit 0."""
    try:
        out = subprocess.run(
            client + ["--"] + agent, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(
            f"{client} -- {agent}: no result within {TIMEOUT_S} s\n"
            f"stdout:\n{e.stdout}\nstderr:\n{e.stderr}"
        )
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and lines[-1:] == ["OK"], (
        f"{client} -- {agent}: exit {out.returncode}\n"
        f"stdout:\n{out.stdout}\nstderr:\n{out.stderr[-4000:]}"
    )


# -- official clients driving libacp Python agents


def test_official_python_client_drives_the_libacp_python_agent():
    converse(python_sdk(INTEROP / "python" / "client.py"), LIBACP_AGENT)


def test_official_typescript_client_drives_the_libacp_python_agent():
    converse(ts_sdk("client.mjs"), LIBACP_AGENT)


def test_official_rust_client_drives_the_libacp_python_agent():
    converse(rust_sdk("official-rust-client"), LIBACP_AGENT)


def test_official_python_sdk_client_drives_the_example_agent():
    converse(python_sdk(TESTS / "official_sdk_example_client.py"), EXAMPLE_AGENT)


# -- the libacp Python client driving official agents


def test_libacp_python_client_drives_the_official_python_agent():
    converse(LIBACP_CLIENT, python_sdk(INTEROP / "python" / "agent.py"))


def test_libacp_python_client_drives_the_official_typescript_agent():
    converse(LIBACP_CLIENT, ts_sdk("agent.mjs"))


def test_libacp_python_client_drives_the_official_rust_agent():
    converse(LIBACP_CLIENT, rust_sdk("official-rust-agent"))


def test_libacp_python_client_drives_the_libacp_python_agent():
    converse(LIBACP_CLIENT, LIBACP_AGENT)
