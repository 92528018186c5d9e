#!/usr/bin/env bash
# Builds the Swift examples and runs the client, which spawns the example
# agent and prints one prompt turn. On Linux, Swift runs in the chroot of
# scripts/swift/setup.sh (through scripts/swift/run.sh); on macOS run the
# same `swift build`/`swift run` directly. Needs the Rust library built:
#   cargo build --release -p libacp-uniffi
# Arguments go to the client: `./run.sh -- <agent command...>` talks to
# another agent (it must be runnable in the chroot on Linux).
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
swift_run=()
[ "$(uname -s)" = Linux ] && swift_run=("$repo/scripts/swift/run.sh")
exec ${swift_run[@]+"${swift_run[@]}"} "$bin/acp-example-client" "$@"
