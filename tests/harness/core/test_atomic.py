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


def test_tidy_dead_removes_only_what_a_dead_writer_left(tmp_path):
    import subprocess
    import sys

    from harness.core.atomic import tidy_dead

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: its pid is gone
    dead, me, parent = child.pid, os.getpid(), os.getppid()
    (tmp_path / f".pfx-{dead}-dir").mkdir()
    (tmp_path / f".pfx-{dead}-dir" / "inside").write_text("x")
    (tmp_path / f".pfx-{dead}-file").write_text("x")
    (tmp_path / ".pfx-nopid").write_text("x")
    (tmp_path / f".pfx-{me}-mine").mkdir()        # this process is writing it
    (tmp_path / f".pfx-{parent}-theirs").write_text("x")  # a live writer
    (tmp_path / f"other-{dead}").write_text("x")  # not the prefix
    removed = tidy_dead(tmp_path, ".pfx-")
    assert sorted(p.name for p in removed) == sorted(
        [f".pfx-{dead}-dir", f".pfx-{dead}-file", ".pfx-nopid"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f".pfx-{me}-mine", f".pfx-{parent}-theirs", f"other-{dead}"])
