"""Numba kernels for opening books: decoding BitBully's 12-ply database, enumerating positions.

BitBully's exact-distance database (`book_12ply_distances.dat` of `bitbully-databases`, read by
BitBully's `OpeningBook::readline`) is a sequence of 5-byte records sorted by their code: a signed
big-endian 32-bit code, then a signed byte `v`. There is one record per mirror pair of the 7x6
positions with 12 stones in which the side to move (the first player) cannot win at once, in one
orientation (BitBully looks a position up, then its mirror). The code is `Board::toHuffman`,
read from the most significant bit: columns left to right, each column bottom-up as `10` (a
first-player stone) / `11` (a second-player stone) tokens closed by a `0` (a full column too), then
one padding `0` (12 * 2 + 7 + 1 = 32 bits). The value is from the first player's side, who is the
side to move: 0 a draw, else `100 - d` for a win / `-(100 - d)` for a loss where the game ends
`d` plies from the position, so the winning stone is the (12 + d)-th of the game. The Pons score
of the side to move is sign(v) * (area + 1 - (11 + d)) // 2 with d = 100 - |v|, which is
BitBully's own `OpeningBook::convertValue` (sign(v) * ((30 - d) / 2 + 1)).

`decode_bitbully` depends on nothing outside this file: numba's on-disk cache of a function is
invalidated only when the function's own source file changes, while the constants and inlined
functions it takes from another module are compiled into it. (A decoder cached against an older
`kernels.py` read the board area from a `ctx` slot that had since become another field and scored
most positions wrongly.) `engines/__init__.py` now keys the whole numba cache by a hash of every
engine source, which covers `expand_level` and `probe_worthy` (they use `kernels.py`'s move
generation); the decoder stays self-contained all the same, as the book conversion's check
(`book._check_compiled_decoder`) compares it with its Python source.

Positions are (cur, mask) pairs in the kernels' bit layout (column c, row r -> bit c*(H+1) + r);
books are keyed by the canonical key of `cur + mask` (the smaller of the key and its mirror's).
"""

import numpy as np
from numba import njit

from mallard.engines.connect4.kernels import (
    C_BOARD,
    C_BOTTOM,
    C_COLUMN,
    C_W,
    U0,
    _bits,
    can_win_next,
    mirror_key,
    winning_cells,
)

BITBULLY_STONES = 12
BITBULLY_WIN = 100  # |v| = BITBULLY_WIN - plies from the position to the end of the game

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_CODE_BITS = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def _mirrored(key, width, h1):
    """The key of the left-right mirrored position (self-contained: see the module docstring)."""
    column = (_ONE << np.uint64(h1)) - _ONE
    out = _ZERO
    for c in range(width):
        bits = (key >> np.uint64(c * h1)) & column
        out |= bits << np.uint64((width - 1 - c) * h1)
    return out


@njit(cache=True, nogil=True)
def decode_bitbully(codes, values, width, height, out_keys, out_scores):
    """Decode BitBully records (int64 codes holding the signed 32-bit code, int64 values) into
    canonical keys of `cur + mask` on a width x height board and Pons scores of the side to move;
    returns how many were decoded (a record that does not describe 12 stones fitting the board,
    with the padding bit 0, is skipped)."""
    h1 = height + 1
    area = width * height
    count = 0
    for i in range(codes.shape[0]):
        code = np.uint64(codes[i]) & _CODE_BITS
        bit = 31
        first = _ZERO
        mask = _ZERO
        stones = 0
        valid = True
        for c in range(width):
            row = 0
            while True:
                if bit < 0:
                    valid = False
                    break
                b = (code >> np.uint64(bit)) & _ONE
                bit -= 1
                if b == _ZERO:
                    break  # end of the column
                if bit < 0 or row >= height:
                    valid = False
                    break
                second = (code >> np.uint64(bit)) & _ONE
                bit -= 1
                cell = _ONE << np.uint64(c * h1 + row)
                mask |= cell
                if second == _ZERO:
                    first |= cell
                stones += 1
                row += 1
            if not valid:
                break
        if not valid or stones != BITBULLY_STONES or bit != 0 or (code & _ONE) != _ZERO:
            continue
        v = np.int64(values[i])
        score = 0
        if v != 0:
            d = BITBULLY_WIN - abs(v)
            score = (area + 1 - (BITBULLY_STONES - 1 + d)) // 2
            if v < 0:
                score = -score
        key = first + mask  # 12 stones: the first player is the side to move
        mirrored = _mirrored(key, width, h1)
        out_keys[count] = mirrored if mirrored < key else key
        out_scores[count] = score
        count += 1
    return count


@njit(cache=True, nogil=True)
def expand_level(curs, masks, ctx, out_curs, out_masks):
    """Children of each position (canonical orientation) that do not end the game; returns the
    count written. The caller removes duplicates."""
    width = ctx[C_W]
    count = 0
    for i in range(curs.shape[0]):
        cur = curs[i]
        mask = masks[i]
        possible = (mask + _bits(ctx, C_BOTTOM)) & _bits(ctx, C_BOARD)
        wins = winning_cells(cur, mask, ctx)
        for c in range(width):
            move = possible & _bits(ctx, C_COLUMN + c)
            if move == U0 or (move & wins) != U0:
                continue
            child_cur = cur ^ mask
            child_mask = mask | move
            key = child_cur + child_mask
            mirrored = mirror_key(key, ctx)
            if mirrored < key:
                child_cur = mirror_key(child_cur, ctx)
                child_mask = mirror_key(child_mask, ctx)
            out_curs[count] = child_cur
            out_masks[count] = child_mask
            count += 1
    return count


@njit(cache=True, nogil=True)
def probe_worthy(curs, masks, ctx, out):
    """Marks the positions a search can probe: the side to move cannot win at once."""
    for i in range(curs.shape[0]):
        out[i] = not can_win_next(curs[i], masks[i], ctx)
