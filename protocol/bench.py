"""`mallard bench ...`: benchmark tables (speed targets are met here, never in unit tests).

`bench duck-perft` times Duck Chess perft (startpos depth 3, reference row 3 at depths 2 and
3, bulk counting at the last ply; startpos depth 3 also without it); `--reference PATH` runs a
Fairy-Stockfish binary (built with all=yes) on the same perfts in the same run.

`bench connect4` solves the public test sets through the Python API with a fresh table per
position and prints, per set: positions, correct, mean, median and max time, mean nodes, Mnodes/s;
with `--reference bitbully` it times BitBully's MTD(f) on the same positions in the same run.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from datetime import date
from typing import TextIO

from engines.connect4.book import default_book
from engines.connect4.rules import Connect4Game
from engines.connect4.solver import Solver
from engines.connect4.testsets import load

DEFAULT_LIMITS = {"Begin-Hard": 100}


def _format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _bitbully_times(pairs, weak: bool, use_book: bool):
    try:
        from bitbully import bitbully_core
    except ImportError:
        raise SystemExit("--reference bitbully needs the `bitbully` package: pip install '.[bench]'")
    solver = bitbully_core.BitBullyCore()
    if use_book:
        from bitbully_databases import BitBullyDatabases

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


def bench_connect4(sets, limit, use_book, weak, reference, out: TextIO = sys.stdout) -> int:
    game = Connect4Game()
    book = default_book(7, 6) if use_book else None
    solver = Solver(book=book)
    warm = game.parse_sequence("2252576253462244111563365343671351441")
    solver.solve(warm)  # compile (or load the numba cache) outside the timings
    mode = ("weak" if weak else "strong") + (", book" if book is not None else ", no book")
    out.write(f"# mallard bench connect4 ({mode}, fresh table per position)\n")
    out.write(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, {date.today().isoformat()}\n")
    header = ["set", "positions", "correct", "mean", "median", "max", "mean nodes", "Mnodes/s"]
    if reference:
        header += ["bitbully mean", "correct", "time ratio"]
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")
    failures = 0
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
        failures += len(pairs) - correct
        total_time = sum(times)
        row = [name, str(len(pairs)), str(correct), _format_time(statistics.mean(times)),
               _format_time(statistics.median(times)), _format_time(max(times)),
               f"{statistics.mean(nodes):,.0f}",
               f"{sum(nodes) / total_time / 1e6:.2f}" if total_time else "-"]
        if reference:
            ref_times, ref_correct = _bitbully_times(pairs, weak, use_book)
            row += [_format_time(statistics.mean(ref_times)), str(ref_correct),
                    f"{total_time / sum(ref_times):.2f}"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0


MIN_WIDTHS = {"leaves": 13}


def _width(index: int, title: str) -> int:
    return max(len(title), 13 if index == 0 else MIN_WIDTHS.get(title, 10))


def _table_row(row, header) -> str:
    return "| " + " | ".join(cell.ljust(_width(i, h)) for i, (cell, h) in enumerate(zip(row, header))) + " |"


def _separator(header) -> str:
    return "|" + "|".join("-" * (_width(i, h) + 2) for i, h in enumerate(header)) + "|"


def _print_table(header, rows, out: TextIO) -> None:
    print(_table_row(header, header), file=out)
    print(_separator(header), file=out)
    for row in rows:
        print(_table_row(row, header), file=out)


# --- Duck Chess perft ------------------------------------------------------------------------

DUCK_PERFT_ROWS = [
    # (label, FEN or None for the start position, depth, bulk, expected leaves)
    ("startpos", None, 3, True, 249921262),
    ("row 3", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     2, True, 1771254),
    ("row 3", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     3, True, 2572846482),
    ("startpos", None, 3, False, 249921262),
]


class _UciPerft:
    """A Fairy-Stockfish process answering `go perft` for the duck variant."""

    def __init__(self, path: str):
        import subprocess

        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        self._send("uci")
        self._wait("uciok")
        self._send("setoption name UCI_Variant value duck")
        self._send("isready")
        self._wait("readyok")

    def _send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def _wait(self, prefix: str) -> str:
        for line in self.process.stdout:
            if line.startswith(prefix):
                return line
        raise RuntimeError(f"the reference engine ended before '{prefix}'")

    def perft(self, fen, depth: int) -> tuple[int, float]:
        self._send(f"position fen {fen}" if fen else "position startpos")
        self._send("isready")
        self._wait("readyok")
        started = time.perf_counter()
        self._send(f"go perft {depth}")
        line = self._wait("Nodes searched")
        return int(line.split(":")[1]), time.perf_counter() - started

    def close(self) -> None:
        self._send("quit")
        self.process.wait(timeout=10)


def bench_duck_perft(reference=None, out: TextIO = sys.stdout) -> int:
    from engines.duck.rules import DuckGame

    game = DuckGame()
    game.start_position().perft(2)  # compile (or load the numba cache) outside the timings
    out.write("# mallard bench duck-perft (bulk: the last ply is counted from the piece moves)\n")
    out.write(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, {date.today().isoformat()}\n")
    header = ["position", "depth", "bulk", "leaves", "correct", "seconds", "Mleaves/s"]
    engine = None
    if reference:
        header += ["reference s", "speed-up"]
        engine = _UciPerft(reference)
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")
    failures = 0
    for label, fen, depth, bulk, expected in DUCK_PERFT_ROWS:
        position = game.parse_position(fen) if fen else game.start_position()
        started = time.perf_counter()
        leaves = position.perft(depth, bulk)
        seconds = time.perf_counter() - started
        failures += leaves != expected
        row = [label, str(depth), "yes" if bulk else "no", f"{leaves:,}",
               "yes" if leaves == expected else f"NO ({expected:,})", f"{seconds:.3f}",
               f"{leaves / seconds / 1e6:,.0f}"]
        if engine is not None:
            ref_leaves, ref_seconds = engine.perft(fen, depth)
            failures += ref_leaves != expected
            row += [f"{ref_seconds:.3f}", f"{ref_seconds / seconds:.1f}x"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    if engine is not None:
        engine.close()
    return 1 if failures else 0


# --- Duck Chess search -----------------------------------------------------------------------

DUCK_BENCH_FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/ppp1*ppp/4pn2/3p2B1/3PP3/2N5/PPP2PPP/R2QKBNR b KQkq - 1 4",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/1P4p1/8/2pP3*/8/8/6p1/R3K2R w KQkq c6 0 1",
    "rnbqkbnr/ppp1p1pp/*7/8/3pPp2/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
    "4k3/8/8/3*4/8/8/4P3/4K2R w K - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP2PPP/R2Q1RK1 w - - 2 8",
    "3bkb2/3r1r2/R7/8/8/8/8/7K w - - 0 1",
    "8/2k5/3p4/p2P1p2/P2P1P2/8/3K4/8 w - - 0 40",
]


def bench_duck(depth: int, enumeration_depths, enumeration_positions: int,
               out: TextIO = sys.stdout) -> int:
    from engines.base import Limits
    from engines.duck.rules import DuckGame
    from engines.duck.searcher import (DuckSearcher, SearchBuffers, enumeration_value,
                                       exception_value)

    game = DuckGame()
    positions = [game.parse_position(fen) for fen in DUCK_BENCH_FENS]
    searcher = DuckSearcher(game, hash_mb=64)
    searcher.search(positions[0], Limits(depth=2))  # compile outside the timings
    out.write(f"# mallard bench duck: depth {depth}, quiescence on, fresh 64 MB table per "
              "position\n")
    out.write(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, {date.today().isoformat()}\n")
    header = ["position", "best move", "score", "nodes", "seconds", "knodes/s"]
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")
    total_nodes, total_time = 0, 0.0
    for index, position in enumerate(positions, 1):
        searcher.clear()
        started = time.perf_counter()
        result = searcher.search(position, Limits(depth=depth))
        seconds = time.perf_counter() - started
        total_nodes += result.nodes
        total_time += seconds
        row = [str(index), position.format_move(result.best_move), str(result.score),
               f"{result.nodes:,}", f"{seconds:.3f}", f"{result.nodes / seconds / 1e3:,.0f}"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    out.write(_table_row(["total", "", "", f"{total_nodes:,}", f"{total_time:.3f}",
                          f"{total_nodes / total_time / 1e3:,.0f}"], header) + "\n")
    out.write(f"\nbench signature (total nodes): {total_nodes}\n")
    if not enumeration_depths:
        return 0
    out.write(f"\n# full enumeration against the exception search, first {enumeration_positions}"
              " positions, no quiescence, fixed depth, values compared\n")
    header = ["depth", "positions", "equal", "enumeration", "exception", "node ratio",
              "enum s", "exc s"]
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")
    buffers = SearchBuffers(64)
    failures = 0
    for enum_depth in enumeration_depths:
        equal = plain_nodes = fast_nodes = 0
        plain_time = fast_time = 0.0
        for position in positions[:enumeration_positions]:
            started = time.perf_counter()
            fast, nodes = exception_value(position, enum_depth, False, 0, buffers)
            fast_time += time.perf_counter() - started
            fast_nodes += nodes
            started = time.perf_counter()
            plain, nodes = enumeration_value(position, enum_depth, False, 0)
            plain_time += time.perf_counter() - started
            plain_nodes += nodes
            equal += fast == plain
        failures += enumeration_positions - equal
        row = [str(enum_depth), str(enumeration_positions), str(equal), f"{plain_nodes:,}",
               f"{fast_nodes:,}", f"{plain_nodes / max(1, fast_nodes):,.1f}",
               f"{plain_time:.2f}", f"{fast_time:.2f}"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0


def bench_duck_match(a: str, b: str, pairs: int, nodes: int, jobs: int, seed: int,
                     out: TextIO = sys.stdout) -> int:
    from engines.duck.selfplay import match, parse_terms

    terms_a, terms_b = parse_terms(a), parse_terms(b)
    started = time.perf_counter()
    result = match(terms_a, terms_b, pairs, nodes, seed=seed, jobs=jobs)
    elo, margin = result.elo()
    header = ["A", "B", "games", "A wins", "draws", "A losses", "A score", "Elo (95%)"]
    out.write(f"# mallard bench duck-match: {nodes} nodes per move, {pairs} random 4-ply "
              f"openings x 2 colours, seed {seed}, {time.perf_counter() - started:.0f} s\n")
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")
    row = [a, b, str(result.games), str(result.wins), str(result.draws), str(result.losses),
           f"{result.score:.3f}", f"{elo:+.0f} +- {margin:.0f}"]
    out.write(_table_row(row, header) + "\n")
    return 0


# --- the engine process: start-up and stop latency ---------------------------------------------

class _EngineProcess:
    """`mallard <protocol>` as a subprocess, with timed reads of its output lines."""

    def __init__(self, protocol: str, env: dict):
        import queue
        import subprocess
        import threading

        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from protocol.cli import main; sys.exit(main())",
             protocol], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, env=env)
        self.lines: "queue.Queue" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put((time.perf_counter(), line.rstrip("\n")))
        self.lines.put((time.perf_counter(), None))

    def send(self, text: str) -> float:
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        return time.perf_counter()

    def until(self, prefix: str, timeout: float = 600.0) -> float:
        """The instant the first line starting with `prefix` arrived."""
        deadline = time.perf_counter() + timeout
        while True:
            at, line = self.lines.get(timeout=max(0.001, deadline - time.perf_counter()))
            if line is None:
                raise RuntimeError(f"the engine ended before '{prefix}'")
            if line.startswith(prefix):
                return at

    def close(self) -> None:
        try:
            self.send("quit")
        except OSError:
            pass
        self.process.wait(10)


STARTUP_VARIANTS = ("duck", "cfour", "uttt")
CUTECHESS_PING_TIMEOUT = 15.0  # s: cutechess-cli drops an engine that answers isready later


def _startup_row(label: str, variant: str, env: dict) -> list:
    """A GUI's handshake as cutechess-cli sends it: `uci`, the variant, `isready`, then a move."""
    engine = _EngineProcess("uci", env)
    sent = engine.send("uci")
    uciok = engine.until("uciok") - engine.started
    if variant != "duck":
        engine.send(f"setoption name UCI_Variant value {variant}")
    engine.send("isready")
    ready = engine.until("readyok") - sent
    sent = engine.send("go depth 1" if variant != "cfour" else "go movetime 100")
    first_move = engine.until("bestmove") - sent
    engine.close()
    verdict = "yes" if ready < CUTECHESS_PING_TIMEOUT else "no"
    return [label, variant, f"{uciok * 1000:.0f}", f"{ready:.2f}", verdict,
            f"{first_move * 1000:.0f}"]


def _cache_env(cache: str) -> dict:
    """The environment of an engine whose every cache (compiled code, converted book) is
    `cache`: a new empty one is a first run after installing."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["MALLARD_CACHE"] = cache
    return env


class _BusyCore:
    """A process spinning on one core for the duration (the machine's other core busy)."""

    def __enter__(self):
        import subprocess

        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def _stop_latency(variant: str, position: str, env: dict, rounds: int) -> list[float]:
    engine = _EngineProcess("uci", env)
    engine.send("uci")
    engine.send(f"setoption name UCI_Variant value {variant}")
    engine.send("setoption name OwnBook value false")
    engine.send("isready")
    engine.until("readyok")
    latencies = []
    for _ in range(rounds):
        engine.send(position)
        engine.send("go infinite")
        time.sleep(0.3)
        sent = engine.send("stop")
        latencies.append((engine.until("bestmove") - sent) * 1000)
    engine.close()
    return latencies


def bench_startup(rounds: int = 10, out: TextIO = sys.stdout) -> int:
    """`uci` -> `readyok` with a new empty cache (cold: the selected game compiles and the book
    is converted, as on a first run after installing), with the cache it left (warm), and cold
    again with the other core busy; then `stop` -> `bestmove` latency."""
    import tempfile

    header = ["run", "variant", "uciok (ms)", "uci -> readyok (s)",
              f"within {CUTECHESS_PING_TIMEOUT:.0f} s", "first go (ms)"]
    rows = []
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for variant in STARTUP_VARIANTS:
        with tempfile.TemporaryDirectory() as cache:
            rows.append(_startup_row("cold", variant, _cache_env(cache)))
            rows.append(_startup_row("warm", variant, _cache_env(cache)))
    for variant in STARTUP_VARIANTS:
        with tempfile.TemporaryDirectory() as cache, _BusyCore():
            rows.append(_startup_row("cold, a core busy", variant, _cache_env(cache)))
    print(f"Engine start-up, {date.today()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, load average "
          f"{load:.2f} at the start", file=out)
    _print_table(header, rows, out)
    print(file=out)
    header = ["variant", "searches", "stop -> bestmove mean (ms)", "max (ms)"]
    rows = []
    positions = {"duck": "position startpos moves e2e4,e4e5",
                 "cfour": "position startpos"}  # 7x6 from the start, no book: never solved in 0.3 s
    for variant, position in positions.items():
        latencies = _stop_latency(variant, position, dict(os.environ), rounds)
        rows.append([variant, str(rounds), f"{statistics.mean(latencies):.1f}",
                     f"{max(latencies):.1f}"])
    _print_table(header, rows, out)
    return 0
