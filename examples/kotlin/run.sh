#!/usr/bin/env bash
# Builds the Kotlin examples and runs the client, which spawns the example
# agent (the same JVM and classpath) and prints one prompt turn. Needs the
# binding installed in the local Maven repository first:
#   (cd bindings/uniffi/kotlin && mvn install -DskipTests)
# Arguments go to the client: `./run.sh -- <agent command...>` talks to
# another agent instead.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q -ntp -Dstyle.color=never package dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
exec java -cp "target/classes:$(cat target/classpath.txt)" dev.libacp.examples.ClientKt "$@"
