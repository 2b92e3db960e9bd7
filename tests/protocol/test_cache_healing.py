"""Damaged or unusable caches heal themselves (issue 14, items 8 and 9), in real `mallard`
processes: numba cache files emptied, truncated or overwritten with garbage; the converted
BitBully book emptied, truncated or garbage; a cache directory that cannot be written. Each run
must still give the right answer (the published test-set scores, perft counts checked against
the arithmetic of the rules) and say on one stderr line what it did.

A warm cache is made once (in the session's MALLARD_CACHE, which the rest of the suite warms
too) and copied per test; only a damaged copy recompiles, with the cheapest kernels that show it
(UTTT perft) except for one Connect Four solve.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import mallard.engines
from mallard.engines.connect4.book import BITBULLY_FILE, Book
from mallard.engines.connect4.testsets import load

# perft(2) of UTTT: 81 first moves; a move to cell c sends the opponent to board c, which has 9
# free cells, or 8 when c is the board just played in (9 of the 81 moves).
UTTT_PERFT_2 = 9 * 8 + 72 * 9


def _book_positions() -> list[tuple[str, int]]:
    """Short positions (<= 12 stones: the BitBully book is probed) with their published score."""
    lines = []
    for name in ("Begin-Easy", "Begin-Medium"):
        lines += [(moves, score) for moves, score in load(name) if len(moves) <= 12][:3]
    return lines


def run_mallard(cache: Path, *args: str, stdin: str = "", home: Path = None):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["MALLARD_CACHE"] = str(cache)
    if home is not None:
        env["HOME"] = str(home)
    process = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", *args], input=stdin,
                             capture_output=True, text=True, timeout=600, env=env)
    return process.returncode, process.stdout, process.stderr


@pytest.fixture(scope="module")
def warm_cache() -> Path:
    """The session's cache, warmed for `solve` and `perft uttt` (and the book converted)."""
    shared = Path(os.environ["MALLARD_CACHE"])
    lines = "".join(m + "\n" for m, _ in _book_positions())
    assert run_mallard(shared, "solve", stdin=lines)[0] == 0
    assert run_mallard(shared, "perft", "uttt", "2")[0] == 0
    return shared


@pytest.fixture
def cache_copy(warm_cache, tmp_path) -> Path:
    """A private copy of the warm cache: this version's compiled code and the converted book."""
    version = mallard.engines._numba_cache_dir()  # the session's MALLARD_CACHE, this source tree
    copy = tmp_path / "cache"
    shutil.copytree(version, copy / "numba" / version.name)
    shutil.copy(warm_cache / BITBULLY_FILE, copy / BITBULLY_FILE)
    return copy


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(os.urandom(max(len(data), 64)))


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


# --- compiled code ------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["emptied", "truncated", "garbage"])
def test_a_damaged_compiled_code_cache_is_removed_and_recompiled(cache_copy, how):
    version = next((cache_copy / "numba").iterdir())
    # emptied and truncated: every file (the indexes fail first); garbage: only the data files,
    # so that the index loads and the data behind it is what fails
    pattern = "*.nbc" if how == "garbage" else "*.nb[ic]"
    damaged = list(version.rglob(pattern))
    assert damaged
    for path in damaged:
        _damage(path, how)
    code, out, err = run_mallard(cache_copy, "perft", "uttt", "2")
    assert (code, out) == (0, f"Nodes searched: {UTTT_PERFT_2}\n")
    notices = _notices(err)
    assert len(notices) == 1, err  # what was healed (it says the code is recompiled)
    assert "compiled-code cache was damaged" in notices[0] and str(version) in notices[0]
    # healed for good: the next run loads the recompiled code and says nothing
    code, out, err = run_mallard(cache_copy, "perft", "uttt", "2")
    assert (code, out, err) == (0, f"Nodes searched: {UTTT_PERFT_2}\n", "")


@pytest.mark.slow
def test_solve_with_a_damaged_compiled_code_cache_gives_the_published_scores(cache_copy):
    """The reported failure: `mallard solve` died with UnpicklingError (slow: a cold Connect Four
    compile; the default run shows the same healing on the cheaper UTTT perft)."""
    for path in (cache_copy / "numba").rglob("*.nbi"):
        _damage(path, "garbage")
    lines = _book_positions()
    code, out, err = run_mallard(cache_copy, "solve", stdin="".join(m + "\n" for m, _ in lines))
    assert code == 0 and out == "".join(f"{m} {s}\n" for m, s in lines)
    assert "compiled-code cache was damaged" in _notices(err)[0] and "Traceback" not in err


def test_an_unusable_cache_directory_falls_back_to_a_private_one(tmp_path):
    """MALLARD_CACHE under a regular file cannot be created (as root, a read-only mode would not
    stop writes; this fails the same check). The run compiles into a private temporary directory,
    removed at exit, never into numba's per-user default or the package tree."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    home = tmp_path / "home"
    home.mkdir()
    package = Path(mallard.engines.__file__).parent
    in_package = set(package.rglob("*.nbi"))  # other processes' leftovers are not this run's
    code, out, err = run_mallard(blocker / "cache", "perft", "uttt", "2", home=home)
    assert (code, out) == (0, f"Nodes searched: {UTTT_PERFT_2}\n")
    notices = _notices(err)
    assert "cannot write the compiled-code cache" in notices[0] and "Traceback" not in err
    private = Path(notices[0].split(" using ", 1)[1].split(" for this run", 1)[0])
    assert not private.exists()  # removed at exit
    assert not (home / ".cache").exists()
    assert set(package.rglob("*.nbi")) <= in_package


# --- the converted BitBully book ------------------------------------------------------------------

@pytest.mark.parametrize("how", ["emptied", "truncated", "garbage"])
def test_a_damaged_book_is_rebuilt_and_the_scores_stay_exact(cache_copy, how):
    book_file = cache_copy / BITBULLY_FILE
    _damage(book_file, how)
    lines = _book_positions()
    code, out, err = run_mallard(cache_copy, "solve", stdin="".join(m + "\n" for m, _ in lines))
    assert code == 0 and out == "".join(f"{m} {s}\n" for m, s in lines)
    notices = _notices(err)
    assert len(notices) == 1 and "unreadable Connect Four book" in notices[0], err
    assert "rebuilding it from bitbully-databases" in notices[0]
    assert Book.load(book_file).size > 0  # rewritten whole


def test_uci_cfour_with_a_damaged_book_plays_a_solved_move(cache_copy):
    """UCI answered every `go` with `bestmove P@a1` (the session's fallback after a failed
    search). Now the search runs and its score is the published one."""
    _damage(cache_copy / BITBULLY_FILE, "truncated")
    moves, score = next((m, s) for m, s in _book_positions() if s > 0)
    squares = _uci_moves(moves)
    script = ("uci\nsetoption name UCI_Variant value cfour\nisready\n"
              f"position startpos moves {' '.join(squares)}\ngo movetime 20000\n")
    process = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "uci"], text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=_env(cache_copy))
    process.stdin.write(script)
    process.stdin.flush()
    lines = []
    for line in process.stdout:
        lines.append(line.strip())
        if line.startswith("bestmove"):
            break
    process.stdin.write("quit\n")
    process.stdin.close()
    err = process.stderr.read()
    process.wait(30)
    assert not [line for line in lines if "error" in line], lines
    scores = [line.split(" score ", 1)[1].split()[:2] for line in lines if " score " in line]
    assert scores and scores[-1][0] == "mate" and int(scores[-1][1]) > 0  # a win, as published
    assert "unreadable Connect Four book" in err and "Traceback" not in err


def _env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["MALLARD_CACHE"] = str(cache)
    return env


def _uci_moves(digits: str) -> list[str]:
    """Pons' column digits as UCI drops (P@<file><rank>)."""
    heights = [0] * 7
    squares = []
    for digit in digits:
        column = int(digit) - 1
        heights[column] += 1
        squares.append(f"P@{'abcdefg'[column]}{heights[column]}")
    return squares


def test_ctrl_c_during_warmup_ends_its_workers_without_a_traceback(tmp_path):
    """A terminal's Ctrl-C goes to the whole foreground group: the workers compiling used to
    print a KeyboardInterrupt's traceback each; now the warmup alone takes it and ends them."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(MALLARD_CACHE=str(tmp_path), MALLARD_NO_PREBUILT="1")
    warmup = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "warmup"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              start_new_session=True)
    try:
        for line in warmup.stderr:  # a worker has started compiling
            if "compiling" in line:
                break
        os.killpg(warmup.pid, signal.SIGINT)
        _, err = warmup.communicate(timeout=60)
    finally:
        warmup.kill()
    assert warmup.returncode == 130 and "Traceback" not in err, err
    leftover = subprocess.run(["pgrep", "-f", "mallard.protocol.warmup"], capture_output=True,
                              text=True)
    assert [pid for pid in leftover.stdout.split() if str(tmp_path) in _environ(pid)] == []


def _environ(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode("latin-1")
    except OSError:  # it ended meanwhile
        return ""


@pytest.mark.slow
def test_warmup_fills_the_cache_for_every_game(tmp_path):
    """`mallard warmup` on a new cache (a cold compile of all three games): every game ready,
    and an engine started afterwards says nothing about compiling."""
    code, out, err = run_mallard(tmp_path, "warmup")
    assert code == 0 and "Traceback" not in err
    assert sorted(line.split()[0] for line in out.splitlines()) == ["cfour", "duck", "uttt"]
    assert all(" ready in " in line for line in out.splitlines())
    for variant in ("cfour", "duck", "uttt"):
        script = f"uci\nsetoption name UCI_Variant value {variant}\nisready\nquit\n"
        code, out, err = run_mallard(tmp_path, "uci", stdin=script)
        assert code == 0 and "readyok" in out and err == "", (variant, err)
