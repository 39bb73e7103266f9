"""The package's shape: its modules import one another without a cycle.

Every import statement counts, at module level or inside a function (a function-level import
that only dodges a cycle is still a cycle), except those under ``if TYPE_CHECKING:``, which
never run. Importing ``normalizer.a.b`` first runs the package ``normalizer.a``, so an import
also depends on every package above its target that is not already above the importer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import normalizer

ROOT = Path(normalizer.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for grandchild in child.orelse:
                    visit(grandchild)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.add(target)
                # `from pkg import name` may import the submodule pkg.name
                found.update(f"{target}.{alias.name}" for alias in child.names)
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = _imports(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py")
        edges: set[str] = set()
        for target in targets:
            # A package above the importer is already running: `from . import x` runs x only.
            parts = target.split(".")
            for n in range(1, len(parts) + 1):
                ancestor = ".".join(parts[:n])
                if ancestor in files and not module.startswith(ancestor + "."):
                    edges.add(ancestor)
        edges.discard(module)
        graph[module] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = dfs(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_vocabulary_and_the_catalogue_import_nothing_of_the_package() -> None:
    graph = _graph()
    assert graph["normalizer._content"] == set()
    assert graph["normalizer.profiles._rules"] == set()


def test_only_the_drivers_import_the_core() -> None:
    # The profiles and formats layers sit beside the core, not above it: they share the
    # vocabulary of _content.py, never the core's own helpers.
    graph = _graph()
    importers = sorted(m for m, edges in graph.items() if "normalizer._core" in edges)
    assert importers == [
        "normalizer._aio", "normalizer._sync",
        "normalizer.batch.pump", "normalizer.cli._common", "normalizer.cli._diff", "normalizer.cli._explain",
    ]  # (the package's __init__ names it lazily: tests/test_init.py)
