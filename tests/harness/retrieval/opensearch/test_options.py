"""``--backend opensearch`` flags, the URL default and the light options module (no node)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.cli import main
from harness.retrieval.backends import BACKEND_OPTIONS, BACKENDS, backend_options
from harness.retrieval.backends.opensearch.client import BACKOFF, check_url


def _args(argv):
    from harness.cli import _available, build_parser

    return build_parser(_available()).parse_args(argv)


def test_the_backend_and_its_options_are_registered():
    assert BACKENDS["opensearch"] == "harness.retrieval.backends.opensearch.backend:OpenSearchBackend"
    assert BACKEND_OPTIONS["opensearch"] == "harness.retrieval.backends.opensearch.options"


def test_the_options_module_imports_no_client_library(repo_root):
    code = ("import sys, harness.retrieval.backends.opensearch.options as o, "
            "harness.cli.bench; print(sorted(m for m in sys.modules if m.startswith('opensearchpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=repo_root, check=True).stdout
    assert out.strip() == "[]"


def test_url_defaults_to_the_environment_and_flags_win(tmp_path, monkeypatch):
    base = ["bench", "--corpus", "qmsum:x", "--out", str(tmp_path / "o"), "--backend",
            "opensearch", "--mode", "bm25"]
    monkeypatch.setenv("OPENSEARCH_URL", "http://127.0.0.1:9201")
    assert dict(backend_options("opensearch", _args(base)))["url"] == "http://127.0.0.1:9201"
    given = _args(base + ["--opensearch-url", "http://127.0.0.1:9333/"])
    assert dict(backend_options("opensearch", given))["url"] == "http://127.0.0.1:9333"
    monkeypatch.delenv("OPENSEARCH_URL")
    with pytest.raises(ValueError, match="--opensearch-url"):
        backend_options("opensearch", _args(base))


def test_flags_of_the_opensearch_backend_are_refused_with_another(tmp_path, capsys):
    rc = main(["bench", "--corpus", "qmsum:x", "--out", str(tmp_path / "o"), "--no-warehouse",
               "--opensearch-dense", "exact", "--opensearch-url", "http://127.0.0.1:1"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--opensearch-dense, --opensearch-url apply to --backend opensearch only" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flags, message", [
    (["--opensearch-dense", "exact"], "--opensearch-dense needs a dense leg"),
    (["--opensearch-fusion", "server"], "--opensearch-fusion applies to --mode hybrid only"),
    (["--opensearch-ef-search", "0"], "between 1 and 10000"),
])
def test_flags_that_do_not_fit_the_arm_are_refused(tmp_path, flags, message):
    args = _args(["bench", "--corpus", "qmsum:x", "--out", str(tmp_path / "o"), "--backend",
                  "opensearch", "--mode", "bm25", "--opensearch-url", "http://127.0.0.1:1",
                  *flags])
    with pytest.raises(ValueError, match=message):
        backend_options("opensearch", args)


@pytest.mark.parametrize("url, message", [
    ("127.0.0.1:9200", "expected http://HOST:PORT"),
    ("ftp://127.0.0.1:9200", "expected http://HOST:PORT"),
    ("http://127.0.0.1:9200/prefix", "without a path"),
    ("http://user:secret@127.0.0.1:9200", "credentials"),
    ("http://127.0.0.1:port", "not a number"),
])
def test_malformed_urls_are_bad_input(url, message):
    with pytest.raises(ValueError, match=message):
        check_url(url)


def test_backoff_doubles_from_a_quarter_second_and_stops_at_eight():
    assert [BACKOFF.delay(a) for a in range(8)] == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
