"""The plain duck search that the exception search must equal (numba): alpha-beta over every
(piece move, duck square) pair, with the same leaf values and quiescence rules and no pruning
beyond alpha-beta. It exists to prove the exception search exact (tests) and to measure how many
nodes the exceptions save (`mallard bench duck`); it is far too slow to play with.

The position carries its real duck; a node's moves are those legal under it and every child
places the duck on each empty square except the one it stands on. Scores as in `search_kernels`.
"""

import numpy as np
from numba import njit

from mallard.engines.duck.board import MAX_MOVES, MOVE_TO_SHIFT, S_DUCK, S_EP, S_KEY
from mallard.engines.duck.evaluation import evaluate
from mallard.engines.duck.kernels import (
    drop_duck,
    generate_piece_moves,
    is_capture,
    pop_move,
    push_piece_move,
)
from mallard.engines.duck.search_kernels import (
    C_EVAL_TERMS,
    C_QUIESCENCE_PLY_LIMIT,
    leaf_value,
    terminal_score,
)
from mallard.engines.search_common import C_NODES, INF, MATE


@njit(cache=True, nogil=True)
def _captures_first(state, moves, start, end):
    """Order the moves: king captures, then other captures by victim, then the rest (ordering is
    not pruning: it only makes alpha-beta cut sooner)."""
    keys = np.zeros(end - start, dtype=np.int64)
    for i in range(start, end):
        keys[i - start] = -(state[(moves[i] >> MOVE_TO_SHIFT) & 0x7F] & 7)
    order = np.argsort(keys, kind="mergesort")
    ordered = moves[start:end].copy()
    for i in range(end - start):
        moves[start + i] = ordered[order[i]]


@njit(cache=True, nogil=True)
def enumerate_quiescence(state, undo, moves, ctx, ply, alpha, beta):
    ctx[C_NODES] += 1
    lost = terminal_score(state, ply)
    if lost != 0:
        return lost
    base = ply * MAX_MOVES
    if generate_piece_moves(state, moves, base, -1) == base:
        return MATE - ply
    best = evaluate(state, ctx[C_EVAL_TERMS])
    if best >= beta or ply >= ctx[C_QUIESCENCE_PLY_LIMIT]:
        return best
    duck = state[S_DUCK]
    end = generate_piece_moves(state, moves, base, duck)
    _captures_first(state, moves, base, end)
    for i in range(base, end):
        move = moves[i]
        if not is_capture(state, move):
            continue
        push_piece_move(state, undo, move)
        ep, key = state[S_EP], state[S_KEY]
        for rank in range(8):
            for file in range(8):
                sq = rank * 16 + file
                if state[sq] != 0 or sq == duck:
                    continue
                drop_duck(state, sq)
                value = -enumerate_quiescence(state, undo, moves, ctx, ply + 1, -beta,
                                              -max(alpha, best))
                state[S_EP], state[S_KEY] = ep, key
                if value > best:
                    best = value
                    if best >= beta:
                        pop_move(state, undo)
                        return best
        pop_move(state, undo)
    return best


@njit(cache=True, nogil=True)
def enumerate_search(state, undo, moves, ctx, ply, depth, alpha, beta, quiescence):
    if depth <= 0:
        if quiescence:
            return enumerate_quiescence(state, undo, moves, ctx, ply, alpha, beta)
        ctx[C_NODES] += 1
        return leaf_value(state, moves, ctx, ply)
    ctx[C_NODES] += 1
    lost = terminal_score(state, ply)
    if lost != 0:
        return lost
    duck = state[S_DUCK]
    base = ply * MAX_MOVES
    end = generate_piece_moves(state, moves, base, duck)
    if end == base:
        return MATE - ply
    _captures_first(state, moves, base, end)
    best = -INF
    for i in range(base, end):
        push_piece_move(state, undo, moves[i])
        ep, key = state[S_EP], state[S_KEY]
        for rank in range(8):
            for file in range(8):
                sq = rank * 16 + file
                if state[sq] != 0 or sq == duck:
                    continue
                drop_duck(state, sq)
                value = -enumerate_search(state, undo, moves, ctx, ply + 1, depth - 1, -beta,
                                          -max(alpha, best), quiescence)
                state[S_EP], state[S_KEY] = ep, key
                if value > best:
                    best = value
                    if best >= beta:
                        pop_move(state, undo)
                        return best
        pop_move(state, undo)
    return best
