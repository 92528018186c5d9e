#!/bin/sh
# On the prompt, writes a response to id 99, which no request has, then
# answers the prompt `end_turn`.
. "$(dirname "$0")/lib.sh"
handshake
next
printf '%s\n' '{"jsonrpc":"2.0","id":99,"result":{}}'
reply '{"stopReason":"end_turn"}'
while IFS= read -r line; do :; done
