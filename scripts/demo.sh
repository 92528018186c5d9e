#!/usr/bin/env bash
# The main demo: libacp's terminal client (demo-client) spawns libacp's
# scripted agent (demo-agent), and they run one whole ACP prompt turn over
# the agent's stdio: a streamed reply, a plan, a file edit shown as a diff
# behind a permission request, a command run in a terminal, the stop reason.
# No model, no API key, nothing to configure; permissions are answered
# --yes. Needs only a Rust toolchain (cargo).
#
#   make demo                        # the whole turn
#   ./scripts/demo.sh --trace        # ... with every JSON-RPC frame printed
#   ./scripts/demo.sh --ask          # answer the permission request yourself
#   ./scripts/demo.sh --no           # refuse it
#   ./scripts/demo.sh --model demo-large --prompt "ask me my name"
#                                    # a config option and a question
#   ./scripts/demo.sh --unstable --prompt hi --prompt "compact please" \
#       --title "My demo" --status --fork --archive
#                                    # the unstable v1 extensions, a notice
#                                    # and a context compaction
#                                    # (demo-client --help lists the rest)
#
# The ping pair (engine API, frames only) is still there:
#   ./target/debug/ping-client
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --locked -p libacp-examples --bins
# The session's directory: kept afterwards, for a look at hello.txt and for
# the --load command printed at the end.
dir=$(mktemp -d "${TMPDIR:-/tmp}/libacp-demo.XXXXXX")
# Later flags win, so "$@" can override --yes.
./target/debug/demo-client --yes --mode code --cwd "$dir" "$@"
echo
if [ -f "$dir/hello.txt" ]; then
  echo "== $dir/hello.txt, as the agent wrote it through the client's fs/write_text_file:"
  cat "$dir/hello.txt"
else
  echo "== no hello.txt in $dir: the edit was not allowed"
fi
