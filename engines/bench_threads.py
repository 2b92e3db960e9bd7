"""`mallard bench threads`: search speed and depth with 1 to N threads, every variant's bench
positions searched in this process (each `GameEntry.bench()`'s), a fresh table per position.

A module of its own, beside the registry rather than in `mallard.engines.bench`: it reads the
registry (`find_game`), which imports every game package, and the games' bench modules import
`mallard.engines.bench`. The table goes to the stream the caller passes, a row as soon as a
thread count of a variant is done.
"""

from __future__ import annotations

import statistics
import time
from typing import TextIO

from mallard.engines import find_game
from mallard.engines.base import Limits
from mallard.engines.bench import machine_line, table_row, table_start


def bench_threads(variants, movetime_ms: int, max_threads: int,
                  out: TextIO) -> int:
    """Each variant's bench positions searched for `movetime_ms` each with 1 to `max_threads`
    threads (a fresh table per position): depth reached and nodes per second; then the time
    each thread count takes to the depths one thread reached (time to depth, the speed-up)."""
    out.write(f"# mallard bench threads: {movetime_ms} ms per position, fresh table each; "
              "then the time to the depths 1 thread reached\n")
    out.write(machine_line())
    header = ["variant", "threads", "positions", "depths", "mean depth", "nodes", "knodes/s",
              "x 1 thread", "s to depths", "time speed-up"]
    table_start(header, out)
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
            out.write(table_row(row, header) + "\n")
            out.flush()
    return 0
