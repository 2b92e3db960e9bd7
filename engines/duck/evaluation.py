"""Duck Chess static evaluation (numba): a function of the pieces only, never of the duck.

The duck's effect is searched exactly by the exception search, so the evaluation must not guess
it: two positions that differ only by the duck evaluate the same. Scores are centipawns from the
side to move. Tables are indexed by piece code * 128 + 0x88 square, white's view built in and
black's mirrored, so material and placement are one pass over the board.

Terms beyond material and placement are switched by the bit mask `terms` (the search passes its
ctx[C_EVAL_TERMS]) so that self-play matches can measure each one (`mallard bench duck-match`):
TERM_MOBILITY (squares the knights, bishops, rooks and queens reach), TERM_KING_EXPOSURE (empty
squares on the eight lines out of each king: with no check rule, every open line to the king is
a capture threat the single duck may be unable to block), TERM_PAWNS (doubled, isolated and
passed pawns).
"""

import numpy as np
from numba import njit

from engines.duck.board import (
    BISHOP,
    BLACK_BIT,
    KING,
    KNIGHT,
    KNIGHT_STEPS,
    PAWN,
    QUEEN,
    ROOK,
    S_KING,
    S_SIDE,
    STEPS,
)

PIECE_VALUES = np.array([0, 100, 300, 320, 480, 900, 0, 0], dtype=np.int64)


def _square_bonus(kind: int, file: int, rank: int) -> int:
    """Positional bonus for a white piece (rank 0 = White's back rank)."""
    centre = (3.5 - abs(file - 3.5)) + (3.5 - abs(rank - 3.5))  # 1 (corner) .. 7 (centre)
    if kind == PAWN:
        advance = (0, 0, 4, 10, 20, 35, 60, 0)[rank]
        return advance + (8 if file in (3, 4) and rank in (3, 4) else 0)
    if kind == KNIGHT:
        return int(6 * centre) - 24
    if kind == BISHOP:
        return int(3 * centre) - 10
    if kind == ROOK:
        return 10 if rank == 6 else 0
    if kind == QUEEN:
        return int(2 * centre) - 6
    if kind == KING:
        return 10 - int(4 * centre) + (6 if rank == 0 else 0)
    return 0


def _tables() -> np.ndarray:
    table = np.zeros(16 * 128, dtype=np.int64)
    for kind in (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING):
        for rank in range(8):
            for file in range(8):
                value = int(PIECE_VALUES[kind]) + _square_bonus(kind, file, rank)
                table[kind * 128 + rank * 16 + file] = value
                table[(kind | BLACK_BIT) * 128 + (7 - rank) * 16 + file] = -value
    return table


PIECE_SQUARE = _tables()  # white-positive values

TERM_MOBILITY, TERM_KING_EXPOSURE, TERM_PAWNS = 1, 2, 4
ALL_TERMS = TERM_MOBILITY | TERM_KING_EXPOSURE | TERM_PAWNS
MOBILITY_WEIGHT = 3           # per square reached
EXPOSURE_WEIGHT = 4           # per empty square on a line out of the king
DOUBLED, ISOLATED = 12, 10
PASSED = np.array([0, 5, 10, 20, 35, 55, 80, 0], dtype=np.int64)  # by rank from the pawn's side


@njit(cache=True, nogil=True)
def _reach(state, sq, step):
    """Squares along a line from sq up to and including the first piece."""
    count = 0
    to = sq + step
    while not (to & 0x88):
        count += 1
        if state[to] != 0:
            break
        to += step
    return count


@njit(cache=True, nogil=True)
def _mobility(state):
    score = 0
    for rank in range(8):
        for file in range(8):
            sq = rank * 16 + file
            piece = state[sq]
            kind = piece & 7
            if piece == 0 or kind == PAWN or kind == KING:
                continue
            sign = 1 if piece < BLACK_BIT else -1
            reach = 0
            if kind == KNIGHT:
                for step in KNIGHT_STEPS:
                    to = sq + step
                    if not (to & 0x88) and (state[to] == 0 or (state[to] >> 3) != (piece >> 3)):
                        reach += 1
            else:
                first = 5 if kind == BISHOP else 1
                last = 4 if kind == ROOK else 8
                for code in range(first, last + 1):
                    reach += _reach(state, sq, STEPS[code])
            score += sign * reach
    return score * MOBILITY_WEIGHT


@njit(cache=True, nogil=True)
def _exposure(state):
    score = 0
    for colour in range(2):
        king = state[S_KING + colour]
        if king < 0:
            continue
        open_squares = 0
        for code in range(1, 9):
            to = king + STEPS[code]
            while not (to & 0x88) and state[to] == 0:
                open_squares += 1
                to += STEPS[code]
        score += -open_squares * EXPOSURE_WEIGHT if colour == 0 else open_squares * EXPOSURE_WEIGHT
    return score


@njit(cache=True, nogil=True)
def _pawns(state):
    files = np.zeros((2, 10), dtype=np.int64)  # pawns per file, padded for neighbours
    for rank in range(8):
        for file in range(8):
            piece = state[rank * 16 + file]
            if piece & 7 == PAWN:
                files[piece >> 3, file + 1] += 1
    score = 0
    for rank in range(8):
        for file in range(8):
            piece = state[rank * 16 + file]
            if piece & 7 != PAWN:
                continue
            colour = piece >> 3
            sign = 1 if colour == 0 else -1
            if files[colour, file] == 0 and files[colour, file + 2] == 0:
                score -= sign * ISOLATED
            passed = True
            for f in range(max(file - 1, 0), min(file + 2, 8)):
                for r in range(8):
                    other = state[r * 16 + f]
                    if other == PAWN + (1 - colour) * BLACK_BIT and \
                            ((colour == 0 and r > rank) or (colour == 1 and r < rank)):
                        passed = False
            if passed:
                score += sign * PASSED[rank if colour == 0 else 7 - rank]
    for colour in range(2):
        sign = 1 if colour == 0 else -1
        for file in range(1, 9):
            if files[colour, file] > 1:
                score -= sign * DOUBLED * (files[colour, file] - 1)
    return score


@njit(cache=True, nogil=True)
def evaluate(state, terms):
    """Centipawns for the side to move: material and placement, plus the terms in the mask."""
    score = 0
    for rank in range(8):
        for file in range(8):
            sq = rank * 16 + file
            piece = state[sq]
            if piece != 0:
                score += PIECE_SQUARE[piece * 128 + sq]
    if terms & TERM_MOBILITY:
        score += _mobility(state)
    if terms & TERM_KING_EXPOSURE:
        score += _exposure(state)
    if terms & TERM_PAWNS:
        score += _pawns(state)
    return score if state[S_SIDE] == 0 else -score
