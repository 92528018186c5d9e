#!/usr/bin/env bash
# The C/C++ test suite of libacp's C ABI (tests/c, see tests/c/README.md):
#  1. installs what is missing, from Debian only: cmake, make, gcc, g++,
#     valgrind, nlohmann-json3-dev (the C++ programs' JSON library);
#  2. builds libacp (cargo build -p libacp-ffi: libacp.so and libacp.a) and
#     the test peers (cargo build -p libacp-tests);
#  3. configures and builds tests/c with CMake into target/c-tests;
#  4. runs ctest (output shown for failures): every C test against
#     libacp.so and again against libacp.a, the C++ agent driven by the
#     interop clients, and the shared scenarios through the C ABI;
#  5. runs the C test binaries again under valgrind (memcheck, leak check:
#     any error or definite/indirect leak fails);
#  6. builds the suite again with AddressSanitizer and
#     UndefinedBehaviorSanitizer (GCC's runtimes, which Debian's gcc brings)
#     into target/c-tests-sanitize and runs it (any report fails a test).
# Idempotent. Ends with "C: N passed, M failed, K skipped" and exits
# non-zero if anything failed. VALGRIND=0 skips step 5, SANITIZE=0 step 6.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build="$repo/target/c-tests"
profile="$repo/target/debug"
passed=0
failed=0
skipped=0
failures=()

echo "== C: Debian packages"
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if ! { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${need[@]}"; }; then
    echo "could not install ${need[*]}" >&2
    echo "C: 0 passed, 1 failed"
    exit 1
  fi
else
  echo "all present"
fi

echo "== C: building libacp and the test peers (cargo)"
if ! cargo build --locked -p libacp-ffi -p libacp-tests; then
  echo "C: 0 passed, 1 failed"
  exit 1
fi

echo "== C: configuring and building tests/c (CMake)"
if ! cmake -S tests/c -B "$build" -DCMAKE_BUILD_TYPE=Debug >/dev/null ||
  ! cmake --build "$build" -j2; then
  echo "C: 0 passed, 1 failed"
  exit 1
fi

echo "== C: ctest"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$build" --output-on-failure -j2 2>&1 | tee "$log"
# One line per test: "N/M Test #K: NAME ....   Passed|***Failed|***Skipped".
read -r c_pass c_fail c_skip < <(awk '
  / Test +#[0-9]+: / {
    if ($0 ~ /\*\*\*Skipped|Not Run .*Skipped/) s++
    else if ($0 ~ / Passed +[0-9.]+ sec/) p++
    else f++
  }
  END { print p + 0, f + 0, s + 0 }' "$log")
passed=$((passed + c_pass))
failed=$((failed + c_fail))
skipped=$((skipped + c_skip))
[ "$c_fail" -gt 0 ] && failures+=("ctest: $c_fail failed (see above)")
if [ "$c_skip" -gt 0 ]; then
  # ctest hides a skipped test's output; the reasons matter (a host ability
  # the C ABI lacks, or an SDK not installed).
  echo "-- why tests were skipped:"
  awk '/^(SKIP |SKIP:)/ { on = 1 } /^<end of output>/ { on = 0 } on' \
    "$build/Testing/Temporary/LastTest.log"
fi

if [ "${VALGRIND:-1}" != "0" ]; then
  echo "== C: valgrind (memcheck; definite/indirect leaks are errors)"
  vg=(valgrind --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect
    --suppressions="$repo/tests/c/valgrind.supp" --quiet)
  export ACP_INTEROP_AGENT="$profile/libacp-interop-agent"
  export ACP_INTEROP_CLIENT="$profile/libacp-interop-client"
  # Valgrind slows libacp down ~20x: scale the tests' time limits.
  export ACP_TEST_TIME_SCALE=10
  # Lets a test tell valgrind artifacts from libacp bugs (see basics.c).
  export ACP_UNDER_VALGRIND=1
  # Two runs at a time (valgrind runs a process on one core at a time): each
  # writes its output and exit code to vg_dir/K.{log,rc}; they are reported
  # and counted in order once all ended.
  vg_dir=$(mktemp -d)
  vg_names=()
  run_vg() { # NAME COMMAND...: one valgrind run, started in the background
    local k=${#vg_names[@]}
    vg_names+=("$1")
    shift
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
      wait -n
    done
    ("$@" >"$vg_dir/$k.log" 2>&1; echo $? >"$vg_dir/$k.rc") &
  }
  for t in $("$build/acp_c_tests" --list); do
    run_vg "c.$t" "${vg[@]}" "$build/acp_c_tests" "$t"
  done
  run_vg "scenario runner self-test" "${vg[@]}" "$build/acp_scenario_runner" --self-test
  # Every scenario in one process (SKIPs exit 0 there; verdicts are in the
  # ctest pass above).
  run_vg "scenarios (all)" "${vg[@]}" "$build/acp_scenario_runner" "$repo/tests/scenarios"
  # The C++ agent under valgrind, driven by the interop client; its stdout
  # is the protocol, so valgrind reports to a file.
  agent_vg=$(mktemp)
  run_vg "c.agent_driven_by_interop_client" sh -c '
    "$1" -- valgrind --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --suppressions="$2" \
      --log-file="$3" "$4" || exit 1
    grep -q "ERROR SUMMARY: 0 errors" "$3" || { cat "$3"; exit 99; }' \
    sh "$profile/libacp-interop-client" "$repo/tests/c/valgrind.supp" "$agent_vg" \
    "$build/acp_c_interop_agent"
  wait
  for k in "${!vg_names[@]}"; do
    name=${vg_names[$k]}
    rc=$(cat "$vg_dir/$k.rc" 2>/dev/null || echo "none")
    if [ "$rc" = 0 ]; then
      passed=$((passed + 1))
      echo "valgrind ok   $name"
    else
      failed=$((failed + 1))
      failures+=("valgrind: $name (exit $rc)")
      echo "valgrind FAIL $name (exit $rc; 99 = memcheck errors)"
      sed 's/^/    /' "$vg_dir/$k.log"
    fi
  done
  rm -rf "$vg_dir"
  rm -f "$agent_vg"
fi

if [ "${SANITIZE:-1}" != "0" ]; then
  echo "== C: the suite again under AddressSanitizer and UndefinedBehaviorSanitizer (-DACP_SANITIZE=ON)"
  san_build=$build-sanitize
  san_log=$(mktemp)
  if cmake -S tests/c -B "$san_build" -DCMAKE_BUILD_TYPE=Debug -DACP_SANITIZE=ON >/dev/null &&
    cmake --build "$san_build" -j2 >"$san_log" 2>&1; then
    # Leaks are reported too (LeakSanitizer at exit); any report fails its test.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir "$san_build" --output-on-failure -j2 >"$san_log" 2>&1
    read -r s_pass s_fail < <(awk '
      / Test +#[0-9]+: / {
        if ($0 ~ /\*\*\*Skipped|Not Run .*Skipped/) next
        else if ($0 ~ / Passed +[0-9.]+ sec/) p++
        else f++
      }
      END { print p + 0, f + 0 }' "$san_log")
    echo "sanitizers: $s_pass passed, $s_fail failed"
    passed=$((passed + s_pass))
    failed=$((failed + s_fail))
    if [ "$s_fail" -gt 0 ]; then
      failures+=("sanitizers: $s_fail failed")
      grep -E "Failed|ERROR: AddressSanitizer|runtime error|LeakSanitizer" "$san_log" | head -40
    fi
  else
    failed=$((failed + 1))
    failures+=("sanitizers: the build failed")
    tail -40 "$san_log"
  fi
  rm -f "$san_log"
fi

echo
if [ "${#failures[@]}" -gt 0 ]; then
  echo "C failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "C: ${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
