"""Game analysis (`analyse_game`, `mallard prove uttt --game`) against fresh proofs of each
position and the exhaustive minimax of test_prover; the real games of the reach benchmark and
its table (`mallard.engines.uttt.reach`, `mallard bench uttt-reach`)."""

from __future__ import annotations

import io

import pytest

from mallard.engines import get_game
from mallard.engines.uttt import kernels as K
from mallard.engines.uttt.prover import Prover, analyse_game
from mallard.engines.uttt.reach import GAMES_FILE, ProverSetting, ReachScan, bench_reach, load_games
from mallard.protocol.cli import main
from tests.engines.uttt.test_prover import oracle_value

ORACLE_OPEN_CELLS = 14


@pytest.fixture(scope="module")
def games():
    return load_games()


def test_the_games_file_holds_finished_real_games(games):
    assert len(games) >= 15
    names = [game.name for game in games]
    assert len(set(names)) == len(names)
    groups = {name.split("/")[0] for name in names}
    assert {"st=0.1", "st=0.5", "st=2", "depth=6", "depth=9"} <= groups
    assert sum(game.plies >= 55 for game in games) >= 5
    for game in games:
        assert game.positions[-1].result() is not None
        assert all(position.result() is None for position in game.positions[:-1])


def test_analysis_from_the_end_agrees_with_fresh_proofs_and_the_oracle(games):
    """The last 16 positions of two long games on one kept table: the same values as a fresh
    table gives each, the oracle's where few cells are open, and less work than fresh tables
    (each proof reuses the later ones')."""
    for game in [game for game in games if game.plies >= 55][:2]:
        positions = game.positions[-17:]
        kept = Prover(hash_mb=16)
        analysed = dict(analyse_game(kept, positions, time_limit=60))
        assert sorted(analysed) == list(range(len(positions)))
        fresh = Prover(hash_mb=16)
        fresh_nodes = kept_nodes = 0
        memo: dict = {}
        for index, position in enumerate(positions):
            outcome = fresh.solve(position, time_limit=60, details=False)
            assert outcome.value is not None
            assert analysed[index].value == outcome.value, (game.name, index)
            fresh_nodes += outcome.nodes
            kept_nodes += analysed[index].nodes
            if K.count_open_cells(position.state) <= ORACLE_OPEN_CELLS:
                assert outcome.value == oracle_value(position.state.copy(), memo)
        assert kept_nodes < fresh_nodes


def test_analysis_stops_when_asked(games):
    prover = Prover(hash_mb=16)
    positions = games[0].positions
    seen = []
    for index, outcome in analyse_game(prover, positions, time_limit=30):
        seen.append(index)
        if len(seen) == 3:
            prover.request_stop()
    assert len(seen) <= 4  # the one running when the stop came ends too


def _moves(game) -> str:
    start = game.positions[0]
    texts, position = [], start
    for after in game.positions[1:]:
        move = next(m for m in position.legal_moves() if position.play(m) == after)
        texts.append(position.format_move(move))
        position = after
    return " ".join(texts)


def test_prove_game_command_prints_a_line_per_position(games, capsys):
    game = games[0]
    moves = _moves(game)
    numbered = " ".join(f"{i // 2 + 1}. {m}" if i % 2 == 0 else m
                        for i, m in enumerate(moves.split()))
    for text in (moves, numbered + " 1-0"):
        assert main(["prove", "uttt", "--game", text, "--plies", "6", "--limit", "20"]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        assert len(lines) == 8
        for line, back in zip(lines, range(7)):
            ply = game.plies - back
            assert line.startswith(f"ply {ply:>2} ({back:>2} before the end")
            assert " s " in line and line.endswith("nodes")
            fresh = Prover(hash_mb=16).solve(game.positions[ply], details=False)
            assert f"  {fresh.text}  " in line.replace("   ", "  ")
        assert lines[-1].startswith("7 of 7 positions proven")


def test_prove_game_command_refuses_bad_input(games, capsys):
    moves = _moves(games[0]).split()
    bad = " ".join(moves[:4] + [moves[0]] + moves[5:])
    for argv in (["prove", "uttt", "--game", bad],
                 ["prove", "uttt"],
                 ["prove", "uttt", games[0].positions[-3].fen(), "--plies", "2"]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mallard:"), argv
        assert "Traceback" not in captured.err
    assert main(["prove", "uttt", "--game", bad]) == 2
    assert "move 5:" in capsys.readouterr().err


def test_reach_counts_from_the_end_up_to_the_first_miss(games):
    scan = ReachScan(games[0], ProverSetting("1 thread", 1), 10.0,
                     seconds=[0.1, 0.2, 3.0, 0.5, 12.0, 0.1],
                     values={1: "X wins", 2: "X wins", 3: "draw", 4: "draw", 6: "X wins"})
    assert scan.reach(1.0) == 2
    assert scan.reach(10.0) == 4
    assert scan.reach(60.0) == 4  # 5 plies before the end was not proven


def test_reach_table(games):
    out = io.StringIO()
    game = next(game for game in games if game.plies >= 55)
    assert bench_reach([game], [0.5, 5.0], [1], True, 6, out) == 0
    lines = out.getvalue().splitlines()
    assert GAMES_FILE.name in lines[0]
    header = next(line for line in lines if line.startswith("| game"))
    assert "1 thread, 0.5 s" in header and "before, 1 thread, 5 s" in header
    row = lines[-1].split("|")[1:-1]
    assert row[0].strip() == game.name and row[1].strip() == str(game.plies)
    reaches = [int(cell) for cell in row[3:]]
    assert all(0 <= reach <= 6 for reach in reaches) and reaches[1] == 6 == reaches[3]


def test_reach_command_names_games_and_refuses_unknown_ones(capsys):
    assert main(["bench", "uttt-reach", "--games", "nonesuch"]) == 2
    assert "no game is named" in capsys.readouterr().err
    assert main(["bench", "uttt-reach", "--games", "depth=9/1", "--limits", "2",
                 "--threads", "1", "--max-plies", "3"]) == 0
    out = capsys.readouterr().out
    assert "| depth=9/1 |" in out and get_game("uttt") is not None
