"""The numba cache directory is keyed by the engine sources (see engines/__init__.py)."""

import os
import shutil
from pathlib import Path

import engines


def test_cache_directory_follows_the_engine_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path / "cache"))
    first = engines._numba_cache_dir()
    assert first.parent == tmp_path / "cache" / "numba" and len(first.name) == 16
    assert engines._numba_cache_dir() == first  # stable while nothing changes
    package = Path(engines.__file__).parent
    copy = tmp_path / "engines"
    shutil.copytree(package, copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz", "Test_*"))
    assert os.environ["NUMBA_CACHE_DIR"]  # chosen before any kernel imported numba
    (copy / "watchdog.py").write_text((copy / "watchdog.py").read_text() + "\n# edited\n")
    edited = _cache_dir_of(copy, monkeypatch)
    original = _cache_dir_of(package, monkeypatch)
    assert edited != original and original == first


def _cache_dir_of(package: Path, monkeypatch) -> Path:
    monkeypatch.setattr(engines, "__file__", str(package / "__init__.py"))
    return engines._numba_cache_dir()
