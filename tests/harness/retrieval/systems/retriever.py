"""A retriever program for ``--backend command`` tests: serves fixed rankings.

``python retriever.py RANKINGS.json [--per-query] [--crash-after N] [--garbage-at QID]
[--hang-at QID] [--state FILE] [--spawn-sleeper PIDFILE]``.  Persistent (default): one JSON
line in, one out, until stdin closes.  ``--per-query``: reads one line, prints one answer,
exits.  ``--state FILE`` appends one line per answered query (so a test counts work across restarts).
``--spawn-sleeper PIDFILE`` starts ``sleep 300`` holding the program's stdout and stderr
(a grandchild of the harness) and appends its pid to PIDFILE.
"""

import json
import sys
import time


def main(argv):
    rankings = json.load(open(argv[0], encoding="utf-8"))
    opts = {}
    flags = argv[1:]
    i = 0
    while i < len(flags):
        if flags[i] == "--per-query":
            opts["per_query"] = True
            i += 1
        else:
            opts[flags[i].lstrip("-")] = flags[i + 1]
            i += 2
    answered = 0
    if "spawn-sleeper" in opts:
        import subprocess

        sleeper = subprocess.Popen(["sleep", "300"])
        with open(opts["spawn-sleeper"], "a", encoding="utf-8") as f:
            f.write(f"{sleeper.pid}\n")
    for line in sys.stdin:
        request = json.loads(line)
        qid = request["query_id"]
        if opts.get("hang-at") == qid:
            time.sleep(600)
        if "crash-after" in opts and answered >= int(opts["crash-after"]):
            sys.exit(3)
        if opts.get("garbage-at") == qid:
            print("this is not json", flush=True)
            continue
        hits = [{"doc_id": d, "score": s} for d, s in rankings.get(qid, [])[:request["k"]]]
        if "state" in opts:
            with open(opts["state"], "a", encoding="utf-8") as f:
                f.write(qid + "\n")
        print(json.dumps({"query_id": qid, "hits": hits}), flush=True)
        answered += 1
        if opts.get("per_query"):
            return


if __name__ == "__main__":
    main(sys.argv[1:])
