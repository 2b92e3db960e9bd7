"""Where games run: the scheduler hands `GameJob`s to an executor and gets `GameRecord`s back.

The interface is deliberately small — `capacity`, `submit(job) -> Future`, `request_stop()`,
`close()` — and speaks only the JSON-ready job and record types, so an executor that ships jobs
to other machines (each with its own `EnginePool`) plugs in without touching the referee or the
scheduler. `LocalExecutor` runs `capacity` games at once on this machine: every game's engines
are their own processes; the referee of each game is a thread with its own pool of engine
processes, reused from game to game; a `StartGate` holds every game's first move while an engine
of another game is still starting.
"""

from __future__ import annotations

import abc
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from tournaments.records import GameJob, GameRecord
from tournaments.referee import DEFAULT_STALL_TIMEOUT_MS, EnginePool, StartGate, play_game


class Executor(abc.ABC):
    capacity: int = 1

    @abc.abstractmethod
    def submit(self, job: GameJob) -> "Future[GameRecord]":
        """Start the game; the future's result is its record (an engine's failure is a result,
        not an exception)."""

    @abc.abstractmethod
    def request_stop(self, kill: bool = False) -> None:
        """Games still running end at their next move with result `*` (not stored); with
        `kill` their engines are killed at once."""

    @abc.abstractmethod
    def close(self) -> None:
        """Wait for running games and shut every engine down."""


class LocalExecutor(Executor):
    def __init__(self, concurrency: int = 1, startup_timeout_ms: int = 20_000,
                 ready_timeout_ms: int = 120_000,
                 stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.capacity = concurrency
        self._timeouts = {"startup_timeout_ms": startup_timeout_ms,
                          "ready_timeout_ms": ready_timeout_ms,
                          "stall_timeout_ms": stall_timeout_ms}
        self._threads = ThreadPoolExecutor(max_workers=concurrency,
                                           thread_name_prefix="mallard-game")
        self._local = threading.local()
        self._pools: list[EnginePool] = []
        self._gate = StartGate()  # one for all the games played at once
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def _pool(self) -> EnginePool:
        pool = getattr(self._local, "pool", None)
        if pool is None:
            pool = EnginePool(**self._timeouts, gate=self._gate)
            self._local.pool = pool
            with self._lock:
                self._pools.append(pool)
        return pool

    def _run(self, job: GameJob) -> GameRecord:
        return play_game(job, self._pool(), self._stop.is_set)

    def submit(self, job: GameJob) -> "Future[GameRecord]":
        return self._threads.submit(self._run, job)

    def request_stop(self, kill: bool = False) -> None:
        self._stop.set()
        if kill:
            with self._lock:
                for pool in self._pools:
                    pool.kill_active()

    def close(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            for pool in self._pools:
                pool.close()
            self._pools.clear()
