"""Numba kernels of the Duck Chess rules: move generation, make/unmake, duck blocking, perft.

Every kernel works on the int64 state array and move encoding described in `board.py`; the undo
stack is a flat int64 array of UNDO_SIZE words per move (row `state[S_DEPTH]` is the next free
one). Move buffers are flat int64 arrays with MAX_MOVES slots per ply.

A turn is made in two steps, as the search needs them: `push_piece_move` plays the chess move and
lifts the duck (S_DUCK = -1; an en-passant square is set whenever a pawn could capture there),
`drop_duck` puts the duck down (and drops the en-passant square when the duck lands on it, since
the capture is then impossible). `make_move` does both for a full move; `pop_move` undoes either.
Besides the board and the key, a move keeps the state's sets (occupied, White, pawns) and the
evaluation's material-and-placement sum up to date, so that neither the evaluation nor the
capture generator scans the board.

Piece moves are generated on the board without the duck and filtered with the ray tables
(`is_blocked`): the same generator gives the search every move that is legal for some duck square.
Once a king is captured the position has no moves; a side with no move wins (see `rules.py`).
"""

import numpy as np
from numba import njit

from mallard.engines.duck import bitboards
from mallard.engines.duck.board import (
    BISHOP,
    BISHOP_DIRECTIONS,
    BLACK_BIT,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_KEEP,
    CASTLE_WK,
    CASTLE_WQ,
    KIND_CASTLE,
    KIND_DOUBLE,
    KIND_EN_PASSANT,
    KING,
    KING_STEPS,
    KNIGHT,
    KNIGHT_STEPS,
    MAX_MOVES,
    MOVE_DUCK,
    MOVE_DUCK_SHIFT,
    MOVE_KIND_SHIFT,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    PAWN,
    QUEEN,
    RAY_DIRECTION,
    RAY_DISTANCE,
    RAY_OFFSET,
    ROOK,
    ROOK_DIRECTIONS,
    S_CASTLE,
    S_DEPTH,
    S_DUCK,
    S_EP,
    S_FULLMOVE,
    S_HALFMOVE,
    S_KEY,
    S_KING,
    S_OCCUPIED,
    S_PAWNS,
    S_PIECES,
    S_PLACEMENT,
    S_SIDE,
    S_WHITE,
    STEPS,
    U_CAPTURED,
    U_CASTLE,
    U_DUCK,
    U_EP,
    U_FULLMOVE,
    U_HALFMOVE,
    U_KEY,
    U_MOVE,
    U_OCCUPIED,
    U_PAWNS,
    U_PLACEMENT,
    U_WHITE,
    UNDO_SIZE,
    Z_CASTLE,
    Z_DUCK,
    Z_EP,
    Z_PIECE,
    Z_SIDE,
)
from mallard.engines.duck.evaluation import PIECE_SQUARE


@njit(cache=True, nogil=True, _nrt=False)
def path_end(move):
    """The last square of a move's path: its target, or the rook's square for castling."""
    frm = move & 0x7F
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    if (move >> MOVE_KIND_SHIFT) & 3 == KIND_CASTLE:
        return frm + 3 if to > frm else frm - 4
    return to


@njit(cache=True, nogil=True, _nrt=False)
def ray_blocks(frm, end, k):
    """Whether the empty square k lies on the path from `frm` up to and including `end`."""
    a = k - frm + RAY_OFFSET
    b = end - frm + RAY_OFFSET
    return RAY_DIRECTION[a] == RAY_DIRECTION[b] and RAY_DISTANCE[a] <= RAY_DISTANCE[b]


@njit(cache=True, nogil=True, _nrt=False)
def is_blocked(move, k):
    """Whether a duck on the empty square k makes the piece move illegal (two table look-ups)."""
    return ray_blocks(move & 0x7F, path_end(move), k)


@njit(cache=True, nogil=True)
def most_blocking_square(state, old_duck):
    """The empty square, other than `old_duck`, where a duck makes most of the side to move's
    piece moves illegal (the first in a1, b1, ... order on a tie); -1 when none is free."""
    moves = np.empty(MAX_MOVES, dtype=np.int64)
    count = generate_piece_moves(state, moves, 0, -1)
    best, best_blocked = -1, -1
    for rank in range(8):
        for file in range(8):
            square = rank * 16 + file
            if state[square] != 0 or square == old_duck:
                continue
            blocked = 0
            for index in range(count):
                if is_blocked(moves[index], square):
                    blocked += 1
            if blocked > best_blocked:
                best, best_blocked = square, blocked
    return best


@njit(cache=True, nogil=True, _nrt=False)
def _emit(out, n, move, frm, end, duck):
    if duck >= 0 and ray_blocks(frm, end, duck):
        return n
    out[n] = move
    return n + 1


@njit(cache=True, nogil=True, _nrt=False)
def _emit_pawn(out, n, frm, to, kind, promote, duck):
    base = frm | to << MOVE_TO_SHIFT | kind << MOVE_KIND_SHIFT
    if promote:
        for promotion in (QUEEN, KNIGHT, ROOK, BISHOP):
            n = _emit(out, n, base | promotion << MOVE_PROMO_SHIFT, frm, to, duck)
        return n
    return _emit(out, n, base, frm, to, duck)


@njit(cache=True, nogil=True, _nrt=False)
def own_pieces(state):
    """The set of the side to move's pieces (from S_OCCUPIED and S_WHITE)."""
    if state[S_SIDE] == 0:
        return state[S_WHITE]
    return state[S_OCCUPIED] & ~state[S_WHITE]


@njit(cache=True, nogil=True, _nrt=False)
def generate_piece_moves(state, out, start, duck):
    """Write the piece moves of the side to move into out[start:]; return the end index.

    `duck` is the square whose duck must be respected, or -1 for every move legal under some
    duck square. No moves once either king has been captured (`generate_captures` writes just
    the captures, in the order they have here).
    """
    n = start
    if state[S_KING] < 0 or state[S_KING + 1] < 0:
        return n
    side = state[S_SIDE]
    forward = 16 if side == 0 else -16
    start_rank = 1 if side == 0 else 6
    last_rank = 7 if side == 0 else 0
    ep = state[S_EP]
    own = own_pieces(state)
    while own != 0:  # lowest bit first: rank by rank, file by file, as a walk of the board
        b = bitboards.lowest_index(own)
        own &= own - 1
        frm = bitboards.bit_square(b)
        rank = b >> 3
        kind = state[frm] & 7
        if kind == PAWN:
            to = frm + forward
            promote = (to >> 4) == last_rank
            if state[to] == 0:
                n = _emit_pawn(out, n, frm, to, 0, promote, duck)
                if rank == start_rank and state[to + forward] == 0:
                    n = _emit(out, n, frm | (to + forward) << MOVE_TO_SHIFT
                              | KIND_DOUBLE << MOVE_KIND_SHIFT, frm, to + forward, duck)
            for target in (to - 1, to + 1):
                if target & 0x88:
                    continue
                victim = state[target]
                if victim != 0 and (victim >> 3) != side:
                    n = _emit_pawn(out, n, frm, target, 0, promote, duck)
                elif target == ep:
                    n = _emit_pawn(out, n, frm, target, KIND_EN_PASSANT, False, duck)
        elif kind == KNIGHT or kind == KING:
            steps = KNIGHT_STEPS if kind == KNIGHT else KING_STEPS
            for step in steps:
                to = frm + step
                if to & 0x88:
                    continue
                victim = state[to]
                if victim == 0 or (victim >> 3) != side:
                    n = _emit(out, n, frm | to << MOVE_TO_SHIFT, frm, to, duck)
            if kind == KING:
                n = _castling(state, out, n, frm, side, duck)
        else:
            first = 0 if kind == ROOK else 4 if kind == BISHOP else 0
            last = 4 if kind == ROOK else 8
            for index in range(first, last):
                code = ROOK_DIRECTIONS[index] if index < 4 else BISHOP_DIRECTIONS[index - 4]
                step = STEPS[code]
                to = frm + step
                while not (to & 0x88):
                    victim = state[to]
                    if victim == 0:
                        n = _emit(out, n, frm | to << MOVE_TO_SHIFT, frm, to, duck)
                    else:
                        if (victim >> 3) != side:
                            n = _emit(out, n, frm | to << MOVE_TO_SHIFT, frm, to, duck)
                        break
                    to += step
    return n


# generate_captures: the directions of STEPS (codes 1..8) as lines of `bitboards.LINE`, in the
# order generate_piece_moves walks them
CODE_LINE = np.array([0, 0, 4, 1, 5, 2, 3, 6, 7], dtype=np.int64)


@njit(cache=True, nogil=True, _nrt=False)
def _take_piece(state, pieces):
    """The lowest of the set `pieces`: (its bit index, its square, its kind, the rest)."""
    b = bitboards.lowest_index(pieces)
    frm = bitboards.bit_square(b)
    return b, frm, state[frm] & 7, pieces & (pieces - 1)


@njit(cache=True, nogil=True, _nrt=False)
def generate_captures(state, out, start):
    """The moves of generate_piece_moves(state, out, start, -1) that take a piece (en passant
    included), in the same order, found with the state's sets (S_OCCUPIED, S_WHITE): the
    quiescence search asks for these at every node, and most pieces have none (one AND each),
    where the board walk followed every line to its end. The pawns and sliders with nothing to
    take are passed over whole (`capturing_pawns`, `slider_attacks`): 40% less time a call on
    positions of random play."""
    n = start
    if state[S_KING] < 0 or state[S_KING + 1] < 0:
        return n
    occupied = state[S_OCCUPIED]
    side = state[S_SIDE]
    own = own_pieces(state)
    enemy = occupied & ~own
    occupied_reversed = bitboards.reverse(occupied)
    ep = state[S_EP]
    ep_bit = 0 if ep < 0 else bitboards.square_bit(ep)
    last_rank = 7 if side == 0 else 0
    # only the pawns with something to take join the walk (most have nothing): the order of
    # what is written stays the walk's
    pieces = (own & ~state[S_PAWNS]) | bitboards.capturing_pawns(own & state[S_PAWNS],
                                                                   enemy | ep_bit, side)
    while pieces != 0:
        b, frm, kind, pieces = _take_piece(state, pieces)
        if kind == PAWN:
            targets = bitboards.PAWN_CAPTURES[side, b] & (enemy | ep_bit)
            while targets != 0:  # lowest first: the file to the left first, as the walk does
                to = bitboards.bit_square(bitboards.lowest_index(targets))
                targets &= targets - 1
                if to == ep and state[to] == 0:
                    n = _emit_pawn(out, n, frm, to, KIND_EN_PASSANT, False, -1)
                else:
                    n = _emit_pawn(out, n, frm, to, 0, (to >> 4) == last_rank, -1)
        elif kind == KNIGHT or kind == KING:
            targets = bitboards.KNIGHT_TARGETS[b] if kind == KNIGHT else bitboards.KING_TARGETS[b]
            if targets & enemy == 0:
                continue
            steps = KNIGHT_STEPS if kind == KNIGHT else KING_STEPS
            for step in steps:
                to = frm + step
                if not (to & 0x88) and state[to] != 0 and (state[to] >> 3) != side:
                    out[n] = frm | to << MOVE_TO_SHIFT
                    n += 1
        elif bitboards.slider_attacks(b, kind, occupied) & enemy != 0:  # most take nothing
            for index in range(4 if kind == BISHOP else 0, 4 if kind == ROOK else 8):
                code = ROOK_DIRECTIONS[index] if index < 4 else BISHOP_DIRECTIONS[index - 4]
                t = bitboards.first_piece(CODE_LINE[code], b, occupied, occupied_reversed)
                if t >= 0 and (enemy >> t) & 1:
                    out[n] = frm | bitboards.bit_square(t) << MOVE_TO_SHIFT
                    n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def has_piece_move(state):
    """Whether the side to move has a piece move (with the duck lifted, as the node's is): some
    piece has a free square next to it in one of its directions, a knight a free target, or a
    pawn its push or a capture. Castling adds nothing: it needs a rook with a free square beside
    it. The search asks this at every leaf, so nothing is generated: the first piece that can
    move answers (at the start position the king is boxed in, a knight answers)."""
    side = state[S_SIDE]
    if state[S_KING] < 0 or state[S_KING + 1] < 0:
        return False
    own = own_pieces(state)
    free = ~own
    enemy = state[S_OCCUPIED] & ~own
    ep = state[S_EP]
    if ep >= 0:
        enemy |= bitboards.square_bit(ep)
    forward = 16 if side == 0 else -16
    pieces = own
    while pieces != 0:
        b, frm, kind, pieces = _take_piece(state, pieces)
        if kind == KNIGHT:
            if bitboards.KNIGHT_TARGETS[b] & free != 0:
                return True
        elif kind == KING or kind == QUEEN:
            if bitboards.KING_TARGETS[b] & free != 0:
                return True
        elif kind == PAWN:
            # a pawn never stands on its last rank: the square ahead is on the board
            if state[frm + forward] == 0 or bitboards.PAWN_CAPTURES[side, b] & enemy != 0:
                return True
        else:
            for index in range(4 if kind == BISHOP else 0, 4 if kind == ROOK else 8):
                code = ROOK_DIRECTIONS[index] if index < 4 else BISHOP_DIRECTIONS[index - 4]
                to = frm + STEPS[code]
                if not (to & 0x88) and (state[to] == 0 or (state[to] >> 3) != side):
                    return True
    return False


@njit(cache=True, nogil=True, _nrt=False)
def _castling(state, out, n, frm, side, duck):
    rights = state[S_CASTLE]
    home = 4 if side == 0 else 0x74
    if frm != home:
        return n
    king_side = CASTLE_WK if side == 0 else CASTLE_BK
    queen_side = CASTLE_WQ if side == 0 else CASTLE_BQ
    rook = ROOK | side * BLACK_BIT
    castle = KIND_CASTLE << MOVE_KIND_SHIFT
    if rights & king_side and state[home + 3] == rook and state[home + 1] == 0 \
            and state[home + 2] == 0:
        n = _emit(out, n, home | (home + 2) << MOVE_TO_SHIFT | castle, home, home + 3, duck)
    if rights & queen_side and state[home - 4] == rook and state[home - 1] == 0 \
            and state[home - 2] == 0 and state[home - 3] == 0:
        n = _emit(out, n, home | (home - 2) << MOVE_TO_SHIFT | castle, home, home - 4, duck)
    return n


@njit(cache=True, nogil=True, _nrt=False)
def is_capture(state, move):
    return (state[(move >> MOVE_TO_SHIFT) & 0x7F] != 0
            or (move >> MOVE_KIND_SHIFT) & 3 == KIND_EN_PASSANT)


@njit(cache=True, nogil=True, _nrt=False)
def push_piece_move(state, undo, move):
    """Play the chess move of the side to move and lift the duck; record the undo row."""
    row = state[S_DEPTH] * UNDO_SIZE
    state[S_DEPTH] += 1
    undo[row + U_MOVE] = move
    undo[row + U_CASTLE] = state[S_CASTLE]
    undo[row + U_EP] = state[S_EP]
    undo[row + U_DUCK] = state[S_DUCK]
    undo[row + U_HALFMOVE] = state[S_HALFMOVE]
    undo[row + U_KEY] = state[S_KEY]
    undo[row + U_FULLMOVE] = state[S_FULLMOVE]
    occupied = state[S_OCCUPIED]
    white = state[S_WHITE]
    pawns = state[S_PAWNS]
    placement = state[S_PLACEMENT]
    undo[row + U_OCCUPIED] = occupied
    undo[row + U_WHITE] = white
    undo[row + U_PAWNS] = pawns
    undo[row + U_PLACEMENT] = placement

    side = state[S_SIDE]
    frm = move & 0x7F
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    promotion = (move >> MOVE_PROMO_SHIFT) & 7
    kind = (move >> MOVE_KIND_SHIFT) & 3
    piece = state[frm]
    key = state[S_KEY] ^ Z_SIDE
    if state[S_EP] >= 0:
        key ^= Z_EP[state[S_EP]]
        state[S_EP] = -1

    if kind == KIND_EN_PASSANT:
        taken_on = to - 16 if side == 0 else to + 16
    else:
        taken_on = to
    captured = state[taken_on]
    undo[row + U_CAPTURED] = captured
    if captured != 0:
        state[taken_on] = 0
        key ^= Z_PIECE[captured * 128 + taken_on]
        state[S_PIECES] -= 1
        occupied &= ~bitboards.square_bit(taken_on)
        white &= ~bitboards.square_bit(taken_on)
        pawns &= ~bitboards.square_bit(taken_on)
        placement -= PIECE_SQUARE[captured * 128 + taken_on]
        if captured & 7 == KING:
            state[S_KING + 1 - side] = -1

    landed = piece if promotion == 0 else side * BLACK_BIT + promotion
    state[frm] = 0
    state[to] = landed
    key ^= Z_PIECE[piece * 128 + frm] ^ Z_PIECE[landed * 128 + to]
    moved = bitboards.square_bit(frm) | bitboards.square_bit(to)
    occupied = (occupied & ~moved) | bitboards.square_bit(to)
    if side == 0:
        white = (white & ~moved) | bitboards.square_bit(to)
    if piece & 7 == PAWN:
        pawns &= ~moved
        if promotion == 0:
            pawns |= bitboards.square_bit(to)
    placement += PIECE_SQUARE[landed * 128 + to] - PIECE_SQUARE[piece * 128 + frm]
    if piece & 7 == KING:
        state[S_KING + side] = to
        if kind == KIND_CASTLE:
            rook_from = frm + 3 if to > frm else frm - 4
            rook_to = frm + 1 if to > frm else frm - 1
            rook = state[rook_from]
            state[rook_from] = 0
            state[rook_to] = rook
            key ^= Z_PIECE[rook * 128 + rook_from] ^ Z_PIECE[rook * 128 + rook_to]
            moved = bitboards.square_bit(rook_from) | bitboards.square_bit(rook_to)
            occupied ^= moved
            if side == 0:
                white ^= moved
            placement += PIECE_SQUARE[rook * 128 + rook_to] - PIECE_SQUARE[rook * 128 + rook_from]
    state[S_OCCUPIED] = occupied
    state[S_WHITE] = white
    state[S_PAWNS] = pawns
    state[S_PLACEMENT] = placement

    rights = state[S_CASTLE]
    kept = rights & CASTLE_KEEP[frm] & CASTLE_KEEP[to]
    if kept != rights:
        key ^= Z_CASTLE[rights] ^ Z_CASTLE[kept]
        state[S_CASTLE] = kept

    if piece & 7 == PAWN or captured != 0:
        state[S_HALFMOVE] = 0
    else:
        state[S_HALFMOVE] += 1
    if side == 1:
        state[S_FULLMOVE] += 1

    if kind == KIND_DOUBLE:
        enemy_pawn = (1 - side) * BLACK_BIT + PAWN
        if (not ((to - 1) & 0x88) and state[to - 1] == enemy_pawn) or \
                (not ((to + 1) & 0x88) and state[to + 1] == enemy_pawn):
            passed = (frm + to) >> 1
            state[S_EP] = passed
            key ^= Z_EP[passed]

    state[S_DUCK] = -1
    state[S_SIDE] = 1 - side
    state[S_KEY] = key


@njit(cache=True, nogil=True, _nrt=False)
def push_pass(state, undo):
    """Hand the move to the opponent without a piece move (the search's null move; not a move
    of the game); `pop_pass` undoes it. Its undo row's move is 0, which no piece move is."""
    row = state[S_DEPTH] * UNDO_SIZE
    state[S_DEPTH] += 1
    undo[row + U_MOVE] = 0
    undo[row + U_CAPTURED] = 0
    undo[row + U_EP] = state[S_EP]
    undo[row + U_DUCK] = state[S_DUCK]
    undo[row + U_KEY] = state[S_KEY]
    key = state[S_KEY] ^ Z_SIDE
    if state[S_EP] >= 0:
        key ^= Z_EP[state[S_EP]]
        state[S_EP] = -1
    state[S_DUCK] = -1
    state[S_SIDE] = 1 - state[S_SIDE]
    state[S_KEY] = key


@njit(cache=True, nogil=True, _nrt=False)
def pop_pass(state, undo):
    state[S_DEPTH] -= 1
    row = state[S_DEPTH] * UNDO_SIZE
    state[S_SIDE] = 1 - state[S_SIDE]
    state[S_EP] = undo[row + U_EP]
    state[S_DUCK] = undo[row + U_DUCK]
    state[S_KEY] = undo[row + U_KEY]


@njit(cache=True, nogil=True, _nrt=False)
def last_move(state, undo):
    """The last move on the undo stack: 0 for a pass (`push_pass`), -1 when it is empty."""
    if state[S_DEPTH] == 0:
        return -1
    return undo[(state[S_DEPTH] - 1) * UNDO_SIZE + U_MOVE]


@njit(cache=True, nogil=True, _nrt=False)
def passed_last(state, undo):
    """Whether the last thing on the undo stack is a pass (`push_pass`)."""
    return last_move(state, undo) == 0


@njit(cache=True, nogil=True, _nrt=False)
def drop_duck(state, square):
    """Put the lifted duck on an empty square (after `push_piece_move`)."""
    state[S_DUCK] = square
    if state[S_EP] == square:
        state[S_KEY] ^= Z_EP[square]
        state[S_EP] = -1


@njit(cache=True, nogil=True, _nrt=False)
def make_move(state, undo, move):
    """Play a full move (piece move and duck square)."""
    push_piece_move(state, undo, move)
    drop_duck(state, (move >> MOVE_DUCK_SHIFT) & 0x7F)


@njit(cache=True, nogil=True, _nrt=False)
def pop_move(state, undo):
    """Undo the last `push_piece_move` / `make_move`, duck included."""
    state[S_DEPTH] -= 1
    row = state[S_DEPTH] * UNDO_SIZE
    move = undo[row + U_MOVE]
    captured = undo[row + U_CAPTURED]
    side = 1 - state[S_SIDE]
    frm = move & 0x7F
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    promotion = (move >> MOVE_PROMO_SHIFT) & 7
    kind = (move >> MOVE_KIND_SHIFT) & 3

    piece = state[to]
    if promotion != 0:
        piece = side * BLACK_BIT + PAWN
    state[to] = 0
    state[frm] = piece
    if captured != 0:
        taken_on = to
        if kind == KIND_EN_PASSANT:
            taken_on = to - 16 if side == 0 else to + 16
        state[taken_on] = captured
        state[S_PIECES] += 1
        if captured & 7 == KING:
            state[S_KING + 1 - side] = to
    if piece & 7 == KING:
        state[S_KING + side] = frm
        if kind == KIND_CASTLE:
            rook_from = frm + 3 if to > frm else frm - 4
            rook_to = frm + 1 if to > frm else frm - 1
            state[rook_from] = state[rook_to]
            state[rook_to] = 0

    state[S_SIDE] = side
    state[S_CASTLE] = undo[row + U_CASTLE]
    state[S_EP] = undo[row + U_EP]
    state[S_DUCK] = undo[row + U_DUCK]
    state[S_HALFMOVE] = undo[row + U_HALFMOVE]
    state[S_KEY] = undo[row + U_KEY]
    state[S_FULLMOVE] = undo[row + U_FULLMOVE]
    state[S_OCCUPIED] = undo[row + U_OCCUPIED]
    state[S_WHITE] = undo[row + U_WHITE]
    state[S_PAWNS] = undo[row + U_PAWNS]
    state[S_PLACEMENT] = undo[row + U_PLACEMENT]


@njit(cache=True, nogil=True, _nrt=False)
def compute_key(state):
    """The Zobrist key of everything but the duck, from scratch (S_KEY is kept incrementally)."""
    key = 0
    for rank in range(8):
        for file in range(8):
            sq = rank * 16 + file
            if state[sq] != 0:
                key ^= Z_PIECE[state[sq] * 128 + sq]
    if state[S_SIDE] == 1:
        key ^= Z_SIDE
    key ^= Z_CASTLE[state[S_CASTLE]]
    if state[S_EP] >= 0:
        key ^= Z_EP[state[S_EP]]
    return key


@njit(cache=True, nogil=True, _nrt=False)
def full_key(state):
    """The repetition key: the duck-free key combined with the duck's own term."""
    duck = state[S_DUCK]
    return state[S_KEY] ^ (Z_DUCK[duck] if duck >= 0 else 0)


@njit(cache=True, nogil=True, _nrt=False)
def free_squares(state):
    """Squares the next duck may take before the piece move: empty and not the duck's own."""
    return 64 - state[S_PIECES] - (1 if state[S_DUCK] >= 0 else 0)


@njit(cache=True, nogil=True)
def generate_full_moves(state, undo, out):
    """Every legal full move (piece move x duck square) into `out`; returns the count."""
    pieces = np.empty(MAX_MOVES, dtype=np.int64)
    count = generate_piece_moves(state, pieces, 0, state[S_DUCK])
    old_duck = state[S_DUCK]
    n = 0
    for i in range(count):
        move = pieces[i]
        push_piece_move(state, undo, move)
        for rank in range(8):
            for file in range(8):
                sq = rank * 16 + file
                if state[sq] == 0 and sq != old_duck:
                    out[n] = move | sq << MOVE_DUCK_SHIFT | MOVE_DUCK
                    n += 1
        pop_move(state, undo)
    return n


@njit(cache=True, nogil=True, _nrt=False)
def _bulk_leaves(state, moves, base):
    """Leaves one ply below: every piece move times the squares its duck may take."""
    end = generate_piece_moves(state, moves, base, state[S_DUCK])
    free = free_squares(state)
    total = 0
    for i in range(base, end):
        total += free + (1 if is_capture(state, moves[i]) else 0)
    return total


@njit(cache=True, nogil=True)
def perft(state, undo, moves, ply, depth, bulk):
    """Leaf count of the full-move tree to `depth`; with `bulk`, the last ply is counted, not made.

    A position whose king is gone or which has no move has no children. The tree walk keeps
    its own stack (no recursion: numba's cache mishandles recursive functions, numba #6061).
    """
    if depth == 0:
        return 1
    if bulk and depth == 1:
        return _bulk_leaves(state, moves, ply * MAX_MOVES)
    cursor = np.zeros(depth, dtype=np.int64)     # next piece move of each level
    end = np.zeros(depth, dtype=np.int64)
    duck_at = np.zeros(depth, dtype=np.int64)    # the duck each level's side must move
    square_at = np.full(depth, -1, dtype=np.int64)  # duck square being tried, -1: no move made
    ep_at = np.zeros(depth, dtype=np.int64)
    key_at = np.zeros(depth, dtype=np.int64)
    total = 0
    level = 0
    base = ply * MAX_MOVES
    cursor[0] = base
    end[0] = generate_piece_moves(state, moves, base, state[S_DUCK])
    duck_at[0] = state[S_DUCK]
    while level >= 0:
        sq = square_at[level]
        if sq < 0:
            if cursor[level] == end[level]:
                level -= 1
                if level >= 0:
                    state[S_EP] = ep_at[level]
                    state[S_KEY] = key_at[level]
                continue
            push_piece_move(state, undo, moves[cursor[level]])
            ep_at[level] = state[S_EP]
            key_at[level] = state[S_KEY]
        sq += 1
        while sq < 128 and ((sq & 0x88) or state[sq] != 0 or sq == duck_at[level]):
            sq += 1
        if sq == 128:
            pop_move(state, undo)
            cursor[level] += 1
            square_at[level] = -1
            continue
        square_at[level] = sq
        remaining = depth - level - 1
        drop_duck(state, sq)
        if remaining == 0:
            total += 1
            state[S_EP] = ep_at[level]
            state[S_KEY] = key_at[level]
            continue
        if bulk and remaining == 1:
            total += _bulk_leaves(state, moves, (ply + level + 1) * MAX_MOVES)
            state[S_EP] = ep_at[level]
            state[S_KEY] = key_at[level]
            continue
        level += 1
        base = (ply + level) * MAX_MOVES
        cursor[level] = base
        end[level] = generate_piece_moves(state, moves, base, state[S_DUCK])
        duck_at[level] = state[S_DUCK]
        square_at[level] = -1
    return total


@njit(cache=True, nogil=True)
def perft_divide(state, undo, moves, depth, bulk, out_moves, out_counts):
    """Per legal full move of the root, the perft count below it; returns the number of moves.
    (With reference counting, unlike the kernels around it: generate_full_moves makes an array,
    and compiled first from here, without it, it would not compile.)"""
    count = generate_full_moves(state, undo, out_moves)
    for i in range(count):
        make_move(state, undo, out_moves[i])
        out_counts[i] = perft(state, undo, moves, 1, depth - 1, bulk)
        pop_move(state, undo)
    return count
