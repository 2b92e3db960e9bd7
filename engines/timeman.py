"""The time manager: how long one move may think, from the limits a GUI sends.

`move_budget_ms` gives the time for this move in milliseconds, or None when nothing bounds the
search by time (no clock and no move time, `infinite`, or `ponder` until the ponder hit).
Clocks are the remaining times as the GUI sends them (cutechess and fastchess add the increment
before the first move; UGI managers do not); `movestogo` is the number of moves to the next time
control, absent for sudden death and increment controls.

Allocation: an even share of the remaining time over the moves still to play (`movestogo`, or
`SUDDEN_DEATH_MOVES` when absent) plus most of the increment, never more than a fixed part of
what is left, so that a slow move cannot flag and a short clock still gets a few milliseconds.

A move's time runs from the arrival of its command (`clock_start`), as the GUI's clock does;
`freeze_long_lived_objects` keeps garbage-collector pauses out of timed moves.

Time use (Stockfish's idea), for a search that deepens on a clock: the budget is then the move's
optimum time, and the hard limit is `MAX_STRETCH` budgets within the same cap of the remaining
time. `TimeUse` decides after each finished depth whether another one is worth starting: not when
it would end past a target time (an unfinished depth is thrown away), its length foretold from
the last depths' growth; the target is the optimum stretched while the best move keeps changing
or the score falls, and shrunk once the best move has stayed the same for several depths.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from typing import Optional

from mallard.engines.base import Limits

SUDDEN_DEATH_MOVES = 25
INCREMENT_SHARE = 0.75
MAX_SHARE = 0.4  # of the remaining time, for one move
LAST_MOVE_SHARE = 0.8  # when the move is the last before the time control
MIN_BUDGET_MS = 5
DEFAULT_MOVE_OVERHEAD_MS = 30  # the `Move Overhead` option's default
RESERVE_OVERHEADS = 5  # move overheads a clock keeps in reserve (150 ms at the default)

MAX_STRETCH = 2.0  # a search managing its time (`TimeUse`) may run to this many budgets
DEPTH_GROWTH = (1.5, 5.0)  # a depth takes this many times the one before, at least and at most
FIRST_GROWTH = 3.0  # ... foretold so while there is no earlier depth to compare with
CHANGE_WEIGHT = 1.0  # the target grows by this much per recent best-move change
SCORE_FALL_SCALE = 200  # a fall of this many score units (centipawns) doubles the target
FALL_FACTORS = (0.6, 1.8)  # the score's factor stays within these
STABLE_DEPTHS = 4  # the same best move for this many depths ...
STABLE_FACTOR = 0.7  # ... shrinks the target by this factor


def move_budget_ms(limits: Limits, side: int, stretch: float = 1.0) -> Optional[int]:
    """Milliseconds the side to move may use for this move; None for an unbounded search.

    `stretch` multiplies the clock's share (not a fixed move time, nor the cap): the hard limit
    of a search that manages its time (`TimeUse`) is the budget at `MAX_STRETCH`."""
    if limits.infinite or limits.ponder:
        return None
    if limits.movetime is not None:
        return max(1, limits.movetime)
    remaining, increment = limits.clock_for(side)
    if remaining is None:
        if limits.wtime is None and limits.btime is None:
            return None
        remaining = 0  # only the opponent's clock was sent: as Stockfish, ours is empty
    remaining = max(0, remaining)
    moves_to_go = limits.movestogo if limits.movestogo and limits.movestogo > 0 else None
    share = ((remaining / (moves_to_go or SUDDEN_DEATH_MOVES) + increment * INCREMENT_SHARE)
             * stretch)
    cap = remaining * (LAST_MOVE_SHARE if moves_to_go == 1 else MAX_SHARE)
    # The floor never exceeds what is left: with the move overhead taken off, a clock near zero
    # leaves nothing to think with, and a fixed floor there drained the clock move after move
    # whenever the increment did not cover the floor plus the overhead.
    return int(max(1, min(MIN_BUDGET_MS, remaining), min(share, cap)))


def after_overhead(limits: Limits, overhead_ms: int) -> Limits:
    """The limits with the GUI's communication overhead (`Move Overhead`) taken off the move
    time once, and off the clocks `RESERVE_OVERHEADS` times (at least 1 ms is left of each).

    The clocks keep a reserve because a clock spent down to one overhead is lost to the first
    reply that comes late (a scheduling stall on a busy machine): at 1+0.01 the duck engine's
    clock settled near 40 ms, and 71 of 200 games were lost on time. With an increment the
    reserve refills itself; without one the engine plays its fastest moves once inside it."""

    def less(value: Optional[int], times: int) -> Optional[int]:
        return None if value is None else max(1, value - overhead_ms * times)

    return dataclasses.replace(limits, wtime=less(limits.wtime, RESERVE_OVERHEADS),
                               btime=less(limits.btime, RESERVE_OVERHEADS),
                               movetime=less(limits.movetime, 1))


def freeze_long_lived_objects() -> None:
    """Take what exists now (the loaded compiled code, hundreds of thousands of objects) out of
    the garbage collector's sight, once a process has loaded it: a full collection walking them
    holds the GIL for 0.1-1 s, and one that falls inside a timed move (the engine's search, or
    the match runner's reading of the reply) makes the move overrun its time."""
    gc.collect()
    gc.freeze()


def clock_start(limits: Limits) -> float:
    """The `time.perf_counter()` instant this move's time runs from: the command's arrival
    when the front-end noted it (what the GUI's clock counts), else now."""
    return limits.started if limits.started is not None else time.perf_counter()


def deadline(limits: Limits, side: int, started: float, stretch: float = 1.0) -> Optional[float]:
    """The `time.perf_counter()` instant at which a search started at `started` must stop
    (`stretch` as for `move_budget_ms`)."""
    budget = move_budget_ms(limits, side, stretch)
    return None if budget is None else started + budget / 1000


class TimeUse:
    """Whether an iterative deepening on a clock starts another depth (see the module
    docstring): told each finished depth's best move and score (from the side to move), with
    the milliseconds gone since the move's time began."""

    def __init__(self, optimum_ms: float, search_started_ms: float = 0.0):
        """`search_started_ms`: when the search began, in the move's time (what came before it,
        reading the command and setting up the position, is no part of the first depth)."""
        self.optimum_ms = optimum_ms
        self.move = None
        self.same_depths = 0  # finished depths in a row with the current best move
        self.changes = 0.0  # best-move changes, each halved at every later depth
        self.average: Optional[float] = None  # of the scores so far, the recent ones weighing most
        self.finished_ms = search_started_ms  # when the last depth finished
        self.last_depth_ms: Optional[float] = None  # how long it took

    def target_ms(self, move, value: int) -> float:
        """Take in a finished depth; the time the move should now take in all."""
        self.changes /= 2
        if self.move is not None and move != self.move:
            self.changes += 1
            self.same_depths = 0
        self.same_depths += 1
        self.move = move
        fall = 0.0 if self.average is None else self.average - value
        self.average = value if self.average is None else (self.average + value) / 2
        low, high = FALL_FACTORS
        falling = min(high, max(low, 1 + fall / SCORE_FALL_SCALE))
        stable = STABLE_FACTOR if self.same_depths >= STABLE_DEPTHS else 1.0
        return self.optimum_ms * (1 + CHANGE_WEIGHT * self.changes) * falling * stable

    def next_depth_ms(self, elapsed_ms: float) -> float:
        """Take in the finish of a depth; how long the next one should take."""
        took = elapsed_ms - self.finished_ms
        low, high = DEPTH_GROWTH
        growth = FIRST_GROWTH if not self.last_depth_ms else \
            min(high, max(low, took / self.last_depth_ms))
        self.finished_ms, self.last_depth_ms = elapsed_ms, max(took, 1e-3)
        return took * growth

    def enough(self, elapsed_ms: float, move, value: int) -> bool:
        """Take in a finished depth; True when the next one would end past the target."""
        return elapsed_ms + self.next_depth_ms(elapsed_ms) > self.target_ms(move, value)
