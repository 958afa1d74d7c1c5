"""Reading the product's source as data: its files, every import each one makes (at module
level or inside a function), and the project modules those imports resolve to.  Shared by
the boundary and layering tests."""

from __future__ import annotations

import ast
from dataclasses import dataclass
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


def parsed(repo: Path = REPO) -> dict[str, tuple[str, ast.AST, bool]]:
    """Relative path -> (module name, syntax tree, is a package ``__init__``)."""
    return {p.relative_to(repo).as_posix(): (module_name(p, repo),
                                             ast.parse(p.read_text(encoding="utf-8"), str(p)),
                                             p.name == "__init__.py")
            for p in product_files(repo)}


def project_edges(repo: Path = REPO) -> dict[str, list[tuple[str, Import]]]:
    """Module -> the project modules it imports (each resolved to the longest module name
    that exists: ``from harness.core import settings`` is ``harness.core.settings``)."""
    files = parsed(repo)
    known = {name for name, _, _ in files.values()}

    def resolve(name: str) -> str | None:
        while name:
            if name in known:
                return name
            name = name.rpartition(".")[0]
        return None

    edges: dict[str, list[tuple[str, Import]]] = {}
    for name, tree, is_package in files.values():
        out = []
        for imp in imports(tree, name, is_package):
            targets = [resolve(f"{imp.module}.{n}") or resolve(imp.module) for n in imp.names] \
                if imp.names else [resolve(imp.module)]
            out += [(t, imp) for t in dict.fromkeys(targets) if t is not None and t != name]
        edges[name] = out
    return edges


def cycles(edges: dict[str, list[tuple[str, Import]]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan 1972), sorted."""
    graph = {m: sorted({t for t, _ in targets if t in edges}) for m, targets in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(found)
