"""`mallard` with the toy game in its registry, as an engine process for the tests."""

import sys

import engines
from tests.toygame import GAME

engines.GAMES = engines.GAMES + (GAME,)

from protocol.cli import main  # noqa: E402  (after the registry has the game)

sys.exit(main())
