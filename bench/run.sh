#!/usr/bin/env bash
# One command for the ACP benchmark suite (see bench/README.md):
#
#   bench/run.sh                 set up everything, run every cell (3 reps), print the table
#   bench/run.sh --quick         the same with smaller N (a few minutes)
#   bench/run.sh --smoke         every client against every agent on tiny workloads (< 1 min once built)
#   bench/run.sh --reps 5 --impls libacp-rust,rust-sdk --workloads w1,w2 --json out.json
#
# Setup (idempotent, from the registries only): GNU time (apt), the Rust
# programs and libacp's C ABI (cargo, release), the C programs (cc), a venv
# bench/.venv with the official Python SDK (the pins of
# tests/interop/python/requirements.txt) and libacp's Python binding
# (pip install ./bindings/python), and the official TypeScript SDK
# (npm ci in bench/ts), libacp's Node binding (a release build of its native
# module, linked into bench/node), libacp's Kotlin binding and the Kotlin
# programs with the official Kotlin SDK (Maven). Set PYTHON=... for another
# interpreter (>= 3.10).
# BENCH_SKIP_SETUP=1 skips all of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { echo "bench/run.sh: $*" >&2; }

if [ -z "${BENCH_SKIP_SETUP:-}" ]; then
  if [ ! -x /usr/bin/time ]; then
    say "installing GNU time"
    sudo_=""
    [ "$(id -u)" = 0 ] || sudo_=sudo
    $sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq time >&2
  fi

  say "building the Rust programs and libacp's C ABI (release)"
  nice -n 10 cargo build --release --quiet -p libacp-bench -p libacp-ffi >&2

  say "building the C programs"
  bench/c/build.sh >&2

  py=${PYTHON:-python3}
  venv=bench/.venv
  if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv"
    "$py" -m venv "$venv"
  fi
  if ! "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m, re, sys
for line in open("tests/interop/python/requirements.txt"):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        if m.version(name) != version:
            sys.exit(1)
PY
  then
    say "installing the official Python SDK (pinned)"
    "$venv/bin/pip" install -q --disable-pip-version-check -r tests/interop/python/requirements.txt >&2
  fi
  # Rebuild the binding when its sources (or the core's) changed.
  stamp=$( (git ls-files -s bindings/python core ffi; git diff HEAD -- bindings/python core) | sha1sum | cut -c1-40)
  if [ "$(cat "$venv/.libacp-stamp" 2>/dev/null)" != "$stamp" ]; then
    say "installing libacp's Python binding (pip install ./bindings/python, a release build)"
    nice -n 10 "$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./bindings/python >&2
    echo "$stamp" > "$venv/.libacp-stamp"
  fi

  # The Node binding's native module, a release build (scripts/install.js
  # builds it with cargo and strips it; `npm run build:native` in
  # bindings/node, as scripts/test-node.sh does, makes the same), when a
  # source of it or of the core is newer than the module.
  module=$(ls bindings/node/libacp.*.node 2>/dev/null | head -n 1 || true)
  if [ -z "$module" ] ||
     [ -n "$(find bindings/node/src bindings/node/Cargo.toml core/src core/Cargo.toml Cargo.lock \
       -newer "$module" -print -quit)" ]; then
    say "building libacp's Node binding (bindings/node/scripts/install.js --rebuild, a release build)"
    nice -n 10 node bindings/node/scripts/install.js --rebuild >&2
  fi
  if [ ! -e bench/node/node_modules/libacp ]; then
    say "linking libacp's Node binding into bench/node (npm ci)"
    (cd bench/node && npm ci --no-audit --no-fund --silent --ignore-scripts) >&2
  fi

  # libacp's Kotlin binding (the release library packed into its jar,
  # installed in the local Maven repository) and the Kotlin bench programs
  # with the official Kotlin SDK (Maven Central, pinned in bench/kotlin/pom.xml).
  say "building libacp's Kotlin binding and the Kotlin bench programs (cargo release, Maven)"
  nice -n 10 cargo build --release --quiet -p libacp-uniffi >&2
  (cd bindings/uniffi/kotlin && nice -n 10 mvn -B -q -ntp -Dstyle.color=never install -DskipTests) >&2
  (cd bench/kotlin && nice -n 10 mvn -B -q -ntp -Dstyle.color=never package dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime) >&2

  # libacp's Swift binding (bench/swift, in release) with the Swift toolchain
  # of scripts/swift/setup.sh (a cached Debian trixie chroot; needs root).
  # Without it the libacp-swift row is left out (bench/run.py).
  if [ "$(id -u)" -eq 0 ] && scripts/swift/setup.sh >/dev/null; then
    say "building libacp's Swift bench programs (swift build -c release, in the Swift chroot)"
    lib=$PWD/target/release
    nice -n 10 scripts/swift/run.sh swift build -c release --package-path bench/swift \
      -Xlinker -L"$lib" -Xlinker -rpath -Xlinker "$lib" >&2
  else
    say "no Swift toolchain (scripts/swift/setup.sh needs root): the libacp-swift row is left out"
  fi

  if [ ! -f bench/ts/node_modules/.package-lock.json ] ||
     [ bench/ts/package-lock.json -nt bench/ts/node_modules/.package-lock.json ]; then
    say "installing the official TypeScript SDK (npm ci)"
    (cd bench/ts && npm ci --no-audit --no-fund --silent) >&2
  fi
fi

exec python3 bench/run.py "$@"
