"""Pieces the games' alpha-beta searches share.

Mate scores in a transposition table: a search stores a mate score as the distance from the
stored node (not from the root), so the same entry is right at any ply; `score_to_table` and
`score_from_table` convert, for scores beyond `mate_bound` in either direction. Aspiration
windows: `widened_window` opens a failed window on the side it failed, by a growing delta.
Move ordering: `pick_best` is the selection step over a move list and its sort keys.
"""

from typing import Optional

from numba import njit


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
