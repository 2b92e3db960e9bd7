"""The on-disk cache of compiled kernels: a usable directory for it, healing a damaged one, and
the notices the user sees about it. Nothing here prints: notices go to the handler the protocol
layer installs (`set_notice_handler`), and wait in a list until it does.

Invariants:
- the cache is never placed in the package tree or numba's per-user default: a `MALLARD_CACHE`
  that cannot be written is replaced by a private temporary directory for the run;
- a cache file that cannot be read (emptied, truncated, garbage) never reaches a search: numba's
  loader is wrapped so that the failure removes the damaged version directory (only the files
  of the failing function when the user chose `NUMBA_CACHE_DIR`), and the kernel compiles afresh;
- a cache that cannot be written only costs speed: the compiled kernel is used without saving;
- cache paths name a kernel's module within the package, never the directory it is installed
  in (numba's own naming hashes the absolute path): the version directory is already tied to
  the exact source, so code compiled when the package was built (`PREBUILT_DIR`, filled by
  setup.py) is valid wherever the package lands, and seeds an empty version directory. So a
  directory never serves two versions of the sources: a process of other sources does not take
  the one a mallard parent chose (`choose_cache_directory`), and engines started by one get an
  environment without it (`engine_environment`);
- one machine-code version per kernel and argument types: a kernel called from another with a
  constant argument is typed as if called with a variable (numba would otherwise compile a
  version per constant, `Literal[int](0)`, `Literal[int](-1)`, ...: a third of duck's first-run
  compile). LLVM still folds the constant where it inlines the callee.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.abc
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Optional

from mallard.engines.processes import python_command

_lock = threading.RLock()
_handler: Optional[Callable[[str], None]] = None
_pending: list[str] = []
_said: set[str] = set()
_healed_dirs: set[str] = set()
# The directory this module may delete whole when damaged (None: the user's NUMBA_CACHE_DIR).
_owned_dir: Optional[Path] = None
# Compiled code made when the package was built (ahead of time, by setup.py), one directory per
# source version like the cache's own; absent in a source tree that was never built.
PACKAGE_ROOT = Path(__file__).resolve().parent
PREBUILT_DIR = PACKAGE_ROOT / "_prebuilt"
NO_PREBUILT = "MALLARD_NO_PREBUILT"  # set: compile from scratch
                                     # (what `mallard bench startup` times)
_prebuilt_version: Optional[Path] = None  # PREBUILT_DIR's entry for these sources

# Per game and use, one kernel whose cached index tells whether that code was compiled before.
MARKER_KERNELS = {
    ("cfour", "search"): ("mallard.engines.connect4.kernels", "solve_position"),
    ("duck", "search"): ("mallard.engines.duck.pv_kernels", "search_root"),
    ("uttt", "search"): ("mallard.engines.uttt.search_kernels", "search_root"),
    ("duck", "perft"): ("mallard.engines.duck.kernels", "perft"),
    ("uttt", "perft"): ("mallard.engines.uttt.kernels", "perft_kernel"),
    ("uttt", "prover"): ("mallard.engines.uttt.prover_kernels", "prove_kernel"),
}
# Uses compiled as a whole by a helper process, which marks the end of its compile
# (`mark_compiled`): the marker kernel's index alone appears before the rest is compiled.
MARKED_USES = {("uttt", "prover")}
COMPLETE_SUFFIX = ".complete"


# --- notices ----------------------------------------------------------------------------------

def set_notice_handler(handler: Optional[Callable[[str], None]]) -> None:
    """Deliver notices (one line each, no prefix) to `handler`, starting with any held back."""
    global _handler
    with _lock:
        _handler = handler
        held, _pending[:] = list(_pending), []
    if handler is not None:
        for text in held:
            handler(text)


def notify(text: str, once: Optional[str] = None) -> None:
    """Tell the user one line; with `once`, only the first notice of that kind is told."""
    with _lock:
        if once is not None:
            if once in _said:
                return
            _said.add(once)
        handler = _handler
        if handler is None:
            _pending.append(text)
            return
    try:
        handler(text)
    except Exception:  # a notice must never break the run that sends it
        pass


# --- choosing the directory -------------------------------------------------------------------

def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            pass
        return True
    except OSError:
        return False


def usable_directory(wanted: Path, what: str) -> Path:
    """`wanted` when it can be written, else a private temporary directory for this run (removed
    at exit), with a notice naming `what` and the directory it could not use."""
    if _writable(wanted):
        return wanted
    private = Path(tempfile.mkdtemp(prefix="mallard-cache-"))
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    notify(f"cannot write the {what} cache {wanted}; using {private} for this run "
           "(set MALLARD_CACHE to a writable directory to keep compiled code)",
           once="unwritable:" + what)
    return private


# What a mallard process chose, in its environment (which the processes it starts inherit): the
# directory, and the user's own NUMBA_CACHE_DIR it lies in, if any
CHOSEN_DIR_VARIABLE = "MALLARD_NUMBA_CACHE_DIR"
USER_DIR_VARIABLE = "MALLARD_USER_NUMBA_CACHE_DIR"


def choose_cache_directory(wanted: Path) -> Path:
    """The directory numba caches into for the sources whose version directory is `wanted`,
    recorded in the environment. Cache files are named by module, not by the sources' path, so
    a directory must never serve two versions of the sources: a NUMBA_CACHE_DIR that a mallard
    parent set for its own sources (a match runner starting engines of another checkout) is
    replaced, and a user's own gets the version as a subdirectory."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    user_dir = os.environ.get(USER_DIR_VARIABLE)
    if chosen and chosen != os.environ.get(CHOSEN_DIR_VARIABLE):
        user_dir = chosen  # set by the user, not by a mallard process
    if user_dir:
        directory = Path(user_dir) / wanted.name
        os.environ[USER_DIR_VARIABLE] = user_dir
        user_numba_directory()
    else:
        directory = choose_numba_directory(wanted)
    os.environ[CHOSEN_DIR_VARIABLE] = str(directory)
    return directory


def engine_environment() -> dict:
    """The environment for an engine process this one starts: its own, without the cache
    directory this process chose for its sources (the engine chooses for its own; a user's
    NUMBA_CACHE_DIR stays)."""
    env = dict(os.environ)
    user_dir = env.pop(USER_DIR_VARIABLE, None)
    chosen = env.pop(CHOSEN_DIR_VARIABLE, None)
    if user_dir:
        env["NUMBA_CACHE_DIR"] = user_dir
    elif env.get("NUMBA_CACHE_DIR") == chosen:
        env.pop("NUMBA_CACHE_DIR", None)
    return env


def choose_numba_directory(wanted: Path) -> Path:
    """The directory numba caches into (see engines/__init__.py), remembered as ours to heal;
    a new one starts with the code compiled when the package was built, if any."""
    global _owned_dir, _prebuilt_version
    _owned_dir = usable_directory(wanted, "compiled-code")
    _prebuilt_version = PREBUILT_DIR / wanted.name
    _seed_from_prebuilt(_owned_dir, _prebuilt_version)
    _install_healing_when_numba_loads()
    return _owned_dir


def has_prebuilt_code() -> bool:
    """Whether the package holds code compiled when it was built for these sources (and a new
    cache directory of ours starts with it)."""
    return _prebuilt_version is not None and _prebuilt_version.is_dir()


def _seed_from_prebuilt(version_dir: Path, prebuilt: Path) -> None:
    """Fill a version directory that has nothing yet (a first run after installing) with the
    package's prebuilt code for this source version. Engines started together share the cache
    (cutechess-cli starts both players at once), so the code is copied beside it and renamed
    into place whole: another process sees all of it or none, and the loser of a race drops its
    copy. Any failure only leaves kernels to compile."""
    if os.environ.get(NO_PREBUILT) or not prebuilt.is_dir() or _has_entries(version_dir):
        return
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{version_dir.name}-", dir=version_dir.parent))
    except OSError:
        return
    try:
        shutil.copytree(prebuilt, staging, dirs_exist_ok=True)
        os.rename(staging, version_dir)  # replaces the directory only while it is still empty
    except (OSError, shutil.Error):
        shutil.rmtree(staging, ignore_errors=True)


def _has_entries(directory: Path) -> bool:
    """Whether `directory` holds anything besides another process's writability probe."""
    return any(not path.name.startswith(".probe-") for path in directory.iterdir())


def user_numba_directory() -> None:
    """The user chose NUMBA_CACHE_DIR: heal file by file, never remove their directory."""
    _install_healing_when_numba_loads()


# --- healing ----------------------------------------------------------------------------------

def _heal(cache, error: BaseException) -> None:
    """Remove what a failed load read: our version directory, or the function's own files."""
    cache_file = getattr(cache, "_cache_file", None)
    index_path = Path(getattr(cache_file, "_index_path", "") or "")
    with _lock:
        if _owned_dir is not None and (index_path == Path() or _owned_dir in index_path.parents):
            target, whole = _owned_dir, True
        else:
            target, whole = index_path, False
        if str(target) in _healed_dirs:
            return
        _healed_dirs.add(str(target))
    damaged = index_path.name or "an entry"
    if whole:
        shutil.rmtree(target, ignore_errors=True)
        notify(f"the compiled-code cache was damaged ({damaged}: {type(error).__name__}); "
               f"removed {target} and recompiling (tens of seconds, once)")
        return
    base = index_path.name[:-len(".nbi")] if index_path.name.endswith(".nbi") else None
    if base:
        for path in index_path.parent.glob(base + "*"):
            try:
                path.unlink()
            except OSError:
                pass
    notify(f"the compiled-code cache was damaged ({damaged}: {type(error).__name__}); "
           f"removed its files in {index_path.parent} and recompiling")


def _package_locator(caching):
    """numba's locator for a chosen cache directory, naming our kernels' files by module."""

    class PackageCacheLocator(caching.UserProvidedCacheLocator):
        @classmethod
        def get_suitable_cache_subpath(cls, py_file):
            directory = Path(py_file).resolve().parent
            if directory == PACKAGE_ROOT or PACKAGE_ROOT in directory.parents:
                return ".".join(("mallard", *directory.relative_to(PACKAGE_ROOT.parent).parts))
            return super().get_suitable_cache_subpath(py_file)

    return PackageCacheLocator


def _install(caching) -> None:
    """Wrap numba's per-function cache so that a damaged file is a cache miss after healing, and
    name our kernels' cache files independently of where the package is installed."""
    cache_class = caching.Cache
    if getattr(cache_class, "_mallard_healing", False):
        return
    locators = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if locators and caching.UserProvidedCacheLocator in locators:  # else: numba's own naming
        locators[locators.index(caching.UserProvidedCacheLocator)] = _package_locator(caching)
    original_load = cache_class.load_overload
    original_save = cache_class.save_overload

    def load_overload(self, sig, target_context):
        try:
            return original_load(self, sig, target_context)
        except Exception as error:  # emptied, truncated or garbage index or data file
            _heal(self, error)
            return None  # numba compiles the function and saves it again

    def save_overload(self, sig, data):
        try:
            original_save(self, sig, data)
        except OSError:
            pass  # a directory removed or made unwritable meanwhile: the kernel still runs
        except Exception as error:  # the index it would add to is damaged
            _heal(self, error)
            try:
                original_save(self, sig, data)
            except Exception:
                pass

    cache_class.load_overload = load_overload
    cache_class.save_overload = save_overload
    cache_class._mallard_healing = True


def _type_calls_without_constants(dispatcher_module) -> None:
    """Make numba type a call between our kernels with the arguments' plain types."""
    from numba.core import types  # numba is loading now: this runs from its import hook

    dispatcher_class = dispatcher_module.Dispatcher
    if getattr(dispatcher_class, "_mallard_plain_calls", False):
        return
    original = dispatcher_class.get_call_template

    def get_call_template(self, args, kws):
        if getattr(self.py_func, "__module__", "").startswith("mallard.engines."):
            args = tuple(types.unliteral(arg) for arg in args)
            kws = {name: types.unliteral(arg) for name, arg in kws.items()}
        return original(self, args, kws)

    dispatcher_class.get_call_template = get_call_template
    dispatcher_class._mallard_plain_calls = True


# numba module -> what to change in it, applied right after numba imports it
_AFTER_IMPORT = {"numba.core.caching": _install,
                 "numba.core.dispatcher": _type_calls_without_constants}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Applies `_AFTER_IMPORT` right after numba imports those modules (importing numba here
    would slow every command that never compiles anything, such as `mallard match`)."""

    def __init__(self):
        self._finding: set[str] = set()

    def find_spec(self, name, path, target=None):
        installer = _AFTER_IMPORT.get(name)
        if installer is None or name in self._finding:
            return None
        self._finding.add(name)
        try:
            spec = importlib.util.find_spec(name)  # asks the finders after this one
        finally:
            self._finding.discard(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            installer(module)

        spec.loader.exec_module = exec_module
        return spec


def _install_healing_when_numba_loads() -> None:
    """Apply `_AFTER_IMPORT` now to the modules numba has imported, later to the others."""
    for name, installer in _AFTER_IMPORT.items():
        module = sys.modules.get(name)
        if module is not None:
            installer(module)
    if not any(isinstance(finder, _AfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


# --- first-run notice -------------------------------------------------------------------------

def _marker_index(variant: str, use: str) -> Optional[str]:
    """The cache index file of the marker kernel of (variant, use); None when not known."""
    marker = MARKER_KERNELS.get((variant, use))
    if marker is None:
        return None
    try:
        module = importlib.import_module(marker[0])
        return getattr(module, marker[1])._cache._cache_file._index_path
    except Exception:  # numba's internals moved: no notice rather than a wrong one
        return None


def _index_stamp(index: str) -> str:
    """The index's content (not its time: an install from a wheel gives every file a new one)."""
    return hashlib.sha256(Path(index).read_bytes()).hexdigest()


def is_compiled(variant: str, use: str = "search") -> Optional[bool]:
    """Whether the game's kernels for `use` are in the cache (None when that cannot be told).
    For a use compiled by a helper process (`mark_compiled`), only once that compile finished:
    the marker kernel alone is cached long before the last of them."""
    index = _marker_index(variant, use)
    if index is None:
        return None
    if not os.path.exists(index):
        return False
    if (variant, use) not in MARKED_USES:
        return True
    try:
        return Path(index + COMPLETE_SUFFIX).read_text() == _index_stamp(index)
    except OSError:
        return False


def mark_compiled(variant: str, use: str) -> None:
    """Record that every kernel of (variant, use) is now in the cache. The record names the
    marker's index as it is now, so a recompile (new source) makes it stale by itself."""
    index = _marker_index(variant, use)
    if index is None or not os.path.exists(index):
        return
    try:
        Path(index + COMPLETE_SUFFIX).write_text(_index_stamp(index))
    except OSError:
        pass  # a read-only cache: the next start compiles in the background again, no harm


def announce_compile(variant: str, use: str = "search") -> None:
    """The first-run notice, when the game's code for `use` is about to be compiled."""
    if is_compiled(variant, use) is False:
        what = "engine" if use == "search" else use
        notify(f"compiling the {variant} {what} (first run only)...", once="compile:" + variant)


def in_background(code: str):
    """A Python process running `code` (which compiles kernels into the cache, or fills another
    cache) on another core while this process compiles the rest of a first run; the caller
    waits for it before using what it fills. None when no process can be started."""
    try:
        return subprocess.Popen(python_command("-c", code), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None  # the caller's own process then compiles it when first used
