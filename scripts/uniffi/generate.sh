#!/usr/bin/env bash
# Generates the Kotlin and Swift sources of the UniFFI binding from the
# built library (library mode: the bindgen reads the metadata compiled into
# libacp_uniffi.so) and puts them where the Kotlin and Swift packages keep
# them:
#
#   bindings/uniffi/kotlin/src/main/kotlin/dev/libacp/libacp.kt
#   bindings/uniffi/swift/Sources/LibACP/LibACP.swift
#   bindings/uniffi/swift/Sources/LibACPFFI/include/LibACPFFI.h
#   bindings/uniffi/swift/Sources/LibACPFFI/include/module.modulemap
#
# They are committed: `--check` regenerates into a temporary directory and
# fails if anything differs (CI runs it, so the committed files never drift
# from the Rust source).
#
# The bindgen is PyPI's prebuilt `uniffi-bindgen`, pinned in
# scripts/uniffi/requirements.txt to the exact version of the `uniffi` crate
# (bindings/uniffi/Cargo.toml): a bindgen of another minor version misreads
# the metadata. Installed into .venv-uniffi (1.5 s, no Rust build: building
# the bindgen from source takes 3-6 minutes and 2 GB).
#
# Usage: scripts/uniffi/generate.sh [--check] [--profile release|debug]
set -euo pipefail
cd "$(dirname "$0")/../.."

check=0
profile=release
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=1 ;;
    --profile) profile=$2; shift ;;
    *) echo "usage: $0 [--check] [--profile release|debug]" >&2; exit 2 ;;
  esac
  shift
done

venv=.venv-uniffi
if [ ! -x "$venv/bin/uniffi-bindgen" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/uniffi/requirements.txt

flag=()
[ "$profile" = release ] && flag=(--release)
cargo build --locked --quiet -p libacp-uniffi "${flag[@]}"
lib=target/$profile/libacp_uniffi.so

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$venv/bin/uniffi-bindgen" generate --library "$lib" --language kotlin --language swift \
  --no-format --out-dir "$out" >/dev/null

# One edit of the generated Kotlin: UniffiLib's initialiser registers the
# callback vtables, and JNA decides when it first sees a callback whether
# the thread it runs on stays attached to the JVM (a CallbackThreadInitializer
# registered before then) or is detached after every call, even a thread
# that libacp's JNI path attached (JNA remembers that per thread). So
# NativeThreads (bindings/uniffi/kotlin/.../NativeThreads.kt) registers its
# initializers first, whatever call into the library comes first.
kt="$out/dev/libacp/libacp.kt"
anchor='        Native.register(UniffiLib::class.java, findLibraryName(componentName = "libacp"))'
[ "$(grep -cxF "$anchor" "$kt")" = 1 ] ||
  { echo "UniffiLib's initialiser is not as expected in the generated Kotlin: update generate.sh" >&2; exit 1; }
sed -i "/^        Native.register(UniffiLib::class.java, /i\\        NativeThreads.ensure() // inserted by scripts/uniffi/generate.sh" "$kt"

b=bindings/uniffi
declare -A dest=(
  ["dev/libacp/libacp.kt"]="$b/kotlin/src/main/kotlin/dev/libacp/libacp.kt"
  ["LibACP.swift"]="$b/swift/Sources/LibACP/LibACP.swift"
  ["LibACPFFI.h"]="$b/swift/Sources/LibACPFFI/include/LibACPFFI.h"
  ["LibACPFFI.modulemap"]="$b/swift/Sources/LibACPFFI/include/module.modulemap"
)
status=0
for from in "${!dest[@]}"; do
  to=${dest[$from]}
  [ -f "$out/$from" ] || { echo "the bindgen did not write $from" >&2; exit 1; }
  if [ "$check" = 1 ]; then
    if ! diff -u "$to" "$out/$from" >/dev/null 2>&1; then
      echo "generated source out of date: $to (run scripts/uniffi/generate.sh)" >&2
      diff -u "$to" "$out/$from" | head -20 >&2 || true
      status=1
    fi
  else
    mkdir -p "$(dirname "$to")"
    cp "$out/$from" "$to"
  fi
done
[ "$check" = 1 ] && [ "$status" = 0 ] && echo "generated UniFFI sources are up to date"
exit $status
