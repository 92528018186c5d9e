#!/usr/bin/env bash
# Installs what the official-SDK interop peers in tests/interop/ need, on a
# fresh machine or an already set up one (idempotent; safe to run every time):
#
#   * tests/interop/ts/node_modules: `npm ci` from the committed lockfile
#     (@agentclientprotocol/sdk, zod, and ws for the remote peers; exact
#     versions). Skipped when
#     node_modules was installed from the same package.json + package-lock.json.
#   * <repo>/.venv-interop: a `python3 -m venv` with the exact pins of
#     tests/interop/python/requirements.txt (agent-client-protocol and its
#     dependencies). Skipped when every pin is already installed.
#
# Needs node >= 20 with npm, and python3 >= 3.10 with the venv module; reaches
# only the npm registry and PyPI. Prints what it does; any failure stops it
# with a non-zero exit and a message on stderr.
#
# Environment: PYTHON (default python3) picks the interpreter for the venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TS_DIR="$ROOT/tests/interop/ts"
REQUIREMENTS="$ROOT/tests/interop/python/requirements.txt"
VENV="$ROOT/.venv-interop"
PYTHON="${PYTHON:-python3}"

say() { echo "setup-interop: $*"; }
die() {
    echo "setup-interop: ERROR: $*" >&2
    exit 1
}
trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- TypeScript SDK -----------------------------------------------------------

command -v node >/dev/null || die "node not found (need node >= 20 and npm)"
command -v npm >/dev/null || die "npm not found (need node >= 20 and npm)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old: need >= 20"

ts_stamp="$TS_DIR/node_modules/.interop-installed"
ts_want="$(fingerprint "$TS_DIR/package.json" "$TS_DIR/package-lock.json") node-$node_major"
if [ -f "$ts_stamp" ] && [ "$(cat "$ts_stamp")" = "$ts_want" ] &&
    [ -f "$TS_DIR/node_modules/@agentclientprotocol/sdk/package.json" ]; then
    say "tests/interop/ts/node_modules is up to date ($(node -p "'@agentclientprotocol/sdk ' + require('$TS_DIR/node_modules/@agentclientprotocol/sdk/package.json').version"))"
else
    say "npm ci in tests/interop/ts (node $(node --version), npm $(npm --version))"
    (cd "$TS_DIR" && npm ci --no-audit --no-fund) || die "npm ci failed in $TS_DIR"
    echo "$ts_want" >"$ts_stamp"
    say "installed $(node -p "'@agentclientprotocol/sdk ' + require('$TS_DIR/node_modules/@agentclientprotocol/sdk/package.json').version")"
fi

# --- Python SDK ---------------------------------------------------------------

# Exit 0 when every `name==version` pin of the requirements file is installed
# in the venv at exactly that version (no network).
pins_satisfied() {
    "$VENV/bin/python" - "$REQUIREMENTS" <<'PY'
import re, sys
from importlib.metadata import PackageNotFoundError, version

missing = []
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    m = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", line)
    if not m:
        sys.exit(f"unsupported requirement line (want name==version): {line}")
    name, want = m.groups()
    try:
        have = version(name)
    except PackageNotFoundError:
        have = None
    if have != want:
        missing.append(f"{name}=={want} (have {have})")
if missing:
    print("not satisfied: " + ", ".join(missing))
    sys.exit(1)
PY
}

command -v "$PYTHON" >/dev/null || die "$PYTHON not found (need python >= 3.10 with venv)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$("$PYTHON" --version 2>&1) is too old: need >= 3.10"

if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    say "$VENV is broken (its interpreter does not start): recreating it"
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV" ||
        die "'$PYTHON -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi

if pins_satisfied >/dev/null 2>&1; then
    say ".venv-interop is up to date (agent-client-protocol $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("agent-client-protocol"))'))"
else
    say "pip install -r tests/interop/python/requirements.txt into .venv-interop"
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -r "$REQUIREMENTS" ||
        die "pip install failed"
    pins_satisfied || die "requirements still not satisfied after pip install"
    say "installed agent-client-protocol $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("agent-client-protocol"))')"
fi

say "done: node $TS_DIR/client.mjs | $VENV/bin/python $ROOT/tests/interop/python/client.py"
