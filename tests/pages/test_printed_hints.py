"""Every shell command a dashboard page prints works as printed (issue 37, item 8).

The pages' commands live in one registry, :mod:`dashboard.hints`; a source scan keeps any
other command text out of the pages.  Each hint runs here line by line through ``bash``, its
placeholders filled with real paths made by the test the way ``harness demo`` makes its
results (a synthetic corpus, BM25 arms, a second corpus for agreement), in a working
directory of its own whose ``$HARNESS_WAREHOUSE`` the test then reads: the exit status of
every line is 0 and the warehouse holds what the page was waiting for.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard import hints
from tests.ingestion.helpers import write_beir

REPO = Path(__file__).resolve().parents[2]

#: words of a printed command that name a command of this product
COMMAND_TEXT = re.compile(r"-m (harness|warehouse|ingestion|streamlit)\b|python -m ")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def command_strings(path: Path, skip_names=()) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal in ``path`` (not a docstring, not assigned to
    a name in ``skip_names``) holding a command of this product."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in skip_names for t in node.targets):
            skipped.update(id(n) for n in ast.walk(node.value))
    docs = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs and id(node) not in skipped
            and COMMAND_TEXT.search(node.value)]


def test_the_pages_print_commands_only_from_the_registry():
    found = []
    for path in sorted([*(REPO / "pages").glob("*.py"), *(REPO / "dashboard").glob("*.py")]):
        if path.name == "hints.py":
            continue
        # dashboard/common.py's FILL_COMMANDS: test_the_fill_commands_run below
        skip = ("FILL_COMMANDS",) if path.name == "common.py" else ()
        found += [f"{path.relative_to(REPO)}:{line}: {text!r}"
                  for line, text in command_strings(path, skip)]
    assert found == [], "commands printed outside dashboard/hints.py:\n" + "\n".join(found)


def test_the_scan_finds_a_command_outside_the_registry(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('"""python -m harness in a docstring is fine."""\n'
                    'import streamlit as st\n'
                    'st.caption("run `python -m harness compare --control DIR`")\n')
    assert [line for line, _ in command_strings(page)] == [3]


# --------------------------------------------------------------------------- demo data


def _run(argv, cwd, env):
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    """Corpora and results directories (never ingested): ``control`` and ``arm`` on the
    synthetic corpus (tier A); ``two-control`` and ``two-arm`` on it and a small BEIR
    corpus (agreement needs two corpora)."""
    root = tmp_path_factory.mktemp("demo data")
    env = {**os.environ, "HARNESS_WAREHOUSE": str(root / "unused.duckdb")}
    python = [sys.executable, "-m"]
    _run([*python, "ingestion", "synth", "--seed", "7", "--meetings", "8", "--out",
          str(root / "syn")], root, env)
    write_beir(root / "mini")
    arms = {"control": ("200", False), "arm": ("80", False),
            "two-control": ("200", True), "two-arm": ("80", True)}
    for name, (words, two) in arms.items():
        corpora = ["--corpus", f"synthetic:{root / 'syn'}"]
        if two:
            corpora += ["--corpus", f"beir:{root / 'mini'}"]
        _run([*python, "harness", "bench", *corpora, "--mode", "bm25", "--max-words", words,
              "--out", str(root / "results" / name), "--no-warehouse", "--cache-dir",
              str(root / "cache")], root, env)
    return root


@pytest.fixture
def workdir(demo_data, tmp_path, monkeypatch):
    """A working directory holding copies of the demo results, its own warehouse."""
    shutil.copytree(demo_data / "results", tmp_path / "results")
    db = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(db))
    return tmp_path, db


#: the placeholders a hint may hold (dashboard.hints' docstring)
PLACEHOLDERS = re.compile(r"\b(ARM_DIR|CONTROL_DIR|RESULTS_DIR|KIND|PATH)\b|\.\.\.")


def fill(line: str, values: dict[str, list[str]]) -> str:
    """``line`` with its placeholders replaced by the paths in ``values`` (shell-quoted; a
    ``NAME ...`` group by several), the longest placeholder first; none may be left."""
    for name in sorted(values, key=len, reverse=True):
        line = line.replace(name, " ".join(shlex.quote(v) for v in values[name]))
    left = PLACEHOLDERS.findall(line.split("#", 1)[0])
    assert not left, f"placeholders left unfilled in {line!r}: {left}"
    return line


def run_hint(hint, cwd: Path, values: dict[str, str]) -> list[str]:
    outputs = []
    for line in hint:
        command = fill(line, values)
        done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                              timeout=600, env=dict(os.environ))
        assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-3000:]}"
        outputs.append(done.stdout)
    return outputs


def _ingest(*dirs: Path) -> None:
    import warehouse

    for d in dirs:
        warehouse.ingest_results(d)


def _values(root: Path, demo_data: Path) -> dict[str, list[str]]:
    r = root / "results"
    return {"ARM_DIR ...": [str(r / "arm")], "CONTROL_DIR": [str(r / "control")],
            "RESULTS_DIR ...": [str(r / "two-control"), str(r / "two-arm")],
            "RESULTS_DIR": [str(r / "control")],
            "KIND:PATH": [f"synthetic:{demo_data / 'syn'}"],
            "synthetic:PATH": [f"synthetic:{demo_data / 'syn'}"]}


# --------------------------------------------------------------------------- every hint

def _comparisons(root, db, demo_data):
    from warehouse import queries

    _ingest(root / "results" / "control", root / "results" / "arm")  # as a bench run does
    assert queries.latest_comparisons("publishable", 500, db_path=db).empty  # the empty state
    run_hint(hints.COMPARISONS, root, _values(root, demo_data))
    tests = queries.latest_comparisons("publishable", 500, db_path=db)
    assert set(tests["arm_name"]) == {"arm"} and set(tests["control_name"]) == {"control"}


def _intervals(root, db, demo_data):
    from warehouse import queries

    values = {**_values(root, demo_data), "RESULTS_DIR ...": [str(root / "results" / "control")]}
    _ingest(root / "results" / "control")
    assert queries.metric_intervals("publishable", db_path=db)["lower"].isna().all()
    run_hint(hints.INTERVALS, root, values)
    assert queries.metric_intervals("publishable", db_path=db)["lower"].notna().any()


def _agreement(root, db, demo_data):
    from warehouse import queries

    run_hint(hints.AGREEMENT, root, _values(root, demo_data))
    assert len(queries.agreement_documents("internal", db_path=db)) == 1


def _calibrate(root, db, demo_data):
    from warehouse import queries

    _ingest(root / "results" / "control")
    run_hint(hints.CALIBRATE, root, _values(root, demo_data))
    assert len(queries.certificates("publishable", db_path=db)) == 1


def _migration(root, db, demo_data):
    from warehouse import queries

    # the command's defaults hold 500 proxy queries out: a corpus of the demo's migration
    # size (16 meetings) has enough chunks for them
    corpus = root / "syn16"
    _run([sys.executable, "-m", "ingestion", "synth", "--seed", "7", "--meetings", "16",
          "--out", str(corpus)], root, dict(os.environ))
    run_hint(hints.MIGRATION, root, {**_values(root, demo_data),
                                     "KIND:PATH": [f"synthetic:{corpus}"]})
    assert len(queries.migration_decisions("publishable", db_path=db)) > 0


def _answers(root, db, demo_data):
    from warehouse import queries

    run_hint(hints.ANSWERS, root, _values(root, demo_data))
    assert sorted(queries.answer_runs("publishable", db_path=db)["answerer"]) == \
        ["none", "reference"]


def _export_latex(root, db, demo_data):
    _ingest(root / "results" / "control", root / "results" / "arm")
    run_hint(hints.EXPORT_LATEX, root, _values(root, demo_data))
    table = (root / "table.tex").read_text(encoding="utf-8")
    assert "\\usepackage{booktabs,siunitx}" in table and "\\begin{table}" in table
    assert "control" in table and "arm" in table


def _migrate(root, db, demo_data):
    """A file the pages cannot read for its schema (SchemaOutOfDate): the page names it."""
    import duckdb

    from warehouse.db import connect
    from warehouse.errors import SchemaOutOfDate

    target = root / "old warehouse.duckdb"  # not $HARNESS_WAREHOUSE: --db must name it
    duckdb.connect(str(target)).close()
    with pytest.raises(SchemaOutOfDate):
        with connect(target, read_only=True, check_schema=True):
            pass
    run_hint(hints.filled(hints.MIGRATE, WAREHOUSE=str(target)), root, {})
    with connect(target, read_only=True, check_schema=True):
        pass
    assert not db.exists()


def _judge_task(root, db, demo_data):
    """A task from the control run's top 10, on the corpus it ran on, listed by the page."""
    from warehouse import queries

    run_hint(hints.JUDGE_TASK, root, _values(root, demo_data))
    (task,) = queries.judging_tasks("publishable", db_path=db).itertuples(index=False)
    assert task.corpus == "synthetic" and task.tier == "A" and task.depth == 10
    pairs = queries.task_pairs(task.task_id, "publishable", db_path=db)
    assert len(pairs) > 0 and queries.task_text(task.task_id, "document", pairs.doc_id[0],
                                                 "publishable", db_path=db)


def _judge_ingest(root, db, demo_data):
    """The single-user page's inbox (a labels batch as the page writes it), applied."""
    from tests.pages.judge_fixture import PUBLIC, write_task
    from dashboard import judging
    from harness.claims.labels import Label, now
    from warehouse import queries
    from warehouse.judging import ingest_task

    task_id = write_task(root / "task", PUBLIC, "public pool")
    ingest_task(root / "task", db)
    inbox = root / "labels inbox"
    judging.write_to_inbox(inbox, task_id, Label("q1", "d1", "ana", now(), 2))
    run_hint(hints.filled(hints.JUDGE_INGEST, INBOX=str(inbox)), root, {})
    held = queries.task_judgments(task_id, "internal", db_path=db)
    assert list(zip(held.rater, held.label)) == [("ana", 2)]


#: hint -> what the test checks once it ran (every hint in the registry has one)
OUTCOMES = {"COMPARISONS": _comparisons, "INTERVALS": _intervals, "AGREEMENT": _agreement,
            "CALIBRATE": _calibrate, "MIGRATION": _migration, "ANSWERS": _answers,
            "EXPORT_LATEX": _export_latex, "MIGRATE": _migrate, "JUDGE_TASK": _judge_task,
            "JUDGE_INGEST": _judge_ingest}
#: the migration embeds the corpus with MiniLM and its static distillation
MODEL_HINTS = {"MIGRATION"}


def test_every_hint_has_a_test():
    assert set(OUTCOMES) == set(hints.HINTS)
    for hint in hints.HINTS.values():
        assert all(line.startswith(f"{hints.PYTHON} -m ") for line in hint)


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.model, pytest.mark.slow])
                                  if n in MODEL_HINTS else n for n in OUTCOMES])
def test_every_printed_hint_runs_as_printed(name, workdir, demo_data):
    root, db = workdir
    OUTCOMES[name](root, db, demo_data)


def test_the_fill_commands_run(workdir):
    """dashboard.common.FILL_COMMANDS, shown when the warehouse is missing or empty."""
    from dashboard.common import FILL_COMMANDS
    from warehouse import queries

    root, db = workdir
    lines = FILL_COMMANDS.splitlines()
    assert [line.split("#")[0].split() for line in lines] == [
        ["make", "demo"], [hints.PYTHON, "-m", "harness", "demo", "--no-serve"],
        [hints.PYTHON, "-m", "warehouse", "ingest", "RESULTS_DIR", "..."]]
    # `make demo` names a target of the Makefile (a dry run: the demo itself, with and
    # without --no-serve, runs in tests/pages/test_demo.py, which takes minutes)
    done = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "-m harness demo" in done.stdout, done.stderr
    from harness.cli import COMMANDS, build_parser, _available

    assert "demo" in COMMANDS
    assert build_parser(_available("demo")).parse_args(["demo", "--no-serve"]).no_serve
    results = root / "results"
    run_hint([lines[2]], root, {"RESULTS_DIR ...": [str(results / "control"), str(results / "arm")]})
    assert sorted(queries.runs(db_path=db)["control_name"]) == ["arm", "control"]


def test_the_overview_s_empty_state_prints_the_registry_s_command(workdir, app):
    """The Overview with runs but no paired test shows COMPARISONS (which runs above)."""
    root, db = workdir
    _ingest(root / "results" / "control", root / "results" / "arm")
    at = app(db)
    at.run()
    assert not at.exception
    assert hints.block(hints.COMPARISONS) in [c.value for c in at.code]
    assert not any("harness compare" in c.value for c in at.code)
