"""The time manager: how long one move may think, from the limits a GUI sends.

`move_budget_ms` gives the time for this move in milliseconds, or None when nothing bounds the
search by time (no clock and no move time, `infinite`, or `ponder` until the ponder hit).
Clocks are the remaining times as the GUI sends them (cutechess and fastchess add the increment
before the first move; UGI managers do not); `movestogo` is the number of moves to the next time
control, absent for sudden death and increment controls.

Allocation: an even share of the remaining time over the moves still to play (`movestogo`, or
`SUDDEN_DEATH_MOVES` when absent) plus most of the increment, never more than a fixed part of
what is left, so that a slow move cannot flag and a short clock still gets a few milliseconds.
"""

from __future__ import annotations

from typing import Optional

from engines.base import Limits

SUDDEN_DEATH_MOVES = 25
INCREMENT_SHARE = 0.75
MAX_SHARE = 0.4  # of the remaining time, for one move
LAST_MOVE_SHARE = 0.8  # when the move is the last before the time control
MIN_BUDGET_MS = 5


def move_budget_ms(limits: Limits, side: int) -> Optional[int]:
    """Milliseconds the side to move may use for this move; None for an unbounded search."""
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
    share = remaining / (moves_to_go or SUDDEN_DEATH_MOVES) + increment * INCREMENT_SHARE
    cap = remaining * (LAST_MOVE_SHARE if moves_to_go == 1 else MAX_SHARE)
    return int(max(MIN_BUDGET_MS, min(share, cap)))


def deadline(limits: Limits, side: int, started: float) -> Optional[float]:
    """The `time.perf_counter()` instant at which a search started at `started` must stop."""
    budget = move_budget_ms(limits, side)
    return None if budget is None else started + budget / 1000
