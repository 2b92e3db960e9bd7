"""The kernels' own clock: `count_node` aborts at the stop array's deadline with no other thread
involved, and a search whose watchdog never runs still ends on time. `pick_best` picks as a
plain selection sort does, ties included."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import mallard.engines.driver
from mallard.engines.base import Limits
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import DuckSearcher
from mallard.engines.search_common import (
    C_ABORTED,
    C_NODES,
    KERNEL_CLOCK,
    STOP_DEADLINE,
    count_node,
    kernel_deadline,
    monotonic_ns,
    new_stop_array,
    pick_best,
)

needs_kernel_clock = pytest.mark.skipif(not KERNEL_CLOCK,
                                        reason="the kernels read the clock on Linux only")


def _selection_step(moves, order, i):
    """The textbook step: the first of the highest keys from i on, swapped into place."""
    best = i
    for j in range(i + 1, len(order)):
        if order[j] > order[best]:
            best = j
    moves[i], moves[best] = moves[best], moves[i]
    order[i], order[best] = order[best], order[i]
    return moves[i]


# few distinct keys, so that ties are common (quiet moves share their history); no deadline:
# the first example loads the kernel
@settings(deadline=None)
@given(st.lists(st.integers(-3, 3) | st.sampled_from([1 << 36, 1 << 40, -(1 << 40)]),
                min_size=1, max_size=80))
def test_pick_best_orders_as_a_plain_selection_sort(keys):
    moves = np.arange(100, 100 + len(keys), dtype=np.int64)
    order = np.array(keys, dtype=np.int64)
    expected_moves, expected_order = list(moves), list(order)
    picked = [int(pick_best(moves, order, i, len(keys))) for i in range(len(keys))]
    wanted = [_selection_step(expected_moves, expected_order, i) for i in range(len(keys))]
    assert picked == wanted
    assert list(moves) == expected_moves and list(order) == expected_order


@njit(cache=True, nogil=True)
def _clock_now():
    return monotonic_ns()


@njit(cache=True, nogil=True)
def _count_until_aborted(ctx, stop, most):
    for _ in range(most):
        count_node(ctx, stop, 255)
        if ctx[C_ABORTED]:
            break
    return ctx[C_NODES]


@needs_kernel_clock
def test_the_kernel_clock_is_the_clock_of_perf_counter():
    _clock_now()
    before = time.perf_counter_ns()
    now = _clock_now()
    after = time.perf_counter_ns()
    assert before <= now <= after
    assert kernel_deadline(None) == 0
    assert kernel_deadline(time.perf_counter() + 1) > now


@needs_kernel_clock
def test_count_node_aborts_at_the_deadline_only():
    ctx, stop = np.zeros(8, dtype=np.int64), new_stop_array()
    stop[STOP_DEADLINE] = kernel_deadline(time.perf_counter() + 3600)
    assert _count_until_aborted(ctx, stop, 100_000) == 100_000 and ctx[C_ABORTED] == 0
    ctx[:] = 0
    stop[STOP_DEADLINE] = kernel_deadline(time.perf_counter() - 0.001)
    assert _count_until_aborted(ctx, stop, 100_000) == 256 and ctx[C_ABORTED] == 1
    ctx[:] = 0
    stop[STOP_DEADLINE] = 0
    assert _count_until_aborted(ctx, stop, 100_000) == 100_000 and ctx[C_ABORTED] == 0


class _AbsentWatchdog:
    """A watchdog thread that never gets to run (as under a starved GIL)."""

    def __init__(self, *args):
        pass

    def start(self):
        pass

    def finish(self):
        pass


@needs_kernel_clock
def test_a_duck_search_ends_on_time_without_its_watchdog(monkeypatch):
    game = DuckGame()
    searcher = DuckSearcher(game, hash_mb=16)
    position = game.parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    searcher.search(position, Limits(depth=2))  # compiled
    monkeypatch.setattr(mallard.engines.driver, "Watchdog", _AbsentWatchdog)
    started = time.perf_counter()
    result = searcher.search(position, Limits(movetime=100))
    took = time.perf_counter() - started
    # without the kernel's clock this searches to its maximum depth (minutes)
    assert result.stopped and result.best_move is not None
    assert took < 2.0, f"a 100 ms search took {took:.2f} s"
