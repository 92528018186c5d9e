#!/usr/bin/env bash
# Builds libacp's C ABI (crate libacp-ffi, release) and installs it under
# PREFIX:
#
#   PREFIX/include/acp.h
#   PREFIX/include/acp_protocol.h            protocol constants (method names, ...)
#   PREFIX/lib/libacp.so.X.Y.Z               shared library (SONAME libacp.so.X),
#   PREFIX/lib/libacp.so.X, libacp.so         its links
#   PREFIX/lib/libacp.a                       static library
#   PREFIX/lib/pkgconfig/libacp.pc            pkg-config (Libs.private: -lpthread -ldl -lm)
#   PREFIX/lib/cmake/libacp/libacpConfig.cmake         find_package(libacp):
#   PREFIX/lib/cmake/libacp/libacpConfigVersion.cmake  libacp::acp, libacp::acp_static
#
#   scripts/install-ffi.sh PREFIX        e.g. /usr/local, or target/ffi-prefix
#
# The pkg-config and CMake files come from the templates in ffi/packaging/.
# Idempotent: files already up to date are left alone; it says what it
# installs.
set -euo pipefail

usage() {
  echo "usage: $0 PREFIX" >&2
  exit 2
}
[ $# -eq 1 ] || usage
case "$1" in
  -h | --help) usage ;;
  "") usage ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$1
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd) # absolute, for libacp.pc

echo "== Building libacp-ffi (cargo build --release -p libacp-ffi)"
(cd "$root" && cargo build --locked --release -p libacp-ffi)

# Where cargo put it (CARGO_TARGET_DIR, build.target-dir, or target/).
target_dir=$(cd "$root" && cargo metadata --locked --no-deps --format-version 1 |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target_dir" ] || target_dir=$root/target
release=$target_dir/release
version=$(cd "$root" && cargo pkgid -p libacp-ffi | sed -E 's/.*[@#]([0-9][^@#]*)$/\1/')
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *)
    echo "install-ffi.sh: could not read libacp-ffi's version (got '$version')" >&2
    exit 1
    ;;
esac

for f in "$release/libacp.so" "$release/libacp.a" "$root/include/acp.h" \
  "$root/include/acp_protocol.h"; do
  if [ ! -f "$f" ]; then
    echo "install-ffi.sh: $f is missing after the build" >&2
    exit 1
  fi
done

# install_file MODE SRC DEST: copies SRC to DEST unless DEST already has the
# same content (atomically: a copy beside DEST, then a rename, so a program
# running from the old library never sees a half-written file).
install_file() {
  local mode=$1 src=$2 dest=$3
  mkdir -p "$(dirname "$dest")"
  if [ -f "$dest" ] && [ ! -L "$dest" ] && cmp -s "$src" "$dest"; then
    chmod "$mode" "$dest"
    echo "up to date  $dest"
    return
  fi
  local tmp
  tmp=$(mktemp "$dest.XXXXXX")
  cp "$src" "$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$dest"
  echo "installed   $dest"
}

# install_link TARGET LINK: makes LINK a symbolic link to TARGET (relative),
# replacing a file or another link; an existing right link is left alone.
install_link() {
  local target=$1 link=$2
  if [ -L "$link" ] && [ "$(readlink "$link")" = "$target" ]; then
    echo "up to date  $link"
    return
  fi
  ln -sfn "$target" "$link.tmp.$$"
  mv -Tf "$link.tmp.$$" "$link"
  echo "installed   $link -> $target"
}

# render TEMPLATE: the template with @PREFIX@, @VERSION@ and @MAJOR@ filled in.
render() {
  local out
  out=$(mktemp)
  # Escape what sed's replacement would interpret: backslash, &, the | delimiter.
  local p
  p=$(printf '%s' "$prefix" | sed -e 's/[\\&|]/\\&/g')
  sed -e "s|@PREFIX@|$p|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|${version%%.*}|g" "$1" >"$out"
  if grep -q '@[A-Z_]*@' "$out"; then
    echo "install-ffi.sh: unfilled placeholder in $1: $(grep -o '@[A-Z_]*@' "$out" | head -1)" >&2
    rm -f "$out"
    exit 1
  fi
  echo "$out"
}

echo "== Installing libacp $version into $prefix"
install_file 644 "$root/include/acp.h" "$prefix/include/acp.h"
install_file 644 "$root/include/acp_protocol.h" "$prefix/include/acp_protocol.h"
# The shared library as libacp.so.VERSION, with the SONAME link
# (libacp.so.MAJOR, what programs record) and the development link
# (libacp.so, what -lacp finds).
major=${version%%.*}
install_file 755 "$release/libacp.so" "$prefix/lib/libacp.so.$version"
install_link "libacp.so.$version" "$prefix/lib/libacp.so.$major"
install_link "libacp.so.$major" "$prefix/lib/libacp.so"
install_file 644 "$release/libacp.a" "$prefix/lib/libacp.a"

packaging=$root/ffi/packaging
for pair in \
  "libacp.pc.in:lib/pkgconfig/libacp.pc" \
  "libacpConfig.cmake.in:lib/cmake/libacp/libacpConfig.cmake" \
  "libacpConfigVersion.cmake.in:lib/cmake/libacp/libacpConfigVersion.cmake"; do
  template=${pair%%:*}
  dest=${pair#*:}
  rendered=$(render "$packaging/$template")
  install_file 644 "$rendered" "$prefix/$dest"
  rm -f "$rendered"
done

cat <<EOF
== Done. Use it with:
   CMake:      find_package(libacp REQUIRED)  (-DCMAKE_PREFIX_PATH=$prefix)
               target_link_libraries(app PRIVATE libacp::acp)   # or libacp::acp_static
   pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs libacp
   run time:   libacp.so.$major is in $prefix/lib (CMake builds get an RPATH to it;
               otherwise add it to LD_LIBRARY_PATH or the ld.so cache)
EOF
