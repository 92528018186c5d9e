#!/usr/bin/env bash
# The Kotlin binding's tests (bindings/uniffi/kotlin, a Maven module):
#
#   * the generated Kotlin and Swift sources match the Rust crate
#     (scripts/uniffi/generate.sh --check; it also builds the release
#     libacp_uniffi.so that the jar packs), and the generated models of the
#     types the Kotlin SDK lacks match the schema (scripts/kotlin/gen_models.py
#     --check);
#   * the Rust test peers (cargo build -p libacp-tests --bins: the official
#     Rust SDK's agent, spawned by the tests);
#   * `mvn test`: JUnit 5 (both roles, cancellation both ways, closing, the
#     shared scenarios in tests/scenarios, also over the remote links through
#     libacp-remote-splice, remote ACP between a Kotlin client and server),
#     with the JNI fast path on (surefire's default execution), then the
#     shared scenarios and the fault tests again with it off (the `jni-off`
#     execution: -Dlibacp.jni=false, UniFFI's JNA calls only; pom.xml);
#   * `mvn install` of the binding, then the examples (examples/kotlin/run.sh:
#     the example client spawns the example agent and prints a turn;
#     examples/kotlin/run-remote.sh: the remote quickstart of the README, a
#     server on 127.0.0.1 and a client connecting to it by URL).
#
# Needs a JDK >= 17 and Maven; every library comes from Maven Central at the
# versions pinned in the poms. The JUnit counts and each check (1 passed or
# 1 failed) end as "Kotlin: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

LANGUAGE_NAME=Kotlin
# shellcheck source=lib/checks.sh
source scripts/lib/checks.sh

command -v mvn >/dev/null || fail "mvn not found (Maven 3.8+ and a JDK 17+ are needed)"
command -v java >/dev/null || fail "java not found (a JDK 17+ is needed)"

check "generated UniFFI sources are up to date (scripts/uniffi/generate.sh --check)" \
  scripts/uniffi/generate.sh --check
[ -f target/release/libacp_uniffi.so ] || fail "target/release/libacp_uniffi.so was not built"
check "the generated models (dev.libacp.models) match the ACP v1 schema (scripts/kotlin/gen_models.py --check)" \
  python3 scripts/kotlin/gen_models.py --check

echo "== Kotlin: the Rust test peers and libacp-remote-splice (cargo build -p libacp-tests --bins)"
cargo build --locked --quiet -p libacp-tests --bins || fail "cargo build -p libacp-tests failed"

check "official SDKs for the interop tests (scripts/setup-interop.sh)" ./scripts/setup-interop.sh

echo "== Kotlin: mvn test (bindings/uniffi/kotlin)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd bindings/uniffi/kotlin && mvn -B -ntp -Dstyle.color=never test) 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Surefire ends each execution with a "Tests run:" line without "in <class>":
# the default execution (the JNI fast path on), then `jni-off`. The total is
# their sum.
junit_passed=0
junit_failed=0
executions=("JNI fast path on" "JNI fast path off (jni-off)")
i=0
while read -r run failures errors; do
  failed=$((failures + errors))
  echo "== Kotlin: mvn test, ${executions[$i]:-execution $((i + 1))}: $((run - failed)) passed, $failed failed"
  junit_passed=$((junit_passed + run - failed))
  junit_failed=$((junit_failed + failed))
  i=$((i + 1))
done < <(sed -n 's/^\[[A-Z]*\] Tests run: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\), Skipped: [0-9]*$/\1 \2 \3/p' "$log")
if [ "$status" -ne 0 ] && [ "$junit_failed" -eq 0 ]; then
  junit_failed=1
fi

check "mvn install of the binding (for the examples)" \
  sh -c 'cd bindings/uniffi/kotlin && mvn -B -q -ntp install -DskipTests'
check "examples/kotlin: the client spawns the agent and prints a turn" examples/kotlin/run.sh
check "examples/kotlin: the remote client reaches the remote server and prints a turn" examples/kotlin/run-remote.sh

report "$junit_passed" "$junit_failed"
