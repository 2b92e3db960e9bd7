"""Ultimate Tic-Tac-Toe through every front-end (UCI_Variant uttt, UGI, GTP) and through the
match runner, with no game-specific code in either: moves are checked against the independent
rules model of tests/engines/uttt/test_rules.py."""

from __future__ import annotations

import pytest

from tests.engines.uttt.test_rules import Model
from tests.protocol.harness import ENGINE_COMMAND, Engine
from tests.protocol.test_gtp import Gtp

LETTERS = "abcdefghi"


def model_after(moves: list[str]) -> Model:
    model = Model()
    for text in moves:
        model.play(LETTERS.index(text[0]) * 9 + LETTERS.index(text[1]))
    return model


def legal_texts(model: Model) -> set[str]:
    return {LETTERS[m // 9] + LETTERS[m % 9] for m in model.moves()}


@pytest.mark.parametrize("dialect", ["uci", "ugi"])
def test_uci_and_ugi_play_uttt(dialect):
    engine = Engine(dialect)
    try:
        engine.send(dialect, "setoption name UCI_Variant value uttt")
        engine.ready()
        moves = ["ae", "ea"]
        for _ in range(4):
            engine.send(f"position startpos moves {' '.join(moves)}",
                        "go p1time 2000 p2time 2000" if dialect == "ugi" else "go movetime 150")
            lines = engine.until("bestmove")
            best = lines[-1].split()[1]
            assert best in legal_texts(model_after(moves)), (moves, best)
            assert any(" score " in line for line in lines)
            if dialect == "ugi":
                assert len(lines[-1].split()) == 2
            moves.append(best)
        if dialect == "ugi":
            engine.send("query gameover", "query p1turn")
            assert engine.until("response")[-1] == "response false"
            # the last `position` had 5 moves: O (player 2) is to move
            assert engine.until("response")[-1] == "response false"
        engine.send("position fen X;@........;" + "/".join(["........."] * 9) + " moves ae",
                    "d")
        assert any("O;....@....;....X..../" in line for line in engine.until("Fen"))
        engine.send("position startpos moves ae aa", "isready")  # aa: O must play in board e
        assert any("error" in line and "aa" in line for line in engine.until("readyok"))
    finally:
        engine.close()


def test_gtp_plays_uttt_after_mallard_variant():
    gtp = Gtp()
    try:
        assert gtp.ok("known_command mallard-variant") == "true"
        assert "cannot be played over GTP" in gtp.fails("mallard-variant duck")
        gtp.ok("mallard-variant uttt")
        gtp.ok("boardsize 9")
        assert "9x9" in gtp.fails("boardsize 7 6")
        gtp.ok("clear_board")
        gtp.ok("play b B8")  # board a, centre cell: sends white to board e
        vertex = gtp.ok("genmove w", timeout=60)
        column, row = "ABCDEFGHJ".index(vertex[0]), 9 - int(vertex[1:])
        assert 3 <= row < 6 and 3 <= column < 6  # inside the centre board
        assert "illegal" in gtp.fails("play b B8")
        assert "X" in gtp.board() and "O" in gtp.board()
    finally:
        gtp.close()


def test_a_uttt_match_between_mallard_over_ugi_and_gtp():
    from mallard.tournaments import EngineConfig, Match, TimeControl

    # The margins: this checks the protocols, not the clocks (tests/tournaments does that). A
    # loaded 2-core CI machine once held a 50 ms UGI reply back to 117 ms, a time forfeit.
    engines = [EngineConfig(name="ugi", command=ENGINE_COMMAND + ["ugi"], protocol="ugi",
                            tc=TimeControl.from_settings(st="0.05"), timemargin_ms=500),
               EngineConfig(name="gtp", command=ENGINE_COMMAND + ["gtp"], protocol="gtp",
                            tc=TimeControl.from_settings(st="0.05"), timemargin_ms=500)]
    match = Match(variant="uttt", engines=engines, games=2, repeat=True).run()
    assert len(match.records) == 2
    for record in match.records:
        assert record.termination == "normal", record.reason
        model = model_after([move.text for move in record.moves])
        assert model.over()
        expected = "1/2-1/2" if model.winner is None else ("1-0" if model.winner == "X" else "0-1")
        assert record.result == expected
