"""`mallard tune duck`: the positions it takes from match databases, the fit (which must find
weights that generated the results), the rewritten weights block, and its command line."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from mallard.engines.duck import evaluation
from mallard.engines.duck.board import S_SIDE
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import DEFAULT_TERMS
from mallard.engines.duck.terms import TERM_KING_EXPOSURE
from mallard.tournaments import EngineConfig
from mallard.tournaments.records import GameJob, GameRecord, MoveRecord, Opening
from mallard.tournaments.storage import MatchStore
from mallard.tournaments.timecontrol import TimeControl
from mallard.tournaments.tuning import (
    Positions,
    fit,
    mixed_labels,
    quiet_positions,
    read_games,
    read_scores,
    relative_scale,
    rewrite_weights,
    search_scores,
    write_scores,
)

START = DuckGame().start_position().fen()
KNIGHT = evaluation.F_MATERIAL + 1


def _random_game(rng: random.Random, plies: int, opening: int) -> tuple[list, list]:
    """A random game: its positions (before each move) and its moves as a match records them."""
    position = DuckGame().start_position()
    positions, moves = [], []
    for ply in range(plies):
        legal = position.legal_moves()
        if not legal or position.result() is not None:
            break
        move = rng.choice(legal)
        positions.append(position)
        moves.append(MoveRecord(position.format_move(move), position.pgn_move(move),
                                None if ply < opening else 10))
        position = position.play(move)
    return positions, moves


def _store(path, games: list[tuple], variant: str = "duck") -> None:
    """Games as (moves, result) or (moves, result, termination)."""
    engine = EngineConfig(name="e", command=["e"])
    store = MatchStore(str(path))
    store.bind_settings({"variant": variant})
    for index, (moves, result, *termination) in enumerate(games, 1):
        job = GameJob(index, 1, index, variant, engine, engine, 0, 1, Opening())
        store.add(GameRecord(job, result, "", termination[0] if termination else "normal",
                             moves, START, "", 0, "a", "b"), "pgn")
    store.close()


def test_quiet_positions_are_those_after_two_quiet_moves_past_the_opening(tmp_path):
    rng = random.Random(5)
    games, expected_rows = [], 0
    for result, termination in (("1-0", "normal"), ("0-1", "adjudication"),
                                ("1/2-1/2", "normal"), ("*", "unterminated"),
                                ("1-0", "time forfeit"), ("0-1", "abandoned")):
        positions, moves = _random_game(rng, 80, opening=2)
        games.append((moves, result, termination))
        if termination not in ("normal", "adjudication"):  # not decided on the board: left out
            continue
        # by the notation instead of the board: a capture has an 'x', a promotion an '='
        loud = [("x" in move.san or "=" in move.san) for move in moves]
        expected_rows += sum(1 for ply in range(2 + 3, len(moves))
                             if not loud[ply] and not loud[ply - 1])
    _store(tmp_path / "games.sqlite", games)
    taken = quiet_positions(read_games(str(tmp_path / "games.sqlite")), skip_plies=3)
    assert taken.game_count == 3 and len(taken.results) == expected_rows > 0
    assert set(taken.results.tolist()) == {0.0, 0.5, 1.0}
    # each position's text reads back as the position whose features are its row, as the
    # search's evaluation counts them: the row times the weights is that evaluation for White,
    # with nothing of the terms it leaves off (king exposure's weight is not zero)
    assert evaluation.KING_EXPOSURE != 0 and not DEFAULT_TERMS & TERM_KING_EXPOSURE
    row = np.zeros(evaluation.N_FEATURES, dtype=np.int64)
    weights = evaluation.weight_vector()
    exposures = 0
    for text, features in zip(taken.texts, taken.features, strict=True):
        state = DuckGame().parse_position(text).state.copy()
        evaluation.features(state, row)
        exposures += row[evaluation.F_EXPOSURE] != 0
        row[list(evaluation.WEIGHT_GROUPS["king"])] = 0
        row[list(evaluation.WEIGHT_GROUPS["endgame"])] = 0
        assert row.tolist() == features.tolist()
        for_white = 1 if state[S_SIDE] == 0 else -1
        assert int(features @ weights) == for_white * evaluation.evaluate(state, DEFAULT_TERMS)
    assert exposures > 0  # so the search's view differs from all the features here
    sample = taken.sample(10, seed=4)
    assert len(sample.texts) == 10 and set(sample.texts) <= set(taken.texts)
    index = taken.texts.index(sample.texts[3])
    assert sample.features[3].tolist() == taken.features[index].tolist()
    assert sample.results[3] == taken.results[index] and sample.games[3] == taken.games[index]


def test_the_fit_finds_the_weights_that_made_the_results():
    # results drawn from Texel's model with a knight worth 600 instead of 300, on feature rows
    # with a material imbalance and a few other counts: starting from the engine's weights, the
    # fit must find the knight's worth (relative to the other pieces: the scale K is fitted with
    # the old weights) and lower the error on the held-out games
    rng = np.random.default_rng(11)
    truth = evaluation.weight_vector().astype(np.float64)
    truth[KNIGHT] = 2 * truth[KNIGHT]
    count = 20000
    rows = rng.choice([-1, 0, 1], p=[0.01, 0.98, 0.01], size=(count, evaluation.N_FEATURES))
    rows[:, evaluation.F_MATERIAL:evaluation.F_PLACEMENT] = rng.integers(-1, 2, size=(count, 5))
    expected = 1 / (1 + 10 ** (-1.2 * (rows @ truth) / 400))
    results = (rng.random(count) < expected).astype(np.float64)
    data = Positions(rows, results, np.arange(count) // 10, count // 10)
    start = evaluation.weight_vector()
    fitted = fit(data, start, ridges=(1e-8, 1e-5), validation=0.2, seed=3)
    assert fitted.ridge == 1e-8
    knight, bishop, rook = fitted.weights[KNIGHT:KNIGHT + 3]
    true_bishop, true_rook = truth[KNIGHT] / truth[KNIGHT + 1], truth[KNIGHT] / truth[KNIGHT + 2]
    assert (abs(knight / bishop / true_bishop - 1) < 0.1
            and abs(knight / rook / true_rook - 1) < 0.16)
    assert fitted.after[1] < fitted.before[1] - 0.01
    # the terms the search leaves off (king exposure) keep their weights
    assert fitted.weights[evaluation.F_EXPOSURE] == start[evaluation.F_EXPOSURE]
    # and so do the groups held fixed
    held = fit(data, start, ridges=(1e-8,), validation=0.2, seed=3, fixed=("placement",))
    placement = slice(evaluation.F_PLACEMENT, evaluation.F_MOBILITY)
    assert held.weights[placement].tolist() == start[placement].tolist()
    assert held.weights[KNIGHT] > 1.7 * held.weights[KNIGHT + 1]


def test_the_fit_finds_the_weights_that_made_the_labels():
    # labels that are the expected scores of weights with a knight worth 500, at a given K: the
    # fit to them (not to the results, which say nothing here) finds the knight's worth
    rng = np.random.default_rng(12)
    truth = evaluation.weight_vector().astype(np.float64)
    truth[KNIGHT] = 500
    count = 5000
    rows = np.zeros((count, evaluation.N_FEATURES), dtype=np.int64)
    rows[:, evaluation.F_MATERIAL:evaluation.F_PLACEMENT] = rng.integers(-1, 2, size=(count, 5))
    labels = 1 / (1 + 10 ** (-0.3 * (rows @ truth) / 400))
    data = Positions(rows, np.full(count, 0.5), np.arange(count) // 10, count // 10)
    fitted = fit(data, evaluation.weight_vector(), ridges=(1e-9,), labels=labels, scale=0.3)
    assert fitted.scale == 0.3
    assert abs(fitted.weights[KNIGHT] - 500) <= 5
    assert fitted.after[1] < 1e-5 < fitted.before[1]


def test_a_fit_to_a_stretched_evaluation_says_it_is_a_stretch():
    # labels of the engine's own evaluation made 1.1 times as large, with one change of shape
    # (the knight worth 330 before the stretch): the fit finds 1.1 times the weights, and
    # divided by the factor, the current weights again within 1% (the factor is measured on the
    # whole evaluation, the knight's change in it), the knight's change kept
    rng = np.random.default_rng(5)
    start = evaluation.weight_vector().astype(np.float64)
    shaped = start.copy()
    shaped[KNIGHT] = start[KNIGHT] + 30
    count = 6000
    rows = np.zeros((count, evaluation.N_FEATURES), dtype=np.int64)
    rows[:, evaluation.F_MATERIAL:evaluation.F_PLACEMENT] = rng.integers(-2, 3, size=(count, 5))
    labels = 1 / (1 + 10 ** (-0.3 * (rows @ (1.1 * shaped)) / 400))
    data = Positions(rows, np.full(count, 0.5), np.arange(count) // 10, count // 10)
    fitted = fit(data, start, ridges=(1e-10,), labels=labels, scale=0.3)
    stretch = relative_scale(rows, start, fitted.weights)
    assert abs(stretch - 1.1) < 0.02
    material = fitted.weights[evaluation.F_MATERIAL:evaluation.F_PLACEMENT] / stretch
    assert abs(material[KNIGHT - evaluation.F_MATERIAL] - shaped[KNIGHT]) <= 5
    others = np.delete(material / start[evaluation.F_MATERIAL:evaluation.F_PLACEMENT],
                       KNIGHT - evaluation.F_MATERIAL)
    assert np.all(np.abs(others - 1) <= 0.01)
    assert relative_scale(rows, start, start) == 1.0


def test_labels_mix_the_result_with_the_search_score():
    results = np.array([1.0, 0.0, 0.5, 0.5])
    scores = np.array([0.0, np.nan, 400.0, -400.0])
    # K 1: 400 centipawns expect 1 / (1 + 10^-1) = 10/11
    mixed = mixed_labels(results, scores, 1.0, 0.25)
    assert mixed.tolist() == pytest.approx([0.25 + 0.75 * 0.5, 0.0, 0.125 + 0.75 * 10 / 11,
                                            0.125 + 0.75 / 11])
    assert mixed_labels(results, scores, 1.0, 1.0).tolist() == results.tolist()


def test_search_scores_come_from_a_mallard_process_for_white(tmp_path):
    # the engine's own view of each position (the side to move's) turned to White's: Black
    # without its queen is far behind whoever moves; a king capture is a mate (no label)
    no_queen = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR {} KQkq - 0 1"
    texts = [no_queen.format("w"), no_queen.format("b"), "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
             no_queen.format("w")]
    config = EngineConfig(name="labels",
                          command=[sys.executable, "-m", "mallard.protocol.cli", "uci"],
                          tc=TimeControl().with_limits(nodes=2000))
    known: dict = {}
    scores = search_scores(texts, config, jobs=2, known=known)
    assert scores[0] > 500 and scores[1] > 500 and np.isnan(scores[2])
    assert scores[3] == scores[0] and len(known) == 3
    # what is known is not searched again: an engine that cannot start is not needed
    broken = EngineConfig(name="broken", command=[str(tmp_path / "no-such-engine")],
                          tc=config.tc)
    again = search_scores(texts, broken, known=known)
    assert again[:2].tolist() == scores[:2].tolist()
    with pytest.raises(ValueError, match="labelling engine .*no-such-engine.* failed"):
        search_scores(texts + ["8/8/8/4k3/8/8/8/4K2R w K - 0 1"], broken, known=known)


def test_a_progress_report_that_fails_ends_the_search_with_its_own_error():
    """`mallard tune ... | head -1`: the progress line's BrokenPipeError reaches the caller
    (which ends quietly), not a traceback from the engine's thread and a KeyError after."""
    config = EngineConfig(name="labels",
                          command=[sys.executable, "-m", "mallard.protocol.cli", "uci"],
                          tc=TimeControl().with_limits(nodes=100))

    def closed_pipe(done: int, wanted: int) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        search_scores([START, "4k3/8/8/8/8/8/8/4K2R w K - 0 1"], config, progress=closed_pipe)


def test_scores_files_read_back_and_refuse_a_bad_line(tmp_path):
    path = tmp_path / "scores.txt"
    assert read_scores(str(path)) == {}
    scores = {"4k3/8/8/8/8/8/8/4K2R w K - 0 1": 512.0, START: float("nan")}
    write_scores(str(path), scores)
    again = read_scores(str(path))
    assert again.keys() == scores.keys() and again[START] != again[START]
    assert again["4k3/8/8/8/8/8/8/4K2R w K - 0 1"] == 512.0
    path.write_text(path.read_text() + "no tab here\n")
    with pytest.raises(ValueError, match="line 3 is not 'FEN<tab>score'"):
        read_scores(str(path))


def test_a_scores_file_cut_short_loses_only_its_last_line(tmp_path):
    """A run killed while it appended leaves a last line without its end: it is left out when
    it does not read (and read when it does, as a file written by hand may end)."""
    path = tmp_path / "scores.txt"
    path.write_text(f"{START}\t12.0\n8/8/8/4k3/8/8/8/4K2R w K - 0 1\t")
    assert read_scores(str(path)) == {START: 12.0}
    path.write_text(f"{START}\t12.0\n8/8/8/4k3/8/8/8/4K2R w K - 0 1\t7")
    assert read_scores(str(path)) == {START: 12.0, "8/8/8/4k3/8/8/8/4K2R w K - 0 1": 7.0}


def test_rewritten_weights_read_back(tmp_path):
    copy = tmp_path / "evaluation.py"
    copy.write_text(open(evaluation.__file__).read())
    weights = evaluation.weight_vector()
    weights[KNIGHT] = 333
    weights[evaluation.F_PASSED + 6] = 99
    rewrite_weights(str(copy), weights)
    text = copy.read_text()
    pawn, _, bishop, rook, queen = evaluation.MATERIAL
    assert f"MATERIAL = ({pawn}, 333, {bishop}, {rook}, {queen})" in text
    assert evaluation.weights_source(weights) in text
    assert text.replace(evaluation.weights_source(weights),
                        evaluation.weights_source(evaluation.weight_vector())) == \
        open(evaluation.__file__).read()
    (tmp_path / "other.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="no weights block"):
        rewrite_weights(str(tmp_path / "other.py"), weights)


def test_databases_that_cannot_be_used_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="no match database"):
        read_games(str(tmp_path / "missing.sqlite"))
    (tmp_path / "games.pgn").write_text('[Event "?"]\n')
    with pytest.raises(ValueError, match="'.*games.pgn' is not a match database"):
        read_games(str(tmp_path / "games.pgn"))
    sqlite3.connect(tmp_path / "other.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ValueError, match="not a match database"):
        read_games(str(tmp_path / "other.sqlite"))
    assert (tmp_path / "other.sqlite").read_bytes()  # and left as it was: no tables added
    assert [row[0] for row in sqlite3.connect(tmp_path / "other.sqlite").execute(
        "SELECT name FROM sqlite_master")] == ["t"]
    _, moves = _random_game(random.Random(1), 20, opening=0)
    moves[5] = MoveRecord("e9e4,e4e5", "e4")  # no such square
    _store(tmp_path / "bad.sqlite", [(moves, "1-0")])
    with pytest.raises(ValueError, match="game 1 .* does not replay"):
        quiet_positions(read_games(str(tmp_path / "bad.sqlite")))
    _store(tmp_path / "c4.sqlite", [], variant="cfour")
    with pytest.raises(ValueError, match="cfour, not duck"):
        read_games(str(tmp_path / "c4.sqlite"))


def _mallard(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mallard.protocol.cli", *arguments],
                          capture_output=True, text=True, timeout=300)


def test_the_command_prints_a_block_that_evaluation_py_accepts(tmp_path):
    rng = random.Random(2)
    games = []
    for index in range(12):
        _, moves = _random_game(rng, 60, opening=2)
        games.append((moves, ("1-0", "0-1", "1/2-1/2")[index % 3]))
    _store(tmp_path / "games.sqlite", games)
    done = _mallard("tune", "duck", str(tmp_path / "games.sqlite"), "--ridges", "1e-6")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("12 finished games, ")
    block = done.stdout[done.stdout.index(evaluation.WEIGHTS_BEGIN):]
    names: dict = {}
    exec(block, names)
    assert len(names["PLACEMENT"]) == 6 and len(names["MATERIAL"]) == 5
    copy = tmp_path / "evaluation.py"
    copy.write_text(open(evaluation.__file__).read())
    done = _mallard("tune", "duck", str(tmp_path / "games.sqlite"), "--ridges", "1e-6",
                    "--write", str(copy))
    assert done.returncode == 0 and block in copy.read_text()


def test_the_command_labels_positions_by_search_and_keeps_the_scores(tmp_path):
    rng = random.Random(3)
    games = [(_random_game(rng, 60, opening=2)[1], ("1-0", "0-1")[index % 2])
             for index in range(6)]
    _store(tmp_path / "games.sqlite", games)
    scores = tmp_path / "scores.txt"
    done = _mallard("tune", "duck", str(tmp_path / "games.sqlite"), "--ridges", "1e-6",
                    "--sample", "12", "--label-nodes", "300", "--jobs", "2",
                    "--result-share", "0.25", "--scores", str(scores))
    assert done.returncode == 0, done.stderr
    assert "12 of them taken at random" in done.stdout
    assert "labelled 0.25 result + 0.75 search score (300 nodes)" in done.stdout
    assert len(read_scores(str(scores))) == 12
    assert evaluation.WEIGHTS_BEGIN in done.stdout


def test_a_killed_labelling_run_keeps_every_score_it_searched(tmp_path):
    """Scores go to the file as they come: a run killed (SIGKILL: nothing of it runs after)
    once it said it searched some keeps them, and the next run searches only the others."""
    rng = random.Random(3)
    games = [(_random_game(rng, 60, opening=2)[1], ("1-0", "0-1")[index % 2])
             for index in range(6)]
    _store(tmp_path / "games.sqlite", games)
    scores = tmp_path / "scores.txt"
    scores.write_text(f"{START}\t3.0\n")  # an earlier run's, kept
    run = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "tune", "duck",
                            str(tmp_path / "games.sqlite"), "--sample", "12", "--label-nodes",
                            "20000", "--jobs", "1", "--scores", str(scores)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = 0
        for line in run.stdout:
            if line.startswith("searched "):
                said = int(line.split()[1])
                if said >= 2:
                    break
        run.kill()
        run.wait(30)
    finally:
        run.kill()
    kept = read_scores(str(scores))
    assert said >= 2 and kept[START] == 3.0 and len(kept) >= 1 + said


def test_the_command_checks_its_files_before_the_work(tmp_path):
    rng = random.Random(4)
    _store(tmp_path / "games.sqlite", [(_random_game(rng, 60, opening=2)[1], "1-0")])
    database = str(tmp_path / "games.sqlite")
    done = _mallard("tune", "duck", database, "--write", str(tmp_path / "missing" / "e.py"))
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.startswith("mallard: cannot read '") and done.stderr.count("\n") == 1
    no_block = tmp_path / "e.py"
    no_block.write_text("WEIGHTS = 1\n")
    done = _mallard("tune", "duck", database, "--write", str(no_block))
    assert done.returncode == 2 and done.stdout == "" and "has no weights block" in done.stderr
    done = _mallard("tune", "duck", database, "--labelled-only", "--scores",
                    str(tmp_path / "none.txt"))
    assert done.returncode == 2 and done.stderr == (
        f"mallard: the scores file '{tmp_path / 'none.txt'}' does not exist: --labelled-only "
        "fits the positions it scores\n")


def test_a_fit_without_held_out_games_says_so_instead_of_a_validation_error(tmp_path):
    rng = random.Random(5)
    games = [(_random_game(rng, 60, opening=2)[1], ("1-0", "0-1")[index % 2])
             for index in range(4)]
    _store(tmp_path / "games.sqlite", games)
    done = _mallard("tune", "duck", str(tmp_path / "games.sqlite"), "--ridges", "1e-6")
    assert done.returncode == 0, done.stderr
    assert "no game was held out (--validation 0.1 of these games is none)" in done.stdout
    errors = [line for line in done.stdout.splitlines() if line.startswith(("ridge", "error"))]
    assert len(errors) == 3 and not any("validation" in line for line in errors), errors
    assert "nan" not in done.stdout


def test_the_command_fits_only_the_positions_a_scores_file_holds(tmp_path):
    # three positions scored by hand (another run's labels): exactly they are fitted, none is
    # searched, and a refit from the same file gives the same weights
    rng = random.Random(4)
    games = [(_random_game(rng, 60, opening=2)[1], ("1-0", "0-1")[index % 2])
             for index in range(4)]
    _store(tmp_path / "games.sqlite", games)
    texts = quiet_positions(read_games(str(tmp_path / "games.sqlite"))).texts
    chosen = sorted(set(texts))[:3]
    scores = tmp_path / "scores.txt"
    write_scores(str(scores), {text: 40.0 * number for number, text in enumerate(chosen)})
    before = scores.read_text()
    arguments = ("tune", "duck", str(tmp_path / "games.sqlite"), "--ridges", "1e-6",
                 "--validation", "0", "--scores", str(scores), "--labelled-only",
                 "--result-share", "0")
    done = _mallard(*arguments)
    assert done.returncode == 0, done.stderr
    assert f"{sum(text in chosen for text in texts)} of them scored in {scores}" in done.stdout
    assert f"labelled 0 result + 1 search score (from {scores})" in done.stdout
    assert "searched" not in done.stdout and scores.read_text() == before
    assert _mallard(*arguments).stdout == done.stdout


@pytest.mark.parametrize("arguments, message", [
    (["tune", "duck", "{tmp}/missing.sqlite"], "no match database '{tmp}/missing.sqlite'"),
    (["tune", "duck", "x.sqlite", "--validation", "1"],
     "argument --validation: 1.0 is not below 1"),
    (["tune", "duck", "x.sqlite", "--ridges", "1e-7,nan"],
     "argument --ridges: 'nan' is not a finite"),
    (["tune", "uttt", "x.sqlite"], "invalid choice: 'uttt'"),
    (["tune", "duck", "x.sqlite", "--result-share", "1.5"],
     "argument --result-share: 1.5 is above 1"),
    (["tune", "duck", "x.sqlite", "--fixed", "mobility,queen"],
     "argument --fixed: unknown weight group 'queen' (known: material, placement, mobility"),
    (["tune", "duck", "x.sqlite", "--labelled-only"], "--labelled-only fits the positions"),
    (["tune", "duck", "x.sqlite", "--labelled-only", "--scores", "s.txt", "--label-nodes", "9"],
     "it needs --scores and does not take --label-nodes"),
])
def test_bad_arguments_are_one_line_and_status_2(tmp_path, arguments, message):
    done = _mallard(*(argument.format(tmp=tmp_path) for argument in arguments))
    assert done.returncode == 2 and message.format(tmp=tmp_path) in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 5
