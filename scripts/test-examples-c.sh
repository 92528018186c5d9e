#!/usr/bin/env bash
# Tests the C ABI's packaging and its two example programs, end to end:
#
#  1. scripts/install-ffi.sh into a fresh prefix, target/ffi-prefix (and a
#     second run changes nothing);
#  2. examples/c and examples/cpp built with CMake against that prefix only
#     (find_package(libacp): libacp::acp and libacp::acp_static), and the C
#     agent once more with pkg-config (libacp.pc);
#  3. the C++ plugin (examples/cpp, poll mode) against libacp's demo agent
#     (--yes: the file is written through the fs service; --no: it is not),
#     against the official TypeScript and Python SDK agents (`stream 5`), and
#     Ctrl-C during a `wait` turn (stop reason `cancelled`);
#  4. the C agent (examples/c, callback mode) under the official TypeScript,
#     Python and Rust clients' full check sequence (each must print OK),
#     linked against libacp.so, libacp.a, and via pkg-config;
#  5. the remote example (examples/c/acp_c_remote.c): a C server and a C
#     client over ws:// and http:// on loopback, with and without a token.
#
# Idempotent; needs cmake, a C and a C++ compiler, cargo, node and the
# pinned SDKs (it runs scripts/setup-interop.sh, which skips what is
# already installed). Logs: target/test-examples-c/. Ends with
#   C examples: N passed, M failed
# and exits non-zero if anything failed. The line before it has cargo's
# `test result:` shape so scripts/test.sh can count these tests with the
# Rust ones.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
prefix=$root/target/ffi-prefix
logs=$root/target/test-examples-c
jobs=2 # a shared 2-core machine: no more than make -j2
mkdir -p "$logs"

passed=0
failed=0
failures=()

ok() {
  echo "ok    $1"
  passed=$((passed + 1))
}

# not_ok NAME LOG REASON
not_ok() {
  echo "FAIL  $1: $3"
  if [ -n "$2" ] && [ -f "$2" ]; then
    echo "      --- last lines of $2:"
    tail -n 25 "$2" | sed 's/^/      | /'
  fi
  failed=$((failed + 1))
  failures+=("$1")
}

summary() {
  echo
  local result=ok
  [ "$failed" -eq 0 ] || result=FAILED
  # Counted by scripts/test.sh (its awk sums "N passed" / "N failed").
  echo "test result: ${result}. ${passed} passed; ${failed} failed; 0 ignored (C examples)"
  echo "C examples: ${passed} passed, ${failed} failed"
  [ "$failed" -eq 0 ]
  exit $?
}

# ---------------------------------------------------------------------------
echo "== Prerequisites"
missing=()
for tool in cmake cc c++ cargo node readelf; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  not_ok "prerequisites" "" "missing: ${missing[*]}"
  summary
fi
if ! ./scripts/setup-interop.sh >"$logs/setup-interop.log" 2>&1; then
  not_ok "setup-interop.sh" "$logs/setup-interop.log" "could not install the official SDKs"
fi
py=$root/.venv-interop/bin/python

echo "== Building the test peers (demo-agent, official-rust-client)"
if ! cargo build --locked -p libacp-tests -p libacp-examples --bins >"$logs/cargo.log" 2>&1; then
  not_ok "cargo build (test peers)" "$logs/cargo.log" "build failed"
fi

# ---------------------------------------------------------------------------
echo "== Installing libacp into a fresh prefix: $prefix"
rm -rf "$prefix"
if ./scripts/install-ffi.sh "$prefix" >"$logs/install.log" 2>&1 &&
  [ -f "$prefix/include/acp.h" ] && [ -f "$prefix/include/acp_protocol.h" ] &&
  [ -f "$prefix/lib/libacp.so" ] &&
  [ -f "$prefix/lib/libacp.a" ] && [ -f "$prefix/lib/pkgconfig/libacp.pc" ] &&
  [ -f "$prefix/lib/cmake/libacp/libacpConfig.cmake" ] &&
  [ -f "$prefix/lib/cmake/libacp/libacpConfigVersion.cmake" ]; then
  ok "install-ffi.sh installs headers, libraries, pkg-config and CMake files"
else
  not_ok "install-ffi.sh" "$logs/install.log" "install failed or files missing"
  summary # nothing below can work without the prefix
fi
if ./scripts/install-ffi.sh "$prefix" >"$logs/install-again.log" 2>&1 &&
  [ "$(grep -c '^up to date ' "$logs/install-again.log")" -eq 9 ] &&
  ! grep -q '^installed ' "$logs/install-again.log"; then
  ok "install-ffi.sh is idempotent (second run: 7 files and 2 links up to date)"
else
  not_ok "install-ffi.sh again" "$logs/install-again.log" "the second run changed files or failed"
fi

# ---------------------------------------------------------------------------
# build_example NAME DIR: configures from scratch (a stale cache could hide
# a broken find_package) and builds with warnings as errors.
build_example() {
  local name=$1 dir=$2 log=$logs/build-${2//\//-}.log
  rm -rf "$dir/build/CMakeCache.txt" "$dir/build/CMakeFiles"
  if cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DACP_EXAMPLES_WERROR=ON >"$log" 2>&1 &&
    cmake --build "$dir/build" -j "$jobs" >>"$log" 2>&1; then
    ok "$name builds with find_package(libacp) from the fresh prefix"
    return 0
  fi
  not_ok "$name build" "$log" "cmake configure or build failed"
  return 1
}

echo "== Building the examples with CMake against the prefix"
cpp_built=false
c_built=false
build_example "examples/cpp" examples/cpp && cpp_built=true
build_example "examples/c" examples/c && c_built=true
plugin=$root/examples/cpp/build/acp-plugin-demo
c_agent=$root/examples/c/build/acp-c-agent
c_agent_static=$root/examples/c/build/acp-c-agent-static

if $c_built; then
  if readelf -d "$prefix/lib/libacp.so" 2>/dev/null | grep -q 'SONAME.*\[libacp\.so\.0\]' &&
    readelf -d "$c_agent" 2>/dev/null | grep -q 'NEEDED.*\[libacp\.so\.0\]' &&
    ! readelf -d "$c_agent_static" 2>/dev/null | grep -q 'libacp'; then
    ok "libacp::acp links libacp.so (SONAME libacp.so.0), libacp::acp_static links libacp.a"
  else
    readelf -d "$c_agent" "$c_agent_static" >"$logs/readelf.log" 2>&1
    not_ok "imported targets" "$logs/readelf.log" "unexpected dynamic dependencies"
  fi
fi

echo "== Building the C agent with pkg-config"
pc_agent=$logs/acp-c-agent-pkgconfig
pc_log=$logs/build-pkgconfig.log
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "pkg-config is not installed" >"$pc_log"
  not_ok "pkg-config build" "$pc_log" "pkg-config is not installed"
  pc_built=false
elif (
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  set -x
  # shellcheck disable=SC2046 # word splitting of pkg-config's flags is wanted
  cc -std=c11 -Wall -Wextra -Werror -o "$pc_agent" examples/c/acp_c_agent.c examples/c/json.c \
    $(pkg-config --cflags --libs libacp) -Wl,-rpath,"$prefix/lib" -lpthread || exit 1
  # Static: `pkg-config --static --libs` (adds Libs.private), with libacp.a
  # named explicitly since libacp.so sits beside it.
  static_libs=()
  for word in $(pkg-config --static --libs libacp); do
    [ "$word" = -lacp ] && word=-l:libacp.a
    static_libs+=("$word")
  done
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -o "$pc_agent-static" examples/c/acp_c_agent.c examples/c/json.c \
    $(pkg-config --cflags libacp) "${static_libs[@]}" -lpthread
) >"$pc_log" 2>&1; then
  ok "the C agent builds with pkg-config (shared, and static with Libs.private)"
  pc_built=true
else
  not_ok "pkg-config build" "$pc_log" "compile or link failed"
  pc_built=false
fi

# ---------------------------------------------------------------------------
# run_client NAME LOG CLIENT... -- AGENT...: an official client's check
# sequence; passes when it prints exactly OK and exits 0.
run_client() {
  local name=$1 log=$2
  shift 2
  local out
  out=$(timeout 60 "$@" 2>"$log")
  local rc=$?
  if [ $rc -eq 0 ] && [ "$out" = "OK" ]; then
    ok "$name"
  else
    echo "(stdout: $out; exit $rc)" >>"$log"
    not_ok "$name" "$log" "${out:-no output} (exit $rc)"
  fi
}

echo "== The C agent under the official clients"
if $c_built; then
  run_client "official TypeScript client vs C agent" "$logs/ts-client-c-agent.log" \
    node tests/interop/ts/client.mjs -- "$c_agent"
  run_client "official Python client vs C agent" "$logs/py-client-c-agent.log" \
    "$py" tests/interop/python/client.py -- "$c_agent"
  run_client "official Rust client vs C agent" "$logs/rust-client-c-agent.log" \
    ./target/debug/official-rust-client -- "$c_agent"
  run_client "official TypeScript client vs C agent (static libacp.a)" \
    "$logs/ts-client-c-agent-static.log" \
    node tests/interop/ts/client.mjs -- "$c_agent_static"
else
  not_ok "C agent tests" "" "not run: the C example did not build"
fi
if $pc_built; then
  run_client "official Python client vs C agent (pkg-config build)" \
    "$logs/py-client-c-agent-pkgconfig.log" \
    "$py" tests/interop/python/client.py -- "$pc_agent"
  run_client "official Rust client vs C agent (pkg-config static build)" \
    "$logs/rust-client-c-agent-pkgconfig-static.log" \
    ./target/debug/official-rust-client -- "$pc_agent-static"
fi

# ---------------------------------------------------------------------------
echo "== The remote example (C server and C client on loopback)"
if $c_built; then
  remote=$root/examples/c/build/acp-c-remote
  log=$logs/c-remote.log
  if timeout 60 "$remote" >"$log" 2>&1 &&
    [ "$(grep -c '^Hello from a remote C agent\.$' "$log")" -eq 2 ] &&
    [ "$(grep -c '^stop reason: end_turn$' "$log")" -eq 2 ] &&
    grep -q '^ws://127\.0\.0\.1:[0-9]*/acp$' "$log" &&
    grep -q '^http://127\.0\.0\.1:[0-9]*/acp$' "$log"; then
    ok "acp-c-remote: a whole turn over ws:// and http:// (acp_server, acp_connection_connect)"
  else
    not_ok "acp-c-remote" "$log" "no two whole turns"
  fi
  log=$logs/c-remote-token.log
  if timeout 60 "$remote" --token s3cret >"$log" 2>&1 &&
    grep -q '^wrong token: .*, unauthorized (HTTP 401)$' "$log" &&
    [ "$(grep -c '^stop reason: end_turn$' "$log")" -eq 2 ]; then
    ok "acp-c-remote --token: a wrong token is unauthorized (401), the right one runs both turns"
  else
    not_ok "acp-c-remote --token" "$log" "no typed 401, or no two whole turns"
  fi
else
  not_ok "remote example" "" "not run: the C example did not build"
fi

# ---------------------------------------------------------------------------
# plugin NAME LOG EXPECT... -- PLUGIN ARGS...: runs the C++ plugin; passes
# when it exits 0 and its stdout holds every EXPECT line fragment.
plugin_run() {
  local name=$1 log=$2
  shift 2
  local expect=()
  while [ "$1" != "--" ]; do
    expect+=("$1")
    shift
  done
  shift
  timeout 60 "$plugin" --quiet "$@" >"$log" 2>"$log.stderr"
  local rc=$?
  if [ $rc -ne 0 ]; then
    cat "$log.stderr" >>"$log"
    not_ok "$name" "$log" "exit $rc"
    return 1
  fi
  local e
  for e in "${expect[@]}"; do
    if ! grep -qF -- "$e" "$log"; then
      not_ok "$name" "$log" "output lacks '$e'"
      return 1
    fi
  done
  return 0
}

echo "== The C++ plugin against agents"
if $cpp_built; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/acp-plugin-test.XXXXXX")
  if plugin_run "C++ plugin vs demo-agent --yes" "$logs/plugin-demo-yes.log" \
    "stop reason: end_turn" "permission for \"Write hello.txt\": Allow once" "[edit] Write hello.txt" \
    "[execute] Run" "The terminal says this is" "plan: [x] Write hello.txt" -- --yes --cwd "$dir" -- ./target/debug/demo-agent; then
    if grep -q "Hello from the libacp demo agent" "$dir/hello.txt" 2>/dev/null; then
      ok "C++ plugin vs demo-agent --yes (plan, permission, file written via the fs service, terminal, end_turn)"
    else
      not_ok "C++ plugin vs demo-agent --yes" "$logs/plugin-demo-yes.log" "$dir/hello.txt was not written"
    fi
  fi
  rm -rf "$dir"

  dir=$(mktemp -d "${TMPDIR:-/tmp}/acp-plugin-test.XXXXXX")
  if plugin_run "C++ plugin vs demo-agent --no" "$logs/plugin-demo-no.log" \
    "stop reason: end_turn" "permission for \"Write hello.txt\": Reject" "Write hello.txt (failed)" -- --no --cwd "$dir" -- ./target/debug/demo-agent; then
    if [ ! -e "$dir/hello.txt" ]; then
      ok "C++ plugin vs demo-agent --no (permission refused, no file)"
    else
      not_ok "C++ plugin vs demo-agent --no" "$logs/plugin-demo-no.log" "hello.txt was written anyway"
    fi
  fi
  rm -rf "$dir"

  plugin_run "C++ plugin vs official TypeScript agent" "$logs/plugin-ts-agent.log" \
    "chunk 0chunk 1chunk 2chunk 3chunk 4" "stop reason: end_turn" \
    -- --prompt "stream 5" -- node tests/interop/ts/agent.mjs &&
    ok "C++ plugin vs official TypeScript agent (stream 5)"

  plugin_run "C++ plugin vs official Python agent" "$logs/plugin-py-agent.log" \
    "chunk 0chunk 1chunk 2chunk 3chunk 4" "stop reason: end_turn" \
    -- --prompt "stream 5" -- "$py" tests/interop/python/agent.py &&
    ok "C++ plugin vs official Python agent (stream 5)"

  # Ctrl-C during a turn: the plugin's SIGINT handler -> self-pipe -> poll
  # loop -> acp_connection_cancel_session; the turn ends `cancelled`, and
  # the next prompt still runs.
  log=$logs/plugin-ctrl-c.log
  "$plugin" --quiet --prompt wait --prompt "stream 2" -- node tests/interop/ts/agent.mjs \
    >"$log" 2>"$log.stderr" &
  pid=$!
  for _ in $(seq 1 100); do
    grep -q '^> wait' "$log" 2>/dev/null && break
    sleep 0.1
  done
  # Let the prompt reach the agent first: the TypeScript SDK handles
  # messages concurrently, so a session/cancel overtaking the prompt
  # handler would be lost (the official clients wait 100 ms).
  sleep 1
  kill -INT "$pid" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    not_ok "C++ plugin Ctrl-C" "$log" "still running 10 s after SIGINT"
  else
    wait "$pid"
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^stop reason: cancelled' "$log" &&
      grep -q '^chunk 0chunk 1$' "$log"; then
      ok "C++ plugin: Ctrl-C cancels the turn (stop reason cancelled), the next prompt runs"
    else
      cat "$log.stderr" >>"$log"
      not_ok "C++ plugin Ctrl-C" "$log" "exit $rc, or no 'stop reason: cancelled'"
    fi
  fi
else
  not_ok "C++ plugin tests" "" "not run: the C++ example did not build"
fi

if [ "$failed" -gt 0 ]; then
  echo
  echo "Failed: ${failures[*]}"
fi
summary
