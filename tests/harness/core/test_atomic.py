"""harness.core.atomic: files and directories replaced whole, or not at all."""

from __future__ import annotations

import os

import pytest

from harness.core.atomic import replace_directory, temporary, write_files


def tree(folder) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones too) and its text."""
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def fill(files: dict[str, str]):
    def build(staging):
        for name, text in files.items():
            (staging / name).write_text(text)
    return build


def test_a_directory_is_built_beside_its_destination_and_swapped_in(tmp_path):
    out = tmp_path / "out"
    seen = []

    def build(staging):
        seen.append(staging)
        assert staging.parent == tmp_path and staging.name.startswith(".out.staging-")
        assert list(staging.iterdir()) == []
        fill({"a.txt": "new"})(staging)

    (out / "old").mkdir(parents=True)
    (out / "old" / "b.txt").write_text("old")
    assert replace_directory(out, build) == out
    assert tree(tmp_path) == {"out/a.txt": "new"}  # the old directory gone, nothing beside it


def test_a_failed_build_or_refused_swap_leaves_the_previous_directory(tmp_path):
    out = tmp_path / "out"
    replace_directory(out, fill({"a.txt": "first"}))

    def broken(staging):
        (staging / "half.txt").write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_directory(out, broken)
    assert tree(tmp_path) == {"out/a.txt": "first"}

    def refuse(now):
        assert now == out
        raise ValueError("changed meanwhile")

    with pytest.raises(ValueError, match="changed meanwhile"):
        replace_directory(out, fill({"a.txt": "second"}), before_swap=refuse)
    assert tree(tmp_path) == {"out/a.txt": "first"}


def test_temporary_names_are_fresh_so_a_sibling_is_never_taken(tmp_path):
    """The synthetic generator's and the unpacker's temporary name was ``.NAME.tmp-PID``:
    a directory already there under that name was deleted.  Names now hold a random part."""
    out = tmp_path / "out"
    names = {temporary(out, "staging").name for _ in range(50)}
    assert len(names) == 50
    assert all(n.startswith(f".out.staging-{os.getpid()}-") for n in names)
    sibling = tmp_path / f".out.tmp-{os.getpid()}"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine")
    replace_directory(out, fill({"a.txt": "x"}))
    assert (sibling / "keep.txt").read_text() == "mine"


def test_write_files_writes_text_and_bytes_as_given(tmp_path):
    text, data = tmp_path / "sub" / "a.txt", tmp_path / "b.bin"
    write_files([(text, "é\r\nx\n"), (data, b"\x00\xff")])
    assert text.read_bytes() == "é\r\nx\n".encode() and data.read_bytes() == b"\x00\xff"
    with pytest.raises(TypeError):
        write_files([(text, "replaced"), (data, 3)])
    assert text.read_bytes() == "é\r\nx\n".encode()  # nothing renamed: the old files stay
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "b.bin", "sub"]
