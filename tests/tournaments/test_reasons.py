"""The typed facts of a game's end and score: the rules' `EndReason`s, `ScoreKind`, and the
match runner's `Reason` and `Termination`, whose texts are what the protocols, the PGN and the
match database print and store; a database written with free-text reasons still reads."""

from __future__ import annotations

import json
import sqlite3

import pytest

from mallard.engines import GAMES, get_game
from mallard.engines.base import EndReason, GameResult, Proven, Score, ScoreKind
from mallard.tournaments import GameRecord, Opening
from mallard.tournaments.pgn import game_pgn
from mallard.tournaments.players import EngineConfig, parse_info_score
from mallard.tournaments.records import EndKind, GameJob, MoveRecord, Reason, Termination
from mallard.tournaments.storage import MatchStore


def test_scores_print_as_uci_writes_them_and_kinds_read_back():
    assert (str(Score.cp(-31)), str(Score.mate(3)), str(Score.mate(-2))) == \
        ("cp -31", "mate 3", "mate -2")
    assert Score.mate(1).kind is ScoreKind.MATE and Score.cp(0).kind is ScoreKind.CP
    assert ScoreKind.read("mate") is ScoreKind.MATE and ScoreKind.read("lowerbound") is None
    score, depth, _ = parse_info_score("info depth 7 score mate -4 pv a".split())
    assert score == (ScoreKind.MATE, -4) and score[0] is ScoreKind.MATE and depth == 7
    move = MoveRecord.from_dict(json.loads(json.dumps(MoveRecord("a", "a", 5, score).to_dict())))
    assert move.score[0] is ScoreKind.MATE and move.comment() == "-M4 0.005s"


def test_every_game_ends_with_a_reason_it_declares():
    result = get_game("cfour").parse_sequence("445566").play(6).result()
    assert isinstance(result.reason, EndReason) and f"{result.reason}" == "four in a row"
    declaring = {reasons.__module__ for reasons in EndReason.__subclasses__()}
    for entry in GAMES:  # each game's rules module declares its reasons
        assert entry.new_game.__module__ in declaring, entry.name
    assert EndReason.read("four in a row") == "four in a row"
    assert EndReason.read("the position is a proven win") is Proven.WIN
    assert EndReason.read("no such end") is None


@pytest.mark.parametrize("kind", list(EndKind))
def test_every_reason_reads_back_from_its_text(kind):
    for side in (None, 0, 1):
        if kind.words(side) is None:
            with pytest.raises(ValueError):
                Reason(kind, side)
            continue
        for detail in ("", "took 0.262 s of 0.250 s", "'x' is not legal: (here)"):
            reason = Reason(kind, side, detail)
            assert Reason.read(str(reason)) == reason, str(reason)
            assert reason.termination is kind.termination


def test_the_runners_words_are_cutechesss():
    result = GameResult(0, get_game("cfour").parse_sequence("445566").play(6).result().reason)
    assert str(Reason.of_result(result)) == "White wins (four in a row)"
    assert str(Reason(EndKind.RULES, None, "board full")) == "Draw (board full)"
    assert str(Reason(EndKind.TIME_LOSS, 1, "took 0.262 s of 0.250 s")) == \
        "Black loses on time (took 0.262 s of 0.250 s)"
    assert str(Reason(EndKind.ADJUDICATION)) == "Draw by adjudication"
    assert str(Reason(EndKind.ADJUDICATION, 0, Proven.WIN)) == \
        "White wins by adjudication: the position is a proven win"
    assert str(Reason(EndKind.STALL, 0, "no reply")) == "White's connection stalls: no reply"
    assert Reason(EndKind.PROTOCOL_ERROR, 1).termination is Termination.RULES_INFRACTION
    assert Reason(EndKind.STOPPED).termination is Termination.UNTERMINATED


def test_a_database_with_free_text_reasons_reads_known_ones_typed_and_keeps_the_rest(tmp_path):
    db = tmp_path / "old.sqlite"
    engine = EngineConfig(name="e", command=["e"])
    store = MatchStore(str(db))
    store.bind_settings({"variant": "cfour"})
    old = [("1-0", "White wins (four in a row)", "normal"),
           ("0-1", "White loses on time", "time forfeit"),  # an older runner's words
           ("1/2-1/2", "Adjudicated by the arbiter", "adjudication"),
           ("*", "Power cut", "lights out")]
    for index, (result, _, _) in enumerate(old, 1):
        job = GameJob(index, 1, index, "cfour", engine, engine, 0, 1, Opening())
        store.add(GameRecord(job, result, Reason(EndKind.STOPPED), Termination.UNTERMINATED,
                             [], "", "", 0, "a", "b"), "pgn")
    store.close()
    with sqlite3.connect(db) as connection:  # as a runner that stored free text wrote them
        for index, (_, reason, termination) in enumerate(old, 1):
            (text,) = connection.execute("SELECT record FROM games WHERE idx = ?",
                                         (index,)).fetchone()
            record = json.loads(text)
            record.update(reason=reason, termination=termination)
            connection.execute("UPDATE games SET record = ? WHERE idx = ?",
                               (json.dumps(record), index))
    records = sorted(MatchStore(str(db)).records(), key=lambda record: record.index)
    assert [str(record.reason) for record in records] == [reason for _, reason, _ in old]
    assert [record.termination for record in records] == [
        Termination.NORMAL, Termination.TIME_FORFEIT, Termination.ADJUDICATION, "lights out"]
    assert records[0].reason == Reason(EndKind.RULES, 0, "four in a row")
    assert isinstance(records[0].reason.detail, EndReason)
    assert records[1].reason == Reason(EndKind.TIME_LOSS, 0)
    assert records[2].reason.kind is None and records[3].reason.kind is None
    pgn = game_pgn(records[3])
    assert '[Termination "lights out"]' in pgn and "{Power cut} *" in pgn
