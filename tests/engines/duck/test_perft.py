"""Perft against the reference table, and the `mallard perft duck` command."""

import os
import subprocess
import sys

import pyffish
import pytest

from mallard.engines.compile_cache import NO_PREBUILT
from tests.engines.duck.conftest import PERFT_ROWS, START


@pytest.mark.parametrize("fen,counts", PERFT_ROWS, ids=[f"row{i + 1}" for i in range(9)])
@pytest.mark.parametrize("depth", [1, 2])
def test_reference_rows(game, fen, counts, depth):
    position = game.parse_position(fen)
    assert position.perft(depth) == counts[depth - 1]
    assert position.perft(depth, bulk=False) == counts[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("row", [1, 2, 5, 6])
def test_reference_rows_depth_3(game, row):
    fen, counts = PERFT_ROWS[row - 1]
    assert game.parse_position(fen).perft(3) == counts[2]


@pytest.mark.parametrize("fen", [row[0] for row in PERFT_ROWS])
def test_divide_equals_pyffish_children(game, fen):
    """perft 1 of every child, against pyffish walking legal_moves itself."""
    position = game.parse_position(fen)
    for move, count in position.divide(2)[::37]:
        text = position.format_move(move)
        child = pyffish.get_fen("duck", fen, [text])
        assert count == len(pyffish.legal_moves("duck", child, [])), text


def test_fowling_position_has_no_children(game):
    position = game.parse_position("k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1")
    assert position.perft(1) == 0
    assert position.perft(3) == 0


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "mallard.protocol.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_perft_prints_nodes_searched():
    result = run_cli("perft", "duck", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "Nodes searched: 379440"


def test_cli_divide_lists_every_root_move_in_uci_form():
    fen = PERFT_ROWS[7][0]
    result = run_cli("perft", "duck", "--fen", fen, "--divide", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "Nodes searched: 31920"
    entries = [line.split(": ") for line in lines[:-1] if line]
    assert {move for move, _ in entries} == set(pyffish.legal_moves("duck", fen, []))
    assert sum(int(count) for _, count in entries) == 31920


def test_cli_divide_compiles_on_a_cold_cache(tmp_path):
    """Divide is the first kernel compiled here (a new cache, no code from the build): it calls
    kernels compiled with reference counting and must have it too."""
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(MALLARD_CACHE=str(tmp_path), **{NO_PREBUILT: "1"})
    result = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "perft", "duck", "1",
                             "--divide"], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "Nodes searched: 640"
    assert "internal error" not in result.stderr


def test_cli_perft_rejects_a_bad_fen_cleanly():
    result = run_cli("perft", "duck", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1", "1")
    assert result.returncode == 2
    assert "king" in result.stderr and "Traceback" not in result.stderr


def test_start_fen_constant_matches_pyffish():
    assert pyffish.start_fen("duck") == START
