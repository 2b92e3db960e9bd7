"""The time manager's arithmetic at the edges (the move overhead, the clock's reserve, the
stretched hard limit) and its time use: when a deepening stops starting new depths."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from mallard.engines.base import Limits, Score
from mallard.engines.driver import HELPERS_FROM_DEPTH, RootSearch, deepen
from mallard.engines.timeman import (
    FALL_FACTORS,
    MAX_STRETCH,
    SCORE_FALL_SCALE,
    STABLE_DEPTHS,
    STABLE_FACTOR,
    TimeUse,
    after_overhead,
    clock_start,
    move_budget_ms,
)


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


def test_movestogo_shares_the_clock_over_the_moves_left_and_the_last_one_keeps_a_fifth():
    # 40 moves in 60 s, 10 to go: a tenth of the clock (sudden death would give a 25th)
    assert move_budget_ms(Limits(wtime=60_000, btime=1_000, movestogo=10), 0) == 6_000
    assert move_budget_ms(Limits(wtime=1_000, btime=60_000, movestogo=10), 1) == 6_000
    assert move_budget_ms(Limits(wtime=60_000), 0) == 60_000 // 25
    # the last move before the control may use 80% of the clock, not all of it, nor 40%
    assert move_budget_ms(Limits(wtime=60_000, movestogo=1), 0) == 48_000
    assert move_budget_ms(Limits(wtime=60_000, movestogo=2), 0) == 24_000
    # movestogo 0 (sent by some GUIs after the control) reads as absent
    assert move_budget_ms(Limits(wtime=60_000, movestogo=0), 0) == 60_000 // 25


def test_a_move_time_runs_from_the_command_arrival_when_known():
    assert clock_start(Limits(movetime=50, started=12.5)) == 12.5
    assert clock_start(Limits(movetime=50)) > 0


def test_a_stretched_budget_stays_within_the_cap_and_a_move_time_is_not_stretched():
    assert move_budget_ms(Limits(wtime=10_000), 0, MAX_STRETCH) == int(10_000 / 25 * MAX_STRETCH)
    assert move_budget_ms(Limits(wtime=10_000, winc=5_000), 0, MAX_STRETCH) == 4_000  # 40%
    assert move_budget_ms(Limits(movetime=300, wtime=10_000), 0, MAX_STRETCH) == 300


def test_a_best_move_that_stays_shrinks_the_target_and_one_that_changes_stretches_it():
    stable = TimeUse(1000)
    targets = [stable.target_ms("e2e4", 30) for _ in range(STABLE_DEPTHS)]
    assert targets[:-1] == [1000] * (STABLE_DEPTHS - 1)
    assert targets[-1] == 1000 * STABLE_FACTOR
    changing = TimeUse(1000)
    changing.target_ms("e2e4", 30)
    assert changing.target_ms("d2d4", 30) == 2000  # one change just now: twice the time
    assert changing.target_ms("d2d4", 30) == 1500  # and it fades by half at each depth


def test_a_falling_score_stretches_the_target_within_its_bounds():
    low, high = FALL_FACTORS
    falling = TimeUse(1000)
    falling.target_ms("e2e4", 100)
    assert falling.target_ms("e2e4", 100 - SCORE_FALL_SCALE // 2) == 1500
    assert falling.target_ms("e2e4", -10_000) == 1000 * high
    rising = TimeUse(1000)
    rising.target_ms("e2e4", 0)
    assert rising.target_ms("e2e4", 10_000) == 1000 * low


def test_no_depth_starts_that_would_end_past_the_target():
    steady = TimeUse(1000)
    assert not steady.enough(100, "e2e4", 0)  # the next depth foretold at 3 x 100 ms
    assert not steady.enough(300, "e2e4", 0)  # it took 200 ms, twice the one before: 400 more
    assert steady.enough(700, "e2e4", 0)  # 400 ms, twice again: it would end at 1500 ms
    late = TimeUse(300, search_started_ms=90)  # 90 ms went before the search began
    assert not late.enough(100, "e2e4", 0)  # the first depth took 10 ms (not 100): ends at 130
    slowing = TimeUse(1000)
    slowing.enough(10, "e2e4", 0)
    assert slowing.enough(190, "e2e4", 0)  # 18 times the depth before is taken as 5 times


class _Steady(RootSearch):
    """A root search whose every depth finds the same best move, depth d taking 3**d steps."""

    mate_bound, aspiration, max_depth = 10_000, 50, 30

    def __init__(self, manages_time, step_ms):
        self.manages_time, self.step_ms = manages_time, step_ms
        self.searched = []  # the depths of the iterations run
        self.ctx = np.zeros(8, dtype=np.int64)
        self.stop = np.zeros(4, dtype=np.int64)

    def depth_for_mate(self, mate):
        return 2 * mate

    def search(self, depth, alpha, beta, moves, values, tags, stoppable):
        self.searched.append(depth)
        time.sleep(self.step_ms * 3 ** depth / 1000)
        values[:] = np.arange(len(moves))[::-1]
        return len(moves)

    def line(self, position, moves, tags, index):
        return int(moves[index]), None

    def principal_variation(self, position, move, seed):
        return [move]

    def to_score(self, value, depth):
        return Score.cp(value)

    def hashfull(self):
        return 0


def test_deepening_that_manages_its_time_stops_before_the_target_and_others_run_on():
    position = SimpleNamespace(side_to_move=0)
    limits = Limits(wtime=2_500)  # a budget of 100 ms; depths end at 3, 12, 39, 120 ms ...
    found = deepen(_Steady(True, 1.0), position, limits, np.arange(3), time.perf_counter(),
                   None, None)
    assert 2 <= found.depth <= 3 and found.move == 0  # depth 4 would end past 100 ms
    found = deepen(_Steady(False, 0.0), position, limits, np.arange(3), time.perf_counter(),
                   None, None)
    assert found.depth == _Steady.max_depth


def test_a_root_that_manages_its_time_may_run_to_max_stretch_budgets():
    started = time.perf_counter()
    on_clock = Limits(wtime=2_500)  # a budget of 100 ms
    assert _Steady(True, 0).deadline(on_clock, 0, started) == pytest.approx(
        started + 0.1 * MAX_STRETCH)
    assert _Steady(False, 0).deadline(on_clock, 0, started) == pytest.approx(started + 0.1)
    fixed = Limits(movetime=300, wtime=2_500)
    for manages in (True, False):
        assert _Steady(manages, 0).deadline(fixed, 0, started) == pytest.approx(started + 0.3)
        assert _Steady(manages, 0).deadline(Limits(depth=5), 0, started) is None


def test_helpers_start_after_the_first_depths_and_are_joined():
    position = SimpleNamespace(side_to_move=0)
    for depth, helped in ((HELPERS_FROM_DEPTH, False), (HELPERS_FROM_DEPTH + 3, True)):
        root, helper = _Steady(False, 0.1), _Steady(False, 0.1)
        found = deepen(root, position, Limits(depth=depth), np.arange(3), time.perf_counter(),
                       None, None, helpers=[helper])
        assert found.depth == depth and root.searched == list(range(1, depth + 1))
        assert bool(helper.searched) == helped and helper.stop[0]
        assert not any(thread.name.startswith("mallard-helper")
                       for thread in threading.enumerate())



class _Walked(_Steady):
    """Counts the lines walked."""

    def __init__(self):
        super().__init__(False, 0.1)
        self.walked = 0

    def principal_variation(self, position, move, seed):
        self.walked += 1
        return [move, move]


class _Winning(_Walked):
    """Every root move wins by force."""

    def search(self, depth, alpha, beta, moves, values, tags, stoppable):
        values[:] = self.mate_bound + 10 + np.arange(len(moves))
        return len(moves)


def test_only_the_root_walks_its_lines():
    # a helper's line is never reported, and walking it (Python) would take the interpreter
    # from the root's search
    root, helper = _Walked(), _Walked()
    found = deepen(root, SimpleNamespace(side_to_move=0), Limits(depth=HELPERS_FROM_DEPTH + 3),
                   np.arange(3), time.perf_counter(), None, None, helpers=[helper])
    assert root.walked == found.depth and found.pv == [found.move, found.move]
    assert helper.searched and helper.walked == 0
    # but a forced result's line is walked: a game may keep it (UTTT's proofs)
    winning = _Winning()
    found = deepen(winning, SimpleNamespace(side_to_move=0), Limits(depth=4), np.arange(3),
                   time.perf_counter(), None, None, is_helper=True)
    assert winning.walked >= 1 and found.pv == [found.move, found.move]
