"""Duck Chess benchmarks, computed here and printed by `mallard.protocol.bench` (`mallard bench duck`,
`duck-perft`, `duck-match`), and the game's bench signature.

- Perft timing (`time_perfts`): the start position at depth 3 and reference row 3 at depths 2
  and 3 with bulk counting at the last ply, the start position at depth 3 without it; each row
  carries its published leaf count.
- The search bench (`search_bench`): the ten `BENCH_FENS` to a fixed depth, a fresh 64 MB table
  per position. At depth 6 its total is the bench signature (`SIGNATURE`), which `mallard bench`
  and UCI `bench` compute through a protocol session.
- The enumeration check (`enumeration_bench`): the full enumeration of (piece move, duck square)
  pairs against the exception search without quiescence, values compared.
- Self-play (`self_play`): two evaluation configurations in process (`mallard.engines.duck.selfplay`).

Timings are taken after a first small search or perft, so compiling (or loading the compiled
code) is never timed. Each bench yields one record per row as it finishes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from mallard.engines import bench
from mallard.engines.base import Limits, Score
from mallard.engines.bench import BenchSignature, PerftRow, PerftTiming
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import (
    DuckSearcher,
    SearchBuffers,
    enumeration_value,
    exception_value,
)
from mallard.engines.duck.selfplay import MatchResult, match
from mallard.engines.duck.terms import parse_terms
from mallard.engines.workpool import WorkPool

BENCH_HASH_MB = 64

# --- perft ------------------------------------------------------------------------------------

ROW_3 = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


PERFT_ROWS = (
    PerftRow("startpos", None, 3, 249921262),
    PerftRow("row 3", ROW_3, 2, 1771254),
    PerftRow("row 3", ROW_3, 3, 2572846482),
    PerftRow("startpos", None, 3, 249921262, bulk=False),
)


def time_perfts(rows: Iterable[PerftRow] = PERFT_ROWS) -> Iterator[PerftTiming]:
    return bench.time_perfts(DuckGame(), rows)


# --- search -----------------------------------------------------------------------------------

BENCH_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/ppp1*ppp/4pn2/3p2B1/3PP3/2N5/PPP2PPP/R2QKBNR b KQkq - 1 4",
    ROW_3,
    "r3k2r/1P4p1/8/2pP3*/8/8/6p1/R3K2R w KQkq c6 0 1",
    "rnbqkbnr/ppp1p1pp/*7/8/3pPp2/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
    "4k3/8/8/3*4/8/8/4P3/4K2R w K - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP2PPP/R2Q1RK1 w - - 2 8",
    "3bkb2/3r1r2/R7/8/8/8/8/7K w - - 0 1",
    "8/2k5/3p4/p2P1p2/P2P1P2/8/3K4/8 w - - 0 40",
)
SIGNATURE = BenchSignature(BENCH_FENS, 6, (("Hash", str(BENCH_HASH_MB)),))


@dataclass(frozen=True)
class SearchRecord:
    """One position of the search bench: `index` counts from 1, `best_move` is its UCI text."""

    index: int
    best_move: str
    score: Optional[Score]
    nodes: int
    seconds: float


def search_bench(depth: int) -> Iterator[SearchRecord]:
    """`BENCH_FENS` searched to `depth`, quiescence on, a fresh table per position."""
    game = DuckGame()
    positions = [game.parse_position(fen) for fen in BENCH_FENS]
    searcher = DuckSearcher(game, hash_mb=BENCH_HASH_MB)
    searcher.search(positions[0], Limits(depth=2))  # compile outside the timings
    for index, position in enumerate(positions, 1):
        searcher.clear()
        started = time.perf_counter()
        result = searcher.search(position, Limits(depth=depth))
        seconds = time.perf_counter() - started
        yield SearchRecord(index, position.format_move(result.best_move), result.score,
                           result.nodes, seconds)


@dataclass(frozen=True)
class EnumerationRecord:
    """One depth of the enumeration check over the first `positions` bench positions."""

    depth: int
    positions: int
    equal: int
    enumeration_nodes: int
    exception_nodes: int
    enumeration_seconds: float
    exception_seconds: float


def enumeration_bench(depths: Iterable[int], count: int) -> Iterator[EnumerationRecord]:
    """At each depth, the plain enumeration and the exception search (no quiescence, fixed
    depth, full window) on the first `count` bench positions; their values must be equal."""
    game = DuckGame()
    positions = [game.parse_position(fen) for fen in BENCH_FENS[:count]]
    buffers = SearchBuffers(BENCH_HASH_MB)
    for depth in depths:
        equal = plain_nodes = fast_nodes = 0
        plain_time = fast_time = 0.0
        for position in positions:
            started = time.perf_counter()
            fast, nodes = exception_value(position, depth, False, 0, buffers)
            fast_time += time.perf_counter() - started
            fast_nodes += nodes
            started = time.perf_counter()
            plain, nodes = enumeration_value(position, depth, False, 0)
            plain_time += time.perf_counter() - started
            plain_nodes += nodes
            equal += fast == plain
        yield EnumerationRecord(depth, len(positions), equal, plain_nodes, fast_nodes,
                                plain_time, fast_time)


# --- self-play --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SelfPlayRecord:
    result: MatchResult
    seconds: float


def self_play(a: str, b: str, pairs: int, nodes: int, seed: int,
              pool: WorkPool) -> SelfPlayRecord:
    """A match between evaluation terms `a` and `b` (`selfplay.parse_terms` texts): `pairs`
    random openings played with both colours, `nodes` per move, on `pool`."""
    terms_a, terms_b = parse_terms(a), parse_terms(b)
    started = time.perf_counter()
    result = match(terms_a, terms_b, pairs, nodes, seed=seed, pool=pool)
    return SelfPlayRecord(result, time.perf_counter() - started)
