"""The Duck Chess engine behind the common interface: the exception search under the search driver.

`DuckSearcher.search` runs the driver's iterative deepening (`mallard.engines.driver.deepen`:
aspiration windows, MultiPV, the watchdog and the reports) over `DuckRoot`, the root of
`pv_kernels.search_root` from one position. On a clock it manages its time
(`mallard.engines.timeman.TimeUse`): it stops deepening early when the best move is stable and
thinks longer, up to `MAX_STRETCH` budgets, when it changes or the score falls.

The move played carries the duck square the root search chose (each root move's tag, see
`search_kernels`); when every free square is as good, the duck goes where it blocks most of the
opponent's replies. The PV is read from the transposition table, each move with its duck, and is
cut where it stops being legal. `limits.searchmoves` restricts the root's piece moves (and the
duck, when the chosen square is not among the listed ones).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Optional

import numpy as np

from mallard.engines.base import Limits, Score, Searcher, SearchInfo, SearchResult
from mallard.engines.driver import RootSearch, deepen
from mallard.engines.duck import kernels as K
from mallard.engines.duck import pv_kernels as PV
from mallard.engines.duck import search_kernels as SK
from mallard.engines.duck.board import (
    MAX_MOVES,
    MAX_PLY,
    PIECE_MOVE_MASK,
    S_DEPTH,
    S_DUCK,
    S_KEY,
    UNDO_SIZE,
    with_duck,
)
from mallard.engines.duck.rules import DEFAULT_HASH_MB, MAX_HASH_MB
from mallard.engines.duck.terms import TERM_LONE_KING, TERM_MOBILITY, TERM_PAWNS
from mallard.engines.search_common import (
    C_ABORTED,
    C_NODE_LIMIT,
    C_NODES,
    C_SELDEPTH,
    INF,
    STOP_FLAG,
    new_stop_array,
    to_score,
)
from mallard.engines.tables import ThreadTable, hashfull
from mallard.engines.timeman import clock_start
from mallard.engines.watchdog import elapsed_ms

# mobility, pawn structure and the lone king: the terms self-play showed to gain
# (docs/benchmarks.md, the evaluation's matches)
DEFAULT_TERMS = TERM_MOBILITY | TERM_PAWNS | TERM_LONE_KING
# the selective pieces of the search (`rules.SELECTIVE_PIECES`), each a bit of search_kernels'
# ctx[C_SELECTIVITY]: all on is the engine's search, all off the exact one
SELECTIVITY_BITS = {"lmr": SK.SELECT_LMR, "null": SK.SELECT_NULL, "delta": SK.SELECT_DELTA,
                    "losing": SK.SELECT_LOSING, "recaptures": SK.SELECT_RECAPTURES,
                    "razor": SK.SELECT_RAZOR}
DEFAULT_SELECTIVITY = sum(SELECTIVITY_BITS.values())
MAX_DEPTH = 64
ASPIRATION = 40


class SearchBuffers(ThreadTable):
    """The arrays one search thread works in; the table survives between searches (a helper
    thread's buffers use the main thread's table, `share_table`)."""

    max_hash_mb, slot_words, min_slots = MAX_HASH_MB, SK.BUCKET_WORDS, 512
    mask_slot = SK.C_TT_MASK
    shared_slots = (SK.C_TT_MASK, SK.C_TT_GENERATION)
    busy_mask_slot = SK.C_BUSY_MASK

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, table_of: Optional["SearchBuffers"] = None):
        self.undo = np.zeros(MAX_PLY * UNDO_SIZE, dtype=np.int64)
        self.moves = np.zeros(MAX_PLY * MAX_MOVES, dtype=np.int64)
        self.order = np.zeros(MAX_PLY * MAX_MOVES, dtype=np.int64)
        self.ex = np.zeros(MAX_PLY * SK.EX_STRIDE, dtype=np.int64)
        self.ctx = np.zeros(SK.CTX_SIZE, dtype=np.int64)
        self.stop = new_stop_array()
        self._take_table(hash_mb, table_of, SK.BUSY_SLOTS)

    def next_generation(self) -> None:
        """A new search: the table's deeper entries of earlier ones may be replaced."""
        self.ctx[SK.C_TT_GENERATION] = (self.ctx[SK.C_TT_GENERATION] + 1) & 0xFF

    def clear(self) -> None:
        """Forget what was learnt: the table (its owner's), the move-ordering memory."""
        self.clear_table()
        self.ctx[SK.C_KILLERS:] = 0

    def start(self, node_limit: int = 0, quiescence: bool = True,
              quiescence_ply_limit: int = SK.MAX_SEARCH_PLY, same_depth_only: bool = False,
              eval_terms: int = DEFAULT_TERMS, selectivity: int = 0, shared: bool = False,
              thread: int = 0, repetitions: Optional[tuple] = None,
              table_shared: Optional[bool] = None):
        """Ready for a search; `shared`: other threads search beside this one (ABDADA's
        deferrals on; the owner of the table forgets the positions an earlier search was in);
        `table_shared` (default: as `shared`): their entries are in the table, so that the
        fixed-duck nodes take the full-window search sooner (`pv_kernels.fixed_child`);
        `thread`: this one's number among them (0: the main thread), which tags its marks;
        `repetitions`: the game's positions a draw repeats (`game_positions`; None: draws off)."""
        self.ctx[C_NODES] = 0
        self.ctx[SK.C_QNODES] = 0
        self.ctx[C_ABORTED] = 0
        self.ctx[C_SELDEPTH] = 0
        self.ctx[C_NODE_LIMIT] = node_limit
        self.ctx[SK.C_QSEARCH] = int(quiescence)
        self.ctx[SK.C_QUIESCENCE_PLY_LIMIT] = quiescence_ply_limit
        self.ctx[SK.C_TT_SAME_DEPTH] = int(same_depth_only)
        self.ctx[SK.C_EVAL_TERMS] = eval_terms
        self.ctx[SK.C_SELECTIVITY] = selectivity
        self.ctx[SK.C_THREAD_TAG] = SK.thread_tag(thread)
        self.share_work(shared)
        self.ctx[SK.C_SHARED_TABLE] = int(shared if table_shared is None else table_shared)
        self.stop[STOP_FLAG] = 0
        SK.set_repetitions(self.ctx, repetitions)
        SK.reset_lists(self.ex)

    def root(self, state, depth, alpha, beta, root_moves, values, ducks) -> int:
        return int(PV.search_root(state, self.undo, self.moves, self.order, self.ex, self.ctx,
                                  self.tt, self.busy, self.stop, depth, alpha, beta, root_moves,
                                  values, ducks, len(root_moves)))

    @property
    def nodes(self) -> int:
        return int(self.ctx[C_NODES])


def root_state(position) -> np.ndarray:
    state = position.state.copy()
    state[S_DEPTH] = 0
    return state


def game_positions(position) -> tuple:
    """The positions a search from `position` draws by repeating, as (duck-free key, duck
    square): those of the game since its last capture or pawn move, the position itself among
    them, that have stood on the board twice. A third time is the draw either side may claim
    (and our referee does); a second is not one, and a search that called it one would give up
    a small edge to avoid it, or steer into it when a little behind."""
    since = int(position.halfmove_clock)
    earlier = position.history[max(0, len(position.history) - since):] if since else ()
    stood = Counter((*earlier, position.place))
    return tuple(place for place, times in stood.items() if times >= 2)


def exception_value(position, depth: int, quiescence: bool, quiescence_ply_limit: int,
                    buffers: Optional[SearchBuffers] = None,
                    eval_terms: int = DEFAULT_TERMS, shared: bool = False) -> tuple[int, int]:
    """(value, nodes) of one fixed-depth, full-window exception search from a fresh table;
    `shared`: searched as one of several threads would (alone, it defers nothing)."""
    buffers = buffers or SearchBuffers(1)
    buffers.clear()
    buffers.start(quiescence=quiescence, quiescence_ply_limit=quiescence_ply_limit,
                  same_depth_only=True, eval_terms=eval_terms, shared=shared)
    root_moves = np.array(position.piece_moves(), dtype=np.int64)
    values = np.zeros(len(root_moves), dtype=np.int64)
    ducks = np.zeros(len(root_moves), dtype=np.int64)
    buffers.root(root_state(position), depth, -INF, INF, root_moves, values, ducks)
    return int(values.max()), buffers.nodes


def enumeration_value(position, depth: int, quiescence: bool, quiescence_ply_limit: int,
                      eval_terms: int = DEFAULT_TERMS) -> tuple[int, int]:
    """(value, nodes) of the plain search over every (piece move, duck square) pair."""
    # the full-enumeration oracle, for the bench and the tests: a search never loads it
    from mallard.engines.duck.enumeration import enumerate_search

    buffers = SearchBuffers(1)
    buffers.start(quiescence=quiescence, quiescence_ply_limit=quiescence_ply_limit,
                  eval_terms=eval_terms)
    value = enumerate_search(root_state(position), buffers.undo, buffers.moves, buffers.ctx,
                             0, depth, -INF, INF, quiescence)
    return int(value), buffers.nodes


def full_move(position, piece: int, duck: int, searchmoves=()) -> int:
    """The piece move with its duck; `duck` -1 (or illegal) picks the most blocking square.
    With `searchmoves`, a duck square the list does not allow gives way to one it does."""
    state = root_state(position)
    undo = np.zeros(2 * UNDO_SIZE, dtype=np.int64)
    old_duck = int(state[S_DUCK])
    K.push_piece_move(state, undo, piece)
    if duck < 0 or duck & 0x88 or state[duck] != 0 or duck == old_duck:
        duck = int(K.most_blocking_square(state, old_duck))
    move = with_duck(piece, duck)
    listed = [int(m) for m in searchmoves if int(m) & PIECE_MOVE_MASK == piece]
    if listed and move not in listed:
        move = listed[0]
    return move


class DuckRoot(RootSearch):
    """The exception search's root for the driver; a root move's tag is its duck square."""

    mate_bound = SK.MATE_BOUND
    aspiration = ASPIRATION
    max_depth = MAX_DEPTH
    manages_time = True

    def __init__(self, buffers: SearchBuffers, position, searchmoves=(), depth_offset: int = 0):
        self.buffers, self.ctx, self.stop = buffers, buffers.ctx, buffers.stop
        self.depth_offset = depth_offset
        self.state = root_state(position)
        self.searchmoves = searchmoves

    def depth_for_mate(self, mate: int) -> int:
        return 2 * mate

    def search(self, depth, alpha, beta, moves, values, tags, stoppable) -> int:
        return self.buffers.root(self.state, depth, alpha, beta, moves, values, tags)

    def line(self, position, moves, tags, index):
        return full_move(position, int(moves[index]), int(tags[index]), self.searchmoves), None

    def principal_variation(self, position, move, seed) -> list:
        pv = [move]
        seen = {position.key}
        current = position.play(move)
        tt, ctx = self.buffers.tt, self.ctx
        while len(pv) < MAX_DEPTH and current.result() is None and current.key not in seen:
            seen.add(current.key)
            # the principal variation's nodes remember their move and duck (`remember_pv`);
            # below them, the table's move, and the duck where the reply's node is lowest
            # unless that is where it stands now (-1, the most blocking square, when the reply
            # is not in the table). A remembered move can be one the duck now blocks: the node
            # was first searched with its duck elsewhere, and the square it was given in the
            # end came from an exception search, which remembers nothing.
            legal = current.piece_moves()
            piece, duck = PV.recall_pv(ctx, current.state[S_KEY])
            if piece not in legal:
                piece = 0
            if piece == 0:
                piece, _, _ = SK.probe(tt, ctx, current.state[S_KEY])
                if piece != 0:
                    child = root_state(current)
                    undo = np.zeros(2 * UNDO_SIZE, dtype=np.int64)
                    K.push_piece_move(child, undo, piece & PIECE_MOVE_MASK)
                    _, rx, rx2 = SK.probe(tt, ctx, child[S_KEY])
                    duck = rx2 if rx == current.duck and rx >= 0 else rx
            if piece == 0 or piece not in legal:
                break
            next_move = full_move(current, piece, duck)
            pv.append(next_move)
            current = current.play(next_move)
        return pv

    def to_score(self, value: int, depth: int) -> Score:
        """Centipawns, or mate in moves of the side to move (a king capture or a fowling win)."""
        return to_score(value, SK.MATE_BOUND)

    def hashfull(self) -> int:
        return hashfull(SK.used_entries(self.buffers.tt, int(self.ctx[SK.C_TT_GENERATION])))


class DuckSearcher(Searcher):
    def __init__(self, game, hash_mb: int = DEFAULT_HASH_MB, quiescence: bool = True,
                 eval_terms: int = DEFAULT_TERMS, selectivity: int = DEFAULT_SELECTIVITY):
        self.game = game
        self.buffers = SearchBuffers(hash_mb)
        self.helpers: list[SearchBuffers] = []  # one per helper thread (`set_threads`)
        self.quiescence = quiescence  # False: leaves are evaluated as they stand (tests)
        self.eval_terms = eval_terms
        # without quiescence the search is the tests' exact one, compared with the enumeration
        self.selectivity = selectivity if quiescence else 0

    def set_selective(self, name: str, on: bool) -> None:
        """Switch one selective piece of the search (`SELECTIVITY_BITS`) on or off."""
        bit = SELECTIVITY_BITS[name]
        self.selectivity = self.selectivity | bit if on else self.selectivity & ~bit

    def set_hash(self, hash_mb: int) -> None:
        """A fresh table of `hash_mb` MB (TableSizeError, the old one kept, when refused)."""
        self.buffers.set_hash(hash_mb)

    def set_threads(self, threads: int) -> None:
        """Search on `threads` threads sharing the table (lazy SMP, `mallard.engines.driver`); a
        search with a node limit stays on one, so that it is repeatable."""
        self.helpers = [SearchBuffers(table_of=self.buffers) for _ in range(max(1, threads) - 1)]

    def clear(self) -> None:
        self.buffers.clear()
        for helper in self.helpers:
            helper.clear()

    def search(self, position, limits: Limits = Limits(), stop_flag: Optional[np.ndarray] = None,
               on_info: Optional[Callable[[SearchInfo], None]] = None) -> SearchResult:
        started = clock_start(limits)
        if position.result() is not None:
            return SearchResult(None, score=Score.mate(0))
        buffers = self.buffers
        buffers.next_generation()  # before the helpers take the table's slots (`share_table`)
        # draws by repetition and the 50-move rule; not in the tests' exact search (no
        # quiescence), which the enumeration of every move, knowing no draws, checks
        settings = dict(quiescence=self.quiescence, same_depth_only=not self.quiescence,
                        eval_terms=self.eval_terms, selectivity=self.selectivity,
                        shared=bool(self.helpers) and not limits.nodes,
                        repetitions=game_positions(position) if self.quiescence else None)
        buffers.start(node_limit=limits.nodes or 0, **settings)
        allowed = {int(m) & PIECE_MOVE_MASK for m in limits.searchmoves}
        root_moves = np.array([m for m in position.piece_moves()
                               if not allowed or int(m) in allowed] or position.piece_moves(),
                              dtype=np.int64)
        root = DuckRoot(buffers, position, limits.searchmoves)
        helpers = []
        for number, helper in enumerate(self.helpers if not limits.nodes else (), 1):
            helper.share_table(buffers)
            helper.start(thread=number, **settings)
            helpers.append(DuckRoot(helper, position, depth_offset=number % 2))
        found = deepen(root, position, limits, root_moves, started, stop_flag,
                       root.deadline(limits, position.side_to_move, started), on_info,
                       helpers=helpers)
        move, pv = found.move, found.pv
        if move is None:  # stopped before depth 1 finished: any legal move
            move = full_move(position, int(root_moves[0]), -1, limits.searchmoves)
            pv = [move]
        return SearchResult(move, pv[1] if len(pv) > 1 else None,
                            root.to_score(found.value, found.depth), pv, found.depth,
                            found.nodes, elapsed_ms(started), stopped=found.stopped)
