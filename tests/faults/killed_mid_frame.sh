#!/bin/sh
# Answers the prompt with half a frame, then is killed (SIGKILL).
. "$(dirname "$0")/lib.sh"
handshake
next
printf '{"jsonrpc":"2.0","id":%s,"result":{"stopRea' "$id"
kill -9 $$
