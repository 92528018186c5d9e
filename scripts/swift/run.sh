#!/usr/bin/env bash
# Runs a command with the Swift toolchain of scripts/swift/setup.sh: in its
# trixie chroot, inside a private mount namespace where /proc is mounted and
# the repository is bind-mounted at its own path (so absolute paths, such as
# the cdylib's rpath, are the same inside and out). The mounts vanish with
# the namespace when the command ends. The command runs in the current
# directory, which must be inside the repository, with a clean environment
# (PATH, HOME, LANG) plus this one's `LIBACP_*` variables. Standard streams
# and inherited descriptors pass through.
#
# Usage: scripts/swift/run.sh COMMAND [ARG...]
#   e.g. scripts/swift/run.sh swift build --package-path bindings/uniffi/swift
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
root=$("$repo/scripts/swift/setup.sh" | tail -n 1)
cwd=$(pwd -P)
case $cwd in
  "$repo"|"$repo"/*) ;;
  *) echo "scripts/swift/run.sh: run it from inside $repo (not $cwd)" >&2; exit 2 ;;
esac
# This environment's LIBACP_* variables, passed through `env -i`.
passed=()
while IFS= read -r name; do
  passed+=("$name=${!name}")
done < <(compgen -v LIBACP_ || true)
mkdir -p "$root$repo" "$root/tmp"
chmod 1777 "$root/tmp"
exec unshare -m sh -c '
  root=$1 repo=$2; shift 2
  mount -t proc proc "$root/proc" &&
  mount --bind "$repo" "$root$repo" &&
  exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    "$@"
' sh "$root" "$repo" ${passed[@]+"${passed[@]}"} \
  sh -c 'cd "$0" && exec "$@"' "$cwd" "$@"
