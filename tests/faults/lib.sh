# Shared by the fault agents (sourced; POSIX sh). Each agent is a scripted
# ACP agent that misbehaves in one way; see README.md.

# Reads the next frame from the client into $line and its numeric id into
# $id; exits quietly at the end of input.
next() {
  IFS= read -r line || exit 0
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
}

# Answers the request just read with the JSON result $1.
reply() {
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$1"
}

# Answers `initialize` and `session/new` (session "s1").
handshake() {
  next
  reply '{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}'
  next
  reply '{"sessionId":"s1"}'
}

# Waits until the file $1 exists (the test creates it when it is ready for
# what comes next).
wait_for() {
  while [ ! -e "$1" ]; do sleep 0.01; done
}
