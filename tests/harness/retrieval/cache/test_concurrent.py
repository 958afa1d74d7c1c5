"""Two bench processes sharing one cache: each entry is built once, both results are the
same bytes, nothing half-written is left; and the build lock that makes it so."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.retrieval.cache_store import KeyedStore, get_or_build

from .helpers import claims, runinfo

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from ingestion.synthetic import generate

    return f"synthetic:{generate(20260812, 40, tmp_path_factory.mktemp('syn') / 'corpus')}"


def _process(spec, out, cache):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HARNESS_PREPARED_CACHE", None)
    argv = [sys.executable, "-m", "harness", "bench", "--corpus", spec, "--mode", "bm25",
            "--out", str(out), "--cache-dir", str(cache), "--control-name", "arm",
            "--no-progress", "--no-warehouse"]
    return subprocess.Popen(argv, env=env, cwd=str(out.parent), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_bench_processes_share_one_cache(synthetic, tmp_path):
    cache = tmp_path / "cache"
    procs = [_process(synthetic, tmp_path / name, cache) for name in ("one", "two")]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert claims(tmp_path / "one") == claims(tmp_path / "two")
    blocks = [runinfo(tmp_path / name)["prepared_cache"] for name in ("one", "two")]
    # each entry was built by exactly one of them; the other read it
    for entry in ("source", "prepared"):
        assert sorted(b["corpora"][0][entry] for b in blocks) == ["hit", "miss"], entry
    assert sorted(b["bm25_index"]["outcome"] for b in blocks) == ["hit", "miss"]
    for kind in ("sources", "corpora", "bm25"):
        entries = [p for p in (cache / "prepared" / kind).iterdir() if p.name != ".locks"]
        assert len(entries) == 1, entries  # one entry, no temporary left behind
        assert not entries[0].name.startswith(".tmp-")
    # and a third process, later, reads them all
    third = _process(synthetic, tmp_path / "three", cache)
    _, err = third.communicate(timeout=300)
    assert third.returncode == 0, err
    block = runinfo(tmp_path / "three")["prepared_cache"]
    assert (block["corpora"][0]["source"], block["corpora"][0]["prepared"],
            block["bm25_index"]["outcome"]) == ("hit", "hit", "hit")
    assert claims(tmp_path / "three") == claims(tmp_path / "one")


def test_a_second_builder_waits_for_the_first_and_reads_its_entry(tmp_path):
    store = KeyedStore(tmp_path, "things")
    builds, results = [], {}
    started = threading.Event()

    def read(path):
        return path.read_bytes() if path.is_file() else None

    def slow_build():
        builds.append(threading.current_thread().name)
        started.set()
        time.sleep(0.5)
        return b"built"

    def worker(name):
        results[name] = get_or_build(store, "k", read, slow_build,
                                     lambda value: store.publish_bytes("k", value))

    first = threading.Thread(target=worker, args=("first",), name="first")
    first.start()
    started.wait(5)
    second = threading.Thread(target=worker, args=("second",), name="second")
    second.start()
    first.join(10)
    second.join(10)
    assert builds == ["first"]
    assert results == {"first": (b"built", "miss"), "second": (b"built", "hit")}
