"""The packages are layers, declared as import contracts in ``pyproject.toml``
(``[tool.importlinter]``) and checked by import-linter (``make check`` runs ``lint-imports``).

This module runs those contracts on the product, proves they catch an upward import written
inside a function, and checks what import-linter cannot express:

* every product module lies in a layer (a new package outside every layer would be
  unchecked; the root ``harness`` package's lazy exports are checked by
  ``tests/test_registries.py``);
* ``app.py`` (a file, which import-linter cannot take as a root) imports only the dashboard;
* test modules never import each other.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.source_scan import (REPO, TOPS, broken_contracts, contracts, import_graph, imports,
                               layer_of, layers, root_packages)

#: the library import-linter is told about, beside the project's own packages
HEAVY = ("torch", "sentence_transformers", "transformers", "model2vec", "onnxruntime", "onnx")


def test_the_contracts_hold():
    assert broken_contracts(import_graph()) == {}


def test_the_contracts_cover_the_product():
    assert sorted(root_packages()) == sorted(TOPS)
    names = {c["name"] for c in contracts()}
    assert len(names) == len(contracts()) >= 7
    (heavy,) = [c for c in contracts() if c.get("id") == "heavy"]
    assert sorted(heavy["forbidden_modules"]) == sorted(HEAVY)
    from harness.core.heavy import HEAVY as LOADED_BY_NAME

    assert sorted(LOADED_BY_NAME) == sorted(HEAVY)


def test_every_product_module_lies_in_a_layer():
    graph = import_graph()
    modules = {m for root in root_packages() for m in graph.find_descendants(root) | {root}}
    assert "harness.core.tiers" in modules and "warehouse.ingest" in modules
    # the root of the harness is the Python API's lazy exports: it imports nothing by statement
    unlayered = sorted(m for m in modules if layer_of(m) is None)
    assert unlayered == ["harness"]
    assert {m for m in graph.find_modules_directly_imported_by("harness")
            if m.split(".")[0] in TOPS} == set()


def test_the_layers_are_ordered_as_designed():
    ranks = {package: rank for rank, packages in enumerate(layers()) for package in packages}
    assert ranks["harness.core"] == 0 and ranks["harness.claims"] == 1
    assert ranks["ingestion"] < ranks["harness.stats"] < ranks["harness.certificates"] \
        < ranks["harness.evaluation"] < ranks["harness.retrieval"] < ranks["harness.pipeline"] \
        < ranks["harness.studies"] \
        < ranks["warehouse"] < ranks["harness.cli"] == ranks["dashboard"] < ranks["pages"]


# --------------------------------------------------------------------------- the contracts' teeth


def test_an_upward_import_added_to_the_graph_breaks_the_layers():
    graph = import_graph()
    graph.add_import(importer="harness.stats.monitor", imported="harness.evaluation.runs",
                     line_number=1, line_contents="from harness.evaluation import runs")
    # upward, and round a cycle (harness.evaluation imports harness.stats)
    assert sorted(broken_contracts(graph)) == [
        "no import cycle between sibling modules or packages",
        "the layers: each package imports only downwards"]


def test_a_cycle_inside_one_layer_breaks_the_acyclic_contract():
    graph = import_graph()
    assert graph.direct_import_exists(importer="harness.core.formats.runs",
                                      imported="harness.core.records")
    graph.add_import(importer="harness.core.records", imported="harness.core.formats",
                     line_number=1, line_contents="from harness.core import formats")
    assert list(broken_contracts(graph)) == ["no import cycle between sibling modules or packages"]


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--config", str(root / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=root, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(root), "PATH": "", "PYTHONIOENCODING": "utf-8"})


def test_lint_imports_reads_function_local_imports_with_the_real_contracts(tmp_path):
    """A skeleton of the product (an empty package for every module the contracts name) under
    the real pyproject.toml: clean, it passes; with an upward import, a model library and
    duckdb imported inside a function of the core, lint-imports fails naming each (the upward
    import breaks the layers and the harness-to-warehouse boundary: four contracts)."""
    packages = {p for ps in layers() for p in ps} | set(root_packages())
    for c in contracts():
        for key in ("source_modules", "forbidden_modules", "ancestors", "allowed_importers"):
            packages |= {m for m in c.get(key, []) if m.split(".")[0] in TOPS}
        for ignored in c.get("ignore_imports", []):
            packages |= {m.strip() for m in ignored.split("->")}
    skeleton = {}
    for package in packages:
        if "*" in package:
            continue
        parts = package.split(".")
        for i in range(1, len(parts) + 1):
            skeleton["/".join(parts[:i]) + "/__init__.py"] = ""
    skeleton["harness/__main__.py"] = "from harness.cli import main\n"
    skeleton["harness/api/store.py"] = "from warehouse import queries\n"
    skeleton["harness/api/latex.py"] = "from warehouse import exports, render\n"
    skeleton["warehouse/cli.py"] = "from harness.stats import best\n"
    skeleton["ingestion/synthetic/__init__.py"] = ("def generate():\n"
                                                   "    from ingestion.loaders import synthetic\n")
    skeleton["ingestion/loaders/synthetic.py"] = "from ingestion import synthetic\n"
    skeleton["warehouse/queries.py"] = "import duckdb\n"
    skeleton["pages/overview.py"] = "import streamlit\n"
    for stale in ("harness/__main__/__init__.py", "harness/api/store/__init__.py",
                  "harness/api/latex/__init__.py", "warehouse/cli/__init__.py",
                  "ingestion/loaders/synthetic/__init__.py", "warehouse/queries/__init__.py"):
        skeleton.pop(stale, None)
    skeleton["pyproject.toml"] = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    _plant(tmp_path, skeleton)

    clean = _lint(tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    _plant(tmp_path, {"harness/core/records.py": (
        "def later():\n"
        "    from warehouse import ingest\n"
        "    import torch\n"
        "    import duckdb\n"
        "    return ingest, torch, duckdb\n"),
        "warehouse/ingest.py": ""})
    planted = _lint(tmp_path)
    out = planted.stdout
    assert planted.returncode == 1, out + planted.stderr
    assert "harness.core.records -> warehouse.ingest (l.2)" in out
    assert "harness.core.records -> torch (l.3)" in out
    assert "harness.core.records -> duckdb (l.4)" in out
    assert re.search(r"Contracts: 4 kept, 4 broken", out), out


# --------------------------------------------------------------------------- beyond the contracts


def test_app_imports_only_the_dashboard():
    """``app.py`` is the Streamlit entrypoint: of the project it imports the dashboard and
    pages only, and no database driver or model library."""
    tree = ast.parse((REPO / "app.py").read_text(encoding="utf-8"))
    tops = {imp.module.split(".")[0] for imp in imports(tree, "app")}
    assert tops & set(TOPS) <= {"dashboard", "pages"}
    assert not tops & {"duckdb", *HEAVY}
    assert "streamlit" in tops and "dashboard" in tops  # the scan sees its imports


def test_test_modules_do_not_import_each_other():
    """Shared builders live in a conftest or a helpers module, never in a test module."""
    tests = Path(__file__).resolve().parent
    bad = []
    for path in sorted(tests.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for imp in imports(tree, "tests." + ".".join(path.relative_to(tests).with_suffix("").parts)):
            names = [imp.module, *(f"{imp.module}.{n}" for n in imp.names)]
            if any(part.startswith("test_") for name in names for part in name.split(".")[1:]):
                bad.append(f"{path.relative_to(tests)}:{imp.line}: {imp.module} {list(imp.names)}")
    assert bad == []


def test_relative_imports_resolve():
    tree = ast.parse("from . import b\nfrom ..core import x\n")
    assert [i.module for i in imports(tree, "harness.stats.a")] == ["harness.stats",
                                                                      "harness.core"]
    assert [i.module for i in imports(tree, "harness.stats", is_package=True)] == [
        "harness.stats", "harness.core"]
