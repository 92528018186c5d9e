#!/bin/sh
# During the prompt, has the client start a terminal (`sleep 300`, run by
# libacp's terminal service), then is killed (SIGKILL) while it runs. Exits
# 3 instead if the client did not answer with a terminal id.
. "$(dirname "$0")/lib.sh"
handshake
next
echo '{"jsonrpc":"2.0","id":"t1","method":"terminal/create","params":{"sessionId":"s1","command":"sleep","args":["300"]}}'
IFS= read -r answer || exit 3
case "$answer" in *terminalId*) ;; *) exit 3 ;; esac
kill -9 $$
