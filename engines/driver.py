"""The one search driver: iterative deepening with aspiration windows, MultiPV and searchmoves,
over a game's root search (`RootSearch`).

A game gives the driver, for one search from one position, a `RootSearch`: one iteration of its
alpha-beta root search over an ordered list of root moves within a window, the line of a root
move (its principal variation), its table's fill, and the conversion of its integer scores to
`mallard.engines.base.Score`. `deepen` searches one depth after another. At each depth, line k of
MultiPV searches the root moves the lines before it did not take: line 1 in an aspiration
window around the previous depth's score, re-searched with a window widened on the side it
failed until the score falls inside, the other lines with the full window. After each line the
remaining moves are sorted by value; each finished depth is reported line by line through
`on_info`. A watchdog thread (`mallard.engines.watchdog`) turns the caller's stop flag and the
deadline into the root search's own stop request; the kernels also read the deadline themselves and
keep the node limit (`count_node`).

Invariants:
- Scores are the kernels' integers from the side to move (`mallard.engines.search_common`): a value
  above the game's `mate_bound` is a forced win `MATE - value` plies away, and `INF` bounds
  every window.
- A depth counts only when all its lines finished; a stopped search keeps the last finished
  depth. A game whose `finish_first_depth` is set always finishes depth 1's first line
  (whatever stops the search), so that a stopped search still has a searched move.
- Sorting is stable: moves of equal value keep their order (the previous depth's).

Threads (lazy SMP): `deepen` may be given helpers, more RootSearch objects over the same position
whose searches share the root's transposition table. Each helper deepens on a thread of its own
(every other one a ply deeper, `depth_offset`, so that they do not walk in step) while the root
search runs; what they find reaches the root only through the table. They start once the root
has finished HELPERS_FROM_DEPTH: the first depths take a millisecond or less, and helpers'
Python work then only takes the interpreter from the root's. They are stopped and joined before
`deepen` returns; the nodes reported are everyone's.
"""

from __future__ import annotations

import abc
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from mallard.engines.base import Limits, Score, SearchInfo
from mallard.engines.search_common import (
    C_ABORTED,
    C_NODES,
    C_SELDEPTH,
    INF,
    MATE,
    STOP_DEADLINE,
    STOP_FLAG,
    kernel_deadline,
    widened_window,
)
from mallard.engines.timeman import MAX_STRETCH, TimeUse, move_budget_ms
from mallard.engines.timeman import deadline as move_deadline
from mallard.engines.watchdog import Watchdog, elapsed_ms


class RootSearch(abc.ABC):
    """A game's root search from one position, as `deepen` drives it.

    `ctx` is the kernels' context array (it starts with the header of
    `mallard.engines.search_common`: nodes, aborted, node limit, selective depth) and `stop` the
    flag array they poll. Each root move has a tag, an integer the root search may set along with
    its value (Duck Chess: the duck square to play with the move); the driver keeps tags with their
    moves when it sorts.
    """

    mate_bound: int                  # a score beyond +-mate_bound is a forced result
    aspiration: int                  # the half-width of a first aspiration window
    aspiration_bound: int = INF      # windows only around scores within +-aspiration_bound
    max_depth: int
    finish_first_depth: bool = False
    # on a clock (no fixed move time): no new depth once this share of the time left is gone
    soft_time_share: Optional[float] = None
    # on a clock: `mallard.engines.timeman.TimeUse` decides when to stop deepening, and the hard
    # limit (`deadline`) is `MAX_STRETCH` budgets
    manages_time: bool = False
    depth_offset: int = 0            # a helper searches each depth this much deeper

    ctx: np.ndarray
    stop: np.ndarray

    @property
    def nodes(self) -> int:
        return int(self.ctx[C_NODES])

    @property
    def aborted(self) -> bool:
        return bool(self.ctx[C_ABORTED])

    @property
    def seldepth(self) -> int:
        return int(self.ctx[C_SELDEPTH])

    def request_stop(self) -> None:
        self.stop[STOP_FLAG] = 1

    def deadline(self, limits: Limits, side: int, started: float) -> Optional[float]:
        """When a search of this root must stop, the `deadline` to give `deepen` (None: no time
        limit): a search that manages its time may run to `MAX_STRETCH` budgets."""
        return move_deadline(limits, side, started, MAX_STRETCH if self.manages_time else 1.0)

    @abc.abstractmethod
    def depth_for_mate(self, mate: int) -> int:
        """The depth that finds a win in `mate` moves of the side to move (`go mate`)."""

    def order(self, moves: np.ndarray) -> None:
        """Order the root moves in place before the first depth (as given, by default)."""

    @abc.abstractmethod
    def search(self, depth: int, alpha: int, beta: int, moves: np.ndarray, values: np.ndarray,
               tags: np.ndarray, stoppable: bool) -> int:
        """One iteration over `moves` in their order within (alpha, beta): fills `values` (and
        `tags`), returns how many moves finished. With `stoppable` False nothing stops it."""

    @abc.abstractmethod
    def line(self, position, moves: np.ndarray, tags: np.ndarray, index: int) -> tuple[Any, Any]:
        """(the move played for root move `index`, a seed of its line), right after the search
        of that line; the seed is what `principal_variation` needs later."""

    @abc.abstractmethod
    def principal_variation(self, position, move, seed) -> list:
        """The line that starts with `move` (found with `seed`)."""

    @abc.abstractmethod
    def to_score(self, value: int, depth: int) -> Score:
        """A root value of a finished `depth` as a Score."""

    @abc.abstractmethod
    def hashfull(self) -> int:
        """Per mille of the table in use."""

    def depth_done(self, depth: int, value: int, move, pv: list, limits: Limits) -> bool:
        """Called at each finished depth (before its report): True when no deeper search is
        wanted for a reason of the game's own."""
        return False


HELPERS_FROM_DEPTH = 3  # helper threads start once the root has finished this depth


@dataclass
class Deepening:
    """What `deepen` found: the last finished depth's value, move and line (`move` None when
    depth 1 did not finish), the last report made, and whether the search was stopped."""

    value: int = 0
    move: Any = None
    pv: list = field(default_factory=list)
    depth: int = 0
    last_info: Optional[SearchInfo] = None
    stopped: bool = False
    nodes: int = 0  # the root's and the helpers'


def deepen(root: RootSearch, position, limits: Limits, moves: np.ndarray, started: float,
           stop_flag: Optional[np.ndarray], deadline: Optional[float],
           on_info: Optional[Callable[[SearchInfo], None]] = None,
           extra_nodes: int = 0, helpers: Sequence[RootSearch] = (),
           is_helper: bool = False) -> Deepening:
    """Iterative deepening over the root moves `moves` (sorted in place as the search goes).

    `started` is when the move's time began, `deadline` when the search must stop (None: no
    time limit); `extra_nodes` are nodes spent before (reported in the totals); `helpers` search
    beside the root on threads of their own (see the module docstring); `is_helper`: this is one
    of them, whose line (`Deepening.pv`) is its move alone unless it found a forced result."""
    values = np.zeros(len(moves), dtype=np.int64)
    tags = np.full(len(moves), -1, dtype=np.int64)
    mate_depth = root.depth_for_mate(limits.mate) if limits.mate and limits.mate > 0 else None
    max_depth = max(1, min(limits.depth or mate_depth or root.max_depth, root.max_depth))
    lines_wanted = max(1, min(limits.multipv or 1, len(moves)))
    soft_ms = None
    budget = move_budget_ms(limits, position.side_to_move)
    on_clock = budget is not None and limits.movetime is None
    if root.soft_time_share is not None and on_clock:
        soft_ms = (budget - elapsed_ms(started)) * root.soft_time_share
    time_use = TimeUse(budget, elapsed_ms(started)) if root.manages_time and on_clock else None
    searching = time.perf_counter()
    found = Deepening()
    watchdog = Watchdog(root.request_stop, stop_flag, deadline)
    watchdog.start()
    root.stop[STOP_DEADLINE] = kernel_deadline(deadline)
    # helpers keep no clock of their own (the root stops them) and search one line
    helper_limits = Limits(depth=limits.depth, mate=limits.mate)
    threads = [threading.Thread(target=_help, name=f"mallard-helper-{number}", daemon=True,
                                args=(helper, position, helper_limits, moves.copy(), started,
                                      deadline))
               for number, helper in enumerate(helpers, 1)]

    def nodes() -> int:
        return root.nodes + sum(helper.nodes for helper in helpers) + extra_nodes

    try:
        root.order(moves)
        for depth in range(1, max_depth + 1):
            if depth > 1 and (root.stop[STOP_FLAG] or root.aborted or (
                    soft_ms is not None and elapsed_ms(searching) > soft_ms)):
                break
            unstoppable = root.finish_first_depth and depth == 1
            lines = []  # (value, move, seed) of each finished line at this depth
            for line in range(lines_wanted):
                rest = slice(line, None)
                if line == 0 and depth > 2 and abs(found.value) <= root.aspiration_bound:
                    alpha, beta = found.value - root.aspiration, found.value + root.aspiration
                else:
                    alpha, beta = -INF, INF
                if not _iterate(root, depth, alpha, beta, moves[rest], values[rest], tags[rest],
                                stoppable=not (unstoppable and line == 0)):
                    break
                order = np.argsort(-values[rest], kind="stable") + line
                moves[rest], values[rest], tags[rest] = moves[order], values[order], tags[order]
                move, seed = root.line(position, moves, tags, line)
                lines.append((int(values[line]), move, seed))
            if not lines or (len(lines) < lines_wanted and not unstoppable):
                break  # stopped inside this depth: keep the last finished one
            found.value, found.move, seed = lines[0]
            found.depth = depth
            # a helper's line is never reported: walking it would take the interpreter from
            # the root's (5-9% of a 45 ms search went to the root's lines); only a forced
            # result's is walked, which a game may keep (`depth_done`: UTTT's proofs)
            found.pv = root.principal_variation(position, found.move, seed) \
                if not is_helper or abs(found.value) > root.mate_bound else [found.move]
            enough = root.depth_done(depth, found.value, found.move, found.pv, limits)
            if on_info:
                for number, (value, move, line_seed) in enumerate(lines, 1):
                    line_pv = found.pv if number == 1 else \
                        root.principal_variation(position, move, line_seed)
                    found.last_info = SearchInfo(
                        depth=depth, seldepth=root.seldepth, score=root.to_score(value, depth),
                        nodes=nodes(), time_ms=elapsed_ms(started), pv=line_pv,
                        hashfull=root.hashfull(), multipv=number if lines_wanted > 1 else None)
                    on_info(found.last_info)
            if enough or (time_use is not None and
                          time_use.enough(elapsed_ms(started), found.move, found.value)):
                break
            if abs(found.value) > root.mate_bound and depth >= MATE - abs(found.value):
                break  # a forced result no deeper search can change
            if depth == HELPERS_FROM_DEPTH and depth < max_depth:
                for thread in threads:
                    thread.start()
    finally:
        root.stop[STOP_DEADLINE] = 0
        watchdog.finish()
        for helper in helpers:
            helper.request_stop()
        for thread in threads:
            if thread.ident is not None:  # started
                thread.join()
    found.stopped = root.aborted or bool(root.stop[STOP_FLAG])
    found.nodes = nodes()
    return found


def _help(helper: RootSearch, position, limits: Limits, moves: np.ndarray, started: float,
          deadline: Optional[float]) -> None:
    """A helper's own deepening, until the root search stops it."""
    try:
        deepen(helper, position, limits, moves, started, None, deadline, is_helper=True)
    except Exception:  # noqa: BLE001 - a helper only feeds the table; the root search answers
        helper.request_stop()


def _iterate(root: RootSearch, depth: int, alpha: int, beta: int, moves: np.ndarray,
             values: np.ndarray, tags: np.ndarray, stoppable: bool) -> bool:
    """One depth over the given root moves, re-searched with a wider window until the best value
    falls inside it; False when the search was stopped."""
    delta = root.aspiration
    while True:
        done = root.search(depth + root.depth_offset, alpha, beta, moves, values, tags,
                           stoppable)
        if done < len(moves) or (stoppable and root.aborted):
            return False
        delta *= 4
        window = widened_window(int(values.max()), alpha, beta, delta, INF)
        if window is None:
            return True
        alpha, beta = window
