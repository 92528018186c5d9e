#!/usr/bin/env python3
"""Writes the protocol fuzz target's seed corpus from the shared scenarios.

For each tests/scenarios/*.json, the frames of its `send` steps become one
seed file in fuzz/corpus/protocol/: a flags byte (bit 0: libacp plays the
client; see fuzz_targets/protocol.rs) and then the frames, one per line, as
the scenario's peer writes them. `"$ref:NAME"` (an id libacp chose) becomes
the id libacp gives its n-th request (0, 1, 2, ...: the fuzz target's client
host calls initialize, session/new, session/prompt in that order); a string
`send` is written as it is. Further seeds per scenario set the "unique
ids" flag (bit 3), the Content-Length flag (bit 2), and the host's turn
flag (bit 7 agent side, bit 6 client side).

Run from anywhere: python3 fuzz/seed.py
"""

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
OUT = ROOT / "fuzz" / "corpus" / "protocol"


def substitute(value, refs):
    if isinstance(value, str) and value.startswith("$ref:"):
        name = value[len("$ref:"):]
        return refs.setdefault(name, len(refs))
    if isinstance(value, list):
        return [substitute(v, refs) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, refs) for k, v in value.items()}
    return value


def captures(value, refs):
    """Numbers the `$capture:` names in libacp's expected requests in order."""
    if isinstance(value, str) and value.startswith("$capture:"):
        refs.setdefault(value[len("$capture:"):], len(refs))
    elif isinstance(value, list):
        for v in value:
            captures(v, refs)
    elif isinstance(value, dict):
        for v in value.values():
            captures(v, refs)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted(SCENARIOS.glob("*.json")):
        scenario = json.loads(path.read_text())
        refs = {}
        lines = []
        for step in scenario["script"]:
            if "expect" in step and isinstance(step["expect"], dict) and "method" in step["expect"]:
                captures(step["expect"].get("id"), refs)
            if "send" not in step:
                continue
            frame = step["send"]
            if isinstance(frame, str):
                lines.append(frame.encode())
            else:
                frame = substitute(frame, refs)
                lines.append(json.dumps(frame, separators=(",", ":")).encode())
        if not lines:
            continue
        client = 1 if scenario["role"] == "client" else 0
        body = b"\n".join(lines) + b"\n"
        variants = [("", client), ("-unique", client | 8), ("-cl", client | 4)]
        # Agent side: the host also streams an update and reads a file
        # during a prompt turn (bit 7); client side: it cancels its turn
        # (bit 6).
        variants.append(("-turn", client | (64 if client else 128)))
        for suffix, flags in variants:
            (OUT / f"{path.stem}{suffix}").write_bytes(bytes([flags]) + body)


if __name__ == "__main__":
    main()
