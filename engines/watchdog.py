"""The thread that turns a caller's stop flag or a deadline into a search's own stop request.

Searches run numba kernels that poll their own flag with the GIL released; the watchdog polls
the caller's flag (`engines.base.new_stop_flag`) and the clock every millisecond; once either
fires it calls `request_stop` every millisecond until the search finishes.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np


class Watchdog(threading.Thread):
    def __init__(self, request_stop: Callable[[], None], external: Optional[np.ndarray],
                 deadline: Optional[float]):
        super().__init__(daemon=True)
        self.request_stop, self.external, self.deadline = request_stop, external, deadline
        self.done = threading.Event()

    def run(self) -> None:
        stopping = False
        while not self.done.wait(0.001):
            if stopping or (self.external is not None and self.external[0]) or (
                    self.deadline is not None and time.perf_counter() >= self.deadline):
                # asked again every millisecond until the search returns: a request that
                # something cleared must not leave a search running for ever
                stopping = True
                self.request_stop()

    def finish(self) -> None:
        self.done.set()
        self.join()


def elapsed_ms(started: float) -> int:
    """Milliseconds since a `time.perf_counter()` reading."""
    return int((time.perf_counter() - started) * 1000)
