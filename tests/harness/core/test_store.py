"""The shared store: one interface, a directory and a real S3 API (moto's server on
127.0.0.1), and submissions through it (content digest, marker last, no-op resubmission)."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from harness.core.canonical import canonical_json
from harness.core.store import DirectoryStore, S3Store, StoreUnreachable, check_key, open_store
from harness.core.submissions import (SubmissionRefused, complete, fetch, listing_of, marker_key,
                                      read_manifest, submit)
from tests.warehouse.builders import simple_run


@pytest.fixture(params=["directory", pytest.param("s3", marks=pytest.mark.service)])
def store(request, tmp_path):
    if request.param == "directory":
        (tmp_path / "store").mkdir()
        return open_store(str(tmp_path / "store"))
    return open_store(request.getfixturevalue("s3_bucket"))


def test_open_store_reads_each_url_form(tmp_path):
    assert isinstance(open_store(f"file://{tmp_path}"), DirectoryStore)
    assert open_store(f"file://{tmp_path}").root == tmp_path
    assert isinstance(open_store(str(tmp_path)), DirectoryStore)
    s3 = open_store("s3://bucket/some/prefix/")
    assert isinstance(s3, S3Store) and (s3.bucket, s3.prefix) == ("bucket", "some/prefix")
    with pytest.raises(ValueError, match="s3://bucket/prefix"):
        open_store("https://example.invalid/x")
    with pytest.raises(ValueError, match="needs a bucket"):
        open_store("s3:///x")


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "./a", "a\\b"])
def test_a_key_that_could_leave_the_store_is_refused(key):
    with pytest.raises(ValueError, match="not a store key"):
        check_key(key)


def test_put_if_absent_writes_once_and_lists_sorted(store):
    assert store.put_if_absent("x/b", b"one") is True
    assert store.put_if_absent("x/b", b"two") is False
    assert store.get("x/b") == b"one"
    assert store.put_if_absent("x/a", b"") is True
    assert store.list("x/") == ["x/a", "x/b"]
    with pytest.raises(KeyError):
        store.get("x/c")
    store.delete("x/a")
    store.delete("x/a")  # absent: nothing to do
    assert store.list("x/") == ["x/b"]


def test_a_read_is_bounded(store):
    store.put_if_absent("big", b"0123456789")
    assert store.get("big", max_bytes=10) == b"0123456789"
    with pytest.raises(ValueError, match="larger than 9 bytes"):
        store.get("big", max_bytes=9)


def test_of_many_racing_writers_of_one_key_exactly_one_wins(store):
    wins, barrier = [], threading.Barrier(8)

    def race(i):
        barrier.wait()
        wins.append(store.put_if_absent("race", str(i).encode()))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]
    assert store.get("race") in {str(i).encode() for i in range(8)}


def test_the_digest_is_the_sha256_of_the_canonical_listing(tmp_path):
    run = simple_run(tmp_path / "run")
    listing, paths = listing_of(run)
    names = sorted(p.name for p in run.iterdir())
    assert sorted(paths) == names and ".harness-output.json" in names
    expected = hashlib.sha256(canonical_json({"kind": "results", "files": [
        [n, hashlib.sha256((run / n).read_bytes()).hexdigest()] for n in names]}
    ).encode()).hexdigest()
    assert listing.digest == expected


def test_a_submission_is_complete_readable_and_resubmitting_is_a_no_op(store, tmp_path):
    run = simple_run(tmp_path / "run")
    first = submit(run, store)
    assert first.created
    assert complete(store) == [first.digest]
    again = submit(run, store)
    assert (again.digest, again.created) == (first.digest, False)
    assert complete(store) == [first.digest]
    listing, out = fetch(store, first.digest, tmp_path / "back")
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in run.iterdir())
    for p in run.iterdir():
        assert (out / p.name).read_bytes() == p.read_bytes()


def test_a_submission_without_its_marker_is_invisible(store, tmp_path):
    run = simple_run(tmp_path / "run")
    digest = submit(run, store).digest
    store.delete(marker_key(digest))  # as if the upload died before the marker
    assert complete(store) == []
    assert submit(run, store).created  # a resubmission completes it
    assert complete(store) == [digest]


def test_a_file_changed_in_the_store_is_refused_when_read_back(store, tmp_path):
    run = simple_run(tmp_path / "run")
    listing, _ = listing_of(run)
    digest = listing.digest
    store.put_if_absent(f"submissions/{digest}/files/per_query.jsonl", b"{}\n")  # planted
    submit(run, store)
    with pytest.raises(SubmissionRefused, match="per_query.jsonl"):
        fetch(store, digest, tmp_path / "back")


def test_a_manifest_stored_under_another_digest_is_refused(store, tmp_path):
    run = simple_run(tmp_path / "run")
    digest = submit(run, store).digest
    other = "f" * 64
    store.put_if_absent(f"submissions/{other}/manifest.json",
                        store.get(f"submissions/{digest}/manifest.json"))
    with pytest.raises(SubmissionRefused, match="hashes to"):
        read_manifest(store, other)
    doc = json.loads(store.get(f"submissions/{digest}/manifest.json"))
    assert doc["digest"] == digest and doc["kind"] == "results"


def test_what_is_not_a_results_directory_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionRefused, match="no metrics.json"):
        listing_of(tmp_path / "empty")
    with pytest.raises(SubmissionRefused, match="no such"):
        listing_of(tmp_path / "missing")


@pytest.mark.service
def test_an_unreachable_s3_store_is_a_clear_error(s3_server, monkeypatch):
    from tests.servers.s3 import free_port

    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    store = open_store("s3://nobucket/x", endpoint_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(StoreUnreachable, match="s3://nobucket/x"):
        store.list("submissions/")


def test_a_missing_directory_store_is_a_clear_error(tmp_path):
    with pytest.raises(StoreUnreachable, match="no such directory"):
        open_store(str(tmp_path / "absent")).list("")


def test_complete_lists_markers_not_every_file_of_every_submission(store, tmp_path,
                                                                    monkeypatch):
    from harness.core import store as module

    run = simple_run(tmp_path / "run")
    files = len(list(run.iterdir()))
    digest = submit(run, store).digest
    # the store holds files + 2 keys for this submission; a limit below that but above the
    # number of submissions (1) must not stop complete()
    monkeypatch.setattr(module, "MAX_LISTED_KEYS", files - 1)
    assert complete(store) == [digest]


def test_a_directory_listing_walks_only_the_prefix_directory(tmp_path, monkeypatch):
    from harness.core import store as module

    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    store.put_if_absent("x/a", b"")
    store.put_if_absent("elsewhere/deep/b", b"")
    walked = []
    real = module.os.walk

    def spy(top, *args, **kwargs):
        for entry in real(top, *args, **kwargs):
            walked.append(entry[0])
            yield entry

    monkeypatch.setattr(module.os, "walk", spy)
    assert store.list("x/") == ["x/a"]
    assert walked == [str(tmp_path / "store" / "x")]
    assert store.list("nothing/") == []


def test_a_directory_store_follows_no_link(tmp_path):
    import os

    from harness.core.store import LinkRefused

    (tmp_path / "store").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_bytes(b"not the store's")
    store = open_store(str(tmp_path / "store"))
    store.put_if_absent("x/a", b"inside")
    os.symlink(tmp_path / "outside" / "secret", tmp_path / "store" / "x" / "secret")
    os.symlink(tmp_path / "store" / "x" / "a", tmp_path / "store" / "x" / "alias")
    os.symlink(tmp_path / "outside", tmp_path / "store" / "linked")
    for key in ("x/secret", "x/alias", "linked/secret"):
        with pytest.raises(LinkRefused, match=key):
            store.get(key)
    with pytest.raises(LinkRefused, match="outside the store"):
        store.put_if_absent("linked/new", b"planted")
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret"]


def test_a_submission_file_that_is_a_link_is_refused(tmp_path):
    import os

    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    run = simple_run(tmp_path / "run")
    digest = submit(run, store).digest
    stored = tmp_path / "store" / "submissions" / digest / "files" / "metrics.json"
    stored.unlink()
    os.symlink(run / "metrics.json", stored)  # the same bytes, through a link
    with pytest.raises(SubmissionRefused, match="metrics.json"):
        fetch(store, digest, tmp_path / "back")


def test_an_s3_read_has_a_total_deadline(monkeypatch):
    import time

    from tests.harness.retrieval.hostile import HostileServer, drip

    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    # 200 bytes, one every 0.05 s: 10 s in all, each byte well within any per-read timeout
    with HostileServer(drip(0.05, total=200)) as server:
        store = S3Store("bucket", endpoint_url=server.url, deadline=1.0)
        started = time.monotonic()
        with pytest.raises(StoreUnreachable, match="within 1 s"):
            store.get("slow")
        assert time.monotonic() - started < 1.0 + 2.0  # cut at the deadline, not at 10 s


def test_fetch_streams_each_file_to_disk_in_pieces(tmp_path, monkeypatch):
    from harness.core import store as module

    class NoWholeReads(DirectoryStore):
        def get(self, key, max_bytes=module.MAX_OBJECT_BYTES):
            assert "/files/" not in key, f"{key} read whole into memory"
            return super().get(key, max_bytes)

    (tmp_path / "store").mkdir()
    store = NoWholeReads(tmp_path / "store")
    run = simple_run(tmp_path / "run")
    digest = submit(run, store).digest
    pieces = []
    real = DirectoryStore.chunks

    def counted(self, key, max_bytes=module.MAX_OBJECT_BYTES):
        for piece in real(self, key, max_bytes):
            if "/files/" in key:
                pieces.append(len(piece))
            yield piece

    monkeypatch.setattr(module, "CHUNK_BYTES", 7)
    monkeypatch.setattr(DirectoryStore, "chunks", counted)
    _, out = fetch(store, digest, tmp_path / "back")
    for p in run.iterdir():
        assert (out / p.name).read_bytes() == p.read_bytes()
    assert max(pieces) == 7 and sum(pieces) == sum(p.stat().st_size for p in run.iterdir())
