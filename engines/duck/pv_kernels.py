"""The Duck Chess search's principal variation and root (numba), over the exception search of
`search_kernels`, whose ctx layout, table and node they share.

The principal variation is searched with its duck fixed (`fixed_child`). A full-window
exception node would have to make its lowest score and RE exact, and every move that beats its
lowest score so far (often only on the squares that block the best move) is searched again in full:
about five full-window children a node, so the principal variation branches. Instead, the reply to
a principal-variation move is searched with the duck on one square: then it is a plain node, the
best of its moves that square leaves, and only its first move (or one that beats it) continues the
principal variation. One null-window exception search of the reply then shows that no other duck
square does better, or names one, which is tried next; if that one is beaten too, the reply is
searched as a full-window exception node after all (in pawn endgames the duck matters on many
squares, and trying them one by one would open a subtree each). With other threads beside this
one, the full-window search comes already when the question shows more than one square doing
better: their table entries, of other windows, make the following questions disagree with the
fixed-duck searches level after level, and the second tries then multiply. So the principal
variation is mostly a line again, as in chess, and its values stay exact. The square first
tried is the one remembered for that position (`remember_pv`, in this thread's ctx), else the
table's RX; with neither, the question comes first, and a fixed-duck search follows only when
it shows the mover above alpha, on the square it named. Only the root and these nodes search
in full windows, with those few exceptions.

Invariants: `fixed_child` returns the mover's value fail-hard in its window, exact inside it, as
the exception search would (the equivalence tests compare the root's values with the full
enumeration); `fixed_child` calls itself from one place only, and nothing in `search_kernels`
calls back into this module (see engines/__init__.py: mutually recursive kernels crash when
loaded from the cache).
"""

from numba import njit

from mallard.engines.duck.bitboards import square_bit
from mallard.engines.duck.board import MAX_MOVES, MOVE_PROMO_SHIFT, S_DUCK, S_HALFMOVE, S_KEY
from mallard.engines.duck.kernels import generate_piece_moves, is_capture, pop_move, push_piece_move
from mallard.engines.duck.search_kernels import (
    C_DRAWS,
    C_PV_MEMORY,
    C_RE,
    C_RX,
    C_RX2,
    C_SELECTIVITY,
    C_SHARED_TABLE,
    FIFTY_MOVE_PLIES,
    KILLER_KEY,
    LMR_FIRST,
    POLL_MASK,
    PV_MEMORY_SLOTS,
    SELECT_LMR,
    credit_cut,
    late_reduction,
    probe,
    repeated_ducks,
    score_moves,
    search,
    terminal_score,
)
from mallard.engines.search_common import C_ABORTED, C_SELDEPTH, INF, MATE, count_node, pick_best

FIXED_ATTEMPTS = 2  # duck squares a principal-variation reply is tried with (`fixed_child`)


@njit(cache=True, nogil=True, _nrt=False)
def remember_pv(ctx, key, move, duck):
    """A fixed-duck node's best move and the duck square played with it, by position key."""
    slot = C_PV_MEMORY + 2 * (key & (PV_MEMORY_SLOTS - 1))
    data = move | (duck + 1) << 20
    ctx[slot] = key ^ data
    ctx[slot + 1] = data


@njit(cache=True, nogil=True, _nrt=False)
def recall_pv(ctx, key):
    """(move, duck) `remember_pv` holds for the position; (0, -1) when none."""
    slot = C_PV_MEMORY + 2 * (key & (PV_MEMORY_SLOTS - 1))
    data = ctx[slot + 1]
    if data == 0 or ctx[slot] ^ data != key:
        return 0, -1
    return data & 0xFFFFF, (data >> 20) - 1


@njit(cache=True, nogil=True, _nrt=False)
def _next_empty(state, duck, after):
    """The first empty square after `after` (0x88 order, wrapping) that is not `duck`."""
    sq = after
    for _ in range(128):
        sq = (sq + 1) & 127
        if sq & 0x88 == 0 and state[sq] == 0 and sq != duck:
            return sq
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def _duck_may_go(state, square, duck):
    """Whether the duck, now on `duck`, may be put on `square`: a square, empty, not its own."""
    return square >= 0 and square != duck and state[square] == 0


@njit(cache=True, nogil=True, _nrt=False)
def _mover_value(ctx, child, duck):
    """(value, square) for the mover from an exception search of its child: the child's lowest
    score and where, or RE and its square when that is the square the mover's duck must leave."""
    rx = ctx[C_RX]
    if rx >= 0 and rx == duck:
        return -ctx[C_RE], ctx[C_RX2]
    return -child, rx


@njit(cache=True, nogil=True, _nrt=False)
def _null_window_value(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth,
                       reduction, alpha, duck):
    """(value, square) of `_mover_value` for the piece move just made, its reply (at `ply`)
    searched to `depth` in the null window above alpha: `reduction` plies shallower first, and
    again at full depth when that beats alpha (a late-move reduction)."""
    while True:
        child = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply,
                       depth - reduction, -alpha - 1, -alpha)
        value, square = _mover_value(ctx, child, duck)
        if value <= alpha or ctx[C_ABORTED] or reduction == 0:
            return value, square
        reduction = 0


@njit(cache=True, nogil=True, _nrt=False)
def fixed_child(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth, alpha, beta,
                duck, guess):
    """The mover's value of its piece move just made (state is the child at `ply`, to be
    searched to `depth`): the best over its duck squares other than `duck` of minus the child's
    value there, fail-hard in (alpha, beta); ctx[C_RX] is that square (-1: any).

    The child is searched with its duck fixed on one square, first `guess`: a plain PVS node
    over the piece moves the duck leaves, whose first move's reply is valued the same way, the
    others by null-window exception searches. Then one null-window exception search of the
    child asks whether another square does better, and names it if one does; when the second
    square is beaten too, a full-window exception search of the child decides. With no square
    to start from (no `guess`, none in the table), that question is asked first, at alpha.
    (The node is written out here, not a kernel of its own, so that the recursion is one kernel
    calling itself from one place: see engines/__init__.py.)"""
    if depth < 1:
        child = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth, -beta,
                       -alpha)
        value, square = _mover_value(ctx, child, duck)
        ctx[C_RX] = square
        return value
    key = state[S_KEY]
    square = guess
    if not _duck_may_go(state, square, duck):
        _, rx, rx2 = probe(tt, ctx, key)
        square = rx if rx != duck else rx2
        if not _duck_may_go(state, square, duck):
            # no square known for the position: the question first. Below alpha the mover is
            # done without a fixed-duck search; else it names a square that does better, a
            # better start than an arbitrary one
            child = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth,
                           -alpha - 1, -alpha)
            if ctx[C_ABORTED]:
                return 0
            value, square = _mover_value(ctx, child, duck)
            if value <= alpha:
                ctx[C_RX] = square
                return alpha
            if not _duck_may_go(state, square, duck):
                square = _next_empty(state, duck, -1)
    base = ply * MAX_MOVES
    lmr = (ctx[C_SELECTIVITY] & SELECT_LMR) != 0 and depth >= 3
    best, best_square = -INF, -1
    for attempt in range(FIXED_ATTEMPTS):
        low = max(alpha, best)
        # the child with its duck on `square`, in the window (node_alpha, node_beta)
        node_alpha, node_beta = -beta, -low
        count_node(ctx, stop, POLL_MASK)
        if ctx[C_ABORTED]:
            return 0
        if ply > ctx[C_SELDEPTH]:
            ctx[C_SELDEPTH] = ply
        node = terminal_score(state, ply)
        if node == 0 and ctx[C_DRAWS] != 0 and \
                (state[S_HALFMOVE] >= FIFTY_MOVE_PLIES or
                 repeated_ducks(ctx, key) & square_bit(square) != 0):
            pass  # a draw with the duck there: 0, as the exception search values that square
        elif node == 0:
            pv_move, pv_duck = recall_pv(ctx, key)
            tt_move = pv_move
            if tt_move == 0:
                tt_move, _, _ = probe(tt, ctx, key)
            end = generate_piece_moves(state, moves, base, square)
            node = MATE - ply  # no move with the duck there: a fowling win
            if end > base:
                score_moves(state, moves, order, base, end, tt_move, ctx, ply)
                node, node_move, node_duck = -INF, 0, -1
                for i in range(base, end):
                    move = pick_best(moves, order, i, end)
                    quiet = order[i] < KILLER_KEY - 1
                    alpha_eff = max(node_alpha, node)
                    push_piece_move(state, undo, move)
                    value, reply_duck = -INF, -1
                    if i > base:
                        reduction = 0
                        if lmr and i - base >= LMR_FIRST and quiet:
                            reduction = late_reduction(depth, i - base, 1)
                        value, reply_duck = _null_window_value(
                            state, undo, moves, order, ex, ctx, tt, busy, stop, ply + 1,
                            depth - 1, reduction, alpha_eff, square)
                    if not ctx[C_ABORTED] and \
                            (i == base or (value > alpha_eff and alpha_eff + 1 < node_beta)):
                        value = fixed_child(state, undo, moves, order, ex, ctx, tt, busy, stop,
                                            ply + 1, depth - 1, alpha_eff, node_beta, square,
                                            pv_duck if move == pv_move else reply_duck)
                        reply_duck = ctx[C_RX]
                    pop_move(state, undo)
                    if ctx[C_ABORTED]:
                        return 0
                    if value > node:
                        node, node_move, node_duck = value, move, reply_duck
                    if node >= node_beta:
                        credit_cut(state, ctx, ply, depth, move)
                        break
                if node > node_alpha:
                    remember_pv(ctx, key, node_move, node_duck)
                node = max(node, node_alpha)
        value = -node
        if value > best:
            best, best_square = value, square
        if best >= beta:
            break
        low = max(alpha, best)
        child = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth, -low - 1,
                       -low)
        if ctx[C_ABORTED]:
            return 0
        value, better = _mover_value(ctx, child, duck)
        if value <= low:
            break  # no square does better than the best found: it is exact (or below alpha)
        # the question named one square to try (not the common score, nor one the duck
        # cannot go to, nor the one just searched)
        named = _duck_may_go(state, better, duck) and better != square
        if attempt + 1 == FIXED_ATTEMPTS or \
                (ctx[C_SHARED_TABLE] != 0 and (not named or -ctx[C_RE] > low)):
            # squares keep doing better (where the duck matters everywhere, as in pawn
            # endgames, each try would open a whole subtree): the exception search values
            # them all at once. With other threads, already when the question shows more than
            # one square doing better: their entries of other windows make the questions that
            # follow disagree with the fixed-duck searches, level after level, and the tries
            # would multiply
            child = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth,
                           -beta, -low)
            if ctx[C_ABORTED]:
                return 0
            value, better = _mover_value(ctx, child, duck)
            if value > best:
                best, best_square = value, better
            break
        square = better if named else _next_empty(state, duck, square)  # else any such square
    ctx[C_RX] = best_square
    return max(best, alpha)


@njit(cache=True, nogil=True, _nrt=False)
def search_root(state, undo, moves, order, ex, ctx, tt, busy, stop, depth, alpha, beta,
                root_moves, root_values, root_ducks, count):
    """One iteration over the root's piece moves (legal under the real duck), in the given order:
    the first move's reply, and that of a later move that beats it in a null window, valued with
    a fixed duck (`fixed_child`). Late quiet moves are searched shallower first, a ply less
    than elsewhere, as at the fixed-duck nodes.

    Fills root_values (fail-hard in (alpha, beta)) and root_ducks (the duck square to play with
    each move, -1 when any free square is as good); returns how many moves were finished.
    """
    duck = state[S_DUCK]
    best = -INF
    ply_one = 1
    key = state[S_KEY]
    pv_move, pv_duck = recall_pv(ctx, key)
    lmr = (ctx[C_SELECTIVITY] & SELECT_LMR) != 0 and depth >= 3
    for i in range(count):
        move = root_moves[i]
        alpha_eff = max(alpha, best)
        quiet = not is_capture(state, move) and (move >> MOVE_PROMO_SHIFT) & 7 == 0
        push_piece_move(state, undo, move)
        value, new_duck = -INF, -1
        if i > 0:
            # a late quiet move is searched shallower first, as at the principal variation's
            # other nodes
            reduction = 0
            if lmr and i >= LMR_FIRST and quiet:
                reduction = late_reduction(depth, i, 1)
            value, new_duck = _null_window_value(state, undo, moves, order, ex, ctx, tt, busy,
                                                 stop, ply_one, depth - 1, reduction, alpha_eff,
                                                 duck)
        if not ctx[C_ABORTED] and (i == 0 or (value > alpha_eff and alpha_eff + 1 < beta)):
            guess = pv_duck if move == pv_move else new_duck
            value = fixed_child(state, undo, moves, order, ex, ctx, tt, busy, stop, ply_one,
                                depth - 1, alpha_eff, beta, duck, guess)
            new_duck = ctx[C_RX]
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            return i
        root_values[i] = value
        root_ducks[i] = new_duck
        if value > best:
            best = value
            if value > alpha:
                remember_pv(ctx, key, move, new_duck)
    return count
