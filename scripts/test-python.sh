#!/usr/bin/env bash
# The Python binding's tests: creates .venv-python (idempotent), installs the
# pinned tools (bindings/python/requirements-dev.txt), installs the binding
# the way users do (`pip install ./bindings/python`), builds the Rust test
# peers and runs pytest. Ends with "Python: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

venv=.venv-python
py=$venv/bin/python
fail() {
  echo "$1" >&2
  echo "Python: 0 passed, 1 failed"
  exit 1
}

echo "== Python: venv and pinned tools ($venv)"
if [ ! -x "$py" ]; then
  python3 -m venv "$venv" || fail "could not create $venv (python3 -m venv)"
fi
"$py" -m pip install --quiet --disable-pip-version-check \
  -r bindings/python/requirements-dev.txt || fail "pip install of the pinned tools failed"

echo "== Python: pip install ./bindings/python"
# Reinstalled every run so the tests use the current sources.
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  ./bindings/python || fail "pip install ./bindings/python failed"

echo "== Python: the Rust test peers (cargo build -p libacp-tests --bins)"
cargo build --locked --quiet -p libacp-tests --bins || fail "cargo build -p libacp-tests failed"

echo "== Python: pytest"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd bindings/python && "../../$py" -m pytest -v -p no:cacheprovider tests) 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

passed=$(sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
errors=$(sed -n 's/.* \([0-9][0-9]*\) errors\{0,1\}.*/\1/p' "$log" | tail -n 1)
passed=${passed:-0}
failed=$((${failed:-0} + ${errors:-0}))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # pytest stopped before counting (a collection or usage error)
fi
echo
echo "Python: ${passed} passed, ${failed} failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
