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
of score and RE separately; an entry answers a window only if both are resolved for it. A
position's bucket holds two entries, as UTTT's table does: the first keeps the deepest result of
the current search, the second takes whatever a shallower search stores (`_replacement`; unlike
UTTT's, a shallower result of the same position does not replace its deeper one). A deep entry
often cannot answer a later, shallower window, and a single entry then went back and forth
between the two results, each search repeating the other's work (with a second thread, a ply
deeper, 30 times the nodes in a pawn endgame).

Once the common score reaches beta, a move the duck blocks on every square still below beta is
not searched (`_can_matter`): it could only raise squares that are already lower bounds at or
above beta. When one square alone is still below beta (`_single_open`), a move is searched for
that square only, and there the duck must leave it: the child leaves the square out (C_EXCLUDED)
and returns its lowest score over the others. It then need not prove its score on the left-out
square, which can take all of its moves: a square the child's side needs the duck on (to block
a threat) otherwise made every cover of it as dear as a full search. A node that left a square
out stores nothing: its values are not the position's.

The engine's full-window nodes are those of the principal variation, searched with its duck
fixed, and the root's: `pv_kernels`. The nodes here search null windows but for the few
exceptions noted there.

Selectivity (ctx[C_SELECTIVITY], each piece a bit, SELECT_*; the engine searches with all of
them on, each one a self-play SPRT accepted, and experiments switch them off through developer
options, `rules.DEV_OPTIONS`): late-move reductions, a null move (the side passes its piece
move; the duck still moves), razoring (a node near the leaves whose evaluation is far below
alpha takes its quiescence search's values when those stay at or below alpha), and in quiescence
delta and losing-capture pruning and, from its third ply on, captures only on the square of the
last move (or of a king). Late-move reductions also work at the fixed-duck nodes of the
principal variation and at the root, a ply less. What they skip stays fail-hard: a null-move cut
as beta on every square, a razored node as its quiescence search's values; quiescence may leave
out any capture, its standing pat being the floor. The null move and razoring work in null
windows only, they and the quiescence pieces away from mate scores.
With every bit off the search is exact: it equals the full (piece move, duck square) enumeration
(`enumeration`).

Threads: helpers search the same root on a shared table (lazy SMP, `mallard.engines.driver`) and
split the work as ABDADA does: a node defers a move whose child another thread is searching to a
second pass over its moves (`busy`, BUSY_SLOTS). The order of moves changes, never what a node
may conclude from them; with ctx[C_BUSY_MASK] 0 (one thread) nothing is deferred. A mark carries
its thread's tag (ctx[C_THREAD_TAG]): unlike UTTT's and Connect Four's, a duck position can come
back on its own path (kings stepping to and fro), and a thread must not defer what only it is in.

Draws (ctx[C_DRAWS], `set_repetitions`): a position of the search that stands on the board a
third time with the duck on k (the game's positions that stood twice are listed, duck squares
included) is worth 0 on k, exactly, whatever its moves (`_draw_on`; a square where no move is
legal keeps its win). Such a node is never answered by the table, nor cut or razored for all its
squares at once, and as a leaf it is searched a ply; so is every child of the root while any
position stood twice, so that even a depth-1 search sees the reply that brings one back a third
time. While the list is not empty, the table answers only with the running search's entries: an
earlier search's knew fewer draws (its result for a position two plies below the root missed
the reply that now repeats one a third time). A position 100 plies after the last capture or
pawn move is worth 0 on every square (the 50-move rule), and on the way there the evaluation
shrinks toward 0 with the plies since then (`fifty_move_scaled`: half of it at 100), so that a
side ahead prefers the move that resets the count to a shuffle. The tests' exact search leaves
draws out, and the scaling with them.

Scores: centipawns from the side to move; a win at ply p is MATE - p (king captured, or the
opponent left without a legal move: fowling), a loss -(MATE - p). NO_MOVE marks a duck square for
which no move has been found yet; one left at the end means S cannot move there: a fowling win.
"""

import numpy as np
from numba import njit

from mallard.engines.duck.bitboards import bit_square, lowest_index, square_bit
from mallard.engines.duck.board import (
    KIND_EN_PASSANT,
    MAX_MOVES,
    MOVE_KIND_SHIFT,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    RAY_DIRECTION,
    RAY_DISTANCE,
    RAY_OFFSET,
    S_HALFMOVE,
    S_KEY,
    S_KING,
    S_SIDE,
    STEPS,
)
from mallard.engines.duck.evaluation import PIECE_VALUES, evaluate
from mallard.engines.duck.kernels import (
    generate_captures,
    generate_piece_moves,
    has_piece_move,
    is_blocked,
    last_move,
    passed_last,
    path_end,
    pop_move,
    pop_pass,
    push_pass,
    push_piece_move,
)
from mallard.engines.search_common import (
    C_ABORTED,
    C_NODES,
    C_SELDEPTH,
    MATE,
    count_node,
    pick_best,
    prefetch,
    score_from_table,
    score_to_table,
)

MATE_BOUND = MATE - 1000
NO_MOVE = -31000
EXCLUDED_SCORE = 31500   # above every score: the square a node leaves out (C_EXCLUDED)
MAX_SEARCH_PLY = 120

# ctx layout: the header of mallard.engines.search_common (C_NODES, C_ABORTED, C_NODE_LIMIT,
# C_SELDEPTH), then
C_QSEARCH, C_TT_MASK, C_TT_SAME_DEPTH, C_SELECTIVITY = 4, 5, 6, 7
C_RX, C_RE, C_RX2, C_QUIESCENCE_PLY_LIMIT, C_EVAL_TERMS, C_QNODES = 8, 9, 10, 11, 12, 13
C_BUSY_MASK = 14                    # threads: the mask of `busy` (0: no other thread searches)
C_THREAD_TAG = 15                   # threads: this thread's mark, XORed into the keys in `busy`
C_QUIESCENCE_START = 16             # the ply the running quiescence search started at
C_TT_GENERATION = 17                # the search's number (8 bits), stored in its table entries
C_EXCLUDED = 18                     # a duck square + 1 the next node leaves out (`_single_open`)
C_SHARED_TABLE = 19                 # threads: 1 when other threads write the table too
C_KILLERS = 64                      # 2 per ply
C_HISTORY = C_KILLERS + 2 * 128     # side * 4096 + from64 * 64 + to64
C_EVAL_CACHE = C_HISTORY + 2 * 4096  # EVAL_CACHE_SLOTS pairs (key ^ value, value): `static_value`
EVAL_CACHE_SLOTS = 1 << 13
C_PV_MEMORY = C_EVAL_CACHE + 2 * EVAL_CACHE_SLOTS  # PV_MEMORY_SLOTS pairs: `pv_kernels.remember_pv`
PV_MEMORY_SLOTS = 1 << 12
# draws (`set_repetitions`): on or off, then the game's positions the search's may repeat: a
# filter of REPEAT_FILTER_BITS bits by key, their count, and (duck-free key, duck square) pairs
C_DRAWS = C_PV_MEMORY + 2 * PV_MEMORY_SLOTS
C_REPEAT_FILTER = C_DRAWS + 1
REPEAT_FILTER_BITS = 1 << 12
C_REPEAT_COUNT = C_REPEAT_FILTER + REPEAT_FILTER_BITS // 64
C_REPEATS = C_REPEAT_COUNT + 1
REPEAT_SLOTS = 128
CTX_SIZE = C_REPEATS + 2 * REPEAT_SLOTS
FIFTY_MOVE_PLIES = 100   # plies without a capture or pawn move after which either side may claim
POLL_MASK = 255  # nodes between stop-flag checks: about 0.3 ms at 800 k nodes/s

# Selectivity, the bits of ctx[C_SELECTIVITY] (0: the exact search the equivalence tests check)
SELECT_LMR = 1           # late quiet moves searched shallower first (`LMR_REDUCTION`)
SELECT_NULL = 2          # a pass searched shallower first: when even it fails high, cut
SELECT_DELTA = 4         # in quiescence, captures that cannot lift the standing pat to alpha
SELECT_LOSING = 8        # in quiescence, captures a pawn or knight takes back at a loss
SELECT_RECAPTURES = 16   # deep in quiescence, only captures on the last move's square (and kings)
SELECT_RAZOR = 32        # near the leaves, an evaluation far below alpha: the captures alone decide
LMR_FIRST = 3            # the moves searched before any is reduced
NULL_MIN_DEPTH = 3
NULL_MIN_MOVES = 16      # fewer piece moves: passing may be what the side cannot do (fowling)
RAZOR_MAX_DEPTH = 2
RAZOR_MARGIN = 300       # centipawns per ply of depth left
DELTA_MARGIN = 200       # centipawns beyond the piece taken
RECAPTURES_FROM = 3      # quiescence plies before `SELECT_RECAPTURES` narrows the captures
KNIGHT_JUMPS = np.array([14, 18, 31, 33, -14, -18, -31, -33], dtype=np.int64)
KILLER_KEY = 1 << 35     # ordering keys from here up: the table's move, captures, killers

# Threads (ABDADA): `busy` (BUSY_SLOTS words, shared by the threads of a search) holds the keys
# of positions some thread is searching. At a node of depth BUSY_MIN_DEPTH or more, a move
# other than the first whose child another thread is in waits for a second pass over the moves
# (its ordering key becomes DEFERRED_QUIET or DEFERRED_LOUD, below every real key), so the
# threads split the work.
BUSY_SLOTS = 1 << 14
THREAD_TAG_SHIFT = 56    # the tag is the thread's number (1 up) in the key's top byte
KEY_BELOW_TAG = (1 << THREAD_TAG_SHIFT) - 1
BUSY_MIN_DEPTH = 3
DEFERRED_QUIET = -(1 << 62)
DEFERRED_LOUD = DEFERRED_QUIET - 1


def thread_tag(number: int) -> int:
    """The mark of search thread `number` (0: the main one) for ctx[C_THREAD_TAG]."""
    return (number % 127 + 1) << THREAD_TAG_SHIFT


def _lmr_table() -> np.ndarray:
    """Plies taken off the depth - 1 search of the n-th move at a node of depth d: grows with
    the logarithms of both (the shape Stockfish and most engines use)."""
    table = np.zeros((64, 64), dtype=np.int64)
    for depth in range(1, 64):
        for number in range(1, 64):
            table[depth, number] = int(0.5 + np.log(depth) * np.log(number) / 2.0)
    return table


LMR_REDUCTION = _lmr_table()

HEAD = 128      # the exception list's anchor (not a square)
EX_NEXT, EX_PREV, EX_SCORE, EX_MOVE = 0, 129, 258, 386
EX_STRIDE = 516  # per ply: next[129], prev[129], score[128], move[128]
TT_WORDS = 4    # key, data (`pack_entry`), score, re
GENERATION_SHIFT = 48  # where the data word holds its search's generation (8 bits)
BUCKET_ENTRIES = 2  # a bucket: the depth-preferred entry, then the always-replaced one
BUCKET_WORDS = BUCKET_ENTRIES * TT_WORDS
EXACT, LOWER, UPPER = 0, 1, 2
HASHFULL_SAMPLE = 4000  # entries


def used_entries(tt, generation: int) -> np.ndarray:
    """Which of the table's first HASHFULL_SAMPLE entries hold a position stored by the search
    of `generation` (`hashfull`'s sample: as Stockfish's, what the running search filled)."""
    sample = tt[:HASHFULL_SAMPLE * TT_WORDS].reshape(-1, TT_WORDS)
    return (sample[:, 0] != 0) & ((sample[:, 1] >> GENERATION_SHIFT) & 0xFF == generation)


def set_repetitions(ctx, positions) -> None:
    """Draws on for the coming search, over the game's `positions`: (duck-free key, duck square)
    pairs that a position of the search repeats when its key and duck are the same, a draw
    (`searcher.game_positions`: those that stood twice); the last REPEAT_SLOTS are kept. None
    turns draws off, the 50-move rule's too."""
    ctx[C_DRAWS] = int(positions is not None)
    positions = [(key, duck) for key, duck in positions or () if duck >= 0][-REPEAT_SLOTS:]
    ctx[C_REPEAT_FILTER:C_REPEAT_COUNT] = 0
    ctx[C_REPEAT_COUNT] = len(positions)
    for slot, (key, duck) in enumerate(positions):
        ctx[C_REPEATS + 2 * slot] = key
        ctx[C_REPEATS + 2 * slot + 1] = duck
        bit = (key >> 40) & (REPEAT_FILTER_BITS - 1)
        word = np.int64(ctx[C_REPEAT_FILTER + (bit >> 6)]) | (np.int64(1) << np.int64(bit & 63))
        ctx[C_REPEAT_FILTER + (bit >> 6)] = word


@njit(cache=True, nogil=True, _nrt=False)
def repeated_ducks(ctx, key):
    """The duck squares (a set, bit per square as in `bitboards`) with which the position `key`
    repeats one of the game's (`set_repetitions`); 0 for most positions after one filter read."""
    bit = (key >> 40) & (REPEAT_FILTER_BITS - 1)
    if (ctx[C_REPEAT_FILTER + (bit >> 6)] >> (bit & 63)) & 1 == 0:
        return 0
    ducks = 0
    for slot in range(ctx[C_REPEAT_COUNT]):
        if ctx[C_REPEATS + 2 * slot] == key:
            ducks |= square_bit(ctx[C_REPEATS + 2 * slot + 1])
    return ducks


@njit(cache=True, nogil=True, _nrt=False)
def _index64(sq):
    return (sq >> 4) * 8 + (sq & 7)


@njit(cache=True, nogil=True, _nrt=False)
def _returns(ctx, score, rx, re, rx2):
    ctx[C_RX] = rx
    ctx[C_RE] = re
    ctx[C_RX2] = rx2
    return score


@njit(cache=True, nogil=True, _nrt=False)
def _bound(value, alpha, beta):
    if value <= alpha:
        return UPPER
    if value >= beta:
        return LOWER
    return EXACT


@njit(cache=True, nogil=True, _nrt=False)
def _resolved(value, flag, alpha, beta):
    return flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha)


@njit(cache=True, nogil=True, _nrt=False)
def score_moves(state, moves, order, start, end, tt_move, ctx, ply):
    """The ordering keys of moves[start:end] into order[start:end]: the table's move, king
    captures, other captures and promotions (most valuable victim, least valuable attacker),
    the killers, then the history of quiet moves."""
    side = state[S_SIDE]
    killer0 = ctx[C_KILLERS + 2 * ply]
    killer1 = ctx[C_KILLERS + 2 * ply + 1]
    for i in range(start, end):
        move = moves[i]
        frm = move & 0x7F
        to = (move >> MOVE_TO_SHIFT) & 0x7F
        victim = state[to] & 7
        if (move >> MOVE_KIND_SHIFT) & 3 == KIND_EN_PASSANT:
            victim = 1
        promotion = (move >> MOVE_PROMO_SHIFT) & 7
        if move == tt_move:
            key = 1 << 40
        elif victim == 6:
            key = 1 << 39
        elif victim != 0 or promotion != 0:
            key = (1 << 36) + PIECE_VALUES[victim] * 16 + PIECE_VALUES[promotion] \
                - (state[frm] & 7)
        elif move == killer0:
            key = KILLER_KEY
        elif move == killer1:
            key = KILLER_KEY - 1
        else:
            key = ctx[C_HISTORY + side * 4096 + _index64(frm) * 64 + _index64(to)]
        order[i] = key


@njit(cache=True, nogil=True, _nrt=False)
def cheapest_unblockable_attacker(state, sq):
    """The kind of the cheapest enemy piece attacking `sq` with an attack no duck can block: 1
    for a pawn, 2 for a knight (when no pawn attacks), 0 for neither."""
    enemy = (1 - state[S_SIDE]) * 8
    forward = 16 if enemy == 0 else -16  # the enemy pawns' step: they take from behind `sq`
    for side_step in (-1, 1):
        frm = sq - forward + side_step
        if frm & 0x88 == 0 and state[frm] == enemy + 1:
            return 1
    for jump in KNIGHT_JUMPS:
        frm = sq + jump
        if frm & 0x88 == 0 and state[frm] == enemy + 2:
            return 2
    return 0


@njit(cache=True, nogil=True, _nrt=False)
def late_reduction(depth, number, on_pv):
    """Plies taken off the search of the `number`-th move (from 0) at a node of `depth`, one
    less on the principal variation, leaving at least one ply."""
    reduction = LMR_REDUCTION[min(depth, 63), min(number, 63)] - on_pv
    return max(0, min(reduction, depth - 2))


@njit(cache=True, nogil=True, _nrt=False)
def credit_cut(state, ctx, ply, depth, move):
    """A move cut the node at `ply` off: a quiet one becomes its first killer and gains
    history (depth squared)."""
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    if state[to] == 0 and (move >> MOVE_KIND_SHIFT) & 3 != KIND_EN_PASSANT:
        if ctx[C_KILLERS + 2 * ply] != move:
            ctx[C_KILLERS + 2 * ply + 1] = ctx[C_KILLERS + 2 * ply]
            ctx[C_KILLERS + 2 * ply] = move
        ctx[C_HISTORY + state[S_SIDE] * 4096 + _index64(move & 0x7F) * 64 + _index64(to)] += \
            depth * depth


# The exception list of a node: a circular doubly linked list through arrays indexed by square,
# in the node's slice of `ex` (base lb = ply * EX_STRIDE): NEXT/PREV links (HEAD is the list's
# anchor; next[sq] == -1 means sq is not in the list), SCORE and MOVE per square. Membership is
# one look-up; every node empties its list before it returns, so next[] stays -1 elsewhere.
@njit(cache=True, nogil=True, _nrt=False)
def _listed(ex, lb, sq):
    return ex[lb + EX_NEXT + sq] >= 0


@njit(cache=True, nogil=True, _nrt=False)
def _link(ex, lb, sq, score, move):
    first = ex[lb + EX_NEXT + HEAD]
    ex[lb + EX_NEXT + sq] = first
    ex[lb + EX_PREV + sq] = HEAD
    ex[lb + EX_PREV + first] = sq
    ex[lb + EX_NEXT + HEAD] = sq
    ex[lb + EX_SCORE + sq] = score
    ex[lb + EX_MOVE + sq] = move


@njit(cache=True, nogil=True, _nrt=False)
def _unlink(ex, lb, sq):
    after = ex[lb + EX_NEXT + sq]
    before = ex[lb + EX_PREV + sq]
    ex[lb + EX_NEXT + before] = after
    ex[lb + EX_PREV + after] = before
    ex[lb + EX_NEXT + sq] = -1


@njit(cache=True, nogil=True, _nrt=False)
def _open_list(ex, lb):
    ex[lb + EX_NEXT + HEAD] = HEAD
    ex[lb + EX_PREV + HEAD] = HEAD


@njit(cache=True, nogil=True, _nrt=False)
def _close_list(ex, lb):
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        after = ex[lb + EX_NEXT + sq]
        ex[lb + EX_NEXT + sq] = -1
        sq = after
    _open_list(ex, lb)


@njit(cache=True, nogil=True, _nrt=False)
def reset_lists(ex):
    """Empty every ply's list (after a search was aborted with lists still open)."""
    ex[:] = -1
    for ply in range(len(ex) // EX_STRIDE):
        _open_list(ex, ply * EX_STRIDE)


@njit(cache=True, nogil=True, _nrt=False)
def _raise_listed(ex, lb, sq, gain, common, move):
    """A move worth `gain` on the listed square sq: the square's score rises to it, and the
    square leaves the list once that reaches the common score. A gain above the common score
    comes only from a move searched for that square alone (`_single_open`), where the common
    score holds beta: as a lower bound at or above beta it stands for the gain (fail-hard)."""
    if gain > ex[lb + EX_SCORE + sq]:
        if gain >= common:
            _unlink(ex, lb, sq)
        else:
            ex[lb + EX_SCORE + sq] = gain
            ex[lb + EX_MOVE + sq] = move


@njit(cache=True, nogil=True, _nrt=False)
def _merge(state, ex, lb, common, common_move, move, a, xs, b):
    """Fold one move into the node's per-square scores; returns the new common score and move.

    The move is worth `a` on every square it is not blocked on, `b` (< a) on square xs (-1:
    none), nothing where it is blocked. The board is the node's (the move is not made).
    """
    if a > common:
        # listed squares the move is blocked on keep their score; xs may rise to b; the others
        # rise to the new common score and leave the list
        xs_done = xs < 0
        sq = ex[lb + EX_NEXT + HEAD]
        while sq != HEAD:
            after = ex[lb + EX_NEXT + sq]
            if is_blocked(move, sq):
                if sq == xs:
                    xs_done = True
            elif sq == xs:
                if b > ex[lb + EX_SCORE + sq]:
                    ex[lb + EX_SCORE + sq] = b
                    ex[lb + EX_MOVE + sq] = move
                xs_done = True
            else:
                _unlink(ex, lb, sq)
            sq = after
        # the empty squares of the move's path keep the old common score
        frm = move & 0x7F
        end = path_end(move)
        offset = end - frm + RAY_OFFSET
        code = RAY_DIRECTION[offset]
        if code >= 9:
            if state[end] == 0 and not _listed(ex, lb, end):
                _link(ex, lb, end, common, common_move)
            if end == xs:
                xs_done = True
        else:
            step = STEPS[code]
            sq = frm
            for _ in range(RAY_DISTANCE[offset]):
                sq += step
                if state[sq] == 0:
                    if not _listed(ex, lb, sq):
                        _link(ex, lb, sq, common, common_move)
                    if sq == xs:
                        xs_done = True
        if not xs_done:
            if b > common:
                _link(ex, lb, xs, b, move)
            else:
                _link(ex, lb, xs, common, common_move)
        return a, move
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        after = ex[lb + EX_NEXT + sq]
        if not is_blocked(move, sq):
            _raise_listed(ex, lb, sq, b if sq == xs else a, common, move)
        sq = after
    return common, common_move


@njit(cache=True, nogil=True, _nrt=False)
def _can_matter(ex, lb, common, beta, move):
    """Whether searching `move` can change what the node returns: with the common score at or
    above beta, only the listed squares below beta are open, and a move blocked on all of them
    raises none (the squares it raises stay lower bounds at or above beta, fail-hard)."""
    if common < beta:
        return True
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        if ex[lb + EX_SCORE + sq] < beta and not is_blocked(move, sq):
            return True
        sq = ex[lb + EX_NEXT + sq]
    return False


@njit(cache=True, nogil=True, _nrt=False)
def _single_open(ex, lb, common, beta):
    """The one listed square below beta when the common score holds beta and no other square
    is below it; -1 otherwise. A move searched then matters only there."""
    if common < beta:
        return -1
    open_square = -1
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        if ex[lb + EX_SCORE + sq] < beta:
            if open_square >= 0:
                return -1
            open_square = sq
        sq = ex[lb + EX_NEXT + sq]
    return open_square


@njit(cache=True, nogil=True, _nrt=False)
def _keep_out(ex, lb, excluded):
    """Keep the excluded square listed above every score, so that it is never the lowest."""
    if excluded >= 0 and not _listed(ex, lb, excluded):
        _link(ex, lb, excluded, EXCLUDED_SCORE, 0)


@njit(cache=True, nogil=True, _nrt=False)
def _lowest(ex, lb, common):
    lowest = common
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        if ex[lb + EX_SCORE + sq] < lowest:
            lowest = ex[lb + EX_SCORE + sq]
        sq = ex[lb + EX_NEXT + sq]
    return lowest


@njit(cache=True, nogil=True, _nrt=False)
def _finish(ex, lb, common, common_move, ctx):
    """Set RX, RE, RX2 from the node's per-square scores, empty the list; returns (score, best
    move): the lowest score and the move that reaches it."""
    best = -1
    second = -1
    sq = ex[lb + EX_NEXT + HEAD]
    while sq != HEAD:
        score = ex[lb + EX_SCORE + sq]
        if score < common:
            if best < 0 or score < ex[lb + EX_SCORE + best]:
                second = best
                best = sq
            elif second < 0 or score < ex[lb + EX_SCORE + second]:
                second = sq
        sq = ex[lb + EX_NEXT + sq]
    if best < 0:
        ctx[C_RX] = -1
        ctx[C_RE] = common
        ctx[C_RX2] = -1
        _close_list(ex, lb)
        return common, common_move
    ctx[C_RX] = best
    if second < 0:
        ctx[C_RE] = common
        ctx[C_RX2] = -1
    else:
        ctx[C_RE] = ex[lb + EX_SCORE + second]
        ctx[C_RX2] = second
    result = ex[lb + EX_SCORE + best], ex[lb + EX_MOVE + best]
    _close_list(ex, lb)
    return result


@njit(cache=True, nogil=True, _nrt=False)
def _child_terms(state, ctx, value):
    """(a, xs, b): the child's worth to this node on most squares, its exception square (only
    if that square is empty here) and its worth there."""
    rx = ctx[C_RX]
    a = -value
    if rx >= 0 and state[rx] == 0 and ctx[C_RE] > value:
        return a, rx, -ctx[C_RE]
    return a, -1, a


# A table entry is TT_WORDS words: the key (stored XOR the other three, see `_read_entry`), the
# data word (`pack_entry`), the score and RE (mate scores relative to the node). The data word's
# fields are read and written here only.
@njit(cache=True, nogil=True, _nrt=False)
def pack_entry(move, depth, flags, rx, rx2, generation):
    """The data word: move | depth << 20 | flags << 28 | (rx + 1) << 32 | (rx2 + 1) << 40 |
    generation << GENERATION_SHIFT (flags: the bound type of the score, then of RE << 2; rx, rx2
    may be -1)."""
    return move | depth << 20 | flags << 28 | (rx + 1) << 32 | (rx2 + 1) << 40 | \
        generation << GENERATION_SHIFT


@njit(cache=True, nogil=True, _nrt=False)
def unpack_entry(data):
    """(move, depth, flags, rx, rx2) of a data word."""
    return (data & 0xFFFFF, (data >> 20) & 0xFF, (data >> 28) & 0xF, ((data >> 32) & 0xFF) - 1,
            ((data >> 40) & 0xFF) - 1)


@njit(cache=True, nogil=True, _nrt=False)
def _slot(ctx, key):
    """Where the bucket of the position `key` starts in the table."""
    return (key & ctx[C_TT_MASK]) * BUCKET_WORDS


@njit(cache=True, nogil=True, _nrt=False)
def _replacement(tt, ctx, key, depth):
    """The entry a result of `depth` for the position `key` goes to: the bucket's first, unless
    that holds a deeper result of this search (of any position), which it keeps."""
    slot = _slot(ctx, key)
    data = tt[slot + 1]  # read unchecked: a torn entry only misplaces one store
    stored_depth = unpack_entry(data)[1]
    if depth < stored_depth and (data >> GENERATION_SHIFT) & 0xFF == ctx[C_TT_GENERATION]:
        return slot + TT_WORDS
    return slot


@njit(cache=True, nogil=True, _nrt=False)
def _read_entry(tt, slot, key):
    """(data, score, re) of the entry at `slot` when it holds `key` whole; data -1 when not.
    Threads write entries without locks: the key word is stored XOR the other three, so an entry
    two threads wrote at once (words of each) fails the check like any other position's."""
    data, score, re = tt[slot + 1], tt[slot + 2], tt[slot + 3]
    if tt[slot] ^ data ^ score ^ re != key:
        return -1, 0, 0
    return data, score, re


@njit(cache=True, nogil=True, _nrt=False)
def probe(tt, ctx, key):
    """(move, rx, rx2) the table holds for the position `key` (its deeper entry first);
    (0, -1, -1) when none."""
    slot = _slot(ctx, key)
    for at in range(slot, slot + BUCKET_WORDS, TT_WORDS):
        data, _, _ = _read_entry(tt, at, key)
        if data >= 0:
            move, _, _, rx, rx2 = unpack_entry(data)
            return move, rx, rx2
    return 0, -1, -1


@njit(cache=True, nogil=True, _nrt=False)
def _store(tt, ctx, at, key, ply, depth, move, score, re, rx, rx2, alpha, beta):
    """Write the entry at `at` (`_replacement`)."""
    flags = _bound(score, alpha, beta) | _bound(re, alpha, beta) << 2
    data = pack_entry(move, depth, flags, rx, rx2, ctx[C_TT_GENERATION])
    stored_score = score_to_table(score, ply, MATE_BOUND)
    stored_re = score_to_table(re, ply, MATE_BOUND)
    tt[at] = key ^ data ^ stored_score ^ stored_re
    tt[at + 1] = data
    tt[at + 2] = stored_score
    tt[at + 3] = stored_re


@njit(cache=True, nogil=True, _nrt=False)
def _table_answer(tt, ctx, key, ply, depth, alpha, beta):
    """What the table holds for the node `key` of `depth` in (alpha, beta):
    (answered, move, score, rx, re, rx2); answered when the entry is deep enough (its own depth,
    or any deeper one unless ctx[C_TT_SAME_DEPTH]) and both its score and RE are resolved for
    the window; either of the bucket's entries may answer. The move (0: none; the deeper
    entry's first) orders the node's moves either way."""
    slot = _slot(ctx, key)
    first_move = -1
    # while positions of the game stood twice, an earlier search's entry may not know a draw
    # that came within reach since: only this search's answer (`set_repetitions`)
    this_search_only = ctx[C_REPEAT_COUNT] != 0
    for at in range(slot, slot + BUCKET_WORDS, TT_WORDS):
        data, stored_score, stored_re = _read_entry(tt, at, key)
        if data < 0:
            continue
        move, stored_depth, flags, rx, rx2 = unpack_entry(data)
        if first_move < 0:
            first_move = move
        if this_search_only and (data >> GENERATION_SHIFT) & 0xFF != ctx[C_TT_GENERATION]:
            continue
        if stored_depth == depth or (stored_depth > depth and not ctx[C_TT_SAME_DEPTH]):
            score = score_from_table(stored_score, ply, MATE_BOUND)
            re = score_from_table(stored_re, ply, MATE_BOUND)
            if _resolved(score, flags & 3, alpha, beta) and \
                    _resolved(re, flags >> 2, alpha, beta):
                return True, move, score, rx, re, rx2
    return False, max(first_move, 0), 0, -1, 0, -1


@njit(cache=True, nogil=True, _nrt=False)
def _absorb_child(state, ex, lb, ctx, value, move, common, common_move, lowest):
    """Fold a searched child (its value and the exception terms it left in ctx) into the node:
    returns the new (common score, common move, lowest score). A node whose lowest score was
    below beta before the child cuts off exactly when the returned lowest reaches beta."""
    a, xs, b = _child_terms(state, ctx, value)
    if a > lowest:
        common, common_move = _merge(state, ex, lb, common, common_move, move, a, xs, b)
        lowest = _lowest(ex, lb, common)
    return common, common_move, lowest


@njit(cache=True, nogil=True, _nrt=False)
def fifty_move_scaled(value, state, ctx):
    """The evaluation `value` as the search takes it: with draws on, times (200 - plies since
    the last capture or pawn move) / 200."""
    if ctx[C_DRAWS] == 0:
        return value
    return value * (2 * FIFTY_MOVE_PLIES - state[S_HALFMOVE]) // (2 * FIFTY_MOVE_PLIES)


@njit(cache=True, nogil=True, _nrt=False)
def static_value(state, ctx):
    """`evaluate` with the search's terms, through this thread's cache of recent evaluations
    (in its ctx, keyed by the position without the duck, which the evaluation never reads, and
    the terms; a slot holds key ^ value so a stale or other slot never answers), scaled by
    `fifty_move_scaled` (after the cache: the key leaves out the move counts)."""
    terms = ctx[C_EVAL_TERMS]
    key = state[S_KEY] ^ terms
    slot = C_EVAL_CACHE + 2 * (key & (EVAL_CACHE_SLOTS - 1))
    value = ctx[slot + 1]
    if ctx[slot] ^ value != key:
        value = evaluate(state, terms)
        ctx[slot] = key ^ value
        ctx[slot + 1] = value
    return fifty_move_scaled(value, state, ctx)


@njit(cache=True, nogil=True, _nrt=False)
def terminal_score(state, ply):
    """Score of a node decided before any move: 0 if it is not decided."""
    if state[S_KING + state[S_SIDE]] < 0:
        return -(MATE - ply)
    return 0


@njit(cache=True, nogil=True, _nrt=False)
def loses_to_recapture(state, move):
    """Whether the capture `move` of the side to move loses material to a recapture by a pawn
    or a knight, the two the duck can never block: the capturing piece is worth more than what
    it takes plus the cheapest such recapturer (taken back in turn at best). Pawn captures,
    promotions and king captures never lose so."""
    frm = move & 0x7F
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    kind = state[frm] & 7
    victim = state[to] & 7
    if kind == 1 or kind == 6 or victim == 6 or (move >> MOVE_PROMO_SHIFT) & 7 != 0:
        return False
    recapturer = cheapest_unblockable_attacker(state, to)
    return recapturer != 0 and PIECE_VALUES[kind] > PIECE_VALUES[victim] + PIECE_VALUES[recapturer]


@njit(cache=True, nogil=True, _nrt=False)
def quiescence(state, undo, moves, order, ex, ctx, stop, ply, alpha, beta):
    """Captures only, with standing pat; the same exception bookkeeping as `search`."""
    ctx[C_QNODES] += 1
    count_node(ctx, stop, POLL_MASK)
    if ctx[C_ABORTED]:
        return _returns(ctx, 0, -1, 0, -1)
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    lost = terminal_score(state, ply)
    if lost != 0:
        return _returns(ctx, lost, -1, lost, -1)
    base = ply * MAX_MOVES
    stand = static_value(state, ctx)
    if stand >= beta:
        # a lower bound at or above beta whether or not the side has a move (with none it
        # wins outright, a higher value still): the move check is left to the nodes below beta
        return _returns(ctx, stand, -1, stand, -1)
    if ply >= ctx[C_QUIESCENCE_PLY_LIMIT]:
        if not has_piece_move(state):
            return _returns(ctx, MATE - ply, -1, MATE - ply, -1)
        return _returns(ctx, stand, -1, stand, -1)
    end = generate_captures(state, moves, base)
    if end == base and not has_piece_move(state):
        # asked only now: a capture is a piece move, and most nodes here have one
        return _returns(ctx, MATE - ply, -1, MATE - ply, -1)
    score_moves(state, moves, order, base, end, 0, ctx, ply)
    lb = ply * EX_STRIDE
    _open_list(ex, lb)
    common = stand
    common_move = 0
    lowest = stand
    delta = (ctx[C_SELECTIVITY] & SELECT_DELTA) != 0 and abs(alpha) < MATE_BOUND
    losing = (ctx[C_SELECTIVITY] & SELECT_LOSING) != 0 and abs(alpha) < MATE_BOUND
    recapture_on = -1  # the only square captures may go to (-1: any)
    if (ctx[C_SELECTIVITY] & SELECT_RECAPTURES) != 0 and abs(alpha) < MATE_BOUND and \
            ply - ctx[C_QUIESCENCE_START] >= RECAPTURES_FROM:
        last = last_move(state, undo)  # a capture: quiescence plays nothing else
        if last > 0:
            recapture_on = (last >> MOVE_TO_SHIFT) & 0x7F
    for i in range(base, end):
        move = pick_best(moves, order, i, end)
        alpha_eff = max(alpha, lowest)
        to = (move >> MOVE_TO_SHIFT) & 0x7F
        if delta:
            gain = PIECE_VALUES[state[to] & 7] + PIECE_VALUES[(move >> MOVE_PROMO_SHIFT) & 7]
            if (move >> MOVE_KIND_SHIFT) & 3 == KIND_EN_PASSANT:
                gain = PIECE_VALUES[1]
            if state[to] & 7 != 6 and stand + gain + DELTA_MARGIN <= alpha_eff:
                # this capture and every later one (they take less) stay at or below alpha:
                # the squares keep what they have, upper bounds at or below alpha (fail-hard)
                break
        if recapture_on >= 0 and to != recapture_on and state[to] & 7 != 6:
            continue  # long exchanges elsewhere are left to the standing pat
        if not _can_matter(ex, lb, common, beta, move):
            continue
        if losing and loses_to_recapture(state, move):
            continue  # quiescence may leave out any capture: the standing pat stays the floor
        push_piece_move(state, undo, move)
        value = quiescence(state, undo, moves, order, ex, ctx, stop, ply + 1, -beta, -alpha_eff)
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            _close_list(ex, lb)
            return _returns(ctx, 0, -1, 0, -1)
        common, common_move, lowest = _absorb_child(state, ex, lb, ctx, value, move, common,
                                                    common_move, lowest)
        if lowest >= beta:
            break
    score, _ = _finish(ex, lb, common, common_move, ctx)
    return score


@njit(cache=True, nogil=True, _nrt=False)
def leaf_value(state, moves, ctx, ply):
    """The depth-0 value without quiescence: lost king, no move at all (a win), or evaluation."""
    lost = terminal_score(state, ply)
    if lost != 0:
        return lost
    if not has_piece_move(state):
        return MATE - ply
    return static_value(state, ctx)


@njit(cache=True, nogil=True, _nrt=False)
def _draw_on(state, ex, lb, ducks, common, common_move):
    """The node's squares in `ducks` (`repeated_ducks`) are worth a draw, 0, exactly: the
    position repeats one of the game's there, whatever the moves found. A square where no move
    is legal keeps its win (`NO_MOVE`, or the common score when that is it): the side that
    cannot move wins before any draw is claimed."""
    while ducks != 0:
        sq = bit_square(lowest_index(ducks))
        ducks &= ducks - 1
        if state[sq] != 0:
            continue
        if _listed(ex, lb, sq):
            if ex[lb + EX_SCORE + sq] != NO_MOVE:
                ex[lb + EX_SCORE + sq] = 0
        elif common != NO_MOVE:
            _link(ex, lb, sq, 0, common_move)


@njit(cache=True, nogil=True, _nrt=False)
def _leaf(state, moves, ctx, ply):
    value = leaf_value(state, moves, ctx, ply)
    return _returns(ctx, value, -1, value, -1)


@njit(cache=True, nogil=True, _nrt=False)
def search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply, depth, alpha, beta):
    """Exception-search node; see the module docstring for what it returns."""
    excluded = ctx[C_EXCLUDED] - 1
    ctx[C_EXCLUDED] = 0
    drawn = 0  # the duck squares on which this position repeats one of the game's
    if ctx[C_DRAWS] != 0:
        if state[S_HALFMOVE] >= FIFTY_MOVE_PLIES and terminal_score(state, ply) == 0:
            return _returns(ctx, 0, -1, 0, -1)
        drawn = repeated_ducks(ctx, state[S_KEY])
        if depth <= 0 and (drawn != 0 or (ply == 1 and ctx[C_REPEAT_COUNT] != 0)):
            # its moves searched: a standing pat knows no square's draw, nor, at the root's
            # children, the reply that makes a draw (a clock near zero leaves only depth 1)
            depth = 1
    if depth <= 0:
        if ctx[C_QSEARCH]:
            ctx[C_QUIESCENCE_START] = ply
            return quiescence(state, undo, moves, order, ex, ctx, stop, ply, alpha, beta)
        ctx[C_NODES] += 1
        return _leaf(state, moves, ctx, ply)
    count_node(ctx, stop, POLL_MASK)
    if ctx[C_ABORTED]:
        return _returns(ctx, 0, -1, 0, -1)
    if ply > ctx[C_SELDEPTH]:
        ctx[C_SELDEPTH] = ply
    lost = terminal_score(state, ply)
    if lost != 0:
        return _returns(ctx, lost, -1, lost, -1)

    key = state[S_KEY]
    answered, tt_move, score, rx, re, rx2 = _table_answer(tt, ctx, key, ply, depth, alpha, beta)
    if answered and drawn == 0:  # an entry of an earlier search may not know the draws
        return _returns(ctx, score, rx, re, rx2)

    base = ply * MAX_MOVES
    end = generate_piece_moves(state, moves, base, -1)
    if end == base:
        return _returns(ctx, MATE - ply, -1, MATE - ply, -1)
    # selectivity (see SELECT_*): only in null windows, away from mate scores
    # (not where draws are: a cut or a quiescence search stands for every square alike)
    selective = ctx[C_SELECTIVITY] if beta - alpha == 1 and abs(beta) < MATE_BOUND and \
        drawn == 0 else 0
    static = 0
    if ((selective & SELECT_NULL) != 0 and depth >= NULL_MIN_DEPTH) or \
            ((selective & SELECT_RAZOR) != 0 and depth <= RAZOR_MAX_DEPTH):
        static = static_value(state, ctx)
    if (selective & SELECT_RAZOR) != 0 and depth <= RAZOR_MAX_DEPTH and \
            static + RAZOR_MARGIN * depth <= alpha and end - base >= NULL_MIN_MOVES:
        # so far behind that only a capture could lift it: this node's quiescence search (its
        # values fail-hard in the window, per duck square as any node's); when even that stays
        # at or below alpha, it stands for the node (not with few moves, which the duck could
        # all block: a win the standing pat would not see)
        ctx[C_QUIESCENCE_START] = ply
        value = quiescence(state, undo, moves, order, ex, ctx, stop, ply, alpha, beta)
        if value <= alpha or ctx[C_ABORTED]:
            return value
        end = generate_piece_moves(state, moves, base, -1)  # quiescence wrote its captures there
    score_moves(state, moves, order, base, end, tt_move, ctx, ply)

    lb = ply * EX_STRIDE
    _open_list(ex, lb)
    if drawn != 0 or (excluded >= 0 and state[excluded] != 0):
        excluded = -1
    _keep_out(ex, lb, excluded)
    common = NO_MOVE
    common_move = 0
    lowest = NO_MOVE
    cut = False
    lmr = (ctx[C_SELECTIVITY] & SELECT_LMR) != 0 and depth >= 3
    null = (selective & SELECT_NULL) != 0 and depth >= NULL_MIN_DEPTH and static >= beta and \
        end - base >= NULL_MIN_MOVES and not passed_last(state, undo)
    busy_mask = ctx[C_BUSY_MASK] if depth >= BUSY_MIN_DEPTH else 0
    # i == base - 1 is the pass (null move), searched first when `null`; with other threads,
    # steps from `end` on are the second pass over the moves deferred in the first
    for step in range(base - 1 if null else base, end + (end - base if busy_mask else 0)):
        i = step if step < end else step - (end - base)
        if step >= end and order[i] > DEFERRED_QUIET:
            continue
        alpha_eff = max(alpha, lowest)
        reduction = 0
        busy_slot = -1
        if i < base:
            move = 0
            reduction = 2 + depth // 3
            push_pass(state, undo)
        else:
            if step < end:
                move = pick_best(moves, order, i, end)
                quiet = order[i] < KILLER_KEY - 1
            else:
                move = moves[i]
                quiet = order[i] == DEFERRED_QUIET
            if not _can_matter(ex, lb, common, beta, move):
                continue
            if lmr and i - base >= LMR_FIRST and quiet:
                # a late quiet move: shallower first, less so on the principal variation
                reduction = late_reduction(depth, i - base, 1 if beta - alpha > 1 else 0)
            push_piece_move(state, undo, move)
            if depth - reduction > 1:
                # the child reads its bucket first (a leaf's quiescence reads none: a
                # prefetch there only evicts lines the search still uses)
                prefetch(tt, _slot(ctx, state[S_KEY]))
            if busy_mask:
                child_key = state[S_KEY]
                busy_slot = child_key & busy_mask
                mark = busy[busy_slot] ^ child_key
                if step < end and i > base and mark & KEY_BELOW_TAG == 0 and \
                        mark != ctx[C_THREAD_TAG]:  # another thread's tag alone (none is 0)
                    pop_move(state, undo)
                    order[i] = DEFERRED_QUIET if quiet else DEFERRED_LOUD
                    continue
                busy[busy_slot] = child_key ^ ctx[C_THREAD_TAG]
        # PVS: after the first move a null window, searched again in full when it fails high;
        # a reduced move that fails high is searched again at full depth first (not the pass).
        # (One recursive call site, for a fast first compile: see engines/__init__.py.) The
        # engine's own full-window nodes are `pv_kernels.fixed_child`'s; full windows reach
        # this node only from the tests and tools that call it directly.
        low = -beta if i <= base else -alpha_eff - 1
        only = _single_open(ex, lb, common, beta) if i >= base else -1
        while True:
            ctx[C_EXCLUDED] = only + 1
            value = search(state, undo, moves, order, ex, ctx, tt, busy, stop, ply + 1,
                           depth - 1 - reduction, low, -alpha_eff)
            if only >= 0 and ctx[C_RX] == only:
                value = ctx[C_RE]  # its value with the duck anywhere but there
            if -value <= alpha_eff or ctx[C_ABORTED] or i < base:
                break
            if reduction > 0:
                reduction = 0
            elif low == -beta:
                break
            else:
                low = -beta
        if busy_slot >= 0 and busy[busy_slot] == state[S_KEY] ^ ctx[C_THREAD_TAG]:
            busy[busy_slot] = 0
        if i < base:
            pop_pass(state, undo)
            rx = ctx[C_RX]
            if not ctx[C_ABORTED] and -value >= beta and \
                    (rx < 0 or state[rx] != 0 or -ctx[C_RE] >= beta):
                # even passing holds beta wherever the duck stands: so does some move
                _close_list(ex, lb)
                return _returns(ctx, beta, -1, beta, -1)
            continue
        pop_move(state, undo)
        if ctx[C_ABORTED]:
            _close_list(ex, lb)
            return _returns(ctx, 0, -1, 0, -1)
        if only >= 0:
            # the move was searched for the one open square only: its worth there
            _raise_listed(ex, lb, only, -value, common, move)
            lowest = _lowest(ex, lb, common)
        else:
            common, common_move, lowest = _absorb_child(state, ex, lb, ctx, value, move,
                                                        common, common_move, lowest)
            _keep_out(ex, lb, excluded)
        if lowest >= beta:
            cut = True
            credit_cut(state, ctx, ply, depth, move)
            break
    if drawn != 0:
        _draw_on(state, ex, lb, drawn, common, common_move)
    if not cut:  # duck squares where no move is legal: the side to move wins
        sq = ex[lb + EX_NEXT + HEAD]
        while sq != HEAD:
            if ex[lb + EX_SCORE + sq] == NO_MOVE:
                ex[lb + EX_SCORE + sq] = MATE - ply
            sq = ex[lb + EX_NEXT + sq]
    score, best = _finish(ex, lb, common, common_move, ctx)
    if excluded < 0:  # a node that left a square out knows less than the table's entries say
        _store(tt, ctx, _replacement(tt, ctx, key, depth), key, ply, depth, best, score,
               ctx[C_RE], ctx[C_RX], ctx[C_RX2], alpha, beta)
    return score
