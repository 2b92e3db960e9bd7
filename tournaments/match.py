"""`Match`: a whole engine-vs-engine match — schedule, executor, storage, PGN, statistics, SPRT.

The Python API and the engine of `mallard match`. A `Match` is configured with plain data
(engine configs, openings, adjudication) and runs to the end, to an SPRT decision, or to an
engine failure that `recover` does not allow; progress goes to a `Reporter` (the command line's
prints cutechess's lines). Statistics are from the first engine's point of view; game pairs with
colours swapped feed the pentanomial counts.

Every finished game is stored (database first, then PGN) before it counts, in the order games
finish; with a database a second run resumes: finished games are not played again, the seed of
a random opening order is reused, and the stored games the PGN lacks are appended to it (nothing
else in it is touched: other matches may share the file). Before the first local game the
referee's compiled code is loaded and frozen out of the garbage collector's sight: a full
collection holds every thread, the readers that timestamp the engines' replies included.

With `cluster=` (an address) or a `DaskExecutor` the games run on a Dask cluster; storage, PGN
and statistics stay here. A game played again because its worker was lost is stored once, with
its retries; a cluster that goes away ends the match with a `ClusterError` (finished games kept).
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Optional

from mallard.engines import find_game
from mallard.engines.base import DEV_OPTIONS_VARIABLE, UnknownGameError, dev_options_enabled
from mallard.engines.timeman import freeze_long_lived_objects
from mallard.tournaments.cluster import ClusterError
from mallard.tournaments.executors import DaskExecutor, Executor, LocalExecutor
from mallard.tournaments.pgn import game_pgn
from mallard.tournaments.players import EngineConfig, undeclared_options
from mallard.tournaments.records import Adjudication, GameJob, GameRecord, Opening, Termination
from mallard.tournaments.referee import DEFAULT_STALL_TIMEOUT_MS, load_rules
from mallard.tournaments.schedule import Slot, make_schedule
from mallard.tournaments.stats import PentaStats, Sprt, WdlStats
from mallard.tournaments.storage import MatchStore, StorageError, append_pgn

# Engine failures that end a match unless `recover` is on (a time loss does not).
FATAL_FAILURES = ("disconnect", "startup")


class Reporter:
    """Receives the match's progress; the default says nothing."""

    def game_started(self, job: GameJob, total: int) -> None: ...

    def game_finished(self, record: GameRecord, match: "Match") -> None: ...

    def message(self, text: str) -> None: ...

    def match_finished(self, match: "Match") -> None: ...


@dataclass
class EngineStanding:
    name: str
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def wdl(self) -> WdlStats:
        return WdlStats(self.wins, self.losses, self.draws)


@dataclass
class Match:
    variant: str
    engines: list[EngineConfig]
    games: int = 1
    rounds: int = 1
    repeat: bool = False
    tournament: str = "round-robin"
    openings: list[Opening] = field(default_factory=list)
    opening_order: str = "sequential"
    opening_start: int = 0  # the first opening played (0-based; cutechess's start=N is N - 1)
    adjudication: Adjudication = field(default_factory=Adjudication)
    sprt: Optional[Sprt] = None
    sprt_pentanomial: bool = False  # the SPRT counts game pairs (fastchess -report penta=true)
    pgn_out: Optional[str] = None
    db: Optional[str] = None
    recover: bool = False
    seed: Optional[int] = None
    concurrency: Optional[int] = None  # games at once; default 1, on a cluster its threads
    executor: Optional[Executor] = None
    cluster: Optional[str] = None  # a Dask cluster's address (tcp://HOST:PORT, local[:N])
    event: str = "?"
    site: str = "?"
    reporter: Reporter = field(default_factory=Reporter)
    board: Optional[tuple[int, int]] = None
    startup_timeout_ms: int = 20_000
    ready_timeout_ms: int = 120_000
    stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS

    def __post_init__(self):
        if len(self.engines) < 2:
            raise ValueError("a match needs at least two engines")
        if not isinstance(self.opening_start, int) or self.opening_start < 0:
            raise ValueError(f"opening_start must be a whole number >= 0, not "
                             f"{self.opening_start!r}")
        names = [engine.name for engine in self.engines]
        if len(set(names)) != len(names):
            raise ValueError(f"engine names must differ: {', '.join(names)}")
        for engine in self.engines:
            if not engine.tc.is_bounded():
                raise ValueError(f"engine '{engine.name}' has no time control "
                                 "(give tc=, st=, depth= or nodes=)")
            if engine.protocol == "gtp" and any(opening.fen for opening in self.openings):
                raise ValueError(f"engine '{engine.name}' speaks GTP, which cannot set up a "
                                 "position: use a moves opening file")
        self.schedule: list[Slot] = make_schedule(len(self.engines), self.games, self.rounds,
                                                  self.repeat, self.tournament)
        if self.sprt is not None:
            self._check_sprt_fit()
        if self.sprt_pentanomial and not self.forms_pairs():
            raise ValueError("-report penta=true counts game pairs, and this match plays none: "
                             "give -repeat (each opening twice, colours swapped) and at least "
                             "two games between the two engines")
        self.records: list[GameRecord] = []
        self.standings = [EngineStanding(engine.name) for engine in self.engines]
        self.wdl = WdlStats(0, 0, 0)  # the first engine against the second (two-engine match)
        self.penta = PentaStats()
        self._pair_scores: dict[int, dict[int, float]] = {}
        self.stop_reason: Optional[str] = None
        self.sprt_status: Optional[str] = None
        self._stopping = threading.Event()
        self.retries: dict[int, int] = {}  # game -> times it was started again (cluster)
        self.cluster_status: Optional[dict] = None  # the cluster's last known size
        self.games_this_run = 0
        self.runner_failures = 0  # games of this run that raised in the runner (not stored)
        self._run_started: Optional[float] = None
        self._executor: Optional[Executor] = None

    # --- settings that identify the match in its database -------------------------------------
    def settings(self) -> dict:
        settings = {"variant": self.variant,
                    "engines": [engine.to_dict() for engine in self.engines],
                    "games": self.games, "rounds": self.rounds, "repeat": self.repeat,
                    "tournament": self.tournament,
                    "openings": [opening.to_dict() for opening in self.openings],
                    "opening_order": self.opening_order,
                    "adjudication": self.adjudication.to_dict(), "board": self.board}
        if self.opening_start:  # only when given, so that databases from before it still match
            settings["opening_start"] = self.opening_start
        return settings

    def _check_sprt_fit(self) -> None:
        """A hypothesis the model's fit cannot reach fails the same way whatever the games say:
        tried here on even counts, so it is refused before the first game, not after it."""
        sprt = self.sprt
        try:
            if self.sprt_pentanomial:
                sprt.llr_pentanomial([1, 1, 1, 1, 1])
            else:
                sprt.llr_trinomial(1, 1, 1)
        except (ValueError, ArithmeticError):  # the fit fails, or a bound overflows a float
            raise ValueError(f"-sprt elo0={sprt.elo0:g} elo1={sprt.elo1:g} model={sprt.model} "
                             f"cannot be tested over "
                             f"{'game pairs' if self.sprt_pentanomial else 'games'}: the "
                             f"{sprt.model}-Elo fit cannot reach these bounds; choose bounds "
                             "nearer 0") from None

    def counts_pairs(self) -> bool:
        """Whether two games of a schedule pair are a game pair for the pentanomial counts:
        with -repeat, or when every game starts from the same position (no openings)."""
        return self.repeat or not self.openings

    def forms_pairs(self) -> bool:
        """Whether the pentanomial counts can get a pair: two engines with two games in one
        schedule pair."""
        pairs = [slot.pair for slot in self.schedule]
        return (len(self.engines) == 2 and self.counts_pairs()
                and len(set(pairs)) < len(pairs))

    @property
    def total_games(self) -> int:
        return len(self.schedule)

    def jobs(self, seed: int) -> list[GameJob]:
        order = list(self.openings)
        if self.opening_order == "random":
            random.Random(seed).shuffle(order)
        elif self.opening_order != "sequential":
            raise ValueError(f"unknown opening order '{self.opening_order}'")
        jobs = []
        for slot in self.schedule:
            opening = (order[(slot.opening_index + self.opening_start) % len(order)]
                       if order else Opening())
            jobs.append(GameJob(slot.index, slot.round, slot.pair, self.variant,
                                self.engines[slot.white_id], self.engines[slot.black_id],
                                slot.white_id, slot.black_id, opening, self.adjudication,
                                self.board))
        return jobs

    # --- running --------------------------------------------------------------------------------
    def run(self) -> "Match":
        # the cluster first: one that cannot be reached leaves no database behind
        executor = self._executor = self.executor or self._new_executor()
        try:
            store = MatchStore(self.db) if self.db else None
        except BaseException:
            executor.close()
            self._executor = None
            raise
        try:
            seed = self._seed(store)
            jobs = self.jobs(seed)
            finished: set[int] = set()
            if store is not None:
                resumed = store.bind_settings(self.settings(), self._lengthen)
                self._note_sprt(store)
                records = store.records()
                for record in records:
                    self._check_place(record, jobs)
                for record in records:
                    self._count(record)
                    finished.add(record.index)
                self.retries.update(store.retries())
                if resumed:
                    self.reporter.message(f"Resuming from '{self.db}': {len(finished)} of "
                                          f"{self.total_games} games are already played")
                if self.pgn_out:
                    store.restore_pgn(self.pgn_out)
            if self._sprt_decided():
                self.stop_reason = f"SPRT: {self.sprt_status} was accepted"
            pending = [job for job in jobs if job.index not in finished]
            if isinstance(executor, LocalExecutor):
                if pending:
                    self._warn_undeclared_options()
                # the reader threads timestamp the engines' replies: no collector pause of the
                # runner's loaded code may delay them and charge an engine for it
                load_rules(self.variant, self.board)
                freeze_long_lived_objects()
            self._drive(pending, executor, store)
            if self.runner_failures and self.stop_reason is None:
                self.stop_reason = (f"{self.runner_failures} of the games failed in the runner "
                                    "and were not stored (with -db, the same command again "
                                    "plays them)")
        except BaseException:
            self.stop_reason = self.stop_reason or "interrupted"
            executor.request_stop(kill=True)  # do not wait for running games to end
            raise
        finally:
            self._note_cluster()
            try:
                executor.close()
            finally:
                self._executor = None
                if store is not None:
                    store.close()
        self.reporter.match_finished(self)
        return self

    def _check_place(self, record: GameRecord, jobs: list[GameJob]) -> None:
        """A stored game must be the game its number has in this match's schedule: a database
        whose games were placed otherwise (by a mallard from before colours alternated across
        rounds) would mix two schedules and unbalance the colours."""
        played = record.job
        job = jobs[played.index - 1] if 0 < played.index <= len(jobs) else None
        if job is None or (played.white_id, played.black_id, played.pair, played.round,
                           played.opening.to_dict()) != (job.white_id, job.black_id, job.pair,
                                                         job.round, job.opening.to_dict()):
            where = (f"{job.white.name} vs {job.black.name}, round {job.round}, pair {job.pair}"
                     if job is not None else "no such game")
            raise StorageError(
                f"'{self.db}' holds game {played.index} as {played.white.name} vs "
                f"{played.black.name}, round {played.round}, pair {played.pair}, where this "
                f"match's schedule has {where}: it was played to another schedule (an older "
                "mallard's); use a new -db file")

    def _lengthen(self, recorded_games: int) -> None:
        """A larger -games on resume lengthens the recorded match, as an SPRT that ran out of
        games is given more: only when the recorded schedule is the start of the new one (so
        every played game keeps its number, colours and opening)."""
        played = make_schedule(len(self.engines), recorded_games, self.rounds, self.repeat,
                               self.tournament)
        if self.games < recorded_games or self.schedule[:len(played)] != played:
            raise StorageError(f"'{self.db}' holds this match with -games {recorded_games}: "
                               "a larger -games lengthens it when its games keep their places "
                               "(two engines, one round), nothing else; use a new -db file")
        self.reporter.message(f"Lengthening the match in '{self.db}' from "
                              f"{len(played)} to {self.total_games} games")

    def _sprt_text(self) -> str:
        if self.sprt is None or len(self.engines) != 2:
            return "none"
        sprt = self.sprt
        return (f"elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} beta={sprt.beta:g} "
                f"model={sprt.model} over {'game pairs' if self.sprt_pentanomial else 'games'}")

    def _note_sprt(self, store: MatchStore) -> None:
        """The games identify a match; its SPRT does not (any test may be read off the same
        games), but a test changed on resume is said, since its LLR then jumps."""
        recorded, now = store.get_meta("sprt"), self._sprt_text()
        if recorded is not None and recorded != now:
            self.reporter.message(f"Warning: the SPRT of this match was {recorded}; it is now "
                                  f"{now}")
        if recorded != now:
            store.set_meta("sprt", now)

    def _new_executor(self) -> Executor:
        timeouts = (self.startup_timeout_ms, self.ready_timeout_ms, self.stall_timeout_ms)
        if self.cluster is not None:
            return DaskExecutor(self.cluster, self.concurrency, *timeouts)
        return LocalExecutor(self.concurrency or 1, *timeouts)

    def _note_cluster(self) -> None:
        if self._executor is not None and self._executor.cluster_status() is not None:
            self.cluster_status = self._executor.cluster_status()

    def games_per_minute(self) -> Optional[float]:
        """Games finished per minute in this run (None before the first game of the run)."""
        if self._run_started is None or not self.games_this_run:
            return None
        return 60.0 * self.games_this_run / max(time.monotonic() - self._run_started, 1e-6)

    def _warn_undeclared_options(self) -> None:
        """Say at the start which `option.NAME`s an engine does not have (a typo would otherwise
        go unnoticed: engines ignore or refuse them one `setoption` at a time)."""
        for engine in self.engines:
            for name in undeclared_options(engine, self.variant, self.startup_timeout_ms):
                self.reporter.message(f"Warning: engine '{engine.name}' has no option '{name}'"
                                      + _developer_option_hint(self.variant, name))

    def request_stop(self, reason: str = "stopped") -> None:
        """Stop from another thread (a notebook's button): running games are abandoned."""
        self.stop_reason = reason
        self._stopping.set()

    def _seed(self, store: Optional[MatchStore]) -> int:
        recorded = store.get_meta("seed") if store is not None else None
        if recorded is not None:
            return int(recorded)
        seed = self.seed if self.seed is not None else random.SystemRandom().randrange(1 << 31)
        if store is not None:
            store.set_meta("seed", str(seed))
        return seed

    def _drive(self, pending: list[GameJob], executor: Executor,
               store: Optional[MatchStore]) -> None:
        in_flight = {}
        queue = list(pending)
        self._run_started = time.monotonic()
        while (queue and self.stop_reason is None) or in_flight:
            while queue and self.stop_reason is None and len(in_flight) < executor.capacity:
                job = queue.pop(0)
                self.reporter.game_started(job, self.total_games)
                in_flight[executor.submit(job)] = job
            done, _ = wait(list(in_flight), timeout=0.5, return_when=FIRST_COMPLETED)
            if self._stopping.is_set() and self.stop_reason is not None:
                executor.request_stop(kill=True)
            for future in done:
                job = in_flight.pop(future)
                try:
                    record = future.result()
                except ClusterError:
                    raise  # nowhere left to play: the match ends, the database keeps its games
                except Exception as error:  # a referee bug must not lose the other games
                    self.reporter.message(f"Game {job.index} failed in the runner: {error!r}")
                    self.runner_failures += 1
                    continue
                if record.result == "*" and record.termination is Termination.UNTERMINATED:
                    continue  # stopped before its end: it is played again on resume
                self._finish(record, store, executor.retries(record.index))
                if record.loser_failed in FATAL_FAILURES and not self.recover:
                    failed = self.engines[record.failed_engine_id].name
                    self.stop_reason = (f"{failed} failed ({record.reason}); "
                                        "use -recover to restart it and go on")
                    self.reporter.message(f"Terminating the match: {self.stop_reason}")
                    executor.request_stop(kill=True)
                elif self._sprt_decided() and self.stop_reason is None:
                    self.stop_reason = f"SPRT: {self.sprt_status} was accepted"
                    executor.request_stop(kill=True)

    def _finish(self, record: GameRecord, store: Optional[MatchStore], retries: int = 0) -> None:
        pgn = game_pgn(record, self.event, self.site)
        if store is not None:
            if not store.add(record, pgn, retries, self.pgn_out):
                return  # already stored by an earlier run
        if self.pgn_out:
            append_pgn(self.pgn_out, pgn)
        if retries:
            self.retries[record.index] = retries
        self.games_this_run += 1
        self._count(record)
        self._note_cluster()
        self.reporter.game_finished(record, self)

    def _count(self, record: GameRecord) -> None:
        self.records.append(record)
        job = record.job
        for engine_id in (job.white_id, job.black_id):
            score = record.score_for(engine_id)
            standing = self.standings[engine_id]
            if score == 1.0:
                standing.wins += 1
            elif score == 0.0:
                standing.losses += 1
            elif score == 0.5:
                standing.draws += 1
        if len(self.engines) != 2:
            return
        score = record.score_for(0)
        if score is None:
            return
        self.wdl = self.standings[0].wdl
        if not self.counts_pairs():
            return  # consecutive games with different openings are not a pair
        pair = self._pair_scores.setdefault(job.pair, {})
        pair[job.index] = score
        if len(pair) == 2:
            first, second = (pair[index] for index in sorted(pair))
            self.penta.add(first, second)

    # --- statistics -----------------------------------------------------------------------------
    def sprt_llr(self) -> Optional[float]:
        if self.sprt is None or len(self.engines) != 2:
            return None
        if self.sprt_pentanomial:
            return self.sprt.llr_pentanomial(self.penta.counts())
        return self.sprt.llr_trinomial(self.wdl.wins, self.wdl.losses, self.wdl.draws)

    def _sprt_decided(self) -> bool:
        llr = self.sprt_llr()
        if llr is None:
            return False
        status = self.sprt.status(llr)
        if status in ("H0", "H1"):
            self.sprt_status = status
            return True
        return False

    def summary(self) -> dict:
        """A JSON-ready summary of the match so far."""
        data = {"variant": self.variant, "games_played": len(self.records),
                "games_scheduled": self.total_games, "stop_reason": self.stop_reason,
                "engines": []}
        for standing in self.standings:
            wdl = standing.wdl
            data["engines"].append({
                "name": standing.name, "wins": wdl.wins, "losses": wdl.losses,
                "draws": wdl.draws, "games": wdl.games,
                "score": _finite(wdl.score) if wdl.games else None,
                "elo": _finite(wdl.elo()) if wdl.games else None,
                "elo_error": _finite(wdl.elo_error_margin()) if wdl.games else None,
                "los": wdl.los(), "draw_ratio": wdl.draw_ratio if wdl.games else None})
        if len(self.engines) == 2:
            data["pentanomial"] = self.penta.counts()
            llr = self.sprt_llr()
            if llr is not None:
                data["sprt"] = {"llr": llr, "lower_bound": self.sprt.lower_bound,
                                "upper_bound": self.sprt.upper_bound,
                                "elo0": self.sprt.elo0, "elo1": self.sprt.elo1,
                                "model": self.sprt.model,
                                "pentanomial": self.sprt_pentanomial,
                                "status": self.sprt.status(llr)}
        if self.cluster_status is not None:
            rate = self.games_per_minute()
            data["cluster"] = {**self.cluster_status,
                               "games_per_minute": round(rate, 2) if rate else None,
                               "retries": sum(self.retries.values()),
                               "games_retried": sorted(self.retries)}
        return data

    def summary_json(self) -> str:
        return json.dumps(self.summary(), indent=2)


def _finite(value: float) -> Optional[float]:

    return value if math.isfinite(value) else None


def _developer_option_hint(variant: str, name: str) -> str:
    """How to have a mallard engine list `name` when it is one of the developer options of
    the variant's game and this runner's environment (which its engines inherit) hides them."""
    try:
        dev_names = {option.key for option in find_game(variant).dev_options}
    except UnknownGameError:
        return ""
    if name.lower() not in dev_names or dev_options_enabled():
        return ""
    return f" (a mallard developer option: run the match with {DEV_OPTIONS_VARIABLE}=1)"
