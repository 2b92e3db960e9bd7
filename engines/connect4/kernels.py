"""Numba kernels of the Connect Four solver: bitboard operations, negamax, root solve, analysis.

Bit layout (W columns, H rows, W*(H+1) <= 64): column c owns bits c*(H+1) .. c*(H+1)+H-1 from the
bottom up; bit c*(H+1)+H is a sentinel that is always 0, so shifted alignments never wrap from one
column into the next. A position is (`cur`, `mask`): the stones of the side to move and all
stones, both uint64. `cur + mask` is a unique key (the additions never carry across columns).

Scores (Pascal Pons' convention) are from the side to move: a side winning with the move played
after `n` stones scores (W*H + 1 - n) // 2, a loss is the negation, a draw 0.

All state travels in arrays, because numba passes every array field on every recursive
call: `ctx` (int64) holds the counters, the options, the stop flag, the board geometry (bit masks
stored as int64 bit patterns) and the per-ply move-order buffer (C_* indices); `tt` (uint64) is N
buckets of two entries (TT_BUCKET_WORDS words, half a cache line); an entry holds the key XOR the
data word, then the data `generation << 32 | empty << 16 | (lower + 128) << 8 | (upper + 128)`
(`empty`: the cells left, the size of the subtree that gave the bounds), so bumping the
generation empties the table in O(1). A bucket's first entry keeps the position of the larger
subtree of the running search, the second takes any other (`tt_store`): with one entry a slot,
the leaves of a long solve overwrote the bounds near its root, which a second thread made worse.
Threads share one table without locks (`Solver` with threads > 1): each word is written whole,
and an entry whose two words come from different writes fails the XOR check and reads as empty,
so a probe never returns another position's bounds. `busy` (uint64, BUSY_SLOTS words, shared
the same way) holds the keys of positions some thread is searching, when ctx[C_BUSY_MASK] is
set: a child found there is searched after its siblings (a hint only: a lost or stale mark
costs time, never correctness). `book` (uint64) holds n sorted canonical keys followed by their
n scores biased by +128. Searches poll ctx[C_STOP] every 4096 nodes and unwind with
ctx[C_ABORTED] = 1.
"""

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

U1 = np.uint64(1)
U0 = np.uint64(0)

# ctx indices: counters and options
C_NODES, C_ABORTED, C_NODE_LIMIT, C_GEN, C_BOOK_DEPTHS, C_ETC_EMPTY, C_PVS = 0, 1, 2, 3, 4, 5, 6
C_TT_BITS, C_STOP, C_BOOK_SIZE, C_BUSY_MASK = 7, 8, 9, 10
# ctx indices: geometry
C_W, C_H, C_BOTTOM, C_BOARD, C_AREA, C_FOUR_WIDE = 16, 17, 18, 19, 20, 21
C_ORDER = 32       # W entries: columns from the centre outwards
C_COLUMN = 64      # W entries: mask of every cell of column c
C_MOVE_BUFFER = 96  # 2 * (area + 1) * W entries: per ply the sorted moves,
                    # then each column's threats

ABORT_POLL_MASK = 4095
# threads defer a child another thread is searching only with this many empty cells or more:
# nearer the leaves a subtree costs less than the bookkeeping
BUSY_MIN_EMPTY = 12
BUSY_SLOTS = 1 << 14  # the shared table of positions being searched (`busy`)
UNKNOWN = -1000  # analysis value of a full column; book miss
UNKNOWN_THREATS = np.uint64(0xFFFFFFFFFFFFFFFF)  # winning cells never include sentinel bits
NEVER = 1 << 30


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (one machine instruction)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Hint the CPU to load array[index] into the cache (LLVM's prefetch; no effect on results)."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, function_type, "llvm.prefetch.p0")
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


def centre_order(width: int) -> list[int]:
    """Columns from the centre outwards, the left one first on ties (3 2 4 1 5 0 6 for 7)."""
    return sorted(range(width), key=lambda c: (abs(2 * c - (width - 1)), c))


def _as_int64(bits: int) -> int:
    return bits - (1 << 64) if bits >= 1 << 63 else bits


def make_context(width: int, height: int) -> np.ndarray:
    """A fresh `ctx` array for a width x height board (generation 1, no book, no limits)."""
    if width < 1 or height < 1 or width * (height + 1) > 64:
        raise ValueError(f"board {width}x{height} does not fit: width*(height+1) must be <= 64")
    area = width * height
    ctx = np.zeros(C_MOVE_BUFFER + 2 * (area + 1) * width, dtype=np.int64)
    column_cells = (1 << height) - 1
    bottom = board = 0
    for c in range(width):
        base = c * (height + 1)
        bottom |= 1 << base
        board |= column_cells << base
        ctx[C_COLUMN + c] = _as_int64(column_cells << base)
    ctx[C_W], ctx[C_H], ctx[C_AREA] = width, height, area
    ctx[C_BOTTOM], ctx[C_BOARD] = _as_int64(bottom), _as_int64(board)
    ctx[C_FOUR_WIDE] = 1 if width >= 4 else 0
    for i, c in enumerate(centre_order(width)):
        ctx[C_ORDER + i] = c
    ctx[C_GEN] = 1
    ctx[C_BOOK_DEPTHS] = 0  # bit d set: the book holds positions with d stones
    ctx[C_ETC_EMPTY] = NEVER
    return ctx


@njit(cache=True, nogil=True)
def _bits(ctx, index):
    return np.uint64(ctx[index])


@njit(cache=True, nogil=True)
def _aligned(pos, shift):
    """Cells that complete four with three stones of `pos` along a line of step `shift`."""
    s2 = shift + shift
    s3 = s2 + shift
    r = (pos << shift) & (pos << s2) & (pos << s3)
    r |= (pos >> shift) & (pos >> s2) & (pos >> s3)
    p = (pos << shift) & (pos << s2)
    r |= p & (pos >> shift)
    p = (pos >> shift) & (pos >> s2)
    r |= p & (pos << shift)
    return r


@njit(cache=True, nogil=True)
def winning_cells(pos, mask, ctx):
    """Empty cells (playable or not) where one stone would make four for the owner of `pos`."""
    r = (pos << U1) & (pos << np.uint64(2)) & (pos << np.uint64(3))
    if ctx[C_FOUR_WIDE]:
        h = np.uint64(ctx[C_H])
        r |= _aligned(pos, h + U1)
        r |= _aligned(pos, h)
        r |= _aligned(pos, h + np.uint64(2))
    return r & (_bits(ctx, C_BOARD) ^ mask)


@njit(cache=True, nogil=True)
def _line_of_four(free, shift):
    return (free & (free >> shift) & (free >> (shift + shift))
            & (free >> (shift + shift + shift))) != U0


@njit(cache=True, nogil=True)
def can_still_connect(free, ctx):
    """Whether the cells in `free` (empty or own stones) still contain a line of four."""
    if _line_of_four(free, U1):
        return True
    if ctx[C_FOUR_WIDE]:
        h = np.uint64(ctx[C_H])
        return (_line_of_four(free, h + U1) or _line_of_four(free, h)
                or _line_of_four(free, h + np.uint64(2)))
    return False


@njit(cache=True, nogil=True)
def playable(mask, ctx):
    return (mask + _bits(ctx, C_BOTTOM)) & _bits(ctx, C_BOARD)


@njit(cache=True, nogil=True)
def can_win_next(cur, mask, ctx):
    return (winning_cells(cur, mask, ctx) & playable(mask, ctx)) != U0


@njit(cache=True, nogil=True)
def non_losing_moves(cur, mask, ctx):
    """Playable cells that do not let the opponent win at once (assumes no immediate win)."""
    return non_losing_given(mask, winning_cells(cur ^ mask, mask, ctx), ctx)


@njit(cache=True, nogil=True)
def non_losing_given(mask, threats, ctx):
    """`non_losing_moves` when the opponent's winning cells are already known."""
    possible = playable(mask, ctx)
    forced = possible & threats
    if forced != U0:
        if (forced & (forced - U1)) != U0:
            return U0
        possible = forced
    return possible & ~(threats >> U1)


@njit(cache=True, nogil=True)
def mirror_key(key, ctx):
    """The key of the left-right mirrored position."""
    w = ctx[C_W]
    h1 = np.uint64(ctx[C_H] + 1)
    column = (U1 << h1) - U1
    out = U0
    for c in range(w):
        bits = (key >> (np.uint64(c) * h1)) & column
        out |= bits << (np.uint64(w - 1 - c) * h1)
    return out


@njit(cache=True, nogil=True)
def canonical_key(key, ctx):
    m = mirror_key(key, ctx)
    return m if m < key else key


@njit(cache=True, nogil=True)
def book_lookup(key, book, ctx):
    """Score stored for a canonical key, or UNKNOWN."""
    n = ctx[C_BOOK_SIZE]
    lo = 0
    hi = n - 1
    while lo <= hi:
        mid = (lo + hi) >> 1
        k = book[mid]
        if k == key:
            return np.int64(book[n + mid]) - 128
        if k < key:
            lo = mid + 1
        else:
            hi = mid - 1
    return UNKNOWN


TT_BUCKET_WORDS = 4  # a bucket: two entries of (key ^ data, data)
EMPTY_SHIFT = 16    # where the data word keeps the entry's empty cells


@njit(cache=True, nogil=True)
def _slot(key, bits):
    """The bucket of `key` among the table's 2**bits buckets (Fibonacci hashing)."""
    return np.int64((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits))


@njit(cache=True, nogil=True)
def _entry_of(tt, bucket, key, ctx):
    """Where in `bucket` (its first word) `key` has an entry of this generation; -1 if none."""
    for at in range(bucket, bucket + TT_BUCKET_WORDS, 2):
        data = tt[at + 1]
        if tt[at] ^ data == key and np.int64(data >> np.uint64(32)) == ctx[C_GEN]:
            return at
    return -1


@njit(cache=True, nogil=True)
def _bounds(data):
    """(lower, upper) of an entry's data word."""
    return (np.int64((data >> np.uint64(8)) & np.uint64(255)) - 128,
            np.int64(data & np.uint64(255)) - 128)


@njit(cache=True, nogil=True)
def tt_probe(tt, key, ctx):
    """(lower, upper) bounds stored for `key` in this generation, else (-128, 127)."""
    at = _entry_of(tt, _slot(key, ctx[C_TT_BITS]) * TT_BUCKET_WORDS, key, ctx)
    if at < 0:
        return -128, 127
    return _bounds(tt[at + 1])


@njit(cache=True, nogil=True)
def tt_store(tt, key, lower, upper, empty, ctx):
    """Store bounds for `key`, a position with `empty` cells left, keeping the tighter of old and
    new when the key is already there. A new position takes the bucket's first entry when that
    holds an earlier search's or a subtree no larger than its own, and the entry there moves to
    the second; otherwise it takes the second."""
    bucket = _slot(key, ctx[C_TT_BITS]) * TT_BUCKET_WORDS
    at = _entry_of(tt, bucket, key, ctx)
    if at >= 0:
        old_lower, old_upper = _bounds(tt[at + 1])
        if old_lower > lower:
            lower = old_lower
        if old_upper < upper:
            upper = old_upper
    else:
        first = tt[bucket + 1]
        at = bucket + 2
        if np.int64(first >> np.uint64(32)) != ctx[C_GEN] or \
                np.int64((first >> np.uint64(EMPTY_SHIFT)) & np.uint64(255)) <= empty:
            tt[bucket + 2] = tt[bucket]
            tt[bucket + 3] = first
            at = bucket
    data = ((np.uint64(ctx[C_GEN]) << np.uint64(32)) | (np.uint64(empty) << np.uint64(EMPTY_SHIFT))
            | (np.uint64(lower + 128) << np.uint64(8)) | np.uint64(upper + 128))
    tt[at] = key ^ data
    tt[at + 1] = data


@njit(cache=True, nogil=True)
def move_priority(threats, opponent_threats):
    """Ordering score of a move: the winning cells the mover has after it (`threats`), not
    counting those right above an opponent's winning cell, which can never be used: whoever fills
    the cell below either loses or lets the opponent block on top. (Measured: 7-10% fewer nodes on
    every test set than Pons' plain count; the PVS client's extra weight on same-parity threats
    measured worse than the plain count.)"""
    return np.int64(popcount(threats & ~(opponent_threats << U1)))


# Without numba's reference counting: negamax allocates nothing, and counting the arrays on every
# call was costly (with the helpers inlined, dropping it took us from 5.9 to 7-8 Mnodes/s).
@njit(cache=True, nogil=True, _nrt=False)
def negamax(cur, mask, moves, alpha, beta, ctx, tt, book, busy, opponent_threats):
    """Score of a position where the side to move cannot win at once, within (alpha, beta).

    `opponent_threats` is the opponent's `winning_cells` when the caller knows it, else
    UNKNOWN_THREATS. Fail-soft at cut-offs: a returned value >= beta is a lower bound, <= alpha an
    upper bound.
    """
    ctx[C_NODES] += 1
    if (ctx[C_NODES] & ABORT_POLL_MASK) == 0:
        if ctx[C_STOP] != 0 or (ctx[C_NODE_LIMIT] > 0 and ctx[C_NODES] >= ctx[C_NODE_LIMIT]):
            ctx[C_ABORTED] = 1
    if ctx[C_ABORTED] != 0:
        return 0
    area = ctx[C_AREA]
    if opponent_threats == UNKNOWN_THREATS:
        opponent_threats = winning_cells(cur ^ mask, mask, ctx)
    candidates = non_losing_given(mask, opponent_threats, ctx)
    if candidates == U0:
        return -((area - moves) // 2)
    if moves >= area - 2:
        return 0
    lowest = -((area - 2 - moves) // 2)
    if alpha < lowest:
        alpha = lowest
        if alpha >= beta:
            return alpha
    highest = (area - 1 - moves) // 2
    if beta > highest:
        beta = highest
        if alpha >= beta:
            return beta
    # A side with no line of four left free of the other's stones can never win.
    if alpha < 0 and not can_still_connect(_bits(ctx, C_BOARD) & ~cur, ctx):
        alpha = 0
        if alpha >= beta:
            return alpha
    if beta > 0 and not can_still_connect(_bits(ctx, C_BOARD) & ~(cur ^ mask), ctx):
        beta = 0
        if alpha >= beta:
            return beta
    key = cur + mask
    lower, upper = tt_probe(tt, key, ctx)
    if lower > alpha:
        alpha = lower
        if alpha >= beta:
            return alpha
    if upper < beta:
        beta = upper
        if alpha >= beta:
            return beta
    if (ctx[C_BOOK_DEPTHS] >> moves) & 1:
        value = book_lookup(canonical_key(key, ctx), book, ctx)
        if value != UNKNOWN:
            return value

    width = ctx[C_W]
    opponent = cur ^ mask
    original_alpha = alpha
    # Fetch the children's table slots early: the ETC checks below and the children's own
    # probes then find them in the cache.
    bits = ctx[C_TT_BITS]
    for i in range(width):
        move = candidates & _bits(ctx, C_COLUMN + i)
        if move != U0:
            prefetch(tt, _slot(opponent + (mask | move), bits) * TT_BUCKET_WORDS)
    use_etc = area - moves >= ctx[C_ETC_EMPTY]
    # threads (ABDADA): a child another thread is searching waits for a second pass
    busy_mask = ctx[C_BUSY_MASK] if area - moves >= BUSY_MIN_EMPTY else 0
    row = C_MOVE_BUFFER + moves * width
    row_threats = C_MOVE_BUFFER + (area + 1 + moves) * width
    single = (candidates & (candidates - U1)) == U0
    count = 0
    for i in range(width):
        column = ctx[C_ORDER + i]
        move = candidates & _bits(ctx, C_COLUMN + column)
        if move == U0:
            continue
        priority = 0
        if not single:
            threats = winning_cells(cur | move, mask | move, ctx)
            ctx[row_threats + column] = np.int64(threats)
            priority = move_priority(threats, opponent_threats)
        packed = (priority << 12) | ((width - i) << 6) | column
        j = count
        while j > 0 and ctx[row + j - 1] < packed:
            ctx[row + j] = ctx[row + j - 1]
            j -= 1
        ctx[row + j] = packed
        count += 1

    if use_etc:
        for n in range(count):
            column = ctx[row + n] & 63
            _, child_upper = tt_probe(
                tt, opponent + (mask | (candidates & _bits(ctx, C_COLUMN + column))), ctx)
            if -child_upper >= beta:
                tt_store(tt, key, -child_upper, 127, area - moves, ctx)
                return -child_upper

    deferred = 0
    for step in range(2 * count if busy_mask != 0 else count):
        n = step if step < count else step - count
        if step >= count and (deferred >> n) & 1 == 0:
            continue
        column = ctx[row + n] & 63
        move = candidates & _bits(ctx, C_COLUMN + column)
        child_mask = mask | move
        child_slot = 0
        if busy_mask != 0:
            child_key = opponent + child_mask
            child_slot = np.int64(child_key) & busy_mask
            if step < count and n > 0 and busy[child_slot] == child_key:
                deferred |= 1 << n
                continue
            busy[child_slot] = child_key
        known = UNKNOWN_THREATS if single else np.uint64(ctx[row_threats + column])
        # PVS: after the first move a null window, searched again in full when it fails high
        # inside (alpha, beta).
        # (One recursive call site, for a fast first compile: see engines/__init__.py.)
        null_window = n > 0 and ctx[C_PVS] != 0 and beta - alpha > 1
        child_alpha = -alpha - 1 if null_window else -beta
        child_beta = -alpha
        while True:
            score = -negamax(opponent, child_mask, moves + 1, child_alpha, child_beta, ctx, tt,
                             book, busy, known)
            if not null_window or score <= alpha or score >= beta:
                break
            null_window = False
            child_alpha = -beta
            child_beta = -score
        if busy_mask != 0 and busy[child_slot] == opponent + child_mask:
            busy[child_slot] = U0
        if ctx[C_ABORTED] != 0:
            return 0
        if score >= beta:
            tt_store(tt, key, score, 127, area - moves, ctx)
            return score
        if score > alpha:
            alpha = score
    if alpha > original_alpha:
        tt_store(tt, key, alpha, alpha, area - moves, ctx)
    else:
        tt_store(tt, key, -128, alpha, area - moves, ctx)
    return alpha


@njit(cache=True, nogil=True)
def _half_toward_zero(x):
    return x // 2 if x >= 0 else -((-x) // 2)


@njit(cache=True, nogil=True)
def next_probe(lo, hi):
    """The null-window test value that narrows [lo, hi]: the middle, pulled towards zero so that
    the sign is settled first."""
    med = lo + (hi - lo) // 2
    if med <= 0 and _half_toward_zero(lo) < med:
        med = _half_toward_zero(lo)
    elif med >= 0 and _half_toward_zero(hi) > med:
        med = _half_toward_zero(hi)
    return med


@njit(cache=True, nogil=True)
def score_range(cur, mask, moves, ctx):
    """(lowest, highest) score of a non-terminal position; both the score of the immediate win
    when the side to move has one."""
    area = ctx[C_AREA]
    if can_win_next(cur, mask, ctx):
        win = (area + 1 - moves) // 2
        return win, win
    return -((area - moves) // 2), (area + 1 - moves) // 2


@njit(cache=True, nogil=True)
def solve_position(cur, mask, moves, weak, ctx, tt, book, busy):
    """Exact score (weak: a value whose sign is exact) of a non-terminal position.

    Narrows [min, max] with null-window searches that probe near zero first (Pons' scheme).
    With ctx[C_PVS] set it searches the full window once instead.
    """
    lo, hi = score_range(cur, mask, moves, ctx)
    if lo == hi:
        return lo
    if weak:
        lo = -1
        hi = 1
    if ctx[C_PVS] != 0 and not weak:
        return negamax(cur, mask, moves, lo, hi, ctx, tt, book, busy, UNKNOWN_THREATS)
    while lo < hi:
        med = next_probe(lo, hi)
        r = negamax(cur, mask, moves, med, med + 1, ctx, tt, book, busy, UNKNOWN_THREATS)
        if ctx[C_ABORTED] != 0:
            return 0
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


@njit(cache=True, nogil=True)
def analyze_position(cur, mask, moves, weak, ctx, tt, book, busy, out):
    """Score of each column into `out` (UNKNOWN for a full column); stops early when aborted."""
    area = ctx[C_AREA]
    width = ctx[C_W]
    possible = playable(mask, ctx)
    wins = winning_cells(cur, mask, ctx)
    for c in range(width):
        out[c] = UNKNOWN
    for c in range(width):
        move = possible & _bits(ctx, C_COLUMN + c)
        if move == U0:
            continue
        if (move & wins) != U0:
            out[c] = (area + 1 - moves) // 2
        elif moves + 1 >= area:
            out[c] = 0
        else:
            out[c] = -solve_position(cur ^ mask, mask | move, moves + 1, weak, ctx, tt, book,
                                     busy)
        if ctx[C_ABORTED] != 0:
            return
