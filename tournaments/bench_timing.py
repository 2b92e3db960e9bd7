"""`mallard bench timing`: does our engine lose on time in our own match runner?

For each variant and time control, `mallard` plays itself through `mallard.tournaments.Match` (UCI,
`-concurrency 2` by default, the default `timemargin` of 0, the engine's default options) and
the table says, per row: games, time losses, the slowest move against the time it was allowed
(the clock's time left before the move, or the fixed move time of `st=`), and the mean and 99th
percentile of each move's overshoot past the engine's own budget (what `mallard.engines.timeman`
gives for the limits the runner sent, `Move Overhead` taken off as the engine does). Move times are
the runner's: from writing `go` to reading `bestmove`, as cutechess-cli measures them.

A clock is replayed from the recorded move times to know what each `go` said; the losing move of
a time loss counts with the time the runner recorded for it. Each row is written (and flushed) as
soon as its games end; the reasons of time losses and other failures follow the table.

`mallard.protocol.cli` dispatches `mallard bench timing` here and checks `--controls` with
`parse_control`. The engine is run as a process (`ENGINE_COMMAND`); the one thing taken from it
in-process is the default `Move Overhead`, to compute the budget the engine gave itself.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from datetime import date
from typing import TextIO

from mallard.engines.base import Limits
from mallard.engines.processes import mallard_command
from mallard.engines.timeman import DEFAULT_MOVE_OVERHEAD_MS, after_overhead, move_budget_ms
from mallard.tournaments import EngineConfig, Match, TimeControl
from mallard.tournaments.records import GameRecord, Termination
from mallard.tournaments.timecontrol import Clock, go_fields

DEFAULT_VARIANTS = ("duck", "cfour")
DEFAULT_CONTROLS = ("tc=1+0.01", "st=0.05")
ENGINE_COMMAND = mallard_command("uci")


def parse_control(text: str) -> TimeControl:
    """`tc=1+0.01` or `st=0.05`, as in `mallard match`."""
    key, sep, value = text.partition("=")
    if not sep or key not in ("tc", "st"):
        raise ValueError(f"'{text}': expected tc=... or st=...")
    return TimeControl.from_settings(**{key: value})


class _FakeTime:
    def __init__(self):
        self.ns = 0

    def __call__(self) -> int:
        return self.ns


def move_timings(record: GameRecord, overhead_ms: int) -> list[tuple[int, int, int]]:
    """(time taken, time allowed, the engine's budget) in ms for every timed move of a game,
    the losing move of a time loss included; the clocks are replayed from the record."""
    tcs = (record.job.white.tc, record.job.black.tc)
    now = _FakeTime()
    clocks = [Clock(tcs[side], now_ns=now) for side in (0, 1)]
    timed = [(ply, move.time_ms) for ply, move in enumerate(record.moves)
             if move.time_ms is not None]
    if record.flag_move_ms is not None:
        timed.append((len(record.moves), record.flag_move_ms))
    first_side = _first_side(record)
    rows = []
    for ply, took_ms in timed:
        side = (first_side + ply) % 2
        clock = clocks[side]
        fields = go_fields(clocks[0], clocks[1], side == 0)
        limits = after_overhead(Limits(**fields), overhead_ms)
        budget = move_budget_ms(limits, side)
        allowed = clock.allowed_ms
        rows.append((took_ms, allowed, budget))
        clock.start()
        now.ns += took_ms * 1_000_000
        clock.stop()
    return rows


def _first_side(record: GameRecord) -> int:
    fields = record.start_fen.split()
    return 1 if len(fields) > 1 and fields[1] == "b" else 0


def run_row(variant: str, control: TimeControl, games: int, concurrency: int) -> dict:
    engines = [EngineConfig(name=name, command=list(ENGINE_COMMAND), protocol="uci", tc=control)
               for name in ("mallard-1", "mallard-2")]
    match = Match(variant, engines, games=games, concurrency=concurrency, seed=1).run()
    overhead = DEFAULT_MOVE_OVERHEAD_MS  # the engines run with the option's default
    taken, ratios, overshoots = [], [], []
    for record in match.records:
        for took, allowed, budget in move_timings(record, overhead):
            taken.append(took)
            if allowed:
                ratios.append(took / allowed)
            if budget is not None:
                overshoots.append(took - budget)
    losses = [record for record in match.records
              if record.termination is Termination.TIME_FORFEIT]
    return {"variant": variant, "tc": control.pgn_tag(), "games": len(match.records),
            "time_losses": len(losses), "moves": len(taken),
            "max_ratio": max(ratios, default=0.0),
            "mean_overshoot": statistics.mean(overshoots) if overshoots else 0.0,
            "p99_overshoot": _percentile(overshoots, 99),
            "loss_reasons": [str(record.reason) for record in losses],
            "other_failures": [str(record.reason) for record in match.records
                               if record.loser_failed is not None
                               and record.termination is not Termination.TIME_FORFEIT]}


def _percentile(values: list[float], percent: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, (len(ordered) * percent) // 100)]


def bench_timing(games: int = 200, variants=DEFAULT_VARIANTS, controls=DEFAULT_CONTROLS,
                 concurrency: int = 2, out: TextIO = sys.stdout) -> int:
    out.write(f"# mallard bench timing: {date.today().isoformat()}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, load average at start "
              f"{os.getloadavg()[0]:.2f}; {games} games per row, -concurrency {concurrency}, "
              "timemargin 0\n")
    out.write("| variant | tc | games | time losses | max move / allowed | "
              "mean overshoot (ms) | p99 overshoot (ms) |\n")
    out.write("|---|---|---|---|---|---|---|\n")
    out.flush()
    rows = []
    for variant in variants:
        for control in controls:
            row = run_row(variant, parse_control(control), games, concurrency)
            rows.append(row)
            out.write(f"| {row['variant']} | {row['tc']} | {row['games']} | "
                      f"{row['time_losses']} | {row['max_ratio']:.2f} | "
                      f"{row['mean_overshoot']:+.1f} | {row['p99_overshoot']:+.0f} |\n")
            out.flush()
    for row in rows:
        for reason in row["loss_reasons"] + row["other_failures"]:
            out.write(f"# {row['variant']} {row['tc']}: {reason}\n")
    out.write(f"# load average at end {os.getloadavg()[0]:.2f}\n")
    return 0
