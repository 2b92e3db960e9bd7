"""Connect Four, declared to the registry as `GAME`: `cfour` (Fairy-Stockfish's name; `connect4`
too), on any board with width*(height+1) <= 64, played over UCI, UGI and GTP.

Modules: `rules` (positions and their text forms), `kernels` (the numba bitboard solver),
`solver` (the `Solver` API, the game-interface searcher and the referee's `prove`), `book` (the
opening books the search probes), `book_kernels` and `book_builder` (making books), `testsets`
(Pons' public test sets), `bench` (the benchmarks and the bench signature).
"""

from mallard.engines.base import GameEntry
from mallard.engines.connect4.rules import SEARCHER_OPTIONS, Connect4Game
from mallard.engines.skill import SkillProfile


def _new_searcher(game, **options):
    from mallard.engines.connect4.solver import (
        Connect4Searcher,  # numba: loaded with the first search
    )

    return Connect4Searcher(game, **options)


def _prove(position, node_limit):
    from mallard.engines.connect4.solver import prove  # numba: loaded with the first adjudication

    return prove(position, node_limit)


def _nearer_the_centre(position, column) -> int:
    """The preference among columns whose outcome a level cannot see: the centre ones, which
    take part in the most lines of four."""
    return -10 * abs(2 * column - (position.width - 1))


def _finish_warm_up():
    from mallard.engines.connect4.book import (
        default_book,  # numba: the book module loads its kernels
    )

    default_book(7, 6)  # converts BitBully's book into the cache on first use


def _bench():
    from mallard.engines.connect4.bench import (
        SIGNATURE,  # numba: the bench module imports the search
    )

    return SIGNATURE


GAME = GameEntry("cfour", Connect4Game, _new_searcher, aliases=("connect4",),
                 options=SEARCHER_OPTIONS, protocols=("uci", "ugi", "gtp"), prove=_prove,
                 bench=_bench, finish_warm_up=_finish_warm_up,
                 skill=SkillProfile(spread_cp=80, lines=0, horizon_at_zero=2,
                                    horizon_per_level=1.5, prior=_nearer_the_centre))
