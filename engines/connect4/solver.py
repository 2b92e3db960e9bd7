"""The Connect Four solver API (`Solver`) and the game-interface searcher (`Connect4Searcher`).

`Solver` owns the numba state: the `ctx` array (geometry, counters, options, stop flag, move
buffers), the transposition table and the book array. Scores follow Pons' convention (see
`kernels.py`); `solve` is exact, a weak solve returns -1/0/1. `reset()` gives the next search a
fresh table in O(1) (generation bump).
The table is allocated and touched by `mallard.engines.tables` when the size is set
(1..MAX_HASH_MB MB, and only what the machine's memory holds); a refused size keeps the old table.

Threads: with `threads` > 1 every thread runs the same search (a solve or a null-window test),
each with its own `ctx` (counters, move buffers, stop flag), all sharing the one lock-free table
(see `kernels`) and a table of the positions being searched (`busy`): a thread that reaches a
child another thread is searching leaves it for last (ABDADA), so the threads split the tree
instead of racing down the same line. Whoever finishes first answers and stops the others;
every answer is exact, whichever thread gives it, because every bound in the table is.

Mate conversion: a score s > 0 means the side to move wins with its `mate_distance` -th move from
now: `Score.mate(mate_distance)`; `Connect4Searcher.to_score` makes the Score of a solver score.
"""

from __future__ import annotations

import threading
from typing import Callable, Optional

import numpy as np

from mallard.engines.base import (
    GameResult,
    Limits,
    Proven,
    Score,
    Searcher,
    SearchInfo,
    SearchResult,
)
from mallard.engines.connect4 import kernels as K
from mallard.engines.connect4.book import convert_bitbully_in_background, default_book
from mallard.engines.connect4.rules import (
    DEFAULT_HASH_MB,
    MAX_HASH_MB,
    Connect4Game,
    Connect4Position,
)
from mallard.engines.tables import HashTable
from mallard.engines.timeman import clock_start, deadline
from mallard.engines.watchdog import Watchdog, elapsed_ms

# below this, enhanced transposition cut-offs cost more than they save (measured)
ETC_MIN_EMPTY = 14


class Solver(HashTable):
    """Exact solver for one board size; one search at a time, `request_stop` from any thread.
    Its table is sized by `set_hash` (`HashTable`)."""

    max_hash_mb, slot_words, min_slots, dtype = MAX_HASH_MB, K.TT_BUCKET_WORDS, 1 << 9, np.uint64

    def __init__(self, width: int = 7, height: int = 6, hash_mb: int = DEFAULT_HASH_MB,
                 book=None, etc_empty: int = ETC_MIN_EMPTY, pvs: bool = False, threads: int = 1):
        self.width, self.height = width, height
        self.area = width * height
        self.ctx = K.make_context(width, height)
        self.ctx[K.C_ETC_EMPTY] = etc_empty
        self.ctx[K.C_PVS] = int(pvs)
        self.threads = max(1, int(threads))
        self._helpers: list[np.ndarray] = []  # the helper threads' ctx during a search
        self._stop_requested = False  # by `request_stop`, not by a thread that finished first
        self.busy = np.zeros(K.BUSY_SLOTS, dtype=np.uint64)  # positions the threads search now
        self.scores = np.zeros(width, dtype=np.int64)
        self.set_hash(hash_mb)
        self.set_book(book)

    # --- configuration ---------------------------------------------------------------------
    def describe_table(self, slots: int) -> None:
        """The kernels address the table by its number of bits; a fresh one is generation 1."""
        self.ctx[K.C_TT_BITS] = slots.bit_length() - 1
        self.ctx[K.C_GEN] = 1

    def set_book(self, book) -> None:
        """Use `book` (an `mallard.engines.connect4.book.Book` or None) inside the search."""
        self.book = book
        if book is None:
            self.book_array = np.zeros(1, dtype=np.uint64)
            self.ctx[K.C_BOOK_SIZE] = 0
            self.ctx[K.C_BOOK_DEPTHS] = 0
            return
        if (book.width, book.height) != (self.width, self.height):
            raise ValueError(f"book is for {book.width}x{book.height}, "
                             f"solver for {self.width}x{self.height}")
        self.book_array = book.array
        self.ctx[K.C_BOOK_SIZE] = book.size
        self.ctx[K.C_BOOK_DEPTHS] = book.depth_mask

    def reset(self) -> None:
        """Forget every stored bound (O(1))."""
        gen = int(self.ctx[K.C_GEN]) + 1
        if gen >= 1 << 31:
            self.tt[:] = 0
            gen = 1
        self.ctx[K.C_GEN] = gen

    def request_stop(self) -> None:
        """Ask the running search to unwind (safe from another thread)."""
        self._stop_requested = True
        self.ctx[K.C_STOP] = 1
        for ctx in list(self._helpers):
            ctx[K.C_STOP] = 1

    @property
    def nodes(self) -> int:
        return int(self.ctx[K.C_NODES])

    @property
    def aborted(self) -> bool:
        return bool(self.ctx[K.C_ABORTED])

    def _start(self, node_limit: int = 0) -> None:
        """Fresh counters for a new search; a stop request of an earlier search is forgotten."""
        self.ctx[K.C_NODES] = 0
        self.ctx[K.C_ABORTED] = 0
        self.ctx[K.C_STOP] = 0
        self._stop_requested = False
        self.ctx[K.C_NODE_LIMIT] = node_limit

    def _check(self, position: Connect4Position) -> None:
        if (position.width, position.height) != (self.width, self.height):
            raise ValueError(f"position is {position.width}x{position.height}, "
                             f"solver is {self.width}x{self.height}")
        if position.winner is not None:
            raise ValueError("the game is over: there is nothing to solve")

    # --- solving ---------------------------------------------------------------------------
    def solve_bits(self, cur: int, mask: int, moves: int, weak: bool = False) -> int:
        """Score of a non-terminal position given as bitboards (the fastest entry point)."""
        self._start()
        cur, mask = np.uint64(cur), np.uint64(mask)
        value = self._together(lambda ctx: K.solve_position(
            cur, mask, moves, weak, ctx, self.tt, self.book_array, self.busy))
        return _sign(value) if weak else value

    def solve(self, position: Connect4Position, weak: bool = False,
              node_limit: int = 0) -> Optional[int]:
        """Exact score (weak: its sign); None when stopped or over the node limit."""
        self._check(position)
        self._start(node_limit)
        if position.moves == self.area:
            return 0
        cur, mask, moves = np.uint64(position.cur), np.uint64(position.mask), position.moves
        value = self._together(lambda ctx: K.solve_position(
            cur, mask, moves, weak, ctx, self.tt, self.book_array, self.busy))
        if self.aborted:
            return None
        return _sign(value) if weak else value

    def analyze(self, position: Connect4Position, weak: bool = False,
                node_limit: int = 0) -> Optional[list[int]]:
        """Score of playing each column (-1000 for a full one); None when stopped."""
        self._check(position)
        self._start(node_limit)
        if position.moves == self.area:
            return [K.UNKNOWN] * self.width
        K.analyze_position(np.uint64(position.cur), np.uint64(position.mask), position.moves, weak,
                           self.ctx, self.tt, self.book_array, self.busy, self.scores)
        if self.aborted:
            return None
        scores = [int(s) for s in self.scores]
        if weak:
            scores = [s if s == K.UNKNOWN else _sign(s) for s in scores]
        return scores

    def score_range(self, position: Connect4Position) -> tuple[int, int]:
        """The (lowest, highest) score a non-terminal position can have; equal when the side to
        move wins at once."""
        low, high = K.score_range(np.uint64(position.cur), np.uint64(position.mask), position.moves,
                                  self.ctx)
        return int(low), int(high)

    def null_window(self, position: Connect4Position, value: int) -> Optional[int]:
        """One null-window search (value, value + 1) of a position where the side to move cannot
        win at once: a result <= value bounds the score from above, > value from below. None when
        stopped. Nodes add up until the next solve."""
        cur, mask, moves = np.uint64(position.cur), np.uint64(position.mask), position.moves
        result = self._together(lambda ctx: K.negamax(
            cur, mask, moves, value, value + 1, ctx, self.tt, self.book_array, self.busy,
            K.UNKNOWN_THREATS))
        return None if self.aborted else int(result)

    def _together(self, task: Callable[[np.ndarray], int]) -> int:
        """`task(ctx)` run on this thread's ctx and on `threads - 1` helper threads' copies of it
        at once (module docstring); the first to finish gives the value. Nodes add up over the
        threads; aborted only when nobody finished. Node limits stay one-threaded."""
        if self.threads == 1 or self.ctx[K.C_NODE_LIMIT] > 0:
            return task(self.ctx)
        self.ctx[K.C_BUSY_MASK] = K.BUSY_SLOTS - 1
        helpers = [self._helper_ctx() for _ in range(1, self.threads)]
        everyone = [self.ctx, *helpers]
        answers: list[int] = []
        lock = threading.Lock()

        def run(ctx, work):
            value = work(ctx)
            if ctx[K.C_ABORTED] == 0:
                with lock:
                    answers.append(int(value))
            for other in everyone:  # the first to finish stops the rest
                if other is not ctx:
                    other[K.C_STOP] = 1

        self._helpers = helpers
        if self.ctx[K.C_STOP]:  # a stop that came before the helpers existed
            for ctx in helpers:
                ctx[K.C_STOP] = 1
        workers = [threading.Thread(target=run, args=(ctx, task), daemon=True)
                   for ctx in helpers]
        for worker in workers:
            worker.start()
        try:
            run(self.ctx, task)
        finally:
            for worker in workers:
                worker.join()
            self._helpers = []
            self.ctx[K.C_BUSY_MASK] = 0
        self.ctx[K.C_NODES] += sum(int(ctx[K.C_NODES]) for ctx in helpers)
        self.ctx[K.C_STOP] = 0  # a helper's stop: the search (its next test) goes on ...
        if self._stop_requested:  # ... unless the caller's came (set before its flag: no race)
            self.ctx[K.C_STOP] = 1
        if not answers:
            return 0
        self.ctx[K.C_ABORTED] = 0
        return answers[0]

    def _helper_ctx(self) -> np.ndarray:
        """A copy of this thread's ctx for a helper thread, its counters and flags cleared."""
        ctx = self.ctx.copy()
        ctx[K.C_NODES] = ctx[K.C_ABORTED] = ctx[K.C_STOP] = 0
        return ctx

    def child_reaches(self, position: Connect4Position, column: int, score: int) -> bool:
        """Whether playing `column` scores at least `score` (one null-window test)."""
        child = position.play(column)
        if child.winner is not None:
            return (self.area + 1 - position.moves) // 2 >= score
        if child.is_over():
            return 0 >= score
        low, high = self.score_range(child)
        if low == high:
            return -low >= score
        value = self.null_window(child, -score)
        return value is not None and value <= -score

    def best_move(self, position: Connect4Position, score: int) -> Optional[int]:
        """The column nearest the centre that achieves the exact `score`: fastest win, slowest
        loss, centre first on ties. None when stopped."""
        for column in K.centre_order(self.width):
            if position.column_height(column) >= self.height:
                continue
            reaches = self.child_reaches(position, column, score)
            if self.aborted:
                return None
            if reaches:
                return column
        raise AssertionError("no move reaches the position's own score")

    def heuristic_move(self, position: Connect4Position) -> int:
        """An instant reasonable move: a winning one, else a non-losing one ordered like the
        search."""
        cur, mask = np.uint64(position.cur), np.uint64(position.mask)
        wins = int(K.winning_cells(cur, mask, self.ctx) & K.playable(mask, self.ctx))
        safe = int(K.non_losing_moves(cur, mask, self.ctx))
        opponent_threats = K.winning_cells(cur ^ mask, mask, self.ctx)
        best, best_priority = None, None
        for column in K.centre_order(self.width):
            if position.column_height(column) >= self.height:
                continue
            cells = position.game.column_mask(column)
            if wins & cells:
                return column
            priority = 0
            if safe & cells:
                move = np.uint64(safe & cells)
                threats = K.winning_cells(cur | move, mask | move, self.ctx)
                priority = 1 + int(K.move_priority(threats, opponent_threats))
            if best_priority is None or priority > best_priority:
                best, best_priority = column, priority
        return best

    def table_move(self, position: Connect4Position) -> int:
        """The best move an unfinished solve leaves behind: each column's guaranteed score from
        the bounds its child has in the table (or the book). A column proven to at least draw
        is played (the best such); otherwise the heuristic move, unless the table proves it
        worse than another column's guarantee."""
        ctx = self.ctx
        bounds = {}  # column -> (score the move is proven to reach, score it cannot exceed)
        for column in K.centre_order(self.width):
            if position.column_height(column) >= self.height:
                continue
            child = position.play(column)
            if child.winner is not None:
                return column
            if child.is_over():
                bounds[column] = (0, 0)
                continue
            key = np.uint64(child.cur + child.mask)
            lower, upper = (int(x) for x in K.tt_probe(self.tt, key, ctx))
            if (int(ctx[K.C_BOOK_DEPTHS]) >> child.moves) & 1:
                exact = int(K.book_lookup(K.canonical_key(key, ctx), self.book_array, ctx))
                if exact != K.UNKNOWN:
                    lower = upper = exact
            bounds[column] = (-upper, -lower)  # the child's bounds, seen from this side
        best = max(bounds, key=lambda c: bounds[c][0])  # centre first on ties
        if bounds[best][0] >= 0:
            return best
        fallback = self.heuristic_move(position)
        return best if bounds[fallback][1] < bounds[best][0] else fallback

    def mate_distance(self, moves: int, score: int) -> int:
        """The mate distance (`Score.mate`) of a non-zero score at `moves` stones played (see
        the module docstring)."""
        parity = moves & 1
        if score > 0:
            n = self.area + 1 - 2 * score  # stones before the winning move, or one more
            if n & 1 != parity:
                n -= 1
            return (n - moves) // 2 + 1
        n = self.area + 1 + 2 * score
        if n & 1 == parity:
            n -= 1
        return -((n - moves + 1) // 2)


class Connect4Searcher(Searcher):
    """The solver behind the common interface: an exact score whenever the solve finishes."""

    def __init__(self, game: Connect4Game, hash_mb: int = DEFAULT_HASH_MB, own_book: bool = True):
        self.game = game
        self.own_book = own_book
        self.solver = Solver(game.width, game.height, hash_mb=hash_mb)
        self._book_loaded = False

    def set_hash(self, hash_mb: int) -> None:
        """A fresh table of `hash_mb` MB (TableSizeError, the old one kept, when refused)."""
        self.solver.set_hash(hash_mb)

    def set_threads(self, threads: int) -> None:
        """Search with `threads` threads from the next search on (see `Solver`)."""
        self.solver.threads = max(1, int(threads))

    def set_own_book(self, on: bool) -> None:
        """Whether searches probe the opening book (loaded at the next search)."""
        self.own_book = bool(on)
        self._book_loaded = False

    def clear(self) -> None:
        self.solver.reset()

    def warm_up(self) -> None:
        """Load every kernel a search may call, including the ones only a stopped search uses
        (table probes, the heuristic move), so that the first `stop` is answered at once. On a
        first run the opening book is converted by another process meanwhile."""
        converting = convert_bitbully_in_background() if self.own_book and \
            (self.game.width, self.game.height) == (7, 6) else None
        position = self.game.start_position()
        self.solver.heuristic_move(position)
        self.solver.table_move(position)
        self.solver.analyze(position.play(0).play(0).play(0).play(1).play(1).play(1),
                            node_limit=2000)
        self.solver.reset()
        if converting is not None:
            converting.wait()  # the first search then loads the book it cached

    def _ensure_book(self) -> None:
        if self._book_loaded:
            return
        book = None
        if self.own_book:
            book = default_book(self.game.width, self.game.height)
        self.solver.set_book(book)
        self._book_loaded = True

    def search(self, position: Connect4Position, limits: Limits = Limits(),
               stop_flag: Optional[np.ndarray] = None,
               on_info: Optional[Callable[[SearchInfo], None]] = None) -> SearchResult:
        """Solve exactly, narrowing the score with null-window searches and reporting each new
        bound; when stopped first, play an instant heuristic move. With MultiPV or searchmoves,
        every candidate column is solved and reported."""
        started = clock_start(limits)
        solver = self.solver
        if position.is_over():
            return SearchResult(None, score=Score.mate(0))
        self._ensure_book()
        legal = position.legal_moves()
        candidates = [c for c in legal if c in limits.searchmoves] if limits.searchmoves else legal
        candidates = candidates or legal
        solver._start(limits.nodes or 0)  # before the watchdog, which may stop at once
        watchdog = Watchdog(solver.request_stop, stop_flag,
                            deadline(limits, position.side_to_move, started))
        watchdog.start()
        try:
            if limits.multipv > 1 or len(candidates) < len(legal):
                return self._solve_each(position, candidates, limits, on_info, started)
            return self._solve(position, on_info, started)
        finally:
            watchdog.finish()

    def _solve(self, position: Connect4Position, on_info, started: float) -> SearchResult:
        solver = self.solver
        depth = self.game.width * self.game.height - position.moves
        low, high = solver.score_range(position)
        while low < high:
            probe = int(K.next_probe(low, high))
            value = solver.null_window(position, probe)
            if value is None:
                break
            if value <= probe:
                high, bound = value, "upperbound"
            else:
                low, bound = value, "lowerbound"
            if on_info and low < high:
                on_info(SearchInfo(depth=depth, score=self.to_score(position, value),
                                   nodes=solver.nodes, time_ms=elapsed_ms(started), bound=bound))
        best = solver.best_move(position, low) if low == high else None
        if best is None:
            return SearchResult(solver.table_move(position), nodes=solver.nodes,
                                time_ms=elapsed_ms(started), stopped=True)
        pv = [best]
        after = position.play(best)
        if not after.is_over():
            reply = solver.best_move(after, -low)  # the reply's exact score is -low
            if reply is not None:
                pv.append(reply)
        score = self.to_score(position, low)
        info = SearchInfo(depth=depth, score=score, nodes=solver.nodes,
                          time_ms=elapsed_ms(started), pv=pv, wdl=_wdl(low))
        if on_info:
            on_info(info)
        return SearchResult(best, pv[1] if len(pv) > 1 else None, score, pv, depth,
                            solver.nodes, info.time_ms)

    def _solve_each(self, position: Connect4Position, candidates: list[int], limits: Limits,
                    on_info, started: float) -> SearchResult:
        """Exact scores of the candidate columns, best first; one `info` line per column."""
        solver = self.solver
        depth = self.game.width * self.game.height - position.moves
        scores = solver.analyze(position, node_limit=limits.nodes or 0)
        if scores is None:
            move = solver.table_move(position)
            move = move if move in candidates else candidates[0]
            return SearchResult(move, nodes=solver.nodes, time_ms=elapsed_ms(started),
                                stopped=True)
        centre = {column: rank for rank, column in enumerate(K.centre_order(self.game.width))}
        ranked = sorted(candidates, key=lambda column: (-scores[column], centre[column]))
        time_ms = elapsed_ms(started)
        for line, column in enumerate(ranked[: max(1, limits.multipv)], 1):
            if on_info:
                on_info(SearchInfo(depth=depth, score=self.to_score(position, scores[column]),
                                   nodes=solver.nodes, time_ms=time_ms, pv=[column],
                                   multipv=line, wdl=_wdl(scores[column])))
        best = ranked[0]
        return SearchResult(best, None, self.to_score(position, scores[best]), [best], depth,
                            solver.nodes, time_ms)

    def to_score(self, position: Connect4Position, score: int) -> Score:
        """A solver score of `position` as a Score: a proven draw, or mate in moves."""
        if score == 0:
            return Score.cp(0, exact=True)
        return Score.mate(self.solver.mate_distance(position.moves, score))


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _wdl(score: int) -> tuple[int, int, int]:
    return (1000, 0, 0) if score > 0 else (0, 1000, 0) if score == 0 else (0, 0, 1000)


class _RefereeSolvers(threading.local):
    """Each thread's solvers by board size: referees run on threads, a solver serves one."""

    def __init__(self):
        self.by_size: dict[tuple[int, int], Solver] = {}


_referee_solvers = _RefereeSolvers()


def prove(position: Connect4Position, node_limit: int) -> Optional[GameResult]:
    """A weak solve (win/draw/loss) within `node_limit` nodes, with the book when it fits: the
    game's result under perfect play, or None when not proven (a referee's `-adjudicate`)."""
    done = position.result()
    if done is not None:
        return done
    game = position.game
    solvers = _referee_solvers.by_size
    solver = solvers.get((game.width, game.height))
    if solver is None:
        solver = Solver(game.width, game.height, hash_mb=16,
                        book=default_book(game.width, game.height))
        solvers[(game.width, game.height)] = solver
    value = solver.solve(position, weak=True, node_limit=max(1, int(node_limit)))
    if value is None:
        return None
    if value == 0:
        return GameResult(None, Proven.DRAW)
    mover = position.side_to_move
    return GameResult(mover if value > 0 else 1 - mover, Proven.WIN)

