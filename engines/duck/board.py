"""Duck Chess board constants shared by the numba kernels and the Python rules.

Squares are 0x88: `sq = 16 * rank + file` (a1 = 0, h1 = 7, a8 = 0x70, h8 = 0x77); `sq & 0x88`
is non-zero exactly for the off-board half. Piece codes are `colour * 8 + type`, type PAWN=1 ..
KING=6, so White is 1..6 and Black 9..14; EMPTY = 0. The duck is never stored on the board: its
square lives in the state array (S_DUCK), so the board holds chess pieces only and a position
"without the duck" is just the board.

Ray tables, indexed by `to - from + RAY_OFFSET` (0..238 of 240 entries):
- RAY_DIRECTION: 1..8 for the eight line directions (index into STEPS), 9..16 for the eight knight
  jumps, 0 when the two squares share no line;
- RAY_DISTANCE: the number of steps along that direction (a knight jump is 1).
A duck on the empty square k blocks a move from `f` whose path ends at `t` (the target square; the
rook's square for castling) iff RAY_DIRECTION[k - f] == RAY_DIRECTION[t - f] and
RAY_DISTANCE[k - f] <= RAY_DISTANCE[t - f]: the duck can only stand on empty squares, so an
occupied capture target never counts and a contact capture is never blocked.

State array (int64, STATE_SIZE): entries 0..127 the board, then S_SIDE (0 White, 1 Black),
S_CASTLE (bits WK 1, WQ 2, BK 4, BQ 8), S_EP (en-passant target, -1 none; set only when a pawn of
the side to move could capture there and the duck is not on it, as Fairy-Stockfish does), S_DUCK
(-1 before the first move), S_HALFMOVE, S_FULLMOVE, S_KING + colour (king square, -1 once
captured), S_KEY (Zobrist key of everything but the duck), S_PIECES (pieces on the board),
S_DEPTH (entries on the undo stack), S_OCCUPIED, S_WHITE and S_PAWNS (the squares holding a
piece, a White piece, a pawn, as sets of `bitboards`: bit rank * 8 + file) and S_PLACEMENT (the
evaluation's material and placement for White, `evaluation.PIECE_SQUARE` summed over the
pieces), the four kept by make/unmake like the key.

Move (int64): from | to << 7 | promotion type << 14 | kind << 17, kind 0 normal, 1 double pawn
push, 2 en passant, 3 castling (encoded as the king's move). A full move adds the duck square:
| duck << 20 | MOVE_DUCK (bit 27).
"""

import numpy as np

EMPTY, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 0, 1, 2, 3, 4, 5, 6
WHITE, BLACK = 0, 1
BLACK_BIT = 8
PIECE_LETTERS = ".PNBRQK..pnbrqk."  # indexed by piece code
PROMOTION_LETTERS = "  nbrq"            # indexed by piece type
FILES, RANKS = "abcdefgh", "12345678"

RAY_OFFSET = 119
STEPS = np.array([0, 1, -1, 16, -16, 15, 17, -15, -17], dtype=np.int64)  # index = direction code
ROOK_DIRECTIONS = np.array([1, 2, 3, 4], dtype=np.int64)
BISHOP_DIRECTIONS = np.array([5, 6, 7, 8], dtype=np.int64)
KNIGHT_STEPS = np.array([14, 18, 31, 33, -14, -18, -31, -33], dtype=np.int64)
KING_STEPS = STEPS[1:].copy()

# state layout
S_SIDE, S_CASTLE, S_EP, S_DUCK, S_HALFMOVE, S_FULLMOVE = 128, 129, 130, 131, 132, 133
S_KING, S_KEY, S_PIECES, S_DEPTH, S_OCCUPIED, S_WHITE, S_PAWNS, S_PLACEMENT = \
    134, 136, 137, 138, 139, 140, 141, 142
STATE_SIZE = 144

CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ = 1, 2, 4, 8

# move layout
MOVE_TO_SHIFT, MOVE_PROMO_SHIFT, MOVE_KIND_SHIFT, MOVE_DUCK_SHIFT = 7, 14, 17, 20
KIND_NORMAL, KIND_DOUBLE, KIND_EN_PASSANT, KIND_CASTLE = 0, 1, 2, 3
MOVE_DUCK = 1 << 27
PIECE_MOVE_MASK = (1 << MOVE_DUCK_SHIFT) - 1

# undo record layout: one row of UNDO_SIZE int64 per move on the stack
(U_MOVE, U_CAPTURED, U_CASTLE, U_EP, U_DUCK, U_HALFMOVE, U_KEY, U_FULLMOVE, U_OCCUPIED, U_WHITE,
 U_PAWNS, U_PLACEMENT) = range(12)
UNDO_SIZE = 12
MAX_PLY = 256
MAX_MOVES = 320  # piece moves of one position (the chess maximum is 218; no pins here)


def square(file: int, rank: int) -> int:
    return 16 * rank + file


def square_name(sq: int) -> str:
    return FILES[sq & 7] + RANKS[sq >> 4]


def parse_square(text: str) -> int:
    """0x88 square of a name such as 'e4'; ValueError otherwise."""
    if len(text) != 2 or text[0] not in FILES or text[1] not in RANKS:
        raise ValueError(f"'{text}' is not a square")
    return square(FILES.index(text[0]), RANKS.index(text[1]))


ALL_SQUARES = tuple(square(f, r) for r in range(8) for f in range(8))
SQUARE_NAMES = {sq: square_name(sq) for sq in ALL_SQUARES}


def _ray_tables():
    direction = np.zeros(240, dtype=np.int64)
    distance = np.zeros(240, dtype=np.int64)
    for code in range(1, 9):
        step = int(STEPS[code])
        for length in range(1, 8):
            direction[step * length + RAY_OFFSET] = code
            distance[step * length + RAY_OFFSET] = length
    for index, step in enumerate(KNIGHT_STEPS):
        direction[int(step) + RAY_OFFSET] = 9 + index
        distance[int(step) + RAY_OFFSET] = 1
    return direction, distance


RAY_DIRECTION, RAY_DISTANCE = _ray_tables()


def _castle_keep():
    keep = np.full(128, 15, dtype=np.int64)
    keep[square(4, 0)] = 15 & ~(CASTLE_WK | CASTLE_WQ)
    keep[square(7, 0)] = 15 & ~CASTLE_WK
    keep[square(0, 0)] = 15 & ~CASTLE_WQ
    keep[square(4, 7)] = 15 & ~(CASTLE_BK | CASTLE_BQ)
    keep[square(7, 7)] = 15 & ~CASTLE_BK
    keep[square(0, 7)] = 15 & ~CASTLE_BQ
    return keep


CASTLE_KEEP = _castle_keep()  # castling rights kept when a move touches the square

# Zobrist keys, fixed by seed so keys are stable across runs (books, tests, logs)
_rng = np.random.Generator(np.random.PCG64(0xD0C4))
_words = _rng.integers(-(1 << 63), (1 << 63) - 1, size=16 * 128 + 1 + 16 + 128 + 128,
                       dtype=np.int64, endpoint=True)
Z_PIECE = _words[:16 * 128].copy()  # index piece * 128 + square
Z_SIDE = int(_words[16 * 128])      # xor-ed in when Black is to move
Z_CASTLE = _words[16 * 128 + 1:16 * 128 + 17].copy()
Z_EP = _words[16 * 128 + 17:16 * 128 + 145].copy()
Z_DUCK = _words[16 * 128 + 145:16 * 128 + 273].copy()
del _rng, _words


def with_duck(move: int, duck: int) -> int:
    return (move & PIECE_MOVE_MASK) | duck << MOVE_DUCK_SHIFT | MOVE_DUCK


def move_from(move: int) -> int:
    return move & 0x7F


def move_to(move: int) -> int:
    return (move >> MOVE_TO_SHIFT) & 0x7F


def move_promotion(move: int) -> int:
    return (move >> MOVE_PROMO_SHIFT) & 7


def move_kind(move: int) -> int:
    return (move >> MOVE_KIND_SHIFT) & 3


def move_duck(move: int) -> int:
    """Duck square of a full move, -1 for a piece move."""
    return (move >> MOVE_DUCK_SHIFT) & 0x7F if move & MOVE_DUCK else -1
