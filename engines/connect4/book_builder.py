"""Builds the project's own Connect Four books for any board size (`mallard book build`).

`build_book` solves every position worth probing with 0..depth stones, deepest level first, so
that each level's search probes the levels below it; the workers of a `WorkPool` (local
processes, or a Dask cluster's) solve fixed-size chunks, and each finished chunk is kept on disk
here, so an interrupted build resumes where it stopped; a lock on that work directory keeps a
second build of the same book from writing into it (it is refused at once, naming the first). The
result is a `book.Book` file (see `book.py` for the format and where books are looked up); the
solves are exact, so where the chunks ran does not change a byte of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from mallard.engines import locks
from mallard.engines.connect4 import book_kernels as BK
from mallard.engines.connect4 import kernels as K
from mallard.engines.connect4.book import Book, built_book_path, cache_dir
from mallard.engines.connect4.solver import Solver
from mallard.engines.workpool import LocalPool, WorkPool

CHUNK = 2000  # positions a worker solves per task (and per resumable file)
LOCK_FILE = "lock"  # in the work directory: one build at a time writes its chunks

def enumerate_levels(width: int, height: int, depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """For d = 0..depth the (curs, masks) of every position with d stones that no move has
    ended, one per mirror pair, sorted by canonical key."""
    ctx = K.make_context(width, height)
    curs = np.zeros(1, dtype=np.uint64)
    masks = np.zeros(1, dtype=np.uint64)
    levels = [(curs, masks)]
    for _ in range(depth):
        out_c = np.empty(curs.size * width, dtype=np.uint64)
        out_m = np.empty(curs.size * width, dtype=np.uint64)
        n = BK.expand_level(curs, masks, ctx, out_c, out_m)
        keys = out_c[:n] + out_m[:n]
        keys, first = np.unique(keys, return_index=True)
        curs, masks = out_c[:n][first], out_m[:n][first]
        levels.append((curs, masks))
    return levels


@dataclass(frozen=True, eq=False)
class LevelSolver:
    """What every chunk of a level needs: the board and the books its search probes (sent to
    each worker once per level)."""

    width: int
    height: int
    hash_mb: int
    book: Optional[Book]


_worker_solver: tuple = (None, None)  # (the LevelSolver it was made for, Solver) in a worker


def _solve_chunk(spec: LevelSolver, curs: np.ndarray, masks: np.ndarray,
                 moves: int) -> np.ndarray:
    global _worker_solver
    if _worker_solver[0] is not spec:  # a new level: one solver (and table) per level
        _worker_solver = (spec, Solver(spec.width, spec.height, hash_mb=spec.hash_mb,
                                       book=spec.book))
    solver = _worker_solver[1]
    out = np.empty(curs.size, dtype=np.int64)
    for i in range(curs.size):
        out[i] = solver.solve_bits(int(curs[i]), int(masks[i]), moves)
    return out


def build_book(width: int, height: int, depth: int, jobs: int = 1,
               output: Optional[Path] = None, hash_mb: int = 64, base: Optional[Path] = None,
               progress: Optional[Callable[[int, int, int], None]] = None,
               pool: Optional[WorkPool] = None) -> Path:
    """Solve every probe-worthy position with 0..`depth` stones, deepest level first (each level's
    search probes the levels below it and the `base` book file, if any), on `pool` (default:
    `jobs` local worker processes). Finished chunks are kept in a work directory, so an
    interrupted build resumes.
    Returns the path of the book file (which holds only the levels built here).
    `progress(level, chunks_done, chunks_total)` is called as chunks finish."""
    ctx = K.make_context(width, height)  # validates the size
    pool = pool or LocalPool(max(1, jobs))
    if depth < 0 or depth >= width * height:
        raise ValueError(f"depth must be in 0..{width * height - 1}")
    output = Path(output) if output else built_book_path(width, height, depth)
    work = cache_dir() / f"build-{width}x{height}-d{depth}"
    work.mkdir(parents=True, exist_ok=True)
    with locks.hold(work / LOCK_FILE, f"the book build's work directory {work}"):
        return _build_levels(width, height, depth, ctx, pool, output, hash_mb, base, progress,
                             work)


def _build_levels(width: int, height: int, depth: int, ctx, pool: WorkPool, output: Path,
                  hash_mb: int, base: Optional[Path], progress, work: Path) -> Path:
    """`build_book`'s levels, with the lock on the work directory `work` held."""
    levels = enumerate_levels(width, height, depth)
    all_keys, all_scores = [], []
    partial_path = work / "partial.npz"
    for level in range(depth, -1, -1):
        curs, masks = levels[level]
        worthy = np.empty(curs.size, dtype=np.bool_)
        BK.probe_worthy(curs, masks, ctx, worthy)
        curs, masks = curs[worthy], masks[worthy]
        chunks = [slice(start, start + CHUNK) for start in range(0, curs.size, CHUNK)]
        todo = [i for i in range(len(chunks)) if not (work / f"level{level}-chunk{i}.npy").exists()]
        done = len(chunks) - len(todo)
        if progress:
            progress(level, done, len(chunks))
        if todo:
            book_paths = [partial_path] if all_keys else []
            if base is not None:
                book_paths.append(Path(base))
            spec = LevelSolver(width, height, hash_mb,
                               Book.merge([Book.load(path) for path in book_paths]))
            items = [(curs[chunks[i]], masks[chunks[i]], level) for i in todo]
            for index, scores in pool.imap_unordered(_solve_chunk, spec, items):
                i = todo[index]
                target = work / f"level{level}-chunk{i}.npy"
                tmp = work / f"level{level}-chunk{i}.tmp.npy"
                np.save(tmp, scores)
                os.replace(tmp, target)
                done += 1
                if progress:
                    progress(level, done, len(chunks))
        scores = np.concatenate([np.load(work / f"level{level}-chunk{i}.npy")
                                 for i in range(len(chunks))]) if chunks else np.zeros(0, np.int64)
        all_keys.append(curs + masks)
        all_scores.append(scores)
        Book.from_entries(width, height, range(level, depth + 1), np.concatenate(all_keys),
                          np.concatenate(all_scores)).save(partial_path)
    book = Book.load(partial_path)
    book.save(output)
    for leftover in work.iterdir():
        leftover.unlink()  # the lock file too: the lock is held until the caller closes it
    work.rmdir()
    return output

