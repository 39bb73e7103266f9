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


# ---------------------------------------------------------------------- the layers
# The architecture, lowest first: a module may import its own layer and the ones below it,
# never one above. The last three are siblings at the top, and none imports another.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("_errors", "_json", "_defaults", "_lazy", "_plain", "_note", "_report", "_small_files", "_depth",
              "_stub", "_compiled")),
    ("state", ("_state", "_table", "_dispatch")),
    ("vocabulary", ("_content", "_messages", "_message_models", "_options")),
    ("rules", ("profiles",)),
    # The typed surface names the built-in profiles (ProfileName, declared beside their data).
    ("typed api", ("_types",)),
    ("core", ("_core",)),
    ("formats", ("formats",)),
    ("io", ("_sync", "_aio")),
    ("batch", ("batch",)),
    ("integrations", ("integrations",)),
    ("distributed", ("distributed",)),
    ("cli", ("cli", "__main__")),
)
TOP = {"integrations", "distributed", "cli"}


def _layer(module: str) -> tuple[int, str] | None:
    """The layer of a module (None: the front door, ``normalizer`` itself, which names
    everything lazily)."""
    if module == "normalizer":
        return None
    first = module.split(".")[1]
    for rank, (name, members) in enumerate(LAYERS):
        if first in members:
            return (min(rank, len(LAYERS) - len(TOP)) if name in TOP else rank), name
    raise AssertionError(f"{module} belongs to no layer of LAYERS: give it one")


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        mine = _layer(module)
        for target in sorted(targets):
            theirs = _layer(target)
            if mine is None or theirs is None or mine[1] == theirs[1]:
                continue
            if theirs[0] >= mine[0]:
                found.append(f"{module} ({mine[1]}) imports {target} ({theirs[1]})")
    return found


def test_every_import_goes_down_the_layers() -> None:
    assert _layer_violations(_graph()) == []


def test_the_layer_check_catches_an_import_upwards_and_between_siblings() -> None:
    planted = {
        "normalizer._json": {"normalizer._core"},  # base -> core: upwards
        "normalizer.distributed._batch": {"normalizer.cli._repair"},  # between siblings
        "normalizer.cli._main": {"normalizer.batch", "normalizer._errors"},  # fine
        "normalizer": {"normalizer.cli"},  # the front door: fine
    }
    assert _layer_violations(planted) == [
        "normalizer._json (base) imports normalizer._core (core)",
        "normalizer.distributed._batch (distributed) imports normalizer.cli._repair (cli)",
    ]


def _private_imports(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """``from X import _name`` where X is in another folder than the importer (dunders
    such as ``__version__`` are public)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("normalizer")):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        target_folder = target if (ROOT.parent / target.replace(".", "/") / "__init__.py").exists() else (
            target.rpartition(".")[0])
        private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        if private and target_folder != package:
            found.append(f"{module} imports {', '.join(private)} from {target}")
    return found


def _all_private_imports() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        found += _private_imports(ast.parse(path.read_text(encoding="utf-8")), _module_name(path),
                                  path.name == "__init__.py")
    return found


def test_no_private_name_is_imported_across_folders() -> None:
    assert _all_private_imports() == []


def test_the_private_import_check_catches_one() -> None:
    planted = ast.parse("from ..cli._repair import _pump, Settings\nfrom ._own import _fine\nfrom .. import __version__")
    assert _private_imports(planted, "normalizer.distributed._batch", False) == [
        "normalizer.distributed._batch imports _pump from normalizer.cli._repair"
    ]


def test_the_libraries_layers_load_neither_click_nor_rich() -> None:
    # click and rich are the command line's: a library user (or a Dask worker) never pays
    # for them, nor needs them installed.
    import subprocess
    import sys

    code = (
        "import sys, normalizer, normalizer.batch, normalizer.distributed, normalizer.formats, "
        "normalizer.profiles, normalizer.integrations\n"
        "print(sorted(m for m in ('click', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_docs_list_the_layers_in_their_order() -> None:
    readme = (ROOT.parent / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Where the code lives"):]
    rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")][1:]
    assert rows == [name for name, _ in LAYERS if name not in TOP] + ["top"]


# -- sizes ---------------------------------------------------------------------------------------

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
GENERATED = "# GENERATED"  # the first line of a generated module (_table.py): its size is the table's


def _too_long(path: Path, source: str) -> list[str]:
    """The file (over MAX_FILE_LINES) and the functions (over MAX_FUNCTION_LINES, decorators
    included) of one module that are too long, as ``path:line: what``."""
    if source.startswith(GENERATED):
        return []
    found = []
    lines = len(source.splitlines())
    if lines > MAX_FILE_LINES:
        found.append(f"{path}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{path}:{node.lineno}: {node.name} is {length} lines")
    return found


def test_no_file_over_600_lines_and_no_function_over_80() -> None:
    found = [hit for p in sorted(ROOT.rglob("*.py")) for hit in _too_long(p.relative_to(ROOT), p.read_text("utf-8"))]
    assert found == []


def test_the_size_check_catches_a_long_file_and_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    assert _too_long(Path("f.py"), f"def long():\n{body}") == ["f.py:1: long is 81 lines"]
    assert _too_long(Path("f.py"), "x = 1\n" * 601) == ["f.py: 601 lines"]
    assert _too_long(Path("f.py"), f"{GENERATED} by a tool\ndef long():\n{body}") == []


def _tuple_records(source: str) -> list[str]:
    """The classes of a module that are positional-tuple records (``NamedTuple`` subclasses)."""
    return [
        node.name for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
        and any((isinstance(b, ast.Name) and b.id == "NamedTuple") or (isinstance(b, ast.Attribute) and b.attr == "NamedTuple")
                for b in node.bases)
    ]


def test_no_positional_tuple_record() -> None:
    # What is held or returned is a small value object read by name (a frozen slotted
    # dataclass), never a tuple read by position.
    found = {str(p.relative_to(ROOT)): names for p in sorted(ROOT.rglob("*.py")) if (names := _tuple_records(p.read_text("utf-8")))}
    assert found == {}


def test_the_tuple_record_check_catches_one() -> None:
    assert _tuple_records("import typing\nclass P(typing.NamedTuple):\n    x: int\n") == ["P"]
    assert _tuple_records("from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n") == ["P"]
    assert _tuple_records("class P:\n    x: int\n") == []
