"""Builds the package as pyproject.toml declares it, and compiles the engines ahead of time.

The repository's top-level folders install as sub-packages of one import package, `mallard`
(`engines/` is `mallard.engines`), so that nothing generic lands in site-packages: `mallard` is
a namespace package with no files of its own, and `PACKAGE_DIRS` is the one mapping.

Numba compiles a game's kernels on their first use, which takes 10-30 s on a first run after
each install. The build runs `mallard warmup` on the sources being packaged and ships its
compiled code in `engines/_prebuilt/<source version>/`, which the first run copies into its
cache (`mallard.engines.compile_cache`). The code is for the building machine's CPU and numba
version, as `pip install` builds it; elsewhere numba finds no matching entry and compiles as
before. A failed ahead-of-time compile only warns: the package still compiles on first use.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PREBUILT = "_prebuilt"
FOLDERS = ("engines", "protocol", "tournaments")
PACKAGE_DIRS = {f"mallard.{folder}": folder for folder in FOLDERS}
PACKAGES = [f"mallard.{name}" for name in
            find_packages(include=[f"{folder}*" for folder in FOLDERS],
                          exclude=[f"engines.{PREBUILT}*"])]  # compiled code, not a package


def _importable_view(editable: bool, build_lib: Path, work: Path) -> tuple[Path, Path]:
    """(a directory holding an importable `mallard`, the engines folder being packaged): the
    built tree for a regular install; for an editable one, links to the source folders."""
    if not editable:
        return build_lib, build_lib / "mallard" / "engines"
    view = work / "view" / "mallard"
    view.mkdir(parents=True)
    for folder in FOLDERS:
        (view / folder).symlink_to(Path.cwd().resolve() / folder, target_is_directory=True)
    return view.parent, Path.cwd().resolve() / "engines"


class BuildPyCompilingKernels(build_py):
    def run(self):
        super().run()
        if os.environ.get("MALLARD_SKIP_PREBUILD"):
            return
        with tempfile.TemporaryDirectory(prefix="mallard-prebuild-") as work:
            work = Path(work)
            cache = work / "cache"
            cache.mkdir()
            path, engines = _importable_view(getattr(self, "editable_mode", False),
                                             Path(self.build_lib).resolve(), work)
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
            env["MALLARD_CACHE"] = str(cache)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
            self.announce("compiling the engines ahead of time (about a minute)", level=2)
            done = subprocess.run([sys.executable, "-P", "-m", "mallard.protocol.warmup"],
                                  env=env, cwd=cache, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            versions = list((cache / "numba").glob("*"))
            if done.returncode != 0 or len(versions) != 1:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                self.warn(f"the engines were not compiled ahead of time ({last}); "
                          "they compile on first use instead")
                return
            target = engines / PREBUILT
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(versions[0], target / versions[0].name)


setup(packages=PACKAGES, package_dir=PACKAGE_DIRS, cmdclass={"build_py": BuildPyCompilingKernels})
