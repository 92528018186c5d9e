#!/bin/sh
# Builds the C bench programs against libacp's C ABI (target/release/libacp.so,
# built by `cargo build --release -p libacp-ffi`) and examples/c/json.c.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=${CARGO_TARGET_DIR:-$root/target}/release
mkdir -p "$here/build/lib"
# libacp.so's SONAME is libacp.so.0 (ffi/build.rs): the programs look for
# that name at run time, staged here as a link to cargo's libacp.so.
ln -sfn "$lib/libacp.so" "$here/build/lib/libacp.so.0"
for p in client agent; do
  ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra \
    -I"$root/include" -I"$root/examples/c" -I"$here" \
    "$here/$p.c" "$root/examples/c/json.c" \
    -L"$lib" -lacp -Wl,-rpath,"$here/build/lib" -lpthread -o "$here/build/bench-c-$p"
done
echo "built $here/build/bench-c-client and bench-c-agent"
