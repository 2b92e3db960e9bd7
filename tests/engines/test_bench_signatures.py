"""The bench signatures: a regression check of every game's search (Stockfish's `bench`).

Each game's signature is the node total of its fixed positions searched to a fixed depth from an
empty table (`engines/<game>/bench.py`, `SIGNATURE`), run as a client's `go depth N` runs
(`mallard.protocol.signature`). It changes exactly when a search changes what it visits: a commit
that changes a search must state the new signature in its message and update `SIGNATURES` here (a
change that was meant to keep the search as it was must leave them unchanged). They are the
numbers `mallard bench` and UCI `bench` print.
"""

from __future__ import annotations

import io

import pytest

from mallard.engines import GAMES, find_game
from mallard.engines.bench import BenchSignature
from mallard.protocol import cli
from mallard.protocol.io import Output
from mallard.protocol.signature import run_signature
from mallard.protocol.uci import UciFrontEnd

SIGNATURES = {"cfour": 24948156, "duck": 689701, "uttt": 6832056}


def test_every_game_declares_a_signature_of_positions_it_reads():
    assert sorted(SIGNATURES) == sorted(entry.name for entry in GAMES)
    for entry in GAMES:
        signature = entry.bench()
        assert isinstance(signature, BenchSignature) and signature.depth > 0
        game = entry.new_game()
        for text in signature.positions:
            assert game.parse_position(text).result() is None, (entry.name, text)
        names = {option.name for option in entry.options}
        assert {name for name, _ in signature.options} <= names, entry.name


@pytest.mark.parametrize("variant", ["duck", "uttt"])
def test_signature(variant):
    assert run_signature(variant).nodes == SIGNATURES[variant]


def test_a_failing_search_fails_the_bench_instead_of_counting_no_nodes(capsys, monkeypatch):
    from mallard.engines.duck.searcher import DuckSearcher

    def broken(*args, **kwargs):
        raise ZeroDivisionError("broken search")

    monkeypatch.setattr(DuckSearcher, "search", broken)
    assert cli.main(["bench", "--variant", "duck"]) == 1
    out, err = capsys.readouterr()
    assert "Nodes searched" not in out
    assert err.strip().splitlines()[-1].startswith("mallard: internal error: RuntimeError: "
                                                   "the duck search failed on ")
    assert "broken search" in err


def test_mallard_bench_prints_the_signature_as_stockfish_does(capsys):
    assert cli.main(["bench", "--variant", "connect4"]) == 0
    out, err = capsys.readouterr()
    nodes = SIGNATURES["cfour"]
    assert out == f"cfour: Nodes searched: {nodes}\nNodes searched: {nodes}\n"
    assert "cfour: 10 positions at depth 42" in err


def test_uci_bench_runs_the_current_variant_and_keeps_the_position():
    stream = io.StringIO()
    front = UciFrontEnd(Output(stream), None)
    for line in ("setoption name UCI_Variant value cfour", "position startpos moves d", "bench"):
        assert front.handle(line)
    lines = stream.getvalue().splitlines()
    assert lines[-1] == f"Nodes searched: {SIGNATURES['cfour']}"
    assert all(line.startswith("info string bench cfour: ") for line in lines[:-1]) and lines[:-1]
    assert front.session.moves == ["d"] and front.session.variant == find_game("cfour").name
    front.close()
