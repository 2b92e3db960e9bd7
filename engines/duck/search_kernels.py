"""The Duck Chess exception search (numba): negamax over piece moves with per-square duck scores.

A node is a position whose side to move S is about to make its piece move while the duck, just
placed by the opponent, may stand on any empty square k. The node computes V(k), S's best score
with the duck on k, for every k at once: one `common` score shared by all squares except at most
8 exceptions (square, score, move) kept in the node's slice of `ex`. A move can be blocked only
on the empty squares of its path (`kernels.is_blocked`), so each move touches only those.

Every node returns, through ctx[C_RX], ctx[C_RE], ctx[C_RX2]:
- its score: min over k of V(k), the value when the duck is placed where it hurts S most;
- RX: a square where that minimum is reached alone (-1 when it is the common score);
- RE: the lowest V(k) over the other squares, RX2 a square where it is reached (-1: common).
The parent, whose own duck stood on k_p (the duck it must now move), values the child at -RE if
k_p == RX, else at -score. The root knows its duck and places the new one on RX, or on RX2 when RX
is where the duck already stands.

Windows: every per-square value is fail-hard with respect to the node's (alpha, beta): exact
inside it, an upper bound at or below alpha, a lower bound at or above beta. Alpha and the
cut-off use the lowest V(k) so far. The table is keyed without the duck and stores the bound type
of score and RE separately; an entry answers a window only if both are resolved for it.

Scores: centipawns from the side to move; a win at ply p is MATE - p (king captured, or the
opponent left without a legal move: fowling), a loss -(MATE - p). NO_MOVE marks a duck square for
which no move has been found yet; one left at the end means S cannot move there: a fowling win.
"""

from numba import njit

from engines.duck.board import (
    KIND_EN_PASSANT, MAX_MOVES, MOVE_KIND_SHIFT, MOVE_PROMO_SHIFT, MOVE_TO_SHIFT,
    RAY_DIRECTION, RAY_DISTANCE, RAY_OFFSET, S_DUCK, S_KEY, S_KING, S_SIDE, STEPS,
)
from engines.duck.evaluation import PIECE_VALUES, evaluate
from engines.duck.kernels import (
    generate_piece_moves, is_blocked, path_end, pop_move, push_piece_move,
)

INF = 32000
MATE = 30000
MATE_BOUND = MATE - 1000
NO_MOVE = -31000
MAX_SEARCH_PLY = 120

# ctx layout
C_NODES, C_ABORTED, C_NODE_LIMIT, C_SELDEPTH, C_QSEARCH, C_TT_MASK, C_TT_SAME_DEPTH = range(7)
C_RX, C_RE, C_RX2, C_QUIESCENCE_PLY_LIMIT, C_EVAL_TERMS, C_QNODES = 8, 9, 10, 11, 12, 13
C_KILLERS = 64                      # 2 per ply
C_HISTORY = C_KILLERS + 2 * 128     # side * 4096 + from64 * 64 + to64
CTX_SIZE = C_HISTORY + 2 * 4096
POLL_MASK = 2047

EX_STRIDE = 32  # per ply: count, then (square, score, move) triples
TT_WORDS = 4    # key; move | depth << 20 | flags << 28 | (rx+1) << 32 | (rx2+1) << 40; score; re
EXACT, LOWER, UPPER = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _index64(sq):
    return (sq >> 4) * 8 + (sq & 7)


@njit(cache=True, nogil=True, inline="always")
def _returns(ctx, score, rx, re, rx2):
    ctx[C_RX] = rx
    ctx[C_RE] = re
    ctx[C_RX2] = rx2
    return score


@njit(cache=True, nogil=True, inline="always")
def _to_tt(value, ply):
    if value > MATE_BOUND:
        return value + ply
    if value < -MATE_BOUND:
        return value - ply
    return value


@njit(cache=True, nogil=True, inline="always")
def _from_tt(value, ply):
    if value > MATE_BOUND:
        return value - ply
    if value < -MATE_BOUND:
        return value + ply
    return value


@njit(cache=True, nogil=True, inline="always")
def _bound(value, alpha, beta):
    if value <= alpha:
        return UPPER
    if value >= beta:
        return LOWER
    return EXACT


@njit(cache=True, nogil=True, inline="always")
def _resolved(value, flag, alpha, beta):
    return flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha)


@njit(cache=True, nogil=True, inline="always")
def _poll(ctx, stop):
    ctx[C_NODES] += 1
    if (ctx[C_NODES] & POLL_MASK) == 0:
        if stop[0] != 0 or (ctx[C_NODE_LIMIT] > 0 and ctx[C_NODES] >= ctx[C_NODE_LIMIT]):
            ctx[C_ABORTED] = 1


@njit(cache=True, nogil=True)
def _score_moves(state, moves, order, start, end, tt_move, ctx, ply, captures_only):
    """Ordering keys; returns the new end (captures_only drops quiet moves)."""
    side = state[S_SIDE]
    killer0 = ctx[C_KILLERS + 2 * ply]
    killer1 = ctx[C_KILLERS + 2 * ply + 1]
    n = start
    for i in range(start, end):
        move = moves[i]
        frm = move & 0x7F
        to = (move >> MOVE_TO_SHIFT) & 0x7F
        victim = state[to] & 7
        if (move >> MOVE_KIND_SHIFT) & 3 == KIND_EN_PASSANT:
            victim = 1
        promotion = (move >> MOVE_PROMO_SHIFT) & 7
        if captures_only and victim == 0:
            continue
        if move == tt_move:
            key = 1 << 40
        elif victim == 6:
            key = 1 << 39
        elif victim != 0 or promotion != 0:
            key = (1 << 36) + PIECE_VALUES[victim] * 16 + PIECE_VALUES[promotion] \
                - (state[frm] & 7)
        elif move == killer0:
            key = 1 << 35
        elif move == killer1:
            key = (1 << 35) - 1
        else:
            key = ctx[C_HISTORY + side * 4096 + _index64(frm) * 64 + _index64(to)]
        moves[n] = move
        order[n] = key
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _pick(moves, order, i, end):
    """Selection step: bring the best remaining move to position i."""
    best = i
    for j in range(i + 1, end):
        if order[j] > order[best]:
            best = j
    if best != i:
        moves[i], moves[best] = moves[best], moves[i]
        order[i], order[best] = order[best], order[i]
    return moves[i]


@njit(cache=True, nogil=True)
def _find(ex, eb, square):
    for i in range(ex[eb]):
        if ex[eb + 1 + 3 * i] == square:
            return i
    return -1


@njit(cache=True, nogil=True)
def _add(ex, eb, square, score, move):
    n = ex[eb]
    ex[eb + 1 + 3 * n] = square
    ex[eb + 2 + 3 * n] = score
    ex[eb + 3 + 3 * n] = move
    ex[eb] = n + 1


@njit(cache=True, nogil=True)
def _remove(ex, eb, i):
    n = ex[eb] - 1
    ex[eb + 1 + 3 * i] = ex[eb + 1 + 3 * n]
    ex[eb + 2 + 3 * i] = ex[eb + 2 + 3 * n]
    ex[eb + 3 + 3 * i] = ex[eb + 3 + 3 * n]
    ex[eb] = n


@njit(cache=True, nogil=True)
def _merge(state, ex, eb, common, common_move, move, a, xs, b):
    """Fold one move into the node's per-square scores; returns the new common score and move.

    The move is worth `a` on every square it is not blocked on, `b` (< a) on square xs (-1:
    none), nothing where it is blocked. The board is the node's (the move is not made).
    """
    if a > common:
        # survivors: exceptions the move is blocked on keep their score; xs may rise to b
        i = 0
        xs_done = xs < 0
        while i < ex[eb]:
            k = ex[eb + 1 + 3 * i]
            if is_blocked(move, k):
                if k == xs:
                    xs_done = True
                i += 1
            elif k == xs:
                if b > ex[eb + 2 + 3 * i]:
                    ex[eb + 2 + 3 * i] = b
                    ex[eb + 3 + 3 * i] = move
                xs_done = True
                i += 1
            else:
                _remove(ex, eb, i)
        # the empty squares of the move's path keep the old common score
        frm = move & 0x7F
        end = path_end(move)
        offset = end - frm + RAY_OFFSET
        code = RAY_DIRECTION[offset]
        if code >= 9:
            if state[end] == 0 and _find(ex, eb, end) < 0:
                _add(ex, eb, end, common, common_move)
            if end == xs:
                xs_done = True
        else:
            step = STEPS[code]
            sq = frm
            for _ in range(RAY_DISTANCE[offset]):
                sq += step
                if state[sq] == 0:
                    if _find(ex, eb, sq) < 0:
                        _add(ex, eb, sq, common, common_move)
                    if sq == xs:
                        xs_done = True
        if not xs_done:
            if b > common:
                _add(ex, eb, xs, b, move)
            else:
                _add(ex, eb, xs, common, common_move)
        return a, move
    i = 0
    while i < ex[eb]:
        k = ex[eb + 1 + 3 * i]
        if is_blocked(move, k):
            i += 1
            continue
        gain = b if k == xs else a
        if gain > ex[eb + 2 + 3 * i]:
            if gain >= common:
                _remove(ex, eb, i)
                continue
            ex[eb + 2 + 3 * i] = gain
            ex[eb + 3 + 3 * i] = move
        i += 1
    return common, common_move


@njit(cache=True, nogil=True)
def _lowest(ex, eb, common):
    lowest = common
    for i in range(ex[eb]):
        if ex[eb + 2 + 3 * i] < lowest:
            lowest = ex[eb + 2 + 3 * i]
    return lowest


@njit(cache=True, nogil=True)
def _finish(ex, eb, common, common_move, ctx):
    """Score, RX, RE, RX2 of the node from its per-square scores; returns (score, best move)."""
    best_i = -1
    for i in range(ex[eb]):
        if ex[eb + 2 + 3 * i] < common and (best_i < 0 or
                                            ex[eb + 2 + 3 * i] < ex[eb + 2 + 3 * best_i]):
            best_i = i
    if best_i < 0:
        ctx[C_RX] = -1
        ctx[C_RE] = common
        ctx[C_RX2] = -1
        return common, common_move
    score = ex[eb + 2 + 3 * best_i]
    second_i = -1
    for i in range(ex[eb]):
        if i != best_i and ex[eb + 2 + 3 * i] < common and (
                second_i < 0 or ex[eb + 2 + 3 * i] < ex[eb + 2 + 3 * second_i]):
            second_i = i
    ctx[C_RX] = ex[eb + 1 + 3 * best_i]
    if second_i < 0:
        ctx[C_RE] = common
        ctx[C_RX2] = -1
    else:
        ctx[C_RE] = ex[eb + 2 + 3 * second_i]
        ctx[C_RX2] = ex[eb + 1 + 3 * second_i]
    return score, ex[eb + 3 + 3 * best_i]


@njit(cache=True, nogil=True, inline="always")
def _child_terms(state, ctx, value):
    """(a, xs, b): the child's worth to this node on most squares, its exception square (only
    if that square is empty here) and its worth there."""
    rx = ctx[C_RX]
    a = -value
    if rx >= 0 and state[rx] == 0 and ctx[C_RE] > value:
        return a, rx, -ctx[C_RE]
    return a, -1, a


@njit(cache=True, nogil=True)
def _store(tt, ctx, key, ply, depth, move, score, re, rx, rx2, alpha, beta):
    slot = (key & ctx[C_TT_MASK]) * TT_WORDS
    flags = _bound(score, alpha, beta) | _bound(re, alpha, beta) << 2
    tt[slot] = key
    tt[slot + 1] = move | depth << 20 | flags << 28 | (rx + 1) << 32 | (rx2 + 1) << 40
    tt[slot + 2] = _to_tt(score, ply)
    tt[slot + 3] = _to_tt(re, ply)


@njit(cache=True, nogil=True)
def _terminal(state, ply):
    """Score of a node decided before any move: 0 if it is not decided."""
    if state[S_KING + state[S_SIDE]] < 0:
        return -(MATE - ply)
    return 0


@njit(cache=True, nogil=True)
def quiescence(state, undo, moves, order, ex, ctx, tt, stop, ply, alpha, beta):
    """Captures only, with standing pat; the same exception bookkeeping as `search`."""
    ctx[C_QNODES] += 1
    _poll(ctx, stop)
    if ctx[C_ABORTED]:
        return _returns(ctx, 0, -1, 0, -1)
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    lost = _terminal(state, ply)
    if lost != 0:
        return _returns(ctx, lost, -1, lost, -1)
    base = ply * MAX_MOVES
    end = generate_piece_moves(state, moves, base, -1)
    if end == base:
        return _returns(ctx, MATE - ply, -1, MATE - ply, -1)
    stand = evaluate(state, ctx[C_EVAL_TERMS])
    if stand >= beta or ply >= ctx[C_QUIESCENCE_PLY_LIMIT]:
        return _returns(ctx, stand, -1, stand, -1)
    end = _score_moves(state, moves, order, base, end, 0, ctx, ply, True)
    eb = ply * EX_STRIDE
    ex[eb] = 0
    common = stand
    common_move = 0
    lowest = stand
    for i in range(base, end):
        move = _pick(moves, order, i, end)
        alpha_eff = max(alpha, lowest)
        push_piece_move(state, undo, move)
        value = quiescence(state, undo, moves, order, ex, ctx, tt, stop, ply + 1, -beta,
                           -alpha_eff)
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            return _returns(ctx, 0, -1, 0, -1)
        a, xs, b = _child_terms(state, ctx, value)
        if a > lowest:
            common, common_move = _merge(state, ex, eb, common, common_move, move, a, xs, b)
            lowest = _lowest(ex, eb, common)
            if lowest >= beta:
                break
    score, _ = _finish(ex, eb, common, common_move, ctx)
    return score


@njit(cache=True, nogil=True)
def leaf_value(state, moves, ctx, ply):
    """The depth-0 value without quiescence: lost king, no move at all (a win), or evaluation."""
    lost = _terminal(state, ply)
    if lost != 0:
        return lost
    if generate_piece_moves(state, moves, ply * MAX_MOVES, -1) == ply * MAX_MOVES:
        return MATE - ply
    return evaluate(state, ctx[C_EVAL_TERMS])


@njit(cache=True, nogil=True)
def _leaf(state, moves, ctx, ply):
    value = leaf_value(state, moves, ctx, ply)
    return _returns(ctx, value, -1, value, -1)


@njit(cache=True, nogil=True)
def search(state, undo, moves, order, ex, ctx, tt, stop, ply, depth, alpha, beta):
    """Exception-search node; see the module docstring for what it returns."""
    if depth <= 0:
        if ctx[C_QSEARCH]:
            return quiescence(state, undo, moves, order, ex, ctx, tt, stop, ply, alpha, beta)
        ctx[C_NODES] += 1
        return _leaf(state, moves, ctx, ply)
    _poll(ctx, stop)
    if ctx[C_ABORTED]:
        return _returns(ctx, 0, -1, 0, -1)
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    lost = _terminal(state, ply)
    if lost != 0:
        return _returns(ctx, lost, -1, lost, -1)

    key = state[S_KEY]
    slot = (key & ctx[C_TT_MASK]) * TT_WORDS
    tt_move = 0
    if tt[slot] == key:
        data = tt[slot + 1]
        tt_move = data & 0xFFFFF
        stored_depth = (data >> 20) & 0xFF
        if stored_depth == depth or (stored_depth > depth and not ctx[C_TT_SAME_DEPTH]):
            score = _from_tt(tt[slot + 2], ply)
            re = _from_tt(tt[slot + 3], ply)
            flags = (data >> 28) & 0xF
            if _resolved(score, flags & 3, alpha, beta) and \
                    _resolved(re, flags >> 2, alpha, beta):
                return _returns(ctx, score, ((data >> 32) & 0xFF) - 1, re,
                                ((data >> 40) & 0xFF) - 1)

    base = ply * MAX_MOVES
    end = generate_piece_moves(state, moves, base, -1)
    if end == base:
        return _returns(ctx, MATE - ply, -1, MATE - ply, -1)
    end = _score_moves(state, moves, order, base, end, tt_move, ctx, ply, False)

    eb = ply * EX_STRIDE
    ex[eb] = 0
    common = NO_MOVE
    common_move = 0
    lowest = NO_MOVE
    cut = False
    side = state[S_SIDE]
    for i in range(base, end):
        move = _pick(moves, order, i, end)
        alpha_eff = max(alpha, lowest)
        push_piece_move(state, undo, move)
        if i == base:
            value = search(state, undo, moves, order, ex, ctx, tt, stop, ply + 1, depth - 1,
                           -beta, -alpha_eff)
        else:
            value = search(state, undo, moves, order, ex, ctx, tt, stop, ply + 1, depth - 1,
                           -alpha_eff - 1, -alpha_eff)
            if -value > alpha_eff and alpha_eff + 1 < beta and not ctx[C_ABORTED]:
                value = search(state, undo, moves, order, ex, ctx, tt, stop, ply + 1,
                               depth - 1, -beta, -alpha_eff)
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            return _returns(ctx, 0, -1, 0, -1)
        a, xs, b = _child_terms(state, ctx, value)
        if a > lowest:
            common, common_move = _merge(state, ex, eb, common, common_move, move, a, xs, b)
            lowest = _lowest(ex, eb, common)
            if lowest >= beta:
                cut = True
                to = (move >> MOVE_TO_SHIFT) & 0x7F
                if state[to] == 0 and (move >> MOVE_KIND_SHIFT) & 3 != KIND_EN_PASSANT:
                    if ctx[C_KILLERS + 2 * ply] != move:
                        ctx[C_KILLERS + 2 * ply + 1] = ctx[C_KILLERS + 2 * ply]
                        ctx[C_KILLERS + 2 * ply] = move
                    h = C_HISTORY + side * 4096 + _index64(move & 0x7F) * 64 + _index64(to)
                    ctx[h] += depth * depth
                break
    if not cut:
        for i in range(ex[eb]):  # duck squares where no move is legal: the side to move wins
            if ex[eb + 2 + 3 * i] == NO_MOVE:
                ex[eb + 2 + 3 * i] = MATE - ply
    score, best = _finish(ex, eb, common, common_move, ctx)
    _store(tt, ctx, key, ply, depth, best, score, ctx[C_RE], ctx[C_RX], ctx[C_RX2], alpha, beta)
    return score


@njit(cache=True, nogil=True)
def search_root(state, undo, moves, order, ex, ctx, tt, stop, depth, alpha, beta,
                root_moves, root_values, root_ducks, count):
    """One iteration over the root's piece moves (legal under the real duck), in the given order.

    Fills root_values (fail-hard in (alpha, beta)) and root_ducks (the duck square to play with
    each move, -1 when any free square is as good); returns how many moves were finished.
    """
    duck = state[S_DUCK]
    best = -INF
    ply_one = depth - depth + 1  # an int64: a literal 1 here breaks the cached recursion
    for i in range(count):
        move = root_moves[i]
        alpha_eff = max(alpha, best)
        push_piece_move(state, undo, move)
        value = 0
        for attempt in range(2):
            if i == 0 or attempt == 1:
                low, high = -beta, -alpha_eff
            else:
                low, high = -alpha_eff - 1, -alpha_eff
            child = search(state, undo, moves, order, ex, ctx, tt, stop, ply_one, depth - 1,
                           low, high)
            rx, re, rx2 = ctx[C_RX], ctx[C_RE], ctx[C_RX2]
            if rx >= 0 and rx == duck:
                value, new_duck = -re, rx2
            else:
                value, new_duck = -child, rx
            if i == 0 or attempt == 1 or not (value > alpha_eff and alpha_eff + 1 < beta) \
                    or ctx[C_ABORTED]:
                break
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            return i
        root_values[i] = value
        root_ducks[i] = new_duck
        if value > best:
            best = value
    return count
