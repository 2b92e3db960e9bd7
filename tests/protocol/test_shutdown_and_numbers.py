"""Edges every protocol must hold: `quit` or the end of input ends any search at once (UCI, UGI
and GTP, every game), GTP's numbers are checked (non-finite, negative or absurd values are
refused and the old settings kept), and GTP's genmove without time settings always ends."""

from __future__ import annotations

import io
import time

import pytest

from mallard.engines.base import LIMIT_MAX
from mallard.protocol.gtp import GtpFrontEnd
from mallard.protocol.io import Output
from mallard.protocol.session import Session
from tests.protocol.harness import Engine, Process

EXIT_WITHIN = 1.0  # seconds from quit / end of input to the process's exit


def _finish(process: Process, how: str) -> float:
    started = time.monotonic()
    if how == "quit":
        process.send("quit")
    else:
        process.close_stdin()
    code, stderr = process.wait(30)
    elapsed = time.monotonic() - started
    assert code == 0 and "Traceback" not in stderr, stderr
    return elapsed


@pytest.mark.parametrize("how", ["quit", "eof"])
@pytest.mark.parametrize("protocol", ["uci", "ugi"])
@pytest.mark.parametrize("variant", ["duck", "cfour", "uttt"])
def test_quit_or_eof_ends_an_infinite_search(variant, protocol, how):
    process = Process(protocol, "--variant", variant)
    process.send(protocol, "isready")
    process.until("readyok", 180)
    process.send("go infinite")
    process.until("info depth", 60)
    time.sleep(0.3)
    assert _finish(process, how) < EXIT_WITHIN


GTP_SEARCHES = {
    # no book on 8x7: the solve runs far longer than the test waits
    "cfour genmove": ("cfour", ["boardsize 8 7", "genmove b"]),
    "cfour solve": ("cfour", ["boardsize 8 7", "mallard-solve"]),
    "cfour analyze": ("cfour", ["boardsize 8 7", "mallard-analyze"]),
    # 600 s of main time: the time manager gives this move 24 s
    "uttt genmove": ("uttt", ["time_settings 600 0 0", "genmove b"]),
}


@pytest.mark.parametrize("how", ["quit", "eof"])
@pytest.mark.parametrize("case", sorted(GTP_SEARCHES))
def test_quit_or_eof_ends_a_gtp_search(case, how):
    variant, commands = GTP_SEARCHES[case]
    process = Process("gtp", "--variant", variant)
    process.send("showboard")  # answered once the compiled code is loaded
    process.until("=", 180)
    process.send(*commands)
    time.sleep(0.5)
    assert _finish(process, how) < EXIT_WITHIN


@pytest.mark.parametrize("quit_line", ["QUIT", "7 QUIT", "7 quit # done", "\tquit\x01"])
def test_every_form_of_gtp_quit_ends_a_search_at_once(quit_line):
    """GTP reads command names in any case, after an id, before a comment: each such `quit`
    stops a running solve; the reader used to know only `quit` and `<id> quit`."""
    process = Process("gtp", "--variant", "cfour")
    process.send("showboard")
    process.until("=", 180)
    process.send("boardsize 8 7", "mallard-solve")
    time.sleep(0.5)
    started = time.monotonic()
    process.send(quit_line)
    code, stderr = process.wait(30)
    assert code == 0 and "Traceback" not in stderr, stderr
    assert time.monotonic() - started < EXIT_WITHIN


# --- GTP's numbers ----------------------------------------------------------------------------

@pytest.fixture
def gtp():
    out = io.StringIO()
    front = GtpFrontEnd(Output(out), session=Session("cfour"))
    front.session.wait_ready()

    def send(line: str) -> str:
        start = len(out.getvalue())
        front.handle(line)
        return out.getvalue()[start:].strip()

    yield front, send
    front.close()


@pytest.mark.parametrize("command", [
    "time_settings inf 0 0", "time_settings nan 0 0", "time_settings 1e308 0 0",
    "time_settings -1 0 0", "time_settings 10 -inf 0", "time_settings 10 0 -1",
    "time_settings 10 0 1e3", f"time_settings 10 0 {LIMIT_MAX + 1}",
    f"time_settings {LIMIT_MAX} 0 0", "time_settings 1 2", "time_settings x 0 0",
])
def test_bad_time_settings_are_refused_and_the_old_ones_kept(gtp, command):
    front, send = gtp
    assert send("time_settings 30 5 10") == "="
    before = (front.main_time, front.byo_yomi_time, front.byo_yomi_stones)
    reply = send(command)
    assert reply.startswith("? ") and "\n" not in reply
    assert (front.main_time, front.byo_yomi_time, front.byo_yomi_stones) == before == (30, 5, 10)


@pytest.mark.parametrize("command", ["time_left b inf 0", "time_left w nan 3",
                                     "time_left b 1e300 0", "time_left b 10 -1",
                                     "time_left x 10 0", "komi nan", "komi inf"])
def test_bad_clock_and_komi_values_are_refused(gtp, command):
    front, send = gtp
    assert send("time_settings 30 0 0") == "="
    assert send("time_left b 12.5 0") == "="
    reply = send(command)
    assert reply.startswith("? ") and "\n" not in reply
    assert front.time_left == {0: (12.5, 0)}


def test_the_largest_time_settings_still_give_a_move(gtp):
    """The boundary itself is accepted; clocks that large never overflow the search."""
    front, send = gtp
    assert send(f"time_settings {LIMIT_MAX // 1000} 0 0") == "="
    assert send(f"time_left b {LIMIT_MAX // 1000} 0") == "="
    assert send("play b d") == "="
    assert send("time_left w 0.5 0") == "="
    reply = send("genmove w")
    assert reply.startswith("= ") and len(reply.split()) == 2


def test_genmove_without_time_settings_ends_on_a_board_without_a_book():
    """8x7 has no book and its solve takes hours: the game's default move time bounds it."""
    engine = Engine("gtp")
    engine.send("boardsize 8 7", "genmove b")
    replies = engine.lines.until(lambda line: line.startswith("= ") or line.startswith("?"),
                                 timeout=120)
    assert replies[-1].startswith("= ") and replies[-1][2:] in "abcdefgh"
    engine.close()
