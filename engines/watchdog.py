"""The thread that turns a caller's stop flag or a deadline into a search's own stop request.

Searches run numba kernels that poll their own flag with the GIL released; a watchdog polls the
caller's flag (`mallard.engines.base.new_stop_flag`) and the clock every millisecond; once either
fires it calls `request_stop` every millisecond until the search finishes. Being a Python thread it
must win the GIL and a core first, which on a loaded machine took up to 45 ms; so the
alpha-beta kernels also read the deadline themselves (`mallard.engines.search_common.count_node`)
and the watchdog's deadline is their fallback (and the deadline of the other searches).

One long-lived thread serves every running search. A thread per search cost two thread
switches per move (its start waits for it to run, its join for it to end), about 4 ms of every
answer on a busy machine. `finish()` returns at once and guarantees that the search's
`request_stop` is never called again: requests are made under the lock that `finish` takes.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np

POLL_S = 0.001

_lock = threading.Condition()
_watching: set["Watchdog"] = set()
_thread: Optional[threading.Thread] = None


class Watchdog:
    def __init__(self, request_stop: Callable[[], None], external: Optional[np.ndarray],
                 deadline: Optional[float]):
        self.request_stop, self.external, self.deadline = request_stop, external, deadline
        self.stopping = False

    def start(self) -> None:
        global _thread
        with _lock:
            _watching.add(self)
            if _thread is None or not _thread.is_alive():
                _thread = threading.Thread(target=_watch, name="mallard-watchdog", daemon=True)
                _thread.start()
            _lock.notify_all()

    def finish(self) -> None:
        with _lock:
            _watching.discard(self)

    def _due(self) -> bool:
        return self.stopping or (self.external is not None and bool(self.external[0])) or (
            self.deadline is not None and time.perf_counter() >= self.deadline)


def _watch() -> None:
    while True:
        with _lock:
            while not _watching:
                _lock.wait()
            for watchdog in list(_watching):
                if watchdog._due():
                    # asked again every millisecond until the search returns: a request that
                    # something cleared must not leave a search running for ever
                    watchdog.stopping = True
                    watchdog.request_stop()
            _lock.wait(POLL_S)


def elapsed_ms(started: float) -> int:
    """Milliseconds since a `time.perf_counter()` reading."""
    return int((time.perf_counter() - started) * 1000)
