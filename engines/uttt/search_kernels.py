"""The Ultimate Tic-Tac-Toe alpha-beta search (numba): negamax with PVS, a transposition table,
killer and history move ordering, late-move reductions and exact game-theoretic scores.

Positions are copied, not undone: ply p works on row p of `stack` (rows of the state layout of
`board.py`) and writes its child into row p + 1. Move lists live in `moves`/`order` at
p * MAX_MOVES; `pv` row p holds the principal variation found below ply p (pv[p, 0] its
length, the moves from pv[p, 1]).

Scores are from the side to move: the evaluation's centipawns (|value| <= EVAL_LIMIT), 0 for a
drawn game, MATE - q for a win whose last move is played at ply q from the root, -(MATE - q)
for a loss at ply q. Terminal positions are scored exactly, and so is a node whose side to move
has a move that wins the game at once (`kernels.winning_move`, checked before anything else,
depth 0 included), so a win or loss score is always a proof: a value above MATE_BOUND is a
game-theoretic lower bound, one below -MATE_BOUND an upper bound, whatever depth found it.
The table therefore answers with such bounds at any stored depth.

Exhaustive searches: a game ends within the number of open cells left, so a node searched with
depth >= its open cells never evaluates a heuristic leaf. Reductions are only applied at nodes
whose depth is below their own open cells; the children of an exhaustive node are exhaustive
(one cell fewer, one ply less), and so is every table entry such a node can use (its stored
depth is at least the node's open cells). A root searched to at least its open cells is thus an
exact minimax of the game, draws and mate distances included, whatever the table holds.

Threads: helpers search the same root on the shared table (lazy SMP, `mallard.engines.driver`) and
split the work as ABDADA does (`busy`, BUSY_SLOTS, below); with ctx[C_BUSY_MASK] 0 nothing is
deferred.

The table: buckets of two entries (key, data), the first kept for the deeper search, the second
always replaced; data = (move + 1) | depth << 8 | flag << 16 | generation << 18 |
(score + 32768) << 32, with mate scores stored relative to the node (ply-independent). Threads
share it without locks: the key word holds key XOR data, so an entry whose two words two threads
wrote at once does not answer for the key (`tt_find`).

Windows are fail-soft. The caller's `stop` array (element 0 non-zero) and the node limit are
polled every POLL_MASK + 1 nodes; an aborted search returns 0 everywhere and must be ignored.
Each recursive kernel calls itself from one place: numba types the whole function again for every
recursive call site it resolves (see mallard.engines.compile_cache for how calls are typed).
"""

import numpy as np
from numba import njit

from mallard.engines.search_common import (
    C_ABORTED,
    C_SELDEPTH,
    INF,
    MATE,
    count_node,
    pick_best,
    score_from_table,
    score_to_table,
)
from mallard.engines.uttt.board import (
    DRAWN,
    FULL,
    HAS_LINE,
    MAX_MOVES,
    RESULT_NONE,
    S_KEY,
    S_RESULT,
    S_SIDE,
    S_X,
    STATE_SIZE,
    WINNING_CELLS,
)
from mallard.engines.uttt.evaluation import evaluate
from mallard.engines.uttt.kernels import (
    closed_boards,
    copy_state,
    count_open_cells,
    generate_moves,
    losing_cells,
    make_move,
    winning_move,
)

MATE_BOUND = MATE - 200
MAX_PLY = 96  # rows of the stack beyond the root: a game has at most 81 moves

# ctx layout: the header of mallard.engines.search_common (C_NODES, C_ABORTED, C_NODE_LIMIT,
# C_SELDEPTH), then
C_TT_MASK, C_GEN, C_LMR = 4, 5, 6
C_BUSY_MASK = 7                      # threads: the mask of `busy` (0: no other thread searches)
C_KILLERS = 16                       # two per ply
C_HISTORY = C_KILLERS + 2 * MAX_PLY  # side * 81 + move
CTX_SIZE = C_HISTORY + 2 * 81
POLL_MASK = 1023
HISTORY_MAX = 1 << 24

TT_WORDS = 2
BUCKET_WORDS = 2 * TT_WORDS
EXACT, LOWER, UPPER = 0, 1, 2

# move ordering keys (larger first)
KEY_TT = 1 << 40
KEY_LOCAL_WIN = 1 << 32
KEY_KILLER = 1 << 28
KEY_FREE_MOVE = 1 << 30      # subtracted: the opponent may play anywhere
KEY_SENDS_WIN = 1 << 29      # subtracted: the opponent can win the board it is sent to
KEY_LOSING = 1 << 36         # subtracted: the opponent wins the game at once

# Threads (ABDADA): `busy` (BUSY_SLOTS words, shared by the threads of a search) holds the keys
# of positions some thread is searching. At a node of depth BUSY_MIN_DEPTH or more, a move
# other than the first whose child another thread is in waits for a second pass over the moves
# (its ordering key becomes DEFERRED_QUIET or DEFERRED_LOUD, below every real key), so the
# threads split the work.
BUSY_SLOTS = 1 << 14
BUSY_MIN_DEPTH = 3
DEFERRED_QUIET = -(1 << 62)
DEFERRED_LOUD = DEFERRED_QUIET - 1


@njit(cache=True, nogil=True, _nrt=False)
def tt_find(tt, ctx, key):
    """The data word of the entry holding `key` whole, or -1 (data is never negative)."""
    bucket = (key & ctx[C_TT_MASK]) * BUCKET_WORDS
    data = tt[bucket + 1]
    if tt[bucket] ^ data == key:
        return data
    data = tt[bucket + TT_WORDS + 1]
    if tt[bucket + TT_WORDS] ^ data == key:
        return data
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def tt_move(tt, ctx, key):
    """The stored best move of a position (by key), -1 when none."""
    data = tt_find(tt, ctx, key)
    if data < 0:
        return -1
    return (data & 0xFF) - 1


@njit(cache=True, nogil=True, _nrt=False)
def _tt_store(tt, ctx, key, ply, depth, move, score, flag):
    bucket = (key & ctx[C_TT_MASK]) * BUCKET_WORDS
    first = tt[bucket + 1]
    stored_depth = (first >> 8) & 0xFF
    stored_gen = (first >> 18) & 0x3F
    if tt[bucket] ^ first == key or depth >= stored_depth or stored_gen != ctx[C_GEN]:
        entry = bucket
    else:
        entry = bucket + TT_WORDS
    data = (move + 1) | depth << 8 | flag << 16 | ctx[C_GEN] << 18 \
        | (score_to_table(score, ply, MATE_BOUND) + 32768) << 32
    tt[entry] = key ^ data
    tt[entry + 1] = data


def fresh_entries(tt, ctx) -> np.ndarray:
    """Which entries of the first 1000 buckets the current search wrote (`hashfull`'s sample)."""
    words = min(1000, int(ctx[C_TT_MASK]) + 1) * BUCKET_WORDS
    keys, data = tt[0:words:TT_WORDS], tt[1:words:TT_WORDS]
    return (keys != 0) & (((data >> 18) & 0x3F) == ctx[C_GEN])


@njit(cache=True, nogil=True, _nrt=False)
def score_moves(state, moves, order, start, end, best_move, ctx, ply):
    """Ordering keys of moves[start:end]: the table's move, then moves that win a local board,
    killers, history; moves that send the opponent where it wins the game at once come last,
    then moves that give it a free choice or a board it can win at once."""
    side = state[S_SIDE]
    opp = 1 - side
    closed = closed_boards(state)
    losing = losing_cells(state, opp)
    killer0 = ctx[C_KILLERS + 2 * ply]
    killer1 = ctx[C_KILLERS + 2 * ply + 1]
    for i in range(start, end):
        move = moves[i]
        if move == best_move:
            order[i] = KEY_TT
            continue
        board = move // 9
        cell = move - board * 9
        mine = state[S_X + 9 * side + board] | (1 << cell)
        theirs = state[S_X + 9 * opp + board]
        won = HAS_LINE[mine]
        key = ctx[C_HISTORY + side * 81 + move]
        if won:
            key += KEY_LOCAL_WIN
        elif move == killer0:
            key += KEY_KILLER
        elif move == killer1:
            key += KEY_KILLER // 2
        closes = won or (mine | theirs) == FULL
        if (losing >> cell) & 1:
            key -= KEY_LOSING
        elif (closed >> cell) & 1 or (cell == board and closes):
            key -= KEY_FREE_MOVE
        else:
            target = state[S_X + 9 * opp + cell]
            occupied = target | state[S_X + 9 * side + cell]
            if cell == board:
                occupied |= 1 << cell
            if WINNING_CELLS[target] & (FULL & ~occupied):
                key -= KEY_SENDS_WIN
        order[i] = key


@njit(cache=True, nogil=True, _nrt=False)
def _reward(ctx, side, move, ply, depth):
    """A quiet move caused a cut-off: killer of the ply, history of the side."""
    if ctx[C_KILLERS + 2 * ply] != move:
        ctx[C_KILLERS + 2 * ply + 1] = ctx[C_KILLERS + 2 * ply]
        ctx[C_KILLERS + 2 * ply] = move
    slot = C_HISTORY + side * 81 + move
    ctx[slot] += depth * depth
    if ctx[slot] > HISTORY_MAX:
        for k in range(C_HISTORY, C_HISTORY + 2 * 81):
            ctx[k] >>= 1


@njit(cache=True, nogil=True, _nrt=False)
def age_history(ctx):
    """Between searches: halve the history, forget the killers."""
    for k in range(C_HISTORY, C_HISTORY + 2 * 81):
        ctx[k] >>= 1
    for k in range(C_KILLERS, C_HISTORY):
        ctx[k] = -1


@njit(cache=True, nogil=True, _nrt=False)
def _set_pv(pv, ply, move):
    length = pv[ply + 1, 0]
    pv[ply, 1] = move
    for k in range(length):
        pv[ply, 2 + k] = pv[ply + 1, 1 + k]
    pv[ply, 0] = length + 1


@njit(cache=True, nogil=True, _nrt=False)
def search(stack, moves, order, pv, ctx, tt, busy, stop, ply, depth, alpha, beta):
    """Negamax value of stack[ply] searched `depth` plies deep in the window (alpha, beta)."""
    pv[ply, 0] = 0
    state = stack[ply]
    result = state[S_RESULT]
    if result != RESULT_NONE:
        if result == DRAWN:
            return 0
        return -(MATE - ply)  # the previous move won the game
    count_node(ctx, stop, POLL_MASK)
    if ctx[C_ABORTED]:
        return 0
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    win = winning_move(state)
    if win >= 0:
        pv[ply, 0] = 1
        pv[ply, 1] = win
        return MATE - ply - 1
    if depth <= 0:
        return evaluate(state)
    # no win at this ply: the best is a win at ply + 3, the worst a loss at ply + 2
    low = -(MATE - ply - 2)
    high = MATE - ply - 3
    if alpha < low:
        alpha = low
    if beta > high:
        beta = high
    if alpha >= beta:
        return alpha

    key = state[S_KEY]
    data = tt_find(tt, ctx, key)
    best_move = -1
    if data >= 0:
        best_move = (data & 0xFF) - 1
        stored_depth = (data >> 8) & 0xFF
        flag = (data >> 16) & 3
        score = score_from_table(((data >> 32) & 0xFFFF) - 32768, ply, MATE_BOUND)
        if stored_depth >= depth:
            if flag == EXACT or (flag == LOWER and score >= beta) or \
                    (flag == UPPER and score <= alpha):
                return score
        # proofs hold at any depth
        if score > MATE_BOUND and flag != UPPER and score >= beta:
            return score
        if score < -MATE_BOUND and flag != LOWER and score <= alpha:
            return score

    base = ply * MAX_MOVES
    count = generate_moves(state, moves[base:base + MAX_MOVES])
    end = base + count
    score_moves(state, moves, order, base, end, best_move, ctx, ply)
    alpha_start = alpha
    best = -INF
    best_move = -1
    side = state[S_SIDE]
    child = stack[ply + 1]
    next_ply = ply + 1
    reducible = ctx[C_LMR] != 0 and depth >= 3 and depth < count_open_cells(state)
    busy_mask = ctx[C_BUSY_MASK] if depth >= BUSY_MIN_DEPTH else 0
    # with other threads, steps from `end` on are the second pass over the deferred moves
    for step in range(base, end + (end - base if busy_mask else 0)):
        i = step if step < end else step - (end - base)
        if step >= end and order[i] > DEFERRED_QUIET:
            continue
        if step < end:
            move = pick_best(moves, order, i, end)
            quiet = order[i] < KEY_KILLER // 2
        else:
            move = moves[i]
            quiet = order[i] == DEFERRED_QUIET
        copy_state(child, state)
        make_move(child, move)
        busy_slot = -1
        if busy_mask:
            busy_slot = child[S_KEY] & busy_mask
            if step < end and i > base and busy[busy_slot] == child[S_KEY]:
                order[i] = DEFERRED_QUIET if quiet else DEFERRED_LOUD
                continue
            busy[busy_slot] = child[S_KEY]
        new_depth = depth - 1
        child_depth = new_depth
        low = -beta
        if i > base:  # PVS with late move reductions
            if reducible and quiet and i - base >= 3:
                child_depth = max(1, new_depth - (1 if i - base < 10 else 2))
            low = -alpha - 1
        # The null window (reduced for late quiet moves), again at full depth when a reduced
        # search beats alpha, then the full window when it fails high inside (alpha, beta).
        # (One recursive call site, for a fast first compile: see engines/__init__.py.)
        while True:
            value = -search(stack, moves, order, pv, ctx, tt, busy, stop, next_ply, child_depth,
                            low, -alpha)
            if ctx[C_ABORTED] or value <= alpha:
                break
            if child_depth < new_depth:
                child_depth = new_depth
            elif low != -beta and value < beta:
                low = -beta
            else:
                break
        if busy_slot >= 0 and busy[busy_slot] == child[S_KEY]:
            busy[busy_slot] = 0
        if ctx[C_ABORTED]:
            return 0
        if value > best:
            best = value
            best_move = move
            if value > alpha:
                alpha = value
                _set_pv(pv, ply, move)
                if value >= beta:
                    if quiet:
                        _reward(ctx, side, move, ply, depth)
                    break
    if best <= alpha_start:
        flag = UPPER
    elif best >= beta:
        flag = LOWER
    else:
        flag = EXACT
    _tt_store(tt, ctx, key, ply, depth, best_move, best, flag)
    return best


@njit(cache=True, nogil=True, _nrt=False)
def search_root(stack, moves, order, pv, ctx, tt, busy, stop, depth, alpha, beta, root_moves,
                root_values, count):
    """One iteration over root_moves[:count] in their order (PVS, fail-soft): fills
    root_values, leaves the best move's line in pv row 0, returns how many moves finished
    (fewer than count when stopped)."""
    state = stack[0]
    child = stack[1]
    ply_one = 1
    best = -INF
    pv[0, 0] = 0
    if ply_one > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply_one
    for i in range(count):
        move = root_moves[i]
        copy_state(child, state)
        make_move(child, move)
        floor = alpha if alpha > best else best
        if i == 0:
            value = -search(stack, moves, order, pv, ctx, tt, busy, stop, ply_one, depth - 1,
                            -beta, -floor)
        else:
            value = -search(stack, moves, order, pv, ctx, tt, busy, stop, ply_one, depth - 1,
                            -floor - 1, -floor)
            if floor < value < beta and not ctx[C_ABORTED]:
                value = -search(stack, moves, order, pv, ctx, tt, busy, stop, ply_one,
                                depth - 1, -beta, -floor)
        if ctx[C_ABORTED]:
            return i
        root_values[i] = value
        if value > best:
            best = value
            pv[0, 1] = move
            length = pv[1, 0]
            for k in range(length):
                pv[0, 2 + k] = pv[1, 1 + k]
            pv[0, 0] = length + 1
    return count


@njit(cache=True, nogil=True)
def order_root(stack, moves, order, ctx, tt, root_moves, count):
    """Sort root_moves[:count] by the node's move ordering (before the first iteration)."""
    state = stack[0]
    best_move = tt_move(tt, ctx, state[S_KEY])
    for i in range(count):
        moves[i] = root_moves[i]
    score_moves(state, moves, order, 0, count, best_move, ctx, 0)
    for i in range(count):
        root_moves[i] = pick_best(moves, order, i, count)


def new_stack() -> np.ndarray:
    """One state row per ply, the root in row 0."""
    return np.zeros((MAX_PLY + 2, STATE_SIZE), dtype=np.int64)
