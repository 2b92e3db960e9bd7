"""`mallard` with the toy game in its registry, as an engine process for the tests."""

import sys

import mallard.engines
from tests.toygame import GAME

mallard.engines.GAMES = mallard.engines.GAMES + (GAME,)

from mallard.protocol.cli import main  # noqa: E402  (after the registry has the game)

sys.exit(main())
