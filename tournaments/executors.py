"""Where games run: the scheduler hands `GameJob`s to an executor and gets `GameRecord`s back.

The interface is deliberately small — `capacity`, `submit(job) -> Future`, `request_stop()`,
`close()` — and speaks only the JSON-ready job and record types, so an executor that ships jobs
to other machines (each with its own `EnginePool`) plugs in without touching the referee or the
scheduler. `LocalExecutor` runs `capacity` games at once on this machine: every game's engines
are their own processes; the referee of each game is a thread with its own pool of engine
processes, reused from game to game; a `StartGate` holds every game's first move while an engine
of another game is still starting.

`DaskExecutor` runs the games on a Dask cluster (`mallard.tournaments.cluster`): a job travels as
its dict, the record comes back as its dict. Each worker thread keeps one `EnginePool` per match
(`_play_on_worker`), so engines are reused from game to game there too. A game whose worker dies
is run again from its start by the scheduler on another worker; every start announces itself
(`log_event` on the match's topic), so the coordinator counts the retries (`retries(index)`).
Stopping reaches the workers at once (`client.run`): running games end with result `*` (their
engines killed with `kill`), queued ones are cancelled. A cluster that goes away fails the
games in flight with one `ClusterError` and refuses new ones.
"""

from __future__ import annotations

import abc
import datetime
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional, Union

from mallard.engines.timeman import freeze_long_lived_objects
from mallard.tournaments.cluster import Cluster, ClusterError, distributed_module, open_cluster
from mallard.tournaments.records import GameJob, GameRecord
from mallard.tournaments.referee import (
    DEFAULT_STALL_TIMEOUT_MS,
    STOPPED,
    EnginePool,
    StartGate,
    load_rules,
    play_game,
)


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

    def retries(self, index: int) -> int:
        """How many times game `index` was started again because the worker playing it was
        lost (0 on this machine: a local game never moves)."""
        return 0

    def cluster_status(self) -> Optional[dict]:
        """Where the games run when not on this machine: address, workers and threads
        connected now; None for the local executor."""
        return None


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


def stopped_record(job: GameJob) -> GameRecord:
    """The record of a game stopped before its end (result `*`, never stored)."""
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return GameRecord(job, "*", STOPPED, STOPPED.termination, [], "", started_at, 0,
                      job.white.name, job.black.name)


# --- the worker side: what a Dask worker process keeps from game to game ---------------------
# Worker threads play one game at a time each; a thread's pool for a match is used by that
# thread only. Stop and close requests arrive from the coordinator on the worker's event loop.
_worker_lock = threading.Lock()
_worker_pools: dict[tuple[str, int], EnginePool] = {}  # (match key, thread id) -> its engines
_worker_busy: set[tuple[str, int]] = set()  # pools playing a game now
_worker_gates: dict[str, StartGate] = {}  # per match: the games this process plays at once
_worker_stopped: set[str] = set()  # matches whose games must end (and whose engines go)
_worker_loaded: set[tuple] = set()  # (variant, board) whose rules this process has loaded


def _play_on_worker(match_key: str, topic: str, job_data: dict, timeouts: dict) -> dict:
    """One game on a Dask worker: {"attempt": this start's id, "record": the record's dict}.
    The start is announced first, so a start on a worker that then dies is counted."""
    attempt = uuid.uuid4().hex
    worker = distributed_module().get_worker()
    worker.log_event(topic, {"index": job_data["index"], "attempt": attempt,
                             "worker": worker.address})
    job = GameJob.from_dict(job_data)
    slot = (match_key, threading.get_ident())
    with _worker_lock:
        if match_key in _worker_stopped:
            return {"attempt": attempt, "record": stopped_record(job).to_dict()}
        _close_idle_pools(keep=match_key)
        pool = _worker_pools.get(slot)
        if pool is None:
            gate = _worker_gates.setdefault(match_key, StartGate())
            pool = _worker_pools[slot] = EnginePool(**timeouts, gate=gate)
        _worker_busy.add(slot)
        first_of_variant = (job.variant, job.board) not in _worker_loaded
        _worker_loaded.add((job.variant, job.board))
    try:
        if first_of_variant:
            # as on the coordinator: no collector pause over the loaded rules may fall into
            # the reading of an engine's timed reply
            load_rules(job.variant, job.board)
            freeze_long_lived_objects()
        record = play_game(job, pool, lambda: match_key in _worker_stopped)
    finally:
        with _worker_lock:
            _worker_busy.discard(slot)
            closing = match_key in _worker_stopped and _worker_pools.get(slot) is pool
            if closing:
                del _worker_pools[slot]
        if closing:
            pool.close()
    return {"attempt": attempt, "record": record.to_dict()}


def _close_idle_pools(keep: str) -> None:
    """Close the engines other matches left idle in this process (a coordinator that was
    killed never said goodbye). Called with `_worker_lock` held."""
    for slot in [slot for slot in _worker_pools if slot[0] != keep and slot not in _worker_busy]:
        _close_in_background(_worker_pools.pop(slot))


def _close_in_background(pool: EnginePool) -> None:
    # engines take a moment to quit: not on the worker's event loop, nor a game's thread
    threading.Thread(target=pool.close, name="mallard-close", daemon=True).start()


def _stop_on_worker(match_key: str, kill: bool) -> int:
    """(Run on every worker by the coordinator.) The match's games end at their next move, at
    once with `kill`; games not started yet return unplayed. The number of games running."""
    with _worker_lock:
        _worker_stopped.add(match_key)
        running = [pool for slot, pool in _worker_pools.items()
                   if slot[0] == match_key and slot in _worker_busy]
    if kill:
        for pool in running:
            pool.kill_active()
    return len(running)


def _close_on_worker(match_key: str) -> None:
    """(Run on every worker at the end of a match.) Stop its games and close its engines."""
    _stop_on_worker(match_key, kill=True)
    with _worker_lock:
        for slot in [slot for slot in _worker_pools
                     if slot[0] == match_key and slot not in _worker_busy]:
            _close_in_background(_worker_pools.pop(slot))
        _worker_gates.pop(match_key, None)


# --- the coordinator side ---------------------------------------------------------------------
class DaskExecutor(Executor):
    """Games on a Dask cluster. `cluster` is an address (`tcp://HOST:PORT`, `local[:N]`) or an
    open `Cluster`; the executor closes only what it opened. `concurrency` is the number of
    games in flight, by default the worker threads connected (read again as workers come and
    go)."""

    STATUS_INTERVAL_S = 2.0  # how old the worker count may be

    def __init__(self, cluster: Union[str, Cluster], concurrency: Optional[int] = None,
                 startup_timeout_ms: int = 20_000, ready_timeout_ms: int = 120_000,
                 stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS):
        if concurrency is not None and concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._owned = isinstance(cluster, str)
        self.cluster = open_cluster(cluster) if isinstance(cluster, str) else cluster
        try:  # a scheduler without workers would hold the first game for ever, saying nothing
            self.cluster.wait_for_workers(1)
        except BaseException:
            if self._owned:
                self.cluster.close()
            raise
        self.address = self.cluster.address
        self._client = self.cluster.client
        self._concurrency = concurrency
        self._timeouts = {"startup_timeout_ms": startup_timeout_ms,
                          "ready_timeout_ms": ready_timeout_ms,
                          "stall_timeout_ms": stall_timeout_ms}
        self.key = f"mallard-match-{uuid.uuid4().hex[:12]}"
        self._topic = f"{self.key}-starts"
        self._lock = threading.Lock()
        self._attempts: dict[int, set[str]] = {}  # game -> the ids of its starts
        self.workers_of: dict[int, str] = {}  # game -> the worker of its latest start
        self._in_flight: dict = {}  # Dask future -> (job, the future handed out)
        self._stopping = False
        self._lost: Optional[str] = None  # why the cluster is gone, once it is
        self._status = {"address": self.address, "workers": 0, "threads": 0}
        self._status_read = 0.0
        self._client.subscribe_topic(self._topic, self._started)

    # --- what the coordinator hears -------------------------------------------------------------
    def _started(self, event) -> None:
        _, message = event
        with self._lock:
            self._attempts.setdefault(message["index"], set()).add(message["attempt"])
            self.workers_of[message["index"]] = message["worker"]

    def retries(self, index: int) -> int:
        with self._lock:
            return max(0, len(self._attempts.get(index, ())) - 1)

    def cluster_status(self) -> dict:
        now = time.monotonic()
        if now - self._status_read >= self.STATUS_INTERVAL_S and self._connected():
            self._status_read = now
            try:
                info = self._client.scheduler_info(n_workers=0)
                self._status = {"address": self.address, "workers": info.get("n_workers", 0),
                                "threads": info.get("total_threads", 0)}
            except (OSError, TimeoutError):
                pass  # the next read, or the games' futures, will say the cluster is gone
        return dict(self._status)

    @property
    def capacity(self) -> int:
        if self._concurrency is not None:
            return self._concurrency
        return max(1, self.cluster_status()["threads"])

    def _connected(self) -> bool:
        return self._lost is None and self._client.status == "running"

    def _gone(self, detail: str) -> ClusterError:
        self._lost = self._lost or detail
        return ClusterError(f"the cluster at {self.address} went away: {self._lost}")

    # --- games ------------------------------------------------------------------------------------
    def submit(self, job: GameJob) -> "Future[GameRecord]":
        if not self._connected():
            raise self._gone(self._lost or "lost the connection to the scheduler")
        handed_out: Future = Future()
        remote = self._client.submit(_play_on_worker, self.key, self._topic, job.to_dict(),
                                     self._timeouts, key=f"{self.key}-game-{job.index}",
                                     pure=False)
        with self._lock:
            self._in_flight[remote] = (job, handed_out)
        remote.add_done_callback(self._landed)
        return handed_out

    def _landed(self, remote) -> None:
        """(On a client thread.) Hand the game's record, or why there is none, over."""
        with self._lock:
            job, handed_out = self._in_flight.pop(remote, (None, None))
        if handed_out is None:
            return
        try:
            if remote.status == "finished":
                data = remote.result()
                with self._lock:
                    self._attempts.setdefault(job.index, set()).add(data["attempt"])
                handed_out.set_result(GameRecord.from_dict(data["record"]))
            elif remote.status == "cancelled":
                if self._stopping:
                    handed_out.set_result(stopped_record(job))
                else:  # nobody here cancelled it: the scheduler is gone
                    handed_out.set_exception(self._gone("lost the connection to the scheduler"))
            else:  # a runner bug on the worker, or a game that killed its workers
                handed_out.set_exception(remote.exception())
        except Exception as error:  # the result could not be fetched
            if self._connected():
                handed_out.set_exception(error)
            else:
                handed_out.set_exception(self._gone(_first_line(error)))

    def request_stop(self, kill: bool = False) -> None:
        self._stopping = True
        self._tell_workers(_stop_on_worker, self.key, kill)
        with self._lock:
            remote = list(self._in_flight)
        if remote and self._connected():
            try:
                self._client.cancel(remote)
            except (OSError, TimeoutError):
                pass

    def close(self) -> None:
        self.request_stop(kill=True)
        self._tell_workers(_close_on_worker, self.key)
        try:
            self._client.unsubscribe_topic(self._topic)
        except (OSError, TimeoutError, KeyError):
            pass
        if self._owned:
            self.cluster.close()

    def _tell_workers(self, function, *args) -> None:
        """Run `function(*args)` on every worker now; nothing when the cluster is gone."""
        if not self._connected():
            return
        try:
            self._client.run(function, *args, on_error="ignore")
        except (OSError, TimeoutError):
            pass


def _first_line(error: Optional[BaseException]) -> str:
    text = str(error).strip() if error is not None else ""
    return text.splitlines()[0] if text else type(error).__name__
