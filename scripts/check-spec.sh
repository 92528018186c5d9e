#!/usr/bin/env bash
# The vendored ACP schemas (spec/, see spec/README.md) are what SHA256SUMS
# says, and, when the workspace's shared copy is present beside the checkout
# (../shared/spec), byte for byte the files there (a file the shared copy
# lacks is only reported). Exits non-zero on any difference, naming the
# file. Run by `make lint`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo/spec"
if ! sha256sum --quiet -c SHA256SUMS; then
  echo "check-spec: spec/ differs from spec/SHA256SUMS (see spec/README.md)" >&2
  exit 1
fi
# Every schema here is listed (no file added without its checksum).
listed=$(awk '{print $2}' SHA256SUMS | sort)
present=$(find . -name '*.json' | sort)
if [ "$listed" != "$present" ]; then
  echo "check-spec: spec/SHA256SUMS does not list exactly the .json files in spec/" >&2
  diff <(echo "$listed") <(echo "$present") >&2 || true
  exit 1
fi
shared="$repo/../shared/spec"
if [ -d "$shared" ]; then
  status=0
  while read -r _ file; do
    if [ -f "$shared/$file" ] && ! cmp -s "$file" "$shared/$file"; then
      echo "check-spec: spec/${file#./} differs from ../shared/spec/${file#./}" >&2
      status=1
    elif [ ! -f "$shared/$file" ]; then
      # An older shared copy may lack a newer file: nothing to compare.
      echo "check-spec: spec/${file#./} has no counterpart in ../shared/spec (not compared)"
    fi
  done < SHA256SUMS
  [ "$status" = 0 ] || exit 1
  echo "check-spec: spec/ matches SHA256SUMS and ../shared/spec"
else
  echo "check-spec: spec/ matches SHA256SUMS (../shared/spec not present: not compared)"
fi
