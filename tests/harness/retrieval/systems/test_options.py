"""Bad flags for a system under test: a clear message naming the flag, exit 2, no
traceback, no request sent, no results directory."""

from __future__ import annotations

import pytest

from .conftest import bench
from .server import SystemServer

URL = "{url}/search?qid={{query_id}}&q={{query}}&k={{k}}"


@pytest.mark.parametrize("extra, needle", [
    (["--backend", "http"], "--backend http needs --url-template URL"),
    (["--backend", "http", "--url-template", "ftp://x/{query}"], "must be an http:// or https://"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}&n={size}"],
     "unknown placeholder(s) {size}"),
    (["--backend", "http", "--url-template", "http://h/s"], "must hold {query} or {query_id}"),
    (["--backend", "http", "--url-template", "http://h/s", "--method", "POST",
      "--body-template", '{"q": {query}}'], "--body-template: does not render to JSON"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--field-map",
      "hits=hits[*],doc=_id"], "--field-map: unknown name 'doc'"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--field-map",
      "hits=hits..x,doc_id=_id"], "has an empty key"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--header", "NoColon"],
     "--header 'NoColon': expected 'Name: value'"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--http-retries", "-1"],
     "--http-retries must be at least 0"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--mode", "hybrid"],
     "--mode do not apply to --backend http"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--stage", "rerank"],
     "--stage rerank do not apply"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--repeat", "2",
      "--gate", "sequential", "--gate-threshold", "0.5"], "--repeat with --gate"),
    (["--backend", "command"], "--backend command needs --command"),
    (["--backend", "command", "--command", "x 'unclosed"], "--command: cannot split"),
    (["--url-template", "http://h/s?q={query}"], "--url-template apply to --backend http only"),
    (["--http-retries", "2"], "--http-retries apply to --backend http or command only"),
    (["--backend", "http", "--url-template", "http://h/s?q={query}", "--command", "x"],
     "--command apply to --backend command only"),
])
def test_bad_flags_exit_2_naming_the_flag(tmp_path, synthetic, capsys, extra, needle):
    code = bench(synthetic, *extra, "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_existing_results_directory_is_kept_and_no_request_is_sent(tmp_path, synthetic,
                                                                      rankings, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with SystemServer(rankings) as server:
        code = bench(synthetic, "--backend", "http", "--url-template",
                     URL.format(url=server.url), "--out", str(out))
        assert server.requests == 0
    assert code == 2 and (out / "notes.txt").read_text() == "keep me"


def test_the_options_modules_import_no_client_library(repo_root):
    import subprocess
    import sys

    code = ("import sys, harness.retrieval.backends.http_options, "
            "harness.retrieval.backends.command_options, harness.cli.bench; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('httpx', 'httpcore')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=repo_root, check=True).stdout
    assert out.strip() == "[]"
