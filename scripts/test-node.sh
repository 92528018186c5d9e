#!/usr/bin/env bash
# The Node binding's tests: installs the official SDKs the interop tests run
# against (scripts/setup-interop.sh, idempotent), the binding's pinned tools
# (`npm install --ignore-scripts --no-save` in bindings/node, the versions of
# its package-lock.json: napi-rs CLI, TypeScript,
# json-schema-to-typescript, prettier), builds the native module
# (`npm run build:native`: napi build --release, which also regenerates
# native.js and native.d.ts), installs the examples (`npm ci` in
# examples/node, which links the package), builds the Rust test peers, and
# runs `node --test` on bindings/node/test/*.test.mjs (the shared scenarios,
# both roles, cancellation, closing, processes, options, interop with the
# official SDKs, the generated files, the types, `npm pack` and installs),
# then the ordering, cancellation, closing and scenario tests again with
# LIBACP_NODE_DRIVE_READS=0 (an engine thread reads the transport).
#
# Counted next to the node:test counts, 1 passed or 1 failed each:
#   * the interop setup;
#   * native.js and native.d.ts as committed = what napi build generates;
#   * `npm run lint`: tsc on ts/ and prettier --check.
#
# Ends with "Node: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

pkg=bindings/node
LANGUAGE_NAME=Node
# shellcheck source=lib/checks.sh
source scripts/lib/checks.sh

command -v node >/dev/null || fail "node is not installed (Node.js 20 or later is needed)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || fail "Node.js $(node --version) is too old: 20 or later is needed"

check "official SDKs for the interop tests (scripts/setup-interop.sh)" ./scripts/setup-interop.sh

# Not `npm ci`: npm 11.19 writes a lock without the other platforms'
# optional packages of @napi-rs/lzma (a CLI dependency whose engines exclude
# Node 20) and then `npm ci` refuses that same lock as out of sync.
# `npm install --no-save` installs the lock's versions and leaves it as it is.
echo "== Node: the pinned tools (npm install --ignore-scripts --no-save in $pkg)"
(cd "$pkg" && npm install --ignore-scripts --no-save --no-audit --no-fund --loglevel=error) ||
  fail "npm install in $pkg failed"

# The committed napi-generated files, to compare with what the build makes.
committed=$(mktemp -d)
trap 'rm -rf "$committed"' EXIT
cp "$pkg/native.js" "$pkg/native.d.ts" "$committed/"

echo "== Node: the native module (npm run build:native)"
(cd "$pkg" && npm run --silent build:native) || fail "napi build failed"

same_as_committed() {
  local f ok=0
  for f in native.js native.d.ts; do
    if ! cmp -s "$committed/$f" "$pkg/$f"; then
      echo "$pkg/$f differs from what napi build generates (commit the regenerated file):" >&2
      diff -u "$committed/$f" "$pkg/$f" | head -40 >&2
      ok=1
    fi
  done
  return $ok
}
check "native.js and native.d.ts are what napi build generates" same_as_committed

echo "== Node: the examples (npm ci in examples/node)"
(cd examples/node && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci in examples/node failed"

echo "== Node: the Rust test peers (cargo build -p libacp-tests --bins)"
cargo build --locked --quiet -p libacp-tests --bins || fail "cargo build -p libacp-tests failed"

check "npm run lint (tsc on ts/, prettier --check)" bash -c "cd $pkg && npm run --silent lint"

# run_tests LABEL FILES...: one `node --test` run in the package directory
# (environment from the caller), its counts added to passed/failed. FILES
# are relative to the package and may be quoted globs: they are expanded
# there.
passed=0
failed=0
run_tests() {
  local label=$1 log status p f c
  shift
  echo "== Node: node --test ($label)"
  log=$(mktemp)
  # shellcheck disable=SC2068 # unquoted on purpose: globs expand in $pkg
  (cd "$pkg" && node --test --test-concurrency=1 --test-reporter=tap $@) 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  p=$(sed -n 's/^# pass \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
  f=$(sed -n 's/^# fail \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
  c=$(sed -n 's/^# cancelled \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
  rm -f "$log"
  f=$((${f:-0} + ${c:-0}))
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1 # the runner stopped before counting
  fi
  passed=$((passed + ${p:-0}))
  failed=$((failed + f))
}

run_tests "every test" 'test/*.test.mjs'
# The engine-thread read path (an engine thread reads the transport and
# wakes JavaScript per batch, instead of JavaScript reading it): what
# touches the transport, again with it.
export LIBACP_NODE_DRIVE_READS=0
run_tests "LIBACP_NODE_DRIVE_READS=0: ordering, cancellation, closing, scenarios" \
  test/ordering.test.mjs test/cancellation.test.mjs test/closing.test.mjs test/scenarios.test.mjs
unset LIBACP_NODE_DRIVE_READS

report "$passed" "$failed"
