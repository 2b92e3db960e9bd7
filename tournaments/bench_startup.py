"""`mallard bench startup`: how soon an engine process answers, what only a process can measure.

`uci` -> `readyok` of `mallard uci` subprocesses, as cutechess-cli's handshake sends it: with a
new empty cache (a first run after installing), with the cache it left (warm), cold with the
machine's other core busy, and cold with no prebuilt code; then `stop` -> `bestmove` latency of
a running search. The engine is run as a process (`mallard_command`), its output lines timed as
they arrive; the tables are printed whole on the stream the caller passes (stdout by default).
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
from typing import TextIO

from mallard.engines import compile_cache
from mallard.engines.bench import column_width
from mallard.engines.processes import mallard_command


def _print_table(header, rows, out: TextIO) -> None:
    """A table printed whole, its columns as wide as their widest cell."""
    widths = [max([column_width(i, title)] + [len(row[i]) for row in rows])
              for i, title in enumerate(header)]
    for row in [header, None, *rows]:
        if row is None:
            print("|" + "|".join("-" * (width + 2) for width in widths) + "|", file=out)
        else:
            print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |",
                  file=out)


class _EngineProcess:
    """`mallard <protocol>` as a subprocess, with timed reads of its output lines."""

    def __init__(self, protocol: str, env: dict):
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            mallard_command(protocol), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
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
