"""Game rules and searches, one sub-package per game; nothing here reads stdin or prints.

`GAMES` maps variant names to game factories; `get_game(name)` makes one.
"""

from engines.base import Game


def _connect4(**kwargs) -> Game:
    from engines.connect4.rules import Connect4Game

    return Connect4Game(**kwargs)


def _duck(**kwargs) -> Game:
    from engines.duck.rules import DuckGame

    return DuckGame(**kwargs)


GAMES = {"cfour": _connect4, "connect4": _connect4, "duck": _duck}


def get_game(name: str, **kwargs) -> Game:
    try:
        factory = GAMES[name.lower()]
    except KeyError:
        raise KeyError(f"unknown variant '{name}' (known: {', '.join(sorted(GAMES))})") from None
    return factory(**kwargs)
