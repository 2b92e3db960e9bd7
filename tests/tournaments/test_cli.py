"""`mallard match` as users run it: cutechess's output lines, the JSON summary, usage errors,
and a SIGKILL in the middle of a match followed by a resume from the same database."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.protocol.harness import ENGINE_COMMAND
from tests.tournaments.match_db import games_in, kill_match_after

SCRIPT = str(Path(__file__).with_name("scripted_engine.py"))


def engine_args(name: str, *script_args: str, limits: str = "st=1") -> list[str]:
    command = " ".join([sys.executable, SCRIPT, "--seed", str(len(name)), *script_args])
    return ["-engine", f"cmd={command}", f"name={name}", *limits.split()]


def mallard_match(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(ENGINE_COMMAND + ["match", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_output_lines_json_and_pgn(tmp_path):
    pgn = tmp_path / "games.pgn"
    done = mallard_match("-variant", "duck", *engine_args("alpha"), *engine_args("beta"),
                         "-games", "4", "-repeat", "-maxmoves", "12", "-pgnout", str(pgn),
                         "-json", "-")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("Started game")] == [
        "Started game 1 of 4 (alpha vs beta)", "Started game 2 of 4 (beta vs alpha)",
        "Started game 3 of 4 (alpha vs beta)", "Started game 4 of 4 (beta vs alpha)"]
    finished = [line for line in lines if line.startswith("Finished game")]
    assert len(finished) == 4
    pattern = re.compile(r"Finished game \d \((alpha|beta) vs (alpha|beta)\): "
                         r"(1-0|0-1|1/2-1/2) \{.+\}$")
    assert all(pattern.match(line) for line in finished), finished
    scores = [line for line in lines if line.startswith("Score of alpha vs beta: ")]
    assert re.match(r"Score of alpha vs beta: \d+ - \d+ - \d+  \[\d\.\d{3}\] 4$", scores[-1])
    assert any(re.match(r"Elo difference: .+ \+/- .+, LOS: .+ %, DrawRatio: .+ %$", line)
               for line in lines)
    assert any(re.match(r"Ptnml\(0-2\): \[\d+, \d+, \d+, \d+, \d+\]$", line) for line in lines)
    assert "Finished match" in lines
    summary = json.loads(done.stdout[done.stdout.index("\n{\n"):])
    alpha = summary["engines"][0]
    assert alpha["games"] == 4 and alpha["wins"] + alpha["losses"] + alpha["draws"] == 4
    assert sum(summary["pentanomial"]) == 2
    assert pgn.read_text().count("[Event ") == 4


@pytest.mark.parametrize("args, message", [
    (["-variant", "duck"], "at least two -engine"),
    (["-variant", "xiangqi", "-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1"],
     "unknown variant"),
    (["-engine", "cmd=x", "tc=4O/60", "-engine", "cmd=y", "st=1"], "4O/60"),
    (["-engine", "name=x", "st=1", "-engine", "cmd=y", "st=1"], "no cmd="),
    (["-engine", "cmd=x", "-engine", "cmd=y", "st=1"], "no limit ends a move"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-sprt", "elo0=5", "elo1=0"],
     "elo0"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-frobnicate"],
     "unknown option '-frobnicate'"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-openings", "file=/nonexistent"],
     "cannot read openings"),
    (["-engine", "cmd=", "st=1", "-engine", "cmd=y", "st=1"], "no cmd="),
    (["-engine", "cmd='x", "st=1", "-engine", "cmd=y", "st=1"], "No closing quotation"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-startuptimeout", "inf"],
     "positive number of seconds"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-pgnout", "/nonexistent/x.pgn"],
     "cannot write"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-draw", "movecount=2"],
     "-draw needs movenumber=, score="),
    # no game pair can form: a pentanomial SPRT would stay at 0 for ever
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-games", "1", "-rounds", "1",
      "-repeat", "-sprt", "elo0=0", "elo1=5", "-report", "penta=true"],
     "-report penta=true counts game pairs, and this match plays none"),
    # times of less than a millisecond or more than a year (which overflowed every game)
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-startuptimeout", "0.0004"],
     "-startuptimeout takes a positive number of seconds, from 0.001 to 31536000"),
    (["-engine", "cmd=x", "st=9999999999", "-engine", "cmd=y", "st=1"],
     "engine 'x': a move time of 9999999999 s is more than a year"),
    (["-engine", "cmd=x", "tc=99999999999999999999", "-engine", "cmd=y", "st=1"],
     "engine 'x': a clock time of 99999999999999999999 s is more than a year"),
    (["-engine", "cmd=x", "st=1", "timemargin=99999999999999", "-engine", "cmd=y", "st=1"],
     "timemargin: 99999999999999 is above 31536000000"),
    # hypotheses the normalized fit cannot reach: refused before the first game
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-sprt", "elo0=0", "elo1=1000",
      "model=normalized"], "-sprt elo0=0 elo1=1000 model=normalized cannot be tested over "
                           "games: the normalized-Elo fit cannot reach"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-games", "2", "-repeat",
      "-sprt", "elo0=0", "elo1=300", "-report", "penta=true"],
     "-sprt elo0=0 elo1=300 model=normalized cannot be tested over game pairs"),
    (["-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1", "-sprt", "elo0=0", "elo1=1e10",
      "model=logistic"], "-sprt elo0=0 elo1=1e+10 model=logistic cannot be tested over games"),
])
def test_usage_errors_are_one_clear_line(args, message):
    done = mallard_match(*args, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


TWO = ["-variant", "cfour", "-engine", "cmd=x", "st=1", "-engine", "cmd=y", "st=1"]


@pytest.mark.parametrize("args, message", [
    (["-openings", "file=F", "plys=1"], "-openings: unknown setting 'plys' (it takes file=, "
                                        "format=, order=, plies=, start=, policy=)"),
    (["-openings", "file=F", "policy=round"], "-openings policy=round is not supported"),
    (["-openings", "file=F", "start=0"], "-openings start: 0 is below 1"),
    (["-sprt", "elo0=0", "elo1=5", "foo=1"], "-sprt: unknown setting 'foo' (it takes elo0=, "
                                             "elo1=, alpha=, beta=, model=)"),
    (["-draw", "movenumber=1", "movecount=2", "score=3", "foo=2"],
     "-draw: unknown setting 'foo' (it takes movenumber=, movecount=, score=)"),
    (["-resign", "movecount=2", "score=3", "tosided=true"],
     "-resign: unknown setting 'tosided' (it takes movecount=, score=, twosided=)"),
    (["-resign", "movecount=2", "score=3", "twosided=maybe"],
     "-resign twosided= takes true or false, not 'maybe'"),
    (["-report", "penta=yes"], "-report penta= takes true or false, not 'yes'"),
    (["-report", "pent=true"], "-report: unknown setting 'pent' (it takes penta=)"),
    (["-progress", "maybe"], "-progress takes on or off, not 'maybe'"),
    (["-adjudicate", "solved", "node=5"], "-adjudicate: unknown setting 'node' (it takes "
                                          "solved, nodes=)"),
    (["-adjudicate", "solved=1"], "-adjudicate: solved takes no value"),
])
def test_a_setting_an_option_does_not_take_is_refused_by_name(tmp_path, args, message):
    openings = tmp_path / "o.moves"
    openings.write_text("a\nb\n")
    args = [arg.replace("file=F", f"file={openings}") for arg in args]
    done = mallard_match(*TWO, *args, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"mallard match: {message}") and done.stderr.count("\n") == 1


def test_openings_start_is_the_number_of_the_first_opening(tmp_path):
    from mallard.tournaments.cli import build_match

    openings = tmp_path / "o.moves"
    openings.write_text("P@a1\nP@b1\nP@c1\n")
    match, _ = build_match([*TWO, "-games", "3", "-openings", f"file={openings}",
                            "format=moves", "start=3"])
    assert [job.opening.moves for job in match.jobs(0)] == [("P@c1",), ("P@a1",), ("P@b1",)]
    shuffled, _ = build_match([*TWO, "-games", "3", "-openings", f"file={openings}",
                               "format=moves", "order=random"])
    started, _ = build_match([*TWO, "-games", "3", "-openings", f"file={openings}",
                              "format=moves", "order=random", "start=2"])
    order = [job.opening.moves for job in shuffled.jobs(5)]
    assert [job.opening.moves for job in started.jobs(5)] == order[1:] + order[:1]


def test_sigkill_mid_match_then_resume_gives_every_game_exactly_once(tmp_path):
    db, pgn = tmp_path / "match.sqlite", tmp_path / "match.pgn"
    pgn.write_text("[Event \"an earlier match\"]\n\n1. e4 *\n\n")  # must survive untouched
    args = ["-variant", "duck", *engine_args("slow-a", "--behaviour", "slow", "--delay", "0.02"),
            *engine_args("slow-b", "--behaviour", "slow", "--delay", "0.02"), "-games", "8",
            "-repeat", "-concurrency", "2", "-maxmoves", "10", "-openings",
            f"file={tmp_path / 'openings.txt'}", "format=moves", "order=random", "-srand", "7",
            "-db", str(db), "-pgnout", str(pgn)]
    (tmp_path / "openings.txt").write_text("e4,e5 d5,d4\nd4,d5 Nf6,f5\nc4,c5\nNf3,f4 e5,e4\n")
    killed_at = kill_match_after(ENGINE_COMMAND + ["match", *args], db, 3)
    assert 3 <= len(killed_at) < 8
    done = mallard_match(*args)
    assert done.returncode == 0, done.stderr
    assert f"{len(killed_at)} of 8 games are already played" in done.stdout
    assert games_in(db) == list(range(1, 9))
    text = pgn.read_text()
    assert text.startswith('[Event "an earlier match"]')
    assert text.count("[Event ") == 9
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT idx, round, white, moves FROM games").fetchall()
        openings = {json.loads(row[0])["label"] for row in
                    connection.execute("SELECT opening FROM games")}
    assert len(openings) == 4  # four pairs, each its own opening of the shuffled four
    for idx, round_number, white, _ in rows:
        assert f'[White "{white}"]' in text
    # a different match on the same database is refused, and nothing is played
    other = mallard_match(*[a if a != "10" else "12" for a in args], timeout=60)
    assert other.returncode == 2 and "holds another match (it differs in: adjudication)" \
        in other.stderr
    assert games_in(db) == list(range(1, 9))
    # the same match with more games goes on from where it ended
    longer = mallard_match(*[a if a != "8" else "10" for a in args])
    assert longer.returncode == 0, longer.stderr
    assert f"Lengthening the match in '{db}' from 8 to 10 games" in longer.stdout
    assert "8 of 10 games are already played" in longer.stdout
    assert games_in(db) == list(range(1, 11))


def test_the_progress_bar_keeps_every_line_whole():
    done = mallard_match("-variant", "duck", *engine_args("a-long-engine-name-" * 3),
                         *engine_args("b"), "-games", "2", "-maxmoves", "4", "-progress", "on")
    assert done.returncode == 0, done.stderr
    finished = [line for line in done.stdout.splitlines() if line.startswith("Finished game")]
    assert len(finished) == 2 and all(line.endswith("}") for line in finished)


def test_the_score_line_comes_once_per_game_and_a_failure_is_said_once():
    done = mallard_match("-variant", "duck", *engine_args("alpha"),
                         *engine_args("beta", "--behaviour", "crash", "--at", "2"),
                         "-games", "4", "-ratinginterval", "1")
    lines = done.stdout.splitlines()
    finished = [line for line in lines if line.startswith("Finished game")]
    scores = [line for line in lines if line.startswith("Score of alpha vs beta: ")]
    assert len(scores) == len(finished) >= 1, lines
    assert len(set(scores)) == len(scores)  # never the same score line twice
    failures = [line for line in lines if "beta failed" in line]
    assert len(failures) == 1, lines
    assert done.returncode == 1


def test_an_option_the_engine_does_not_declare_is_a_warning_at_the_start():
    done = mallard_match("-variant", "duck", *engine_args("alpha"), *engine_args("beta"),
                         "-each", "option.Hsah=16", "option.UCI_Variant=duck", "-games", "1",
                         "-maxmoves", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    warnings = [line for line in lines if line.startswith("Warning: ")]
    assert warnings == ["Warning: engine 'alpha' has no option 'Hsah'",
                        "Warning: engine 'beta' has no option 'Hsah'"], lines
    assert lines.index(warnings[-1]) < lines.index("Started game 1 of 1 (alpha vs beta)")


def test_a_second_runner_on_the_same_database_is_refused_at_once(tmp_path):
    """A second `mallard match` on one -db printed 'Started game 1..8' and 'Finished match' and
    stored nothing: the first runner owns the schedule. Now it is refused before any game."""
    db = tmp_path / "games.sqlite"
    arguments = ["-variant", "duck",
                 *engine_args("alpha", "--behaviour", "slow", "--delay", "0.02"),
                 *engine_args("beta"), "-games", "6", "-maxmoves", "10", "-db", str(db)]
    first = subprocess.Popen(ENGINE_COMMAND + ["match", *arguments], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        lock = Path(str(db) + ".lock")
        deadline = time.monotonic() + 120
        while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        started = time.monotonic()
        second = mallard_match(*arguments, timeout=60)
        assert time.monotonic() - started < 10  # within 2 s on an idle machine; this is shared
        assert first.poll() is None, "the first runner ended before the second was tried"
        assert second.returncode == 2 and "Started game" not in second.stdout
        assert second.stderr == (f"mallard match: the match database '{db}' is in use by "
                                 f"process {first.pid} ({lock})\n")
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err
    assert games_in(db) == [1, 2, 3, 4, 5, 6] and "Finished match" in out


def test_an_engine_that_never_ends_its_line_forfeits_and_the_runner_stays_small(tmp_path):
    """An engine printing without a newline took 4.3 GB of the runner's memory: now a line over
    1 MB is a protocol error, read and dropped a megabyte at a time, and the match goes on."""
    code = ("import resource, subprocess, sys; "
            "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(done.returncode); print(done.stdout); "
            # the runner is this child's child: its peak in kilobytes, through RUSAGE_CHILDREN
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")
    arguments = ["-variant", "duck", *engine_args("flooder", "--behaviour", "flood", "--at", "2"),
                 *engine_args("steady"), "-games", "2", "-maxmoves", "10", "-recover"]
    watcher = subprocess.run([sys.executable, "-c", code, *ENGINE_COMMAND, "match", *arguments],
                             capture_output=True, text=True, timeout=600)
    status, out = watcher.stdout.split("\n", 1)
    peak_mb = int(watcher.stderr.split()[-1]) / 1024
    assert status == "0", out
    finished = [line for line in out.splitlines() if line.startswith("Finished game")]
    assert len(finished) == 2 and all("protocol error: a line longer than 1 MB" in line
                                      for line in finished), finished
    assert peak_mb < 300, f"peak {peak_mb:.0f} MB"


def _processes_with(marker: str, besides: int) -> list[int]:
    """The pids of the processes whose command line holds `marker`, but `besides`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == besides:
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="lists processes through /proc")
def test_sigterm_ends_the_match_as_ctrl_c_does_engines_included(tmp_path):
    """An engine that sleeps through the end of its input is killed when SIGTERM ends the
    runner; the finished games are kept and one line says so."""
    marker = f"--seed {os.getpid()}{time.monotonic_ns() % 1000}"
    hung = " ".join([sys.executable, SCRIPT, "--behaviour", "hang", "--at", "1", marker])
    db = tmp_path / "match.sqlite"
    runner = subprocess.Popen(
        ENGINE_COMMAND + ["match", "-variant", "duck", "-engine", f"cmd={hung}", "name=hung",
                          "st=600", *engine_args("other"), "-games", "2", "-db", str(db),
                          "-progress", "off"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = runner.stdout.readline()
        while line and not line.startswith("Started game 1 "):
            line = runner.stdout.readline()
        assert line.startswith("Started game 1 of 2 (hung vs other)"), line
        time.sleep(1)  # the hung engine moves first: its `go` has come, and it sleeps
        engines = _processes_with(marker, runner.pid)
        assert engines, "the hung engine is not running"
        runner.send_signal(signal.SIGTERM)
        out, err = runner.communicate(timeout=60)
    finally:
        runner.kill()
    assert runner.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines() == [
        f"mallard match: terminated; finished games are kept in '{db}' (run the same command "
        "to resume)"]
    assert "Traceback" not in out + err
    deadline = time.monotonic() + 15
    while _processes_with(marker, runner.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_with(marker, runner.pid), "the runner ended but its engine lives on"


SIGNALS_DURING_CLEANUP = """
import os, signal
from mallard.tournaments.cli import _sigterm_as_interrupt
for first in (signal.SIGINT, signal.SIGTERM):
    try:
        with _sigterm_as_interrupt():
            try:
                os.kill(os.getpid(), first)
                for _ in range(10 ** 6):
                    pass
                print("no interrupt")
            except KeyboardInterrupt as interrupt:  # the match's cleanup: no SIGTERM cuts it
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(10 ** 6):
                    pass
                print("cleaned up after", type(interrupt).__name__)
    except KeyboardInterrupt:
        print("the cleanup was cut")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
"""


def test_a_sigterm_during_the_cleanup_of_ctrl_c_or_sigterm_is_ignored():
    done = subprocess.run([sys.executable, "-c", SIGNALS_DURING_CLEANUP], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["cleaned up after KeyboardInterrupt",
                                        "cleaned up after Terminated"]


def test_a_match_whose_games_fail_in_the_runner_does_not_exit_0(monkeypatch, capsys):
    from concurrent.futures import Future

    from mallard.tournaments import cli
    from mallard.tournaments.executors import LocalExecutor

    def failing(self, job):
        future = Future()
        future.set_exception(OverflowError("timeout value is too large"))
        return future

    monkeypatch.setattr(LocalExecutor, "submit", failing)
    status = cli.main(["-variant", "cfour", *engine_args("a"), *engine_args("b"),
                       "-games", "2"])
    out = capsys.readouterr().out
    assert status == 1
    assert out.count("failed in the runner: OverflowError") == 2
    assert "Match stopped: 2 of the games failed in the runner" in out


def test_a_command_line_that_is_no_match_gets_the_whole_usage_then_one_error_line():
    usage = mallard_match("-help", timeout=60).stdout.split("\n\n")[0] + "\n"
    for args, error in ((["-variant", "duck", "-bogus"], "unknown option '-bogus'"),
                        (["-variant", "duck"], "a match needs at least two -engine options")):
        done = mallard_match(*args, timeout=60)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == usage + f"mallard match: error: {error}\n"  # as argparse says it


def test_an_even_score_in_the_ranking_table_is_elo_0_not_minus_0():
    from types import SimpleNamespace

    from mallard.tournaments.cli import ranking_lines
    from mallard.tournaments.stats import WdlStats

    names = ("a", "b", "c")
    standings = [SimpleNamespace(name=name, wdl=WdlStats(wins=3, losses=3, draws=2))
                 for name in names]
    match = SimpleNamespace(engines=[SimpleNamespace(name=name) for name in names],
                            standings=standings)
    rows = [line.split() for line in ranking_lines(match)[1:]]
    assert [row[2] for row in rows] == ["0", "0", "0"]
