"""What every game's benchmarks share: the bench signature a game declares, timed perfts, and
the Markdown tables the benchmarks write.

A bench signature (Stockfish's `bench`) is the total number of nodes searched over a fixed set of
positions at a fixed depth, each from an empty table, with fixed engine options. It depends on
nothing but the search (not on the machine, the time or the user's settings), so a change of the
search shows as a change of the signature, and a commit that changes a search states its new
one. Each game package's `bench` module declares its `SIGNATURE`; `GameEntry.bench()` returns it.
The searches themselves run through a protocol session, as a client's `go depth N` does
(`mallard.protocol.signature`).

The tables (`table_start`, `table_row`) open with a line naming the machine and the date
(`machine_line`); each benchmark writes them, one row flushed as soon as it is known, to the
stream its caller passes: engines never print.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from datetime import date
from typing import Iterable, Iterator, Optional, TextIO

from mallard.engines.base import Game


@dataclass(frozen=True)
class BenchSignature:
    """`positions` are texts the game's `parse_position` reads (FENs); each is searched with
    `go depth <depth>` after a new game (an empty table), with the engine `options` (name, value
    text) set once before the first."""

    positions: tuple[str, ...]
    depth: int
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PerftRow:
    """One perft to time: `position` a text the game reads (None: the start position) counted
    `depth` moves deep (`bulk`: the last ply counted without being played, where the game can);
    `expected` the published count, None when there is none."""

    label: str
    position: Optional[str]
    depth: int
    expected: Optional[int]
    bulk: bool = True


@dataclass(frozen=True)
class PerftTiming:
    row: PerftRow
    leaves: int
    seconds: float

    @property
    def correct(self) -> Optional[bool]:
        """Whether the count matches the reference; None when there is none."""
        return None if self.row.expected is None else self.leaves == self.row.expected


def time_perfts(game: Game, rows: Iterable[PerftRow]) -> Iterator[PerftTiming]:
    """Each row's perft in `game`, timed (the compiled code is loaded before the first)."""
    game.start_position().perft(2)
    for row in rows:
        position = game.parse_position(row.position) if row.position else game.start_position()
        started = time.perf_counter()
        leaves = position.perft(row.depth, row.bulk)
        yield PerftTiming(row, leaves, time.perf_counter() - started)



# --- the tables -------------------------------------------------------------------------------

def machine_line() -> str:
    return (f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, {date.today().isoformat()}\n")


MIN_WIDTHS = {"leaves": 13}


def column_width(index: int, title: str) -> int:
    return max(len(title), 13 if index == 0 else MIN_WIDTHS.get(title, 10))


def table_row(row, header) -> str:
    cells = (cell.ljust(column_width(i, h)) for i, (cell, h) in enumerate(zip(row, header)))
    return "| " + " | ".join(cells) + " |"


def _separator(header) -> str:
    return "|" + "|".join("-" * (column_width(i, h) + 2) for i, h in enumerate(header)) + "|"


def table_start(header, out: TextIO) -> None:
    out.write(table_row(header, header) + "\n" + _separator(header) + "\n")


def rate(count: float, seconds: float, unit: float) -> str:
    return f"{count / seconds / unit:,.1f}" if seconds > 0 else "-"
