"""The time manager's arithmetic at the edges: the move overhead and the clock's reserve."""

from __future__ import annotations

from engines.base import Limits
from engines.timeman import after_overhead, clock_start, move_budget_ms


def test_the_overhead_comes_off_a_move_time_once_and_off_clocks_five_times():
    limits = after_overhead(Limits(movetime=50, wtime=1000, btime=400, winc=10), 30)
    assert (limits.movetime, limits.wtime, limits.btime, limits.winc) == (20, 850, 250, 10)
    assert after_overhead(Limits(movetime=20, wtime=100), 30).movetime == 1
    assert after_overhead(Limits(movetime=20, wtime=100), 30).wtime == 1


def test_a_clock_inside_its_reserve_moves_at_once_and_refills_from_the_increment():
    # 140 ms left at +10 ms: inside the 150 ms reserve, so 1 ms, not a fixed floor of 5 ms
    assert move_budget_ms(after_overhead(Limits(wtime=140, winc=10), 30), 0) == 1
    # above it, a share of what is left over the reserve plus most of the increment
    assert move_budget_ms(after_overhead(Limits(wtime=400, winc=10), 30), 0) == \
        int((400 - 150) / 25 + 0.75 * 10)


def test_a_move_time_runs_from_the_command_arrival_when_known():
    assert clock_start(Limits(movetime=50, started=12.5)) == 12.5
    assert clock_start(Limits(movetime=50)) > 0
