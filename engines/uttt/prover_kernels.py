"""Numba kernels of the Ultimate Tic-Tac-Toe prover: depth-first proof-number search (df-pn).

One search proves or disproves "the attacker wins" for a fixed attacker (0 = X, 1 = O); a draw
is a disproof, so a second search with the other attacker tells a draw from a loss (see
`prover.py`). A node is an OR node when the attacker is to move, an AND node otherwise.

Numbers: every node has a proof number `pn` and a disproof number `dn` (attacker's view);
proven is (0, INF), disproven (INF, 0). Internally the search uses Nagai's phi/delta form —
phi = pn, delta = dn at OR nodes and the reverse at AND nodes — so that every node minimises
its children's delta and sums their phi. A node is searched under thresholds (th_phi, th_delta)
until phi >= th_phi or delta >= th_delta; the child with the smallest delta gets
    th_phi'   = th_delta - (delta - phi_child)
    th_delta' = min(th_phi, delta_2 * (1 + 1/8) + 1)
where delta_2 is the second smallest child delta (the 1 + epsilon widening of Pawlewicz and
Lew, which lets a child run a little past its sibling and cuts thrashing). Sums of finite
numbers are capped below INF, so INF means "decided" only.

Transposition table: one int64 array of 4-word entries (key, pn, dn, work), grouped in buckets of
4 entries indexed by the low bits of the key. The key is the position's Zobrist key (closed
boards hash by outcome only) XOR ATTACKER_SALT times the attacker, so both searches of a solve
share one table. `work` is the number of nodes ever spent below the entry (always >= 1 in a used
entry, 0 in an empty one); a new entry evicts the bucket's entry with the least work. Nodes
decided statically are never stored: they are recomputed when their parent expands.

Threads: several searches of the same root may share the table, without locks (the key word
is checked against the other three, and a decided entry is never overwritten by undecided
numbers). Proofs stay exact: an entry is decided only by a proof of that position, whichever
thread found it, and the game has no cycles. Each thread counts the searches it has open in its
own row of `busy`; when choosing a child, a thread sees a child the others are in as worse by
its delta once per other thread, and goes elsewhere when that child still leaves progress to
make (`_mid`), so the threads spread over the tree and meet through the table.

Static decisions (`static_value`), in this order:
- the game is over (state[S_RESULT]): proven iff the attacker has won;
- dead lines (flag DEAD_LINES): no global line can still be completed by the attacker — every
  line holds a board the defender won, a drawn board, or an open board in which every local
  line already holds a defender mark — so the attacker cannot win: disproven;
- critical analysis (flag CRITICAL): the side to move S wins at once (`winning_move`): decided
  for S; otherwise, if every move of S is a losing move (below), S loses.
Losing moves (CRITICAL): let P be S's opponent and C the boards critical for P. A move of S in
board B at cell c loses at once when c is a board of C other than B (P is sent there, it is
untouched, and P completes a line), or when board c is closed and C holds a board other than B
(P gets a free move into that board). Only boards other than B count because S's own move may
spoil P's win in B itself. Such moves are pruned from the move list (they are disproven at OR
nodes and proven at AND nodes, so neither kind can change the node's value once S has no win at
once), and a node whose every move is pruned is decided without expanding it.
Children are evaluated statically when their parent expands, so a child decided statically
(for example one where the side to move is left with only losing moves) settles its parent at
once. A child that is not decided and not in the table starts from (1, 1), or with the flag
MOBILITY from its number n of (unpruned) moves: (1, n) when the attacker moves in it, (n, 1)
when the defender does — a node with few replies is cheap to prove or disprove. With the flag
HEURISTIC (df-pn+), both numbers are then scaled by the evaluation (`evaluation.evaluate`, from
the attacker's view): a node that looks good for the attacker starts with a smaller proof number
and a larger disproof number (`initial_numbers`), so the search tries likely proofs first. Only
the order of the search changes: values stay exact, decided only by proofs. With the flag
OPEN_LINES the disproof number is then multiplied by the number of global lines the attacker
can still complete (`open_lines`): a node with many ways left to win is dear to disprove.

Counting: ctx[C_NODES] counts expansions (calls of `_mid` that pass the threshold test). The
search polls the stop array and the node limit every POLL_MASK + 1 nodes and unwinds on either.
Recursion is bounded by the 81 cells: a search from stack row `ply` uses rows ply..81 (and the
move/number buffers' slices ply * 81 ...).

Reading back (`proof_size_kernel`, `choose_child_kernel`): a decided root's proof tree is walked
from the table; where the table has dropped an entry the walk searches again (counted in
ctx[C_NODES], bounded by the node limit), since a proven or disproven value is a fact that any
later search finds again.
"""

import numpy as np
from numba import njit

from mallard.engines.uttt.board import (
    FULL,
    LINES,
    POPCOUNT,
    RESULT_NONE,
    S_DRAWN,
    S_FORCED,
    S_KEY,
    S_O,
    S_RESULT,
    S_SIDE,
    S_WON_X,
    S_X,
    STATE_SIZE,
)
from mallard.engines.uttt.evaluation import evaluate as evaluate_position
from mallard.engines.uttt.kernels import (
    closed_boards,
    copy_state,
    critical_boards,
    generate_moves,
    make_move,
    winning_move,
)

INF = np.int64(1) << 48          # "decided"; finite sums are capped at INF - 1
ATTACKER_SALT = np.int64(0x2545F4914F6CDD1D)
MAX_PLIES = 81                   # a search never goes deeper than the 81 cells
STACK_ROWS = MAX_PLIES + 2

# static values
UNKNOWN, PROVEN, DISPROVEN = 0, 1, 2

# option flags
CRITICAL = 1
DEAD_LINES = 2
MOBILITY = 4
HEURISTIC = 8
OPEN_LINES = 16

# df-pn+ initial numbers (flag HEURISTIC): the evaluation from the attacker's view, in steps of
# EVAL_STEP, scales a new node's proof number down and its disproof number up (and the reverse),
# by a factor of 2 every two steps, within EVAL_FACTOR's range; UNIT is the factor of an even
# position, so that an even node is not cheaper than a lost-looking one by rounding.
EVAL_STEP = 50
EVAL_STEPS = 6
UNIT = 8
EVAL_FACTOR = np.array([max(1, round(UNIT * 2 ** (k / 2))) for k in range(-EVAL_STEPS,
                                                                           EVAL_STEPS + 1)],
                       dtype=np.int64)

# ctx layout
C_NODES, C_NODE_LIMIT, C_ABORTED, C_FLAGS, C_OUT_PN, C_OUT_DN, C_TT_MASK = range(7)
C_WALK_FULL = 7      # the proof walk's visited set overflowed
C_WALK_FAILED = 8    # the proof walk met a node whose value it could not re-establish
C_THREAD = 9         # this search thread's row of `busy` (0 for the first)
CTX_SIZE = 16
POLL_MASK = 4095
EPSILON_SHIFT = 3  # the 1 + epsilon widening: epsilon = 1 / 2**EPSILON_SHIFT

TT_WORDS = 4         # key (XOR the other three: `tt_read`), pn, dn, work
BUCKET = 4
BUSY_SLOTS = 1 << 14  # per thread: open searches by key slot (a path holds at most 81)

GLOBAL_LINES = np.array(LINES, dtype=np.int64)


def _local_line_free():
    # LOCAL_LINE_FREE[mask]: some local line holds none of the cells in `mask` (the opponent's
    # marks), so the player can still win that board
    table = np.zeros(512, dtype=np.uint8)
    for mask in range(512):
        table[mask] = any(line & mask == 0 for line in LINES)
    return table


LOCAL_LINE_FREE = _local_line_free()


# --- the transposition table ------------------------------------------------------------------
@njit(cache=True, nogil=True)
def tt_key(state, attacker):
    return state[S_KEY] ^ (attacker * ATTACKER_SALT)


@njit(cache=True, nogil=True)
def tt_read(tt, bucket_mask, key):
    """(pn, dn, work) of the entry for `key`; work 0 when there is none. Threads write entries
    without locks, so the key word is stored XOR the other three: an entry whose words two
    threads wrote at once fails the check like any other position's."""
    base = (key & bucket_mask) * (BUCKET * TT_WORDS)
    for slot in range(BUCKET):
        entry = base + slot * TT_WORDS
        pn = tt[entry + 1]
        dn = tt[entry + 2]
        work = tt[entry + 3]
        if work != 0 and tt[entry] ^ pn ^ dn ^ work == key:
            return pn, dn, work
    return np.int64(0), np.int64(0), np.int64(0)


@njit(cache=True, nogil=True)
def tt_store(tt, bucket_mask, key, pn, dn, work):
    """Writes (pn, dn, work) for `key`, over its own entry or the bucket's least-worked one.
    A decided entry is never replaced by undecided numbers for the same position: those can
    only be another thread's, computed before the proof or disproof was found."""
    base = (key & bucket_mask) * (BUCKET * TT_WORDS)
    victim = base
    least = tt[base + 3]
    for slot in range(BUCKET):
        entry = base + slot * TT_WORDS
        old_pn = tt[entry + 1]
        old_dn = tt[entry + 2]
        old_work = tt[entry + 3]
        if old_work != 0 and tt[entry] ^ old_pn ^ old_dn ^ old_work == key:
            if (old_pn == 0 or old_dn == 0) and pn != 0 and dn != 0:
                return
            victim = entry
            break
        if old_work < least:
            least = old_work
            victim = entry
    work = max(work, np.int64(1))
    tt[victim] = key ^ pn ^ dn ^ work
    tt[victim + 1] = pn
    tt[victim + 2] = dn
    tt[victim + 3] = work


# --- threads: where the others are ------------------------------------------------------------
@njit(cache=True, nogil=True)
def _mark(busy, thread, key, step):
    """Adds `step` to this thread's count of searches open at `key`'s slot (its own row only:
    no two threads write one word)."""
    busy[thread, key & (busy.shape[1] - 1)] += step


@njit(cache=True, nogil=True)
def _busy_elsewhere(busy, thread, key):
    """How many searches the other threads have open at `key`'s slot."""
    slot = key & (busy.shape[1] - 1)
    count = np.int64(0)
    for other in range(busy.shape[0]):
        if other != thread:
            count += busy[other, slot]
    return count


# --- static analysis --------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def open_lines(state, player):
    """How many global lines `player` may still complete: none of their boards is the
    opponent's, drawn, or open with an opponent's mark on every local line."""
    opponent = 1 - player
    blocked = state[S_WON_X + opponent] | state[S_DRAWN]
    closed = closed_boards(state)
    for board in range(9):
        if not (closed >> board) & 1 and not LOCAL_LINE_FREE[state[S_X + 9 * opponent + board]]:
            blocked |= 1 << board
    count = 0
    for index in range(8):
        if GLOBAL_LINES[index] & blocked == 0:
            count += 1
    return count


@njit(cache=True, nogil=True)
def can_still_win(state, player):
    """False when no global line can still be completed by `player` (sound, not complete)."""
    return open_lines(state, player) > 0


@njit(cache=True, nogil=True)
def losing_cells_in(critical_for_opponent, closed, board):
    """Cells of `board` where the side to move loses at once (see the module docstring)."""
    elsewhere = critical_for_opponent & ~(1 << board)
    if elsewhere == 0:
        return 0
    return elsewhere | closed


@njit(cache=True, nogil=True)
def _safe_cells(state, board, critical_for_opponent, closed):
    """The cells of `board` the side to move may play outside its losing cells (0 when the
    board is closed or not the one it must play in)."""
    forced = state[S_FORCED]
    if (forced >= 0 and board != forced) or (closed >> board) & 1:
        return 0
    empty = FULL & ~(state[S_X + board] | state[S_O + board])
    if critical_for_opponent != 0:
        empty &= ~losing_cells_in(critical_for_opponent, closed, board)
    return empty


@njit(cache=True, nogil=True)
def _count_moves(state, critical_for_opponent):
    """Legal moves of the side to move outside its losing cells (all of them when
    `critical_for_opponent` is 0)."""
    closed = closed_boards(state)
    count = 0
    for board in range(9):
        count += POPCOUNT[_safe_cells(state, board, critical_for_opponent, closed)]
    return count


@njit(cache=True, nogil=True)
def count_node_moves(state, flags):
    """How many moves `node_moves` would give (the mobility that seeds a new node's numbers)."""
    critical = critical_boards(state, 1 - state[S_SIDE]) if flags & CRITICAL else 0
    return _count_moves(state, critical)


@njit(cache=True, nogil=True)
def has_safe_move(state):
    """Whether the side to move has a move outside its losing cells."""
    critical = critical_boards(state, 1 - state[S_SIDE])
    return critical == 0 or _count_moves(state, critical) > 0


@njit(cache=True, nogil=True)
def generate_safe_moves(state, moves):
    """The legal moves outside the side to move's losing cells; returns their number."""
    if state[S_RESULT] != RESULT_NONE:
        return 0
    critical = critical_boards(state, 1 - state[S_SIDE])
    closed = closed_boards(state)
    count = 0
    for board in range(9):
        empty = _safe_cells(state, board, critical, closed)
        for cell in range(9):
            if (empty >> cell) & 1:
                moves[count] = board * 9 + cell
                count += 1
    return count


@njit(cache=True, nogil=True)
def evaluate(state, attacker, flags):
    """(static value, mobility): PROVEN / DISPROVEN when decided without search (module
    docstring), else UNKNOWN and the number of moves the node would expand."""
    result = state[S_RESULT]
    if result != RESULT_NONE:
        return (PROVEN if result == attacker else DISPROVEN), 0  # X_WON == 0, O_WON == 1
    if flags & DEAD_LINES and not can_still_win(state, attacker):
        return DISPROVEN, 0
    side = state[S_SIDE]
    if flags & CRITICAL:
        if winning_move(state) >= 0:
            return (PROVEN if side == attacker else DISPROVEN), 0
        mobility = _count_moves(state, critical_boards(state, 1 - side))
        if mobility == 0:
            return (DISPROVEN if side == attacker else PROVEN), 0
        return UNKNOWN, mobility
    return UNKNOWN, _count_moves(state, 0)


@njit(cache=True, nogil=True)
def static_value(state, attacker, flags):
    """PROVEN / DISPROVEN when decided without search, else UNKNOWN."""
    return evaluate(state, attacker, flags)[0]


@njit(cache=True, nogil=True)
def node_moves(state, moves, flags):
    """The moves a node expands: every legal move, or only the safe ones under CRITICAL."""
    if flags & CRITICAL:
        return generate_safe_moves(state, moves)
    return generate_moves(state, moves)


@njit(cache=True, nogil=True)
def initial_numbers(child, attacker, mobility, flags, pns, dns, slot):
    """pns[slot], dns[slot] of a new undecided node (module docstring: MOBILITY, HEURISTIC)."""
    pn = np.int64(1)
    dn = np.int64(1)
    if flags & MOBILITY:
        if child[S_SIDE] == attacker:
            dn = mobility
        else:
            pn = mobility
    if flags & HEURISTIC:
        value = evaluate_position(child)
        if child[S_SIDE] != attacker:
            value = -value
        step = min(EVAL_STEPS, max(-EVAL_STEPS, value // EVAL_STEP))
        pn *= EVAL_FACTOR[EVAL_STEPS - step]
        dn *= EVAL_FACTOR[EVAL_STEPS + step]
    if flags & OPEN_LINES:
        dn *= max(1, open_lines(child, attacker))  # 0 only without DEAD_LINES: not a disproof
    pns[slot] = pn
    dns[slot] = dn


# --- df-pn --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _widened(delta_2):
    if delta_2 >= INF:
        return INF
    return delta_2 + (delta_2 >> EPSILON_SHIFT) + 1


@njit(cache=True, nogil=True)
def _finish(ctx, is_or, phi, delta):
    if is_or:
        ctx[C_OUT_PN] = phi
        ctx[C_OUT_DN] = delta
    else:
        ctx[C_OUT_PN] = delta
        ctx[C_OUT_DN] = phi


@njit(cache=True, nogil=True)
def _mid(stack, ply, attacker, th_phi, th_delta, ctx, tt, stop, moves, keys, pns, dns, busy):
    """Searches stack[ply] until phi >= th_phi or delta >= th_delta (or the search aborts);
    leaves the node's (pn, dn) in ctx[C_OUT_PN], ctx[C_OUT_DN] and in the table.
    keys[i] == 0 marks a child decided statically (its numbers are then in pns/dns)."""
    state = stack[ply]
    bucket_mask = ctx[C_TT_MASK]
    flags = ctx[C_FLAGS]
    key = tt_key(state, attacker)
    is_or = state[S_SIDE] == attacker
    pn, dn, old_work = tt_read(tt, bucket_mask, key)
    if old_work != 0:
        phi = pn if is_or else dn
        delta = dn if is_or else pn
        if phi >= th_phi or delta >= th_delta or ctx[C_ABORTED] != 0:
            _finish(ctx, is_or, phi, delta)
            return 0
    elif ctx[C_ABORTED] != 0:
        _finish(ctx, is_or, np.int64(1), np.int64(1))
        return 0
    ctx[C_NODES] += 1
    if (ctx[C_NODES] & POLL_MASK) == 0:
        if stop[0] != 0 or (ctx[C_NODE_LIMIT] > 0 and ctx[C_NODES] >= ctx[C_NODE_LIMIT]):
            ctx[C_ABORTED] = 1
    first_node = ctx[C_NODES]
    thread = ctx[C_THREAD]
    sharing = busy.shape[0] > 1
    _mark(busy, thread, key, 1)

    # expand: every child is evaluated statically; a decisive one settles the node at once
    base = ply * 81
    count = node_moves(state, moves[base:base + 81], flags)
    child = stack[ply + 1]
    decided = False
    for index in range(count):
        copy_state(child, state)
        make_move(child, moves[base + index])
        value, mobility = evaluate(child, attacker, flags)
        slot = base + index
        if value == PROVEN:
            keys[slot] = 0
            pns[slot] = 0
            dns[slot] = INF
            if is_or:
                decided = True
                break
        elif value == DISPROVEN:
            keys[slot] = 0
            pns[slot] = INF
            dns[slot] = 0
            if not is_or:
                decided = True
                break
        else:
            keys[slot] = tt_key(child, attacker)
            initial_numbers(child, attacker, mobility, flags, pns, dns, slot)
    if decided or count == 0:
        # a decisive child; or no move at all, which cannot happen here (`static_value` decides
        # a node left without safe moves before it is searched) and would mean a lost node
        attacker_wins = decided == is_or
        pn = np.int64(0) if attacker_wins else INF
        dn = INF if attacker_wins else np.int64(0)
        tt_store(tt, bucket_mask, key, pn, dn, old_work + ctx[C_NODES] - first_node + 1)
        _mark(busy, thread, key, -1)
        ctx[C_OUT_PN] = pn
        ctx[C_OUT_DN] = dn
        return 0

    phi = np.int64(0)
    delta = np.int64(0)
    while True:
        # the node's numbers from its children (re-read from the table: transpositions, and
        # the other threads' work)
        phi = INF
        delta = np.int64(0)
        delta_saturated = False
        best = -1
        best_phi = np.int64(0)
        delta_2 = INF
        # with other threads: the child to search when a child they are in counts as worse,
        # by its own delta per thread (so they spread over equally good children)
        pick = -1
        pick_delta = INF
        pick_delta_2 = INF
        for index in range(count):
            slot = base + index
            child_key = keys[slot]
            if child_key != 0:
                found_pn, found_dn, found_work = tt_read(tt, bucket_mask, child_key)
                if found_work != 0:
                    pns[slot] = found_pn
                    dns[slot] = found_dn
            child_delta = pns[slot] if is_or else dns[slot]
            child_phi = dns[slot] if is_or else pns[slot]
            if child_phi >= INF:
                delta_saturated = True
            else:
                delta += child_phi
            if child_delta < phi:
                delta_2 = phi
                phi = child_delta
                best = index
                best_phi = child_phi
            elif child_delta < delta_2:
                delta_2 = child_delta
            if sharing:
                seen = child_delta
                if child_key != 0 and child_delta < INF:
                    others = _busy_elsewhere(busy, thread, child_key)
                    seen = min(INF - 1, child_delta + others * max(child_delta, np.int64(1)))
                if seen < pick_delta:
                    pick_delta_2 = pick_delta
                    pick_delta = seen
                    pick = index
                elif seen < pick_delta_2:
                    pick_delta_2 = seen
        if delta_saturated:
            delta = INF
        elif delta >= INF:
            delta = INF - 1
        if phi >= th_phi or delta >= th_delta or ctx[C_ABORTED] != 0:
            break
        child_th_delta = min(th_phi, _widened(delta_2))
        if sharing and pick != best:
            # the other threads' child stays theirs if this one can still make progress in
            # another: its own delta must be below the threshold it would get
            pick_th_delta = min(th_phi, _widened(pick_delta_2))
            slot = base + pick
            if (pns[slot] if is_or else dns[slot]) < pick_th_delta:
                best = pick
                best_phi = dns[slot] if is_or else pns[slot]
                child_th_delta = pick_th_delta
        child_th_phi = th_delta - (delta - best_phi)
        copy_state(child, state)
        make_move(child, moves[base + best])
        _mid(stack, ply + 1, attacker, child_th_phi, child_th_delta, ctx, tt, stop, moves, keys,
             pns, dns, busy)
        # the child's own result, in case the table could not keep it
        slot = base + best
        pns[slot] = ctx[C_OUT_PN]
        dns[slot] = ctx[C_OUT_DN]
    pn = phi if is_or else delta
    dn = delta if is_or else phi
    tt_store(tt, bucket_mask, key, pn, dn, old_work + ctx[C_NODES] - first_node + 1)
    _mark(busy, thread, key, -1)
    _finish(ctx, is_or, phi, delta)
    return 0


@njit(cache=True, nogil=True)
def search_at(stack, ply, attacker, ctx, tt, stop, moves, keys, pns, dns, busy):
    """Proves or disproves "attacker wins" from stack[ply]: PROVEN, DISPROVEN or UNKNOWN
    (stopped, or over the node limit). `busy` holds one row per search thread sharing `tt`
    (ctx[C_THREAD] is this one's): the counts of searches each has open, by key slot."""
    value = static_value(stack[ply], attacker, ctx[C_FLAGS])
    if value != UNKNOWN:
        return value
    _mid(stack, ply, attacker, INF, INF, ctx, tt, stop, moves, keys, pns, dns, busy)
    if ctx[C_OUT_PN] == 0:
        return PROVEN
    if ctx[C_OUT_DN] == 0:
        return DISPROVEN
    return UNKNOWN


@njit(cache=True, nogil=True)
def prove_kernel(stack, attacker, ctx, tt, stop, moves, keys, pns, dns, busy):
    """`search_at` from the root row stack[0]."""
    return search_at(stack, np.int64(0), attacker, ctx, tt, stop, moves, keys, pns, dns, busy)


# --- reading the result back ------------------------------------------------------------------
@njit(cache=True, nogil=True)
def entry_work(state, attacker, ctx, tt):
    """The work stored for a position (0 when it has no entry)."""
    return tt_read(tt, ctx[C_TT_MASK], tt_key(state, attacker))[2]


@njit(cache=True, nogil=True)
def _visit(visited, key):
    """Adds `key` to the open-addressing set; returns 1 if new, 0 if present, -1 when full."""
    size = visited.shape[0]
    mask = size - 1
    index = (key ^ (key >> 31)) & mask
    for _ in range(size >> 1):
        if visited[index] == key:
            return 0
        if visited[index] == 0:
            visited[index] = key
            return 1
        index = (index + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def _choose_child(stack, ply, attacker, target, ctx, tt, stop, moves, keys, pns, dns,
                  walk_moves, count):
    """Index (into walk_moves[ply * 81:]) of a child of stack[ply] whose value is `target`:
    a statically decided one first, then the table's least-worked one, else re-searched in
    turn (which may cost nodes). -1 when none is found."""
    state = stack[ply]
    child = stack[ply + 1]
    base = ply * 81
    best = -1
    best_work = INF
    for index in range(count):
        copy_state(child, state)
        make_move(child, walk_moves[base + index])
        if static_value(child, attacker, ctx[C_FLAGS]) == target:
            return index
        pn, dn, work = tt_read(tt, ctx[C_TT_MASK], tt_key(child, attacker))
        if work != 0:
            wanted = pn == 0 if target == PROVEN else dn == 0
            if wanted and work < best_work:
                best = index
                best_work = work
    if best >= 0:
        return best
    alone = np.zeros((1, 1), dtype=np.int64)  # the walk runs after the search, on one thread
    for index in range(count):
        copy_state(child, state)
        make_move(child, walk_moves[base + index])
        if search_at(stack, ply + 1, attacker, ctx, tt, stop, moves, keys, pns, dns,
                     alone) == target:
            return index
        if ctx[C_ABORTED] != 0:
            return -1
    return -1


@njit(cache=True, nogil=True)
def _walk(stack, ply, attacker, target, ctx, tt, stop, moves, keys, pns, dns, walk_moves,
          visited):
    """Nodes of the proof (target PROVEN) or disproof (DISPROVEN) tree below stack[ply], each
    transposition counted once: one child where the node's owner chooses, every unpruned child
    where the other side does; a statically decided node is a leaf."""
    state = stack[ply]
    fresh = _visit(visited, tt_key(state, attacker))
    if fresh == 0:
        return np.int64(0)
    if fresh < 0:
        ctx[C_WALK_FULL] = 1
        return np.int64(0)
    flags = ctx[C_FLAGS]
    value = static_value(state, attacker, flags)
    if value != UNKNOWN:
        if value != target:
            ctx[C_WALK_FAILED] = 1
        return np.int64(1)
    if ctx[C_ABORTED] != 0 or ctx[C_WALK_FAILED] != 0 or ctx[C_WALK_FULL] != 0:
        return np.int64(0)
    base = ply * 81
    count = node_moves(state, walk_moves[base:base + 81], flags)
    is_or = state[S_SIDE] == attacker
    one_child = is_or == (target == PROVEN)
    total = np.int64(1)
    child = stack[ply + 1]
    if one_child:
        index = _choose_child(stack, ply, attacker, target, ctx, tt, stop, moves, keys, pns, dns,
                              walk_moves, count)
        if index < 0:
            ctx[C_WALK_FAILED] = 1
            return total
        copy_state(child, state)
        make_move(child, walk_moves[base + index])
        return total + _walk(stack, ply + 1, attacker, target, ctx, tt, stop, moves, keys, pns,
                             dns, walk_moves, visited)
    for index in range(count):
        copy_state(child, state)
        make_move(child, walk_moves[base + index])
        total += _walk(stack, ply + 1, attacker, target, ctx, tt, stop, moves, keys, pns, dns,
                       walk_moves, visited)
        if ctx[C_WALK_FAILED] != 0 or ctx[C_WALK_FULL] != 0 or ctx[C_ABORTED] != 0:
            break
    return total


@njit(cache=True, nogil=True)
def proof_size_kernel(stack, attacker, target, ctx, tt, stop, moves, keys, pns, dns, walk_moves,
                      visited):
    """Size of the (dis)proof tree of the root row stack[0]; see `_walk`."""
    ctx[C_WALK_FULL] = 0
    ctx[C_WALK_FAILED] = 0
    return _walk(stack, np.int64(0), attacker, target, ctx, tt, stop, moves, keys, pns, dns,
                 walk_moves, visited)


@njit(cache=True, nogil=True)
def choose_child_kernel(stack, attacker, target, ctx, tt, stop, moves, keys, pns, dns,
                        walk_moves, candidates, count):
    """`_choose_child` at the root row over the `count` moves in `candidates`; returns the
    chosen move or -1."""
    for index in range(count):
        walk_moves[index] = candidates[index]
    index = _choose_child(stack, np.int64(0), attacker, target, ctx, tt, stop, moves, keys, pns,
                          dns, walk_moves, count)
    return walk_moves[index] if index >= 0 else np.int64(-1)


def new_buffers():
    """(stack, moves, keys, pns, dns, walk_moves) for one search thread."""
    stack = np.zeros((STACK_ROWS, STATE_SIZE), dtype=np.int64)
    cells = STACK_ROWS * 81
    return (stack, np.zeros(cells, dtype=np.int64), np.zeros(cells, dtype=np.int64),
            np.zeros(cells, dtype=np.int64), np.zeros(cells, dtype=np.int64),
            np.zeros(cells, dtype=np.int64))


__all__ = ["INF", "UNKNOWN", "PROVEN", "DISPROVEN", "CRITICAL", "DEAD_LINES", "MOBILITY",
           "HEURISTIC", "OPEN_LINES", "open_lines",
           "evaluate", "static_value", "count_node_moves",
           "can_still_win", "has_safe_move", "generate_safe_moves", "node_moves", "search_at",
           "prove_kernel", "entry_work", "proof_size_kernel",
           "choose_child_kernel", "new_buffers"]
