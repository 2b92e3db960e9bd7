"""Duck Chess static evaluation (numba): a function of the pieces only, never of the duck.

The duck's effect is searched exactly by the exception search, so the evaluation must not guess
it: two positions that differ only by the duck evaluate the same. Scores are centipawns from the
side to move. Tables are indexed by piece code * 128 + 0x88 square, white's view built in and
black's mirrored (`PIECE_SQUARE`); their sum over the pieces, material and placement, is kept in
the state by make/unmake (S_PLACEMENT), as are the sets of occupied squares, White's pieces and
pawns, from which the other terms work (`bitboards`).

Terms beyond material and placement are switched by the bit mask `terms` (the search passes its
ctx[C_EVAL_TERMS]; the bits and their names are declared in `mallard.engines.duck.terms`) so that
self-play matches can measure each one (`mallard bench duck-match`):
TERM_MOBILITY (squares the knights, bishops, rooks and queens reach), TERM_KING_EXPOSURE (empty
squares on the eight lines out of each king: with no check rule, every open line to the king is
a capture threat the single duck may be unable to block), TERM_PAWNS (doubled, isolated and
passed pawns), TERM_ENDGAME_KING (in the endgame, the king's steps from the centre: its
placement table is a middle-game one, corners good, which an endgame king should leave),
TERM_LONE_KING (a king left alone against anything more: its steps from the centre and the
other king's nearness, for the stronger side, which must hunt the king down to win: a shuffle
the fifty-move rule ends is a draw).

The weights are one block of literals below, fitted to game results by `mallard tune duck`
(tournaments/tuning.py), which rewrites the block. The evaluation is linear in them:
`features(state, out)` counts what each weight multiplies, and evaluate(state, ALL_TERMS) equals
features . weight_vector() for White (tests/engines/duck/test_evaluation.py holds them equal).
They stay literals in this file so that the numba cache, keyed on the engine sources, follows
every change of a weight.
"""

import numpy as np
from numba import njit

from mallard.engines.duck.bitboards import (
    bit_square,
    knight_reach,
    lowest_index,
    slider_reach,
    square_bit,
)
from mallard.engines.duck.bitboards import pawn_structure as bitboard_pawns
from mallard.engines.duck.board import (
    BISHOP,
    BLACK_BIT,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    ROOK,
    S_KING,
    S_OCCUPIED,
    S_PAWNS,
    S_PLACEMENT,
    S_SIDE,
    S_WHITE,
    STEPS,
)
from mallard.engines.duck.terms import (
    TERM_ENDGAME_KING,
    TERM_KING_EXPOSURE,
    TERM_LONE_KING,
    TERM_MOBILITY,
    TERM_NAMES,
    TERM_PAWNS,
    WEIGHT_GROUP_NAMES,
)

# <weights> centipawns; `mallard tune duck --write FILE` rewrites this block (tournaments/tuning.py)
MATERIAL = (139, 385, 301, 379, 884)  # pawn, knight, bishop, rook, queen
PLACEMENT = (  # pawn .. king; rows: ranks 1-8 from the owner's side; files a-d (e-h mirror them)
    ((0, 0, 0, 0), (0, 0, 0, 0), (4, 4, 4, 4), (10, 10, 10, 18),
     (20, 20, 20, 28), (35, 35, 35, 35), (60, 60, 60, 60), (0, 0, 0, 0)),
    ((-24, -18, -12, -6), (-18, -12, -6, 0), (-12, -6, 0, 6), (-6, 0, 6, 12),
     (-6, 0, 6, 12), (-12, -6, 0, 6), (-18, -12, -6, 0), (-24, -18, -12, -6)),
    ((-10, -7, -4, -1), (-7, -4, -1, 2), (-4, -1, 2, 5), (-1, 2, 5, 8),
     (-1, 2, 5, 8), (-4, -1, 2, 5), (-7, -4, -1, 2), (-10, -7, -4, -1)),
    ((0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0),
     (0, 0, 0, 0), (0, 0, 0, 0), (10, 10, 10, 10), (0, 0, 0, 0)),
    ((-6, -4, -2, 0), (-4, -2, 0, 2), (-2, 0, 2, 4), (0, 2, 4, 6),
     (0, 2, 4, 6), (-2, 0, 2, 4), (-4, -2, 0, 2), (-6, -4, -2, 0)),
    ((16, 12, 8, 4), (6, 2, -2, -6), (2, -2, -6, -10), (-2, -6, -10, -14),
     (-2, -6, -10, -14), (2, -2, -6, -10), (6, 2, -2, -6), (10, 6, 2, -2)),
)
MOBILITY = (3, 3, 3, 3)  # per square reached: knight, bishop, rook, queen
KING_EXPOSURE = 4  # penalty per empty square on the eight lines out of the king
DOUBLED, ISOLATED = 12, 10  # penalties per pawn
PASSED = (0, 5, 10, 20, 35, 55, 80, 0)  # passed pawn bonus by rank from its owner's side
ENDGAME_KING = 0  # penalty per king step from the centre, per endgame step (`endgame_steps`)
LONE_KING = (20, 10)  # against a lone king: per step from the centre, per step nearer the kings
# </weights>

# The weights as one vector, and the features the evaluation counts, in the same order:
# evaluate(state, ALL_TERMS) is the dot product for White, negated when Black is to move.
# Every feature is a count for White minus the same count for Black (for the penalties, Black's
# minus White's), so the evaluation is linear in the weights (the tuner relies on it).
F_MATERIAL = 0                  # 5: pawn .. queen
F_PLACEMENT = F_MATERIAL + 5    # 6 kinds x 8 ranks x 4 files
F_MOBILITY = F_PLACEMENT + 192  # 4: knight .. queen
F_EXPOSURE = F_MOBILITY + 4
F_DOUBLED = F_EXPOSURE + 1
F_ISOLATED = F_DOUBLED + 1
F_PASSED = F_ISOLATED + 1       # 8: by rank
F_ENDGAME_KING = F_PASSED + 8
F_LONE_KING = F_ENDGAME_KING + 1  # 2: the lone king's centre steps, the kings' nearness
N_FEATURES = F_LONE_KING + 2
# the features of each weight group, named in `terms` (the group boundaries in order)
WEIGHT_GROUPS = dict(zip(WEIGHT_GROUP_NAMES, (
    range(F_MATERIAL, F_PLACEMENT), range(F_PLACEMENT, F_MOBILITY), range(F_MOBILITY, F_EXPOSURE),
    range(F_EXPOSURE, F_DOUBLED), range(F_DOUBLED, F_ENDGAME_KING),
    range(F_ENDGAME_KING, F_LONE_KING), range(F_LONE_KING, N_FEATURES)), strict=True))
# each term's features: its weight group bears its name
TERM_FEATURES = {bit: WEIGHT_GROUPS[name] for name, bit in TERM_NAMES.items()}


def weight_vector() -> np.ndarray:
    """The weights above in the features' order."""
    vector = [*MATERIAL]
    for ranks in PLACEMENT:
        for files in ranks:
            vector.extend(files)
    vector += [*MOBILITY, KING_EXPOSURE, DOUBLED, ISOLATED, *PASSED, ENDGAME_KING, *LONE_KING]
    return np.array(vector, dtype=np.int64)


def weights_source(vector) -> str:
    """The weights block of this file (between its markers) holding `vector`."""
    values = [int(round(value)) for value in vector]
    if len(values) != N_FEATURES:
        raise ValueError(f"expected {N_FEATURES} weights, not {len(values)}")

    def row(numbers) -> str:
        return "(" + ", ".join(str(number) for number in numbers) + ")"

    material = values[F_MATERIAL:F_PLACEMENT]
    lines = [WEIGHTS_BEGIN,
             f"MATERIAL = {row(material)}  # pawn, knight, bishop, rook, queen",
             "PLACEMENT = (  # pawn .. king; rows: ranks 1-8 from the owner's side; "
             "files a-d (e-h mirror them)"]
    for kind in range(6):
        ranks = [row(values[F_PLACEMENT + kind * 32 + rank * 4:][:4]) for rank in range(8)]
        lines.append("    (" + ", ".join(ranks[:4]) + ",")
        lines.append("     " + ", ".join(ranks[4:]) + "),")
    lines += [")",
              f"MOBILITY = {row(values[F_MOBILITY:F_EXPOSURE])}  # per square reached: knight, "
              "bishop, rook, queen",
              f"KING_EXPOSURE = {values[F_EXPOSURE]}  # penalty per empty square on the eight "
              "lines out of the king",
              f"DOUBLED, ISOLATED = {values[F_DOUBLED]}, {values[F_ISOLATED]}  # penalties per "
              "pawn",
              f"PASSED = {row(values[F_PASSED:F_ENDGAME_KING])}  # passed pawn bonus by rank from "
              "its owner's side",
              f"ENDGAME_KING = {values[F_ENDGAME_KING]}  # penalty per king step from the centre, "
              "per endgame step (`endgame_steps`)",
              f"LONE_KING = {row(values[F_LONE_KING:N_FEATURES])}  # against a lone king: per "
              "step from the centre, per step nearer the kings",
              WEIGHTS_END]
    return "\n".join(lines) + "\n"


WEIGHTS_BEGIN = ("# <weights> centipawns; `mallard tune duck --write FILE` rewrites this block "
                 "(tournaments/tuning.py)")
WEIGHTS_END = "# </weights>"

PIECE_VALUES = np.array([0, *MATERIAL, 0, 0], dtype=np.int64)  # by kind; the search's too
# TERM_ENDGAME_KING: the pieces besides pawns and kings weigh PHASE_WEIGHT each (both sides; 62
# at the start); below ENDGAME_FROM, every ENDGAME_STEP less is one endgame step (at most 5)
PHASE_WEIGHT = np.array([0, 0, 3, 3, 5, 9, 0, 0], dtype=np.int64)
ENDGAME_FROM, ENDGAME_STEP = 40, 8


def _tables() -> np.ndarray:
    """Material plus placement by piece code * 128 + square, positive for White."""
    table = np.zeros(16 * 128, dtype=np.int64)
    for kind in (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING):
        for rank in range(8):
            for file in range(8):
                value = int(PIECE_VALUES[kind]) + PLACEMENT[kind - 1][rank][min(file, 7 - file)]
                table[kind * 128 + rank * 16 + file] = value
                table[(kind | BLACK_BIT) * 128 + (7 - rank) * 16 + file] = -value
    return table


PIECE_SQUARE = _tables()
MOBILITY_BY_KIND = np.array([0, 0, *MOBILITY, 0, 0], dtype=np.int64)
PASSED_BY_RANK = np.array(PASSED, dtype=np.int64)
LONE_KING_CENTRE, LONE_KING_NEAR = LONE_KING
KING_FAR = 7  # the kings' greatest distance in king steps: their nearness is 7 minus it


def placement_sum(state) -> int:
    """Material and placement for White: `PIECE_SQUARE` summed over the board (the state's
    S_PLACEMENT, which make/unmake keep up to date, is this)."""
    return int(sum(PIECE_SQUARE[int(state[sq]) * 128 + sq] for sq in range(128) if not sq & 0x88))


@njit(cache=True, nogil=True, _nrt=False)
def _officers(state):
    """The knights, bishops, rooks and queens: the occupied squares but pawns and kings."""
    kings = 0
    for colour in range(2):
        if state[S_KING + colour] >= 0:
            kings |= square_bit(state[S_KING + colour])
    return state[S_OCCUPIED] & ~state[S_PAWNS] & ~kings


@njit(cache=True, nogil=True, _nrt=False)
def _officer_reach(state, b, occupied, white):
    """(kind, sign, squares reached) of the knight, bishop, rook or queen on bit b: empty or
    holding a piece of either colour for the sliders, empty or an enemy for the knight."""
    piece = state[bit_square(b)]
    kind = piece & 7
    own = white if piece < BLACK_BIT else occupied & ~white
    if kind == KNIGHT:
        reach = knight_reach(b, own)
    else:
        reach = slider_reach(b, kind, occupied)
    return kind, 1 if piece < BLACK_BIT else -1, reach


@njit(cache=True, nogil=True, _nrt=False)
def _open_lines(state, colour):
    """Empty squares on the eight lines out of the colour's king (0 once it is captured)."""
    king = state[S_KING + colour]
    if king < 0:
        return 0
    open_squares = 0
    for code in range(1, 9):
        to = king + STEPS[code]
        while not (to & 0x88) and state[to] == 0:
            open_squares += 1
            to += STEPS[code]
    return open_squares


@njit(cache=True, nogil=True, _nrt=False)
def pawn_structure(state):
    """White's doubled (extra pawns on a file), isolated and passed pawns, then Black's, the
    passed ones four bits per rank from the owner's side (`bitboards.pawn_structure`)."""
    return bitboard_pawns(state[S_PAWNS], state[S_WHITE])


NIBBLE = 15  # the passed pawns' counts: four bits per rank


@njit(cache=True, nogil=True, _nrt=False)
def _pawns(pawns, white):
    w_doubled, w_isolated, w_passed, b_doubled, b_isolated, b_passed = bitboard_pawns(pawns, white)
    score = DOUBLED * (b_doubled - w_doubled) + ISOLATED * (b_isolated - w_isolated)
    for rank in range(8):
        score += PASSED_BY_RANK[rank] * (((w_passed >> (4 * rank)) & NIBBLE)
                                         - ((b_passed >> (4 * rank)) & NIBBLE))
    return score


@njit(cache=True, nogil=True, _nrt=False)
def endgame_steps(state):
    """How far into the endgame the position is: 0 while its pieces besides pawns and kings
    weigh ENDGAME_FROM or more (PHASE_WEIGHT each), to 5 with none left. Its own pass over the
    board: only TERM_ENDGAME_KING asks, and the material pass stays as lean without it."""
    phase_weight = 0
    for rank in range(8):
        for file in range(8):
            phase_weight += PHASE_WEIGHT[state[rank * 16 + file] & 7]
    return max(0, ENDGAME_FROM - phase_weight + ENDGAME_STEP - 1) // ENDGAME_STEP


@njit(cache=True, nogil=True, _nrt=False)
def centre_steps(square):
    """King steps (rank plus file) from the square to the nearest of the four centre squares:
    0 to 6; 0 for a captured king (-1)."""
    if square < 0:
        return 0
    rank, file = square >> 4, square & 7
    return max(3 - rank, rank - 4) + max(3 - file, file - 4)


@njit(cache=True, nogil=True, _nrt=False)
def _endgame_king(state):
    """Black's king's centre steps minus White's, times the endgame steps."""
    return (centre_steps(state[S_KING + 1]) - centre_steps(state[S_KING])) * endgame_steps(state)


@njit(cache=True, nogil=True, _nrt=False)
def lone_king(state):
    """(centre steps, nearness) for White, the features of TERM_LONE_KING: when one side has
    its king alone and the other more, the lone king's steps from the centre (`centre_steps`)
    and KING_FAR minus the kings' distance in king steps, positive when White is the stronger
    side; (0, 0) otherwise (a king captured, or no side alone)."""
    white = state[S_WHITE]
    black = state[S_OCCUPIED] & ~white
    if white & (white - 1) == 0 and black & (black - 1) != 0:
        lone, sign = 0, -1
    elif black & (black - 1) == 0 and white & (white - 1) != 0:
        lone, sign = 1, 1
    else:
        return 0, 0
    lone_square, other_square = state[S_KING + lone], state[S_KING + 1 - lone]
    if lone_square < 0 or other_square < 0:
        return 0, 0
    distance = max(abs((lone_square >> 4) - (other_square >> 4)),
                   abs((lone_square & 7) - (other_square & 7)))
    return sign * centre_steps(lone_square), sign * (KING_FAR - distance)


@njit(cache=True, nogil=True, _nrt=False)
def evaluate(state, terms):
    """Centipawns for the side to move: material and placement, plus the terms in the mask."""
    score = state[S_PLACEMENT]
    occupied = state[S_OCCUPIED]
    white = state[S_WHITE]
    if terms & TERM_MOBILITY:
        officers = _officers(state)
        while officers != 0:
            kind, sign, reach = _officer_reach(state, lowest_index(officers), occupied, white)
            officers &= officers - 1
            score += sign * MOBILITY_BY_KIND[kind] * reach
    if terms & TERM_KING_EXPOSURE:
        score += KING_EXPOSURE * (_open_lines(state, 1) - _open_lines(state, 0))
    if terms & TERM_PAWNS:
        score += _pawns(state[S_PAWNS], white)
    if terms & TERM_ENDGAME_KING:
        score += ENDGAME_KING * _endgame_king(state)
    if terms & TERM_LONE_KING:
        centre, near = lone_king(state)
        score += LONE_KING_CENTRE * centre + LONE_KING_NEAR * near
    return score if state[S_SIDE] == 0 else -score


@njit(cache=True, nogil=True, _nrt=False)
def features(state, out):
    """Writes the N_FEATURES counts of the weight vector's order into out, for White (see
    F_MATERIAL): the tuner's view of evaluate."""
    out[:] = 0
    occupied = state[S_OCCUPIED]
    white = state[S_WHITE]
    officers = _officers(state)
    for rank in range(8):
        for file in range(8):
            piece = state[rank * 16 + file]
            if piece == 0:
                continue
            kind = piece & 7
            sign = 1 if piece < BLACK_BIT else -1
            own_rank = rank if sign == 1 else 7 - rank
            if kind != KING:
                out[F_MATERIAL + kind - PAWN] += sign
            out[F_PLACEMENT + (kind - PAWN) * 32 + own_rank * 4 + min(file, 7 - file)] += sign
    while officers != 0:
        kind, sign, reach = _officer_reach(state, lowest_index(officers), occupied, white)
        officers &= officers - 1
        out[F_MOBILITY + kind - KNIGHT] += sign * reach
    out[F_EXPOSURE] = _open_lines(state, 1) - _open_lines(state, 0)
    w_doubled, w_isolated, w_passed, b_doubled, b_isolated, b_passed = pawn_structure(state)
    out[F_DOUBLED] = b_doubled - w_doubled
    out[F_ISOLATED] = b_isolated - w_isolated
    for rank in range(8):
        out[F_PASSED + rank] = (((w_passed >> (4 * rank)) & NIBBLE)
                                - ((b_passed >> (4 * rank)) & NIBBLE))
    out[F_ENDGAME_KING] = _endgame_king(state)
    out[F_LONE_KING], out[F_LONE_KING + 1] = lone_king(state)
