"""Builds the package as pyproject.toml declares it, and compiles the engines ahead of time.

Numba compiles a game's kernels on their first use, which took 10-30 s on a first run after each
install (issue 14, item 12). The build runs `mallard warmup` on the sources being packaged and
ships its compiled code in `engines/_prebuilt/<source version>/`, which the first run copies into
its cache (`engines.compile_cache`). The code is for the building machine's CPU and numba
version, as `pip install` builds it; elsewhere numba finds no matching entry and compiles as
before. A failed ahead-of-time compile only warns: the package still compiles on first use.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PREBUILT = "_prebuilt"


class BuildPyCompilingKernels(build_py):
    def run(self):
        super().run()
        if os.environ.get("MALLARD_SKIP_PREBUILD"):
            return
        editable = getattr(self, "editable_mode", False)
        sources = (Path.cwd() if editable else Path(self.build_lib)).resolve()  # what is imported
        target = sources / "engines" / PREBUILT
        with tempfile.TemporaryDirectory(prefix="mallard-prebuild-") as cache:
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
            env["MALLARD_CACHE"] = cache
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(sources),
                                                              env.get("PYTHONPATH")]))
            self.announce("compiling the engines ahead of time (about a minute)", level=2)
            done = subprocess.run([sys.executable, "-m", "protocol.warmup"], env=env,
                                  cwd=cache, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
            versions = list((Path(cache) / "numba").glob("*"))
            if done.returncode != 0 or len(versions) != 1:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                self.warn(f"the engines were not compiled ahead of time ({last}); "
                          "they compile on first use instead")
                return
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(versions[0], target / versions[0].name)


setup(cmdclass={"build_py": BuildPyCompilingKernels})
