"""Pieces the games' alpha-beta searches share.

Scores are integers from the side to move: a win whose last move is played at ply p from the
root scores MATE - p, a loss -(MATE - p); every other score (the evaluations, a draw's 0) stays
within a game's `mate_bound` (MATE less the longest line the game can search, or more), and
every score within (-INF, INF). `to_score` turns one into an `engines.base.Score`.

The context header: every alpha-beta search's `ctx` array starts with C_NODES, C_ABORTED,
C_NODE_LIMIT and C_SELDEPTH (what `count_node` and the driver, `engines.driver`, read).
`count_node` counts a node and, every `poll_mask + 1` nodes, polls the caller's stop array and
the node limit (the kernels run with the GIL released; an aborted search returns at once).

Mate scores in a transposition table: a search stores a mate score as the distance from the
stored node (not from the root), so the same entry is right at any ply; `score_to_table` and
`score_from_table` convert, for scores beyond `mate_bound` in either direction. Aspiration
windows: `widened_window` opens a failed window on the side it failed, by a growing delta.
Move ordering: `pick_best` is the selection step over a move list and its sort keys.
"""

from typing import Optional

from numba import njit

from engines.base import Score

INF = 32000
MATE = 30000
C_NODES, C_ABORTED, C_NODE_LIMIT, C_SELDEPTH = range(4)


@njit(cache=True, nogil=True)
def count_node(ctx, stop, poll_mask):
    """Count one node; every poll_mask + 1 nodes (poll_mask is 2^k - 1) set ctx[C_ABORTED] when
    the caller's stop flag is up or the node limit (0: none) is reached."""
    ctx[C_NODES] += 1
    if (ctx[C_NODES] & poll_mask) == 0:
        if stop[0] != 0 or (ctx[C_NODE_LIMIT] > 0 and ctx[C_NODES] >= ctx[C_NODE_LIMIT]):
            ctx[C_ABORTED] = 1


@njit(cache=True, nogil=True)
def score_to_table(value, ply, mate_bound):
    if value > mate_bound:
        return value + ply
    if value < -mate_bound:
        return value - ply
    return value


@njit(cache=True, nogil=True)
def score_from_table(value, ply, mate_bound):
    if value > mate_bound:
        return value - ply
    if value < -mate_bound:
        return value + ply
    return value


@njit(cache=True, nogil=True)
def pick_best(moves, order, i, end):
    """Selection step of move ordering: bring the best remaining move (highest `order`) to
    position i and return it."""
    best = i
    for j in range(i + 1, end):
        if order[j] > order[best]:
            best = j
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
