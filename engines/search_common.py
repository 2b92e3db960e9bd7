"""Pieces the games' alpha-beta searches share.

Scores are integers from the side to move: a win whose last move is played at ply p from the
root scores MATE - p, a loss -(MATE - p); every other score (the evaluations, a draw's 0) stays
within a game's `mate_bound` (MATE less the longest line the game can search, or more), and
every score within (-INF, INF). `to_score` turns one into an `mallard.engines.base.Score`.

The context header: every alpha-beta search's `ctx` array starts with C_NODES, C_ABORTED,
C_NODE_LIMIT and C_SELDEPTH (what `count_node` and the driver, `mallard.engines.driver`, read).
`count_node` counts a node and, every `poll_mask + 1` nodes, polls the stop array and the node
limit (the kernels run with the GIL released; an aborted search returns at once). The stop array
(`new_stop_array`) holds a flag another thread raises and a deadline on the monotonic clock in
nanoseconds (0: none) that the kernel reads itself: a watchdog thread that must first win the GIL
and a core was seen firing 45 ms late on a loaded machine, a clock read costs 30 ns.

Mate scores in a transposition table: a search stores a mate score as the distance from the
stored node (not from the root), so the same entry is right at any ply; `score_to_table` and
`score_from_table` convert, for scores beyond `mate_bound` in either direction. Aspiration
windows: `widened_window` opens a failed window on the side it failed, by a growing delta.
Move ordering: `pick_best` is the selection step over a move list and its sort keys.
"""

import sys
from typing import Optional

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from mallard.engines.base import Score

INF = 32000
MATE = 30000
C_NODES, C_ABORTED, C_NODE_LIMIT, C_SELDEPTH = range(4)
STOP_FLAG, STOP_DEADLINE = range(2)
# time.perf_counter is CLOCK_MONOTONIC on Linux; elsewhere the kernels leave the clock to the
# watchdog (their deadline stays 0)
KERNEL_CLOCK = sys.platform.startswith("linux")
CLOCK_MONOTONIC = 1


def new_stop_array() -> np.ndarray:
    return np.zeros(2, dtype=np.int64)


def kernel_deadline(deadline: Optional[float]) -> int:
    """A `time.perf_counter()` deadline as the stop array's STOP_DEADLINE (0: none)."""
    if deadline is None or not KERNEL_CLOCK:
        return 0
    return max(1, int(deadline * 1e9))


@intrinsic
def monotonic_ns(typingctx):
    """clock_gettime(CLOCK_MONOTONIC) in nanoseconds (0 where the kernels keep no clock)."""
    def codegen(context, builder, signature, args):
        i64, i32 = ir.IntType(64), ir.IntType(32)
        if not KERNEL_CLOCK:
            return i64(0)
        timespec = ir.LiteralStructType([i64, i64])
        slot = cgutils.alloca_once(builder, timespec)
        clock_gettime = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i32, [i32, timespec.as_pointer()]), "clock_gettime")
        builder.call(clock_gettime, [i32(CLOCK_MONOTONIC), slot])
        seconds = builder.load(cgutils.gep_inbounds(builder, slot, 0, 0))
        nanoseconds = builder.load(cgutils.gep_inbounds(builder, slot, 0, 1))
        return builder.add(builder.mul(seconds, i64(1_000_000_000)), nanoseconds)
    return types.int64(), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the processor to bring array[index]'s cache line in, without waiting for it: a
    transposition-table bucket is in main memory, and a node reads it only after other work
    (a quiescence node after its evaluation), which then hides the wait. No effect on values."""
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        address = cgutils.get_item_pointer(context, builder, array_type, data, [args[1]],
                                           wraparound=False)
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]),
            "llvm.prefetch." + ("p0" if address.type.is_opaque else "p0i8"))
        builder.call(hint, [address, i32(0), i32(3), i32(1)])  # a read, kept close, data
        return context.get_dummy_value()
    return types.void(array, index), codegen


@njit(cache=True, nogil=True, _nrt=False)
def count_node(ctx, stop, poll_mask):
    """Count one node; every poll_mask + 1 nodes (poll_mask is 2^k - 1) set ctx[C_ABORTED] when
    the stop flag is up, the deadline has passed or the node limit (0: none) is reached."""
    ctx[C_NODES] += 1
    if (ctx[C_NODES] & poll_mask) == 0:
        if stop[STOP_FLAG] != 0 or (ctx[C_NODE_LIMIT] > 0 and ctx[C_NODES] >= ctx[C_NODE_LIMIT]) \
                or (stop[STOP_DEADLINE] != 0 and monotonic_ns() >= stop[STOP_DEADLINE]):
            ctx[C_ABORTED] = 1


@njit(cache=True, nogil=True, _nrt=False)
def score_to_table(value, ply, mate_bound):
    if value > mate_bound:
        return value + ply
    if value < -mate_bound:
        return value - ply
    return value


@njit(cache=True, nogil=True, _nrt=False)
def score_from_table(value, ply, mate_bound):
    if value > mate_bound:
        return value - ply
    if value < -mate_bound:
        return value + ply
    return value


@njit(cache=True, nogil=True, _nrt=False)
def pick_best(moves, order, i, end):
    """Selection step of move ordering: bring the best remaining move (highest `order`) to
    position i and return it."""
    # indices from 0 in a view: known not negative, they need no wraparound, and the maximum
    # compiles to a vector reduction; then the first move with it
    keys = order[i:end]
    top = keys[0]
    for j in range(1, len(keys)):
        top = max(top, keys[j])
    first = 0
    while keys[first] != top:
        first += 1
    best = i + first
    if best != i:
        moves[i], moves[best] = moves[best], moves[i]
        order[i], order[best] = order[best], order[i]
    return moves[i]


def widened_window(top: int, alpha: int, beta: int, delta: int, infinity: int
                   ) -> Optional[tuple[int, int]]:
    """The next (alpha, beta) after a root search whose best value was `top`, or None when
    `top` fell inside the window (the search is done)."""
    if top <= alpha and alpha > -infinity:
        return max(-infinity, top - delta), beta
    if top >= beta and beta < infinity:
        return alpha, min(infinity, top + delta)
    return None


def to_score(value: int, mate_bound: int, exact_draw: bool = False) -> Score:
    """A search score as a Score: mate in moves of the side to move beyond `mate_bound` (MATE - p
    is a win with its ((p + 1) // 2)-th move), else centipawns; a 0 is a proven draw when
    `exact_draw` says the search was exhaustive."""
    if value > mate_bound:
        return Score.mate((MATE - value + 1) // 2)
    if value < -mate_bound:
        return Score.mate(-((MATE + value + 1) // 2))
    return Score.cp(value, exact=exact_draw and value == 0)
