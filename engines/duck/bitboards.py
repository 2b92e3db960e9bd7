"""Bitboards for the Duck Chess evaluation and capture generator (numba): occupancy sets, slider
and knight reach, pawn structure, each a handful of integer operations where a walk over the
0x88 board branched at every square. The lowest set bit's index is numba's own trailing-zeros
intrinsic (one instruction; a de Bruijn multiply and table look-up was slower).

A set of squares is one int64, bit `rank * 8 + file` (a1 bit 0, h8 bit 63, which makes the word
negative; every operation here is sign-safe: only left shifts, `x & -x`, masked right shifts).
A reversed set holds square b at bit 63 - b, so that the first piece along a decreasing line is
the lowest set bit too. The move generator keeps its 0x88 board; beside it the state keeps the
occupied squares, White's and the pawns' (S_OCCUPIED, S_WHITE, S_PAWNS, updated by
make/unmake), from which the evaluation and the capture generator take every other set.

Reach along a line (`slider_reach`): the squares from the piece up to and including the first
piece of either colour, or to the edge, both ways at once, looked up by the occupancy of the
line's six inner squares (kindergarten bitboards: one multiply gathers them); `slider_attacks`
gives the same squares as a set, by the same look-ups. The first piece along one direction
(`first_piece`, for `generate_captures`) is the lowest set bit of (its squares & occupancy), on
the reversed set for a falling direction.
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from mallard.engines.duck.board import BISHOP, BLACK_BIT, PAWN, ROOK


def _signed(word: int) -> int:
    """A 64-bit pattern as the int64 numba computes with (above 2**63 - 1 it would type as
    uint64, and numba mixes uint64 with int64 into floats)."""
    return word - (1 << 64) if word >= 1 << 63 else word


def board_sets(state) -> tuple[int, int, int]:
    """(S_OCCUPIED, S_WHITE, S_PAWNS) of a state, from its board (what make/unmake keep up to
    date)."""
    occupied = white = pawns = 0
    for b in range(64):
        piece = int(state[(b >> 3) * 16 + (b & 7)])
        if piece:
            occupied |= 1 << b
            if piece < BLACK_BIT:
                white |= 1 << b
            if piece & 7 == PAWN:
                pawns |= 1 << b
    return _signed(occupied), _signed(white), _signed(pawns)


FILE_A = 0x0101010101010101
NOT_FILE_A = _signed(~FILE_A & (2 ** 64 - 1))
NOT_FILE_H = _signed(~(FILE_A << 7) & (2 ** 64 - 1))

# the eight lines as (rank step, file step): rising ones walk to higher bits, falling ones lower
# (a rook's two lines come first in each, a bishop's two last)
RISING = ((0, 1), (1, 0), (1, -1), (1, 1))        # east, north, north-west, north-east
FALLING = ((0, -1), (-1, 0), (-1, 1), (-1, -1))   # west, south, south-east, south-west


def _line_table() -> np.ndarray:
    """LINE[d * 64 + b] for the rising lines (plain bits) then the falling ones (reversed
    bits): the squares of the line out of b."""
    line = np.zeros(8 * 64, dtype=np.int64)
    for d, (dr, df) in enumerate(RISING + FALLING):
        for b in range(64):
            rank, file = divmod(b, 8)
            squares = 0
            rank, file = rank + dr, file + df
            while 0 <= rank < 8 and 0 <= file < 8:
                square = rank * 8 + file
                squares |= 1 << (63 - square if d >= 4 else square)
                rank, file = rank + dr, file + df
            line[d * 64 + b] = _signed(squares)
    return line


def _step_targets(steps) -> np.ndarray:
    """By bit b: the set of the squares on the board one of `steps` (rank step, file step)
    away."""
    return np.array([_signed(sum(1 << ((b // 8 + dr) * 8 + b % 8 + df) for dr, df in steps
                                 if 0 <= b // 8 + dr < 8 and 0 <= b % 8 + df < 8))
                     for b in range(64)], dtype=np.int64)


LINE = _line_table()
KNIGHT_TARGETS = _step_targets(((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2),
                                (-2, -1)))
KING_TARGETS = _step_targets([(dr, df) for dr in (-1, 0, 1) for df in (-1, 0, 1) if dr or df])
PAWN_CAPTURES = np.array([_step_targets(((1, -1), (1, 1))),  # White's, then Black's
                          _step_targets(((-1, -1), (-1, 1)))])
# Kindergarten bitboards for `slider_reach`: a line's six inner squares (files b-g; ranks 2-7
# for a file) gathered by one multiply into the top six bits, in the order of their files (or
# ranks). The squares at the ends of a line never change what it reaches, so they are left out.
FILE_A_INNER = 0x0001010101010100          # a2 .. a7
FILE_TO_TOP = sum(1 << (57 - 7 * rank) for rank in range(1, 7))  # a(r+1) -> bit 57 + r
FILES_TO_TOP = 0x0202020202020202          # a square of file f (one per file) -> bit 57 + f


def _reach_along(squares, at, blocked) -> int:
    """Squares reached from index `at` of the line `squares` (in order) up to and including
    the first blocked one, both ways."""
    reach = 0
    for way in (-1, 1):
        index = at + way
        while 0 <= index < len(squares):
            reach += 1
            if squares[index] in blocked:
                break
            index += way
    return reach


def _diagonal_tables(file_step: int):
    """(INNER[b], REACH[b * 64 + inner], LINE[b]) for the diagonal through b whose file grows
    by `file_step` a rank: its squares on files b-g, the reach by their occupancy (bit f - 1
    for file f), and its squares but b."""
    inner_sets = np.zeros(64, dtype=np.int64)
    reach = np.zeros(64 * 64, dtype=np.int8)
    lines = np.zeros(64, dtype=np.int64)
    for b in range(64):
        rank, file = divmod(b, 8)
        squares = [r * 8 + file + (r - rank) * file_step for r in range(8)
                   if 0 <= file + (r - rank) * file_step < 8]
        inner_sets[b] = sum(1 << sq for sq in squares if 1 <= sq % 8 <= 6)
        lines[b] = _signed(sum(1 << sq for sq in squares if sq != b))
        for inner in range(64):
            blocked = {sq for sq in squares if 1 <= sq % 8 <= 6 and inner >> (sq % 8 - 1) & 1}
            reach[b * 64 + inner] = _reach_along(squares, squares.index(b), blocked)
    return inner_sets, reach, lines


def _line_span() -> np.ndarray:
    """LINE_SPAN[p * 64 + inner]: the positions (bit i for position i) reached from position p
    of a line of eight, with position i (1-6) occupied when bit i - 1 of inner is set."""
    table = np.zeros(8 * 64, dtype=np.int64)
    for at in range(8):
        for inner in range(64):
            for way in (-1, 1):
                index = at + way
                while 0 <= index < 8:
                    table[at * 64 + inner] |= 1 << index
                    if 1 <= index <= 6 and inner >> (index - 1) & 1:
                        break
                    index += way
    return table


LINE_SPAN = _line_span()
# LINE_REACH[p * 64 + inner]: how many positions LINE_SPAN holds
LINE_REACH = np.array([bin(span).count("1") for span in LINE_SPAN], dtype=np.int8)
# a line's positions (bit r for rank r, LINE_SPAN's) as squares of file a
FILE_A_OF_RANKS = np.array([sum(1 << (8 * r) for r in range(8) if mask >> r & 1)
                            for mask in range(256)], dtype=np.int64)
DIAGONAL_INNER, DIAGONAL_REACH, DIAGONAL_LINE = _diagonal_tables(1)
ANTIDIAGONAL_INNER, ANTIDIAGONAL_REACH, ANTIDIAGONAL_LINE = _diagonal_tables(-1)
FILES_OF_MASK = np.array([_signed(sum(FILE_A << f for f in range(8) if mask >> f & 1))
                          for mask in range(256)], dtype=np.int64)


@njit(cache=True, nogil=True, _nrt=False)
def square_bit(sq):
    """The set holding just the 0x88 square sq."""
    return 1 << ((sq >> 4) * 8 + (sq & 7))


@njit(cache=True, nogil=True, _nrt=False)
def bit_square(b):
    """The 0x88 square of bit b."""
    return (b >> 3) * 16 + (b & 7)


@njit(cache=True, nogil=True, _nrt=False)
def first_piece(d, b, occupied, occupied_reversed):
    """The bit of the first piece along line d (`LINE`'s order) out of bit b, -1 when none."""
    if d < 4:
        pieces = LINE[d * 64 + b] & occupied
        return lowest_index(pieces) if pieces != 0 else -1
    pieces = LINE[d * 64 + b] & occupied_reversed
    return 63 - lowest_index(pieces) if pieces != 0 else -1


@njit(cache=True, nogil=True, _nrt=False)
def lowest_index(bits):
    """The index of the lowest set bit (bits != 0)."""
    return trailing_zeros(bits)


@njit(cache=True, nogil=True, _nrt=False)
def count(bits):
    """How many bits are set (sign-safe: the masks keep the top bit out of every shifted sum)."""
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((bits * 0x0101010101010101) >> 56) & 0xFF


@njit(cache=True, nogil=True, _nrt=False)
def reverse(bits):
    """The set with square b moved to bit 63 - b (swaps of ever larger blocks; every right
    shift is masked below the sign bit)."""
    bits = ((bits >> 1) & 0x5555555555555555) | ((bits & 0x5555555555555555) << 1)
    bits = ((bits >> 2) & 0x3333333333333333) | ((bits & 0x3333333333333333) << 2)
    bits = ((bits >> 4) & 0x0F0F0F0F0F0F0F0F) | ((bits & 0x0F0F0F0F0F0F0F0F) << 4)
    bits = ((bits >> 8) & 0x00FF00FF00FF00FF) | ((bits & 0x00FF00FF00FF00FF) << 8)
    bits = ((bits >> 16) & 0x0000FFFF0000FFFF) | ((bits & 0x0000FFFF0000FFFF) << 16)
    return ((bits >> 32) & 0xFFFFFFFF) | (bits << 32)


@njit(cache=True, nogil=True, _nrt=False)
def pawn_files(pawns):
    """A bit per file that holds one of the pawns (which never stand on the last rank, so the
    set is positive and plain right shifts fold it)."""
    pawns |= pawns >> 32
    pawns |= pawns >> 16
    pawns |= pawns >> 8
    return pawns & 0xFF


@njit(cache=True, nogil=True, _nrt=False)
def capturing_pawns(pawns, targets, side):
    """The pawns of `side` (0 White) in `pawns` that have a square of `targets` diagonally in
    front of them. A right shift smears the sign bit only over the last rank, where no pawn
    stands."""
    if side == 0:
        return pawns & (((targets >> 7) & NOT_FILE_A) | ((targets >> 9) & NOT_FILE_H))
    return pawns & (((targets << 9) & NOT_FILE_A) | ((targets << 7) & NOT_FILE_H))


@njit(cache=True, nogil=True, _nrt=False)
def slider_reach(b, kind, occupied):
    """Squares a bishop, rook or queen on bit b reaches: along each of its lines, up to and
    including the first piece of either colour. Each line is one look-up (`LINE_REACH`,
    `DIAGONAL_REACH`, `ANTIDIAGONAL_REACH`) by the occupancy of its six inner squares."""
    reach = 0
    if kind != BISHOP:
        file = b & 7
        reach += LINE_REACH[file * 64 + ((occupied >> (b - file + 1)) & 63)]
        reach += LINE_REACH[(b >> 3) * 64 + (((((occupied >> file) & FILE_A_INNER)
                                                * FILE_TO_TOP) >> 58) & 63)]
    if kind != ROOK:
        reach += DIAGONAL_REACH[b * 64 + ((((occupied & DIAGONAL_INNER[b]) * FILES_TO_TOP)
                                           >> 58) & 63)]
        reach += ANTIDIAGONAL_REACH[b * 64 + ((((occupied & ANTIDIAGONAL_INNER[b])
                                                * FILES_TO_TOP) >> 58) & 63)]
    return reach


@njit(cache=True, nogil=True, _nrt=False)
def slider_attacks(b, kind, occupied):
    """The set of squares `slider_reach` counts: along each line of the bishop, rook or queen
    on bit b, up to and including the first piece. A line's positions reached (`LINE_SPAN`, by
    the same look-up index) are spread back onto the board: a rank's by a shift, a file's through
    `FILE_A_OF_RANKS`, a diagonal's by copying the file mask to every rank and keeping the
    diagonal (kindergarten bitboards)."""
    attacks = 0
    file = b & 7
    if kind != BISHOP:
        rank = b >> 3
        attacks |= LINE_SPAN[file * 64 + ((occupied >> (b - file + 1)) & 63)] << (8 * rank)
        ranks = LINE_SPAN[rank * 64 + (((((occupied >> file) & FILE_A_INNER) * FILE_TO_TOP)
                                         >> 58) & 63)]
        attacks |= FILE_A_OF_RANKS[ranks] << file
    if kind != ROOK:
        files = LINE_SPAN[file * 64 + ((((occupied & DIAGONAL_INNER[b]) * FILES_TO_TOP) >> 58)
                                       & 63)]
        attacks |= files * FILE_A & DIAGONAL_LINE[b]
        files = LINE_SPAN[file * 64 + ((((occupied & ANTIDIAGONAL_INNER[b]) * FILES_TO_TOP)
                                        >> 58) & 63)]
        attacks |= files * FILE_A & ANTIDIAGONAL_LINE[b]
    return attacks


@njit(cache=True, nogil=True, _nrt=False)
def knight_reach(b, own):
    """Squares a knight on bit b reaches that hold no piece of its own colour (`own`)."""
    return count(KNIGHT_TARGETS[b] & ~own)


@njit(cache=True, nogil=True, _nrt=False)
def _beside(bits):
    """The set with each square's neighbours on the files either side added."""
    return bits | ((bits << 1) & NOT_FILE_A) | ((bits >> 1) & NOT_FILE_H)


@njit(cache=True, nogil=True, _nrt=False)
def _passed_by_rank(passed, white):
    """Passed pawns counted by the rank from the owner's side, four bits per rank."""
    packed = 0
    while passed != 0:
        b = lowest_index(passed)
        passed &= passed - 1
        packed += 1 << (4 * ((b >> 3) if white else 7 - (b >> 3)))
    return packed


@njit(cache=True, nogil=True, _nrt=False)
def pawn_structure(pawns, white):
    """White's doubled (extra pawns on a file), isolated and passed pawns, then Black's; the
    passed ones counted by the rank from the owner's side, four bits per rank. A pawn is passed
    when no enemy pawn stands ahead of it on its file or the two beside it. `pawns`, `white`:
    the state's S_PAWNS and S_WHITE.

    Pawns never stand on the first or last rank, so the spans below stay clear of the sign bit
    where a right shift would smear it."""
    white_pawns = pawns & white
    black_pawns = pawns & ~white
    white_files = pawn_files(white_pawns)
    black_files = pawn_files(black_pawns)
    below_black = black_pawns >> 8   # each Black pawn's file, the squares below it
    below_black |= below_black >> 8
    below_black |= below_black >> 16
    below_black |= below_black >> 32
    above_white = white_pawns << 8   # each White pawn's file, the squares above it
    above_white |= above_white << 8
    above_white |= above_white << 16
    above_white |= above_white << 32
    white_passed = white_pawns & ~_beside(below_black)
    black_passed = black_pawns & ~_beside(above_white)
    white_alone = white_files & ~((white_files << 1) | (white_files >> 1))
    black_alone = black_files & ~((black_files << 1) | (black_files >> 1))
    white_count = count(white_pawns)
    black_count = count(black_pawns)
    return (white_count - count(white_files), count(white_pawns & FILES_OF_MASK[white_alone]),
            _passed_by_rank(white_passed, True),
            black_count - count(black_files), count(black_pawns & FILES_OF_MASK[black_alone]),
            _passed_by_rank(black_passed, False))
