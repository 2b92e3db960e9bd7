"""Game rules and searches, one sub-package per game; nothing here reads stdin or prints.

`GAMES` maps variant names to game factories; `get_game(name)` makes one.

Numba's on-disk cache is only invalidated when a function's own source file changes, yet cached
kernels inline constants and functions from other modules (numba#8396): after an edit elsewhere
they would silently run stale machine code. So the cache lives in a directory named after a hash
of every engine source file (under `MALLARD_CACHE`, default `~/.cache/mallard`), set here before
any kernel module imports numba; a user's own `NUMBA_CACHE_DIR` is respected.
"""

import hashlib
import os
from pathlib import Path


def _numba_cache_dir() -> Path:
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("MALLARD_CACHE") or Path.home() / ".cache" / "mallard")
    return base / "numba" / digest.hexdigest()[:16]


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = str(_numba_cache_dir())

from engines.base import Game  # noqa: E402  (after the cache directory is chosen)


def _connect4(**kwargs) -> Game:
    from engines.connect4.rules import Connect4Game

    return Connect4Game(**kwargs)


def _duck(**kwargs) -> Game:
    from engines.duck.rules import DuckGame

    return DuckGame(**kwargs)


def _uttt(**kwargs) -> Game:
    from engines.uttt.rules import UtttGame

    return UtttGame(**kwargs)


GAMES = {"cfour": _connect4, "connect4": _connect4, "duck": _duck, "uttt": _uttt}


def get_game(name: str, **kwargs) -> Game:
    try:
        factory = GAMES[name.lower()]
    except KeyError:
        raise KeyError(f"unknown variant '{name}' (known: {', '.join(sorted(GAMES))})") from None
    return factory(**kwargs)
