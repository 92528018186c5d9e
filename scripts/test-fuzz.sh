#!/usr/bin/env bash
# The fuzz smoke pass (fuzz/, issue 14): every cargo-fuzz target runs for a
# minute from its committed corpus (fuzz/corpus/<target>/).
#  1. installs what is missing: the nightly toolchain (rustup, minimal
#     profile; if rustup's server is out of reach, stable with
#     RUSTC_BOOTSTRAP=1 instead) and cargo-fuzz (crates.io, pinned,
#     `cargo install --locked`);
#  2. builds the targets (`cargo fuzz build`: release, debug
#     assertions, AddressSanitizer), their crates pinned by fuzz/Cargo.lock;
#  3. runs each target for FUZZ_SECONDS (60) seconds. New inputs go to a
#     temporary copy of the corpus, never into the work tree; a crash,
#     a timeout (30 s for one input) or 2 GiB of memory fails the target
#     and leaves the input in fuzz/artifacts/<target>/ (reproduce it with
#     `cargo +nightly fuzz run <target> <file>`).
# Ends with "fuzz: N passed, M failed" (one per target) and exits non-zero
# if anything failed. FUZZ=0 skips the stage.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
cargo_fuzz_version=0.13.2
seconds=${FUZZ_SECONDS:-60}
targets=(framing_ndjson framing_content_length message_decode protocol ffi_text remote_route json_check)

if [ "${FUZZ:-1}" = "0" ]; then
  echo "fuzz: skipped (FUZZ=0)"
  echo "fuzz: 0 passed, 0 failed"
  exit 0
fi

fail_setup() {
  echo "$1" >&2
  echo "fuzz: 0 passed, 1 failed"
  exit 1
}

echo "== fuzz: toolchain and cargo-fuzz $cargo_fuzz_version"
# cargo-fuzz needs nightly's -Z flags. The nightly toolchain comes from
# rustup's server, which not every machine reaches: without it, the pinned
# stable toolchain accepts them with RUSTC_BOOTSTRAP=1 (same sanitizer,
# same libFuzzer; said in the log).
toolchain=nightly
if ! rustup run nightly rustc --version 2>/dev/null; then
  if ! rustup toolchain install nightly --profile minimal; then
    toolchain=stable
    export RUSTC_BOOTSTRAP=1
    echo "fuzz: no nightly toolchain; building with stable and RUSTC_BOOTSTRAP=1"
  fi
fi
if ! cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $cargo_fuzz_version"; then
  cargo +stable install --locked cargo-fuzz --version "=$cargo_fuzz_version" ||
    fail_setup "could not install cargo-fuzz $cargo_fuzz_version"
fi
cargo fuzz --version

echo "== fuzz: building the targets (cargo +$toolchain fuzz build)"
cd "$repo/fuzz"
# --locked: fail rather than change fuzz/Cargo.lock.
cargo "+$toolchain" fetch --locked || fail_setup "fuzz/Cargo.lock is not up to date"
cargo "+$toolchain" fuzz build || fail_setup "the fuzz targets did not build"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
for target in "${targets[@]}"; do
  echo "== fuzz: $target for ${seconds} s"
  mkdir -p "$work/$target" "artifacts/$target"
  # The protocol and ffi_text targets keep a runtime and connections
  # between inputs: the leak checker would only report those.
  leaks=1
  case $target in protocol | ffi_text) leaks=0 ;; esac
  log="$work/$target.log"
  cargo "+$toolchain" fuzz run "$target" "$work/$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -detect_leaks="$leaks" -print_final_stats=1 \
    -artifact_prefix="$repo/fuzz/artifacts/$target/" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: $target passed (${runs:-?} inputs, ${cov:-cov: ?})"
  else
    failed=$((failed + 1))
    tail -n 60 "$log"
    echo "fuzz: $target FAILED (exit $rc; inputs in fuzz/artifacts/$target/)"
  fi
done

echo "fuzz: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
