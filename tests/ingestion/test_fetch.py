"""fetch / verify / --from-dir against archives served from 127.0.0.1."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import urllib.request
import zipfile

import pytest

from ingestion import fetch as f
from ingestion.cli import main
from harness.core.sources import Artefact, Source

from .helpers import qmsum_meeting, write_beir, write_json


def _source(name, url, *, licence="MIT", sha256=None, md5=None, layout="beir", **kw) -> Source:
    return Source(name=name, title=name, version="1", licence=licence, evidence="test fixture",
                  citation="test", role="test", layout=layout,
                  artefacts=(Artefact(url=url, filename=f"{name}.zip", sha256=sha256, md5=md5,
                                      extract=True),) if url else (), **kw)


def _beir_zip(tmp_path) -> bytes:
    folder = write_beir(tmp_path / "build" / "toyset")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder.parent).as_posix())
    return buffer.getvalue()


@pytest.fixture
def served(http_dir, tmp_path):
    """A BEIR zip on the local server: ``(url, bytes)``."""
    root, base = http_dir
    data = _beir_zip(tmp_path)
    (root / "toyset.zip").write_bytes(data)
    return f"{base}/toyset.zip", data


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/gone.zip"


def test_fetch_downloads_verifies_unpacks_and_records(served, tmp_path):
    url, data = served
    sha = hashlib.sha256(data).hexdigest()
    md5 = hashlib.md5(data).hexdigest()  # noqa: S324 - mirrors a distributor-published md5
    sources = {"toyset": _source("toyset", url, sha256=sha, md5=md5)}
    dest = tmp_path / "cache"
    (entry,) = f.fetch(["toyset"], dest, sources=sources)
    assert (entry["sha256"], entry["size"], entry["tier"], entry["sha256_origin"]) == \
        (sha, len(data), "A", "registry")
    assert (dest / "toyset" / "toyset.zip").read_bytes() == data
    manifest = json.loads((dest / "manifest.json").read_text())
    assert [e["source"] for e in manifest["artefacts"]] == ["toyset"]
    assert manifest["artefacts"][0]["url"] == url
    # the unpacked archive loads as a BEIR corpus
    from ingestion import load_corpus

    assert entry["extracted"] == "toyset/toyset/toyset"  # <source>/<archive>/<its top folder>
    corpus = load_corpus(f"beir:{dest / entry['extracted']}")
    assert corpus.name == "beir-toyset" and len(corpus.documents) == 4


def test_checksum_mismatch_is_refused_and_nothing_is_kept(served, tmp_path):
    url, data = served
    sources = {"toyset": _source("toyset", url, sha256="0" * 64)}
    dest = tmp_path / "cache"
    with pytest.raises(f.FetchError, match=r"checksum mismatch for toyset/toyset.zip"):
        f.fetch(["toyset"], dest, sources=sources)
    assert not (dest / "toyset" / "toyset.zip").exists()
    assert not [p for p in (dest / "toyset").iterdir()]  # no .part file either
    assert not (dest / "manifest.json").exists()


def test_published_md5_mismatch_is_refused(served, tmp_path):
    url, _ = served
    sources = {"toyset": _source("toyset", url, md5="f" * 32)}
    with pytest.raises(f.FetchError, match="md5 .* published f{32}"):
        f.fetch(["toyset"], tmp_path / "cache", sources=sources)


def test_first_download_digest_is_pinned_in_the_manifest(served, http_dir, tmp_path):
    url, data = served
    sources = {"toyset": _source("toyset", url)}
    dest = tmp_path / "cache"
    (entry,) = f.fetch(["toyset"], dest, sources=sources)
    assert entry["sha256_origin"] == "first-download"
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    # upstream bytes change and the local copy is lost: the re-download must match the pin
    (http_dir[0] / "toyset.zip").write_bytes(data + b"tampered")
    (dest / "toyset" / "toyset.zip").unlink()
    with pytest.raises(f.FetchError, match="from the manifest"):
        f.fetch(["toyset"], dest, sources=sources)


def test_tier_b_is_refused_without_the_flag(served, tmp_path):
    url, _ = served
    sources = {"ncset": _source("ncset", url, licence="CC-BY-NC-4.0")}
    with pytest.raises(f.FetchError, match=r"--accept-noncommercial: ncset \(CC-BY-NC-4.0\)"):
        f.fetch(["ncset"], tmp_path / "cache", sources=sources)
    assert not (tmp_path / "cache").exists()
    (entry,) = f.fetch(["ncset"], tmp_path / "cache", sources=sources, accept_noncommercial=True)
    assert entry["tier"] == "B"


def test_cli_refuses_a_real_tier_b_source_before_any_network(tmp_path, capsys, monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the refusal must come before any download")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert main(["fetch", "--corpus", "beir-msmarco", "--dest", str(tmp_path)]) == 2
    assert "--accept-noncommercial" in capsys.readouterr().err


def test_offline_failure_names_the_url_and_suggests_from_dir(tmp_path):
    url = _closed_port_url()
    sources = {"toyset": _source("toyset", url)}
    with pytest.raises(f.FetchError) as err:
        f.fetch(["toyset"], tmp_path / "cache", sources=sources, timeout=5)
    message = str(err.value)
    assert url in message
    assert "--from-dir" in message and "--corpus toyset" in message


def test_verify_is_offline_and_names_a_changed_artefact(served, tmp_path, monkeypatch):
    url, data = served
    sources = {"toyset": _source("toyset", url)}
    dest = tmp_path / "cache"
    f.fetch(["toyset"], dest, sources=sources)

    def no_network(*a, **k):
        raise AssertionError("verify must not touch the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    problems, verified = f.verify(dest, sources=sources)
    assert problems == [] and len(verified) == 1
    (dest / "toyset" / "toyset.zip").write_bytes(data[:-1] + b"!")
    problems, verified = f.verify(dest, sources=sources)
    assert verified == [] and len(problems) == 1
    assert problems[0].startswith("toyset/toyset.zip: sha256 ")


def test_verify_cli_exit_codes(served, tmp_path, capsys):
    url, data = served
    dest = tmp_path / "cache"
    f.fetch(["toyset"], dest, sources={"toyset": _source("toyset", url)})
    assert main(["fetch", "--verify", "--dest", str(dest)]) == 0
    (dest / "toyset" / "toyset.zip").write_bytes(b"")
    assert main(["fetch", "--verify", "--dest", str(dest)]) == 1
    assert "MISMATCH toyset/toyset.zip" in capsys.readouterr().out
    assert main(["fetch", "--verify", "--dest", str(tmp_path / "empty")]) == 2


def _fake_qmsum(root):
    write_json(root / "data" / "Product" / "val" / "ES1.json", qmsum_meeting(4, [("q?", [(0, 1)])]))
    return root


def test_from_dir_registers_a_checked_layout_and_verify_sees_changes(tmp_path):
    repo = _fake_qmsum(tmp_path / "QMSum")
    dest = tmp_path / "cache"
    entry = f.register_dir("qmsum", repo, dest)
    # a made-up meeting is not upstream's: registered for --verify, but tier B
    assert (entry["via"], entry["files"], entry["tier"]) == ("from-dir", 1, "B")
    assert entry["pins"]["unmatched"] == ["data/Product/val/ES1.json"]
    assert "1 meetings" in entry["layout"]
    assert f.verify(dest)[0] == []
    (repo / "data" / "Product" / "val" / "ES1.json").write_text("{}", encoding="utf-8")
    problems, _ = f.verify(dest)
    assert len(problems) == 1 and problems[0].startswith("qmsum/(from-dir): sha256")


def test_from_dir_refuses_a_wrong_layout(tmp_path):
    (tmp_path / "notqmsum").mkdir()
    (tmp_path / "notqmsum" / "readme.txt").write_text("x", encoding="utf-8")
    with pytest.raises(f.FetchError, match="layout check failed for a qmsum source"):
        f.register_dir("qmsum", tmp_path / "notqmsum", tmp_path / "cache")
    with pytest.raises(f.FetchError, match="layout check failed for a beir source"):
        f.register_dir("beir-scifact", tmp_path / "notqmsum", tmp_path / "cache",
                       accept_noncommercial=True)


def test_unobtainable_and_artefact_less_sources(tmp_path):
    with pytest.raises(f.FetchError, match="unobtainable"):
        f.register_dir("beir-robust04", tmp_path, tmp_path / "cache", accept_noncommercial=True)
    with pytest.raises(f.FetchError, match="no direct download for icsi"):
        f.fetch(["icsi"], tmp_path / "cache")
    with pytest.raises(ValueError, match="registered sources"):
        f.fetch(["no-such-corpus"], tmp_path / "cache")


def test_unpacking_never_takes_a_sibling_for_its_temporary_directory(tmp_path):
    """An archive was unpacked into ``.NAME.tmp-PID``, deleting whatever stood there first."""
    import os

    archive = tmp_path / "set.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("corpus.jsonl", '{"_id": "d1"}\n')
    sibling = tmp_path / f".set.tmp-{os.getpid()}"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine")
    f._safe_extract(archive, tmp_path / "set")
    assert (tmp_path / "set" / "corpus.jsonl").read_text() == '{"_id": "d1"}\n'
    assert (sibling / "keep.txt").read_text() == "mine"
