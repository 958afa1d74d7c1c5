"""Reading the product's source as data: its files, their syntax trees (parsed once per test
session), every import each one makes (at module level or inside a function), and the
declared import contracts (``[tool.importlinter]`` in pyproject.toml).  Shared by the
boundary, contract and registry tests."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: product code: the packages, the dashboard's pages and its entrypoint
TOPS = ("harness", "ingestion", "warehouse", "dashboard", "pages")


@dataclass(frozen=True)
class Import:
    module: str          # what the statement names, absolute
    names: tuple[str, ...]
    line: int
    in_function: bool


def product_files(repo: Path = REPO) -> list[Path]:
    files = [repo / "app.py"] if (repo / "app.py").is_file() else []
    for top in TOPS:
        if (repo / top).is_dir():
            files += sorted(p for p in (repo / top).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def module_name(path: Path, repo: Path = REPO) -> str:
    parts = path.relative_to(repo).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, module: str = "", is_package: bool = False) -> list[Import]:
    """Every import in ``tree``: ``import x``, ``from x import y`` (relative ones resolved
    against ``module``), and ``importlib.import_module("x")`` / ``__import__("x")`` with a
    literal name; each says whether it sits inside a function."""
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(a.name, (), child.lineno, inside) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                name = child.module or ""
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[:len(base) - (child.level - 1)]
                    name = ".".join([*base, *([child.module] if child.module else [])])
                found.append(Import(name, tuple(a.name for a in child.names), child.lineno,
                                    inside))
            elif isinstance(child, ast.Call) and child.args \
                    and isinstance(child.args[0], ast.Constant) \
                    and isinstance(child.args[0].value, str):
                func = child.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if fname in ("import_module", "__import__"):
                    found.append(Import(child.args[0].value, (), child.lineno, inside))
            visit(child, inside)

    visit(tree, False)
    return found


@lru_cache(maxsize=None)
def parsed(repo: Path = REPO) -> dict[str, tuple[str, ast.AST, bool]]:
    """Relative path -> (module name, syntax tree, is a package ``__init__``); parsed once
    per repository and session (callers must not change the trees)."""
    return {p.relative_to(repo).as_posix(): (module_name(p, repo),
                                             ast.parse(p.read_text(encoding="utf-8"), str(p)),
                                             p.name == "__init__.py")
            for p in product_files(repo)}


def contracts(repo: Path = REPO) -> list[dict]:
    """The import contracts declared in ``pyproject.toml``, as written."""
    with open(repo / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def layers(repo: Path = REPO) -> list[list[str]]:
    """The layers contract's layers, bottom first, each the packages it holds."""
    (contract,) = [c for c in contracts(repo) if c["type"] == "layers"]
    return [[p.strip() for p in entry.replace(":", "|").split("|")]
            for entry in reversed(contract["layers"])]


def layer_of(module: str, repo: Path = REPO) -> tuple[int, str] | None:
    """(rank, package): the layer that holds ``module`` (rank 0 is the bottom), or None."""
    for rank, packages in enumerate(layers(repo)):
        for package in packages:
            if module == package or module.startswith(package + "."):
                return rank, package
    return None


def root_packages(repo: Path = REPO) -> list[str]:
    with open(repo / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["importlinter"]["root_packages"])


@lru_cache(maxsize=None)
def _graph(repo: Path):
    import grimp

    return grimp.build_graph(*root_packages(repo), include_external_packages=True,
                             cache_dir=None)


def import_graph(repo: Path = REPO):
    """grimp's import graph of the product (every import statement, in a function or not),
    built once per session; each call returns a copy the caller may change."""
    from copy import deepcopy

    return deepcopy(_graph(repo))


def broken_contracts(graph, repo: Path = REPO) -> dict[str, object]:
    """Check ``graph`` against every contract in pyproject.toml, with import-linter's own
    contract classes: contract name -> its check's metadata, for each contract broken."""
    from copy import deepcopy

    from importlinter import configuration
    from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
    from importlinter.contracts.forbidden import ForbiddenContract
    from importlinter.contracts.independence import IndependenceContract
    from importlinter.contracts.layers import LayersContract
    from importlinter.contracts.protected import ProtectedContract

    types = {"layers": LayersContract, "forbidden": ForbiddenContract,
             "protected": ProtectedContract, "independence": IndependenceContract,
             "acyclic_siblings": AcyclicSiblingsContract}
    configuration.configure()
    with open(repo / "pyproject.toml", "rb") as f:
        session = dict(tomllib.load(f)["tool"]["importlinter"])
    broken = {}
    for options in session.pop("contracts"):
        # as import-linter's own TOML reader does: booleans as the strings its fields parse
        options = {k: str(v) if isinstance(v, bool) else v for k, v in options.items()}
        contract = types[options["type"]](name=options["name"], session_options=session,
                                          contract_options=options)
        check = contract.check(deepcopy(graph), verbose=False)
        if not check.kept:
            broken[options["name"]] = check.metadata
    return broken
