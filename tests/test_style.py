"""The house style, checked like any test: ruff's pyflakes and import-order rules over the
whole tree (configured in pyproject.toml), so CI refuses an unused import or a misplaced one."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or pytest.skip("ruff is not installed (pip install '.[test]')")
    done = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], cwd=ROOT, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_catches_an_unused_import(tmp_path):
    """The control: the same configuration refuses a file with an unused import."""
    ruff = shutil.which("ruff") or pytest.skip("ruff is not installed (pip install '.[test]')")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    done = subprocess.run([ruff, "check", "--no-cache", "--config",
                           str(ROOT / "pyproject.toml"), str(bad)],
                          text=True, capture_output=True, timeout=60)
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + done.stderr
