"""Duck Chess, declared to the registry as `GAME`: `duck`, played over UCI and UGI.

Modules: `board` (the 0x88 board, the state array's layout and the move encoding), `notation` (FEN,
SAN and UCI move texts), `kernels` (numba move generation, make/unmake, perft), `rules` (the
Python-level `DuckGame` and immutable `DuckPosition`), `evaluation` (the numba evaluation terms),
`terms` (the evaluation's terms and weight groups by name, without numba), `search_kernels` (the
numba exception search), `pv_kernels` (its principal variation, searched with the duck fixed,
and its root), `searcher` (the game-interface searcher), `enumeration` (the plain duck
search the exception search must equal), `selfplay` (in-process matches between two configurations
of the engine), `bench` (the benchmarks and the bench signature).
"""

from mallard.engines.base import GameEntry
from mallard.engines.duck.rules import DEV_OPTIONS, OPTIONS, DuckGame
from mallard.engines.skill import SkillProfile


def _new_searcher(game, **options):
    from mallard.engines.duck.searcher import DuckSearcher  # numba: loaded with the first search

    return DuckSearcher(game, **options)


def _bench():
    from mallard.engines.duck.bench import SIGNATURE  # numba: the bench module imports the search

    return SIGNATURE


GAME = GameEntry("duck", DuckGame, _new_searcher, options=OPTIONS, dev_options=DEV_OPTIONS,
                 perft=True, bench=_bench,
                 skill=SkillProfile(spread_cp=300, lines=4, nodes_at_zero=400,
                                    levels_per_doubling=2.1))
