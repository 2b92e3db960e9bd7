"""The kernels' own clock: `count_node` aborts at the stop array's deadline with no other thread
involved, and a search whose watchdog never runs still ends on time."""

import time

import numpy as np
import pytest
from numba import njit

import engines.driver
from engines.base import Limits
from engines.duck.rules import DuckGame
from engines.duck.searcher import DuckSearcher
from engines.search_common import (
    C_ABORTED,
    C_NODES,
    KERNEL_CLOCK,
    STOP_DEADLINE,
    count_node,
    kernel_deadline,
    monotonic_ns,
    new_stop_array,
)

pytestmark = pytest.mark.skipif(not KERNEL_CLOCK, reason="the kernels read the clock on Linux only")


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


def test_the_kernel_clock_is_the_clock_of_perf_counter():
    _clock_now()
    before = time.perf_counter_ns()
    now = _clock_now()
    after = time.perf_counter_ns()
    assert before <= now <= after
    assert kernel_deadline(None) == 0
    assert kernel_deadline(time.perf_counter() + 1) > now


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


def test_a_duck_search_ends_on_time_without_its_watchdog(monkeypatch):
    game = DuckGame()
    searcher = DuckSearcher(game, hash_mb=16)
    position = game.parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    searcher.search(position, Limits(depth=2))  # compiled
    monkeypatch.setattr(engines.driver, "Watchdog", _AbsentWatchdog)
    started = time.perf_counter()
    result = searcher.search(position, Limits(movetime=100))
    took = time.perf_counter() - started
    # without the kernel's clock this searches to its maximum depth (minutes)
    assert result.stopped and result.best_move is not None
    assert took < 2.0, f"a 100 ms search took {took:.2f} s"
