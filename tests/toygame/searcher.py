"""A complete negamax for tic-tac-toe over its 5,478 positions (remembered): perfect play."""

from __future__ import annotations

from mallard.engines.base import Limits, Score, Searcher, SearchInfo, SearchResult


class TicTacToeSearcher(Searcher):
    def __init__(self, game):
        self.game = game
        self._values: dict[str, int] = {}

    def search(self, position, limits: Limits = Limits(), stop_flag=None, on_info=None):
        if position.result() is not None:
            return SearchResult(None, score=Score.mate(0))
        self.nodes = 0
        scored = [(-self._value(position.play(move)), move) for move in position.legal_moves()]
        value, best = max(scored, key=lambda pair: pair[0])
        score = Score.cp(0, exact=True) if value == 0 else _mate(value, position.ply)
        if on_info:
            on_info(SearchInfo(depth=9 - position.ply, score=score, nodes=self.nodes, pv=[best]))
        return SearchResult(best, score=score, pv=[best], depth=9 - position.ply,
                            nodes=self.nodes)

    def _value(self, position) -> int:
        """From the side to move: 10 - plies for a win already on the board against it."""
        self.nodes += 1
        known = self._values.get(position.cells)
        if known is None:
            if position.winner() is not None:
                known = -(10 - position.ply)
            else:
                known = max((-self._value(position.play(move)) for move in position.legal_moves()),
                            default=0)
            self._values[position.cells] = known
        return known


def _mate(value: int, ply: int) -> Score:
    """Score.mate of a win (value > 0) or loss decided at ply 10 - |value|."""
    plies = 10 - abs(value) - ply
    return Score.mate((plies + 1) // 2 if value > 0 else -(plies // 2))

