"""``ingestion fetch``: no manifest path leads outside its destination, and Ctrl-C at any
point leaves no half-written download, unpacked tree or manifest (issue #16).

The review's repro: ``fetch --verify`` printed the sha256 of ``/etc/shadow`` for a manifest
entry ``../../../etc/shadow``.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import pytest

from harness.core.sources import Artefact, Source
from ingestion import fetch as f
from ingestion.cli import main
from ingestion.evidence import manifest_evidence
from tests.user_files import snapshot

from .helpers import write_beir

REPO = Path(__file__).resolve().parents[2]


def _zip(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, f"toyset/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def _source(url: str, sha256: str | None = None) -> Source:
    return Source(name="toyset", title="toy", version="1", licence="CC-BY-4.0",
                  evidence="test", citation="test", role="test", layout="beir",
                  artefacts=(Artefact(url=url, filename="toyset.zip", sha256=sha256,
                                      extract=True),))


@pytest.fixture
def fetched(tmp_path, http_dir):
    """A fetched BEIR archive in ``dest`` and a secret file beside (outside) it."""
    served, base = http_dir
    data = _zip(write_beir(tmp_path / "src"))
    (served / "toyset.zip").write_bytes(data)
    dest = tmp_path / "dest"
    f.fetch(["toyset"], dest, sources={"toyset": _source(f"{base}/toyset.zip")})
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret-hash:19000:0:99999:7:::\n")
    return dest, secret


def _rewrite(dest: Path, **fields) -> None:
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["artefacts"][0].update(fields)
    (dest / "manifest.json").write_text(json.dumps(manifest))


def _verify(dest: Path, capsys) -> str:
    code = main(["fetch", "--verify", "--dest", str(dest)])
    out = capsys.readouterr()
    assert code == 1, out
    return out.out + out.err


def test_verify_refuses_a_manifest_path_that_climbs_out(fetched, capsys):
    dest, secret = fetched
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    for path in ("../shadow", "toyset/../../shadow", str(secret)):
        _rewrite(dest, path=path, sha256="0" * 64)
        text = _verify(dest, capsys)
        assert f"MISMATCH toyset/toyset.zip: refused: field 'path' {path!r} resolves outside" \
               in text
        assert digest not in text  # nothing about the file outside is printed


def test_verify_refuses_a_symbolic_link_out_of_the_destination(fetched, capsys):
    dest, secret = fetched
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    archive = dest / "toyset" / "toyset.zip"
    archive.unlink()
    archive.symlink_to(secret)
    text = _verify(dest, capsys)
    assert "refused: field 'path' 'toyset/toyset.zip' resolves outside" in text
    assert digest not in text


def test_verify_refuses_an_unpacked_tree_outside_or_linking_out(fetched, capsys):
    dest, secret = fetched
    entry = json.loads((dest / "manifest.json").read_text())["artefacts"][0]
    unpacked = dest / entry["extracted"]
    (unpacked / "extra.txt").symlink_to(secret)
    text = _verify(dest, capsys)
    assert "refused: 1 file(s) under" in text and f"extra.txt -> {secret}" in text
    (unpacked / "extra.txt").unlink()
    _rewrite(dest, extracted="../../")
    text = _verify(dest, capsys)
    assert "refused: field 'extracted' '../../' resolves outside" in text
    # nor does a manifest pointing out of its folder vouch for files at load
    ok, why = manifest_evidence("toyset", dest.parent, dests=[dest])
    assert not ok and "points outside its folder" in why


def test_verify_refuses_a_registered_copy_linking_out(tmp_path, capsys):
    secret = tmp_path / "shadow"
    secret.write_text("secret\n")
    folder = write_beir(tmp_path / "nq")
    dest = tmp_path / "dest"
    f.register_dir("beir-nq", folder, dest)
    (folder / "corpus.jsonl").unlink()
    (folder / "corpus.jsonl").symlink_to(secret)
    text = _verify(dest, capsys)
    assert "MISMATCH beir-nq/(from-dir): refused: 1 file(s) under" in text
    assert hashlib.sha256(secret.read_bytes()).hexdigest() not in text


# --------------------------------------------------------------------------- Ctrl-C

CHILD = """
    import os, signal, sys, zipfile
    from harness.core.sources import SOURCES, Artefact, Source
    import ingestion.fetch as fetch

    point, name, url, sha = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] or None
    argv = sys.argv[5:]
    SOURCES[name] = Source(
        name=name, title="toy", version="1", licence="CC-BY-4.0", evidence="test",
        citation="test", role="test", layout="beir",
        artefacts=(Artefact(url=url, filename=f"{name}.zip", sha256=sha, extract=True),))

    def sigint():
        os.kill(os.getpid(), signal.SIGINT)

    if point == "extract":
        real_extract = zipfile.ZipFile.extractall
        def extractall(self, *args, **kwargs):
            sigint()
            return real_extract(self, *args, **kwargs)
        zipfile.ZipFile.extractall = extractall
    if point == "hash":
        real_tree = fetch.tree_sha256
        def tree_sha256(path):
            sigint()
            return real_tree(path)
        fetch.tree_sha256 = tree_sha256
    if point == "manifest":
        real_replace = os.replace
        def replace(src, dst):
            if str(dst).endswith("manifest.json"):
                sigint()  # held back: the manifest is renamed whole
            return real_replace(src, dst)
        os.replace = replace
    from ingestion.cli import main
    print("STARTED", flush=True)
    sys.exit(main(argv))
"""


def child(point, name, url, sha, *argv) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD), point, name, url,
                             sha or "",
                             *map(str, argv)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


class _Slow(http.server.BaseHTTPRequestHandler):
    """Serves 8 MiB in 64 KiB pieces, 20 ms apart (a download long enough to interrupt)."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(128 * 65536))
        self.end_headers()
        try:
            for _ in range(128):
                self.wfile.write(b"x" * 65536)
                time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, *args):
        return


@pytest.fixture
def slow_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/slow.zip"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _finish(proc, timeout=120) -> tuple[int, str, str]:
    """Exit code, stdout and stderr; stderr ends with the one interrupt line and holds no
    traceback (progress lines logged before it may precede it)."""
    out, err = proc.communicate(timeout=timeout)
    assert "Traceback" not in err and err.count("interrupted") <= 1, err
    return proc.returncode, out, err.splitlines()[-1] + "\n" if err else err


def test_ctrl_c_during_a_download_keeps_no_part_file_and_no_manifest_entry(fetched, slow_url):
    dest, _ = fetched
    before = snapshot(dest)
    proc = child("none", "slowset", slow_url, None, "fetch", "--corpus", "slowset", "--dest",
                 dest)
    deadline = time.monotonic() + 60
    while not list((dest / "slowset").glob(".slowset.zip.part-*")):
        assert time.monotonic() < deadline, "the download never started"
        time.sleep(0.02)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    code, _, err = _finish(proc)
    assert code == 130 and err == "interrupted: nothing half-written was kept\n", err
    after = snapshot(dest)
    assert after.pop("slowset") is None and after == before  # an empty folder, nothing else


@pytest.mark.parametrize("point", ["extract", "manifest"])
def test_ctrl_c_while_unpacking_or_recording_leaves_the_old_state_or_the_new(fetched, http_dir,
                                                                             point):
    dest, _ = fetched
    url = f"{http_dir[1]}/toyset.zip"
    sha = hashlib.sha256((http_dir[0] / "toyset.zip").read_bytes()).hexdigest()
    (dest / "manifest.json").unlink()  # so the archive is unpacked and recorded again
    before = snapshot(dest)
    code, _, err = _finish(child(point, "toyset", url, sha, "fetch", "--corpus", "toyset",
                                 "--dest", dest))
    assert code == 130 and err == "interrupted: nothing half-written was kept\n", err
    after = snapshot(dest)
    assert not [name for name in after
                if any(kind in name for kind in (".tmp-", ".old-", ".part-", ".staging-"))]
    if point == "extract":
        assert after == before  # the earlier unpacked tree is intact; no manifest written
    else:  # the manifest was renamed whole before the interrupt was let through
        assert {k: v for k, v in after.items() if k != "manifest.json"} == before
        assert json.loads(after["manifest.json"])["artefacts"][0]["sha256"] == sha


def test_ctrl_c_while_a_copy_is_hashed_records_nothing(tmp_path):
    folder = write_beir(tmp_path / "nq")
    dest = tmp_path / "dest"
    code, _, err = _finish(child("hash", "unused", "http://127.0.0.1:9/x.zip", None, "fetch",
                                 "--corpus", "beir-nq", "--from-dir", folder, "--dest", dest))
    assert code == 130 and err == "interrupted: nothing half-written was kept\n", err
    assert not dest.exists() or not any(dest.iterdir())
