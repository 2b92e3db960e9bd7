"""Self-play matches between two configurations of the Duck Chess engine, in process.

This is the measuring stick for evaluation terms and search features (`mallard bench
duck-match`): both sides search the same number of nodes per move, every opening is played twice
with colours swapped, and a game ends on a king capture, a side without moves, a claimable draw
(threefold repetition, 50 moves) or, as a draw, after `max_plies`. It plays through
`DuckPosition`, so the referee is the rules module. Tournaments between engine processes belong
to `tournaments/`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional

from mallard.engines.base import Limits
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import DuckSearcher
from mallard.engines.workpool import LocalPool, WorkPool


def random_opening(game, rng: random.Random, plies: int):
    position = game.start_position()
    for _ in range(plies):
        moves = position.legal_moves()
        if not moves:
            break
        position = position.play(rng.choice(moves))
    return position


def play_game(start, white, black, nodes: int, max_plies: int) -> tuple[Optional[int], str]:
    """(winner 0/1 or None, reason) of one game from `start` between two searchers."""
    position = start
    for _ in range(max_plies):
        result = position.result(claim_draw=True)
        if result is not None:
            return result.winner, result.reason
        searcher = white if position.side_to_move == 0 else black
        move = searcher.search(position, Limits(nodes=nodes)).best_move
        position = position.play(move)
    result = position.result(claim_draw=True)
    if result is not None:
        return result.winner, result.reason
    return None, f"{max_plies} plies"


def _play_pair(_shared, terms_a: int, terms_b: int, seed: int, nodes: int, max_plies: int,
               opening_plies: int) -> list[float]:
    """Both colours of one opening; returns the points of configuration A in each game."""
    game = DuckGame()
    start = random_opening(game, random.Random(seed), opening_plies)
    a = DuckSearcher(game, hash_mb=16, eval_terms=terms_a)
    b = DuckSearcher(game, hash_mb=16, eval_terms=terms_b)
    points = []
    for a_is_white in (True, False):
        a.clear()
        b.clear()
        winner, _ = play_game(start, a if a_is_white else b, b if a_is_white else a, nodes,
                              max_plies)
        if winner is None:
            points.append(0.5)
        else:
            points.append(1.0 if (winner == 0) == a_is_white else 0.0)
    return points


@dataclass
class MatchResult:
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / max(1, self.games)

    def elo(self) -> tuple[float, float]:
        """Elo difference of A over B and the half-width of its 95% interval, as cutechess
        gives them: +/-inf for a score of 1 or 0, a nan half-width where the interval leaves
        [0, 1] or there are no games (no Elo stands for such a score)."""
        if self.games == 0:
            return math.nan, math.nan
        s = self.score
        variance = (self.wins * (1 - s) ** 2 + self.draws * (0.5 - s) ** 2
                    + self.losses * s ** 2) / self.games
        margin = 1.96 * math.sqrt(variance / self.games)
        upper, lower = _elo_of(s + margin), _elo_of(s - margin)
        return _elo_of(s), (upper - lower) / 2 if math.isfinite(upper - lower) else math.nan


def _elo_of(score: float) -> float:
    if not 0.0 <= score <= 1.0:
        return math.nan
    if score in (0.0, 1.0):
        return math.inf if score else -math.inf
    return -400 * math.log10(1 / score - 1)


def elo_text(elo: float, margin: float) -> str:
    """`+35 +- 12`; `inf +- nan` for a clean sweep; `0`, never `-0`."""
    if math.isnan(elo):
        figure = "nan"
    elif math.isinf(elo):
        figure = "inf" if elo > 0 else "-inf"
    else:
        figure = f"{round(elo):+d}" if round(elo) else "0"
    return f"{figure} +- {'nan' if math.isnan(margin) else f'{margin:.0f}'}"


def match(terms_a: int, terms_b: int, pairs: int, nodes: int, seed: int = 1, jobs: int = 1,
          max_plies: int = 200, opening_plies: int = 4,
          pool: Optional[WorkPool] = None) -> MatchResult:
    """`pairs` openings, each played with both colours, on `pool` (default: `jobs` local worker
    processes); every game is fixed by its seed and node limits, so where it runs does not
    change it."""
    items = [(terms_a, terms_b, seed * 100003 + i, nodes, max_plies, opening_plies)
             for i in range(pairs)]
    pool = pool or LocalPool(max(1, jobs))
    points = [p for _, pair in pool.imap_unordered(_play_pair, None, items) for p in pair]
    return MatchResult(points.count(1.0), points.count(0.5), points.count(0.0))
