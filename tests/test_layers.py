"""The packages are layers, and this test is their proof.

Every project import, at module level or inside a function, goes down the order below
(or stays in its own package); no set of modules imports itself round a cycle; and the
model libraries are imported only through :mod:`harness.core.heavy`.

    core < claims < ingestion < stats, certificates < evaluation < retrieval < studies
         < warehouse < cli, dashboard < pages, app

``stats`` and ``certificates`` sit below ``evaluation``, so they never read a results
directory (:mod:`harness.evaluation.runs` reads one for them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.source_scan import cycles, imports, project_edges

#: package prefix -> rank (the longest matching prefix wins); lower ranks are imported by
#: higher ones, never the other way
LAYERS: dict[str, int] = {
    "harness.core": 0,
    "harness.claims": 1,
    "ingestion": 2,
    "harness.stats": 3,
    "harness.certificates": 4,
    "harness.evaluation": 5,
    "harness.retrieval": 6,
    "harness.studies": 7,
    "warehouse": 8,
    "harness.cli": 9,
    "harness.__main__": 9,
    "ingestion.cli": 9,
    "ingestion.__main__": 9,
    "warehouse.cli": 9,
    "warehouse.__main__": 9,
    "dashboard": 9,
    "pages": 10,
    "app": 10,
    # the package itself: its public API sits on top of what it exposes
    "harness": 9,
    "harness.api": 9,
}

#: the libraries :mod:`harness.core.heavy` alone imports
HEAVY = ("torch", "sentence_transformers", "transformers", "model2vec", "onnxruntime", "onnx")


def layer(module: str) -> tuple[int, str]:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len,
               default=None)
    if best is None:
        raise AssertionError(f"module {module} belongs to no layer: add its package to LAYERS")
    return LAYERS[best], best


def upward(edges) -> list[str]:
    bad = []
    for module, targets in sorted(edges.items()):
        rank, _ = layer(module)
        for target, imp in targets:
            target_rank, package = layer(target)
            if target_rank > rank:
                where = "inside a function" if imp.in_function else "at module level"
                bad.append(f"{module}:{imp.line} imports {target} ({package}, layer "
                           f"{target_rank}) {where}, above its own layer {rank}")
    return bad


def test_every_product_module_has_a_layer():
    edges = project_edges()
    assert "harness.core.tiers" in edges and "warehouse.ingest" in edges
    for module in edges:
        layer(module)


def test_no_import_goes_up_a_layer():
    assert upward(project_edges()) == []


def test_no_import_cycle():
    assert cycles(project_edges()) == []


def test_model_libraries_are_imported_in_one_place():
    from tests.source_scan import parsed

    bad = [f"{path}:{imp.line}: {imp.module}"
           for path, (name, tree, pkg) in parsed().items() if name != "harness.core.heavy"
           for imp in imports(tree, name, pkg) if imp.module.split(".")[0] in HEAVY]
    assert bad == []


# --------------------------------------------------------------------------- the test's teeth


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_planted_upward_import_inside_a_function_is_caught(tmp_path):
    repo = _plant(tmp_path, {
        "harness/__init__.py": "",
        "harness/core/__init__.py": "",
        "harness/core/records.py": "def f():\n    from warehouse import ingest\n    return ingest\n",
        "warehouse/__init__.py": "",
        "warehouse/ingest.py": "from harness.core import records\n",
    })
    edges = project_edges(repo)
    found = upward(edges)
    assert len(found) == 1 and "harness.core.records:2 imports warehouse.ingest" in found[0]
    assert "inside a function" in found[0]
    assert cycles(edges) == [["harness.core.records", "warehouse.ingest"]]


def test_a_planted_cycle_inside_one_layer_is_caught(tmp_path):
    repo = _plant(tmp_path, {
        "ingestion/__init__.py": "",
        "ingestion/a.py": "import ingestion.b\n",
        "ingestion/b.py": "def g():\n    from ingestion import c\n",
        "ingestion/c.py": "def h():\n    import importlib\n    importlib.import_module('ingestion.a')\n",
    })
    edges = project_edges(repo)
    assert upward(edges) == []
    assert cycles(edges) == [["ingestion.a", "ingestion.b", "ingestion.c"]]


def test_relative_imports_resolve(tmp_path):
    tree = ast.parse("from . import b\nfrom ..core import x\n")
    assert [i.module for i in imports(tree, "harness.stats.a")] == ["harness.stats",
                                                                      "harness.core"]
    assert [i.module for i in imports(tree, "harness.stats", is_package=True)] == [
        "harness.stats", "harness.core"]


@pytest.mark.parametrize("module, rank", [("harness.core.tiers", 0), ("ingestion.cli.fetch", 9),
                                          ("harness.cli", 9), ("warehouse.db", 8), ("app", 10)])
def test_layer_lookup(module, rank):
    assert layer(module)[0] == rank


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


def test_the_warehouse_depends_only_on_the_core_and_the_claims():
    """What the warehouse stores is defined by the claims; nothing of how numbers are made
    (evaluation, retrieval, statistics, studies) reaches it.  Its command line
    (``warehouse.cli``, ``warehouse.__main__``) sits in the CLI layer above, beside
    ``harness.cli``, and may pass the harness's tie test to an export."""
    bad = [f"{m} -> {t}" for m, targets in project_edges().items()
           if m.startswith("warehouse") and layer(m)[0] == LAYERS["warehouse"]
           for t, _ in targets
           if not t.startswith(("warehouse", "harness.core", "harness.claims"))]
    assert bad == []
