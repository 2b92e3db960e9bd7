"""Ultimate Tic-Tac-Toe constants: the state layout, line tables and Zobrist keys.

Boards and cells are numbered 0..8 row-major (letters a..i); a move is `board * 9 + cell`
(0..80). A 3x3 grid is a 9-bit mask, bit k = cell k.

State: one int64 array of STATE_SIZE words —
  S_X + b, S_O + b   the cells of board b held by X / O (9-bit masks)
  S_WON_X, S_WON_O   the boards X / O has won; S_DRAWN the boards closed full with no winner
  S_FORCED           the board the side to move must play in, -1 when free (never a closed one)
  S_SIDE             0 = X (the first player), 1 = O
  S_PLY              moves played since the start position
  S_KEY              Zobrist key: open boards hash by their cells, a closed board only by its
                     outcome (so transpositions that close a board differently inside coincide),
                     plus the forced board and the side to move
  S_RESULT           RESULT_NONE while the game goes on, else X_WON, O_WON or DRAWN
  S_LAST             the last move, -1 at the start
"""

import numpy as np

S_X = 0
S_O = 9
S_WON_X = 18
S_WON_O = 19
S_DRAWN = 20
S_FORCED = 21
S_SIDE = 22
S_PLY = 23
S_KEY = 24
S_RESULT = 25
S_LAST = 26
STATE_SIZE = 27

RESULT_NONE = -1
X_WON = 0
O_WON = 1
DRAWN = 2

FULL = 0x1FF
MAX_MOVES = 81
LETTERS = "abcdefghi"

LINES = (0b000000111, 0b000111000, 0b111000000, 0b001001001, 0b010010010, 0b100100100,
         0b100010001, 0b001010100)


def _tables():
    has_line = np.zeros(512, dtype=np.uint8)
    for mask in range(512):
        has_line[mask] = any(mask & line == line for line in LINES)
    # cells that would complete a line for a player holding `mask` (any occupant of the cell is
    # checked by the caller): WINNING_CELLS[mask]
    winning_cells = np.zeros(512, dtype=np.int64)
    for mask in range(512):
        cells = 0
        for cell in range(9):
            if not mask >> cell & 1 and has_line[mask | 1 << cell]:
                cells |= 1 << cell
        winning_cells[mask] = cells
    popcount = np.array([bin(mask).count("1") for mask in range(512)], dtype=np.int64)
    return has_line, winning_cells, popcount


HAS_LINE, WINNING_CELLS, POPCOUNT = _tables()


def _zobrist():
    rng = np.random.Generator(np.random.PCG64(0x5EED_0777))
    cells = rng.integers(1, 1 << 62, size=(2, 81), dtype=np.int64)
    closed = rng.integers(1, 1 << 62, size=(9, 3), dtype=np.int64)
    forced = rng.integers(1, 1 << 62, size=10, dtype=np.int64)  # index 9: free choice
    side = rng.integers(1, 1 << 62, size=1, dtype=np.int64)
    return cells, closed, forced, side


Z_CELL, Z_CLOSED, Z_FORCED, Z_SIDE = _zobrist()
