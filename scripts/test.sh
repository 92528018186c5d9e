#!/usr/bin/env bash
# Runs every test of the project, in every language it has so far, and ends
# with one "N passed, N failed" line. Installs what it needs itself: cargo
# fetches the pinned crates (Cargo.lock), scripts/setup-interop.sh the pinned
# official TypeScript and Python SDKs (npm, PyPI), scripts/setup-lb.sh HAProxy
# (Debian) for the load-balancer test, the C, Python and Node
# stages their Debian packages, venvs and npm packages, the Kotlin stage its
# Maven Central libraries (pinned in the poms) and the UniFFI bindgen (PyPI),
# the Swift stage its toolchain (Debian trixie's swiftlang in a chroot, cached),
# bench/run.sh --smoke the benchmark programs' builds, venv and npm packages
# (all pinned), scripts/test-fuzz.sh the nightly toolchain if missing and
# cargo-fuzz (pinned).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
summary=$(mktemp)
trap 'rm -f "$log" "$summary"' EXIT
status=0

# note_stage NAME PASSED FAILED SECONDS LOG: one line of the summary printed
# at the end, and the lines of LOG that name what failed (at most 15), so
# that the tail of the output (all a CI report may keep) says which test
# failed and how long each stage took.
failure_lines='^test .* \.\.\. FAILED|^error: test failed|^FAILED[ :]|^ERROR |^not ok |<<< (FAILURE|ERROR)!|Test Case .* failed|\*\*\*Failed|valgrind FAIL|: [1-9][0-9]* failed|^fuzz: .* FAILED|^FAIL '
note_stage() {
  local name=$1 p=$2 f=$3 secs=$4 stage_log=$5
  printf '%-12s %5s passed, %3s failed, %5s s\n' "$name" "$p" "$f" "$secs" >>"$summary"
  if [ "$f" -ne 0 ]; then
    grep -aE "$failure_lines" "$stage_log" | grep -v ' 0 failed' | head -n 15 | sed 's/^/    /' >>"$summary"
  fi
}

echo "== Installing the pinned official SDKs the interop tests run against"
if ! ./scripts/setup-interop.sh; then
  echo "setup-interop.sh failed: the interop tests will fail" >&2
  status=1
fi

echo "== Installing HAProxy (Debian) for the load-balancer test (gateway/tests/load_balancer.rs)"
if ! ./scripts/setup-lb.sh; then
  echo "setup-lb.sh failed: the load-balancer test will fail" >&2
  status=1
fi

echo "== Rust: unit, integration, scenario and interop tests (cargo test --workspace)"
rust_start=$SECONDS
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
note_stage "Rust + C ex" "$passed" "$failed" $((SECONDS - rust_start)) "$log"

# stage TITLE PREFIX COMMAND...: runs one language's suite, which ends with
# "PREFIX: N passed, M failed", and folds those counts into the totals. A
# suite that fails before printing its counts (an install or build error)
# counts as one failure.
stage() {
  local title=$1 prefix=$2
  shift 2
  echo "== $title"
  local stage_log s_status s_passed s_failed s_start=$SECONDS
  stage_log=$(mktemp)
  "$@" 2>&1 | tee "$stage_log"
  s_status=${PIPESTATUS[0]}
  read -r s_passed s_failed < <(sed -n "s/^$prefix: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p" "$stage_log" | tail -n 1)
  s_passed=${s_passed:-0}
  s_failed=${s_failed:-0}
  if [ "$s_status" -ne 0 ] && [ "$s_failed" -eq 0 ]; then
    s_failed=1
  fi
  note_stage "$prefix" "$s_passed" "$s_failed" $((SECONDS - s_start)) "$stage_log"
  rm -f "$stage_log"
  if [ "$s_status" -ne 0 ]; then
    status=1
    # A build that dies of a full disk says so far above; say it here too.
    echo "== $prefix: exit $s_status; free disk: $(df -h . 2>/dev/null | awk 'NR == 2 {print $4}')"
  fi
  passed=$((passed + s_passed))
  failed=$((failed + s_failed))
}

# The C ABI (tests/c): C/C++ tests, the shared scenarios through acp.h and
# a valgrind pass.
stage "C ABI: C/C++ tests, scenarios and valgrind (scripts/test-c.sh)" C ./scripts/test-c.sh
# The Python binding: pip install ./bindings/python, pytest, type checks, lint.
stage "Python binding: pip install ./bindings/python, pytest, mypy, ruff (scripts/test-python.sh)" \
  Python ./scripts/test-python.sh
# The Node binding: the napi build, node --test, the generated files, lint.
stage "Node binding: napi build, node --test, generated-file and lint checks (scripts/test-node.sh)" \
  Node ./scripts/test-node.sh
# The Kotlin binding (UniFFI): generated-source drift, mvn test (JUnit and the
# shared scenarios), the examples.
stage "Kotlin binding: generated sources, mvn test, examples (scripts/test-kotlin.sh)" \
  Kotlin ./scripts/test-kotlin.sh
# The Swift binding (UniFFI): the Swift toolchain in a cached trixie chroot,
# generated-source drift (UniFFI, the Codable models), swift test (XCTest and
# the shared scenarios), interop with the official SDKs, the examples.
stage "Swift binding: toolchain, generated sources, swift test, interop, examples (scripts/test-swift.sh)" \
  Swift ./scripts/test-swift.sh
# The benchmark cross-check (bench/): every bench client against every bench
# agent (libacp Rust, C, Python and Node, the official Rust, TypeScript and Python
# SDKs, the raw baseline) on tiny workloads. Correctness only: no timing is
# checked.
stage "Benchmarks: every client against every agent (bench/run.sh --smoke)" \
  "bench smoke" ./bench/run.sh --smoke
# The fuzz smoke pass (fuzz/): the nightly toolchain and cargo-fuzz (pinned),
# then each cargo-fuzz target (framing, message decoding, the protocol state
# machine, the C ABI's text entry points) for 20 seconds from its committed
# corpus (FUZZ_SECONDS; the script alone runs a minute each). FUZZ=0 skips it.
stage "Fuzzing: every cargo-fuzz target for ${FUZZ_SECONDS:-20} s (scripts/test-fuzz.sh)" \
  fuzz env FUZZ_SECONDS="${FUZZ_SECONDS:-20}" ./scripts/test-fuzz.sh

echo
echo "== summary: each stage's counts and time, and the lines naming what failed"
cat "$summary"
echo "${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
