#!/usr/bin/env bash
# Runs every test of the project, in every language it has so far, and ends
# with one "N passed, N failed" line. Installs what it needs itself: cargo
# fetches the pinned crates (Cargo.lock), scripts/setup-interop.sh the pinned
# official TypeScript and Python SDKs (npm, PyPI).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

echo "== Installing the pinned official SDKs the interop tests run against"
if ! ./scripts/setup-interop.sh; then
  echo "setup-interop.sh failed: the interop tests will fail" >&2
  status=1
fi

echo "== Rust: unit, integration, scenario and interop tests (cargo test --workspace)"
cargo test --locked --workspace --no-fail-fast 2>&1 | tee "$log" || status=1

read -r passed failed < <(awk '/^test result:/ {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passed/) p += $i
      if ($(i + 1) ~ /^failed/) f += $i
    }
  } END { print p + 0, f + 0 }' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # A build error or a crashed test binary: count it as a failure.
  failed=1
fi
echo
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
