#!/usr/bin/env bash
# The Python binding's tests: installs the official SDKs the interop tests
# run against (scripts/setup-interop.sh, idempotent), creates .venv-python
# (idempotent), installs the pinned tools (bindings/python/requirements-dev.txt),
# installs the binding the way users do (`pip install ./bindings/python`),
# builds the Rust test peers, runs pytest, then the type checks:
#
#   * `python -m mypy.stubtest libacp._libacp`: the stubs match the built module;
#   * `mypy --strict -p libacp`: the installed package type-checks;
#   * `mypy --strict` on each examples/python/*.py;
#   * `ruff check` and `ruff format --check` (ruff.toml: the binding, its
#     tests, the examples and the interop peers).
#
# Each type check (and the interop setup) counts as 1 passed or 1 failed next
# to the pytest counts. Ends with "Python: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

venv=.venv-python
py=$venv/bin/python
LANGUAGE_NAME=Python
# shellcheck source=lib/checks.sh
source scripts/lib/checks.sh

check "official SDKs for the interop tests (scripts/setup-interop.sh)" ./scripts/setup-interop.sh

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

# The type checks run on the installed package (from the repository root,
# where no `libacp` directory shadows it), with their cache in the venv.
export MYPY_CACHE_DIR="$venv/mypy-cache"
check "stubtest: libacp/_libacp.pyi matches the built module" \
  "$py" -m mypy.stubtest libacp._libacp
check "mypy --strict -p libacp (the installed package)" \
  "$py" -m mypy --strict -p libacp
for example in examples/python/*.py; do
  [ -e "$example" ] || continue
  check "mypy --strict $example" "$py" -m mypy --strict "$example"
done

check "ruff check (ruff.toml)" "$venv/bin/ruff" check --no-cache
check "ruff format --check (ruff.toml)" "$venv/bin/ruff" format --check --no-cache

report "$passed" "$failed"
