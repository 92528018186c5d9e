#!/usr/bin/env bash
# The main demo: a libacp client spawns a libacp agent and they talk ACP's
# JSON-RPC over the agent's stdio, every frame printed. No API key, nothing
# to configure. Needs only a Rust toolchain (cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --locked -p libacp-examples --bins
exec ./target/debug/ping-client "$@"
