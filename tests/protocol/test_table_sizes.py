"""`Hash` at the protocol edges: a size the machine cannot hold is one clear error line, the old
table is kept and the engine plays on; the command-line tools refuse bad sizes with exit 2."""

import re
import subprocess
import sys
import threading

import pytest

from mallard.engines import tables
from mallard.engines.base import Limits
from mallard.engines.tables import MB, TableSizeError
from mallard.protocol.session import Session
from tests.engines.test_tables import linux_only, pages_not_in_memory, table_of
from tests.protocol.harness import Engine

FIRST_RUN_NOTICE = "(first run only)"  # the compile notice a cold cache adds; not an error line


def machine_holds(megabytes: int) -> bool:
    available = tables.available_bytes()
    return available is None or available > (megabytes + tables.HEADROOM_MB) * MB


def play(session: Session, limits: Limits):
    done = threading.Event()
    results = []
    session.go(limits, lambda info: None, lambda result: (results.append(result), done.set()))
    assert done.wait(60)
    return results[0]


@pytest.mark.parametrize("variant", ["cfour", "duck", "uttt"])
def test_session_refuses_a_table_larger_than_memory_and_plays_on(variant, monkeypatch):
    monkeypatch.setattr(tables, "available_bytes", lambda: 2048 * MB)
    session = Session(variant)
    session.set_option("Hash", "32")
    table = table_of(session.searcher())
    maximum = session.find_option("Hash").max
    with pytest.raises(TableSizeError) as refused:
        session.set_option("Hash", str(maximum))
    assert str(refused.value) == \
        f"Hash {maximum} MB needs {maximum} MB but only 1568 MB of memory are available"
    assert session._game_values["hash"] == 32 and table_of(session.searcher()) is table
    result = play(session, Limits(depth=2))
    assert result.best_move in session.position.legal_moves()


@linux_only
def test_session_allocates_the_table_when_the_option_is_set():
    session = Session("duck")  # no searcher yet: the option makes it, with its table
    session.set_option("Hash", "512")
    table = table_of(session.searcher())
    assert table.nbytes == 512 * MB and pages_not_in_memory(table) == 0


@pytest.mark.skipif(machine_holds(65536), reason="this machine could hold 64 GiB")
def test_uci_cfour_hash_beyond_memory_is_one_error_line_and_the_engine_plays():
    engine = Engine("uci")
    try:
        engine.send("uci", "setoption name UCI_Variant value cfour")
        engine.until("uciok")
        engine.ready()
        engine.send("setoption name Hash value 65536")
        lines = engine.ready()
        assert len(lines) == 1 and lines[0].startswith("info string error: Hash 65536 MB needs")
        assert "available" in lines[0]
        engine.send("position startpos moves P@d1", "go movetime 200")
        assert re.fullmatch(r"P@([a-g]1|d2)", engine.until("bestmove")[-1].split()[1])
    finally:
        engine.close()


def run_cli(*args: str, stdin: str = ""):
    process = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", *args], input=stdin,
                             capture_output=True, text=True, timeout=300)
    errors = [line for line in process.stderr.splitlines() if FIRST_RUN_NOTICE not in line]
    return process.returncode, process.stdout, errors


UTTT_START = "X;.........;" + "/".join(["........."] * 9)


@pytest.mark.parametrize("command", [["solve"], ["prove", "uttt", UTTT_START, "--limit=1"]])
@pytest.mark.parametrize("size", ["0", "-5", "999999"])
def test_cli_refuses_bad_hash_sizes_in_one_line(command, size):
    code, out, errors = run_cli(*command, f"--hash={size}", stdin="4\n")
    assert code == 2 and out == ""
    messages = [line for line in errors if not line.startswith(("usage:", " "))]
    assert len(messages) == 1 and size in messages[0] and "Traceback" not in "\n".join(errors)


@pytest.mark.skipif(machine_holds(32768), reason="this machine could hold 32 GiB")
def test_solve_refuses_a_table_larger_than_memory():
    code, out, errors = run_cli("solve", "--hash", "65536", stdin="4\n")
    assert code == 2 and out == ""
    assert len(errors) == 1 and errors[0].startswith("mallard: Hash 65536 MB needs 65536 MB")


@pytest.mark.parametrize("first, then", [("duck", "cfour"), ("cfour", "uttt"), ("uttt", "duck"),
                                         ("duck", "duck")])
def test_hash_and_threads_outlive_a_variant_switch(first, then):
    """A GUI sets Hash and Threads once, often before UCI_Variant (as Fairy-Stockfish keeps
    them); a switch used to put both back to their defaults without a word."""
    session = Session(first)
    session.set_option("Hash", "16")
    session.set_option("Threads", "2")
    session.set_option("UCI_Variant", then)
    assert table_of(session.searcher()).nbytes == 16 * MB and session._game_values["threads"] == 2
    assert session.find_option("UCI_Variant").default == then  # what `uci` announces now
    result = play(session, Limits(depth=2))
    assert result.best_move in session.position.legal_moves()
    session.set_option("UCI_Variant", first)
    assert table_of(session.searcher()).nbytes == 16 * MB
