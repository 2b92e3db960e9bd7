"""Game rules and searches, one sub-package per game; nothing here reads stdin or prints.

`GAMES` maps variant names to game factories; `get_game(name)` makes one.

Numba's on-disk cache is only invalidated when a function's own source file changes, yet cached
kernels inline constants and functions from other modules (numba#8396): after an edit elsewhere
they would silently run stale machine code. So the cache lives in a directory named after a hash
of every engine source file (under `MALLARD_CACHE`, default `~/.cache/mallard`), set here before
any kernel module imports numba; a user's own `NUMBA_CACHE_DIR` is respected. A directory that
cannot be written, or damaged files in it, are dealt with by `engines.compile_cache`.

Kernels are plain `@njit(cache=True, nogil=True)` functions, never `inline="always"`: numba's own
inlining types the callee again at every call site, which made the first (cold) compile 3-6 times
slower, while LLVM inlines the small helpers anyway (the bench speeds did not change). For the
same reason a recursive kernel calls itself from one call site only (a PVS re-search loops back
to it): numba types the whole function again for each recursive call it resolves. Calls between
kernels are typed without their constant arguments (`engines.compile_cache`), so each kernel is
compiled once per argument types (a version typed for a constant also crashed when a
recursive kernel was loaded from the cache), and kernels are called with writable arrays only.
"""

import hashlib
import os
from pathlib import Path

from engines import compile_cache


def _numba_cache_dir() -> Path:
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("MALLARD_CACHE") or Path.home() / ".cache" / "mallard")
    return base.absolute() / "numba" / digest.hexdigest()[:16]


_wanted = _numba_cache_dir()
if os.environ.get("NUMBA_CACHE_DIR", str(_wanted)) == str(_wanted):  # also when a parent set it
    os.environ["NUMBA_CACHE_DIR"] = str(compile_cache.choose_numba_directory(_wanted))
else:
    compile_cache.user_numba_directory()

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
