#!/usr/bin/env bash
# The Python half of `make lint`: ruff (check and format, ruff.toml) and
# `mypy --strict` on the binding's sources and the examples, with the
# pinned tools of bindings/python/requirements-dev.txt in .venv-python
# (created if missing). No build needed: mypy reads the committed stubs
# (libacp/_libacp.pyi); scripts/test-python.sh also checks the installed
# package and that the stubs match the built module.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-python
py=$venv/bin/python
if [ ! -x "$py" ]; then
  python3 -m venv "$venv"
fi
"$py" -m pip install --quiet --disable-pip-version-check -r bindings/python/requirements-dev.txt

"$venv/bin/ruff" check --no-cache
"$venv/bin/ruff" format --check --no-cache
MYPY_CACHE_DIR="$venv/mypy-cache" MYPYPATH=bindings/python/python \
  "$py" -m mypy --strict -p libacp
for example in examples/python/*.py; do
  MYPY_CACHE_DIR="$venv/mypy-cache" MYPYPATH=bindings/python/python \
    "$py" -m mypy --strict "$example"
done
