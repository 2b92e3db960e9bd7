"""The Duck Chess engine behind the common interface: iterative deepening over the exception search.

`DuckSearcher.search` runs `search_kernels.search_root` once per depth (aspiration window around
the previous score, widened on failure), orders the root moves by the last iteration, reports
each finished iteration through `on_info`, and stops on the caller's flag, a deadline or a node
limit through a watchdog thread (the kernels poll one flag array with the GIL released).

The move played carries the duck square the root search chose (see `search_kernels`); when every
free square is as good, the duck goes where it blocks most of the opponent's replies. The PV is
read from the transposition table, each move with its duck, and is cut where it stops being legal.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from engines.base import Limits, Score, Searcher, SearchInfo, SearchResult
from engines.duck import kernels as K
from engines.duck import search_kernels as SK
from engines.duck.board import (
    MAX_MOVES,
    MAX_PLY,
    PIECE_MOVE_MASK,
    S_DEPTH,
    S_DUCK,
    S_KEY,
    UNDO_SIZE,
    with_duck,
)
from engines.duck.evaluation import TERM_MOBILITY, TERM_PAWNS
from engines.duck.rules import DEFAULT_HASH_MB, MAX_HASH_MB
from engines.search_common import (
    C_ABORTED,
    C_NODE_LIMIT,
    C_NODES,
    C_SELDEPTH,
    INF,
    MATE,
    widened_window,
)
from engines.search_common import to_score as search_score
from engines.tables import hashfull, install_hash_table
from engines.timeman import clock_start, deadline
from engines.watchdog import Watchdog, elapsed_ms

# mobility and pawn structure: the terms self-play showed to gain (README, "Evaluation terms")
DEFAULT_TERMS = TERM_MOBILITY | TERM_PAWNS
MAX_DEPTH = 64
ASPIRATION = 40


class SearchBuffers:
    """The arrays one search thread works in; the table survives between searches."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB):
        self.undo = np.zeros(MAX_PLY * UNDO_SIZE, dtype=np.int64)
        self.moves = np.zeros(MAX_PLY * MAX_MOVES, dtype=np.int64)
        self.order = np.zeros(MAX_PLY * MAX_MOVES, dtype=np.int64)
        self.ex = np.zeros(MAX_PLY * SK.EX_STRIDE, dtype=np.int64)
        self.ctx = np.zeros(SK.CTX_SIZE, dtype=np.int64)
        self.stop = np.zeros(1, dtype=np.int64)
        self.set_hash(hash_mb)

    def set_hash(self, hash_mb: int) -> None:
        """A fresh table of `hash_mb` MB, its pages touched now (not inside a timed search);
        TableSizeError (the old table kept) when refused."""
        entries = install_hash_table(self, "tt", hash_mb, MAX_HASH_MB, SK.TT_WORDS, 1024)
        self.ctx[SK.C_TT_MASK] = entries - 1

    def clear(self) -> None:
        self.tt[:] = 0
        self.ctx[SK.C_KILLERS:] = 0

    def start(self, node_limit: int = 0, quiescence: bool = True,
              quiescence_ply_limit: int = SK.MAX_SEARCH_PLY, same_depth_only: bool = False,
              eval_terms: int = DEFAULT_TERMS):
        self.ctx[C_NODES] = 0
        self.ctx[SK.C_QNODES] = 0
        self.ctx[C_ABORTED] = 0
        self.ctx[C_SELDEPTH] = 0
        self.ctx[C_NODE_LIMIT] = node_limit
        self.ctx[SK.C_QSEARCH] = int(quiescence)
        self.ctx[SK.C_QUIESCENCE_PLY_LIMIT] = quiescence_ply_limit
        self.ctx[SK.C_TT_SAME_DEPTH] = int(same_depth_only)
        self.ctx[SK.C_EVAL_TERMS] = eval_terms
        self.stop[0] = 0
        SK.reset_lists(self.ex)

    def root(self, state, depth, alpha, beta, root_moves, values, ducks) -> int:
        return int(SK.search_root(state, self.undo, self.moves, self.order, self.ex, self.ctx,
                                  self.tt, self.stop, depth, alpha, beta, root_moves, values,
                                  ducks, len(root_moves)))

    @property
    def nodes(self) -> int:
        return int(self.ctx[C_NODES])


def root_state(position) -> np.ndarray:
    state = position.state.copy()
    state[S_DEPTH] = 0
    return state


def exception_value(position, depth: int, quiescence: bool, quiescence_ply_limit: int,
                    buffers: Optional[SearchBuffers] = None,
                    eval_terms: int = DEFAULT_TERMS) -> tuple[int, int]:
    """(value, nodes) of one fixed-depth, full-window exception search from a fresh table."""
    buffers = buffers or SearchBuffers(1)
    buffers.clear()
    buffers.start(quiescence=quiescence, quiescence_ply_limit=quiescence_ply_limit,
                  same_depth_only=True, eval_terms=eval_terms)
    root_moves = np.array(position.piece_moves(), dtype=np.int64)
    values = np.zeros(len(root_moves), dtype=np.int64)
    ducks = np.zeros(len(root_moves), dtype=np.int64)
    buffers.root(root_state(position), depth, -INF, INF, root_moves, values, ducks)
    return int(values.max()), buffers.nodes


def enumeration_value(position, depth: int, quiescence: bool, quiescence_ply_limit: int,
                      eval_terms: int = DEFAULT_TERMS) -> tuple[int, int]:
    """(value, nodes) of the plain search over every (piece move, duck square) pair."""
    from engines.duck.enumeration import enumerate_search

    buffers = SearchBuffers(1)
    buffers.start(quiescence=quiescence, quiescence_ply_limit=quiescence_ply_limit,
                  eval_terms=eval_terms)
    value = enumerate_search(root_state(position), buffers.undo, buffers.moves, buffers.ctx,
                             0, depth, -INF, INF, quiescence)
    return int(value), buffers.nodes


def to_score(value: int) -> Score:
    """Centipawns, or mate in moves of the side to move (a king capture or a fowling win)."""
    return search_score(value, SK.MATE_BOUND)


class DuckSearcher(Searcher):
    def __init__(self, game, hash_mb: int = DEFAULT_HASH_MB, quiescence: bool = True,
                 eval_terms: int = DEFAULT_TERMS):
        self.game = game
        self.buffers = SearchBuffers(hash_mb)
        self.quiescence = quiescence  # False: leaves are evaluated as they stand (tests)
        self.eval_terms = eval_terms

    def set_hash(self, hash_mb: int) -> None:
        """A fresh table of `hash_mb` MB (TableSizeError, the old one kept, when refused)."""
        self.buffers.set_hash(hash_mb)

    def clear(self) -> None:
        self.buffers.clear()

    def search(self, position, limits: Limits = Limits(), stop_flag: Optional[np.ndarray] = None,
               on_info: Optional[Callable[[SearchInfo], None]] = None) -> SearchResult:
        """Iterative deepening; with `limits.multipv` > 1 each depth searches line k over the
        moves the lines before it did not take (full window); `limits.searchmoves` restricts the
        root's piece moves (and the duck, when the chosen square is not among the listed ones)."""
        started = clock_start(limits)
        if position.result() is not None:
            return SearchResult(None, score=Score.mate(0))
        buffers = self.buffers
        buffers.start(node_limit=limits.nodes or 0, quiescence=self.quiescence,
                      same_depth_only=not self.quiescence, eval_terms=self.eval_terms)
        state = root_state(position)
        allowed = {int(m) & PIECE_MOVE_MASK for m in limits.searchmoves}
        root_moves = np.array([m for m in position.piece_moves()
                               if not allowed or int(m) in allowed] or position.piece_moves(),
                              dtype=np.int64)
        values = np.zeros(len(root_moves), dtype=np.int64)
        ducks = np.full(len(root_moves), -1, dtype=np.int64)
        max_depth = limits.depth or (
            2 * limits.mate if limits.mate and limits.mate > 0 else MAX_DEPTH)
        max_depth = max(1, min(max_depth, MAX_DEPTH))
        lines_wanted = max(1, min(limits.multipv, len(root_moves)))
        watchdog = Watchdog(lambda: buffers.stop.__setitem__(0, 1), stop_flag,
                            deadline(limits, position.side_to_move, started))
        watchdog.start()
        best_move, best_value, completed_depth, pv = None, 0, 0, []
        try:
            for depth in range(1, max_depth + 1):
                lines = []  # (value, full move) of each finished line at this depth
                for line in range(lines_wanted):
                    rest = slice(line, None)
                    if line == 0 and depth > 2:
                        alpha, beta = best_value - ASPIRATION, best_value + ASPIRATION
                    else:
                        alpha, beta = -INF, INF
                    if not self._iterate(state, depth, alpha, beta, root_moves[rest],
                                         values[rest], ducks[rest]):
                        break
                    order = np.argsort(-values[rest], kind="stable") + line
                    root_moves[rest], values[rest], ducks[rest] = \
                        root_moves[order], values[order], ducks[order]
                    move = self._full_move(position, int(root_moves[line]), int(ducks[line]),
                                           limits.searchmoves)
                    lines.append((int(values[line]), move))
                if len(lines) < lines_wanted:
                    break  # stopped inside this depth: keep the last finished one
                best_value, best_move = lines[0]
                completed_depth = depth
                pv = self._principal_variation(position, best_move)
                if on_info:
                    for number, (value, move) in enumerate(lines, 1):
                        line_pv = pv if number == 1 else self._principal_variation(position, move)
                        on_info(SearchInfo(depth=depth, seldepth=int(buffers.ctx[C_SELDEPTH]),
                                           score=to_score(value), nodes=buffers.nodes,
                                           time_ms=elapsed_ms(started), pv=line_pv,
                                           hashfull=self._hashfull(),
                                           multipv=number if lines_wanted > 1 else None))
                if abs(best_value) > SK.MATE_BOUND and depth >= MATE - abs(best_value):
                    break  # a forced result no deeper search can change
        finally:
            watchdog.finish()
        if best_move is None:  # stopped before depth 1 finished: any legal move
            best_move = self._full_move(position, int(root_moves[0]), -1, limits.searchmoves)
            pv = [best_move]
        return SearchResult(best_move, pv[1] if len(pv) > 1 else None, to_score(best_value),
                            pv, completed_depth, buffers.nodes, elapsed_ms(started),
                            stopped=bool(buffers.ctx[C_ABORTED]))

    def _iterate(self, state, depth: int, alpha: int, beta: int, root_moves: np.ndarray,
                 values: np.ndarray, ducks: np.ndarray) -> bool:
        """One depth over the given root moves, re-searched with a wider window until the best
        value falls inside it; False when the search was stopped."""
        buffers = self.buffers
        delta = ASPIRATION
        while True:
            done = buffers.root(state, depth, alpha, beta, root_moves, values, ducks)
            if done < len(root_moves) or buffers.ctx[C_ABORTED]:
                return False
            delta *= 4
            window = widened_window(int(values.max()), alpha, beta, delta, INF)
            if window is None:
                return True
            alpha, beta = window

    def _full_move(self, position, piece: int, duck: int, searchmoves=()) -> int:
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

    def _principal_variation(self, position, first_move: int) -> list:
        pv = [first_move]
        seen = {position.key}
        current = position.play(first_move)
        tt, ctx = self.buffers.tt, self.buffers.ctx
        while len(pv) < MAX_DEPTH and current.result() is None and current.key not in seen:
            seen.add(current.key)
            piece, _, _ = SK.probe(tt, ctx, current.state[S_KEY])
            if piece == 0 or piece not in current.piece_moves():
                break
            # the duck: where the reply's node is lowest, unless that is where it stands now
            # (-1, the most blocking square, when the reply is not in the table)
            child = root_state(current)
            undo = np.zeros(2 * UNDO_SIZE, dtype=np.int64)
            K.push_piece_move(child, undo, piece & PIECE_MOVE_MASK)
            _, rx, rx2 = SK.probe(tt, ctx, child[S_KEY])
            duck = rx2 if rx == current.duck and rx >= 0 else rx
            move = self._full_move(current, piece, duck)
            pv.append(move)
            current = current.play(move)
        return pv

    def _hashfull(self) -> int:
        return hashfull(SK.used_entries(self.buffers.tt))
