"""Connect Four benchmarks (`mallard bench connect4`), computed and written as a Markdown table
here, and the game's bench signature.

- The test sets (`solve_test_sets`): Pons' public sets solved through the `Solver` API with a
  fresh table per position: per set, the time and nodes of each position and how many answers
  were right (a weak solve compares signs only).
- The BitBully reference (`bitbully_times`): BitBully's MTD(f) on the same positions, for
  `--reference bitbully` (the optional `bitbully` package, `pip install '.[bench]'`).
- The table (`bench_connect4`): per test set, positions, correct, mean, median and max time,
  mean nodes, Mnodes/s; with `--reference bitbully` BitBully's time on the same positions in
  the same run. It goes to the stream the caller passes, a row as soon as its set is solved.
- `SIGNATURE`: positions the solver solves exactly (it ignores the depth), without the opening
  book, whose contents depend on what is installed.

Timings are taken after a first solve, so compiling (or loading the compiled code) is never
timed.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, TextIO

from mallard.engines.bench import BenchSignature, machine_line, table_row, table_start
from mallard.engines.connect4.book import Book, default_book
from mallard.engines.connect4.rules import Connect4Game
from mallard.engines.connect4.solver import Solver
from mallard.engines.connect4.testsets import load

DEFAULT_LIMITS = {"Begin-Hard": 100}  # positions used of a set when no limit is given
WARM_UP_MOVES = "2252576253462244111563365343671351441"

# Positions of the public test sets (their move sequences and exact scores in the comments):
# about 25 million nodes without the book, solved in two or three seconds.
SIGNATURE_FENS = (
    "7/7/7/2P4/2P4/ppPP1p1[PPPPPPPPPPPPPPPPPpppppppppppppppppp] b - - 0 4",  # 3246313 -2
    "7/7/7/7/2PpP1P/p1PpP1p[PPPPPPPPPPPPPPPPppppppppppppppppp] b - - 0 5",  # 573154743 2
    "7/7/7/7/2pp1P1/PPpP1p1[PPPPPPPPPPPPPPPPPppppppppppppppppp] w - - 0 5",  # 13234664 -3
    "7/7/7/4p2/3pP2/pPPpP2[PPPPPPPPPPPPPPPPPppppppppppppppppp] w - - 0 5",  # 24345155 -3
    "7/7/7/7/1P4p/1pp2PP[PPPPPPPPPPPPPPPPPPpppppppppppppppppp] w - - 0 4",  # 722763 3
    "7/7/1p5/1P5/1P5/1pP1ppP[PPPPPPPPPPPPPPPPPppppppppppppppppp] w - - 0 5",  # 32252276 3
    "7/7/7/4P2/pp2pP1/PP1pPp1[PPPPPPPPPPPPPPPPpppppppppppppppp] w - - 0 6",  # 2416615552 4
    "7/4p2/4P2/4p2/4P2/p1pPPpP[PPPPPPPPPPPPPPPPpppppppppppppppp] w - - 0 6",  # 5371555645 4
    "7/7/4P2/P3p1p/pPp1p1P/PpP1p1P[PPPPPPPPPPPPPPpppppppppppppp] w - - 0 8",  # 32751571231557 -3
    "7/7/1p5/PP5/pp1PPp1/pPPPpPp[PPPPPPPPPPPPPpppppppppppppp] b - - 0 8",  # 274552224131661 0
)
# The solver ignores the depth (every search solves exactly): 42 says "to the end of the game".
SIGNATURE = BenchSignature(SIGNATURE_FENS, 42, (("Hash", "64"), ("OwnBook", "false")))


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
                    weak: bool, threads: int = 1) -> Iterator[SolvedSet]:
    """Each set (its first `limit` positions, by default all but Begin-Hard's first 100)
    solved with a fresh table per position, probing `book` (see `bench_book`), on `threads`
    threads."""
    game = Connect4Game()
    solver = Solver(book=book, threads=threads)
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


# --- the table ------------------------------------------------------------------------------

def _format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def bench_connect4(sets, limit, use_book, weak, reference, out: TextIO,
                   threads: int = 1) -> int:
    book = bench_book(use_book)
    records = solve_test_sets(sets, limit, book, weak, threads)
    mode = ("weak" if weak else "strong") + (", book" if book is not None else ", no book") + \
        (f", {threads} threads" if threads > 1 else "")
    out.write(f"# mallard bench connect4 ({mode}, fresh table per position)\n")
    out.write(machine_line())
    header = ["set", "positions", "correct", "mean", "median", "max", "mean nodes", "Mnodes/s"]
    if reference:
        header += ["bitbully mean", "correct", "time ratio"]
    table_start(header, out)
    failures = 0
    for record in records:
        times = record.times
        failures += len(record.pairs) - record.correct
        total_time = sum(times)
        row = [record.name, str(len(record.pairs)), str(record.correct),
               _format_time(statistics.mean(times)), _format_time(statistics.median(times)),
               _format_time(max(times)), f"{statistics.mean(record.nodes):,.0f}",
               f"{sum(record.nodes) / total_time / 1e6:.2f}" if total_time else "-"]
        if reference:
            ref_times, ref_correct = bitbully_times(record.pairs, weak, use_book)
            row += [_format_time(statistics.mean(ref_times)), str(ref_correct),
                    f"{total_time / sum(ref_times):.2f}"]
        out.write(table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0
