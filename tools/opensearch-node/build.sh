#!/usr/bin/env bash
# Assemble the OpenSearch 2.19 node from Maven Central (needs only Maven and Java 17+).
# Idempotent: when target/.built is newer than the pom and the sources, it returns at once.
#   tools/opensearch-node/build.sh          build if needed
#   tools/opensearch-node/build.sh --force  rebuild
# Result: target/opensearch-node.jar, target/lib/*.jar, target/plugins/{opensearch-knn,neural-search}/*.jar
# and target/node.jsa, a class-data-sharing archive of a node's start (halves the start time;
# used only with the java recorded in target/node.jsa.java).  Env: JAVA_HOME, MAVEN_ARGS.
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd -P)"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"

stamp=target/.built
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] && [ -f target/opensearch-node.jar ] \
   && [ -z "$(find pom.xml build.sh src -newer "$stamp" -print -quit)" ]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "build.sh: Maven (mvn) not found; apt-get install maven" >&2; exit 1; }
command -v "$java" >/dev/null || { echo "build.sh: $java not found (Java 17+ needed; set JAVA_HOME)" >&2; exit 1; }

rm -rf target/lib target/plugins target/node.jsa target/node.jsa.java "$stamp"
# -q hides the download log; failures still print.  MAVEN_ARGS may add e.g. -o (offline).
mvn -B -q -Dstyle.color=never ${MAVEN_ARGS:-} package

# Class-data-sharing archive: start one node with -XX:ArchiveClassesAtExit, stop it once started.
# The classpath string must be the one that run.sh and tests/servers/opensearch.py use.
cp="$here/target/opensearch-node.jar:$here/target/lib/*:$here/target/plugins/opensearch-knn/*:$here/target/plugins/neural-search/*"
home="$(mktemp -d "${TMPDIR:-/tmp}/opensearch-node-cds.XXXXXX")"
exec {node_in}> >(exec "$java" -Xms512m -Xmx1g -XX:ArchiveClassesAtExit="$here/target/node.jsa.tmp" \
                   -cp "$cp" org.retrieval.opensearchnode.NodeLauncher "$home" >"$home/node.out" 2>&1)
node_pid=$!
for _ in $(seq 1 1800); do
  grep -q '^started ' "$home/node.out" 2>/dev/null && break
  kill -0 "$node_pid" 2>/dev/null || break
  sleep 0.1
done
exec {node_in}>&-   # stdin closes: the node stops and the JVM writes the archive
for _ in $(seq 1 600); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.1; done
if grep -q '^started ' "$home/node.out" && [ -s target/node.jsa.tmp ]; then
  mv target/node.jsa.tmp target/node.jsa
  readlink -f "$(command -v "$java")" > target/node.jsa.java
else
  echo "build.sh: warning: no CDS archive made (the node did not start?); see below" >&2
  tail -n 30 "$home/node.out" >&2 || true
  rm -f target/node.jsa.tmp
fi
rm -rf "$home"

touch "$stamp"
echo "opensearch-node built: $(cd target && ls lib/*.jar plugins/*/*.jar | wc -l) jars, $(du -sh target | cut -f1)"
