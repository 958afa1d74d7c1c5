"""A retrieval system for the tests: a real HTTP server on 127.0.0.1 (stdlib, one thread
per connection, HTTP/1.1 keep-alive) serving fixed rankings, counting every request it
receives and injecting the faults a test asks for.

``rankings`` maps a query id to ``[(doc_id, score), ...]``.  A request names its query by
``qid`` (GET query string) or ``query_id`` (POST JSON body); ``k`` cuts the list.
``fault(query_id, attempt)`` (attempt counts from 1 per query) returns None (answer
normally) or one of :data:`FAULTS`.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("500", "timeout", "hang", "malformed", "missing", "duplicate", "nan", "429",
          "text-ids", "swap")


class SystemServer:
    def __init__(self, rankings, *, fault=None, delay: float = 0.0, slow: float = 3.0,
                 opensearch_shape: bool = False):
        self.rankings = rankings
        self.fault = fault
        self.delay = delay
        self.slow = slow
        self.opensearch_shape = opensearch_shape
        self.requests = 0
        self.attempts: Counter = Counter()
        self.headers_seen: list[dict] = []
        self.paths_seen: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, query_id: str, k: int):
        """``(status, headers, body bytes)`` for one request."""
        with self._lock:
            self.requests += 1
            self.attempts[query_id] += 1
            attempt = self.attempts[query_id]
        fault = self.fault(query_id, attempt) if self.fault else None
        if self.delay:
            time.sleep(self.delay)
        if fault == "hang":
            self._stop.wait(600)
            return 500, {}, b""
        if fault == "timeout":
            self._stop.wait(self.slow)
        if fault == "500":
            return 500, {}, b"internal error"
        if fault == "429":
            return 429, {"Retry-After": "1"}, b"slow down"
        if fault == "malformed":
            return 200, {}, b'{"hits": [{"doc_id": "x", '
        ranking = list(self.rankings.get(query_id, []))[:k]
        hits = [{"doc_id": d, "score": s} for d, s in ranking]
        if fault == "missing" and hits:
            del hits[len(hits) // 2]["score"]
        if fault == "duplicate" and len(hits) > 1:
            hits[-1]["doc_id"] = hits[0]["doc_id"]
        if fault == "nan" and hits:
            hits[0]["score"] = float("nan")
        if fault == "swap" and len(hits) > 9:  # another ranking: ids exchanged, scores kept
            hits[0]["doc_id"], hits[9]["doc_id"] = hits[9]["doc_id"], hits[0]["doc_id"]
        if fault == "text-ids":
            hits = [{"doc_id": f"other-{i}", "score": 1.0 / (i + 1)} for i in range(len(hits))]
        if fault == "few-text-ids" and hits:
            hits[-1]["doc_id"] = f"other-{query_id}"
        if self.opensearch_shape:
            doc = {"hits": {"hits": [{"_id": h["doc_id"], "_score": h.get("score")}
                                     for h in hits]}}
        else:
            doc = {"query_id": query_id, "hits": hits}
        return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _reply(self, query_id, k):
                with server._lock:
                    server.headers_seen.append(dict(self.headers.items()))
                    server.paths_seen.append(self.path)
                status, headers, body = server.answer(query_id, k)
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                params = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                self._reply(params.get("qid", [""])[0], int(params.get("k", ["1000"])[0]))

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self._reply(str(body.get("query_id", "")), int(body.get("size", 1000)))

        return Handler
