"""`mallard bench ...`: the benchmark tables (speed targets are met here, never in unit tests).

The engines compute (each game package's `bench` module yields one record per row, see there);
this module prints: Markdown tables whose header lines name the machine and the date, one row
flushed as soon as it is known. It also holds what only a process can measure: the engine's
start-up and stop latency (`bench startup`), and the reference engines run in the same process
tree (Fairy-Stockfish's perft for `duck-perft --reference`).

- `bench connect4`: per test set, positions, correct, mean, median and max time, mean nodes,
  Mnodes/s; with `--reference bitbully` BitBully's time on the same positions in the same run.
- `bench duck-perft`: leaves, correctness, seconds and Mleaves/s per perft; `--reference PATH`
  runs a Fairy-Stockfish binary (built with all=yes) on the same perfts in the same run.
- `bench duck`: the search bench and the enumeration check; `bench duck-match`: self-play.
- `bench uttt`: perft, the prover with and without the critical-board analysis, and how far from
  the end it solves (three tables in their own compact Markdown form).
- `bench` alone: the bench signatures (`mallard.protocol.signature`), Stockfish's form.
"""

from __future__ import annotations

import os
import platform
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from typing import Optional, TextIO

from mallard.engines import compile_cache
from mallard.engines.connect4 import bench as connect4_bench
from mallard.engines.duck import bench as duck_bench
from mallard.engines.processes import mallard_command
from mallard.engines.uttt import bench as uttt_bench
from mallard.engines.workpool import WorkPool
from mallard.protocol.signature import SignatureResult, run_signature


def _machine_line() -> str:
    return (f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, {date.today().isoformat()}\n")


def _format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


MIN_WIDTHS = {"leaves": 13}


def _width(index: int, title: str) -> int:
    return max(len(title), 13 if index == 0 else MIN_WIDTHS.get(title, 10))


def _table_row(row, header) -> str:
    cells = (cell.ljust(_width(i, h)) for i, (cell, h) in enumerate(zip(row, header)))
    return "| " + " | ".join(cells) + " |"


def _separator(header) -> str:
    return "|" + "|".join("-" * (_width(i, h) + 2) for i, h in enumerate(header)) + "|"


def _table_start(header, out: TextIO) -> None:
    out.write(_table_row(header, header) + "\n" + _separator(header) + "\n")


def _print_table(header, rows, out: TextIO) -> None:
    """A table printed whole, its columns as wide as their widest cell."""
    widths = [max([_width(i, title)] + [len(row[i]) for row in rows])
              for i, title in enumerate(header)]
    for row in [header, None, *rows]:
        if row is None:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|", file=out)
        else:
            print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |",
                  file=out)


# --- Connect Four ------------------------------------------------------------------------------

def bench_connect4(sets, limit, use_book, weak, reference, out: TextIO = sys.stdout,
                   threads: int = 1) -> int:
    book = connect4_bench.bench_book(use_book)
    records = connect4_bench.solve_test_sets(sets, limit, book, weak, threads)
    mode = ("weak" if weak else "strong") + (", book" if book is not None else ", no book") + \
        (f", {threads} threads" if threads > 1 else "")
    out.write(f"# mallard bench connect4 ({mode}, fresh table per position)\n")
    out.write(_machine_line())
    header = ["set", "positions", "correct", "mean", "median", "max", "mean nodes", "Mnodes/s"]
    if reference:
        header += ["bitbully mean", "correct", "time ratio"]
    _table_start(header, out)
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
            ref_times, ref_correct = connect4_bench.bitbully_times(record.pairs, weak, use_book)
            row += [_format_time(statistics.mean(ref_times)), str(ref_correct),
                    f"{total_time / sum(ref_times):.2f}"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0


# --- Duck Chess perft --------------------------------------------------------------------------

class _UciPerft:
    """A Fairy-Stockfish process answering `go perft` for the duck variant."""

    def __init__(self, path: str):
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

    def perft(self, fen: Optional[str], depth: int) -> tuple[int, float]:
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
    timings = duck_bench.time_perfts()
    out.write("# mallard bench duck-perft (bulk: the last ply is counted from the piece moves)\n")
    out.write(_machine_line())
    header = ["position", "depth", "bulk", "leaves", "correct", "seconds", "Mleaves/s"]
    engine = None
    if reference:
        header += ["reference s", "speed-up"]
        engine = _UciPerft(reference)
    _table_start(header, out)
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
        out.write(_table_row(cells, header) + "\n")
        out.flush()
    if engine is not None:
        engine.close()
    return 1 if failures else 0


# --- Duck Chess search -------------------------------------------------------------------------

def bench_duck(depth: int, enumeration_depths, enumeration_positions: int,
               out: TextIO = sys.stdout) -> int:
    records = duck_bench.search_bench(depth)
    out.write(f"# mallard bench duck: depth {depth}, quiescence on, fresh "
              f"{duck_bench.BENCH_HASH_MB} MB table per position\n")
    out.write(_machine_line())
    header = ["position", "best move", "score", "nodes", "seconds", "knodes/s"]
    _table_start(header, out)
    total_nodes, total_time = 0, 0.0
    for record in records:
        total_nodes += record.nodes
        total_time += record.seconds
        row = [str(record.index), record.best_move, str(record.score), f"{record.nodes:,}",
               f"{record.seconds:.3f}", f"{record.nodes / record.seconds / 1e3:,.0f}"]
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
    _table_start(header, out)
    failures = 0
    for record in duck_bench.enumeration_bench(enumeration_depths, enumeration_positions):
        failures += record.positions - record.equal
        row = [str(record.depth), str(record.positions), str(record.equal),
               f"{record.enumeration_nodes:,}", f"{record.exception_nodes:,}",
               f"{record.enumeration_nodes / max(1, record.exception_nodes):,.1f}",
               f"{record.enumeration_seconds:.2f}", f"{record.exception_seconds:.2f}"]
        out.write(_table_row(row, header) + "\n")
        out.flush()
    return 1 if failures else 0


def bench_threads(variants, movetime_ms: int, max_threads: int,
                  out: TextIO = sys.stdout) -> int:
    """Each variant's bench positions searched for `movetime_ms` each with 1 to `max_threads`
    threads (a fresh table per position): depth reached and nodes per second; then the time
    each thread count takes to the depths one thread reached (time to depth, the speed-up)."""
    from mallard.engines import find_game
    from mallard.engines.base import Limits

    out.write(f"# mallard bench threads: {movetime_ms} ms per position, fresh table each; "
              "then the time to the depths 1 thread reached\n")
    out.write(_machine_line())
    header = ["variant", "threads", "positions", "depths", "mean depth", "nodes", "knodes/s",
              "x 1 thread", "s to depths", "time speed-up"]
    _table_start(header, out)
    for variant in variants:
        entry = find_game(variant)
        game = entry.new_game()
        positions = [game.parse_position(text) for text in entry.bench().positions]
        single_rate = single_time = None
        goals = None  # the depths one thread reached
        for threads in range(1, max_threads + 1):
            searcher = entry.new_searcher(game)
            searcher.set_threads(threads)
            searcher.search(positions[0], Limits(depth=2))  # code loaded, helpers included

            def fresh_search(position, limits):
                """The result of a search with a cleared table, and the seconds it took."""
                searcher.clear()
                started = time.perf_counter()
                result = searcher.search(position, limits)
                return result, time.perf_counter() - started

            depths, nodes, seconds = [], 0, 0.0
            for position in positions:
                result, took = fresh_search(position, Limits(movetime=movetime_ms))
                seconds += took
                depths.append(result.depth)
                nodes += result.nodes
            goals = goals or depths
            to_depths = sum(fresh_search(position, Limits(depth=max(1, depth)))[1]
                            for position, depth in zip(positions, goals))
            rate = nodes / seconds
            single_rate = single_rate or rate
            single_time = single_time or to_depths
            row = [variant, str(threads), str(len(positions)), " ".join(map(str, depths)),
                   f"{statistics.mean(depths):.1f}", f"{nodes:,}", f"{rate / 1e3:,.0f}",
                   f"{rate / single_rate:.2f}", f"{to_depths:.2f}",
                   f"{single_time / max(1e-6, to_depths):.2f}"]
            out.write(_table_row(row, header) + "\n")
            out.flush()
    return 0


def bench_duck_match(a: str, b: str, pairs: int, nodes: int, seed: int, pool: WorkPool,
                     where: str, out: TextIO = sys.stdout) -> int:
    """Self-play on `pool`; `where` says where that is (printed in the table's title)."""
    record = duck_bench.self_play(a, b, pairs, nodes, seed, pool)
    result = record.result
    elo, margin = result.elo()
    header = ["A", "B", "games", "A wins", "draws", "A losses", "A score", "Elo (95%)"]
    out.write(f"# mallard bench duck-match: {nodes} nodes per move, {pairs} random 4-ply "
              f"openings x 2 colours, seed {seed}, {record.seconds:.0f} s on {where}\n")
    _table_start(header, out)
    row = [a, b, str(result.games), str(result.wins), str(result.draws), str(result.losses),
           f"{result.score:.3f}", f"{elo:+.0f} +- {margin:.0f}"]
    out.write(_table_row(row, header) + "\n")
    return 0


# --- Ultimate Tic-Tac-Toe: compact tables ------------------------------------------------------

def _uttt_header(title: str, out: TextIO) -> None:
    out.write(f"# {title}\n")
    out.write(_machine_line())


def _compact_row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _compact_table_start(header, out: TextIO) -> None:
    out.write(_compact_row(header) + "\n" + "|" + "|".join("---" for _ in header) + "|\n")


def _rate(count: float, seconds: float, unit: float) -> str:
    return f"{count / seconds / unit:,.1f}" if seconds > 0 else "-"


def _uttt_perft(out: TextIO) -> int:
    timings = uttt_bench.time_perfts()
    _uttt_header("mallard bench uttt: perft (finished games are leaves; the last ply is counted)",
                 out)
    _compact_table_start(["position", "depth", "leaves", "correct", "seconds", "Mleaves/s"], out)
    failures = 0
    for timing in timings:
        row = timing.row
        if timing.correct is None:
            verdict = "-"
        else:
            verdict = "yes" if timing.correct else f"NO ({row.expected:,})"
            failures += not timing.correct
        out.write(_compact_row([row.label, str(row.depth), f"{timing.leaves:,}", verdict,
                                f"{timing.seconds:.3f}",
                                _rate(timing.leaves, timing.seconds, 1e6)]) + "\n")
        out.flush()
    return failures


def _uttt_prover(positions: int, limit: float, seed: int, out: TextIO) -> int:
    comparisons = uttt_bench.compare_prover(positions, limit, seed)
    out.write("\n")
    _uttt_header(f"mallard bench uttt: df-pn with / without the critical-board analysis; "
                 f"{positions} random positions with <= {uttt_bench.LATE_OPEN_CELLS} open cells "
                 f"(seed {seed}), limit {limit:g} s per solve, fresh {uttt_bench.HASH_MB} MB "
                 "table", out)
    header = ["position", "open", "value", "crit nodes", "crit s", "crit knodes/s",
              "crit proof", "plain nodes", "plain s", "plain knodes/s", "plain proof",
              "node ratio"]
    _compact_table_start(header, out)
    failures = 0
    totals = [[0, 0.0], [0, 0.0]]  # (nodes, seconds) with and without the critical analysis
    for comparison in comparisons:
        cells = [comparison.label, str(comparison.open_cells)]
        if comparison.agree:
            cells.append(comparison.value)
        else:
            failures += 1
            cells.append("DISAGREE " + "/".join(o.text for o in comparison.outcomes))
        for total, outcome in zip(totals, comparison.outcomes):
            nodes = f"{outcome.nodes:,}" + ("" if outcome.value is not None else " (limit)")
            proof = f"{outcome.proof_size:,}" if outcome.proof_size >= 0 else "-"
            cells += [nodes, f"{outcome.search_seconds:.3f}",
                      _rate(outcome.nodes, outcome.search_seconds, 1e3), proof]
            total[0] += outcome.nodes
            total[1] += outcome.search_seconds
        both = all(outcome.value is not None for outcome in comparison.outcomes)
        cells.append(f"{comparison.plain.nodes / max(1, comparison.critical.nodes):.2f}"
                     if both else "-")
        out.write(_compact_row(cells) + "\n")
        out.flush()
    cells = ["total", "", ""]
    for nodes, seconds in totals:
        cells += [f"{nodes:,}", f"{seconds:.2f}", _rate(nodes, seconds, 1e3), ""]
    cells.append(f"{totals[1][0] / max(1, totals[0][0]):.2f}")
    out.write(_compact_row(cells) + "\n")
    return failures


def _uttt_plies_before_end(positions: int, limit: float, seed: int, out: TextIO) -> None:
    rows = uttt_bench.plies_before_end(positions, limit, seed)
    out.write("\n")
    _uttt_header(f"mallard bench uttt: positions k plies before the end of {positions} random "
                 f"games (seed {seed}), solved within {limit:g} s? (critical analysis on)", out)
    header = ["k", "positions", "solved", "fraction", "X wins", "draws", "O wins",
              "median s (solved)", "max s (solved)", "mean open cells"]
    _compact_table_start(header, out)
    for row in rows:
        seconds = row.seconds
        out.write(_compact_row([
            str(row.plies), str(row.positions), str(row.solved),
            f"{row.solved / row.positions:.2f}", str(row.values.count("X wins")),
            str(row.values.count("draw")), str(row.values.count("O wins")),
            f"{statistics.median(seconds):.2f}" if seconds else "-",
            f"{max(seconds):.2f}" if seconds else "-",
            f"{statistics.mean(row.open_cells):.1f}"]) + "\n")
        out.flush()


def _uttt_prover_threads(positions: int, limit: float, seed: int, threads: int,
                         out: TextIO) -> int:
    rows = uttt_bench.prover_threads(positions, limit, seed, threads)
    out.write("\n")
    _uttt_header(f"mallard bench uttt: the prover with 1 and {threads} threads; positions k plies "
                 f"before the end of the games above, limit {limit:g} s per solve", out)
    many = f"{threads} threads"
    header = ["k", "game", "open", "value", "1 thread s", "1 thread nodes", f"{many} s",
              f"{many} nodes", "speed-up"]
    _compact_table_start(header, out)
    failures = 0
    solved = [0.0, 0.0]
    speedups = []
    for row in rows:
        cells = [str(row.plies), str(row.game), str(row.open_cells)]
        if not row.agree:
            failures += 1
            cells.append(f"DISAGREE {row.single.text}/{row.parallel.text}")
        else:
            cells.append(row.single.text if row.single.value is not None else row.parallel.text)
        for outcome in (row.single, row.parallel):
            cells += [f"{outcome.search_seconds:.2f}" if outcome.value is not None else "limit",
                      f"{outcome.nodes:,}"]
        if row.single.value is not None and row.parallel.value is not None:
            solved[0] += row.single.search_seconds
            solved[1] += row.parallel.search_seconds
            speedup = row.single.search_seconds / max(1e-6, row.parallel.search_seconds)
            speedups.append(speedup)
            cells.append(f"{speedup:.2f}")
        else:
            cells.append("-")
        out.write(_compact_row(cells) + "\n")
        out.flush()
    if speedups:
        out.write(_compact_row([
            "both solved", str(len(speedups)), "", "", f"{solved[0]:.2f}", "", f"{solved[1]:.2f}",
            "", f"{solved[0] / max(1e-6, solved[1]):.2f} in total, median "
            f"{statistics.median(speedups):.2f}"]) + "\n")
    return failures


def bench_uttt(positions: int = 5, limit: float = 10.0, seed: int = 1, threads: int = 1,
               out: TextIO = sys.stdout) -> int:
    failures = _uttt_perft(out)
    failures += _uttt_prover(positions, limit, seed, out)
    _uttt_plies_before_end(positions, limit, seed, out)
    if threads > 1:
        failures += _uttt_prover_threads(positions, limit, seed, threads, out)
    return 1 if failures else 0


# --- the bench signatures ----------------------------------------------------------------------

def bench_signatures(variants, out: Optional[TextIO] = None,
                     err: Optional[TextIO] = None) -> int:
    """Stockfish's `bench`: `<variant>: Nodes searched: N` per game, then the total, on `out`
    (stdout); the time and speed of each game on `err` (stderr), as Stockfish reports them."""
    out, err = out or sys.stdout, err or sys.stderr
    results: list[SignatureResult] = []
    for variant in variants:
        result = run_signature(variant)
        results.append(result)
        err.write(f"{result.variant}: {result.positions} positions at depth {result.depth}, "
                  f"{result.seconds:.2f} s, {_rate(result.nodes, result.seconds, 1e3)} "
                  "knodes/s\n")
        err.flush()
        out.write(f"{result.variant}: Nodes searched: {result.nodes}\n")
        out.flush()
    nodes = sum(result.nodes for result in results)
    seconds = sum(result.seconds for result in results)
    err.write(f"Total time (ms): {seconds * 1000:.0f}, nodes/second: "
              f"{nodes / seconds if seconds > 0 else 0:.0f}\n")
    out.write(f"Nodes searched: {nodes}\n")
    return 0


# --- the engine process: start-up and stop latency ---------------------------------------------

class _EngineProcess:
    """`mallard <protocol>` as a subprocess, with timed reads of its output lines."""

    def __init__(self, protocol: str, env: dict):
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            mallard_command(protocol), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
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
    """`uci` -> `readyok` with a new empty cache (a first run after installing: the code compiled
    when the package was built is copied in, the book is converted), with the cache it left
    (warm), cold again with the other core busy, and cold with no prebuilt code (every kernel
    compiled on first use, as before issue 14); then `stop` -> `bestmove` latency."""
    header = ["run", "variant", "uciok (ms)", "uci -> readyok (s)",
              f"within {CUTECHESS_PING_TIMEOUT:.0f} s", "first go (ms)"]
    rows = []
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    prebuilt = compile_cache.has_prebuilt_code()
    cold = "cold (prebuilt code)" if prebuilt else "cold (no prebuilt code: not installed by pip)"
    for variant in STARTUP_VARIANTS:
        with tempfile.TemporaryDirectory() as cache:
            rows.append(_startup_row(cold, variant, _cache_env(cache)))
            rows.append(_startup_row("warm", variant, _cache_env(cache)))
    for variant in STARTUP_VARIANTS:
        with tempfile.TemporaryDirectory() as cache, _BusyCore():
            rows.append(_startup_row(cold + ", a core busy", variant, _cache_env(cache)))
    if prebuilt:
        for variant in STARTUP_VARIANTS:
            with tempfile.TemporaryDirectory() as cache:
                env = {**_cache_env(cache), compile_cache.NO_PREBUILT: "1"}
                rows.append(_startup_row("cold, compiling everything", variant, env))
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
