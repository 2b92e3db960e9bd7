"""A toy fourth game, plain tic-tac-toe, declared the way a game package declares itself: the
test that drives it through every front-end and the match runner shows that adding a game
takes its package and one registry entry (`engine.py` adds the entry for an engine process)."""

from mallard.engines.base import GameEntry
from tests.toygame.rules import TicTacToe
from tests.toygame.searcher import TicTacToeSearcher

GAME = GameEntry("tictactoe", TicTacToe, TicTacToeSearcher, aliases=("ttt",),
                 protocols=("uci", "ugi", "gtp"))
