"""Skill Level: weaker players made from the full searcher, for people and for level ladders.

Level `MAX_LEVEL` (20) is the engine itself. Below it a `SkilledSearcher` plays as a weaker
player would: it sees less, and it chooses less well among what it sees.

- *Seeing less*: a node budget that doubles every `SkillProfile.levels_per_doubling` levels
  (the alpha-beta games), or, for a solver that knows every outcome, a horizon in plies beyond
  which wins and losses look unknown (Connect Four).
- *Choosing less well*: the search scores its best `SkillProfile.lines` moves (MultiPV), and the
  level adds to each score a random amount of up to `spread_cp * ((MAX_LEVEL - level) /
  MAX_LEVEL) ** spread_power` centipawns before taking the highest. A move is therefore chosen
  over a better one only when it is at most that much worse: weak levels err by small amounts
  often, never by a mate they see. Moves the search cannot tell apart (Connect Four's unknowns)
  are ranked by the profile's `prior` (a static preference, such as the centre column), not by
  the solver's hidden order.

Invariants: the move played is always one the search scored, or the searcher's own when it
scored none (stopped at once); a win seen within the horizon is always played, so a level
never gives away a win it sees; level 20 is never wrapped.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Optional

from mallard.engines.base import Limits, Score, ScoreKind, SearchInfo, SearchResult

MAX_LEVEL = 20
MIN_LEVEL = 0
WON = 1_000_000  # a seen win's value, less its length in plies; a seen loss is its negative


@dataclass(frozen=True)
class SkillProfile:
    """How a game's engine is weakened (declared once, in the game's `GameEntry.skill`).

    `nodes_at_zero`: the node budget of level 0 (None: no budget); it doubles every
    `levels_per_doubling` levels. A search checks its budget only every so many nodes (its
    kernels' poll interval), so level 0's budget must be at least that. `horizon_at_zero`: the
    plies a level-0 search sees wins and losses within (None: all it finds), `horizon_per_level`
    more per level. `lines`: how many
    best moves are compared (0: all legal moves). `spread_cp`: the noise at level 0, which
    shrinks to none at level 20 as the `spread_power` of the levels left.
    `prior(position, move)`: centipawns added to every candidate, the preference among moves the
    search cannot tell apart."""

    spread_cp: int
    lines: int = 4
    nodes_at_zero: Optional[int] = None
    levels_per_doubling: float = 2.0
    horizon_at_zero: Optional[int] = None
    horizon_per_level: float = 0.0
    prior: Optional[Callable[[Any, Any], int]] = None
    spread_power: float = 1.0

    def node_budget(self, level: int) -> Optional[int]:
        if self.nodes_at_zero is None:
            return None
        return int(self.nodes_at_zero * 2 ** (level / self.levels_per_doubling))

    def horizon(self, level: int) -> Optional[int]:
        if self.horizon_at_zero is None:
            return None
        return self.horizon_at_zero + int(self.horizon_per_level * level)

    def spread(self, level: int) -> float:
        return self.spread_cp * ((MAX_LEVEL - level) / MAX_LEVEL) ** self.spread_power


def seen_value(score: Optional[Score], horizon: Optional[int]) -> Optional[int]:
    """A line's score as one number for comparing lines: centipawns, or ±(WON - plies) for a win
    or loss seen within `horizon` plies (one beyond it counts 0, unknown). None: no score."""
    if score is None:
        return None
    if score.kind is not ScoreKind.MATE:
        return score.value
    plies = 2 * score.value - 1 if score.value > 0 else -2 * score.value
    if horizon is not None and plies > horizon:
        return 0
    return WON - plies if score.value > 0 else -(WON - plies)


class SkilledSearcher:
    """The searcher `inner` playing at `level` (< MAX_LEVEL); `search` has the searcher's
    signature, so a session can use either. `rng` draws the choices (seed it to replay)."""

    def __init__(self, inner, profile: SkillProfile, level: int,
                 rng: Optional[random.Random] = None):
        if not MIN_LEVEL <= level < MAX_LEVEL:
            raise ValueError(f"a skill level below {MAX_LEVEL} is {MIN_LEVEL} to "
                             f"{MAX_LEVEL - 1}, not {level}")
        self.inner, self.profile, self.level = inner, profile, level
        self.rng = rng or random.Random()

    def limits(self, limits: Limits, position) -> Limits:
        """The user's limits, with the level's node budget and the lines it compares."""
        lines = self.profile.lines or len(position.legal_moves())
        budget = self.profile.node_budget(self.level)
        nodes = limits.nodes if budget is None else min(limits.nodes or budget, budget)
        return dataclasses.replace(limits, nodes=nodes, multipv=max(limits.multipv, lines))

    def search(self, position, limits: Limits = Limits(), stop_flag=None,
               on_info: Optional[Callable[[SearchInfo], None]] = None) -> SearchResult:
        wanted = max(1, limits.multipv)
        lines: dict[int, SearchInfo] = {}

        def collect(info: SearchInfo) -> None:
            number = info.multipv or 1
            if info.pv and info.score is not None:
                lines[number] = info
            if on_info is not None and number <= wanted:
                on_info(info if wanted > 1 else dataclasses.replace(info, multipv=None))

        result = self.inner.search(position, self.limits(limits, position), stop_flag, collect)
        chosen = self.choose(position, result, list(lines.values()))
        if chosen is None or chosen.pv[0] == result.best_move:
            return result
        if on_info is not None:
            on_info(dataclasses.replace(chosen, multipv=1 if wanted > 1 else None))
        pv = list(chosen.pv)
        return dataclasses.replace(result, best_move=pv[0],
                                   ponder_move=pv[1] if len(pv) > 1 else None,
                                   score=chosen.score, pv=pv, depth=chosen.depth)

    def choose(self, position, result: SearchResult, lines: list[SearchInfo]
               ) -> Optional[SearchInfo]:
        """The line the level plays, None for the searcher's own move."""
        horizon = self.profile.horizon(self.level)
        own = seen_value(result.score, horizon)
        if own is not None and own > WON // 2 or not lines:
            return None  # a win it sees: played, whatever the lines say
        spread = self.profile.spread(self.level)
        prior = self.profile.prior
        best, best_value = None, -math.inf
        for info in lines:
            value = seen_value(info.score, horizon)
            if prior is not None:
                value += prior(position, info.pv[0])
            value += self.rng.random() * spread
            if value > best_value:
                best, best_value = info, value
        return best
