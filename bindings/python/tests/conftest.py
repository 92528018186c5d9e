import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"


def peer(name: str) -> str:
    path = TARGET / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build -p libacp-tests --bins`")
    return str(path)


@pytest.fixture
def interop_agent() -> str:
    return peer("libacp-interop-agent")


@pytest.fixture
def interop_client() -> str:
    return peer("libacp-interop-client")
