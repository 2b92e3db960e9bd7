"""Ultimate Tic-Tac-Toe, declared to the registry as `GAME`: `uttt`, played over UCI, UGI and GTP.

Modules: `board` (the state array's layout), `kernels` (numba move generation, make/unmake,
perft), `rules` (positions and their text forms), `evaluation` and `search_kernels` (the numba
alpha-beta search), `searcher` (the game-interface searcher, which asks the prover first),
`prover_kernels` and `prover` (the df-pn prover and the referee's `prove`), `bench` (the
benchmarks and the bench signature).
"""

from mallard.engines.base import GameEntry
from mallard.engines.skill import SkillProfile
from mallard.engines.uttt.rules import SEARCHER_OPTIONS, UtttGame


def _new_searcher(game, **options):
    from mallard.engines.uttt.searcher import UtttSearcher  # numba: loaded with the first search

    return UtttSearcher(game, **options)


def _prove(position, node_limit):
    from mallard.engines.uttt.prover import prove  # numba: loaded with the first adjudication

    return prove(position, node_limit)


def _finish_warm_up():
    from mallard.engines.uttt.searcher import wait_for_prover_code  # numba: imports the search

    wait_for_prover_code()  # a first start compiles the prover in a helper process


def _bench():
    from mallard.engines.uttt.bench import SIGNATURE  # numba: the bench module imports the search

    return SIGNATURE


GAME = GameEntry("uttt", UtttGame, _new_searcher, options=SEARCHER_OPTIONS,
                 protocols=("uci", "ugi", "gtp"), prove=_prove, perft=True, bench=_bench,
                 finish_warm_up=_finish_warm_up,
                 skill=SkillProfile(spread_cp=200, spread_power=2, lines=4,
                                    nodes_at_zero=1024, levels_per_doubling=2.2))
