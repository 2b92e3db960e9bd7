"""The static evaluation of Ultimate Tic-Tac-Toe positions (numba), for the alpha-beta search.

`evaluate(state)` scores a running game from the side to move, in centipawn-like units (about
100 for a won corner board), always well inside +-EVAL_LIMIT (far below the search's mate
scores). It is called only where the side to move has no move that wins the game at once (the
search checks `kernels.winning_move` first), and it is never used for a finished game.

Terms, each computed for X and for O and taken as X minus O (then negated when O is to move):
- won boards: a base value plus a share for each global line through the board that is still
  open to its owner (no board of the opponent's or drawn board on it);
- global lines: a line open to a player holding two of its boards (the third one open) is worth
  much, more when the player also has a one-move win inside that third board (the board is
  "critical"); a line holding one board and two open ones is worth a little;
- open boards: the player's one-move wins inside the board (two-in-a-rows with an empty third
  cell), its local lines still open with one mark, and the cells it holds (centre, corners,
  edges), all weighted by how much the board matters to that player globally (the open global
  lines through it and the boards the player already holds on them); a board on no open
  global line of the player counts for little;
- who is sent where (side to move only): a free move (the board to play in is free) is worth a
  bonus, and so is being sent to a board where the side to move can win that board at once.
"""

import numpy as np
from numba import njit

from mallard.engines.uttt.board import (
    FULL,
    LINES,
    POPCOUNT,
    S_DRAWN,
    S_FORCED,
    S_SIDE,
    S_WON_X,
    S_X,
    WINNING_CELLS,
)

EVAL_LIMIT = 10000

WON_BASE = 60
WON_PER_LINE = 20
GLOBAL_TWO = 90
GLOBAL_TWO_CRITICAL = 110
GLOBAL_ONE = 12
LOCAL_THREAT = 14
LOCAL_ONE = 3
CELL_VALUE = np.array([3, 2, 3, 2, 4, 2, 3, 2, 3], dtype=np.int64)  # lines through the cell
FREE_MOVE = 35
SENT_TO_WIN = 20
TEMPO = 8

LINE_MASKS = np.array(LINES, dtype=np.int64)


def _lines_through():
    table = np.full((9, 4), -1, dtype=np.int64)
    for square in range(9):
        slot = 0
        for index, line in enumerate(LINES):
            if line >> square & 1:
                table[square, slot] = index
                slot += 1
    return table


LINES_THROUGH = _lines_through()  # [square, k]: the index of the k-th line through it, or -1


def _local_tables():
    """CELL_SUM[mask]: the cell values of a player's marks; LOCAL_ONES[mine * 512 + other]: the
    lines of a board holding one of the player's marks and none of the opponent's."""
    cell_sum = np.zeros(512, dtype=np.int64)
    for mask in range(512):
        cell_sum[mask] = sum(int(CELL_VALUE[cell]) for cell in range(9) if mask >> cell & 1)
    ones = np.zeros(512 * 512, dtype=np.uint8)
    for mine in range(512):
        for other in range(512):
            if mine & other:
                continue
            ones[mine * 512 + other] = sum(1 for line in LINES if not line & other
                                           and bin(line & mine).count("1") == 1)
    return cell_sum, ones


CELL_SUM, LOCAL_ONES = _local_tables()


@njit(cache=True, nogil=True, _nrt=False)
def _player_value(state, player):
    """The side-independent terms for `player` (0 = X, 1 = O)."""
    mine = state[S_WON_X + player]
    theirs = state[S_WON_X + 1 - player]
    dead = theirs | state[S_DRAWN]
    closed = mine | dead
    value = 0
    # global lines open to the player (no opponent's or drawn board on them): a bit each in
    # `alive`, and the boards the player holds on them, two bits each in `held_on`
    alive = 0
    held_on = 0
    for index in range(8):
        line = LINE_MASKS[index]
        if line & dead:
            continue
        alive |= 1 << index
        held = POPCOUNT[line & mine]
        held_on |= held << (2 * index)
        if held == 2:
            value += GLOBAL_TWO
            third = 0
            rest = line & ~mine
            while not (rest >> third) & 1:
                third += 1
            cells = state[S_X + 9 * player + third]
            empty = FULL & ~(cells | state[S_X + 9 * (1 - player) + third])
            if WINNING_CELLS[cells] & empty:
                value += GLOBAL_TWO_CRITICAL
        elif held == 1:
            value += GLOBAL_ONE
    for board in range(9):
        # how much the board matters to the player: its open global lines, more for the boards
        # the player already holds on them
        weight = 0
        for k in range(4):
            index = LINES_THROUGH[board, k]
            if index >= 0 and (alive >> index) & 1:
                weight += 1 + 2 * ((held_on >> (2 * index)) & 3)
        if mine >> board & 1:
            value += WON_BASE + WON_PER_LINE * weight
            continue
        if closed >> board & 1:
            continue
        cells = state[S_X + 9 * player + board]
        other = state[S_X + 9 * (1 - player) + board]
        empty = FULL & ~(cells | other)
        threats = POPCOUNT[WINNING_CELLS[cells] & empty]
        local = LOCAL_THREAT * (threats if threats < 2 else 2)
        local += LOCAL_ONE * np.int64(LOCAL_ONES[cells * 512 + other]) + CELL_SUM[cells]
        value += local * (1 + weight) // 3
    return value


@njit(cache=True, nogil=True, _nrt=False)
def evaluate(state):
    """Score of a running game from the side to move (see the module docstring)."""
    side = state[S_SIDE]
    value = _player_value(state, 0) - _player_value(state, 1)
    if side == 1:
        value = -value
    value += TEMPO
    forced = state[S_FORCED]
    if forced < 0:
        value += FREE_MOVE
    else:
        cells = state[S_X + 9 * side + forced]
        empty = FULL & ~(cells | state[S_X + 9 * (1 - side) + forced])
        if WINNING_CELLS[cells] & empty:
            value += SENT_TO_WIN
    if value > EVAL_LIMIT:
        return EVAL_LIMIT
    if value < -EVAL_LIMIT:
        return -EVAL_LIMIT
    return value
