"""Matches on a Dask cluster: the same games as on this machine, a worker killed mid-game, a
stop that reaches the workers, a coordinator killed and resumed, a cluster that goes away, and
(slow set) a real `dask scheduler` with two `dask worker`s driven through `mallard match`.

The local cluster's worker processes import `tournaments` by name: they inherit this process's
`sys.path` (the worktree first), and the separately started workers get it as PYTHONPATH."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from mallard.tournaments import EngineConfig, Match, Opening, Reporter, TimeControl  # noqa: E402
from mallard.tournaments import cluster as cluster_module  # noqa: E402
from mallard.tournaments.cli import cluster_line  # noqa: E402
from mallard.tournaments.cluster import ClusterUnreachable, open_cluster  # noqa: E402
from mallard.tournaments.executors import DaskExecutor, _worker_busy, _worker_pools  # noqa: E402
from mallard.tournaments.records import Adjudication  # noqa: E402
from tests.protocol.harness import ENGINE_COMMAND
from tests.tournaments.match_db import games_in, kill_match_after  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(Path(__file__).with_name("scripted_engine.py"))
# six two-ply Connect Four openings, each played twice with colours swapped: 12 different games
OPENINGS = [Opening(moves=(f"P@{a}1", f"P@{b}1" if a != b else f"P@{b}2"))
            for a, b in ("dd", "dc", "ce", "ab", "gf", "bd")]


def mallard(name: str, depth: int) -> EngineConfig:
    return EngineConfig(name=name, command=ENGINE_COMMAND + ["uci"], protocol="uci",
                        tc=TimeControl.from_settings(depth=str(depth)))


def slow_script(name: str, delay: float) -> EngineConfig:
    command = [sys.executable, SCRIPT, "--behaviour", "slow", "--delay", str(delay),
               "--seed", str(len(name))]
    return EngineConfig(name=name, command=command, protocol="uci",
                        tc=TimeControl.from_settings(st="5"))


@pytest.fixture(scope="module")
def cluster():
    with open_cluster("local:2") as opened:
        opened.wait_for_workers(2)
        yield opened


def _games(records) -> dict[int, tuple]:
    return {r.index: (r.result, r.reason, tuple(m.text for m in r.moves)) for r in records}


def _stored(db: Path) -> list[tuple[int, str, int]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT idx, result, retries FROM games ORDER BY idx").fetchall()


def test_a_cluster_match_plays_the_local_games_game_for_game(cluster):
    settings = dict(variant="cfour", engines=[mallard("d4", 4), mallard("d6", 6)], games=12,
                    repeat=True, openings=OPENINGS, reporter=Reporter())
    local = Match(concurrency=2, **settings).run()
    executor = DaskExecutor(cluster)
    on_cluster = Match(executor=executor, **settings).run()
    assert len(local.records) == len(on_cluster.records) == 12
    assert _games(on_cluster.records) == _games(local.records)
    assert len({moves for _, _, moves in _games(local.records).values()}) >= 6
    assert executor.capacity == 2 and on_cluster.cluster_status["workers"] == 2
    assert set(executor.workers_of.values()) == set(cluster.client.nthreads())  # both played
    assert not on_cluster.retries and on_cluster.summary()["cluster"]["retries"] == 0
    # the match closed its engines on the workers, and the cluster it did not open stays up
    assert cluster.client.run(lambda: len(_worker_pools)) == {w: 0 for w in executor.workers_of
                                                              .values()}


class KillAWorker(Reporter):
    """Once `after` games have finished, SIGKILLs the worker process of a game that has been in
    progress there for a moment and is far from its end (watching from a thread: the games of a
    pair end together)."""

    def __init__(self, executor: DaskExecutor, after: int):
        self.executor, self.after = executor, after
        self.finished: set[int] = set()
        self.killed_game = None
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()

    def game_finished(self, record, match):
        self.finished.add(record.index)

    def _watch(self) -> None:
        first_seen: dict[int, float] = {}
        deadline = time.monotonic() + 120
        while self.killed_game is None and time.monotonic() < deadline:
            time.sleep(0.05)
            with self.executor._lock:  # games started on a worker, their record not back
                running = [job.index for job, _ in self.executor._in_flight.values()
                           if job.index in self.executor.workers_of]
            now = time.monotonic()
            for index in running:
                first_seen.setdefault(index, now)
            ready = [index for index in running if 0.3 < now - first_seen[index] < 1.5]
            if len(self.finished) >= self.after and ready:
                worker = self.executor.workers_of[ready[0]]
                pids = self.executor.cluster.client.run(os.getpid, workers=[worker])
                os.kill(pids[worker], signal.SIGKILL)
                self.killed_game = ready[0]


def test_a_worker_killed_mid_game_loses_no_game_and_the_retry_is_counted(cluster, tmp_path):
    db, pgn = tmp_path / "match.sqlite", tmp_path / "match.pgn"
    executor = DaskExecutor(cluster)
    reporter = KillAWorker(executor, after=2)
    # 6 games of about 4 s each (40 moves at 0.1 s), two at a time
    match = Match(variant="duck", engines=[slow_script("a", 0.1), slow_script("b", 0.1)],
                  games=6, adjudication=Adjudication(maxmoves=20), executor=executor,
                  concurrency=2, db=str(db), pgn_out=str(pgn), reporter=reporter).run()
    assert reporter.killed_game is not None and match.stop_reason is None
    stored = _stored(db)
    assert [row[0] for row in stored] == list(range(1, 7))  # every game, once
    assert all(result != "*" for _, result, _ in stored)
    assert {idx: retries for idx, _, retries in stored if retries} == {reporter.killed_game: 1}
    assert pgn.read_text().count("[Event ") == 6
    summary = match.summary()["cluster"]
    assert summary["retries"] == 1 and summary["games_retried"] == [reporter.killed_game]
    assert f"1 retry (game {reporter.killed_game} played again" in cluster_line(match)
    cluster.wait_for_workers(2)  # the nanny brings the killed worker back


def test_a_stop_ends_the_running_games_on_the_workers_and_stores_none(cluster, tmp_path):
    db = tmp_path / "match.sqlite"
    executor = DaskExecutor(cluster)
    match = Match(variant="duck", engines=[slow_script("a", 0.5), slow_script("b", 0.5)],
                  games=6, adjudication=Adjudication(maxmoves=30), executor=executor,
                  db=str(db), reporter=Reporter())  # a game takes 30 s
    stopped_at = []

    def stop_once_two_games_run():
        deadline = time.monotonic() + 60
        while len(executor.workers_of) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        stopped_at.append(time.monotonic())
        match.request_stop("stopped by the test")

    threading.Thread(target=stop_once_two_games_run, daemon=True).start()
    match.run()
    assert time.monotonic() - stopped_at[0] < 10  # not the 30 s the running games would take
    assert match.stop_reason == "stopped by the test" and match.records == []
    assert _stored(db) == []
    assert len(executor.workers_of) == 2  # two games were in progress when it stopped
    assert cluster.client.run(lambda: len(_worker_busy)) == {w: 0 for w in
                                                             cluster.client.nthreads()}


def engine_args(name: str, delay: float) -> list[str]:
    command = " ".join([sys.executable, SCRIPT, "--behaviour", "slow", "--delay", str(delay),
                        "--seed", str(len(name))])
    return ["-engine", f"cmd={command}", f"name={name}", "st=5"]


def mallard_match(*args: str, timeout: float = 180, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(ENGINE_COMMAND + ["match", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def test_a_killed_coordinator_resumes_on_the_cluster_without_losing_or_repeating(tmp_path):
    db, pgn = tmp_path / "match.sqlite", tmp_path / "match.pgn"
    args = ["-variant", "duck", *engine_args("a", 0.05), *engine_args("b", 0.05), "-games", "8",
            "-maxmoves", "8", "-cluster", "local:2", "-db", str(db), "-pgnout", str(pgn)]
    # the coordinator is killed with its local cluster and the engines
    killed_at = kill_match_after(ENGINE_COMMAND + ["match", *args], db, 3, cwd=ROOT)
    assert 3 <= len(killed_at) < 8
    done = mallard_match(*args)
    assert done.returncode == 0, done.stderr
    assert f"{len(killed_at)} of 8 games are already played" in done.stdout
    assert "Cluster local:2: 2 workers, 2 threads" in done.stdout
    assert games_in(db) == list(range(1, 9))
    assert pgn.read_text().count("[Event ") == 8


def test_cluster_usage_errors_are_one_line():
    engines = [*engine_args("a", 0), *engine_args("b", 0)]
    done = mallard_match(*engines, "-cluster", "somewhere", timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == ("mallard match: -cluster: 'somewhere' is not a cluster "
                                   "address: tcp://HOST:PORT or local[:N]")
    without = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['distributed'] = None; "
         "from mallard.protocol.cli import main; sys.exit(main())", "match", *engines,
         "-cluster", "local:2"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert without.returncode == 2
    assert without.stderr.strip() == ("mallard match: -cluster: the cluster needs the "
                                      "distributed package: pip install 'mallard[cluster]'")


class _NotAScheduler:
    """A TCP server on 127.0.0.1 that is no Dask scheduler: `silent` accepts and says nothing
    (as an HTTP port waits for a request), `http` answers whatever comes with an HTTP 400."""

    def __init__(self, kind: str):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.kind, self.held = kind, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)
            if self.kind == "http":
                try:
                    connection.recv(65536)
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass
                connection.close()

    def close(self) -> None:
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.mark.parametrize("kind, says", [
    ("silent", "answered as a Dask scheduler within 6 s (a dashboard's port?"),
    ("http", "is not a Dask scheduler (its reply did not read as Dask's protocol")])
def test_an_address_that_is_no_scheduler_is_refused_in_one_line_within_the_timeout(kind, says):
    """Dask's own timeout leaves the handshake out: a silent server held the connect for ever,
    and an HTTP answer was read as a frame length (a MemoryError)."""
    server = _NotAScheduler(kind)
    try:
        started = time.monotonic()
        with pytest.raises(ClusterUnreachable) as refused:
            open_cluster(server.address, timeout_s=1)
        assert time.monotonic() - started < 30
        assert says in str(refused.value) and "\n" not in str(refused.value)
    finally:
        server.close()


def test_a_match_whose_cluster_cannot_be_used_exits_2_and_leaves_no_database(tmp_path):
    server = _NotAScheduler("http")
    try:
        db = tmp_path / "match.sqlite"
        done = mallard_match(*engine_args("a", 0), *engine_args("b", 0), "-cluster",
                             server.address, "-db", str(db), timeout=120)
    finally:
        server.close()
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"mallard match: what answers at {server.address} is not")
    assert "kept" not in done.stderr and not db.exists()


def test_a_scheduler_without_workers_is_said_instead_of_waited_on_for_ever(monkeypatch):
    monkeypatch.setattr(cluster_module, "WORKER_WAIT_S", 1)
    empty = distributed.LocalCluster(n_workers=0, host="127.0.0.1",
                                     dashboard_address="127.0.0.1:0", silence_logs=50)
    try:
        with pytest.raises(ClusterUnreachable, match="no worker joined the cluster at"):
            DaskExecutor(empty.scheduler_address)
    finally:
        empty.close()


# --- a cluster started the way users start one ---------------------------------------------------
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(command: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture
def real_cluster():
    """`dask scheduler` and two `dask worker`s on 127.0.0.1, each its own process group."""
    port = _free_port()
    bindir = Path(sys.executable).parent
    scheduler = _start([str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                        str(port), "--no-dashboard"])
    workers = [_start([str(bindir / "dask"), "worker", f"tcp://127.0.0.1:{port}", "--nthreads",
                       "1", "--no-dashboard", "--name", f"w{n}"]) for n in (1, 2)]
    processes = [scheduler, *workers]
    try:
        yield f"tcp://127.0.0.1:{port}", scheduler
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_cluster_that_goes_away_ends_the_match_with_one_line(real_cluster, tmp_path):
    address, scheduler = real_cluster
    db = tmp_path / "match.sqlite"
    args = ["-variant", "duck", *engine_args("a", 0.05), *engine_args("b", 0.05), "-games", "30",
            "-maxmoves", "8", "-cluster", address, "-db", str(db)]
    runner = subprocess.Popen(ENGINE_COMMAND + ["match", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 120
    while len(games_in(db)) < 2 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    os.killpg(scheduler.pid, signal.SIGKILL)
    out, err = runner.communicate(timeout=60)
    assert runner.returncode == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith(f"mallard match: the cluster at {address} "
                                                   "went away: "), err
    assert f"finished games are kept in '{db}'" in err
    kept = games_in(db)
    assert 2 <= len(kept) < 30
    assert len([line for line in out.splitlines() if line.startswith("Finished game")]) == \
        len(kept)


@pytest.mark.slow
def test_mallard_match_on_a_scheduler_and_two_workers_started_by_hand(real_cluster, tmp_path):
    address, _ = real_cluster
    with open_cluster(address) as connected:
        connected.wait_for_workers(2)
    db, pgn = tmp_path / "match.sqlite", tmp_path / "match.pgn"
    openings = tmp_path / "openings.txt"
    openings.write_text("".join(" ".join(opening.moves) + "\n" for opening in OPENINGS))
    engine = f"cmd={sys.executable} -m mallard.protocol.cli uci"  # run from the worktree (cwd)
    args = ["-variant", "cfour", "-engine", engine, "name=d4", "depth=4",
            "-engine", engine, "name=d6", "depth=6", "-games", "12", "-repeat",
            "-openings", f"file={openings}", "format=moves", "-db", str(db), "-pgnout", str(pgn),
            "-json", "-"]
    done = mallard_match(*args, "-cluster", address)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    summary = json.loads(done.stdout[done.stdout.index("\n{\n"):])
    assert summary["games_played"] == 12
    assert summary["cluster"]["workers"] == 2 and summary["cluster"]["retries"] == 0
    assert summary["cluster"]["games_per_minute"] > 0
    assert [row[0] for row in _stored(db)] == list(range(1, 13))
    local = mallard_match(*[a.replace(str(db), str(tmp_path / "local.sqlite"))
                            .replace(str(pgn), str(tmp_path / "local.pgn")) for a in args],
                          "-concurrency", "2")
    assert local.returncode == 0, local.stderr
    with sqlite3.connect(tmp_path / "local.sqlite") as connection:
        local_games = connection.execute("SELECT idx, result, moves FROM games").fetchall()
    with sqlite3.connect(db) as connection:
        cluster_games = connection.execute("SELECT idx, result, moves FROM games").fetchall()
    assert sorted(local_games) == sorted(cluster_games)
