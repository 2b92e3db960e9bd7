"""Matches between real engine processes: `mallard` itself and scripted engines that misbehave
(tests/tournaments/scripted_engine.py, whose moves come from pyffish). Every game's moves are
replayed through pyffish, so a result is only accepted when the rules oracle agrees with it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyffish
import pytest

from mallard.tournaments import Adjudication, EngineConfig, Match, Opening, Reporter, TimeControl
from mallard.tournaments.cli import ranking_lines
from mallard.tournaments.pgn import game_pgn
from mallard.tournaments.records import GameRecord
from tests import oracles  # noqa: F401  (pyffish's cfour)
from tests.protocol.harness import ENGINE_COMMAND

SCRIPT = str(Path(__file__).with_name("scripted_engine.py"))


def scripted(name: str, behaviour: str = "random", protocol: str = "uci", tc: str = "st=0.5",
             **extra) -> EngineConfig:
    command = [sys.executable, SCRIPT, "--behaviour", behaviour, "--protocol", protocol,
               "--seed", str(abs(hash(name)) % 1000)]
    for key, value in extra.items():
        command += [f"--{key}", str(value)]
    return EngineConfig(name=name, command=command, protocol=protocol, tc=_tc(tc))


def mallard(name: str = "mallard", protocol: str = "uci", tc: str = "st=0.1",
            options=None) -> EngineConfig:
    return EngineConfig(name=name, command=ENGINE_COMMAND + [protocol], protocol=protocol,
                        tc=_tc(tc), options=dict(options or {}))


def _tc(text: str) -> TimeControl:
    key, _, value = text.partition("=")
    return TimeControl.from_settings(**{key: value})


class Lines(Reporter):
    def __init__(self):
        self.started, self.finished, self.messages = [], [], []

    def game_started(self, job, total):
        self.started.append(job.index)

    def game_finished(self, record, match):
        self.finished.append(record.index)

    def message(self, text):
        self.messages.append(text)


def replay(record):
    """The game's moves through pyffish; the result pyffish sees at the end (or None)."""
    variant = record.job.variant
    fen = record.start_fen or pyffish.start_fen(variant)
    texts = [move.text for move in record.moves]
    for index in range(len(texts)):
        assert texts[index] in pyffish.legal_moves(variant, fen, texts[:index]), (index, texts)
    return fen, texts


def run(variant, engines, **kwargs) -> Match:
    kwargs.setdefault("reporter", Lines())
    return Match(variant=variant, engines=engines, **kwargs).run()


def test_mallard_beats_a_random_mover_at_connect_four():
    match = run("cfour", [mallard("solver"), scripted("random")], games=2, repeat=True)
    assert [r.result for r in match.records] == ["1-0", "0-1"]
    for record in match.records:
        fen, texts = replay(record)
        assert pyffish.game_result("cfour", fen, texts) != 0  # someone has four in a row
        assert record.termination == "normal" and "four in a row" in str(record.reason)
    assert (match.wdl.wins, match.wdl.losses, match.wdl.draws) == (2, 0, 0)
    assert match.penta.counts() == [0, 0, 0, 0, 1]
    assert match.reporter.started == [1, 2] and sorted(match.reporter.finished) == [1, 2]


@pytest.mark.parametrize("behaviour, reason, termination", [
    ("illegal", "Black makes an illegal move", "illegal move"),
    ("garbage", "Black makes a protocol error", "rules infraction"),
    ("san", "Black makes an illegal move", "illegal move"),
    ("none", "Black makes a protocol error: 'bestmove (none)' names no move", "rules infraction"),
])
def test_a_bad_move_forfeits(behaviour, reason, termination):
    match = run("duck", [scripted("good", "random"), scripted("bad", behaviour, at=2)], games=1)
    record = match.records[0]
    assert record.result == "1-0"
    assert str(record.reason).startswith(reason) and record.termination == termination
    assert len(record.moves) == 3  # White, Black, White; Black's second move was the bad one
    replay(record)


def test_a_crash_is_a_disconnect_and_ends_the_match_without_recover():
    match = run("duck", [scripted("crasher", "crash", at=2), scripted("random")], games=4)
    assert len(match.records) == 1
    record = match.records[0]
    assert record.result == "0-1"
    assert str(record.reason) == \
        "White disconnects: exit status 1; stderr: scripted-crash: crashing at go 2"
    assert record.termination == "abandoned"
    assert "crasher failed" in match.stop_reason
    assert any("Terminating the match" in text for text in match.reporter.messages)


def test_with_recover_a_crashing_engine_is_restarted_and_every_game_is_played():
    match = run("duck", [scripted("crasher", "crash", at=2), scripted("random")], games=4,
                recover=True)
    assert sorted(r.index for r in match.records) == [1, 2, 3, 4]
    assert match.stop_reason is None
    crasher_losses = [r for r in match.records if " disconnects: exit status 1" in str(r.reason)]
    assert len(crasher_losses) == 4  # its second `go` of every process: it is fresh each game
    assert match.standings[0].losses == 4


def test_a_hanging_engine_loses_on_time_and_is_killed():
    hanger = scripted("hanger", "hang", at=2, tc="tc=1+0")
    match = run("duck", [hanger, scripted("random", tc="tc=1+0")], games=1)
    record = match.records[0]
    assert record.result == "0-1"
    assert re.fullmatch(r"White loses on time \(no move after \d\.\d{3} s of \d\.\d{3} s\)",
                        str(record.reason)), str(record.reason)
    assert 0 < record.flag_allowed_ms <= 1000 < record.flag_move_ms
    assert record.termination == "time forfeit"
    assert record.duration_ms < 10_000


def test_a_slow_engine_loses_on_time_within_and_beyond_the_margin():
    slow = scripted("slow", "slow", delay=0.3, tc="st=0.1")
    match = run("duck", [slow, scripted("random")], games=1)
    record = match.records[0]
    # the losing move's time goes into the reason (PGN comment) and the stored record
    assert str(record.reason) == (f"White loses on time (took {record.flag_move_ms / 1000:.3f} s "
                             "of 0.100 s)")
    assert record.flag_allowed_ms == 100 and 300 <= record.flag_move_ms < 1100
    assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    assert "{" + str(record.reason) + "} 0-1" in game_pgn(record)
    slow_with_margin = EngineConfig(**{**slow.__dict__, "timemargin_ms": 2000})
    match = run("duck", [slow_with_margin, scripted("random")], games=1,
                adjudication=Adjudication(maxmoves=3))
    assert str(match.records[0].reason) == "Draw by adjudication: maximum number of moves"


def test_a_slow_starter_plays_and_a_mute_engine_fails_to_start():
    match = run("duck", [scripted("slowstart", "slowstart", delay=1.5), scripted("random")],
                games=1, adjudication=Adjudication(maxmoves=4))
    assert match.records[0].termination == "adjudication"
    match = run("duck", [scripted("random"), scripted("mute", "mute")], games=2,
                startup_timeout_ms=1500, recover=True)
    assert [r.result for r in match.records] == ["1-0", "0-1"]
    assert all("fails to start" in str(r.reason) for r in match.records)


def test_an_engine_that_exits_at_once_is_reported_with_its_status_and_last_words():
    wrong = EngineConfig(name="wrong", command=ENGINE_COMMAND + ["uci", "--threads-typo", "4"],
                         tc=_tc("st=0.1"))
    match = run("duck", [wrong, mallard()], games=1)
    assert str(match.records[0].reason) == (
        "White fails to start: the engine exited (exit status 2; stderr: mallard uci: error: "
        "unrecognized arguments: --threads-typo 4)")


def _cutechess_draw_ply(record, movenumber, movecount, score_limit):
    """The ply after which cutechess's -draw rule fires, from pyffish's halfmove clocks."""
    fen = record.start_fen or pyffish.start_fen("duck")
    texts, streak = [], 0
    for ply, move in enumerate(record.moves, start=1):
        texts.append(move.text)
        halfmove_clock = int(pyffish.get_fen("duck", fen, texts).split()[4])
        quiet = move.score is not None and abs(move.score[1]) <= score_limit
        streak = streak + 1 if quiet and halfmove_clock != 0 else 0
        if ply // 2 >= movenumber and streak >= 2 * movecount:
            return ply
    return None


def test_draw_and_resign_adjudication_use_the_reported_scores():
    quiet = [scripted("a", score=5), scripted("b", score=-3)]
    rules = Adjudication(draw_movenumber=3, draw_movecount=2, draw_score=10, maxmoves=60)
    for _ in range(3):
        record = run("duck", quiet, games=1, adjudication=rules).records[0]
        expected = _cutechess_draw_ply(record, 3, 2, 10)
        if str(record.reason) == "Draw by adjudication":
            assert record.result == "1/2-1/2" and expected == len(record.moves)
        else:
            assert expected is None
    noisy = [scripted("a", score=5), scripted("b", score=-30)]
    record = run("duck", noisy, games=1, adjudication=rules).records[0]
    assert str(record.reason) != "Draw by adjudication"
    losing = [scripted("a", score=50), scripted("b", score=-900)]
    rules = Adjudication(resign_movecount=3, resign_score=800)
    record = run("duck", losing, games=1, adjudication=rules).records[0]
    assert record.result == "1-0" and str(record.reason) == "White wins by adjudication"
    assert len(record.moves) == 6
    twosided = Adjudication(resign_movecount=3, resign_score=800, resign_twosided=True,
                            maxmoves=10)
    record = run("duck", losing, games=1, adjudication=twosided).records[0]
    assert str(record.reason) != "White wins by adjudication"  # White never claimed +800


def test_a_slow_gtp_play_is_not_charged_to_the_clock():
    engines = [scripted("quick", protocol="gtp"),
               scripted("slowplay", "slowplay", protocol="gtp", delay=0.4, tc="st=0.2")]
    record = run("cfour", engines, games=1).records[0]
    assert record.termination == "normal", record.reason
    replay(record)


def test_a_stalled_engine_without_a_clock_loses_and_the_match_goes_on():
    from mallard.tournaments.records import GameJob
    from mallard.tournaments.referee import EnginePool, play_game

    hanger = scripted("hanger", "hang", at=1, tc="depth=3")
    match = run("duck", [hanger, scripted("random", tc="depth=3")], games=2,
                stall_timeout_ms=1000)
    assert len(match.records) == 2 and match.stop_reason is None
    stalled = [r for r in match.records if r.termination == "stalled connection"]
    assert len(stalled) == 2 and all("hanger" in (r.white_name, r.black_name) for r in stalled)
    # a game stopped by the runner while an engine starts is unfinished, not a loss
    import threading

    pool = EnginePool()
    job = GameJob(1, 1, 1, "duck", scripted("slow", "slowstart", delay=5),
                  scripted("random"), 0, 1, Opening())
    stop = threading.Event()
    threading.Timer(1.0, lambda: (stop.set(), pool.kill_active())).start()
    record = play_game(job, pool, stop.is_set)
    pool.close()
    assert record.result == "*" and record.termination == "unterminated"


def test_ugi_engines_play_duck_through_mallard_ugi():
    engines = [mallard("ugi-a", "ugi", "depth=1"), mallard("ugi-b", "ugi", "depth=1")]
    match = run("duck", engines, games=2, repeat=True,
                adjudication=Adjudication(maxmoves=15))
    for record in match.records:
        fen, texts = replay(record)
        if record.termination == "normal":
            assert pyffish.game_result("duck", fen, texts) != 0 or "Draw" in str(record.reason)


def test_gtp_connect_four_against_a_gtp_script():
    engines = [mallard("gtp-solver", "gtp", "tc=10+0.1"), scripted("gtp-random", protocol="gtp")]
    match = run("cfour", engines, games=2, repeat=True)
    assert [r.result for r in match.records] == ["1-0", "0-1"]
    for record in match.records:
        replay(record)


def test_solved_adjudication_ends_connect_four_with_the_proven_result():
    # 4453 from the start is a position the public test sets score; the solver proves it
    # at once, so the game ends before either engine moves.
    opening = Opening(moves=("P@d1", "P@d2", "P@e1", "P@c1"))
    match = run("cfour", [scripted("a"), scripted("b")], games=1, openings=[opening],
                adjudication=Adjudication(solved=True, solve_nodes=5_000_000))
    record = match.records[0]
    assert record.termination == "adjudication"
    from mallard.engines.connect4.rules import Connect4Game
    from mallard.engines.connect4.solver import Solver

    game = Connect4Game()
    position = game.start_position().play_text(move.text for move in record.moves)
    value = Solver(hash_mb=16).solve(position, weak=True)
    expected = "1/2-1/2" if value == 0 else ("1-0" if (value > 0) == (position.side_to_move == 0)
                                             else "0-1")
    assert record.result == expected


def test_sprt_stops_the_match_once_h1_is_accepted():
    from mallard.tournaments import Sprt

    match = run("cfour", [mallard("solver", tc="st=0.05"), scripted("random")], games=40,
                repeat=True, sprt=Sprt(0, 200, model="bayesian"))
    assert match.sprt_status == "H1" and match.stop_reason == "SPRT: H1 was accepted"
    played = len(match.records)
    assert 7 <= played < 40
    wdl = match.wdl
    llr = match.sprt_llr()
    assert llr >= match.sprt.upper_bound
    assert match.sprt.cutechess_line(llr).endswith(" - H1 was accepted")
    # the decision came with the first game that crossed the bound, not later
    assert Sprt(0, 200, model="bayesian").status(
        Sprt(0, 200, model="bayesian").llr_trinomial(wdl.wins - 1, wdl.losses, wdl.draws)
    ) == "continue" or played == 7


def test_an_executor_that_ships_jobs_as_json_plugs_in():
    """The executor interface carries only JSON-ready jobs and records: a remote executor would
    serialise exactly like this."""
    import json
    from concurrent.futures import Future

    from mallard.tournaments.executors import Executor, LocalExecutor
    from mallard.tournaments.records import GameJob, GameRecord

    class WireExecutor(Executor):
        capacity = 2

        def __init__(self):
            self.inner = LocalExecutor(2)
            self.shipped = []

        def submit(self, job):
            wire = json.dumps(job.to_dict())
            self.shipped.append(wire)
            result: Future = Future()

            def back(done):
                result.set_result(GameRecord.from_dict(json.loads(json.dumps(
                    done.result().to_dict()))))

            self.inner.submit(GameJob.from_dict(json.loads(wire))).add_done_callback(back)
            return result

        def request_stop(self, kill=False):
            self.inner.request_stop(kill)

        def close(self):
            self.inner.close()

    executor = WireExecutor()
    match = run("duck", [scripted("a"), scripted("b")], games=4, executor=executor,
                adjudication=Adjudication(maxmoves=6))
    assert len(executor.shipped) == 4 and sorted(r.index for r in match.records) == [1, 2, 3, 4]
    for record in match.records:
        replay(record)


def test_three_engines_round_robin_and_gauntlet():
    trio = [scripted("a"), scripted("b"), scripted("c")]
    rules = Adjudication(maxmoves=4)
    match = run("duck", trio, games=2, adjudication=rules)
    assert len(match.records) == 6
    pairs = sorted(tuple(sorted((r.white_name, r.black_name))) for r in match.records)
    assert pairs == [("a", "b"), ("a", "b"), ("a", "c"), ("a", "c"), ("b", "c"), ("b", "c")]
    assert [s.wdl.games for s in match.standings] == [4, 4, 4]
    lines = ranking_lines(match)
    assert lines[0].split()[:3] == ["Rank", "Name", "Elo"] and len(lines) == 4
    gauntlet = run("duck", trio, games=2, tournament="gauntlet", adjudication=rules)
    assert [s.wdl.games for s in gauntlet.standings] == [4, 2, 2]


def _gone(process) -> bool:
    """Whether the OS process has ended (and is reaped): the oracle is the OS, not our flags."""
    try:
        process.wait(5)
        return True
    except Exception:
        process.kill()
        process.wait()
        return False


def test_ctrl_c_in_the_startup_options_check_kills_the_engine(monkeypatch):
    from mallard.tournaments import players

    started = []
    config = EngineConfig(name="a", command=["sleep", "30"], options={"Foo": "1"},
                          tc=TimeControl.fixed_move_time(1))

    def interrupted_handshake(self):  # Ctrl-C while the engine is yet to answer `uci`
        started.append(self.process.process)
        raise KeyboardInterrupt

    monkeypatch.setattr(players.UciPlayer, "handshake", interrupted_handshake)
    with pytest.raises(KeyboardInterrupt):
        players.undeclared_options(config, "duck", 5_000)
    assert _gone(started[0])

    def quiet_handshake(self):
        started.append(self.process.process)
        self.declared = set()

    def interrupted_send(self, line):  # Ctrl-C while the engine is asked to quit
        raise KeyboardInterrupt

    monkeypatch.setattr(players.UciPlayer, "handshake", quiet_handshake)
    monkeypatch.setattr(players.EngineProcess, "send", interrupted_send)
    with pytest.raises(KeyboardInterrupt):
        players.undeclared_options(config, "duck", 5_000)
    assert _gone(started[1])
