#!/usr/bin/env bash
# Installs HAProxy from Debian's packages, for the load-balancer test
# (gateway/tests/load_balancer.rs: two `acp-gateway serve` backends behind
# HAProxy with cookie affinity). Idempotent: does nothing when `haproxy -v`
# already works. Debian bookworm ships haproxy 2.6.
#
# Needs apt-get and root (CI runs as root); reaches only Debian's package
# archive. Runs `apt-get update` at most once: when the package is not known
# yet, or when installing it failed (stale lists).
# Prints what it does; any failure stops it with a non-zero exit and a
# message on stderr.
set -euo pipefail

say() { echo "setup-lb: $*"; }
die() {
    echo "setup-lb: ERROR: $*" >&2
    exit 1
}

if command -v haproxy >/dev/null && haproxy -v >/dev/null 2>&1; then
    say "haproxy is installed: $(haproxy -v 2>&1 | head -n 1)"
    exit 0
fi

command -v apt-get >/dev/null ||
    die "haproxy is not installed and apt-get is missing: install haproxy (>= 2.0) by hand"
if [ "$(id -u)" -ne 0 ]; then
    die "haproxy is not installed and installing it needs root: run 'sudo $0' (or apt-get install haproxy)"
fi

export DEBIAN_FRONTEND=noninteractive
updated=no
update() {
    say "apt-get update ($1)"
    apt-get update -qq || die "apt-get update failed"
    updated=yes
}
# The package lists may be empty on a fresh machine: update them only then.
if ! apt-cache show haproxy >/dev/null 2>&1; then
    update "haproxy is not in the package lists yet"
fi
install() {
    say "apt-get install -y --no-install-recommends haproxy"
    apt-get install -y -qq --no-install-recommends haproxy
}
if ! install; then
    # Lists older than the archive name files it no longer has: once more
    # with fresh lists.
    [ "$updated" = no ] || die "apt-get install haproxy failed"
    update "the install failed; the package lists may be stale"
    install || die "apt-get install haproxy failed"
fi

command -v haproxy >/dev/null || die "haproxy was installed but is not on PATH"
haproxy -v >/dev/null 2>&1 || die "haproxy was installed but 'haproxy -v' fails"
say "installed $(haproxy -v 2>&1 | head -n 1)"
