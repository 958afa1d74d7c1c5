"""Remembered source digests: served only for files nobody changed since they were hashed."""

from __future__ import annotations

import hashlib
import json
import os

from harness.retrieval.prepared import file_digests
from harness.retrieval.prepared.file_digests import FileDigests
from harness.retrieval.prepared.prepared_cache import tree_digest


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _remembered(memory) -> dict:
    return json.loads(memory.read_text(encoding="utf-8"))["files"]


def test_a_digest_is_remembered_and_served_without_reading(tmp_path, monkeypatch):
    memory, path = tmp_path / "digests.json", tmp_path / "a.json"
    path.write_bytes(b"aaaa")
    digests = FileDigests(memory, settle_ns=0)
    assert digests.sha256(str(path)) == _sha(b"aaaa")
    digests.save()
    assert _remembered(memory)[str(path)][5] == _sha(b"aaaa")

    def no_read(_path):
        raise AssertionError("a remembered file was read again")

    monkeypatch.setattr(file_digests, "_read_sha256", no_read)
    assert FileDigests(memory, settle_ns=0).sha256(str(path)) == _sha(b"aaaa")


def test_a_change_that_keeps_size_and_modification_time_is_read_again(tmp_path):
    memory, path = tmp_path / "digests.json", tmp_path / "a.json"
    path.write_bytes(b"aaaa")
    before = os.stat(path)
    digests = FileDigests(memory, settle_ns=0)
    digests.sha256(str(path))
    digests.save()
    path.write_bytes(b"bbbb")  # same size ...
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # ... and mtime set back
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert FileDigests(memory, settle_ns=0).sha256(str(path)) == _sha(b"bbbb")


def test_a_file_hashed_right_after_it_changed_is_not_remembered(tmp_path):
    memory, path = tmp_path / "digests.json", tmp_path / "a.json"
    path.write_bytes(b"aaaa")
    digests = FileDigests(memory)  # the default settling time: the file changed just now
    assert digests.sha256(str(path)) == _sha(b"aaaa")
    digests.save()
    assert not memory.exists()


def test_a_damaged_memory_is_an_empty_one(tmp_path):
    memory, path = tmp_path / "digests.json", tmp_path / "a.json"
    path.write_bytes(b"aaaa")
    for damaged in ("{", '{"format": 1, "files": {"x": 3}}', '[1, 2]',
                    json.dumps({"format": 1, "files": {str(path): [0, 0, 4, 0, 0, "f" * 64]}})):
        memory.write_text(damaged, encoding="utf-8")
        assert FileDigests(memory, settle_ns=0).sha256(str(path)) == _sha(b"aaaa")


def test_the_tree_digest_is_the_same_with_a_memory(tmp_path):
    root = tmp_path / "corpus"
    (root / "data" / "val").mkdir(parents=True)
    (root / "LICENSE").write_text("MIT\n", encoding="utf-8")
    for i in range(5):
        (root / "data" / "val" / f"m{i}.json").write_text(json.dumps({"i": i}), encoding="utf-8")
    memory = tmp_path / "digests.json"
    plain = tree_digest(root)
    first = FileDigests(memory, settle_ns=0)
    assert tree_digest(root, first) == plain
    first.save()
    assert len(_remembered(memory)) == 6
    assert tree_digest(root, FileDigests(memory, settle_ns=0)) == plain
    (root / "data" / "val" / "m3.json").write_text(json.dumps({"i": 9}), encoding="utf-8")
    assert tree_digest(root, FileDigests(memory, settle_ns=0)) == tree_digest(root) != plain
