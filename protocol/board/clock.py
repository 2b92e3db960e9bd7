"""The two clocks of a board game against the engine: a base time and a Fischer increment.

`GameClock` counts milliseconds on a monotonic clock it is given (`now`, seconds), so tests
can drive it. At most one side's clock runs; `start(side)` runs it (settling the other's),
`pause()` stops both, `moved(side)` ends that side's turn: False when its time ran out first
(the move is then too late), else the increment is added. `flag_in()` says how long until the
running side's time runs out. Invariant: `remaining` changes only when settled, so a view of
the clocks is the stored times less the running side's time since `since`.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

MIN_BASE_MS = 1_000
MAX_BASE_MS = 3 * 3600_000
MAX_INCREMENT_MS = 60_000


class GameClock:
    def __init__(self, base_ms: int, increment_ms: int,
                 now: Callable[[], float] = time.monotonic):
        self.base_ms, self.increment_ms = base_ms, increment_ms
        self.remaining = [float(base_ms), float(base_ms)]
        self.running: Optional[int] = None
        self.since = 0.0
        self.now = now

    def _settle(self) -> None:
        if self.running is not None:
            at = self.now()
            self.remaining[self.running] -= (at - self.since) * 1000
            self.since = at

    def left_ms(self, side: int) -> int:
        """`side`'s time left now (0 when it ran out)."""
        left = self.remaining[side]
        if side == self.running:
            left -= (self.now() - self.since) * 1000
        return max(0, round(left))

    def start(self, side: int) -> None:
        if self.running == side:
            return
        self._settle()
        self.running, self.since = side, self.now()

    def pause(self) -> None:
        self._settle()
        self.running = None

    def moved(self, side: int) -> bool:
        """End `side`'s turn; False (and no increment) when its time ran out before."""
        if self.running == side:
            self._settle()
            self.running = None
        if self.remaining[side] <= 0:
            self.remaining[side] = 0.0
            return False
        self.remaining[side] += self.increment_ms
        return True

    def flag_in(self) -> Optional[float]:
        """Seconds until the running side's time runs out (None: no clock runs)."""
        if self.running is None:
            return None
        return max(0.0, self.left_ms(self.running) / 1000)

    def view(self) -> dict:
        return {"base": self.base_ms, "increment": self.increment_ms,
                "left": [self.left_ms(0), self.left_ms(1)], "running": self.running}
