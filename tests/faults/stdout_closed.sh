#!/bin/sh
# Closes its stdout after the handshake but keeps running, reading stdin.
. "$(dirname "$0")/lib.sh"
handshake
exec 1>&-
while IFS= read -r line; do :; done
