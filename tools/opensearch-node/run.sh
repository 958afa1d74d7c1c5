#!/usr/bin/env bash
# Start one OpenSearch 2.19 node in the foreground on 127.0.0.1 (first free port in 9200-9300),
# with its data in a temp folder that is removed when it stops.  Ctrl-C stops it.
#   tools/opensearch-node/run.sh [-Ekey=value ...]      e.g. -Ehttp.port=9250
# Env: JAVA_HOME (Java 17+), OPENSEARCH_JAVA_OPTS (default -Xms512m -Xmx1g),
#      OPENSEARCH_HOME (use this folder instead of a temp one; it is kept).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd -P)"
"$here/build.sh"

java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# the class-data-sharing archive made by build.sh, when it was made by this java
cds=()
if [ -f "$here/target/node.jsa" ] && [ "$(cat "$here/target/node.jsa.java" 2>/dev/null)" = "$(readlink -f "$(command -v "$java")")" ]; then
  cds=(-XX:SharedArchiveFile="$here/target/node.jsa")
fi
cp="$here/target/opensearch-node.jar:$here/target/lib/*:$here/target/plugins/opensearch-knn/*:$here/target/plugins/neural-search/*"
if [ -n "${OPENSEARCH_HOME:-}" ]; then
  home="$OPENSEARCH_HOME"; mkdir -p "$home"
else
  home="$(mktemp -d "${TMPDIR:-/tmp}/opensearch-node.XXXXXX")"
  trap 'rm -rf "$home"' EXIT
fi
rm -f "$home/logs/http.ports"

# Print the URL once HTTP is bound (the node writes logs/http.ports).
(
  for _ in $(seq 1 1200); do
    if [ -s "$home/logs/http.ports" ]; then
      addr="$(head -n1 "$home/logs/http.ports")"
      echo "OpenSearch 2.19.1 at http://$addr  (home $home; log $home/logs/opensearch.log; Ctrl-C stops it)"
      exit 0
    fi
    sleep 0.1
  done
  echo "run.sh: no $home/logs/http.ports after 120 s; see $home/logs/opensearch.log" >&2
) &

# The node stops when its stdin closes.  On a terminal that is the terminal; otherwise feed it a
# pipe that closes when this script goes away.
# shellcheck disable=SC2086
if [ -t 0 ]; then
  "$java" "${cds[@]}" ${OPENSEARCH_JAVA_OPTS:--Xms512m -Xmx1g} -cp "$cp" org.retrieval.opensearchnode.NodeLauncher "$home" "$@"
else
  "$java" "${cds[@]}" ${OPENSEARCH_JAVA_OPTS:--Xms512m -Xmx1g} -cp "$cp" org.retrieval.opensearchnode.NodeLauncher "$home" "$@" \
    < <(while kill -0 $$ 2>/dev/null; do sleep 1; done)
fi
