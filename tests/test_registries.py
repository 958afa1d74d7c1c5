"""Lookups by string: every ``"module"`` / ``"module:attr"`` a registry or a lazy export names
resolves to what its registry promises, and respects the layers.

Import statements are checked by the import contracts in ``pyproject.toml``; a string handed
to ``importlib.import_module`` is invisible to them (and to editors and static analysis).
:data:`REGISTRIES` lists every such registry; :func:`test_every_registry_in_the_source_is_listed`
finds them in the source, so a new one cannot go unchecked.  Each entry is resolved here and
added to the import graph as the import it stands for (holder -> target), and the contracts
must still hold on that graph.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

import pytest

from tests.source_scan import REPO, TOPS, broken_contracts, import_graph, layer_of, parsed


def _command(name: str, target: object) -> None:
    assert isinstance(target, ModuleType)
    assert isinstance(target.HELP, str) and target.HELP
    assert callable(target.add_arguments) and callable(target.run)


def _backend(name: str, target: object) -> None:
    from harness.retrieval.backends.base import Backend

    assert inspect.isclass(target) and issubclass(target, Backend)


def _backend_options(name: str, target: object) -> None:
    assert isinstance(target, ModuleType)
    assert callable(target.add_arguments)
    assert list(inspect.signature(target.options).parameters) == ["args", "chosen"]


def _answerer(name: str, target: object) -> None:
    assert inspect.isclass(target)
    assert target.name == name
    for attribute in ("is_production_path", "needs_store", "description"):
        assert hasattr(target, attribute), attribute
    assert "row_limit" in inspect.signature(target).parameters
    assert callable(target.answer)


def _loader(name: str, target: object) -> None:
    assert inspect.isfunction(target)
    assert list(inspect.signature(target).parameters)[:2] == ["path", "name"]


def _claim(name: str, target: object) -> None:
    from harness.claims.base import Claim

    assert inspect.isclass(target) and issubclass(target, Claim) and target.__name__ == name


def _anything(name: str, target: object) -> None:
    """A lazy export: the name exists (the holder's ``__getattr__`` is checked below)."""


@dataclass(frozen=True)
class Registry:
    holder: str            # the module holding the dict (the importer, for the contracts)
    variable: str
    form: str              # "module", "module:attr", or "export" (key = attr, value = module)
    check: Callable[[str, object], None]


REGISTRIES = [
    Registry("harness", "_API", "export", _anything),
    Registry("warehouse", "_EXPORTS", "export", _anything),
    Registry("ingestion.transcripts", "_EXPORTS", "export", _anything),
    Registry("harness.claims", "_CLASSES", "export", _claim),
    Registry("harness.cli", "COMMANDS", "module", _command),
    Registry("ingestion.cli", "COMMANDS", "module", _command),
    Registry("harness.retrieval.backends", "BACKENDS", "module:attr", _backend),
    Registry("harness.retrieval.backends", "BACKEND_OPTIONS", "module", _backend_options),
    Registry("harness.studies.answers.answerers", "ANSWERERS", "module:attr", _answerer),
    Registry("ingestion.loaders", "LOADERS", "module:attr", _loader),
]


def entries(registry: Registry) -> list[tuple[str, str, str | None]]:
    """``(key, module, attr)`` for every entry (attr None: the module itself)."""
    table = getattr(importlib.import_module(registry.holder), registry.variable)
    assert isinstance(table, dict) and table
    found = []
    for key, value in table.items():
        if registry.form == "export":
            found.append((key, value, key))
        elif registry.form == "module:attr":
            module, sep, attr = value.partition(":")
            assert sep and attr, f"{registry.variable}[{key!r}] = {value!r}: expected module:attr"
            found.append((key, module, attr))
        else:
            assert ":" not in value, f"{registry.variable}[{key!r}] = {value!r}: expected a module"
            found.append((key, value, None))
    return found


def every_entry() -> list[tuple[Registry, str, str, str | None]]:
    return [(r, key, module, attr) for r in REGISTRIES for key, module, attr in entries(r)]


def _id(entry) -> str:
    registry, key, _, _ = entry
    return f"{registry.holder}.{registry.variable}[{key}]"


@pytest.mark.parametrize("entry", every_entry(), ids=_id)
def test_every_entry_resolves_to_its_kind(entry):
    registry, key, module, attr = entry
    target = importlib.import_module(module)
    if attr is not None:
        assert hasattr(target, attr), f"{module} has no attribute {attr!r}"
        target = getattr(target, attr)
    registry.check(key, target)
    if registry.form == "export":
        # the holder's lazy __getattr__ hands out the same object
        assert getattr(importlib.import_module(registry.holder), key) is target


def test_the_registries_are_as_large_as_expected():
    counts = {f"{r.holder}.{r.variable}": len(entries(r)) for r in REGISTRIES}
    assert counts["harness.cli.COMMANDS"] >= 16 and counts["harness.claims._CLASSES"] == 11
    assert sum(counts.values()) >= 69


def registry_edges() -> list[tuple[str, str]]:
    return sorted({(r.holder, module) for r, _, module, _ in every_entry() if module != r.holder})


def test_every_lookup_respects_the_import_contracts():
    """Each lookup added to the import graph as the import it is: the contracts still hold."""
    graph = import_graph()
    for holder, module in registry_edges():
        graph.add_import(importer=holder, imported=module, line_number=0,
                         line_contents=f"importlib.import_module({module!r})")
    assert broken_contracts(graph) == {}


def test_the_root_of_the_harness_exports_only_the_python_api():
    """``harness`` lies in no layer of the contracts (it is the package of every layer): its
    lazy exports may name the Python API only, which sits at the top."""
    (api,) = [r for r in REGISTRIES if r.holder == "harness"]
    modules = {module for _, module, _ in entries(api)}
    assert modules and all(m.startswith("harness.api.") for m in modules)
    assert layer_of("harness") is None and layer_of("harness.api.store") is not None


def test_an_upward_lookup_breaks_the_contracts():
    """The check has teeth: a backend registry naming a study class would break the layers."""
    graph = import_graph()
    graph.add_import(importer="harness.retrieval.backends",
                     imported="harness.studies.answers.answerers", line_number=0,
                     line_contents="importlib.import_module('harness.studies.answers.answerers')")
    assert "the layers: each package imports only downwards" in broken_contracts(graph)


# --------------------------------------------------------------------------- finding registries

#: a project module path, optionally ``:attr``
MODULE_STRING = re.compile(rf"^({'|'.join(TOPS)})(\.\w+)+(:\w+)?$")


def registries_in_source(trees: dict[str, tuple[str, ast.AST, bool]]) -> set[tuple[str, str]]:
    """``(module, variable)`` of every module-level dict literal whose values are all strings
    and name project modules (with or without ``:attr``)."""
    found = set()
    for name, tree, _ in trees.values():
        for node in getattr(tree, "body", []):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict) \
                    or not value.values:
                continue
            strings = [v.value for v in value.values
                       if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            if len(strings) == len(value.values) and all(MODULE_STRING.match(s) for s in strings):
                found.add((name, target.id))
    return found


def test_every_registry_in_the_source_is_listed():
    listed = {(r.holder, r.variable) for r in REGISTRIES}
    assert registries_in_source(parsed(REPO)) == listed


def test_the_registry_finder_itself():
    tree = ast.parse('A = {"x": "harness.core.tiers"}\nB: dict = {"y": "warehouse.db:connect"}\n'
                     'C = {"z": "not a module"}\nD = {"w": "harness.core", "v": 3}\n'
                     'def f():\n    E = {"u": "harness.core.tiers"}\n')
    assert registries_in_source({"m.py": ("m", tree, False)}) == {("m", "A"), ("m", "B")}


def test_every_dashboard_page_is_registered_and_exists():
    from dashboard import PAGES

    files = [file for file, _, _ in PAGES]
    on_disk = sorted(p.name for p in (REPO / "pages").glob("*.py") if p.name != "__init__.py")
    assert sorted(files) == on_disk and len(set(files)) == len(files)
