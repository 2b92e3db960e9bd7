"""Dask clusters for the match runner and the tools: `open_cluster(address)`.

An address is `tcp://HOST:PORT` (a running `dask scheduler`; `tls://` works the same way) or
`local[:N]` (a `LocalCluster` of N single-threaded worker processes on this machine, N defaulting
to the number of cores, for a try-out and for tests). The `distributed` package is optional
(`pip install 'mallard[cluster]'`): it is imported when a cluster is opened, never at start-up.

Invariants: every failure to reach or start a cluster is a `ClusterError` whose message is one
line a user can act on; a `Cluster` closes what it started (a local cluster's processes) and only
disconnects from a scheduler it did not start.
"""

from __future__ import annotations

import importlib
import os
from concurrent.futures import Executor
from typing import Optional

INSTALL_HINT = "the cluster needs the distributed package: pip install 'mallard[cluster]'"
CONNECT_TIMEOUT_S = 10
LOCAL = "local"
REMOTE_SCHEMES = ("tcp://", "tls://", "ws://", "wss://", "inproc://")


class ClusterError(RuntimeError):
    """A cluster that cannot be used: bad address, `distributed` missing, scheduler unreachable
    or gone."""


def parse_address(text: str) -> tuple[str, Optional[int]]:
    """(`local`, workers) for `local[:N]`, else (the scheduler address, None). ValueError with a
    one-line message for anything else."""
    text = text.strip()
    if text == LOCAL or text.startswith(LOCAL + ":"):
        count = text[len(LOCAL) + 1:] if text != LOCAL else ""
        if not count:
            return LOCAL, os.cpu_count() or 1
        if not count.isdigit() or int(count) < 1:
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
        raise ClusterError(INSTALL_HINT) from None


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
                self._local = distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=None, silence_logs=50)
                self.client = distributed.Client(self._local, timeout=timeout_s)
            else:
                self.client = distributed.Client(where, timeout=timeout_s)
        except (OSError, TimeoutError) as error:
            self._close_local()
            raise ClusterError(f"cannot reach the Dask scheduler at {where}: "
                               f"{_first_line(error)}") from None

    def threads(self) -> int:
        """Worker threads connected now (0 when no worker has joined yet)."""
        return sum(self.client.nthreads().values())

    def workers(self) -> int:
        return len(self.client.nthreads())

    def wait_for_workers(self, count: int = 1, timeout_s: float = 60) -> None:
        try:
            self.client.wait_for_workers(count, timeout=timeout_s)
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"no worker joined the cluster at {self.address} within "
                               f"{timeout_s:g} s: {_first_line(error)}") from None

    def executor(self) -> Executor:
        """A `concurrent.futures.Executor` whose calls run on the workers (for process-pool
        style jobs: book chunks, self-play games)."""
        return self.client.get_executor(pure=False)

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


def open_cluster(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> Cluster:
    return Cluster(address, timeout_s)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
