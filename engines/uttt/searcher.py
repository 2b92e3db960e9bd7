"""The Ultimate Tic-Tac-Toe playing engine behind the common interface: `UtttSearcher`.

`UtttSearcher.search` first asks the df-pn prover (`mallard.engines.uttt.prover`)
for the game-theoretic value of the root, with a small share of the budget (a larger one when
few cells are open), then runs the driver's iterative deepening (`mallard.engines.driver.deepen`:
aspiration windows, MultiPV, the watchdog and the reports) over `UtttRoot`, the root of
`search_kernels.search_root`. Depth 1 is always finished, whatever the limits (it takes well
under a millisecond), so a stopped search still plays a move that does not allow a win at once;
on a clock, no new depth starts after `SOFT_TIME_SHARE` of the time the prover left.

Proofs, and the rule that a proven win is never thrown away:
- a search score above MATE_BOUND is itself a proof (see `search_kernels`); a root searched to
  at least its number of open cells is solved exactly (draws included);
- the prover's results (with the positions along the line it proves) and the search's proven
  wins are cached by position key until `clear()` (a key fixes the game-theoretic value);
- at a proven win the move played is a proven winning one: the search's when its score is a
  win, else the prover's best move (even when the search prefers another);
- at a proven draw or loss the search chooses and the score reported is the exact one; at a
  draw, time is kept to ask the prover whether the opponent wins after the chosen move, and if
  so the prover's drawing move is played instead.

Scores: `Score.mate(n)` for a win with the n-th move of the side to move (negative: a loss after
-n of its moves), `Score.cp(0, exact=True)` for a proven draw, centipawns otherwise (see
`evaluation`). A finished game returns `SearchResult(None, score=Score.mate(0))`.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np

from mallard.engines import compile_cache
from mallard.engines.base import (
    GameError,
    Limits,
    Score,
    ScoreKind,
    Searcher,
    SearchInfo,
    SearchResult,
)
from mallard.engines.driver import RootSearch, deepen
from mallard.engines.search_common import (
    C_ABORTED,
    C_NODE_LIMIT,
    C_NODES,
    C_SELDEPTH,
    MATE,
    STOP_FLAG,
    new_stop_array,
    to_score,
)
from mallard.engines.tables import ThreadTable, check_hash_mb, hashfull
from mallard.engines.timeman import clock_start, deadline, move_budget_ms
from mallard.engines.uttt import kernels as K
from mallard.engines.uttt import search_kernels as SK
from mallard.engines.uttt.board import MAX_MOVES
from mallard.engines.uttt.prover import Prover
from mallard.engines.uttt.rules import DEFAULT_HASH_MB, MAX_HASH_MB, UtttGame
from mallard.engines.watchdog import Watchdog, elapsed_ms

MAX_DEPTH = 82
ASPIRATION = 50
SOFT_TIME_SHARE = 0.5  # on a clock, no new iteration after this part of the search's time

# the prover's share of a search: (open cells at most, share of the time budget)
PROVER_SHARES = ((16, 0.3), (26, 0.2), (36, 0.12), (50, 0.06), (81, 0.03))
PROVER_MAX_OPEN = 60           # earlier positions are not worth a proof attempt
PROVER_UNTIMED_SECONDS = 0.1   # the slice of a search with no clock (depth, nodes) at share 1
PROVER_INFINITE_SECONDS = 2.0  # the same for an infinite (or ponder) search
PROVER_NODE_SHARE = 0.2        # with a node limit: the prover's part of it, times the share
PROVER_MIN_NODES = 4096        # a smaller node slice is not worth starting (the prover polls
                               # its limit every 4096 nodes)
WALK_BUDGET_SHARE = 0.8        # the prover's search and proof walk end within this of a budget
MAX_PROOFS = 200_000           # cached proofs (valid for ever; forgotten when this many)
DRAW_CHECK_SHARE = 0.15        # at a proven draw: the time kept to prove the move chosen safe


# On a first run the prover compiles in a helper process while the engine gets ready and plays
# without it; this event is set once this process has loaded the prover's compiled code (None:
# no such compile was started, and a search compiles the prover when it first needs it).
_prover_loaded: Optional[threading.Event] = None
_prover_loaded_lock = threading.Lock()


def _compile_prover_in_background() -> None:
    global _prover_loaded
    with _prover_loaded_lock:
        if _prover_loaded is not None:
            return
        _prover_loaded = loaded = threading.Event()

    def compile_then_load() -> None:
        try:
            helper = compile_cache.in_background(
                "from mallard.engines.uttt.searcher import warm_up_prover; warm_up_prover()")
            if helper is not None:
                helper.wait()
            warm_up_prover()  # loads what the helper cached (or compiles it here, off any search)
        except Exception:  # then the first search that uses the prover compiles it
            pass
        finally:
            loaded.set()

    threading.Thread(target=compile_then_load, name="mallard-prover-compile", daemon=True).start()


def _prover_code_ready() -> bool:
    loaded = _prover_loaded
    return loaded is None or loaded.is_set()


def wait_for_prover_code() -> None:
    """Wait until the prover's background compile, if one was started, is loaded here."""
    loaded = _prover_loaded
    if loaded is not None:
        loaded.wait()


class SearchBuffers(ThreadTable):
    """The arrays one search thread works in; the table survives between searches (a helper
    thread's buffers use the main thread's table, `share_table`, in its generation)."""

    max_hash_mb, slot_words, min_slots = MAX_HASH_MB, SK.BUCKET_WORDS, 512
    mask_slot = SK.C_TT_MASK
    shared_slots = (SK.C_TT_MASK, SK.C_GEN)
    busy_mask_slot = SK.C_BUSY_MASK

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, table_of: Optional["SearchBuffers"] = None):
        self.stack = SK.new_stack()
        self.moves = np.zeros((SK.MAX_PLY + 2) * MAX_MOVES, dtype=np.int64)
        self.order = np.zeros((SK.MAX_PLY + 2) * MAX_MOVES, dtype=np.int64)
        self.pv = np.zeros((SK.MAX_PLY + 2, SK.MAX_PLY + 3), dtype=np.int64)
        self.ctx = np.zeros(SK.CTX_SIZE, dtype=np.int64)
        self.ctx[SK.C_LMR] = 1
        self.stop = new_stop_array()
        self.never = new_stop_array()  # the stop array of the unstoppable first iteration
        self._take_table(hash_mb, table_of, SK.BUSY_SLOTS)

    def clear(self) -> None:
        """Forget what was learnt: the table (its owner's), the move-ordering memory."""
        self.clear_table()
        self.ctx[SK.C_HISTORY:] = 0
        self.ctx[SK.C_GEN] = 0

    def start(self, state: np.ndarray, node_limit: int = 0, shared: bool = False) -> None:
        """Ready for a search of `state`; `shared`: other threads search beside this one
        (ABDADA's deferrals on; the owner of the table forgets the positions an earlier search
        was in)."""
        self.share_work(shared)
        self.stack[0] = state
        self.ctx[C_NODES] = 0
        self.ctx[C_ABORTED] = 0
        self.ctx[C_SELDEPTH] = 0
        self.ctx[C_NODE_LIMIT] = node_limit
        self.ctx[SK.C_GEN] = (self.ctx[SK.C_GEN] + 1) & 0x3F
        SK.age_history(self.ctx)
        self.stop[STOP_FLAG] = 0

    def root(self, depth: int, alpha: int, beta: int, root_moves: np.ndarray,
             values: np.ndarray, stoppable: bool = True) -> int:
        if stoppable:
            return int(SK.search_root(self.stack, self.moves, self.order, self.pv, self.ctx,
                                      self.tt, self.busy, self.stop, np.int64(depth),
                                      np.int64(alpha), np.int64(beta), root_moves, values,
                                      np.int64(len(root_moves))))
        limit = int(self.ctx[C_NODE_LIMIT])
        self.ctx[C_NODE_LIMIT] = 0
        try:
            return int(SK.search_root(self.stack, self.moves, self.order, self.pv, self.ctx,
                                      self.tt, self.busy, self.never, np.int64(depth),
                                      np.int64(alpha), np.int64(beta), root_moves, values,
                                      np.int64(len(root_moves))))
        finally:
            self.ctx[C_NODE_LIMIT] = limit

    def order_root(self, root_moves: np.ndarray) -> None:
        SK.order_root(self.stack, self.moves, self.order, self.ctx, self.tt, root_moves,
                      np.int64(len(root_moves)))

    def root_pv(self) -> list[int]:
        length = int(self.pv[0, 0])
        return [int(move) for move in self.pv[0, 1:1 + length]]

    @property
    def nodes(self) -> int:
        return int(self.ctx[C_NODES])

    def hashfull(self) -> int:
        return hashfull(SK.fresh_entries(self.tt, self.ctx))


def is_win(value: int) -> bool:
    return value > SK.MATE_BOUND


class Proof:
    """A game-theoretic value of a position (side to move's view) and how to keep it."""

    __slots__ = ("value", "best_move", "pv", "source", "plies")

    def __init__(self, value: int, best_move: Optional[int], pv: list, source: str,
                 plies: Optional[int] = None):
        self.value, self.best_move, self.pv, self.source = value, best_move, list(pv), source
        self.plies = len(self.pv) if plies is None else plies  # to the game's end

    def score(self) -> Score:
        if self.value == 0:
            return Score.cp(0, exact=True)
        if self.value > 0:
            return Score.mate(max(1, (self.plies + 1) // 2))
        return Score.mate(-max(1, self.plies // 2))


class UtttRoot(RootSearch):
    """The alpha-beta root for the driver, from one position with `open_cells` empty cells."""

    mate_bound = SK.MATE_BOUND
    aspiration = ASPIRATION
    aspiration_bound = SK.MATE_BOUND  # no window around a proof: it is searched in full
    max_depth = MAX_DEPTH
    finish_first_depth = True
    soft_time_share = SOFT_TIME_SHARE

    def __init__(self, searcher: "UtttSearcher", position, open_cells: int,
                 buffers: Optional[SearchBuffers] = None, depth_offset: int = 0):
        self.searcher, self.buffers = searcher, buffers or searcher.buffers
        self.ctx, self.stop = self.buffers.ctx, self.buffers.stop
        self.key = position.key()
        self.open_cells = open_cells
        self.depth_offset = depth_offset  # a helper thread's (`mallard.engines.driver`)

    def depth_for_mate(self, mate: int) -> int:
        return 2 * mate - 1

    def order(self, moves) -> None:
        self.buffers.order_root(moves)

    def search(self, depth, alpha, beta, moves, values, tags, stoppable) -> int:
        return self.buffers.root(depth, alpha, beta, moves, values, stoppable)

    def line(self, position, moves, tags, index):
        move = int(moves[index])
        pv = self.buffers.root_pv()
        return move, pv if pv and pv[0] == move else [move]

    def principal_variation(self, position, move, seed) -> list:
        return self.searcher.extend_pv(position, seed)

    def to_score(self, value: int, depth: int) -> Score:
        """Centipawns, or mate in moves of the side to move; a 0 is a proven draw when the
        depth reached every end of the game."""
        return to_score(value, SK.MATE_BOUND, depth >= self.open_cells)

    def hashfull(self) -> int:
        return self.buffers.hashfull()

    def depth_done(self, depth, value, move, pv, limits: Limits) -> bool:
        """Remembers a win as a proof; done when solved (every line ends with the game) or when
        `go mate` found its win."""
        if is_win(value):
            self.searcher.proofs[self.key] = Proof(1, move, pv, "search", MATE - value)
        mate_plies = self.depth_for_mate(limits.mate) if limits.mate and limits.mate > 0 else None
        return depth >= self.open_cells or (
            mate_plies is not None and is_win(value) and MATE - value <= mate_plies)


class UtttSearcher(Searcher):
    def __init__(self, game, hash_mb: int = DEFAULT_HASH_MB, use_prover: bool = True):
        self.game = game
        self.hash_mb = int(hash_mb)
        self.buffers = SearchBuffers(hash_mb)
        self.helpers: list[SearchBuffers] = []  # one per helper thread (`set_threads`)
        self.use_prover = use_prover
        self.proofs: dict[int, Proof] = {}
        self._prover = None
        self._prover_stop = np.zeros(1, dtype=np.int64)

    # --- options ------------------------------------------------------------------------------
    def set_hash(self, hash_mb: int) -> None:
        """Resize the search table and the prover's (made now, so that no timed search
        allocates it); when either is refused (TableSizeError), both keep their old size."""
        hash_mb = check_hash_mb(hash_mb, MAX_HASH_MB)
        old_mb = self.hash_mb
        self.buffers.set_hash(hash_mb)
        self.hash_mb = hash_mb
        try:
            if self._prover is not None:
                self._prover.set_hash(self._prover_hash_mb())
            else:
                self.prover()
        except GameError:
            self.hash_mb = old_mb
            self.buffers.set_hash(old_mb)
            raise

    def set_threads(self, threads: int) -> None:
        """Search on `threads` threads sharing the table (lazy SMP, `mallard.engines.driver`), and
        prove on as many (`Prover`'s threads); a search with a node limit stays on one thread,
        prover included (it stays repeatable)."""
        self.helpers = [SearchBuffers(table_of=self.buffers) for _ in range(max(1, threads) - 1)]

    def clear(self) -> None:
        self.buffers.clear()
        for helper in self.helpers:
            helper.clear()
        self.proofs.clear()
        if self._prover is not None:
            self._prover.clear()

    def _prover_hash_mb(self) -> int:
        return max(4, min(256, self.hash_mb // 4))

    def prover(self):
        if self._prover is None and self.use_prover:
            self._prover = Prover(hash_mb=self._prover_hash_mb())
        return self._prover

    def warm_up(self) -> None:
        """Load every kernel a search may call: a normal search with aspiration and multipv,
        a node-limited one, a search stopped before it starts (the unstoppable first iteration,
        the stopped path), and the prover's search and proof walk (a position it proves). On a
        first run the prover compiles in a helper process instead, and searches play without
        it until this process has loaded its code: the engine is ready about twice as soon."""
        if self.use_prover and compile_cache.is_compiled("uttt", "prover") is False:
            _compile_prover_in_background()
        self._warm_up_searches()

    def _warm_up_searches(self) -> None:
        game = self.game
        start = game.start_position()
        self.search(start, Limits(depth=4))
        self.search(start.play(40), Limits(depth=2, multipv=2))
        self.search(game.parse_position(WARM_UP_PROVEN), Limits(depth=3))
        self.search(game.parse_position(WARM_UP_LATE), Limits(depth=6, nodes=30000))
        flag = np.ones(1, dtype=np.int64)
        self.search(start, Limits(infinite=True), flag)
        self.search(game.parse_position(WARM_UP_LATE), Limits(infinite=True), flag)
        self.clear()

    # --- searching ----------------------------------------------------------------------------
    def search(self, position, limits: Limits = Limits(), stop_flag: Optional[np.ndarray] = None,
               on_info: Optional[Callable[[SearchInfo], None]] = None) -> SearchResult:
        """Prover slice, then iterative deepening; with `limits.multipv` > 1 each depth searches
        line k over the moves the lines before it did not take (full window); with
        `limits.searchmoves` the root is restricted to the listed moves (all when none is
        legal)."""
        started = clock_start(limits)
        if position.result() is not None:
            return SearchResult(None, score=Score.mate(0))
        state = position.state.copy()
        side = position.side_to_move
        legal = position.legal_moves()
        listed = {int(move) for move in limits.searchmoves}
        allowed = [move for move in legal if move in listed] or legal
        open_cells = int(K.count_open_cells(state))
        budget = move_budget_ms(limits, side)
        hard_deadline = deadline(limits, side, started)
        node_limit = limits.nodes or 0
        self.buffers.start(state, node_limit, shared=bool(self.helpers) and not node_limit)

        # 1. the prover's slice (or a proof cached earlier in the game)
        proof, prover_nodes = self.proofs.get(position.key()), 0
        if proof is not None and proof.value > 0 and proof.best_move is None:
            proof = None  # a win whose line was cut short: prove it again to get the move
        if proof is None and self.use_prover and _prover_code_ready():
            proof, prover_nodes = self._prove(position, limits, budget, open_cells, started,
                                              node_limit, stop_flag, hard_deadline)
        if proof is not None and proof.best_move is not None and proof.best_move not in allowed:
            proof = Proof(proof.value, None, [], proof.source) if proof.value <= 0 else None
        if proof is not None and on_info:
            outcome = "win" if proof.value > 0 else "loss" if proof.value < 0 else "draw"
            on_info(SearchInfo(nodes=prover_nodes, time_ms=elapsed_ms(started),
                               string=f"proven {outcome} ({proof.source}, {proof.score()})"))

        # 2. alpha-beta; at a proven draw it leaves time to check the move it chooses
        check_draw = proof is not None and proof.value == 0 and proof.best_move is not None
        search_deadline = hard_deadline
        if check_draw and budget is not None:
            search_deadline = started + budget * (1 - DRAW_CHECK_SHARE) / 1000
        if node_limit:
            self.buffers.ctx[C_NODE_LIMIT] = max(1, node_limit - prover_nodes)
        buffers = self.buffers
        root = UtttRoot(self, position, open_cells)
        helpers = []
        for number, helper in enumerate(self.helpers if not node_limit else (), 1):
            helper.start(state, shared=True)
            helper.share_table(buffers)
            helpers.append(UtttRoot(self, position, open_cells, helper, number % 2))
        found = deepen(root, position, limits, np.array(allowed, dtype=np.int64), started,
                       stop_flag, search_deadline, on_info, extra_nodes=prover_nodes,
                       helpers=helpers)
        best_value, best_move, pv, depth = found.value, found.move, found.pv, found.depth
        reported = found.last_info

        # 3. the proof decides what the search could not
        score = root.to_score(best_value, depth)
        if proof is not None and not is_win(best_value):
            if proof.value > 0 and proof.best_move is not None:  # never give a win away
                best_move, score, pv = proof.best_move, proof.score(), list(proof.pv)
            elif proof.value == 0:
                score = Score.cp(0, exact=True)
                if check_draw and best_move != proof.best_move and not (
                        stop_flag is not None and stop_flag[0]) and not self._keeps_draw(
                        position, best_move, budget, started, hard_deadline, stop_flag):
                    best_move, pv = proof.best_move, list(proof.pv)
            elif not (score.kind is ScoreKind.MATE and score.value < 0):
                score = proof.score()
        if not pv or pv[0] != best_move:
            pv = self.extend_pv(position, [best_move])
        time_ms = elapsed_ms(started)
        nodes = found.nodes
        multipv = 1 if limits.multipv and limits.multipv > 1 else None
        if on_info and (reported is None or reported.score != score
                        or list(reported.pv[:1]) != [best_move]):
            on_info(SearchInfo(depth=depth, seldepth=int(buffers.ctx[C_SELDEPTH]),
                               score=score, nodes=nodes, time_ms=time_ms, pv=pv,
                               hashfull=buffers.hashfull(), multipv=multipv))
        return SearchResult(best_move, pv[1] if len(pv) > 1 else None, score, pv, depth, nodes,
                            time_ms, stopped=found.stopped)

    # --- proofs -------------------------------------------------------------------------------
    def _prove(self, position, limits: Limits, budget: Optional[int], open_cells: int,
               started: float, node_limit: int, stop_flag: Optional[np.ndarray],
               hard_deadline: Optional[float]) -> tuple[Optional[Proof], int]:
        """Run the prover on the root with its share of the budget; (proof or None, nodes)."""
        if open_cells > PROVER_MAX_OPEN:
            return None, 0
        share = next(s for cells, s in PROVER_SHARES if open_cells <= cells)
        if budget is not None:
            seconds = budget * share / 1000
        elif limits.infinite or limits.ponder:
            seconds = PROVER_INFINITE_SECONDS * share
        else:
            seconds = PROVER_UNTIMED_SECONDS * share
        nodes = int(node_limit * PROVER_NODE_SHARE * share) if node_limit else 0
        if node_limit and nodes < PROVER_MIN_NODES:
            return None, 0
        if stop_flag is not None and stop_flag[0]:
            return None, 0
        self.prover().load_kernels()  # before the slice's clock starts
        # the prover's time limit bounds its search; reading a proof back (the PV) may take
        # as long again, within the move's budget; the caller's stop flag ends both
        walk_end = time.perf_counter() + 2 * seconds
        if budget is not None:
            walk_end = min(walk_end, started + WALK_BUDGET_SHARE * budget / 1000)
        if hard_deadline is not None:
            walk_end = min(walk_end, hard_deadline)
        # the table stays from one proof to the next (a game's positions share their endings),
        # except under a node limit, whose searches must not depend on what came before
        outcome = self._run_prover(lambda prover, stop: prover.solve(
            position, node_limit=nodes, time_limit=seconds, stop_flag=stop,
            keep_table=not node_limit), stop_flag, walk_end,
            threads=1 if node_limit else 1 + len(self.helpers))
        spent = outcome.nodes + outcome.walk_nodes
        value = outcome.value
        if value is None:
            return None, spent
        pv = self._legal_prefix(position, outcome.pv)
        best = outcome.best_move
        if best is None or int(best) not in position.legal_moves():
            best = pv[0] if pv else None
        if value > 0 and best is None:
            return None, spent  # a win without its move (the proof walk was cut): not usable
        if best is not None and (not pv or pv[0] != int(best)):
            pv = [int(best)]
        proof = Proof(int(value), None if best is None else int(best), pv, "df-pn")
        self._remember(position, proof)
        return proof, spent

    def _run_prover(self, call, stop_flag: Optional[np.ndarray], end: Optional[float],
                    threads: int):
        """call(prover, stop) on `threads` threads under a watchdog that raises `stop` at `end`
        or on the caller's flag."""
        prover, stop = self.prover(), self._prover_stop
        if prover.threads != threads:
            prover.set_threads(threads)
        stop[0] = 0
        limiter = Watchdog(lambda: stop.__setitem__(0, 1), stop_flag, end)
        limiter.start()
        try:
            return call(prover, stop)
        finally:
            limiter.finish()

    def _keeps_draw(self, position, move: int, budget: Optional[int], started: float,
                    hard_deadline: Optional[float], stop_flag: Optional[np.ndarray]) -> bool:
        """At a proven draw: False when the opponent is proven to win after `move` (then the
        prover's drawing move is played instead); True when it is not, or not known in time."""
        child = position.play(move)
        known = self.proofs.get(child.key())
        if known is not None:
            return known.value <= 0
        if not _prover_code_ready():
            return True
        if budget is not None:
            seconds = budget * DRAW_CHECK_SHARE / 1000
        else:
            seconds = PROVER_UNTIMED_SECONDS * DRAW_CHECK_SHARE
        self.prover().load_kernels()  # before the check's clock starts
        end = time.perf_counter() + seconds
        if hard_deadline is not None:
            end = min(end, hard_deadline)
        wins, _ = self._run_prover(lambda prover, stop: prover.prove_win(
            child, 1 - position.side_to_move, time_limit=seconds, stop_flag=stop),
            stop_flag, end, threads=1 + len(self.helpers))
        return not wins

    def _remember(self, position, proof: Proof) -> None:
        """Cache a proof and, along its line, the proofs it implies for the later positions."""
        if len(self.proofs) > MAX_PROOFS:
            self.proofs.clear()
        self.proofs[position.key()] = proof
        current, value = position, proof.value
        for index, move in enumerate(proof.pv):
            current = current.play(move)
            value = -value
            if current.result() is not None:
                break
            rest = proof.pv[index + 1:]
            key = current.key()
            if key not in self.proofs and (value <= 0 or rest):  # a win is kept with its move
                self.proofs[key] = Proof(value, rest[0] if rest else None, rest, proof.source)

    @staticmethod
    def _legal_prefix(position, moves: list) -> list[int]:
        line, current = [], position
        for move in moves:
            if current.result() is not None or int(move) not in current.legal_moves():
                break
            line.append(int(move))
            current = current.play(int(move))
        return line

    def extend_pv(self, position, line: list) -> list[int]:
        """The legal prefix of `line`, continued with the table's moves to the game's end."""
        pv = self._legal_prefix(position, line)
        current = position
        for move in pv:
            current = current.play(move)
        buffers = self.buffers
        while current.result() is None and len(pv) < MAX_DEPTH:
            move = int(SK.tt_move(buffers.tt, buffers.ctx, np.int64(current.key())))
            if move < 0 or move not in current.legal_moves():
                break
            pv.append(move)
            current = current.play(move)
        return pv


# a late middle game position (O to move, 24 open cells) for the node-limited warm-up search
def warm_up_prover() -> None:
    """Compile the prover's kernels as the searcher calls them (solve with its proof walk, and
    prove_win), for `UtttSearcher.warm_up`'s helper process."""
    game = UtttGame()
    prover = Prover(hash_mb=1)
    stop = np.zeros(1, dtype=np.int64)
    prover.solve(game.parse_position(WARM_UP_PROVEN), node_limit=0, time_limit=5.0,
                 stop_flag=stop)
    late = game.parse_position(WARM_UP_LATE)
    prover.prove_win(late, late.side_to_move, time_limit=1.0, stop_flag=stop)
    compile_cache.mark_compiled("uttt", "prover")


WARM_UP_LATE = ("O;OX..@XXX.;X.OOO.OO./XO.X.OXO./X.XXX.O.O/XXOOXOO../OXOOXO.O./XXX....O./"
                "X.OX..X.O/XO.XXX.../.O.....XX")
# X to move, 28 open cells: a win the prover proves in milliseconds (its proof walk is loaded)
WARM_UP_PROVEN = ("X;XX..OO...;...XXX.O./.OX..XO.X/O...OX.../OOX....../XOO.OXO.X/O...O...O/"
                  ".X.XX.XO./....X.OX./.X.O..O..")
