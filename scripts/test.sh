#!/usr/bin/env bash
# Runs every test of the project, in every language it has so far, and ends
# with one "N passed, N failed" line. Installs what it needs itself: cargo
# fetches the pinned crates (Cargo.lock), scripts/setup-interop.sh the pinned
# official TypeScript and Python SDKs (npm, PyPI), the C and Python stages
# their Debian packages and venvs, bench/run.sh --smoke the benchmark
# programs' builds, venv and npm packages (all pinned).
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

echo "== C/C++ examples: install-ffi.sh, find_package, the examples against official SDK peers"
# Prints a cargo-style "test result:" line, counted below with the Rust tests.
./scripts/test-examples-c.sh 2>&1 | tee -a "$log" || status=1

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

# --- C ABI (tests/c): C/C++ tests, the shared scenarios through acp.h and
# a valgrind pass, run by scripts/test-c.sh after the Rust tests; its
# closing "C: N passed, M failed" line is folded into the counts below.
echo "== C ABI: C/C++ tests, scenarios and valgrind (scripts/test-c.sh)"
c_log=$(mktemp)
./scripts/test-c.sh 2>&1 | tee "$c_log"
c_status=${PIPESTATUS[0]}
read -r c_passed c_failed < <(sed -n 's/^C: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$c_log" | tail -n 1)
rm -f "$c_log"
c_passed=${c_passed:-0}
c_failed=${c_failed:-0}
if [ "$c_status" -ne 0 ] && [ "$c_failed" -eq 0 ]; then
  c_failed=1 # it stopped before counting (an install or build error)
fi
[ "$c_status" -ne 0 ] && status=1
passed=$((passed + c_passed))
failed=$((failed + c_failed))
# --- end C ABI

# --- Python binding (bindings/python): pip install ./bindings/python, then
# pytest; its closing "Python: N passed, M failed" line is folded in.
echo "== Python binding: pip install ./bindings/python and pytest (scripts/test-python.sh)"
py_log=$(mktemp)
./scripts/test-python.sh 2>&1 | tee "$py_log"
py_status=${PIPESTATUS[0]}
read -r py_passed py_failed < <(sed -n 's/^Python: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$py_log" | tail -n 1)
rm -f "$py_log"
py_passed=${py_passed:-0}
py_failed=${py_failed:-0}
if [ "$py_status" -ne 0 ] && [ "$py_failed" -eq 0 ]; then
  py_failed=1
fi
[ "$py_status" -ne 0 ] && status=1
passed=$((passed + py_passed))
failed=$((failed + py_failed))
# --- end Python binding

# --- Benchmark cross-check (bench/): every bench client against every bench
# agent (libacp Rust, C and Python, the official Rust, TypeScript and
# Python SDKs, the raw baseline) on tiny workloads. Correctness only: no
# timing is checked. Its "bench smoke: N passed, M failed" line is folded in.
echo "== Benchmarks: the cross-check of every client against every agent (bench/run.sh --smoke)"
bench_log=$(mktemp)
./bench/run.sh --smoke 2>&1 | tee "$bench_log"
bench_status=${PIPESTATUS[0]}
read -r b_passed b_failed < <(sed -n 's/^bench smoke: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$bench_log" | tail -n 1)
rm -f "$bench_log"
b_passed=${b_passed:-0}
b_failed=${b_failed:-0}
if [ "$bench_status" -ne 0 ] && [ "$b_failed" -eq 0 ]; then
  b_failed=1 # it stopped before counting (a setup or build error)
fi
[ "$bench_status" -ne 0 ] && status=1
passed=$((passed + b_passed))
failed=$((failed + b_failed))
# --- end benchmarks

echo
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
