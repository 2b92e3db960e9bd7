"""Dask clusters for the match runner and the tools: `open_cluster(address)`.

`Cluster.pool()` is a `mallard.engines.workpool.WorkPool` whose calls run on the workers (book
chunks, self-play games); the match runner's executor is
`mallard.tournaments.executors.DaskExecutor`.

An address is `tcp://HOST:PORT` (a running `dask scheduler`; `tls://` works the same way) or
`local[:N]` (a `LocalCluster` of N single-threaded worker processes on this machine, N defaulting
to the number of cores, for a try-out and for tests). The `distributed` package is optional
(`pip install 'mallard[cluster]'`): it is imported when a cluster is opened, never at start-up.

Invariants: every failure to reach or start a cluster is a `ClusterUnreachable` (a
`ClusterError`) whose message is one line a user can act on; a `Cluster` closes what it started
(a local cluster's processes) and only disconnects from a scheduler it did not start.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any, Callable, Iterable, Iterator, Optional

from mallard.engines.base import is_number
from mallard.engines.workpool import WorkPool

INSTALL_HINT = "the cluster needs the distributed package: pip install 'mallard[cluster]'"
CONNECT_TIMEOUT_S = 10
WORKER_WAIT_S = 60  # how long work waits for the first worker of a scheduler without any
HANDSHAKE_GRACE_S = 5  # beyond the connect timeout, for the handshake Dask does not time
LOCAL = "local"
REMOTE_SCHEMES = ("tcp://", "tls://", "ws://", "wss://", "inproc://")


class ClusterError(ConnectionError):
    """A cluster that cannot be used: `distributed` missing, scheduler unreachable or gone,
    workers dying. An OSError, as a lost connection is: callers that report a failed file or
    connection in one line report this one the same way."""


class ClusterUnreachable(ClusterError):
    """The cluster could not be used at all (no scheduler there, no worker joined): nothing
    ran on it, unlike a cluster that went away during the work."""


def parse_address(text: str) -> tuple[str, Optional[int]]:
    """(`local`, workers) for `local[:N]`, else (the scheduler address, None). ValueError with a
    one-line message for anything else."""
    text = text.strip()
    if text == LOCAL or text.startswith(LOCAL + ":"):
        count = text[len(LOCAL) + 1:] if text != LOCAL else ""
        if not count:
            return LOCAL, os.cpu_count() or 1
        if not is_number(count) or int(count) < 1:
            raise ValueError(f"'{text}': local:N needs a whole number of workers, at least 1")
        return LOCAL, int(count)
    if text.startswith(REMOTE_SCHEMES) and len(text.split("://", 1)[1]) > 0:
        return text, None
    raise ValueError(f"'{text}' is not a cluster address: tcp://HOST:PORT or local[:N]")


def distributed_module():
    """`distributed`, imported on first use (a heavy optional dependency), or ClusterError."""
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise ClusterUnreachable(INSTALL_HINT) from None


class Cluster:
    """A connected Dask client, and the local cluster behind it when this process started one."""

    def __init__(self, address: str, timeout_s: float = CONNECT_TIMEOUT_S):
        self.address = address
        where, workers = parse_address(address)
        distributed = distributed_module()
        self._local = None
        try:
            if where == LOCAL:
                # processes, one thread each: engines are processes anyway, and a worker killed
                # mid-game must not take other games with it
                # on the loopback only; the dashboard on any free port (a second local
                # cluster must not warn that 8787 is taken)
                self._local = distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=50)
                self.client = distributed.Client(self._local, timeout=timeout_s)
            else:
                self.client = _connect(distributed, where, timeout_s)
        except ClusterError:
            raise
        except (OSError, TimeoutError) as error:
            self._close_local()
            raise ClusterUnreachable(f"cannot reach the Dask scheduler at {where}: "
                                     f"{_first_line(error)}") from None

    def threads(self) -> int:
        """Worker threads connected now (0 when no worker has joined yet)."""
        return sum(self.client.nthreads().values())

    def workers(self) -> int:
        return len(self.client.nthreads())

    def wait_for_workers(self, count: int = 1, timeout_s: Optional[float] = None) -> None:
        timeout_s = WORKER_WAIT_S if timeout_s is None else timeout_s
        try:
            self.client.wait_for_workers(count, timeout=timeout_s)
        except (OSError, TimeoutError) as error:
            raise ClusterUnreachable(f"no worker joined the cluster at {self.address} within "
                                     f"{timeout_s:g} s: {_first_line(error)}") from None

    def pool(self) -> "ClusterPool":
        return ClusterPool(self)

    def _close_local(self) -> None:
        if self._local is not None:
            self._local.close()
            self._local = None

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            self._close_local()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _connect(distributed, address: str, timeout_s: float):
    """A client of the scheduler at `address`, or ClusterError within about `timeout_s`.

    Dask's own timeout covers opening the connection, not the handshake after it: a server that
    accepts and stays silent (a dashboard's HTTP port, one number off the scheduler's) would
    hold the call for ever, and one that answers in another protocol makes Dask read its bytes
    as a frame length. So the client is made on a thread of its own, and anything it raises or
    a wait past the limit is said as what it most likely is."""
    made: dict = {}

    def make() -> None:
        try:
            made["client"] = distributed.Client(address, timeout=timeout_s)
        except BaseException as error:  # noqa: BLE001 - reported to the waiting thread
            made["error"] = error

    thread = threading.Thread(target=make, name="mallard-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout_s + HANDSHAKE_GRACE_S)
    if thread.is_alive():
        raise ClusterUnreachable(f"nothing at {address} answered as a Dask scheduler within "
                                 f"{timeout_s + HANDSHAKE_GRACE_S:g} s (a dashboard's port? "
                                 "a scheduler listens on 8786 unless told otherwise)")
    error = made.get("error")
    if isinstance(error, (OSError, TimeoutError)):
        raise error
    if error is not None:
        raise ClusterUnreachable(f"what answers at {address} is not a Dask scheduler (its "
                                 f"reply did not read as Dask's protocol: "
                                 f"{type(error).__name__})") from None
    return made["client"]


class ClusterPool(WorkPool):
    """A `WorkPool` on the cluster's workers: the shared object is scattered to every worker
    once per call, each item is one task. A cluster that goes away mid-call is a ClusterError;
    a worker that dies is replaced by the scheduler, which runs its items again elsewhere."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def imap_unordered(self, function: Callable[..., Any], shared: Any,
                       items: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        distributed = distributed_module()
        client = self.cluster.client
        futures = {}
        try:
            if shared is not None:
                shared = client.scatter(shared, broadcast=True, hash=False)
            for index, item in enumerate(items):
                futures[client.submit(function, shared, *item, pure=False)] = index
            for future in distributed.as_completed(futures):
                yield futures[future], future.result()
        except distributed.KilledWorker as error:  # the scheduler's limit of worker deaths
            raise ClusterError(f"workers of the cluster at {self.cluster.address} kept dying "
                               f"on the same task: {_first_line(error)}") from None
        except (OSError, TimeoutError, distributed.CancelledError) as error:
            raise ClusterError(f"the cluster at {self.cluster.address} went away: "
                               f"{_first_line(error)}") from None
        finally:
            client.cancel(list(futures))


def open_cluster(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> Cluster:
    return Cluster(address, timeout_s)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
