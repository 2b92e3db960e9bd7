"""The distribution as `pip install .` makes it: one import package, `mallard`, and nothing else.

The wheel is built from a copy of the tracked files (no ahead-of-time compile, no build
isolation: the test extra brings setuptools) and installed into a folder of its own, which the
checks put on `PYTHONPATH`; each check runs from a working directory that holds decoy packages
named like our folders, which exit with status 3 when imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("engines", "protocol", "tournaments")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    env = dict(os.environ, MALLARD_SKIP_PREBUILD="1")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "--no-index", "-w", str(work / "dist"),
                            str(source)], capture_output=True, text=True, env=env, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next((work / "dist").glob("mallard-*.whl"))
    site = work / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                              "--no-index", "--target", str(site), str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    decoys = work / "decoys"
    for package in (*FOLDERS, "mallard"):
        (decoys / package).mkdir(parents=True)
        (decoys / package / "__init__.py").write_text("raise SystemExit(3)\n")
    return {"wheel": wheel, "site": site, "decoys": decoys, "empty": work / "empty"}


def _run(installed: dict, command: list[str], cwd: Path, **kwargs):
    cwd.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(installed["site"])
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, **kwargs)


def test_the_wheel_holds_one_import_package(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"mallard", f"{installed['wheel'].name.split('-py3')[0]}.dist-info"}
    assert "mallard/__init__.py" not in names  # a namespace package: no file of its own
    for expected in ("mallard/engines/__init__.py", "mallard/protocol/cli.py",
                     "mallard/tournaments/__init__.py", "mallard/protocol/board/static/board.js",
                     "mallard/engines/connect4/data/book-7x6-d4.npz"):
        assert expected in names
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    text = zipfile.ZipFile(installed["wheel"]).read(entry_points).decode()
    assert "mallard = mallard.protocol.command:run" in text


@pytest.mark.parametrize("generic", FOLDERS)
def test_generic_names_are_not_installed(installed, generic):
    run = _run(installed, [sys.executable, "-c", f"import {generic}"], installed["empty"])
    assert run.returncode == 1 and f"No module named '{generic}'" in run.stderr


def test_our_packages_import_beside_folders_of_the_same_names(installed):
    code = ("import mallard.engines, mallard.protocol, mallard.tournaments; "
            "print(mallard.engines.__file__)")
    decoys = installed["decoys"]
    (decoys / "mallard").rename(decoys.parent / "mallard-decoy")  # `-c` puts the cwd first
    try:
        run = _run(installed, [sys.executable, "-c", code], decoys)
    finally:
        (decoys.parent / "mallard-decoy").rename(decoys / "mallard")
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).is_relative_to(installed["site"] / "mallard")


def test_the_console_script_works_from_a_folder_of_decoys(installed):
    script = installed["site"] / "bin" / "mallard"
    version = _run(installed, [str(script), "--version"], installed["decoys"])
    assert version.returncode == 0 and version.stdout.startswith("mallard "), version.stderr
    solve = _run(installed, [str(script), "solve"], installed["decoys"], input="4453\n")
    assert (solve.returncode, solve.stdout) == (0, "4453 -2\n"), solve.stderr
