#!/usr/bin/env bash
# Builds the Kotlin examples and runs the remote pair: RemoteServer.kt serves
# the example agent on 127.0.0.1 (a free port) with `--once`, RemoteClient.kt
# connects to its WebSocket URL and prints one prompt turn, then both exit.
# Needs the binding installed in the local Maven repository first:
#   (cd bindings/uniffi/kotlin && mvn install -DskipTests)
# Every wait is bounded (a hang detector, far above the few seconds it takes).
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q -ntp -Dstyle.color=never package dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
cp="target/classes:$(cat target/classpath.txt)"

dir=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill "$server"; fi
  rm -rf "$dir"
}
trap cleanup EXIT
mkfifo "$dir/out"
timeout 120 java -cp "$cp" dev.libacp.examples.RemoteServerKt 127.0.0.1:0 --once >"$dir/out" &
server=$!
exec 3<"$dir/out"

# The server's first line: "serving on ws://HOST:PORT/acp and http://HOST:PORT/acp".
read -r -t 60 line <&3 || { echo "the server did not print its URL" >&2; exit 1; }
echo "$line"
url=$(echo "$line" | sed -n 's/^serving on \(ws:[^ ]*\) and .*/\1/p')
[ -n "$url" ] || { echo "unexpected first line from the server: $line" >&2; exit 1; }

timeout 60 java -cp "$cp" dev.libacp.examples.RemoteClientKt "$url"
wait "$server"
server=
cat <&3
