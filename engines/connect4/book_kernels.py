"""Numba kernels for opening books: decoding BitBully's 12-ply database, enumerating positions.

BitBully's exact-distance database stores, per position with 12 stones on 7x6 (one orientation
per mirror pair), a 32-bit code read from the most significant bit: columns left to right, each
column bottom-up as `10` (first player) / `11` (second player) tokens closed by a `0`, then one
padding `0`; and a signed byte `v`: 0 a draw, else `100 - plies to the end`, positive when the
first player wins. With 12 stones the first player is to move, so the Pons score of the side to
move is sign(v) * (area + 1 - (11 + d)) // 2 with d = 100 - |v| (the winning stone is the
(12 + d)-th of the game).

Positions are (cur, mask) pairs in the kernels' bit layout; books are keyed by the canonical key
(the smaller of the key and its mirror's).
"""

import numpy as np
from numba import njit

from engines.connect4.kernels import (C_AREA, C_BOARD, C_BOTTOM, C_COLUMN, C_H, C_W, U0, U1, _bits,
                                      can_win_next, canonical_key, mirror_key, winning_cells)


@njit(cache=True, nogil=True)
def decode_bitbully(codes, values, ctx, out_keys, out_scores):
    """Decode BitBully records into canonical keys and Pons scores; returns how many decoded
    (a record that does not describe 12 stones on this board is skipped)."""
    width = ctx[C_W]
    height = ctx[C_H]
    area = ctx[C_AREA]
    h1 = height + 1
    count = 0
    for i in range(codes.shape[0]):
        code = np.uint64(np.uint32(codes[i]))
        bit = 31
        first = U0
        mask = U0
        stones = 0
        valid = True
        for c in range(width):
            row = 0
            while True:
                if bit < 0:
                    valid = False
                    break
                b = (code >> np.uint64(bit)) & U1
                bit -= 1
                if b == U0:
                    break
                if bit < 0 or row >= height:
                    valid = False
                    break
                who = (code >> np.uint64(bit)) & U1
                bit -= 1
                cell = U1 << np.uint64(c * h1 + row)
                mask |= cell
                if who == U0:
                    first |= cell
                stones += 1
                row += 1
            if not valid:
                break
        if not valid or stones != 12:
            continue
        v = np.int64(values[i])
        score = 0
        if v != 0:
            d = 100 - abs(v)
            score = (area + 1 - (11 + d)) // 2
            if v < 0:
                score = -score
        out_keys[count] = canonical_key(first + mask, ctx)
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
