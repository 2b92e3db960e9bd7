"""Game rules and searches, one sub-package per game; nothing here reads stdin or prints.

The registry: each game package declares its game once (`GAME`, a `base.GameEntry`) and `GAMES`
lists them; `find_game(name)` finds one by name or alias, `get_game(name)` makes its rules, and
`DEFAULT_GAMES` says which game a protocol plays until the client chooses. Nothing outside the
game packages lists games: adding one is adding its package and its line in `GAMES`.

Numba's on-disk cache is only invalidated when a function's own source file changes, yet cached
kernels inline constants and functions from other modules (numba#8396): after an edit elsewhere
they would silently run stale machine code. So the cache lives in a directory named after a hash
of every engine source file (under `MALLARD_CACHE`, default `~/.cache/mallard`), set here before
any kernel module imports numba. A user's own `NUMBA_CACHE_DIR` is respected, with the same
hash as a subdirectory of it; a `NUMBA_CACHE_DIR` that another mallard process set (a parent
that starts engines, which inherit its environment: `mallard match`) is not a user's, and a child
of other sources chooses its own (`compile_cache.choose_cache_directory`). A directory that
cannot be written, or damaged files in it, are dealt with by `mallard.engines.compile_cache`. A new
directory starts with the code `pip install` compiled when it built the package (setup.py), so
a first run after installing loads its kernels instead of compiling them.

Kernels are plain `@njit(cache=True, nogil=True)` functions, never `inline="always"`: numba's own
inlining types the callee again at every call site, which made the first (cold) compile 3-6 times
slower, while LLVM inlines the small helpers anyway (the bench speeds did not change). For the
same reason a recursive kernel calls itself from one call site only (a PVS re-search loops back
to it): numba types the whole function again for each recursive call it resolves. Kernels are
never mutually recursive: two that called each other compiled and ran, but crashed the process
(a segmentation fault) when the next run loaded them from the cache. Calls between
kernels are typed without their constant arguments (`mallard.engines.compile_cache`), so each kernel
is compiled once per argument types (a version typed for a constant also crashed when a
recursive kernel was loaded from the cache), and kernels are called with writable arrays only.

The searches' kernels that make no arrays (Duck Chess's rules, evaluation and search, UTTT's
rules, evaluation and search, and the shared `search_common`) are compiled with `_nrt=False`:
without numba's reference counting, a call no longer increments and decrements a count for each
array it passes (atomic operations, 16% of the duck search's time in a profile, for the nine
arrays of every node). A kernel that makes an array (np.empty and the like), or calls one that
does, keeps the default: with `_nrt=False` it would not compile (a callee compiled first from
such a caller is compiled without it too). (The Connect Four kernels and the UTTT prover keep it:
the solver's bench did not change without it.)
"""

import hashlib
import os
from pathlib import Path

from mallard.engines import compile_cache


def _numba_cache_dir() -> Path:
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("MALLARD_CACHE") or Path.home() / ".cache" / "mallard")
    return base.absolute() / "numba" / digest.hexdigest()[:16]


os.environ["NUMBA_CACHE_DIR"] = str(compile_cache.choose_cache_directory(_numba_cache_dir()))

from mallard.engines import connect4, duck, uttt  # noqa: E402  (after the cache directory is chosen)
from mallard.engines.base import Game, GameEntry, UnknownGameError  # noqa: E402

GAMES: tuple[GameEntry, ...] = (connect4.GAME, duck.GAME, uttt.GAME)  # UCI_Variant's order
DEFAULT_GAMES = {"uci": "duck", "ugi": "duck", "gtp": "cfour"}


def find_game(name: str) -> GameEntry:
    """The game called `name` (its variant name or an alias, any case); UnknownGameError names
    the known ones."""
    wanted = name.lower()
    for entry in GAMES:
        if wanted in entry.names:
            return entry
    known = ", ".join(sorted(accepted for entry in GAMES for accepted in entry.names))
    raise UnknownGameError(f"unknown variant '{name}' (known: {known})")


def game_names(protocol: str = "") -> list[str]:
    """The variant names (aliases left out), of the games `protocol` can play when given."""
    return [entry.name for entry in GAMES if not protocol or entry.speaks(protocol)]


def get_game(name: str, **board) -> Game:
    """The rules of the game called `name` (`board`: a size, for games that have one)."""
    return find_game(name).new_game(**board)
