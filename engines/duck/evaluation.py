"""Duck Chess static evaluation (numba): a function of the pieces only, never of the duck.

The duck's effect is searched exactly by the exception search, so the evaluation must not guess
it: two positions that differ only by the duck evaluate the same. Scores are centipawns from the
side to move. Tables are indexed by piece code * 128 + 0x88 square, white's view built in and
black's mirrored, so the evaluation is one pass over the board.
"""

import numpy as np
from numba import njit

from engines.duck.board import BISHOP, BLACK_BIT, KING, KNIGHT, PAWN, QUEEN, ROOK, S_SIDE

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


@njit(cache=True, nogil=True)
def evaluate(state):
    """Centipawns for the side to move (material and piece-square terms)."""
    score = 0
    for rank in range(8):
        for file in range(8):
            sq = rank * 16 + file
            piece = state[sq]
            if piece != 0:
                score += PIECE_SQUARE[piece * 128 + sq]
    return score if state[S_SIDE] == 0 else -score
