"""The columnar entry format: every column reads back equal and of the same type, and any
damage (a flipped byte, a cut, a foreign key, a bad header) is refused, never misread; a
damaged prepared or index entry in a real cache is rebuilt (a miss) and the claim files
stay the bytes of an uncached run."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harness.retrieval.prepared import columns_format
from harness.retrieval.prepared.chunk_table import ChunkTable, structural_order
from harness.core.records import Chunk

from tests.harness.retrieval.tiny import write_qmsum
from tests.harness.retrieval.cache.helpers import claims, outcomes, run_one_arm

KEY = {"entry": "prepared", "format": 2, "revision": "r"}


def _random_columns(seed: int) -> dict[str, list]:
    rng = random.Random(seed)
    n = rng.randrange(0, 60)
    alphabet = "ab é€😀\n\t\"\\\x00"
    return {
        "text": ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
                 for _ in range(n)],
        "few": [rng.choice(["x", "y", None, "ü"]) for _ in range(n)],
        "ints": [rng.randrange(-2 ** 63, 2 ** 63) for _ in range(n)],
        "floats": [rng.choice([None, 0.0, -0.0, 1e-300, 1.5, math.inf, rng.random()])
                   for _ in range(n)],
        "mixed": [rng.choice([1, 1.0, None, "s", [1, 2.5], True]) for _ in range(n)],
        "big": [2 ** 70 + i for i in range(n)],
        "surrogate": ["a\ud800b"] * n,
    }


def _same(a, b) -> bool:
    """Equal, and of the same type all the way down (1 is not 1.0; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@pytest.mark.parametrize("seed", range(8))
def test_every_column_reads_back_equal_and_of_the_same_type(seed):
    cols = _random_columns(seed)
    back = columns_format.decode(columns_format.encode(KEY, cols), KEY)
    for name, values in cols.items():
        assert _same(back[name], values), name


def test_each_column_takes_the_cheap_encoding_it_fits():
    import json

    cols = {"t": ["ab", "cd", "ef"] * 30 + [str(i) for i in range(100)], "d": ["f1"] * 50,
            "i": [1, 2, 3], "f": [1.0, None], "j": [(1, 2), (3,)]}
    data = columns_format.encode(KEY, cols)
    header = json.loads(data[:data.index(b"\n")])
    kinds = {c["name"]: c["kind"] for c in header["columns"]}
    assert kinds == {"t": "text", "d": "dict", "i": "i8", "f": "f8", "j": "json"}
    back = columns_format.decode(data, KEY)
    assert back["j"] == [[1, 2], [3]]  # JSON gives lists; the chunk table makes tuples


def test_damage_is_refused():
    data = columns_format.encode(KEY, _random_columns(3) | {"n": list(range(1000))})
    body_at = data.index(b"\n") + 1
    for at in (body_at, body_at + 5, len(data) - 1):  # a flipped byte in the blocks
        damaged = bytearray(data)
        damaged[at] ^= 0x20
        with pytest.raises(ValueError, match="sha256"):
            columns_format.decode(bytes(damaged), KEY)
    with pytest.raises(ValueError):  # cut short
        columns_format.decode(data[:-10], KEY)
    with pytest.raises(ValueError):  # cut inside the header
        columns_format.decode(data[:body_at // 2], KEY)
    with pytest.raises(ValueError, match="key"):  # another key's entry under this name
        columns_format.decode(data, {**KEY, "revision": "s"})
    with pytest.raises(ValueError):
        columns_format.decode(b"not a header\n" + data[body_at:], KEY)


def test_a_consistent_header_over_inconsistent_blocks_is_refused():
    """Blocks rewritten with a matching digest but lengths that do not add up."""
    import hashlib
    import json

    data = columns_format.encode(KEY, {"t": [f"w{i}" for i in range(100)]})
    header = json.loads(data[:data.index(b"\n")])
    body = bytearray(data[data.index(b"\n") + 1:])
    (col,) = header["columns"]
    lengths_at = col["blocks"][1][0]
    body[lengths_at:lengths_at + 8] = np.asarray([3], dtype="<i8").tobytes()  # "w0" has 2
    header["sha256"] = hashlib.sha256(bytes(body)).hexdigest()
    forged = json.dumps(header).encode() + b"\n" + bytes(body)
    with pytest.raises(ValueError, match="lengths"):
        columns_format.decode(forged, KEY)


def test_a_chunk_table_gives_the_chunks_it_was_made_from():
    chunks = tuple(Chunk(f"m{f}_{i}", f"m{f}", i, "chunk", "A" if i % 2 else None,
                         float(i), None if i == 3 else i + 0.5, f"text {f} {i}", (i, i + 1),
                         (0.5, 1.0), None) for f in (10, 9, 2) for i in (11, 3, 0))
    table = ChunkTable.from_chunks(chunks, with_order=True)
    assert table == chunks and tuple(table) == chunks and table[4] == chunks[4]
    # structural order: files by id as strings ('m10' < 'm2' < 'm9'), chunk index as integers
    assert [chunks[i].doc_id for i in table.order] == [
        "m10_0", "m10_3", "m10_11", "m2_0", "m2_3", "m2_11", "m9_0", "m9_3", "m9_11"]
    assert structural_order(["b_1", "a_10", "a_9"]) == [2, 1, 0]
    with pytest.raises(ValueError, match="permutation"):
        ChunkTable({name: table.column(name) for name in table._columns}, len(chunks),
                   order=[0] * len(chunks))


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_PREPARED_CACHE", raising=False)
    root = write_qmsum(tmp_path / "corpora" / "qmsum")
    return f"qmsum:{root}"


def _flip_middle(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_damaged_prepared_entry_is_a_miss_and_changes_no_byte(corpus, tmp_path):
    cache = tmp_path / "cache"
    run_one_arm(corpus, tmp_path / "uncached", cache, prepared_cache=False)
    run_one_arm(corpus, tmp_path / "first", cache)
    (entry,) = [p for p in (cache / "prepared" / "corpora").iterdir() if p.is_file()]
    _flip_middle(entry)
    run_one_arm(corpus, tmp_path / "second", cache)
    assert outcomes(tmp_path / "second") == ("hit", "miss", "hit")
    run_one_arm(corpus, tmp_path / "third", cache)
    assert outcomes(tmp_path / "third") == ("hit", "hit", "hit")
    for run in ("first", "second", "third"):
        assert claims(tmp_path / run) == claims(tmp_path / "uncached")


@pytest.mark.parametrize("part", ["indices.csc.index.npy", "data.csc.index.npy", "vocab.json"])
def test_a_damaged_index_entry_is_a_miss_and_changes_no_byte(part, corpus, tmp_path):
    cache = tmp_path / "cache"
    run_one_arm(corpus, tmp_path / "uncached", cache, prepared_cache=False)
    run_one_arm(corpus, tmp_path / "first", cache)
    (entry,) = [p for p in (cache / "prepared" / "bm25").iterdir()
                if p.is_dir() and not p.name.startswith(".")]
    if part == "vocab.json":
        (entry / part).write_text('{"a": 0, "b": 0}', encoding="utf-8")  # two tokens, one id
    elif part == "indices.csc.index.npy":
        indices = np.load(entry / part)
        indices[0] = 10 ** 6  # a document the index does not hold
        np.save(entry / part, indices)
    else:
        (entry / part).write_bytes((entry / part).read_bytes()[:60])
    run_one_arm(corpus, tmp_path / "second", cache)
    assert outcomes(tmp_path / "second") == ("hit", "hit", "miss")
    assert claims(tmp_path / "second") == claims(tmp_path / "uncached")


def test_the_source_tree_digest_is_the_ingestion_tree_digest(tmp_path):
    import os

    from harness.retrieval.prepared.prepared_cache import tree_digest
    from ingestion.digest import tree_sha256

    root = tmp_path / "corpus"
    (root / "data" / "b").mkdir(parents=True)
    (root / "data" / "a-b").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / ".hidden").write_text("x")
    (root / "data" / ".cache").write_text("y")
    (root / "data" / "b" / "m1.json").write_text('{"é": 1}', encoding="utf-8")
    (root / "data" / "a-b" / "m2.json").write_bytes(b"\x00\xff")
    (root / "data" / "b.json").write_text("{}")
    (root / "top.txt").write_text("t")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.json").write_text("far")
    os.symlink(outside / "far.json", root / "data" / "linked.json")  # a link to a file
    os.symlink(outside, root / "data" / "linked-dir")  # a link to a folder: not followed
    os.symlink(tmp_path / "missing", root / "data" / "broken.json")
    assert tree_digest(root) == tree_sha256(root)[0]
    (root / "data" / "b" / "m1.json").write_text('{"é": 2}', encoding="utf-8")
    assert tree_digest(root) == tree_sha256(root)[0]
