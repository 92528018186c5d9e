#!/bin/sh
# Writes 20,000 lines of 1,000 bytes (20 MB) to stderr, then answers the
# prompt end_turn.
. "$(dirname "$0")/lib.sh"
handshake
next
head -c 20000000 /dev/zero | tr '\0' 'x' | fold -w 1000 >&2
echo >&2
reply '{"stopReason":"end_turn"}'
while IFS= read -r line; do :; done
