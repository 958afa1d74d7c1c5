"""A team's own judge over HTTP (issue 38 item 6), against a real HTTP server on 127.0.0.1:
the estimate runs end to end, the secret header reaches the server but is never recorded or
printed, the licence caps the tier, and an oversized, failing or malformed answer stops the
command with one located line."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

SECRET = "s3cr3t-judge-key"
DOCS = {f"d{i}": f"word{i} " * 3 for i in range(6)}
QUERIES = {f"q{i}": f"word{i} word{(i + 1) % 6}" for i in range(6)}


class _Judge(BaseHTTPRequestHandler):
    seen_keys: list[str] = []

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen_keys.append(self.headers.get("X-Api-Key", ""))
        mode = self.path.strip("/")
        if mode == "fail":
            self.send_response(500)
            self.end_headers()
            return
        if mode == "huge":
            payload = b'{"score": 1, "pad": "' + b"x" * 200_000 + b'"}'
        elif mode == "bad":
            payload = b'{"score": "high"}'
        else:
            overlap = len(set(body["query"].split()) & set(body["document"].split()))
            payload = json.dumps({"score": overlap}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def judge_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _harness(*args, cwd, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def _setup(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in DOCS.items()))
    (beir / "queries.jsonl").write_text("".join(
        json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\td{i}\t1\n" for i, q in enumerate(QUERIES)))
    # each query ranks its own document first, its neighbour's second, then one other
    run = "".join(f"q{i} Q0 d{(i + j) % 6} {j + 1} {3 - j}.0 r\n" for i in range(6)
                  for j in (0, 1, 3))
    (tmp_path / "run.trec").write_text(run)
    assert _harness("pool", "run.trec", "--depth", "10", "--sample-queries", "3", "--out",
                    "pool.jsonl", cwd=tmp_path).returncode == 0
    pairs = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()[1:]]
    labels = [{"query_id": p["query_id"], "doc_id": p["doc_id"], "rater": "ana",
               "at": "2026-12-07T09:00:00Z",
               "label": 2 if p["doc_id"] == "d" + p["query_id"][1:] else 0}
              for p in pairs if p["sampled"]]
    (tmp_path / "ana.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    made = _harness("qrels", "version", "--pool", "pool.jsonl", "--labels", "ana.jsonl",
                    "--corpus-name", "mine", "--licence", "MIT", "--out", "v", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (version,) = (tmp_path / "v").glob("qrels-*.json")
    return ["qrels", "estimate", "--run", "run.trec", "--pool", "pool.jsonl", "--version",
            str(version), "--corpus", f"beir:{beir}", "--queries", str(beir / "queries.jsonl"),
            "--judge-header", "X-Api-Key: env:JUDGE_KEY"]


def test_http_judge_estimate_records_no_secret(tmp_path, judge_url):
    args = _setup(tmp_path)
    done = _harness(*args, "--judge-url", judge_url + "/score", "--out", "est.json",
                    cwd=tmp_path, env={"JUDGE_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    assert SECRET in _Judge.seen_keys  # the header reached the judge
    written = (tmp_path / "est.json").read_text()
    assert SECRET not in written and SECRET not in done.stdout + done.stderr
    doc = json.loads(written)
    assert doc["judge"]["headers"] == ["X-Api-Key"] and doc["judge"]["licence"] == "unknown"
    assert doc["judge"]["tier"] == "B"  # an unknown judge licence caps the estimate at B
    assert doc["tier"] == "B"
    assert doc["judge_pairs"] == 18 and doc["labelled_queries"] == 3
    assert "judged 18/18 pairs" in done.stderr
    licensed = _harness(*args, "--judge-url", judge_url + "/score", "--judge-licence",
                        "Apache-2.0", "--out", "est2.json", "--no-progress", cwd=tmp_path,
                        env={"JUDGE_KEY": SECRET})
    assert licensed.returncode == 0, licensed.stderr
    second = json.loads((tmp_path / "est2.json").read_text())
    # a publishable judge licence no longer caps it; the corpus (no licence: tier B) still does
    assert second["judge"]["tier"] == "A" and second["tier"] == "B"


@pytest.mark.parametrize("path, message", [
    ("huge", "is larger than 1000 bytes (--judge-max-bytes)"),
    ("fail", "no answer after 3 tries (status 500)"),
    ("bad", "field 'score': expected a JSON object with a finite number"),
])
def test_a_bad_judge_stops_with_one_line(tmp_path, judge_url, path, message):
    args = _setup(tmp_path)
    done = _harness(*args, "--judge-url", f"{judge_url}/{path}", "--judge-max-bytes", "1000",
                    "--no-progress", "--out", "est.json", cwd=tmp_path, env={"JUDGE_KEY": SECRET})
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert SECRET not in done.stderr and not (tmp_path / "est.json").exists()


def test_an_out_file_the_product_did_not_write_is_refused_before_judging(tmp_path, judge_url):
    args = _setup(tmp_path)
    (tmp_path / "mine.json").write_text('{"my": "notes"}\n')
    asked = len(_Judge.seen_keys)
    done = _harness(*args, "--judge-url", judge_url + "/score", "--out", "mine.json",
                    "--no-progress", cwd=tmp_path, env={"JUDGE_KEY": SECRET})
    assert done.returncode == 2 and "is not a judged estimate" in done.stderr
    assert (tmp_path / "mine.json").read_text() == '{"my": "notes"}\n'
    assert len(_Judge.seen_keys) == asked  # no pair was sent to the judge
