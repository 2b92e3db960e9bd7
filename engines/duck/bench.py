"""Duck Chess benchmarks (`mallard bench duck`, `duck-perft`, `duck-match`), computed and written
as Markdown tables here, and the game's bench signature.

- Perft timing (`time_perfts`): the start position at depth 3 and reference row 3 at depths 2
  and 3 with bulk counting at the last ply, the start position at depth 3 without it; each row
  carries its published leaf count.
- The search bench (`search_bench`): the ten `BENCH_FENS` to a fixed depth, a fresh 64 MB table
  per position. At depth 6 its total is the bench signature (`SIGNATURE`), which `mallard bench`
  and UCI `bench` compute through a protocol session.
- The enumeration check (`enumeration_bench`): the full enumeration of (piece move, duck square)
  pairs against the exception search without quiescence, values compared.
- Self-play (`self_play`): two evaluation configurations in process
  (`mallard.engines.duck.selfplay`).

The tables (`bench_duck_perft`, `bench_duck`, `bench_duck_match`) go to the stream the caller
passes, a row as soon as it is known: leaves, correctness, seconds and Mleaves/s per perft
(`--reference PATH` runs a Fairy-Stockfish binary, built with all=yes, on the same perfts in
the same run); the search bench and the enumeration check; the self-play result.

Timings are taken after a first small search or perft, so compiling (or loading the compiled
code) is never timed. Each bench yields one record per row as it finishes.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, TextIO

from mallard.engines import bench
from mallard.engines.base import Limits, Score
from mallard.engines.bench import (
    BenchSignature,
    PerftRow,
    PerftTiming,
    machine_line,
    table_row,
    table_start,
)
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import (
    DuckSearcher,
    SearchBuffers,
    enumeration_value,
    exception_value,
)
from mallard.engines.duck.selfplay import MatchResult, elo_text, match
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


# --- the tables -----------------------------------------------------------------------------

class _UciPerft:
    """A Fairy-Stockfish process answering `go perft` for the duck variant. Anything that goes
    wrong with it (it cannot start, ends, or does not answer the handshake within
    `HANDSHAKE_S`) is a ValueError naming it: one line for the user."""

    HANDSHAKE_S = 30

    def __init__(self, path: str):
        self.path = path
        try:
            self.process = subprocess.Popen([path], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            text=True, bufsize=1)
        except OSError as error:
            raise ValueError(f"the reference engine '{path}' cannot start: {error}") from None
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._send("uci")
            self._wait("uciok", self.HANDSHAKE_S)
            self._send("setoption name UCI_Variant value duck")
            self._send("isready")
            self._wait("readyok", self.HANDSHAKE_S)
        except ValueError:
            self.process.kill()
            self.process.wait()
            raise

    def _read(self) -> None:
        try:
            for line in self.process.stdout:
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def _send(self, line: str) -> None:
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except OSError:  # its end of the pipe is closed: it ended
            raise ValueError(f"the reference engine '{self.path}' ended "
                             f"(exit status {self.process.wait()})") from None

    def _wait(self, prefix: str, timeout: Optional[float] = None) -> str:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=None if deadline is None
                                       else max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ValueError(f"the reference engine '{self.path}' did not answer "
                                 f"'{prefix}' within {timeout:g} s") from None
            if line is None:
                raise ValueError(f"the reference engine '{self.path}' ended before "
                                 f"'{prefix}' (exit status {self.process.wait()})")
            if line.startswith(prefix):
                return line

    def perft(self, fen: Optional[str], depth: int) -> tuple[int, float]:
        self._send(f"position fen {fen}" if fen else "position startpos")
        self._send("isready")
        self._wait("readyok")
        started = time.perf_counter()
        self._send(f"go perft {depth}")
        line = self._wait("Nodes searched")
        return int(line.split(":")[1]), time.perf_counter() - started

    def close(self) -> None:
        try:
            self._send("quit")
        except ValueError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def bench_duck_perft(reference: Optional[str], out: TextIO) -> int:
    engine = _UciPerft(reference) if reference else None  # a reference that fails, at once
    try:
        return _perft_table(engine, out)
    finally:
        if engine is not None:
            engine.close()


def _perft_table(engine: Optional[_UciPerft], out: TextIO) -> int:
    timings = time_perfts()
    out.write("# mallard bench duck-perft (bulk: the last ply is counted from the piece moves)\n")
    out.write(machine_line())
    header = ["position", "depth", "bulk", "leaves", "correct", "seconds", "Mleaves/s"]
    if engine is not None:
        header += ["reference s", "speed-up"]
    table_start(header, out)
    failures = 0
    for timing in timings:
        row, seconds = timing.row, timing.seconds
        failures += not timing.correct
        cells = [row.label, str(row.depth), "yes" if row.bulk else "no", f"{timing.leaves:,}",
                 "yes" if timing.correct else f"NO ({row.expected:,})", f"{seconds:.3f}",
                 f"{timing.leaves / seconds / 1e6:,.0f}"]
        if engine is not None:
            ref_leaves, ref_seconds = engine.perft(row.position, row.depth)
            failures += ref_leaves != row.expected
            cells += [f"{ref_seconds:.3f}", f"{ref_seconds / seconds:.1f}x"]
        out.write(table_row(cells, header) + "\n")
        out.flush()
    return 1 if failures else 0


def bench_duck(depth: int, enumeration_depths, enumeration_positions: int,
               out: TextIO) -> int:
    records = search_bench(depth)
    out.write(f"# mallard bench duck: depth {depth}, quiescence on, fresh "
              f"{BENCH_HASH_MB} MB table per position\n")
    out.write(machine_line())
    header = ["position", "best move", "score", "nodes", "seconds", "knodes/s"]
    table_start(header, out)
    total_nodes, total_time = 0, 0.0
    for record in records:
        total_nodes += record.nodes
        total_time += record.seconds
        row = [str(record.index), record.best_move, str(record.score), f"{record.nodes:,}",
               f"{record.seconds:.3f}", f"{record.nodes / record.seconds / 1e3:,.0f}"]
        out.write(table_row(row, header) + "\n")
        out.flush()
    out.write(table_row(["total", "", "", f"{total_nodes:,}", f"{total_time:.3f}",
                          f"{total_nodes / total_time / 1e3:,.0f}"], header) + "\n")
    out.write(f"\nbench signature (total nodes): {total_nodes}\n")
    if not enumeration_depths:
        return 0
    out.write(f"\n# full enumeration against the exception search, first {enumeration_positions}"
              " positions, no quiescence, fixed depth, values compared\n")
    header = ["depth", "positions", "equal", "enumeration", "exception", "node ratio",
              "enum s", "exc s"]
    table_start(header, out)
    failures = 0
    for record in enumeration_bench(enumeration_depths, enumeration_positions):
        failures += record.positions - record.equal
        row = [str(record.depth), str(record.positions), str(record.equal),
               f"{record.enumeration_nodes:,}", f"{record.exception_nodes:,}",
               f"{record.enumeration_nodes / max(1, record.exception_nodes):,.1f}",
               f"{record.enumeration_seconds:.2f}", f"{record.exception_seconds:.2f}"]
        out.write(table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0


def bench_duck_match(a: str, b: str, pairs: int, nodes: int, seed: int, pool: WorkPool,
                     where: str, out: TextIO) -> int:
    """Self-play on `pool`; `where` says where that is (printed in the table's title)."""
    record = self_play(a, b, pairs, nodes, seed, pool)
    result = record.result
    elo, margin = result.elo()
    header = ["A", "B", "games", "A wins", "draws", "A losses", "A score", "Elo (95%)"]
    out.write(f"# mallard bench duck-match: {nodes} nodes per move, {pairs} random 4-ply "
              f"openings x 2 colours, seed {seed}, {record.seconds:.0f} s on {where}\n")
    table_start(header, out)
    row = [a, b, str(result.games), str(result.wins), str(result.draws), str(result.losses),
           f"{result.score:.3f}", elo_text(elo, margin)]
    out.write(table_row(row, header) + "\n")
    return 0
