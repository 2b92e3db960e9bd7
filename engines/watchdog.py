"""The thread that turns a caller's stop flag or a deadline into a search's own stop request.

Searches run numba kernels that poll their own flag with the GIL released; the watchdog polls
the caller's flag (`engines.base.new_stop_flag`) and the clock every millisecond and calls
`request_stop` once.
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
        while not self.done.wait(0.001):
            if (self.external is not None and self.external[0]) or (
                    self.deadline is not None and time.perf_counter() >= self.deadline):
                self.request_stop()
                return

    def finish(self) -> None:
        self.done.set()
        self.join()


def elapsed_ms(started: float) -> int:
    """Milliseconds since a `time.perf_counter()` reading."""
    return int((time.perf_counter() - started) * 1000)
