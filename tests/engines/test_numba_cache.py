"""The numba cache directory is keyed by the engine sources (see engines/__init__.py), and a
new one starts with the code compiled when the package was built (engines/compile_cache.py)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mallard.engines
from mallard.engines import compile_cache
from mallard.engines.compile_cache import NO_PREBUILT


def test_cache_directory_follows_the_engine_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path / "cache"))
    first = mallard.engines._numba_cache_dir()
    assert first.parent == tmp_path / "cache" / "numba" and len(first.name) == 16
    assert mallard.engines._numba_cache_dir() == first  # stable while nothing changes
    package = Path(mallard.engines.__file__).parent
    copy = tmp_path / "engines"
    shutil.copytree(package, copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz", "Test_*"))
    assert os.environ["NUMBA_CACHE_DIR"]  # chosen before any kernel imported numba
    (copy / "watchdog.py").write_text((copy / "watchdog.py").read_text() + "\n# edited\n")
    edited = _cache_dir_of(copy, monkeypatch)
    original = _cache_dir_of(package, monkeypatch)
    assert edited != original and original == first


def _cache_dir_of(package: Path, monkeypatch) -> Path:
    monkeypatch.setattr(mallard.engines, "__file__", str(package / "__init__.py"))
    return mallard.engines._numba_cache_dir()


# --- code compiled when the package was built (setup.py) -----------------------------------------

def _installed_copy(tmp_path: Path) -> Path:
    """The packages as an install elsewhere holds them: sources and the build's compiled code,
    every file with a new time (as pip gives the files of a wheel)."""
    prebuilt = compile_cache.PREBUILT_DIR / mallard.engines._numba_cache_dir().name
    if not prebuilt.is_dir():
        if os.environ.get("CI"):  # CI installs the checkout it tests: the build must be there
            pytest.fail(f"no code compiled ahead of time in {prebuilt}")
        pytest.skip("no code compiled ahead of time for these sources: this tree was not "
                    "installed with `pip install` (or was, with MALLARD_SKIP_PREBUILD set)")
    site = tmp_path / "site"
    root = Path(mallard.engines.__file__).resolve().parent.parent
    for package in ("engines", "protocol", "tournaments"):
        shutil.copytree(root / package, site / "mallard" / package,
                        ignore=shutil.ignore_patterns("__pycache__"), copy_function=shutil.copy)
    return site


def _installed_env(site: Path, cache: Path, **extra_env: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", NO_PREBUILT)}
    env.update(MALLARD_CACHE=str(cache), PYTHONPATH=str(site), **extra_env)
    return env


def _first_run(site: Path, cache: Path, **extra_env: str):
    env = _installed_env(site, cache, **extra_env)
    where = subprocess.run([sys.executable, "-c",
                            "import mallard.engines; print(mallard.engines.__file__)"],
                           capture_output=True, text=True, env=env, cwd=site, timeout=120)
    assert Path(where.stdout.strip()).parent == site / "mallard" / "engines", where.stderr
    perft = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "perft", "uttt", "2"],
                           capture_output=True, text=True, env=env, cwd=site, timeout=600)
    # the prover is compiled by a helper process, which records when it finished
    prover = subprocess.run([sys.executable, "-c", "from mallard.engines import compile_cache; "
                             "print(compile_cache.is_compiled('uttt', 'prover'))"],
                            capture_output=True, text=True, env=env, cwd=site, timeout=120)
    return perft, prover.stdout.strip()


def test_a_first_run_after_installing_loads_the_code_compiled_at_build_time(tmp_path):
    """Issue 14, item 12: the build compiles the kernels, and they are valid in another directory
    (cache files are named by module, not by the absolute path numba would hash)."""
    site = _installed_copy(tmp_path)
    cache = tmp_path / "cache"
    run, prover_compiled = _first_run(site, cache)
    assert (run.returncode, run.stdout) == (0, "Nodes searched: 720\n")
    assert run.stderr == ""  # no "compiling ... (first run only)" notice: nothing compiled
    assert prover_compiled == "True"
    version = next((cache / "numba").iterdir())
    assert {path.name for path in version.iterdir()} >= {
        "mallard.engines.uttt", "mallard.engines.duck", "mallard.engines.connect4"}


def test_without_the_prebuilt_code_a_first_run_compiles_and_says_so(tmp_path):
    site = _installed_copy(tmp_path)
    run, prover_compiled = _first_run(site, tmp_path / "cache", **{NO_PREBUILT: "1"})
    assert (run.returncode, run.stdout) == (0, "Nodes searched: 720\n")
    assert "compiling the uttt perft (first run only)" in run.stderr
    assert prover_compiled == "False"


def test_engines_started_together_on_a_new_cache_both_load_the_prebuilt_code(tmp_path):
    """cutechess-cli starts both players at once: each must see the prebuilt code whole (a
    half-copied file would be taken for damage, and the cache removed under the other)."""
    site = _installed_copy(tmp_path)
    env = _installed_env(site, tmp_path / "cache")
    players = [subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli",
                                 "perft", "uttt", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=site) for _ in range(3)]
    for player in players:
        out, err = player.communicate(timeout=600)
        assert (player.returncode, out, err) == (0, "Nodes searched: 720\n", "")
    assert [path.name for path in (tmp_path / "cache" / "numba").iterdir()] == \
        [mallard.engines._numba_cache_dir().name]  # no copy left beside it


# --- one directory, one version of the sources ---------------------------------------------------

def _chosen_in_child(env_changes: dict, tmp_path: Path) -> tuple[str, str]:
    """(NUMBA_CACHE_DIR, what its own children would get) as a process of these sources sees
    them, started with the environment changed so."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", compile_cache.CHOSEN_DIR_VARIABLE,
                        compile_cache.USER_DIR_VARIABLE)}
    env.update(MALLARD_CACHE=str(tmp_path / "cache"), **env_changes)
    code = ("import os, mallard.engines; from mallard.engines import compile_cache; "
            "print(os.environ['NUMBA_CACHE_DIR']); "
            "print(compile_cache.engine_environment().get('NUMBA_CACHE_DIR', '-'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=Path(mallard.engines.__file__).resolve().parent.parent, timeout=120)
    assert run.returncode == 0, run.stderr
    chosen, for_children = run.stdout.split()
    return chosen, for_children


def test_a_process_of_other_sources_does_not_take_the_directory_a_mallard_parent_chose(tmp_path):
    """Cache files are named by module: an engine of another checkout started by `mallard
    match` loaded the runner's compiled kernels and ran the runner's search, not its own (found
    on 2026-11-27: a changed evaluation searched as the unchanged one did)."""
    version = mallard.engines._numba_cache_dir().name
    own = tmp_path / "cache" / "numba" / version
    alone, for_children = _chosen_in_child({}, tmp_path)
    assert Path(alone) == own and for_children == "-"
    parents = str(tmp_path / "cache" / "numba" / "0123456789abcdef")  # another version's
    under_parent, _ = _chosen_in_child({"NUMBA_CACHE_DIR": parents,
                                        compile_cache.CHOSEN_DIR_VARIABLE: parents}, tmp_path)
    assert Path(under_parent) == own


def test_a_users_numba_cache_dir_holds_a_directory_per_version_of_the_sources(tmp_path):
    version = mallard.engines._numba_cache_dir().name
    users = tmp_path / "mine"
    chosen, for_children = _chosen_in_child({"NUMBA_CACHE_DIR": str(users)}, tmp_path)
    assert Path(chosen) == users / version and Path(for_children) == users
    # a child that inherited the whole environment stays in the user's directory, not nested
    nested, _ = _chosen_in_child({"NUMBA_CACHE_DIR": chosen,
                                  compile_cache.CHOSEN_DIR_VARIABLE: chosen,
                                  compile_cache.USER_DIR_VARIABLE: str(users)}, tmp_path)
    assert Path(nested) == users / version


def test_engines_started_by_a_match_get_an_environment_without_the_runners_cache(tmp_path):
    from mallard.tournaments.players import EngineConfig, EngineProcess
    script = tmp_path / "engine.py"
    script.write_text("import os\nprint(os.environ.get('NUMBA_CACHE_DIR', '-'), flush=True)\n"
                      "input()\n")
    assert os.environ["NUMBA_CACHE_DIR"]  # this process chose one (importing engines)
    process = EngineProcess(EngineConfig(name="env", command=[sys.executable, str(script)]))
    try:
        _, line = process.lines.get(timeout=60)
        assert line == "-"
    finally:
        process.process.kill()
        process.process.wait()
