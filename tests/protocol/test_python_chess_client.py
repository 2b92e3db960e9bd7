"""python-chess as a client: `chess.engine.SimpleEngine.popen_uci` against `mallard uci`.

python-chess knows standard chess moves only. A board whose class says `uci_variant = "duck"`
makes it select the Duck Chess variant (it sets `UCI_Variant` to the board class's variant, and
rejects values the engine did not announce), and a standard FEN is a valid Duck Chess position.
Duck moves (`e2e4,e4d5`) are not python-chess moves: it logs and drops every `pv`, and it cannot
read the `bestmove` either, so `analyse()` (which waits for the bestmove) never returns. The
analysis here therefore reads the `info` lines through `analysis()` and leaves once the
requested depth is reported, as a GUI showing a live analysis does; python-chess then carries on
with the next command (checked with `ping()`).
"""

from __future__ import annotations

import logging

import chess
import chess.engine
import pytest

from mallard.protocol.session import Session
from tests.protocol.harness import ENGINE_COMMAND, run_with_timeout

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
BLACK_FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 3 3"


class DuckBoard(chess.Board):
    """A chess board python-chess sends as the `duck` variant."""

    uci_variant = "duck"


def analyse_until(engine, board, limit, enough, multipv=None, timeout: float = 60):
    """The infos of a live analysis, up to the first one `enough` accepts."""
    def collect():
        infos = []
        with engine.analysis(board, limit, multipv=multipv) as analysis:
            for info in analysis:
                infos.append(info)
                if enough(info):
                    break
        return infos

    return run_with_timeout(collect, timeout)


@pytest.fixture(scope="module")
def engine():
    # the first start may compile the numba code: a generous handshake timeout
    engine = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND + ["uci"], timeout=120)
    try:
        yield engine
    finally:
        run_with_timeout(engine.quit, 30)


def test_handshake_id_and_options(engine):
    assert engine.id["name"].startswith("Mallard")
    assert engine.id["author"]
    options = engine.options
    variant = options["UCI_Variant"]
    assert variant.type == "combo" and variant.default == "duck"
    assert {"duck", "cfour"} <= set(variant.var)
    assert (options["Hash"].type, options["Hash"].min) == ("spin", 1)
    assert options["Hash"].max >= options["Hash"].default >= 1
    assert (options["MultiPV"].type, options["MultiPV"].default, options["MultiPV"].min,
            options["MultiPV"].max) == ("spin", 1, 1, 500)
    assert options["Clear Hash"].type == "button" and options["Clear Hash"].default is None
    assert options["Ponder"].type == "check" and options["Ponder"].default is False
    assert options["UCI_ShowWDL"].type == "check"
    # every option the session announces, parsed with its type, default and bounds
    announced = Session("duck").options()
    assert set(options) == {o.name for o in announced}
    for option in announced:
        parsed = options[option.name]
        assert parsed.type == option.type, option.name
        if option.type == "spin":
            assert (parsed.default, parsed.min, parsed.max) == \
                (option.default, option.min, option.max), option.name
        elif option.type == "check":
            assert parsed.default is bool(option.default), option.name
        elif option.type == "combo":
            assert (parsed.default, list(parsed.var)) == (option.default,
                                                          list(option.choices)), option.name


def test_configure_and_ping(engine, caplog):
    """Valid values are taken silently: an `info string error` would reach python-chess as
    unexpected output while it waits for `readyok`."""
    with caplog.at_level(logging.DEBUG, logger="chess.engine"):
        run_with_timeout(lambda: engine.configure({"Hash": 16, "Move Overhead": 10,
                                                   "UCI_ShowWDL": False,
                                                   "UCI_AnalyseMode": False}))
        run_with_timeout(lambda: engine.configure({"Clear Hash": None}))
        run_with_timeout(engine.ping)
    messages = [r.getMessage() for r in caplog.records if r.name == "chess.engine"]
    sent = [m.split("<< ", 1)[1] for m in messages if "<< " in m]
    assert "setoption name Hash value 16" in sent
    assert "setoption name Move Overhead value 10" in sent
    assert "setoption name Clear Hash" in sent
    assert [m for m in messages if ">> " in m] == [m for m in messages if m.endswith(">> readyok")]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("fen", [FEN, BLACK_FEN])
def test_duck_analysis_to_depth_3(engine, fen, caplog):
    board = DuckBoard(fen)
    with caplog.at_level(logging.WARNING, logger="chess.engine"):
        infos = analyse_until(engine, board, chess.engine.Limit(depth=3),
                              lambda info: info.get("depth", 0) >= 3 and "score" in info)
    scored = [info for info in infos if "score" in info]
    assert scored and scored[-1]["depth"] == 3
    for info in scored:
        for key in ("depth", "seldepth", "nodes", "nps"):
            assert type(info[key]) is int, (key, info)
        assert isinstance(info["time"], float) and info["time"] >= 0
        score = info["score"]
        assert isinstance(score, chess.engine.PovScore)
        assert score.turn == board.turn
        assert abs(score.relative.score(mate_score=100_000)) < 100_000
        assert "pv" not in info  # duck moves are not python-chess moves
    assert [info["depth"] for info in scored] == sorted(info["depth"] for info in scored)
    # the only complaints are about the duck moves in the pv
    problems = [r.getMessage() for r in caplog.records if r.name == "chess.engine"]
    assert problems and all(p.startswith("Exception parsing pv from info") for p in problems)
    run_with_timeout(engine.ping)  # python-chess and the engine are still in step


def test_multipv_analysis(engine):
    infos = analyse_until(engine, DuckBoard(FEN), chess.engine.Limit(depth=2),
                          lambda info: info.get("depth") == 2 and info.get("multipv") == 2,
                          multipv=2)
    at_depth_2 = {info["multipv"]: info for info in infos if info.get("depth") == 2}
    assert set(at_depth_2) == {1, 2}
    assert all(isinstance(info["score"], chess.engine.PovScore) for info in at_depth_2.values())
    run_with_timeout(engine.ping)


def test_show_wdl(engine):
    run_with_timeout(lambda: engine.configure({"UCI_ShowWDL": True}))
    try:
        infos = analyse_until(engine, DuckBoard(FEN), chess.engine.Limit(depth=2),
                              lambda info: info.get("depth", 0) >= 2 and "score" in info)
    finally:
        run_with_timeout(lambda: engine.configure({"UCI_ShowWDL": False}))
    scored = [info for info in infos if "score" in info]
    assert scored
    for info in scored:
        wdl = info["wdl"]
        assert isinstance(wdl, chess.engine.PovWdl) and wdl.turn == chess.WHITE
        assert sum(wdl.relative) == 1000 and min(wdl.relative) >= 0
    run_with_timeout(engine.ping)


def test_quit():
    engine = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND + ["uci"], timeout=120)
    run_with_timeout(engine.ping)
    run_with_timeout(engine.quit, 30)
    assert engine.protocol.returncode.done() and engine.protocol.returncode.result() == 0
