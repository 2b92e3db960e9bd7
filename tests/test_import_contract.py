"""The import contract of the house, read from the source (every import statement, also those
inside functions):

- `engines` never imports `protocol` or `tournaments`, and never writes to the standard streams
  (no `print`, no `sys.stdout`): it returns what it found, or writes to a stream it is given;
- the line front-ends of `protocol` never import `tournaments`: only the command line
  (`protocol/cli.py`, which composes the two) and the web board (`protocol/board/`, which drives
  engine processes through the match runner's player and writes PGN with its writer) do;
- no module of `protocol` but the command line imports a game's benchmarks (they live beside
  what they measure, in `engines` and `tournaments`), and `protocol/cli.py` stays short: each
  subcommand parses its arguments and calls one function;
- a game's rules never import its search: nothing a `rules` module reaches inside `engines`
  is a searcher, solver, prover or search kernel;
- `protocol` never imports numba kernels (it goes through the games' Python APIs);
- there is no import cycle between modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engines", "protocol", "tournaments")
COMMAND_LINE = "mallard.protocol.cli"
BOARD = "mallard.protocol.board"
MOST_COMMAND_LINE_LINES = 449
SIGNATURE_FORM = "mallard.engines.bench"  # a signature's form and rate: protocol/signature.py
SEARCH_MODULES = ("searcher", "solver", "prover", "search_kernels", "pv_kernels", "prover_kernels",
                  "selfplay", "enumeration", "book", "book_builder", "driver")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["mallard", *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for package in PACKAGES
            for path in sorted((ROOT / package).rglob("*.py"))}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports: `from a.b import c` is `a.b.c` when that is a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules
                     else node.module for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) for name, path in modules.items()}


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for imported in graph[todo.pop()]:
            if imported not in seen:
                seen.add(imported)
                todo.append(imported)
    return seen


def test_the_reader_sees_the_imports(graph):
    """The control: the graph has the arrows this test is about."""
    assert "mallard.engines.base" in graph["mallard.engines.duck.rules"]
    assert "mallard.engines.duck.kernels" in graph["mallard.engines.duck.searcher"]
    assert "mallard.protocol.session" in graph["mallard.protocol.uci"]
    # those of the modules allowed to import tournaments, also from inside functions
    assert "mallard.tournaments.cli" in graph["mallard.protocol.cli"]
    assert "mallard.tournaments.players" in graph["mallard.protocol.board.engine"]


def test_engines_never_import_protocol_or_tournaments(graph):
    wrong = {(name, imported) for name, imports in graph.items()
             if name.startswith("mallard.engines")
             for imported in imports if imported.split(".")[1] in ("protocol", "tournaments")}
    assert not wrong


def test_engines_never_write_to_the_standard_streams():
    wrong = set()
    for name, path in _modules().items():
        if not name.startswith("mallard.engines."):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "print":
                wrong.add((name, node.lineno, "print"))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "sys" and node.attr in ("stdin", "stdout", "stderr"):
                wrong.add((name, node.lineno, f"sys.{node.attr}"))
    assert not wrong


def test_only_the_command_line_and_the_board_import_tournaments(graph):
    wrong = {(name, imported) for name, imports in graph.items()
             if name.startswith("mallard.protocol") and name != COMMAND_LINE
             and not (name + ".").startswith(BOARD + ".")
             for imported in imports if imported.startswith("mallard.tournaments")}
    assert not wrong


def test_only_the_command_line_of_protocol_imports_benchmarks(graph):
    wrong = {(name, imported) for name, imports in graph.items()
             if name.startswith("mallard.protocol") and name != COMMAND_LINE
             for imported in imports if imported.split(".")[-1].startswith("bench")
             and imported != SIGNATURE_FORM}
    assert not wrong


def test_the_command_line_stays_short():
    lines = len((ROOT / "protocol" / "cli.py").read_text().splitlines())
    assert lines <= MOST_COMMAND_LINE_LINES, f"protocol/cli.py has {lines} lines"


def test_rules_never_reach_a_search(graph):
    wrong = {(name, reached) for name in graph if name.endswith(".rules")
             for reached in _reach(graph, name)
             if reached.split(".")[-1] in SEARCH_MODULES}
    assert not wrong


def test_protocol_never_imports_numba_kernels(graph):
    wrong = {(name, imported) for name, imports in graph.items()
             if name.startswith("mallard.protocol")
             for imported in imports if imported.endswith("kernels")}
    assert not wrong


def test_no_import_cycle(graph):
    cycles = set()
    for name in graph:
        for imported in graph[name]:
            if name in _reach(graph, imported) and name != imported:
                cycles.add(tuple(sorted((name, imported))))
    assert not cycles
