#!/usr/bin/env bash
# Builds the Swift examples and runs the remote quickstart of
# bindings/uniffi/swift/README.md: the server on a free port of 127.0.0.1
# (`--once`: it exits after its first client has gone), then the client,
# which connects by URL and prints one prompt turn; both must exit 0 and the
# turn must be printed. Twice: over WebSocket, and over Streamable HTTP with
# a bearer token (ACP_TOKEN on both sides). On Linux, Swift runs in the
# chroot of scripts/swift/setup.sh (through scripts/swift/run.sh). Needs the
# Rust library built: cargo build --release -p libacp-uniffi
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
lib=$repo/target/release
cd "$here"
swift=(swift)
[ "$(uname -s)" = Linux ] && swift=("$repo/scripts/swift/run.sh" swift)
link=(-Xlinker -L"$lib" -Xlinker -rpath -Xlinker "$lib")
"${swift[@]}" build -c debug "${link[@]}" >&2
bin=$("${swift[@]}" build -c debug "${link[@]}" --show-bin-path)
run=()
[ "$(uname -s)" = Linux ] && run=("$repo/scripts/swift/run.sh")
# Hang detectors (coreutils' timeout; macOS has it only from Homebrew).
bounded=()
command -v timeout >/dev/null && bounded=(timeout -k 5 120)

work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# One run: $1 is the URL kind ("websocket" or "http"); ACP_TOKEN, if set,
# goes to both (scripts/swift/run.sh passes on only LIBACP_* variables, so
# the token is given through env inside the chroot).
turn() {
  local kind=$1 token=${ACP_TOKEN:-}
  local env=(env)
  [ -n "$token" ] && env+=(ACP_TOKEN="$token")
  mkfifo "$work/out-$kind"
  # It exits once its client has gone (--once).
  ${bounded[@]+"${bounded[@]}"} ${run[@]+"${run[@]}"} "${env[@]}" "$bin/acp-example-remote-server" 127.0.0.1:0 --once \
    >"$work/out-$kind" &
  server=$!
  exec 3<"$work/out-$kind"
  local line
  # The server prints its URLs at once.
  if ! read -r -t 120 line <&3; then
    echo "run-remote.sh: the server printed no URL" >&2
    return 1
  fi
  echo "$line"
  # "serving ws://HOST:PORT/acp and http://HOST:PORT/acp"
  local url
  case $kind in
    websocket) url=$(echo "$line" | awk '{print $2}') ;;
    http) url=$(echo "$line" | awk '{print $4}') ;;
  esac
  local out status=0
  out=$(${bounded[@]+"${bounded[@]}"} ${run[@]+"${run[@]}"} "${env[@]}" "$bin/acp-example-remote-client" "$url") || status=$?
  echo "$out"
  if [ "$status" -ne 0 ]; then
    echo "run-remote.sh: the client exited $status over $kind" >&2
    return 1
  fi
  wait "$server" || status=$?
  server=
  exec 3<&-
  if [ "$status" -ne 0 ]; then
    echo "run-remote.sh: the server exited $status over $kind" >&2
    return 1
  fi
  grep -qx "echo: hello" <<<"$out" || { echo "run-remote.sh: no turn printed over $kind" >&2; return 1; }
  grep -qx "=> end_turn" <<<"$out" || { echo "run-remote.sh: the turn did not end over $kind" >&2; return 1; }
}

turn websocket
ACP_TOKEN=s3cret turn http
echo "remote quickstart: ok (websocket, http with a bearer token)"
