#!/bin/sh
# During the prompt, asks permission, then is killed (SIGKILL) once the
# host's handler holds the request: the test creates "$1/go" then.
. "$(dirname "$0")/lib.sh"
handshake
next
echo '{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}'
wait_for "$1/go"
kill -9 $$
