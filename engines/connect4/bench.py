"""Connect Four benchmarks, computed here and printed by `protocol.bench` (`mallard bench
connect4`).

- The test sets (`solve_test_sets`): Pons' public sets solved through the `Solver` API with a
  fresh table per position: per set, the time and nodes of each position and how many answers
  were right (a weak solve compares signs only).
- The BitBully reference (`bitbully_times`): BitBully's MTD(f) on the same positions, for
  `--reference bitbully` (the optional `bitbully` package, `pip install '.[bench]'`).

Timings are taken after a first solve, so compiling (or loading the compiled code) is never
timed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from engines.connect4.book import Book, default_book
from engines.connect4.rules import Connect4Game
from engines.connect4.solver import Solver
from engines.connect4.testsets import load

DEFAULT_LIMITS = {"Begin-Hard": 100}  # positions used of a set when no limit is given
WARM_UP_MOVES = "2252576253462244111563365343671351441"


@dataclass(frozen=True)
class SolvedSet:
    """One set solved: its (moves, score) `pairs`, and per position the time and nodes."""

    name: str
    pairs: list[tuple[str, int]]
    times: list[float]
    nodes: list[int]
    correct: int


def bench_book(use_book: bool) -> Optional[Book]:
    """The engine's 7x6 opening book when `use_book` (None when there is none)."""
    return default_book(7, 6) if use_book else None


def solve_test_sets(sets: Iterable[str], limit: Optional[int], book: Optional[Book],
                    weak: bool) -> Iterator[SolvedSet]:
    """Each set (its first `limit` positions, by default all but Begin-Hard's first 100)
    solved with a fresh table per position, probing `book` (see `bench_book`)."""
    game = Connect4Game()
    solver = Solver(book=book)
    solver.solve(game.parse_sequence(WARM_UP_MOVES))  # compile outside the timings
    for name in sets:
        pairs = load(name, limit if limit is not None else DEFAULT_LIMITS.get(name))
        times, nodes, correct = [], [], 0
        for moves, expected in pairs:
            position = game.parse_sequence(moves)
            solver.reset()
            started = time.perf_counter()
            value = solver.solve(position, weak=weak)
            times.append(time.perf_counter() - started)
            nodes.append(solver.nodes)
            if weak:
                expected = (expected > 0) - (expected < 0)
            correct += value == expected
        yield SolvedSet(name, pairs, times, nodes, correct)


def bitbully_times(pairs: list[tuple[str, int]], weak: bool,
                   use_book: bool) -> tuple[list[float], int]:
    """BitBully's time per position (fresh table each) and how many of its answers were right."""
    try:  # an optional package, only for this reference
        from bitbully import bitbully_core
    except ImportError:
        raise ImportError("--reference bitbully needs the `bitbully` package: "
                          "pip install '.[bench]'") from None
    solver = bitbully_core.BitBullyCore()
    if use_book:
        from bitbully_databases import BitBullyDatabases  # installed with bitbully

        solver.loadBook(BitBullyDatabases.get_database_path("12-ply-dist"))
    times, correct = [], 0
    for moves, expected in pairs:
        board = bitbully_core.BoardCore()
        if not board.play("".join(str(int(c) - 1) for c in moves)):
            raise RuntimeError(f"BitBully rejected {moves}")
        solver.resetTranspositionTable()
        started = time.perf_counter()
        value = solver.mtdf(board, 0)
        times.append(time.perf_counter() - started)
        if weak:
            value, expected = (value > 0) - (value < 0), (expected > 0) - (expected < 0)
        correct += value == expected
    return times, correct
