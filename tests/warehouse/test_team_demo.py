"""``make team-demo``: the demo's store, keys, submissions and ingester end with the signed
publishable runs alone in publishable.duckdb; its terminal holds the demo's own lines (no
library's traceback, issue 37 item 7); fixed ports are used as given, a taken one refused."""

from __future__ import annotations

import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.warehouse.team_builders import REPO, read

DEMO = REPO / "tools" / "team_demo.py"


@pytest.mark.service
def test_the_team_demo_publishes_only_signed_publishable_runs(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "tools" / "team_demo.py"), "--no-serve",
                           "--dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    # every S3 read once logged botocore's "Cannot access the socket object" traceback
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[:3000]
    assert "capped at tier B" in done.stdout and "unsigned: no signature.json" in done.stdout
    snaps = tmp_path / "snapshots"
    assert read(snaps / "publishable.duckdb", "SELECT control_name FROM runs ORDER BY 1") == \
        [("bm25-cc-by",), ("bm25-mit",)]
    assert read(snaps / "internal.duckdb", "SELECT control_name, tier FROM runs ORDER BY 1") == \
        [("bm25-cc-by", "A"), ("bm25-mit", "A"), ("bm25-noncommercial", "B"),
         ("bm25-unsigned", "B")]


def test_the_demo_key_is_created_owner_only_and_never_overwritten(tmp_path, monkeypatch):
    import importlib.util
    import os
    import stat

    spec = importlib.util.spec_from_file_location("team_demo", REPO / "tools" / "team_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # a chmod after the write would leave the key readable by others until it ran
    monkeypatch.setattr(os, "chmod", lambda *a, **k: None)
    old = os.umask(0o022)
    try:
        private, _ = module.make_keys(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    before = private.read_bytes()
    with pytest.raises(FileExistsError):
        module.make_keys(tmp_path)
    assert private.read_bytes() == before


def test_reading_an_s3_object_logs_nothing(s3_bucket, caplog):
    """The cause of the demo's flood: a read of an answer whose body had arrived whole set
    the socket timeout through botocore's StreamingBody, which logs a traceback at ERROR
    (then raises the AttributeError the store ignored) on every get."""
    from harness.core.store import open_store

    store = open_store(s3_bucket)
    assert store.put_if_absent("small.json", b"{}")
    caplog.set_level(logging.WARNING)
    assert store.get("small.json") == b"{}"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for sock in socks:
            sock.close()


def _demo(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DEMO), *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_a_taken_or_repeated_port_is_refused_before_anything_starts(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _demo("--dir", str(tmp_path / "demo"), "--s3-port", str(port))
    assert done.returncode == 2
    assert f"--s3-port {port}: 127.0.0.1:{port} is taken" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "demo").exists()
    free = _free_ports(1)[0]
    done = _demo("--dir", str(tmp_path / "demo"), "--port", str(free), "--oidc-port", str(free))
    assert done.returncode == 2 and f"--port {free}: also given as --oidc-port" in done.stderr
    for bad in ("0", "65536", "http"):
        done = _demo("--dir", str(tmp_path / "demo"), "--s3-port", bad)
        assert done.returncode == 2 and "is not a port number" in done.stderr, bad
    assert not (tmp_path / "demo").exists()


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.service
@pytest.mark.slow
def test_the_served_demo_uses_the_ports_given_and_prints_no_traceback(tmp_path):
    s3, oidc, login, pub, internal = _free_ports(5)
    out = tmp_path / "terminal.txt"
    root = tmp_path / "demo"
    with open(out, "wb") as terminal:
        proc = subprocess.Popen(
            [sys.executable, str(DEMO), "--dir", str(root), "--s3-port", str(s3),
             "--oidc-port", str(oidc), "--port", str(login), "--publishable-port", str(pub),
             "--internal-port", str(internal)], cwd=REPO, stdout=terminal,
            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 400
        while "Ctrl-C stops everything." not in out.read_text(errors="replace"):
            assert proc.poll() is None, out.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, out.read_text(errors="replace")[-3000:]
            time.sleep(1)
        text = out.read_text(errors="replace")
        assert f"at http://127.0.0.1:{s3} (moto's S3 server)" in text
        assert f"publishable  dashboard http://127.0.0.1:{pub} " in text
        assert f"internal     dashboard http://127.0.0.1:{internal} " in text
        assert f"login        dashboard http://127.0.0.1:{login} " in text
        assert f"OIDC provider http://127.0.0.1:{oidc})" in text
        for url in (f"http://127.0.0.1:{s3}/moto-api/",
                    f"http://127.0.0.1:{oidc}/.well-known/openid-configuration",
                    *(f"http://127.0.0.1:{p}/_stcore/health" for p in (login, pub, internal))):
            assert _answers(url), url
        # the printed "submit more" command works as printed, from a shell without the
        # demo's variables, and the watching ingester applies what it delivered
        line = next(x for x in text.splitlines() if x.startswith("submit more: "))
        extra = tmp_path / "extra"
        subprocess.run([sys.executable, "-m", "harness", "score", "--qrels",
                        str(REPO / "examples/toy/qrels.txt"), "--run",
                        str(REPO / "examples/toy/run.txt"), "--corpus-name", "toy",
                        "--licence", "MIT", "--out", str(extra), "--no-warehouse"],
                       check=True, capture_output=True, cwd=tmp_path)
        command = line.split(": ", 1)[1].replace("DIR", shlex.quote(str(extra)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              timeout=120, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        log = root / "logs" / "ingester.log"
        deadline = time.monotonic() + 60
        while read(root / "snapshots" / "internal.duckdb",
                   "SELECT count(*) FROM runs")[0][0] < 5:
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(1)
        time.sleep(6)  # a few more idle polls of the store (every 2 s)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    text = out.read_text(errors="replace")
    assert "Traceback" not in text and "Cannot access the socket" not in text, text[:3000]
    # Ctrl-C stopped every server it started: the ports are free again
    deadline = time.monotonic() + 30
    while any(_answers(f"http://127.0.0.1:{p}/_stcore/health") for p in (login, pub, internal)):
        assert time.monotonic() < deadline
        time.sleep(1)
