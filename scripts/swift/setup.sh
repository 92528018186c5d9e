#!/usr/bin/env bash
# Sets up the Swift toolchain the Swift binding is built and tested with on
# Linux: Debian trixie's `swiftlang` (Swift 6.0.3, used in Swift 5 language
# mode) in a trixie chroot, since the host (bookworm) has no Swift package.
#
# The chroot lives in ${LIBACP_CACHE:-$HOME/.cache/libacp}/swift-trixie and is
# reused when present (a marker file records a finished setup), so only the
# first run pays for it: debootstrap (about 45 s), swiftlang + libc6-dev +
# libstdc++-14-dev (about 570 MB downloaded, about 1 min), then `apt-get clean`
# (the toolchain takes about 2.2 GB).
#
# Needs root (debootstrap, chroot, mount namespaces) and Debian's package
# mirror. Prints the chroot's path on its last line.
#
# Usage: scripts/swift/setup.sh
set -euo pipefail

root=${LIBACP_SWIFT_ROOT:-${LIBACP_CACHE:-$HOME/.cache/libacp}/swift-trixie}
marker=$root/.libacp-swift-ready
# Bump when the package list below changes, so cached chroots are redone.
want="swiftlang libc6-dev libstdc++-14-dev v1"

if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
  echo "$root"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "scripts/swift/setup.sh: needs root (debootstrap, chroot)" >&2; exit 1; }

if ! command -v debootstrap >/dev/null; then
  echo "== Swift: apt-get install debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2; }
fi

mirror=${LIBACP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.libacp-debootstrap-done" ]; then
  rm -rf "$root"
  mkdir -p "$root"
  echo "== Swift: debootstrap --variant=minbase trixie $root" >&2
  debootstrap --variant=minbase trixie "$root" "$mirror" >&2
  touch "$root/.libacp-debootstrap-done"
fi

# Runs a command in the chroot, with /proc mounted in a private mount
# namespace (swiftc needs /proc to find libswiftCore.so); the mount goes away
# with the namespace.
in_root() {
  unshare -m sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}

cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
echo "== Swift: apt-get install swiftlang libc6-dev libstdc++-14-dev (in the chroot)" >&2
in_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  swiftlang libc6-dev libstdc++-14-dev >&2
in_root apt-get clean >&2
in_root swiftc --version >&2
echo "$want" > "$marker"
echo "$root"
