"""Where the engines' batch work runs (book chunks, self-play games): a `WorkPool`.

A pool runs `function(shared, *item)` for every item and yields `(index, result)` as items
finish, in any order. `shared` is one read-only object every call needs (a book to probe, or
None); a pool sends it to each worker once, not with every item. `LocalPool` uses worker
processes on this machine; `mallard.tournaments.cluster.ClusterPool` runs the same calls on Dask
workers, so the code that cuts the work into items does not know where it runs.

Invariants: `function` is a module-level function (workers import it by name) and its results
are plain picklable values; a worker's exception reaches the caller when its result is read.
"""

from __future__ import annotations

import abc
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any, Callable, Iterable, Iterator

_shared: Any = None  # in a LocalPool worker process: the pool's shared object


class WorkPool(abc.ABC):
    @abc.abstractmethod
    def imap_unordered(self, function: Callable[..., Any], shared: Any,
                       items: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        """(index of the item, function(shared, *item)) for every item, as they finish."""


def _install_shared(shared: Any) -> None:
    global _shared
    _shared = shared


def _call_with_shared(function: Callable[..., Any], item: tuple) -> Any:
    return function(_shared, *item)


class LocalPool(WorkPool):
    """`jobs` worker processes started with spawn (a forked numba runtime is not safe), or this
    process itself when `jobs` is 1."""

    def __init__(self, jobs: int = 1):
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.jobs = jobs

    def imap_unordered(self, function, shared, items):
        items = list(items)
        if self.jobs == 1 or len(items) <= 1:
            for index, item in enumerate(items):
                yield index, function(shared, *item)
            return
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(items)),
                                 mp_context=get_context("spawn"), initializer=_install_shared,
                                 initargs=(shared,)) as pool:
            futures = {pool.submit(_call_with_shared, function, item): index
                       for index, item in enumerate(items)}
            for future in as_completed(futures):
                yield futures[future], future.result()
