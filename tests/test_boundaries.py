"""The design's boundaries that import contracts cannot state, enforced on the source (AST
scans) and on a fresh interpreter.

* the dashboard holds no SQL text (it calls named functions in ``warehouse.queries``);
* ``harness/`` imports from the ``warehouse`` package only the names ``ingest_results`` /
  ``ingest_document`` (the contracts forbid its modules), and the Python API's read-only
  store (``harness/api/store.py``) only the named queries of ``warehouse.queries``;
* importing any module of harness, ingestion and warehouse loads no torch,
  sentence-transformers, transformers or streamlit and opens no duckdb connection;
* ``import harness`` (the Python API) loads none of them nor duckdb, and neither does
  scoring a run through it;
* no product module grows past ``MODULE_LINES`` lines (past that, it is split by idea).

Product code is ``app.py``, ``pages/``, ``dashboard/``, ``harness/``, ``ingestion/`` and
``warehouse/``; tests and benchmarks may import what they measure against.  The layers, and
which packages may import streamlit, duckdb and the model libraries, are import contracts
in ``pyproject.toml`` (``tests/test_import_contracts.py`` runs them).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "ingestion", "warehouse")
WAREHOUSE_ENTRY_POINTS = {"ingest_results", "ingest_document", "ingest_judging"}
#: the one harness module that reads the warehouse (read-only named queries, for the API)
WAREHOUSE_READER = "harness/api/store.py"
#: the Python API renders its tables with the warehouse's one renderer (same bytes as the
#: CLI's and the dashboard's exports): the module that does, and what it imports
TABLE_RENDERER = ("harness/api/latex.py", {"warehouse.exports": {"assemble"},
                                                "warehouse.render": {"render_latex"}})
#: the most lines a product module may hold before it is split by idea
MODULE_LINES = 650
HEAVY = ("torch", "sentence_transformers", "transformers", "streamlit")

#: SQL as it would be written in a query string (upper-case keywords, or a lower-case
#: statement whose select list is identifiers): prose such as "Select a corpus from the
#: list" does not match
SQL_PATTERNS = [
    re.compile(r"\bSELECT\b[\s\S]*?\bFROM\b"),
    re.compile(r"\bINSERT\s+INTO\b|\bDELETE\s+FROM\b", re.IGNORECASE),
    re.compile(r"\bUPDATE\s+\w+\s+SET\b"),
    re.compile(r"\b(CREATE|DROP|ALTER)\s+(TABLE|VIEW|INDEX|SCHEMA)\b", re.IGNORECASE),
    re.compile(r"\bselect\s+(\*|\w+(\.\w+)?(\s*,\s*\w+(\.\w+)?)*)\s+from\s+\w+", re.IGNORECASE),
]


def imports(tree: ast.AST) -> list[tuple[str, tuple[str, ...], int]]:
    """``(module, imported names, line)`` for every import, including
    ``importlib.import_module("x")`` and ``__import__("x")`` with a literal name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, tuple(a.name for a in node.names), node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.args[0].value, (), node.lineno))
    return found


def parsed() -> dict[str, ast.AST]:
    """Relative path -> syntax tree, parsed once per session (:func:`tests.source_scan.parsed`)."""
    from tests.source_scan import parsed as scan

    return {path: tree for path, (_, tree, _) in scan(REPO).items()}


def top(module: str) -> str:
    return module.split(".")[0]


def test_the_scan_sees_the_product():
    names = set(parsed())
    assert "harness/evaluation/scoring.py" in names and "harness/cli/score.py" in names


def test_no_product_module_outgrows_one_idea():
    from tests.source_scan import product_files

    long = {p.relative_to(REPO).as_posix(): n for p in product_files(REPO)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert not long, f"split by idea: {long}"


def test_harness_reaches_the_warehouse_only_through_its_ingest_entry_points():
    bad = []
    for path, tree in parsed().items():
        if not path.startswith("harness/"):
            continue
        for module, names, line in imports(tree):
            if top(module) != "warehouse":
                continue
            if path == WAREHOUSE_READER and module == "warehouse" and set(names) == {"queries"}:
                continue
            if path == TABLE_RENDERER[0] and set(names) <= TABLE_RENDERER[1].get(module, set()):
                continue
            if module != "warehouse" or not names or not set(names) <= WAREHOUSE_ENTRY_POINTS:
                bad.append(f"{path}:{line}: {module} {list(names)}")
    assert bad == [], f"harness imports warehouse internals: {bad}"


def sql_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals (f-strings with each placeholder read as ``x``) that look like SQL."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
        else:
            continue
        if any(p.search(text) for p in SQL_PATTERNS):
            found.add((node.lineno, text[:60]))
    return sorted(found)


def test_pages_hold_no_sql_text():
    bad = [f"{path}:{line}: {text!r}" for path, tree in parsed().items()
           if path.startswith(("pages/", "dashboard/")) or path == "app.py"
           for line, text in sql_strings(tree)]
    assert bad == [], f"SQL text in the dashboard: {bad}"


def test_the_sql_detector_itself():
    hits = sql_strings(ast.parse('a = "SELECT run_id FROM runs"\nb = f"select * from {t}"\n'
                                 'c = "insert into x values (1)"\nd = "create table t (x int)"'))
    assert sorted({line for line, _ in hits}) == [1, 2, 3, 4]
    assert sql_strings(ast.parse('a = "Select a corpus from the list"\nb = "Pick from runs"')) == []
    assert sql_strings(ast.parse('a = "select run_id, tier from runs"')) != []


def test_the_import_scan_itself():
    tree = ast.parse("import duckdb\nfrom warehouse.db import x\nimport importlib\n"
                     "importlib.import_module('streamlit')\n")
    assert [(m, line) for m, _, line in imports(tree)] == [
        ("duckdb", 1), ("warehouse.db", 2), ("importlib", 3), ("streamlit", 4)]


def module_names() -> list[str]:
    names = []
    for package in PACKAGES:
        root = REPO / package
        if not (root / "__init__.py").is_file():
            continue
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts or path.name == "__main__.py":
                continue
            parts = path.relative_to(REPO).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


PROBE = r"""
import gc, importlib, json, sys
names = json.loads(sys.argv[1])
heavy = json.loads(sys.argv[2])
failed, loaded = {}, {}
for name in names:
    before = {h for h in heavy if h in sys.modules}
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
        continue
    for h in heavy:
        if h in sys.modules and h not in before:
            loaded.setdefault(h, name)
connections = 0
if "duckdb" in sys.modules:
    kind = getattr(sys.modules["duckdb"], "DuckDBPyConnection", None)
    if kind is not None:
        connections = sum(1 for o in gc.get_objects() if isinstance(o, kind))
print(json.dumps({"failed": failed, "loaded": loaded, "connections": connections}))
"""


def test_importing_every_module_is_free_of_heavy_side_effects():
    names = module_names()
    assert "harness.evaluation.scoring" in names and "harness.cli.score" in names
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(names), json.dumps(HEAVY)],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(REPO), "PATH": "", "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failed"] == {}, f"modules that cannot be imported: {report['failed']}"
    assert report["loaded"] == {}, f"heavy libraries loaded at import (lib: first module): {report['loaded']}"
    assert report["connections"] == 0, "a duckdb connection was opened at import"


@pytest.mark.model  # the planted module really imports torch (seconds)
def test_the_probe_catches_a_heavy_import(tmp_path):
    heavy = "torch"
    (tmp_path / "leaky.py").write_text("def f():\n    import json\n\nimport torch\n")
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(["leaky"]), json.dumps(HEAVY)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "", "HF_HUB_OFFLINE": "1"})
    assert json.loads(proc.stdout.strip().splitlines()[-1])["loaded"].get(heavy) == "leaky"


API_PROBE = r"""
import json, sys
heavy = json.loads(sys.argv[1])
import harness
after_import = sorted(h for h in heavy if h in sys.modules)
names = sorted(harness.__all__)
ev = harness.evaluate("examples/toy/run.txt", "examples/toy/qrels.txt",
                      query_classes="examples/toy/classes.tsv", corpus="toy", licence="CC0-1.0")
store = harness.warehouse("no-such-warehouse.duckdb")
after_use = sorted(h for h in heavy if h in sys.modules)
print(json.dumps({"after_import": after_import, "after_use": after_use, "api": names,
                  "nDCG@10": ev.means["all"]["nDCG@10"], "numpy": "numpy" in sys.modules}))
"""


def test_import_harness_and_scoring_through_it_stay_light():
    """``import harness`` loads no model library, dashboard or database driver; scoring a run
    through the API and making a warehouse handle load none of them either."""
    heavy = [*HEAVY, "duckdb", "pandas"]
    proc = subprocess.run([sys.executable, "-c", API_PROBE, json.dumps(heavy)], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(REPO), "PATH": "", "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["after_import"] == []
    assert report["after_use"] == []
    assert report["api"] == ["Comparison", "Evaluation", "Warehouse", "compare", "evaluate",
                             "load", "warehouse"]
    assert report["numpy"] is True  # the probe did score: the scorer needs numpy
    # q1 2/log2(2)+1/log2(4) over its ideal 2/1+1/log2(3); q2 2/1+1/log2(3), ideal the same;
    # q3 (graded 1 at rank 2): (1/log2(3)) / 1; q4 unanswered: 0
    import math
    q1 = (2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
    expected = (q1 + 1.0 + 1 / math.log2(3) + 0.0) / 4
    assert abs(report["nDCG@10"] - expected) < 1e-9


def test_the_api_probe_catches_a_heavy_import(tmp_path):
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import duckdb\n__all__ = []\n")
    probe = API_PROBE.split("names = ")[0] + "print(json.dumps(after_import))\n"
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(["duckdb"])], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": f"{tmp_path}:{':'.join(sys.path)}", "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["duckdb"]
