"""The Ultimate Tic-Tac-Toe prover's Python API: `Prover.solve` and `Prover.prove_win`.

`prove_win(position, attacker)` runs one df-pn search (`prover_kernels`) on "`attacker` wins":
True when proven, False when disproven (the attacker at best draws), None when a limit or a stop
request ended it first. `solve` runs it for the side to move and, when that is disproven, for the
opponent: win, loss or draw for the side to move. Both searches of a solve share one table
(entries are keyed by the attacker too); each solve or prove_win starts from an empty table, so
node counts do not depend on what was searched before, unless `solve(keep_table=True)` starts
from what earlier proofs left. `analyse_game` does that for a game's positions, from the last
one backwards: each proof reuses the later positions' (`mallard prove uttt --game`).

Values are from the side to move: +1 it wins, 0 draw, -1 it loses, None unknown. A finished
position is answered from its result (0 nodes, proof size 1, empty PV).

Options: `critical` (the critical-board analysis: pruning, wins at once, positions without a
safe move), `dead_lines` (no global line left for the attacker), `mobility` (new nodes'
numbers seeded from their move count), `heuristic` (df-pn+: and scaled by the evaluation) and
`open_lines` (a new node's disproof number times the attacker's open global lines) — see
`prover_kernels` — and `at_once` (threads below); all on by default, and
`mallard prove --no-critical` turns off only the first.

After a decided solve the result is read back from the table (this can re-search a little when
the table has dropped entries; those nodes are `walk_nodes`, not `nodes`):
- `proof_size`: the nodes of the proof tree — from the root, one proving child where the winner
  moves and every unpruned child where the loser moves, each transposition once, a statically
  decided node a leaf, moves pruned by the critical-board analysis not counted. For a draw it is
  the sum of the two disproof trees (side to move does not win; opponent does not win). -1 when
  the walk could not finish (stopped, past the time limit — it gets what the search left, at
  least 0.2 s — or its budget of max(200,000, nodes) re-searched nodes ran out; the PV gets its
  own budget of the same size).
- `pv`: winner's moves that keep the proof (the least-worked proven child, or a win at once)
  against the loser's most stubborn replies (the most-worked child), to the end of the game; for
  a draw each side plays a move after which the opponent is proven not to win.

Threads: `threads` > 1 runs that many searches at once on one shared table (`prover_kernels`).
A solve without a node limit (and with `at_once`) runs its two searches at the same time, the
threads split between them (`_Race`): a proof of either side's win ends the solve, and a thread
whose search was disproven joins the other. Otherwise every thread works on one search at a
time, the first to decide its root stopping the others. The answer is the same either way.
`nodes` counts every thread's nodes; `node_limit` counts the first thread's only.

Limits: `node_limit` (0 = none) bounds the nodes of both searches together, `time_limit` (seconds)
their wall time; `stop_flag` (a numpy array, non-zero first element) and `request_stop()` stop a
search from another thread. The kernels poll every 4096 nodes with the GIL released.
`solve_interruptibly` runs a solve in a worker thread so that Ctrl-C stops it (the CLI), and
`format_outcome` writes the one-line report of `mallard prove`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, TypeVar, Union

import numpy as np

from mallard.engines.base import GameResult, Proven
from mallard.engines.tables import HashTable
from mallard.engines.uttt import kernels as K
from mallard.engines.uttt import prover_kernels as PK
from mallard.engines.uttt.board import DRAWN, O_WON, RESULT_NONE, S_RESULT, S_SIDE, X_WON
from mallard.engines.uttt.rules import MAX_HASH_MB, SIDES, UtttGame, UtttPosition
from mallard.engines.watchdog import Watchdog

T = TypeVar("T")

VISITED_START_BITS = 20
VISITED_MAX_BITS = 27
MIN_WALK_BUDGET = 200_000
WALK_GRACE_SECONDS = 0.2  # the least time a walk gets after a search that used up the limit

_kernels_loaded = False  # this process has loaded (or compiled) the kernels: `load_kernels`


@dataclass
class ProofOutcome:
    """What `Prover.solve` found for one position: its value for the side to move (None when the
    limit came first, never a guess), the principal line of the proof and what it cost."""

    value: Optional[int]      # +1 side to move wins, 0 draw, -1 side to move loses, None unknown
    text: str                 # "X wins" / "O wins" / "draw" / "unknown"
    nodes: int                # nodes expanded by the searches (both runs)
    proof_size: int           # nodes of the proof tree (module docstring); -1 unknown
    seconds: float            # wall time of the whole call
    pv: list = field(default_factory=list)   # moves 0..80
    best_move: Optional[int] = None
    search_seconds: float = 0.0   # the searches alone (what nodes/s is measured on)
    walk_nodes: int = 0           # nodes re-searched while reading the proof back


class _Helper:
    """A helper thread's own search buffers and counters (the table is the prover's)."""

    def __init__(self, index: int):
        self.ctx = np.zeros(PK.CTX_SIZE, dtype=np.int64)
        self.ctx[PK.C_THREAD] = index
        self.stack, self.moves, self.keys, self.pns, self.dns, _ = PK.new_buffers()
        self.status = PK.UNKNOWN
        self.error: Optional[BaseException] = None


class _Race:
    """The two searches of a solve run at once (`Prover._solve_at_once`): which thread starts
    on which attacker, each search's own stop flag and status, and the rule that ends them."""

    def __init__(self, first_attacker: int, threads: int):
        self.first = first_attacker
        # thread 0 and every even one on the first attacker, the odd ones on the other
        self.start = [first_attacker if index % 2 == 0 else 1 - first_attacker
                      for index in range(threads)]
        self.stops = {0: np.zeros(1, dtype=np.int64), 1: np.zeros(1, dtype=np.int64)}
        self.status = {0: PK.UNKNOWN, 1: PK.UNKNOWN}
        self.over = False
        self.lock = threading.Lock()

    def next_attacker(self, attacker: int) -> Optional[int]:
        """The search a thread works on next: its own while undecided, else the other's;
        None when the solve is over."""
        with self.lock:
            if self.over:
                return None
            if self.status[attacker] == PK.UNKNOWN:
                return attacker
            if self.status[1 - attacker] == PK.UNKNOWN:
                return 1 - attacker
            return None

    def record(self, attacker: int, status: int) -> None:
        """A thread's search of `attacker` returned `status`: a decided search stops its
        other threads; a proof, or a second disproof, ends the solve."""
        if status == PK.UNKNOWN:
            return
        with self.lock:
            if self.status[attacker] == PK.UNKNOWN:
                self.status[attacker] = status
                self.stops[attacker][0] = 2
            if status == PK.PROVEN or self.status[1 - attacker] != PK.UNKNOWN:
                self._end()

    def end(self) -> None:
        with self.lock:
            self._end()

    def _end(self) -> None:
        self.over = True
        for stop in self.stops.values():
            stop[0] = max(stop[0], 2)

    def value(self) -> Optional[int]:
        """+1 the first attacker wins, -1 the other does, 0 neither, None undecided."""
        if self.status[self.first] == PK.PROVEN:
            return 1
        if self.status[1 - self.first] == PK.PROVEN:
            return -1
        if self.status[0] == PK.DISPROVEN and self.status[1] == PK.DISPROVEN:
            return 0
        return None


class Prover(HashTable):
    """df-pn prover; one search at a time, `request_stop` from any thread. Its table is sized
    by `set_hash` (`HashTable`), within UTTT's `Hash` maximum."""

    max_hash_mb, slot_words, min_slots = MAX_HASH_MB, PK.BUCKET * PK.TT_WORDS, 1 << 8
    mask_slot = PK.C_TT_MASK

    def __init__(self, hash_mb: int = 64, critical: bool = True, dead_lines: bool = True,
                 mobility: bool = True, threads: int = 1, heuristic: bool = True,
                 open_lines: bool = True, at_once: bool = True):
        self.ctx = np.zeros(PK.CTX_SIZE, dtype=np.int64)
        self.stop = np.zeros(1, dtype=np.int64)
        (self.stack, self.moves, self.keys, self.pns, self.dns,
         self.walk_moves) = PK.new_buffers()
        self.candidates = np.zeros(81, dtype=np.int64)
        self.critical = critical
        self.dead_lines = dead_lines
        self.user_stopped = False
        self._halted = False  # a stop request or the watchdog: what a finished helper must not undo
        self._stop_lock = threading.Lock()  # _halted and stop[0] change together
        self.helper_nodes = 0
        self._race: Optional[_Race] = None  # the solve's two searches while they run at once
        self.ctx[PK.C_FLAGS] = (PK.CRITICAL if critical else 0) | (
            PK.DEAD_LINES if dead_lines else 0) | (PK.MOBILITY if mobility else 0) | (
            PK.HEURISTIC if heuristic else 0) | (PK.OPEN_LINES if open_lines else 0)
        self.at_once = at_once
        self.set_hash(hash_mb)
        self.set_threads(threads)
        self._game = UtttGame()

    # --- configuration ------------------------------------------------------------------------
    def set_threads(self, threads: int) -> None:
        """Search with `threads` threads (1 or more) from the next proof on."""
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads!r}")
        self.busy = np.zeros((threads, PK.BUSY_SLOTS), dtype=np.int64)
        self.helpers = [_Helper(index) for index in range(1, threads)]
        for helper in self.helpers:
            helper.ctx[PK.C_FLAGS] = self.ctx[PK.C_FLAGS]

    @property
    def threads(self) -> int:
        return 1 + len(self.helpers)

    def clear(self) -> None:
        self.tt.fill(0)

    def request_stop(self) -> None:
        """Ask the running search to unwind (safe from another thread)."""
        self.user_stopped = True
        self._halt()

    def _halt(self) -> None:
        """The watchdog's stop: the time limit or the caller's flag."""
        with self._stop_lock:
            self._halted = True
            self.stop[0] = 1
            race = self._race
            if race is not None:
                for stop in race.stops.values():
                    stop[0] = 1

    @property
    def nodes(self) -> int:
        """The first thread's nodes (the node limit's count; the helpers' are `helper_nodes`)."""
        return int(self.ctx[PK.C_NODES])

    def _start(self, node_limit: int) -> None:
        self.ctx[PK.C_NODES] = 0
        self.ctx[PK.C_ABORTED] = 0
        self.ctx[PK.C_NODE_LIMIT] = max(0, int(node_limit or 0))
        self.helper_nodes = 0
        self.user_stopped = False
        self._halted = False
        self.stop[0] = 0

    def load_kernels(self) -> None:
        """Loads the search and proof-walk kernels from the compile cache (or compiles them)
        once per process, on a position decided without search. `solve` and `prove_win` call
        it before their clocks start, and a caller with its own deadline calls it before
        reading the time: a load inside a short limit (tens of milliseconds) eats it whole."""
        global _kernels_loaded
        if _kernels_loaded:
            return
        stack, moves, keys, pns, dns, walk_moves = PK.new_buffers()
        stack[0] = self._game.start_position().state
        stack[0][S_RESULT] = X_WON  # over: every kernel returns at its first static check
        ctx = self.ctx.copy()
        stop = np.zeros(1, dtype=np.int64)
        attacker, target = np.int64(0), np.int64(PK.PROVEN)
        PK.prove_kernel(stack, attacker, ctx, self.tt, stop, moves, keys, pns, dns,
                        np.zeros((1, 1), dtype=np.int64))
        PK.proof_size_kernel(stack, attacker, target, ctx, self.tt, stop, moves, keys, pns, dns,
                             walk_moves, np.zeros(16, dtype=np.int64))
        PK.choose_child_kernel(stack, attacker, target, ctx, self.tt, stop, moves, keys, pns,
                               dns, walk_moves, self.candidates, np.int64(0))
        _kernels_loaded = True

    def _position(self, position: Union[UtttPosition, str]) -> UtttPosition:
        if isinstance(position, str):
            return self._game.parse_position(position)
        return position

    def _start_helpers(self, work: Callable[[_Helper], None]) -> list[threading.Thread]:
        """Clears the busy marks and the helpers' counters, then runs `work(helper)` on a
        thread of its own for each helper."""
        self.busy.fill(0)
        workers = []
        for helper in self.helpers:
            helper.ctx[PK.C_NODES] = 0
            helper.ctx[PK.C_ABORTED] = 0
            helper.ctx[PK.C_TT_MASK] = self.ctx[PK.C_TT_MASK]
            helper.status, helper.error = PK.UNKNOWN, None
            worker = threading.Thread(target=work, args=(helper,),
                                      name=f"mallard-prover-{int(helper.ctx[PK.C_THREAD])}",
                                      daemon=True)
            worker.start()
            workers.append(worker)
        return workers

    def _collect_helpers(self) -> None:
        """After the helpers' threads are joined: their nodes counted, their first error
        raised here."""
        for helper in self.helpers:
            self.helper_nodes += int(helper.ctx[PK.C_NODES])
        for helper in self.helpers:
            if helper.error is not None:
                raise helper.error

    def _search(self, state: np.ndarray, attacker: int) -> int:
        self.stack[0] = state
        if not self.helpers:
            return self._kernel(self, attacker)
        workers = self._start_helpers(lambda helper: self._help(helper, state, attacker))
        try:
            status = self._kernel(self, attacker)
        finally:
            self.stop[0] = 2  # the others stop too (a helper that decided the root has already)
            for worker in workers:
                worker.join()
            with self._stop_lock:
                self.stop[0] = 1 if self._halted else 0
        self._collect_helpers()
        for helper in self.helpers:
            if status == PK.UNKNOWN:
                status = helper.status
        if status != PK.UNKNOWN:
            self.ctx[PK.C_ABORTED] = 0  # stopped only because a helper had decided the root
        return status

    def _kernel(self, buffers, attacker: int, stop: Optional[np.ndarray] = None) -> int:
        """One thread's search of the root in `buffers.stack[0]` (the prover's or a helper's),
        until it decides the root or `stop` (the prover's own by default) is raised."""
        return int(PK.prove_kernel(buffers.stack, np.int64(attacker), buffers.ctx, self.tt,
                                   self.stop if stop is None else stop, buffers.moves,
                                   buffers.keys, buffers.pns, buffers.dns, self.busy))

    def _solve_at_once(self, state: np.ndarray, first_attacker: int) -> Optional[int]:
        """Both searches of a solve at once, the threads split between them (the first
        attacker's search gets the extra one of an odd count); a thread whose search is decided
        joins the other.
        A proof of either side's win ends both. The value for the first attacker: +1 it wins,
        -1 the other wins, 0 draw, None stopped."""
        race = _Race(first_attacker, self.threads)
        with self._stop_lock:
            self._race = race  # from here on a stop request reaches the race's searches
        workers = self._start_helpers(lambda helper: self._race_worker(
            helper, state, race, race.start[int(helper.ctx[PK.C_THREAD])]))
        try:
            self._race_worker(self, state, race, race.start[0])
        finally:
            race.end()
            for worker in workers:
                worker.join()
            with self._stop_lock:
                self._race = None
        self._collect_helpers()
        value = race.value()
        if value is not None:
            self.ctx[PK.C_ABORTED] = 0
        return value

    def _race_worker(self, buffers, state: np.ndarray, race: "_Race", attacker: int) -> None:
        """One thread of `_solve_at_once`: searches `attacker`'s win, then the other's while
        undecided; stops when the race is over or a stop was requested (checked before each
        search: a request made before the race was registered raised none of its flags)."""
        try:
            while True:
                attacker = race.next_attacker(attacker)
                if attacker is None or self._halted:
                    return
                buffers.ctx[PK.C_ABORTED] = 0
                buffers.stack[0] = state
                race.record(attacker, self._kernel(buffers, attacker, race.stops[attacker]))
        except BaseException as error:
            race.end()
            if buffers is self:
                raise
            buffers.error = error  # a helper's: handed to the solving thread

    def _help(self, helper: _Helper, state: np.ndarray, attacker: int) -> None:
        helper.stack[0] = state
        try:
            helper.status = self._kernel(helper, attacker)
        except BaseException as error:  # handed to the searching thread
            helper.error = error
        finally:
            self.stop[0] = 2  # the root is decided (or everything is stopping): all stop

    # --- proving ------------------------------------------------------------------------------
    def prove_win(self, position, attacker: int, node_limit: int = 0,
                  time_limit: Optional[float] = None,
                  stop_flag: Optional[np.ndarray] = None) -> tuple[Optional[bool], int]:
        """(True proven / False disproven / None unknown, nodes) for "`attacker` wins"."""
        position = self._position(position)
        if attacker not in (0, 1):
            raise ValueError(f"attacker must be 0 (X) or 1 (O), not {attacker!r}")
        self.load_kernels()
        self.clear()
        self._start(node_limit)
        watchdog = self._watchdog(stop_flag, time_limit)
        try:
            status = self._search(position.state, attacker)
        finally:
            if watchdog is not None:
                watchdog.finish()
        return _as_bool(status), self.nodes + self.helper_nodes

    def solve(self, position, node_limit: int = 0, time_limit: Optional[float] = None,
              stop_flag: Optional[np.ndarray] = None, details: bool = True,
              keep_table: bool = False, likely_winner: Optional[int] = None) -> ProofOutcome:
        """Win, draw or loss of the side to move (see the module docstring); `details=False`
        skips the proof size and the PV. `keep_table` starts from what earlier proofs left in
        the table instead of an empty one (its proven and disproven entries are facts about
        their positions, whatever root they were found under). `likely_winner` (0 X, 1 O) is
        the side whose win is tried first; the side to move's when None. The value is the
        same either way: only the work differs (a right guess needs one search, not two)."""
        if likely_winner not in (None, 0, 1):
            raise ValueError(f"likely_winner must be 0 (X), 1 (O) or None, not {likely_winner!r}")
        self.load_kernels()
        started = time.perf_counter()
        position = self._position(position)
        state = position.state
        side = int(state[S_SIDE])
        if int(state[S_RESULT]) != RESULT_NONE:
            value = _finished_value(int(state[S_RESULT]), side)
            return ProofOutcome(value, _text(value, side), 0, 1, time.perf_counter() - started,
                                [], None)
        if not keep_table:
            self.clear()
        self._start(node_limit)
        watchdog = self._watchdog(stop_flag, time_limit)
        try:
            value = None
            first_attacker = side if likely_winner is None else int(likely_winner)
            win = 1 if first_attacker == side else -1
            if self.helpers and self.at_once and not self.ctx[PK.C_NODE_LIMIT]:
                found = self._solve_at_once(state, first_attacker)
                value = None if found is None else found * win
            else:
                first = self._search(state, first_attacker)
                if first == PK.PROVEN:
                    value = win
                elif first == PK.DISPROVEN:
                    second = self._search(state, 1 - first_attacker)
                    if second == PK.PROVEN:
                        value = -win
                    elif second == PK.DISPROVEN:
                        value = 0
        finally:
            if watchdog is not None:
                watchdog.finish()
        searched = self.nodes
        nodes = searched + self.helper_nodes
        search_seconds = time.perf_counter() - started
        proof_size, pv, walk_nodes = -1, [], 0
        if value is not None and details:
            if not self.user_stopped and (stop_flag is None or not stop_flag[0]):
                self.stop[0] = 0  # a time limit that fired as the search ended: not for the walk
            # The walk keeps to what is left of the time limit (and at least a short grace):
            # the value is proven already; a cut walk only leaves the proof size unknown.
            walk_time = None if time_limit is None else max(
                WALK_GRACE_SECONDS, float(time_limit) - (time.perf_counter() - started))
            watchdog = self._watchdog(stop_flag, walk_time)
            try:
                budget = max(MIN_WALK_BUDGET, nodes)
                self._allow(budget)
                proof_size = self._proof_size(state, side, value)
                self._allow(budget)
                pv = self._principal_variation(state, side, value)
                walk_nodes = self.nodes - searched
            finally:
                if watchdog is not None:
                    watchdog.finish()
        return ProofOutcome(value, _text(value, side), nodes, proof_size,
                            time.perf_counter() - started, pv, pv[0] if pv else None,
                            search_seconds, walk_nodes)

    def _allow(self, budget: int) -> None:
        """Lets the walk re-search up to `budget` more nodes (a stop request still holds)."""
        self.ctx[PK.C_ABORTED] = 0
        self.ctx[PK.C_NODE_LIMIT] = self.nodes + budget

    def _watchdog(self, stop_flag, time_limit) -> Optional[Watchdog]:
        if stop_flag is None and time_limit is None:
            return None
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        watchdog = Watchdog(self._halt, stop_flag, deadline)
        watchdog.start()
        return watchdog

    # --- reading the proof back ---------------------------------------------------------------
    def _proof_size(self, state: np.ndarray, side: int, value: int) -> int:
        if value == 0:
            parts = [(side, PK.DISPROVEN), (1 - side, PK.DISPROVEN)]
        else:
            parts = [(side if value > 0 else 1 - side, PK.PROVEN)]
        total = 0
        for attacker, target in parts:
            size = self._walk(state, attacker, target)
            if size < 0:
                return -1
            total += size
        return total

    def _walk(self, state: np.ndarray, attacker: int, target: int) -> int:
        bits = VISITED_START_BITS
        while True:
            visited = np.zeros(1 << bits, dtype=np.int64)
            self.stack[0] = state
            size = int(PK.proof_size_kernel(self.stack, np.int64(attacker), np.int64(target),
                                            self.ctx, self.tt, self.stop, self.moves, self.keys,
                                            self.pns, self.dns, self.walk_moves, visited))
            if self.ctx[PK.C_WALK_FULL] and bits < VISITED_MAX_BITS:
                bits += 2
                continue
            if self.ctx[PK.C_WALK_FULL] or self.ctx[PK.C_WALK_FAILED] or self.ctx[PK.C_ABORTED]:
                return -1
            return size

    def _choose(self, state: np.ndarray, attacker: int, target: int, moves: list) -> int:
        self.stack[0] = state
        self.candidates[:len(moves)] = moves
        return int(PK.choose_child_kernel(self.stack, np.int64(attacker), np.int64(target),
                                          self.ctx, self.tt, self.stop, self.moves, self.keys,
                                          self.pns, self.dns, self.walk_moves, self.candidates,
                                          np.int64(len(moves))))

    def _principal_variation(self, root: np.ndarray, side: int, value: int) -> list:
        winner = _winner_of(value, side)
        flags = int(self.ctx[PK.C_FLAGS])
        state = root.copy()
        buffer = np.zeros(81, dtype=np.int64)
        pv = []
        while int(state[S_RESULT]) == RESULT_NONE:
            mover = int(state[S_SIDE])
            count = K.generate_moves(state, buffer)
            legal = [int(move) for move in buffer[:count]]
            if winner is None:
                # a draw: a move after which the opponent is proven not to win
                move = self._choose(state, 1 - mover, PK.DISPROVEN, legal)
            elif mover == winner:
                move = int(K.winning_move(state))
                if move < 0:
                    safe = PK.node_moves(state, buffer, flags)
                    move = self._choose(state, winner, PK.PROVEN,
                                        [int(m) for m in buffer[:safe]])
            else:
                move = self._stubborn_reply(state, winner, legal)
            if move < 0:
                break  # the proof could not be re-established within the walk budget
            pv.append(move)
            K.make_move(state, move)
        return pv

    def _stubborn_reply(self, state: np.ndarray, winner: int, legal: list) -> int:
        """The loser's move whose (proven) child took the most work to prove; a move that
        loses statically only when every move does."""
        flags = int(self.ctx[PK.C_FLAGS])
        best, best_score = legal[0], -1
        child = state.copy()
        for move in legal:
            child[:] = state
            K.make_move(child, move)
            if PK.static_value(child, np.int64(winner), flags) != PK.UNKNOWN:
                score = 0
            else:
                score = 1 + int(PK.entry_work(child, np.int64(winner), self.ctx, self.tt))
            if score > best_score:
                best, best_score = move, score
        return best


def analyse_game(prover: Prover, positions: list, time_limit: Optional[float] = None,
                 stop_flag: Optional[np.ndarray] = None) -> Iterator[tuple[int, ProofOutcome]]:
    """Solves `positions` (a game's, in order) from the last one backwards on one table, so
    that each proof starts from what the later ones found; yields (index, outcome) as each is
    known (values only: no proof sizes or PVs). `time_limit` applies to each position; stops
    early when `stop_flag` is raised or `prover.request_stop()` is called.

    The winner of the position after a move is the likely winner of the position before it
    (the mover either kept the win or let it pass), so that side's win is tried first: a right
    guess saves the disproof of the mover's win."""
    prover.clear()
    likely_winner = None
    for index in range(len(positions) - 1, -1, -1):
        outcome = prover.solve(positions[index], time_limit=time_limit, stop_flag=stop_flag,
                               details=False, keep_table=True, likely_winner=likely_winner)
        yield index, outcome
        likely_winner = _winner(outcome, positions[index])
        if prover.user_stopped or (stop_flag is not None and stop_flag[0]):
            return


def _winner(outcome: ProofOutcome, position) -> Optional[int]:
    """The proven winner of `position` (see `_winner_of`)."""
    return _winner_of(outcome.value, int(position.state[S_SIDE]))


def _winner_of(value: Optional[int], side: int) -> Optional[int]:
    """The winner (0 X, 1 O) of a value from `side`'s view; None for a draw or unknown."""
    if not value:
        return None
    return side if value > 0 else 1 - side


def _as_bool(status: int) -> Optional[bool]:
    if status == PK.PROVEN:
        return True
    if status == PK.DISPROVEN:
        return False
    return None


def _finished_value(result: int, side: int) -> int:
    if result == DRAWN:
        return 0
    winner = 0 if result == X_WON else 1
    assert result in (X_WON, O_WON)
    return 1 if winner == side else -1


def _text(value: Optional[int], side: int) -> str:
    if value is None:
        return "unknown"
    if value == 0:
        return "draw"
    return f"{SIDES[_winner_of(value, side)]} wins"


def solve_interruptibly(prover: Prover, position, time_limit: Optional[float] = None
                        ) -> tuple[ProofOutcome, bool]:
    """`prover.solve` under `run_interruptibly`: (outcome, interrupted)."""
    return run_interruptibly(prover, lambda: prover.solve(position, time_limit=time_limit))


def run_interruptibly(prover: Prover, work: Callable[[], T]) -> tuple[T, bool]:
    """`work()` (which uses `prover`) in a worker thread, so that Ctrl-C (which Python only sees
    between bytecodes of the main thread) stops the search instead of waiting for it:
    (what work returned, interrupted)."""
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["outcome"] = work()
        except BaseException as error:  # handed to the caller's thread
            box["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    interrupted = False
    while not done.is_set():
        try:
            done.wait(0.1)  # an Event, not Thread.join: an interrupted join can lose the thread
        except KeyboardInterrupt:
            interrupted = True
        if interrupted:  # asked again until it ends: a solve that had not started clears it
            prover.request_stop()
    if "error" in box:
        raise box["error"]
    return box["outcome"], interrupted


def format_outcome(position: UtttPosition, outcome: ProofOutcome) -> str:
    """The one-line report of `mallard prove`."""
    proof = f"{outcome.proof_size:,}" if outcome.proof_size >= 0 else "?"
    line = (f"{outcome.text}  proof {proof} nodes  {outcome.nodes:,} nodes searched  "
            f"{outcome.seconds:.2f} s")
    moves = []
    current = position
    for move in outcome.pv:
        moves.append(current.format_move(move))
        current = current.play(move)
    return line + "  pv: " + (" ".join(moves) if moves else "-")


__all__ = ["ProofOutcome", "Prover", "analyse_game", "format_outcome", "run_interruptibly",
           "solve_interruptibly"]


def prove(position: UtttPosition, node_limit: int) -> Optional[GameResult]:
    """The game's result under perfect play when proven within `node_limit` nodes, else None
    (a referee's `-adjudicate solved`)."""
    outcome = Prover(hash_mb=16).solve(position, node_limit=node_limit)
    if outcome is None or outcome.value is None:
        return None
    if outcome.value == 0:
        return GameResult(None, Proven.DRAW)
    return GameResult(_winner(outcome, position), Proven.WIN)

