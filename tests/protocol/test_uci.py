"""UCI and UGI front-ends: the recorded client sessions of the reference page, every bad-input
case, ponder and infinite searches, and the process-level behaviour (start-up, EOF, quit)."""

import os
import re

import pyffish
import pytest

from tests import oracles  # noqa: F401  (loads the cfour variant into pyffish)
from tests.protocol.harness import Engine, Process

INTEGER_FIELDS = ("depth", "seldepth", "time", "nodes", "nps", "hashfull", "multipv")
DUCK_FEN = pyffish.start_fen("duck")


@pytest.fixture
def engine():
    e = Engine("uci")
    e.send("uci")
    e.until("uciok")
    e.ready()
    yield e
    e.close()


def bestmove(engine, *commands, timeout=60):
    engine.send(*commands)
    lines = engine.until("bestmove", timeout)
    return lines[-1].split()[1], lines[:-1]


def check_info(line):
    """fastchess's rules: integer fields, a score of cp or mate."""
    words = line.split()
    assert words[0] == "info"
    if words[1] == "string":
        return
    for index, word in enumerate(words[:-1]):
        if word in INTEGER_FIELDS:
            assert re.fullmatch(r"-?\d+", words[index + 1]), line
        if word == "score":
            assert words[index + 1] in ("cp", "mate"), line
            assert re.fullmatch(r"-?\d+", words[index + 2]), line


def test_handshake_lists_the_options_clients_match():
    e = Engine("uci")
    e.send("uci")
    lines = e.until("uciok")
    assert lines[0].startswith("id name ") and lines[1].startswith("id author ")
    # pychess.org's worker matches this literal prefix; the token order is the reference page's
    assert "option name UCI_Variant type combo default duck var cfour var duck var uttt" in lines
    options = [line for line in lines if line.startswith("option ")]
    names = set()
    for line in options:
        match = re.fullmatch(r"option name (.+?) type (\w+)(.*)", line)
        assert match, line
        name, kind, rest = match.groups()
        assert kind in ("check", "spin", "combo", "button", "string")
        assert not set(name.lower().split()) & {"name", "type", "default", "min", "max", "var"}
        names.add(name)
    for required in ("Hash", "MultiPV", "Ponder", "Move Overhead", "UCI_ShowWDL", "Clear Hash",
                     "UCI_AnalyseMode", "Skill Level"):
        assert required in names
    # one search thread per core at most (Stockfish announces its own range the same way)
    assert "option name Skill Level type spin default 20 min 0 max 20" in lines
    assert f"option name Threads type spin default 1 min 1 max {os.cpu_count()}" in lines
    e.close()


def test_cutechess_cfour_session(engine):
    """The session cutechess-cli sends for cfour (reference page), with legality by pyffish."""
    engine.send("setoption name UCI_Variant value cfour", "ucinewgame", "position startpos")
    engine.ready()
    first, infos = bestmove(engine, "go wtime 10100 btime 10100 winc 100 binc 100")
    start = pyffish.start_fen("cfour")
    assert first in pyffish.legal_moves("cfour", start, [])
    assert any(" score " in line for line in infos)
    for line in infos:
        check_info(line)
    engine.send(f"position startpos moves {first}")
    engine.ready()
    reply, _ = bestmove(engine, "go wtime 10000 btime 10100 winc 100 binc 100")
    assert reply in pyffish.legal_moves("cfour", start, [first])


def test_fastchess_style_duck_game(engine):
    """fastchess: id lines, movestogo 40 with clocks, integer info fields, legal moves."""
    moves = []
    for _ in range(6):
        engine.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        move, infos = bestmove(engine, "go wtime 2000 btime 2000 winc 20 binc 20 movestogo 40")
        for line in infos:
            check_info(line)
        assert move in pyffish.legal_moves("duck", DUCK_FEN, moves)
        moves.append(move)


def test_pychess_worker_bare_trailing_moves_and_duck_fen(engine):
    engine.send("setoption name UCI_Variant value duck", "position startpos moves")
    move, _ = bestmove(engine, "go movetime 200")
    assert move in pyffish.legal_moves("duck", DUCK_FEN, [])
    fen = "rnbqkbnr/pppppppp/8/4*3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    engine.send(f"position fen {fen} moves")
    move, _ = bestmove(engine, "go depth 2")
    assert move in pyffish.legal_moves("duck", fen, [])


def test_go_tokens_in_any_order_and_searchmoves(engine):
    engine.send("position startpos")
    move, _ = bestmove(engine, "go nodes 5000 depth 3 movetime 5000 "
                               "searchmoves a2a3,a3a4 b1c3,c3c6")
    assert move in ("a2a3,a3a4", "b1c3,c3c6")
    engine.send("setoption name UCI_Variant value cfour", "position startpos")
    move, _ = bestmove(engine, "go searchmoves P@a1 P@g1 depth 5")
    assert move in ("P@a1", "P@g1")


def test_multipv_and_wdl_for_connect_four(engine):
    engine.send("setoption name UCI_Variant value cfour", "setoption name UCI_ShowWDL value true",
                "setoption name MultiPV value 7", "position startpos moves P@d1 P@d2 P@d3 P@d4")
    move, infos = bestmove(engine, "go movetime 5000")
    lines = [line for line in infos if " multipv " in line]
    assert [int(line.split(" multipv ")[1].split()[0]) for line in lines] == list(range(1, 8))
    for line in lines:
        check_info(line)
        assert re.search(r" wdl \d+ \d+ \d+ ", line)
        assert re.search(r" score (mate -?\d+|cp 0) ", line)
    assert lines[0].split(" pv ")[1] == move


def test_multipv_for_duck(engine):
    engine.send("setoption name MultiPV value 3", "position startpos")
    move, infos = bestmove(engine, "go depth 3")
    final = [line for line in infos if line.startswith("info depth 3 ")]
    assert [line.split(" multipv ")[1].split()[0] for line in final] == ["1", "2", "3"]
    firsts = [line.split(" pv ")[1].split()[0] for line in final]
    assert len({f.split(",")[0] for f in firsts}) == 3  # three different piece moves
    assert firsts[0] == move


def test_finished_game_answers_none(engine):
    # Black's queen has just taken White's king on e1: White, to move, has lost
    engine.send("position fen rnb1kbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQqBNR w kq - 0 3")
    assert engine.ready() == []
    engine.send("go depth 3")
    assert engine.until("bestmove")[-2:] == ["info depth 0 score mate 0", "bestmove (none)"]
    engine.send("setoption name UCI_Variant value cfour",
                "position startpos moves P@a1 P@b1 P@a2 P@b2 P@a3 P@b3 P@a4")
    engine.send("go wtime 1000 btime 1000")
    assert engine.until("bestmove")[-2:] == ["info depth 0 score mate 0", "bestmove (none)"]


# --- bad input --------------------------------------------------------------------------------

def position_fen(engine):
    engine.send("d")
    return engine.until("Fen: ")[-1][5:]


def test_unknown_commands_are_ignored_and_unknown_options_named(engine):
    engine.send("xyzzy", "query p1turn")  # `query` is UGI only
    assert engine.ready() == []
    engine.send("setoption name UCI_Chess960 value true", "setoption name Eval File value x")
    assert engine.ready() == ["info string error: no such option 'UCI_Chess960'",
                              "info string error: no such option 'Eval File'"]


def test_one_error_line_per_command_however_many_problems(engine):
    engine.send("go depth 1 " + " ".join(["x"] * 10_000))
    lines = engine.until("bestmove ")
    errors = [line for line in lines if line.startswith("info string error")]
    assert errors == ["info string error: go: unknown token 'x' (and 9999 more)"]
    engine.send("go searchmoves zz yy depth 1 depth x nodes -4 " + "y " * 50)
    lines = engine.until("bestmove ")
    errors = [line for line in lines if line.startswith("info string error")]
    assert len(errors) == 1 and errors[0].endswith("(and 52 more)"), errors


def test_illegal_move_in_position_list_keeps_the_moves_before_it(engine):
    engine.send("position startpos moves e2e4,e4d5 e7e5 g1f3,f3e5")
    lines = engine.ready()
    assert len(lines) == 1 and lines[0].startswith("info string error: illegal move 2 'e7e5'")
    expected = "rnbqkbnr/pppppppp/8/3*4/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert position_fen(engine) == expected


def test_invalid_fen_keeps_the_previous_position(engine):
    engine.send("position startpos moves e2e4,e4d5")
    before = position_fen(engine)
    for fen in ("8/8/8 w - - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
                "rnbqkbnr/pppppppp/8/3**3/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ""):
        engine.send(f"position fen {fen}")
        lines = engine.ready()
        assert len(lines) == 1 and lines[0].startswith("info string error:"), fen
        assert position_fen(engine) == before


def test_bad_option_values_keep_the_old_value(engine):
    for command, word in (("setoption name Hash value 0", "between"),
                          ("setoption name Hash value many", "integer"),
                          ("setoption name UCI_ShowWDL value maybe", "true or false"),
                          ("setoption name UCI_Variant value xiangqi", "one of"),
                          ("setoption name Move Overhead", "needs a value"),
                          ("setoption value 3", "name")):
        engine.send(command)
        lines = engine.ready()
        assert len(lines) == 1 and lines[0].startswith("info string error:") and word in lines[0], \
            (command, lines)
    # UCI_ShowWDL stayed off: no wdl in the info lines
    engine.send("position startpos")
    _, infos = bestmove(engine, "go depth 2")
    assert not any(" wdl " in line for line in infos)


def test_go_with_nonsense_values_still_answers_once(engine):
    engine.send("position startpos")
    for command in ("go depth x", "go wtime -5 btime abc", "go movetime", "go banana 3",
                    "go depth 0", "go nodes 1e99", "go depth 2 nodes"):
        move, infos = bestmove(engine, command, timeout=30)
        assert any(line.startswith("info string error: go:") for line in infos), command
        assert move in pyffish.legal_moves("duck", DUCK_FEN, []), command
        assert engine.ready() == []  # nothing more: exactly one bestmove
    move, infos = bestmove(engine, "go depth 2 nodes 99999999999999999999999999")
    assert not any("error" in line for line in infos)


def test_no_traceback_and_quiet_stderr_unless_debug():
    e = Engine("uci")
    e.send("uci", "position fen garbage", "go depth q", "setoption name Hash value -1")
    e.until("bestmove")
    e.ready()
    assert not any("Traceback" in line for line in e.lines.seen)
    assert e.stderr.getvalue() == ""
    e.send("debug on", "position fen garbage")
    e.ready()
    assert "invalid position" in e.stderr.getvalue()
    e.close()


# --- threads: isready during a search, stop, infinite, ponder -----------------------------------

def test_isready_and_stop_during_an_infinite_search(engine):
    engine.send("position startpos", "go infinite")
    engine.until("info depth 2")
    assert all(not line.startswith("bestmove") for line in engine.ready())
    engine.send("stop")
    lines = engine.until("bestmove", timeout=5)
    assert lines[-1].split()[1] in pyffish.legal_moves("duck", DUCK_FEN, [])
    assert engine.ready() == []


def test_infinite_holds_a_finished_solve_until_stop(engine):
    engine.send("setoption name UCI_Variant value cfour", "position startpos moves P@d1 P@d2",
                "go infinite")
    lines = engine.ready()  # the solve has finished (the book knows it): still no bestmove
    engine.drain(0.3)
    assert not any(line.startswith("bestmove") for line in engine.lines.seen)
    engine.send("stop")
    assert engine.until("bestmove", timeout=5)[-1].startswith("bestmove P@")
    del lines


def test_ponder_then_ponderhit_plays_within_the_clock(engine):
    engine.send("position startpos moves e2e4,e4e5", "go ponder wtime 3000 btime 3000")
    engine.drain(0.5)
    assert not any(line.startswith("bestmove") for line in engine.lines.seen)
    engine.send("ponderhit")
    move = engine.until("bestmove", timeout=10)[-1].split()[1]
    assert move in pyffish.legal_moves("duck", DUCK_FEN, ["e2e4,e4e5"])


def test_ponder_then_stop_answers_once(engine):
    engine.send("position startpos", "go ponder wtime 3000 btime 3000")
    engine.drain(0.3)
    engine.send("stop")
    engine.until("bestmove", timeout=5)
    assert engine.ready() == []


def test_a_new_go_ends_the_running_one_with_its_own_bestmove(engine):
    engine.send("position startpos", "go infinite", "go depth 2")
    engine.until("bestmove")
    engine.until("bestmove")
    assert engine.ready() == []


# --- UGI --------------------------------------------------------------------------------------

def test_ugi_session():
    e = Engine()  # the first command chooses the protocol
    e.send("ugi")
    lines = e.until("ugiok")
    assert lines[0].startswith("id name")
    e.send("setoption name UCI_Variant value cfour", "uginewgame", "position startpos")
    e.ready()
    e.send("query p1turn", "query gameover", "query result", "query nonsense")
    got = e.until("info string error: query")
    assert got[:3] == ["response true", "response false", "response none"]
    e.send("go p1time 10000 p2time 10000 p1inc 100 p2inc 100")
    words = e.until("bestmove")[-1].split()
    assert (len(words) == 2
            and words[1] in pyffish.legal_moves("cfour", pyffish.start_fen("cfour"), []))
    e.send("position startpos moves P@a1 P@b1 P@a2 P@b2 P@a3 P@b3 P@a4",
           "query p1turn", "query gameover", "query result")
    assert e.until("response", 10) and e.drain(0.2)[:2] == ["response true", "response p1win"]
    e.send("position startpos moves P@a1", "query p1turn")
    assert e.until("response")[-1] == "response false"
    e.close()


def test_ugi_duck_draw_by_repetition_is_game_over():
    e = Engine("ugi")
    e.send("ugi")
    e.until("ugiok")
    shuffle = ["g1f3,f3a3", "g8f6,f6a4", "f3g1,g1a3", "f6g8,g8a4"]
    e.send("position startpos moves " + " ".join(shuffle * 2), "query gameover")
    assert e.until("response")[-1] == "response false"  # twice is not yet a draw
    e.send("position startpos moves " + " ".join(shuffle * 3), "query gameover", "query result")
    assert e.until("response")[-1] == "response true"
    assert e.until("response")[-1] == "response draw"
    e.close()


# --- the process ------------------------------------------------------------------------------

def test_process_autodetects_uci_and_quits_mid_search():
    p = Process()
    p.send("uci")
    p.until("uciok")
    p.send("isready")
    p.until("readyok", 120)
    p.send("position startpos", "go infinite")
    p.until("info depth 2")
    p.send("quit")
    code, stderr = p.wait()
    assert code == 0 and stderr == ""


def test_process_ends_cleanly_at_eof_mid_search():
    p = Process("uci")
    p.send("uci", "isready")
    p.until("readyok", 120)
    p.send("position startpos", "go infinite")
    p.until("info depth 2")
    p.close_stdin()
    code, stderr = p.wait()
    assert code == 0 and stderr == ""
    assert not any("Traceback" in line for line in p.lines.seen)


def test_a_second_handshake_during_a_search_leaves_the_search_alone(engine):
    engine.send("position startpos", "go infinite")
    engine.until("info depth 2")
    engine.send("uci")
    engine.until("uciok")
    assert not any(line.startswith("bestmove") for line in engine.ready())
    engine.send("stop")
    move = engine.until("bestmove", timeout=5)[-1].split()[1]
    assert move in pyffish.legal_moves("duck", DUCK_FEN, [])
    assert engine.ready() == []


def test_invalid_utf8_does_not_end_the_input():
    p = Process("uci")
    p.process.stdin.buffer.write(b"\xff\xfe garbage \x80\n")
    p.send("uci")
    p.until("uciok")
    p.send("isready")
    p.until("readyok", 120)
    p.send("quit")
    code, stderr = p.wait()
    assert code == 0 and stderr == ""


def test_invalid_utf8_in_process_does_not_end_the_input():
    e = Engine("uci")
    e._stdin_writer.buffer.write(b"\xff\xfe garbage \x80\n")
    e._stdin_writer.buffer.flush()
    e.send("uci")
    e.until("uciok")
    assert e.ready() == []
    assert e.close() == 0
