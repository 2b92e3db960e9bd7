"""Numba kernels of the Ultimate Tic-Tac-Toe rules: move generation, copy-make, perft, the
critical-board analysis. They work on the state array of `board.py`; positions are copied (27
words) instead of undone, so a search keeps one state row per ply.

Critical boards (the pruning of the write-up): board b is critical for P when P winning b would
complete a global line of P and P has a one-move win inside b. Sending P to a critical board, or
to a closed board (a free move, from where P can reach any critical board), loses at once, so
the cells that do so form the opponent's "losing set": the cell numbers c with board c critical
for P or closed, when P has any critical board at all.
"""

import numpy as np
from numba import njit

from mallard.engines.uttt.board import (
    DRAWN,
    FULL,
    HAS_LINE,
    O_WON,
    POPCOUNT,
    RESULT_NONE,
    S_DRAWN,
    S_FORCED,
    S_KEY,
    S_LAST,
    S_O,
    S_PLY,
    S_RESULT,
    S_SIDE,
    S_WON_O,
    S_WON_X,
    S_X,
    STATE_SIZE,
    WINNING_CELLS,
    X_WON,
    Z_CELL,
    Z_CLOSED,
    Z_FORCED,
    Z_SIDE,
)


@njit(cache=True, nogil=True, _nrt=False)
def copy_state(child, state):
    """`child[:] = state` as a loop: numba's slice assignment checks the shapes with an error
    message whose string formatting alone costs seconds of the first (cold) compile."""
    for index in range(state.shape[0]):
        child[index] = state[index]


@njit(cache=True, nogil=True, _nrt=False)
def compute_key(state):
    closed = state[S_WON_X] | state[S_WON_O] | state[S_DRAWN]
    key = np.int64(0)
    for board in range(9):
        if closed >> board & 1:
            outcome = 0 if state[S_WON_X] >> board & 1 else (1 if state[S_WON_O] >> board & 1
                                                              else 2)
            key ^= Z_CLOSED[board, outcome]
            continue
        for player in range(2):
            cells = state[S_X + 9 * player + board]
            for cell in range(9):
                if cells >> cell & 1:
                    key ^= Z_CELL[player, board * 9 + cell]
    forced = state[S_FORCED]
    key ^= Z_FORCED[9 if forced < 0 else forced]
    if state[S_SIDE] == 1:
        key ^= Z_SIDE[0]
    return key


@njit(cache=True, nogil=True, _nrt=False)
def closed_boards(state):
    return state[S_WON_X] | state[S_WON_O] | state[S_DRAWN]


@njit(cache=True, nogil=True, _nrt=False)
def generate_moves(state, moves):
    """Writes the legal moves into `moves` (81 slots); returns their number (0 when over)."""
    if state[S_RESULT] != RESULT_NONE:
        return 0
    count = 0
    forced = state[S_FORCED]
    closed = closed_boards(state)
    for board in range(9):
        if forced >= 0 and board != forced:
            continue
        if closed >> board & 1:
            continue
        empty = FULL & ~(state[S_X + board] | state[S_O + board])
        while empty:
            cell = 0
            low = empty & -empty
            while not (low >> cell) & 1:
                cell += 1
            moves[count] = board * 9 + cell
            count += 1
            empty ^= low
    return count


@njit(cache=True, nogil=True, _nrt=False)
def make_move(state, move):
    """Plays a legal move on `state` in place."""
    side = state[S_SIDE]
    board = move // 9
    cell = move - board * 9
    key = state[S_KEY]
    forced = state[S_FORCED]
    key ^= Z_FORCED[9 if forced < 0 else forced]
    slot = S_X + 9 * side + board
    mine = state[slot] | (1 << cell)
    state[slot] = mine
    key ^= Z_CELL[side, move]
    if HAS_LINE[mine] or (mine | state[S_X + 9 * (1 - side) + board]) == FULL:
        # the board closes: from now on only its outcome is hashed
        for player in range(2):
            cells = state[S_X + 9 * player + board]
            for other in range(9):
                if cells >> other & 1:
                    key ^= Z_CELL[player, board * 9 + other]
        if HAS_LINE[mine]:
            won_slot = S_WON_X + side
            state[won_slot] |= 1 << board
            key ^= Z_CLOSED[board, side]
            if HAS_LINE[state[won_slot]]:
                state[S_RESULT] = X_WON if side == 0 else O_WON
        else:
            state[S_DRAWN] |= 1 << board
            key ^= Z_CLOSED[board, 2]
        if state[S_RESULT] == RESULT_NONE and closed_boards(state) == FULL:
            state[S_RESULT] = DRAWN
    next_forced = cell if not (closed_boards(state) >> cell) & 1 else -1
    if state[S_RESULT] != RESULT_NONE:
        next_forced = -1  # a finished game sends nobody anywhere
    state[S_FORCED] = next_forced
    key ^= Z_FORCED[9 if next_forced < 0 else next_forced]
    state[S_SIDE] = 1 - side
    key ^= Z_SIDE[0]
    state[S_KEY] = key
    state[S_PLY] += 1
    state[S_LAST] = move


@njit(cache=True, nogil=True, _nrt=False)
def perft_kernel(stack, depth, moves):
    """Leaves of the move tree below stack[0] (one row per ply); a finished game is a leaf."""
    return _perft(stack, np.int64(0), depth, moves)


@njit(cache=True, nogil=True, _nrt=False)
def _perft(stack, ply, depth, moves):
    state = stack[ply]
    offset = ply * 81
    count = generate_moves(state, moves[offset:offset + 81])
    if depth == 1:
        return np.int64(count)
    total = np.int64(0)
    child = stack[ply + 1]
    for index in range(count):
        copy_state(child, state)
        make_move(child, moves[offset + index])
        if child[S_RESULT] != RESULT_NONE:
            continue  # a finished game has no leaves below it
        total += _perft(stack, ply + 1, depth - 1, moves)
    return total


# --- critical boards ----------------------------------------------------------------------------
@njit(cache=True, nogil=True, _nrt=False)
def critical_boards(state, player):
    """Mask of the boards critical for `player` (0 = X, 1 = O)."""
    won = state[S_WON_X + player]
    closed = closed_boards(state)
    result = 0
    for board in range(9):
        if closed >> board & 1:
            continue
        if not HAS_LINE[won | (1 << board)]:
            continue
        mine = state[S_X + 9 * player + board]
        empty = FULL & ~(mine | state[S_X + 9 * (1 - player) + board])
        if WINNING_CELLS[mine] & empty:
            result |= 1 << board
    return result


@njit(cache=True, nogil=True, _nrt=False)
def losing_cells(state, player):
    """The cell numbers the opponent of `player` must not play (they send `player` to a board
    critical for `player` or to a closed board); 0 when `player` has no critical board."""
    critical = critical_boards(state, player)
    if critical == 0:
        return 0
    return critical | closed_boards(state)


@njit(cache=True, nogil=True, _nrt=False)
def winning_move(state):
    """Does the side to move win the game at once? Returns a move that does, or -1."""
    side = state[S_SIDE]
    forced = state[S_FORCED]
    critical = critical_boards(state, side)
    if forced >= 0:
        critical &= 1 << forced
    for board in range(9):
        if critical >> board & 1:
            mine = state[S_X + 9 * side + board]
            empty = FULL & ~(mine | state[S_X + 9 * (1 - side) + board])
            cells = WINNING_CELLS[mine] & empty
            cell = 0
            while not (cells >> cell) & 1:
                cell += 1
            return board * 9 + cell
    return -1


@njit(cache=True, nogil=True)
def count_open_cells(state):
    closed = closed_boards(state)
    total = 0
    for board in range(9):
        if not closed >> board & 1:
            total += 9 - POPCOUNT[state[S_X + board] | state[S_O + board]]
    return total


def new_stack(depth: int) -> np.ndarray:
    return np.zeros((depth + 2, STATE_SIZE), dtype=np.int64)


__all__ = ["compute_key", "generate_moves", "make_move", "perft_kernel", "critical_boards",
           "losing_cells", "winning_move", "count_open_cells", "new_stack", "DRAWN"]
