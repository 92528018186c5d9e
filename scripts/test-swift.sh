#!/usr/bin/env bash
# The Swift binding's tests (the SwiftPM package LibACP: manifest at the
# repository root, sources in bindings/uniffi/swift):
#
#   * the Swift toolchain: Debian trixie's swiftlang in a chroot cached under
#     ${LIBACP_CACHE:-~/.cache/libacp} (scripts/swift/setup.sh; about 2 min
#     the first time, nothing after);
#   * the generated sources match their inputs: UniFFI's Swift from the Rust
#     crate (scripts/uniffi/generate.sh --check, which also builds the release
#     libacp_uniffi.so), the Codable models from the ACP v1 schema
#     (scripts/swift/gen_models.py --check);
#   * the Rust test peers (cargo build -p libacp-tests --bins);
#   * `swift test`: XCTest (both roles, cancellation both ways, closing, the
#     models, remote client and server, the shared scenarios in
#     tests/scenarios, locally and over WebSocket, Streamable HTTP and h2c
#     through target/debug/libacp-remote-splice);
#   * interop with the official SDKs both ways (tests/interop/swift/run.py);
#   * the examples (examples/swift/run.sh: the client spawns the agent and
#     prints a turn; examples/swift/run-remote.sh: the README's remote
#     quickstart, a server on 127.0.0.1 and a client printing a turn).
#
# Needs root (the chroot) and Debian's mirror. Ends with
# "Swift: N passed, M failed" (XCTest cases, interop pairs and checks).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)

LANGUAGE_NAME=Swift
# shellcheck source=lib/checks.sh
source scripts/lib/checks.sh

echo "== Swift: the toolchain (scripts/swift/setup.sh)"
scripts/swift/setup.sh || fail "scripts/swift/setup.sh failed (the Swift chroot)"

check "generated UniFFI sources are up to date (scripts/uniffi/generate.sh --check)" \
  scripts/uniffi/generate.sh --check
[ -f target/release/libacp_uniffi.so ] || fail "target/release/libacp_uniffi.so was not built"
check "the Codable models match the ACP v1 schema (scripts/swift/gen_models.py --check)" \
  python3 scripts/swift/gen_models.py --check

echo "== Swift: the Rust test peers (cargo build -p libacp-tests --bins)"
cargo build --locked --quiet -p libacp-tests --bins || fail "cargo build -p libacp-tests failed"

lib=$repo/target/release
link=(-Xlinker -L"$lib" -Xlinker -rpath -Xlinker "$lib")
echo "== Swift: swift build --build-tests"
scripts/swift/run.sh swift build --build-tests "${link[@]}" || fail "swift build failed"

echo "== Swift: swift test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A hang detector far above the suite's time (about 40 s, 10 of them the
# shared scenarios over the three remote links).
timeout -k 10 900 scripts/swift/run.sh swift test --skip-build 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# XCTest's summary: the line after "Test Suite 'All tests' ..." reads
# "Executed N tests, with F failures (U unexpected) in ...".
read -r run failures < <(awk '/^Test Suite .All tests. / { getline; print $2, $5 }' "$log" | tail -n 1)
run=${run:-0}
failures=${failures:-0}
xc_failed=$failures
xc_passed=$((run - failures))
if [ "$status" -ne 0 ] && [ "$xc_failed" -eq 0 ]; then
  xc_failed=1
fi

echo "== Swift: interop with the official SDKs (tests/interop/swift/run.py)"
check "official SDKs for the interop tests (scripts/setup-interop.sh)" ./scripts/setup-interop.sh
interop_log=$(mktemp)
python3 tests/interop/swift/run.py 2>&1 | tee "$interop_log"
interop_status=${PIPESTATUS[0]}
read -r i_passed i_failed < <(sed -n 's/^Swift interop: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$interop_log" | tail -n 1)
rm -f "$interop_log"
i_passed=${i_passed:-0}
i_failed=${i_failed:-0}
if [ "$interop_status" -ne 0 ] && [ "$i_failed" -eq 0 ]; then
  i_failed=1
fi

check "examples/swift: the client spawns the agent and prints a turn" examples/swift/run.sh
check "examples/swift: the remote quickstart (server and client on 127.0.0.1, one turn)" examples/swift/run-remote.sh

report "$((xc_passed + i_passed))" "$((xc_failed + i_failed))"
