"""A fourth game needs its package and one registry entry, nothing else: plain tic-tac-toe
(`tests/toygame`, a few dozen lines) played through the session, UCI, UGI, GTP and the match
runner, none of which was edited for it. The oracle is the game itself: tic-tac-toe is a draw, so
two perfect players draw, and a perfect player takes a win when one is there."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

import mallard.engines
from mallard.engines.base import Limits
from mallard.protocol.session import Session
from mallard.tournaments import cli as match_cli
from tests.protocol.harness import Engine
from tests.toygame import GAME

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setattr(mallard.engines, "GAMES", mallard.engines.GAMES + (GAME,))


def test_the_session_plays_it():
    session = Session("tictactoe")
    session.set_position("startpos", ["a1", "a2", "b1"])  # x threatens c1
    result = session.search_now(Limits())
    assert session.position.format_move(result.best_move) == "c1"  # o must block
    session.set_position("startpos", ["a1", "a2", "b1", "b2"])
    result = session.search_now(Limits())
    assert session.position.format_move(result.best_move) == "c1" and result.score.value == 1


@pytest.mark.parametrize("protocol", ["uci", "ugi"])
def test_uci_and_ugi_play_it(protocol):
    engine = Engine(protocol)
    try:
        engine.send(protocol)
        announced = engine.until(f"{protocol}ok")
        assert any("UCI_Variant" in line and "var tictactoe" in line for line in announced)
        engine.send("setoption name UCI_Variant value tictactoe", "isready")
        engine.until("readyok")
        engine.send("position startpos moves b2 a1 c3", "go depth 9")
        assert engine.until("bestmove")[-1] in ("bestmove a3", "bestmove c1")  # an edge loses
        engine.send("position startpos moves b2 z9")
        engine.send("isready")
        assert any("illegal move 2 'z9'" in line for line in engine.until("readyok"))
    finally:
        engine.send("quit")


def test_gtp_plays_it():
    engine = Engine("gtp")
    try:
        engine.send("1 mallard-variant ttt", "2 play b a1", "3 play w a2", "4 play b b1",
                    "5 genmove w")
        lines = engine.until("=5")
        assert lines[-1] == "=5 c1", lines
        engine.send("6 play b b1")
        assert engine.until("?6")[-1].startswith("?6 illegal move")
    finally:
        engine.send("quit")


def test_the_match_runner_referees_it(tmp_path):
    command = [f"cmd={sys.executable}", "arg=-m", "arg=tests.toygame.engine", "arg=uci",
               f"dir={ROOT}"]
    json_path = tmp_path / "match.json"
    out = io.StringIO()
    status = match_cli.main(["-variant", "tictactoe", "-engine", *command, "name=A",
                             "-engine", *command, "name=B", "-each", "proto=uci", "st=1",
                             "-games", "2", "-json", str(json_path)], out)
    assert status == 0, out.getvalue()
    assert "Score of A vs B: 0 - 0 - 2" in out.getvalue()
    summary = json.loads(json_path.read_text())
    assert summary["variant"] == "tictactoe"
    assert [(e["wins"], e["losses"], e["draws"]) for e in summary["engines"]] == [(0, 0, 2)] * 2
