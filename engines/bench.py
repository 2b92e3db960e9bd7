"""What every game's benchmarks share: the bench signature a game declares.

A bench signature (Stockfish's `bench`) is the total number of nodes searched over a fixed set of
positions at a fixed depth, each from an empty table, with fixed engine options. It depends on
nothing but the search (not on the machine, the time or the user's settings), so a change of the
search shows as a change of the signature, and a commit that changes a search states its new
one. Each game package's `bench` module declares its `SIGNATURE`; `GameEntry.bench()` returns it.
The searches themselves run through a protocol session, as a client's `go depth N` does
(`protocol.signature`): engines never print.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchSignature:
    """`positions` are texts the game's `parse_position` reads (FENs); each is searched with
    `go depth <depth>` after a new game (an empty table), with the engine `options` (name, value
    text) set once before the first."""

    positions: tuple[str, ...]
    depth: int
    options: tuple[tuple[str, str], ...] = ()
