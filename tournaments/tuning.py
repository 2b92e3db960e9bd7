"""Texel tuning: the Duck Chess evaluation weights fitted to the results of match games.

Data: the Duck Chess games of match databases (`mallard match ... -db FILE`) that ended on the
board (not on time or by an engine's failure). From each
game the positions after its opening and SKIP_PLIES more plies are taken where the move played
and the move before it were quiet (no capture, no promotion): positions a quiescence search
would leave alone, so their static evaluation is what the search would use. Label: the game's
result for White (1, 1/2, 0). Whole games, chosen by the seed, are held out for validation.

Model (Texel's): White's expected score is sigmoid(K * eval / 400) with sigmoid(x) =
1 / (1 + 10^-x) and eval = features . weights (`mallard.engines.duck.evaluation`, linear in its
weights). K is fitted first, with the current weights; then the weights of the searched terms
minimise the mean squared error between result and expected score, plus a ridge pull toward the
current weights that keeps rarely seen features where they were (Gauss-Newton steps, exact
for this size). The fit is made with a few strengths of that pull, and the weights kept are those
with the lowest error on the held-out games. The terms the search leaves off are not part of the
model: their features count zero (`quiet_positions`), so that features . weights is the
evaluation the search runs. Their weights stay as they are, as do those of the groups the user
fixes (`--fixed mobility`: the first fit, on games of 1+0.01, gave the queen -13 per square it
reaches and lost 5-38-45 to the old weights; docs/tuner.md).

Labels from search (`search_scores`, `mallard tune duck --label-nodes N`): game results are
weak labels (K is about 0.2 on games of 1+0.01: a position's evaluation predicts little of how
a fast game ends), so a position may also be labelled by what a search of it found. A `mallard`
engine, run as a subprocess over UCI with a node limit, searches each position; its score (for
White, in centipawns) becomes expected(score, K), and the label is
share * result + (1 - share) * that (`mixed_labels`; positions whose search found a mate keep
their result). Fitting the static evaluation to a deeper search's score is what engines' own
tuners and network trainers do; a match then judges the weights either way.

Everything here reads files, runs engine processes, computes and reports: `tune` is the run of
`mallard tune duck`, from the databases to the weights block, reporting each step on the stream
it is given; the command line only parses its arguments.
"""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, TextIO

import numpy as np

from mallard.engines.base import GameError, ScoreKind
from mallard.engines.duck import evaluation
from mallard.engines.duck.board import (
    KIND_EN_PASSANT,
    MOVE_KIND_SHIFT,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
)
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.searcher import DEFAULT_TERMS
from mallard.engines.processes import mallard_command
from mallard.tournaments.players import EngineConfig, EngineError, Player
from mallard.tournaments.records import GameRecord, Termination
from mallard.tournaments.storage import StorageError, check_readable
from mallard.tournaments.timecontrol import Clock, TimeControl

SKIP_PLIES = 8  # after the opening: early positions say little about the result
SQLITE_HEADER = b"SQLite format 3\0"
RESULTS = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}
# games whose result the board decided; a time forfeit or an engine failure says nothing of the
# positions (1+0.01 self-play loses about 7% of its games on time)
BOARD_ENDINGS = (Termination.NORMAL, Termination.ADJUDICATION)


@dataclass
class Positions:
    """Quiet positions: one feature row each, the game's result for White, and its game."""
    features: np.ndarray  # (n, N_FEATURES) int64
    results: np.ndarray   # (n,) float64
    games: np.ndarray     # (n,) int64: the game's number across all databases
    game_count: int
    texts: list[str] = field(default_factory=list)  # each position's FEN text

    def sample(self, count: int, seed: int) -> "Positions":
        """`count` of the positions chosen at random by `seed` (all when there are fewer), in
        their order."""
        if count >= len(self.results):
            return self
        return self.subset(sorted(random.Random(seed).sample(range(len(self.results)), count)))

    def subset(self, chosen: list[int]) -> "Positions":
        """The positions of the given indices, in that order."""
        chosen = np.array(chosen, dtype=np.int64)
        return Positions(self.features[chosen], self.results[chosen], self.games[chosen],
                         self.game_count, [self.texts[i] for i in chosen])


@dataclass
class Fit:
    scale: float                 # K
    weights: np.ndarray          # the fitted weights, rounded to integers
    before: tuple[float, float]  # (training, validation) error with the current weights
    after: tuple[float, float]   # the same with the fitted weights
    ridge: Optional[float]       # the pull toward the current weights that was kept (None:
                                 # no fit did better than the current weights)
    training: int                # positions
    validation: int


def read_games(path: str) -> list[GameRecord]:
    """The games of a match database, opened read-only; a damaged database, a missing file or
    one holding another variant is a ValueError naming the file."""
    if not Path(path).is_file():
        raise ValueError(f"no match database '{path}'")
    with open(path, "rb") as file:
        if file.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise ValueError(f"'{path}' is not a match database (mallard match -db writes them)")
    try:
        db = sqlite3.connect(f"file:{Path(path).absolute()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ValueError(f"cannot open the match database '{path}': {error}") from None
    try:
        check_readable(db, path)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if not {"meta", "games"} <= tables:
            raise ValueError(f"'{path}' is not a match database (mallard match -db writes them)")
        settings = dict(db.execute("SELECT key, value FROM meta")).get("settings")
        variant = json.loads(settings).get("variant") if settings else None
        if variant != "duck":
            raise ValueError(f"'{path}' holds games of {variant or 'an unknown variant'}, "
                             "not duck")
        rows = db.execute("SELECT record FROM games ORDER BY idx").fetchall()
        return [GameRecord.from_dict(json.loads(row[0])) for row in rows]
    except StorageError as error:
        raise ValueError(str(error)) from None
    except sqlite3.Error as error:
        raise ValueError(f"cannot read the match database '{path}': {error}") from None
    finally:
        db.close()


def _is_loud(state: np.ndarray, move: int) -> bool:
    to = (move >> MOVE_TO_SHIFT) & 0x7F
    return bool(state[to] != 0 or (move >> MOVE_PROMO_SHIFT) & 7
                or (move >> MOVE_KIND_SHIFT) & 7 == KIND_EN_PASSANT)


def evaluated_columns(terms: int = DEFAULT_TERMS) -> np.ndarray:
    """The features an evaluation with the term mask counts: material, placement and the
    features of its terms."""
    counted = np.ones(evaluation.N_FEATURES, dtype=bool)
    for term, columns in evaluation.TERM_FEATURES.items():
        if not terms & term:
            counted[list(columns)] = False
    return counted


def quiet_positions(records: list[GameRecord], skip_plies: int = SKIP_PLIES,
                    terms: int = DEFAULT_TERMS) -> Positions:
    """The quiet positions of the finished games (module docstring), with the features the
    evaluation with the term mask counts (those of the other terms are zero: a weight of a term
    the search leaves off, such as king exposure's, must not enter the model)."""
    game = DuckGame()
    rows, results, games, texts = [], [], [], []
    row = np.zeros(evaluation.N_FEATURES, dtype=np.int64)
    counted = 0
    for record in records:
        if record.result not in RESULTS or record.termination not in BOARD_ENDINGS:
            continue
        try:
            position = game.parse_position(record.start_fen)
            opening = sum(1 for move in record.moves if move.time_ms is None)
            previous_loud = True
            for ply, move in enumerate(record.moves):
                code = position.parse_move(move.text)
                loud = _is_loud(position.state, code)
                if ply >= opening + skip_plies and not loud and not previous_loud:
                    evaluation.features(position.state.copy(), row)
                    rows.append(row.copy())
                    results.append(RESULTS[record.result])
                    games.append(counted)
                    texts.append(position.fen())
                previous_loud = loud
                position = position.play(code)
        except GameError as error:
            raise ValueError(f"game {record.index} ({record.white_name} - {record.black_name}) "
                             f"does not replay: {error}") from None
        counted += 1
    features = np.array(rows, dtype=np.int64).reshape(-1, evaluation.N_FEATURES)
    features[:, ~evaluated_columns(terms)] = 0
    return Positions(features, np.array(results), np.array(games, dtype=np.int64), counted,
                     texts)


SEARCH_WAIT_MS = 120_000  # one position's search, however slow the machine: then it has failed


def search_scores(texts: list[str], config: EngineConfig, jobs: int = 1,
                  known: Optional[dict[str, float]] = None,
                  progress: Optional[Callable[[int, int], None]] = None,
                  on_score: Optional[Callable[[str, float], None]] = None) -> np.ndarray:
    """What the engine of `config` (UCI, its limit in `config.tc`: nodes=N) scores each
    position, in centipawns for White; NaN where it reported a mate or no score. `jobs` engine
    processes search at once; scores in `known` (by text) are not searched again, and the new
    ones are added to it and handed to `on_score` as they come (one at a time). An engine that
    fails is a ValueError naming its command."""
    known = {} if known is None else known
    wanted = sorted({text for text in texts if text not in known})
    lock = threading.Lock()
    failures: list[str] = []
    crashes: list[Exception] = []
    done = [0]

    def work(share: list[str]) -> None:
        player = Player.create(config, "duck")
        try:
            player.start()
            player.new_game(None, None)
            for text in share:
                if failures or crashes:
                    return
                white = text.split()[1] == "w"
                clocks = [Clock(config.tc), Clock(config.tc)]
                reply = player.go(text, [], 0 if white else 1, clocks, SEARCH_WAIT_MS)
                score = float("nan")
                if reply.score is not None and reply.score[0] is ScoreKind.CP:
                    score = float(reply.score[1] if white else -reply.score[1])
                with lock:
                    known[text] = score
                    if on_score is not None:
                        try:
                            on_score(text, score)
                        except ValueError as error:  # its file cannot be written: stop
                            failures.append(str(error))
                            return
                    done[0] += 1
                    if progress is not None:
                        progress(done[0], len(wanted))
        except EngineError as error:
            with lock:
                failures.append(f"the labelling engine '{config.command_text}' failed "
                                f"({error})")
        except Exception as error:  # noqa: BLE001 - raised again on the caller's thread
            with lock:
                crashes.append(error)  # a closed stdout's BrokenPipeError from `progress`
        finally:
            player.kill()

    threads = [threading.Thread(target=work, args=(wanted[job::jobs],), daemon=True)
               for job in range(min(max(1, jobs), len(wanted)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if crashes:
        raise crashes[0]
    if failures:
        raise ValueError(failures[0])
    return np.array([known[text] for text in texts], dtype=np.float64)


def mixed_labels(results: np.ndarray, scores: np.ndarray, scale: float,
                 result_share: float) -> np.ndarray:
    """result_share * result + (1 - result_share) * expected(score, K) for each position; the
    result alone where the score is NaN (a mate, or none)."""
    searched = _expected(np.nan_to_num(scores), scale)
    mixed = result_share * results + (1 - result_share) * searched
    return np.where(np.isnan(scores), results, mixed)


def read_scores(path: str) -> dict[str, float]:
    """The search scores a file written by `write_scores` holds (empty when it does not exist);
    a line that does not read is a ValueError naming the file and line, except a last line
    without its line end (a write cut short when the run was killed), which is left out."""
    scores: dict[str, float] = {}
    if not Path(path).exists():
        return scores
    try:
        content = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read the scores file '{path}': {error}") from None
    *ended, unended = content.split("\n")
    for number, line in enumerate(ended, 1):
        try:
            text, score = _score_line(line)
        except ValueError:
            raise ValueError(f"'{path}' line {number} is not 'FEN<tab>score'") from None
        scores[text] = score
    try:
        text, score = _score_line(unended)
        scores[text] = score
    except ValueError:
        pass  # empty, or cut short
    return scores


def _score_line(line: str) -> tuple[str, float]:
    text, _, value = line.rpartition("\t")
    if not text:
        raise ValueError(line)
    return text, float(value)


def write_scores(path: str, scores: dict[str, float]) -> None:
    """One 'FEN<tab>score' line per position (nan for a mate or no score), written beside the
    file and then put in its place, so that the old file stays whole until the new one is."""
    target = Path(path)
    spare = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        spare.write_text("".join(f"{text}\t{value}\n" for text, value in scores.items()))
        os.replace(spare, target)
    except OSError as error:
        spare.unlink(missing_ok=True)
        raise ValueError(f"cannot write the scores file '{path}': {error}") from None


class ScoresAppender:
    """Adds each new score to the scores file the moment it is known, one flushed line each,
    so a run killed at any point keeps what it searched (`read_scores` leaves out a line cut
    short). At the first new score the file is written whole, that score with what it held
    (`write_scores`, which also ends its last line); a run that searches nothing leaves it as
    it was. `known` is the dict `search_scores` adds each score to before handing it here."""

    def __init__(self, path: str, known: dict[str, float]):
        self.path, self.known = path, known
        self.stream = None

    def __call__(self, text: str, score: float) -> None:
        try:
            if self.stream is None:  # `known` holds the new score already
                write_scores(self.path, self.known)
                self.stream = open(self.path, "a")
                return
            self.stream.write(f"{text}\t{score}\n")
            self.stream.flush()
        except OSError as error:
            raise ValueError(f"cannot write the scores file '{self.path}': {error}") from None

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()


def _expected(scores: np.ndarray, scale: float) -> np.ndarray:
    return 1.0 / (1.0 + np.power(10.0, -scale * scores / 400.0))


def error(features: np.ndarray, results: np.ndarray, weights: np.ndarray, scale: float) -> float:
    """Mean squared difference between the results and the expected scores."""
    if len(results) == 0:
        return float("nan")
    scores = features @ np.asarray(weights, dtype=np.float64)
    return float(np.mean((results - _expected(scores, scale)) ** 2))


def fit_scale(features: np.ndarray, results: np.ndarray, weights: np.ndarray) -> float:
    """The K that minimises the error of the given weights (golden-section search)."""
    low, high = 0.05, 5.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a = high - ratio * (high - low)
        b = low + ratio * (high - low)
        if error(features, results, weights, a) < error(features, results, weights, b):
            high = b
        else:
            low = a
    return (low + high) / 2


def relative_scale(features: np.ndarray, start: np.ndarray, weights: np.ndarray) -> float:
    """How many times the current evaluation (features . start) the fitted one (features .
    weights) is over the positions, by least squares. A fit to another engine's or a deeper
    search's scores can lower the error by stretching every weight alike, which changes no
    decision of the search; divided by this factor, what is left is what the fit changed."""
    current = features @ np.asarray(start, dtype=np.float64)
    fitted = features @ np.asarray(weights, dtype=np.float64)
    spread = float(current @ current)
    return float(current @ fitted) / spread if spread > 0 else 1.0


def tuned_columns(terms: int = DEFAULT_TERMS, fixed: tuple[str, ...] = ()) -> np.ndarray:
    """Which weights the fit may move: material, placement and the terms the search uses, less
    the groups named in `fixed` (evaluation.WEIGHT_GROUPS)."""
    free = evaluated_columns(terms)
    for name in fixed:
        if name not in evaluation.WEIGHT_GROUPS:
            raise ValueError(f"unknown weight group '{name}' (known: "
                             f"{', '.join(evaluation.WEIGHT_GROUPS)})")
        free[list(evaluation.WEIGHT_GROUPS[name])] = False
    return free


def _split(positions: Positions, validation: float, seed: int) -> np.ndarray:
    """True for the positions of the held-out games."""
    held = random.Random(seed).sample(range(positions.game_count),
                                      round(positions.game_count * validation))
    return np.isin(positions.games, held)


def _gauss_newton(x: np.ndarray, y: np.ndarray, start: np.ndarray, free: np.ndarray,
                  scale: float, ridge: float, iterations: int) -> np.ndarray:
    """Minimise mean (y - expected)^2 + ridge * |w - start|^2 over the free weights:
    Levenberg-Marquardt steps on the Gauss-Newton approximation (a few dozen unknowns and many
    positions: each step solves the normal equations exactly)."""
    slope_of_score = math.log(10) * scale / 400

    def objective(weights):
        return error(x, y, weights, scale) + ridge * float(np.sum((weights - start) ** 2))

    weights, damping = start.copy(), 1e-3
    current = objective(weights)
    columns = np.flatnonzero(free)
    for _ in range(iterations):
        expected = _expected(x @ weights, scale)
        slope = expected * (1 - expected) * slope_of_score  # d expected / d score
        jacobian = x[:, columns] * slope[:, None]
        normal = jacobian.T @ jacobian / len(y) + ridge * np.eye(len(columns))
        right = jacobian.T @ (y - expected) / len(y) - ridge * (weights - start)[columns]
        improved = False
        while damping < 1e6:
            damped = normal + damping * np.diag(np.diag(normal) + 1e-12)
            trial = weights.copy()
            trial[columns] += np.linalg.lstsq(damped, right, rcond=None)[0]
            value = objective(trial)
            if value < current:
                weights, current, damping, improved = trial, value, damping / 3, True
                break
            damping *= 4
        if not improved or damping < 1e-12:
            break
    return weights


def fit(positions: Positions, start: np.ndarray, *, ridges=(1e-8, 1e-7, 1e-6, 1e-5),
        iterations: int = 12, validation: float = 0.1, seed: int = 1,
        terms: int = DEFAULT_TERMS, fixed: tuple[str, ...] = (),
        labels: Optional[np.ndarray] = None, scale: Optional[float] = None,
        progress: Optional[Callable[[float, float, Optional[float]], None]] = None) -> Fit:
    """Weights fitted to the positions, starting from (and pulled toward) `start`; of the ridge
    strengths given, the one whose weights do best on the held-out games is kept. `labels`
    (default: the results) are what the expected scores are fitted to; `scale` is K (default:
    fitted to the results with `start`)."""
    held = _split(positions, validation, seed)
    x = positions.features.astype(np.float64)
    y = positions.results if labels is None else np.asarray(labels, dtype=np.float64)
    train_x, train_y = x[~held], y[~held]
    valid_x, valid_y = x[held], y[held]
    if len(train_y) == 0:
        raise ValueError("no quiet positions to fit: the databases hold no finished duck game "
                         "long enough")
    start = np.asarray(start, dtype=np.float64)
    if scale is None:
        scale = fit_scale(train_x, positions.results[~held], start)
    free = tuned_columns(terms, fixed)
    watch_x, watch_y = (valid_x, valid_y) if len(valid_y) else (train_x, train_y)
    best, best_error, best_ridge = start, error(watch_x, watch_y, start, scale), None
    for ridge in ridges:
        weights = np.round(_gauss_newton(train_x, train_y, start, free, scale, ridge, iterations))
        watched = error(watch_x, watch_y, weights, scale)
        if progress is not None:
            progress(ridge, error(train_x, train_y, weights, scale),
                     watched if len(valid_y) else None)
        if watched < best_error:
            best, best_error, best_ridge = weights, watched, ridge
    best = best.astype(np.int64)
    return Fit(scale=scale, weights=best,
               before=(error(train_x, train_y, start, scale),
                       error(valid_x, valid_y, start, scale)),
               after=(error(train_x, train_y, best, scale), error(valid_x, valid_y, best, scale)),
               ridge=best_ridge, training=len(train_y), validation=len(valid_y))


def weights_block_of(path: str) -> tuple[list[str], tuple[int, int]]:
    """The lines of a copy of engines/duck/evaluation.py and where its weights block begins and
    ends; ValueError naming the file when it cannot be read or has no block."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read '{path}': {error}") from None
    lines = text.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines)
             if line.rstrip("\n") in (evaluation.WEIGHTS_BEGIN, evaluation.WEIGHTS_END)]
    if len(marks) != 2 or lines[marks[0]].rstrip("\n") != evaluation.WEIGHTS_BEGIN:
        raise ValueError(f"'{path}' has no weights block (the lines '{evaluation.WEIGHTS_BEGIN}' "
                         f"and '{evaluation.WEIGHTS_END}')")
    return lines, (marks[0], marks[1])


def rewrite_weights(path: str, weights: np.ndarray) -> None:
    """Replace the weights block of a copy of engines/duck/evaluation.py with `weights`."""
    lines, (begin, end) = weights_block_of(path)
    block = evaluation.weights_source(weights)
    try:
        Path(path).write_text("".join(lines[:begin]) + block + "".join(lines[end + 1:]))
    except OSError as error:
        raise ValueError(f"cannot write '{path}': {error}") from None


# --- `mallard tune duck`: the run, reported line by line --------------------------------------

def tune(databases: list[str], out: TextIO, *, skip_plies: int, labelled_only: bool,
         scores_file: Optional[str], sample: int, seed: int, label_nodes: int,
         result_share: float, jobs: int, ridges, validation: float, fixed: tuple[str, ...],
         write: Optional[str]) -> int:
    """`mallard tune duck`: the quiet positions of the `databases`' games (`sample` of them
    when not 0; with `labelled_only`, those `scores_file` holds), labelled by their results
    or also by search (`label_nodes`, `search_labels`), fitted; the fit is reported on `out`,
    and the new weights block printed there or written into `write`."""
    if write:
        weights_block_of(write)  # a file that cannot take the block is said before the fit
    if labelled_only and not Path(scores_file).is_file():
        raise ValueError(f"the scores file '{scores_file}' does not exist: --labelled-only "
                         "fits the positions it scores")
    records = [record for path in databases for record in read_games(path)]
    positions = quiet_positions(records, skip_plies)
    print(f"{positions.game_count} finished games, {len(positions.results)} quiet positions",
          file=out, flush=True)
    if labelled_only:
        known = read_scores(scores_file)
        positions = positions.subset([index for index, text in enumerate(positions.texts)
                                      if text in known])
        print(f"{len(positions.results)} of them scored in {scores_file}", file=out, flush=True)
    if sample:
        positions = positions.sample(sample, seed)
        print(f"{len(positions.results)} of them taken at random", file=out, flush=True)
    start = evaluation.weight_vector()
    labels = scale = None
    if label_nodes or labelled_only:
        labels, scale = search_labels(positions, start, label_nodes, scores_file, jobs,
                                      result_share, out)

    def progress(ridge: float, training: float, validated: Optional[float]) -> None:
        print(f"ridge {ridge:g}: error {training:.6f} training"
              + ("" if validated is None else f", {validated:.6f} validation"),
              file=out, flush=True)

    result = fit(positions, start, ridges=ridges, validation=validation, seed=seed, fixed=fixed,
                 labels=labels, scale=scale, progress=progress)
    print(f"K {result.scale:.4f}; positions: {result.training} training, "
          f"{result.validation} validation (whole games)", file=out)
    if not result.validation:
        print(f"no game was held out (--validation {validation:g} of these games is none): "
              "the ridge was chosen on the training positions", file=out)

    def errors(pair: tuple[float, float]) -> str:
        return f"{pair[0]:.6f} training" + (f", {pair[1]:.6f} validation"
                                             if result.validation else "")

    print(f"error before {errors(result.before)}", file=out)
    kept = "none did better: the weights stay" if result.ridge is None else \
        f"kept ridge {result.ridge:g}"
    print(f"error after  {errors(result.after)} ({kept})", file=out)
    moved = np.flatnonzero(result.weights != start)
    material = slice(evaluation.F_MATERIAL, evaluation.F_PLACEMENT)
    print(f"{len(moved)} of {len(start)} weights changed; "
          f"material {start[material].tolist()} -> {result.weights[material].tolist()}",
          file=out)
    stretch = relative_scale(positions.features, start, result.weights)
    print(f"the fitted evaluation is {stretch:.3f} times the current one on these positions; "
          f"divided by that, material "
          f"{np.round(result.weights[material] / stretch).astype(int).tolist()}", file=out)
    if write:
        try:
            rewrite_weights(write, result.weights)
        except ValueError:  # changed since the start: the fit is not lost, it is printed
            print(evaluation.weights_source(result.weights), end="", file=out)
            raise
        print(f"wrote the weights into {write}", file=out)
    else:
        print(evaluation.weights_source(result.weights), end="", file=out)
    return 0


def search_labels(positions: Positions, start: np.ndarray, label_nodes: int,
                  scores_file: Optional[str], jobs: int, result_share: float,
                  out: TextIO) -> tuple[np.ndarray, float]:
    """(labels, K) for `mallard tune duck --label-nodes N`: this mallard, as a UCI subprocess,
    searches each position (`search_scores`) that the `scores_file` does not already score
    (with --labelled-only, the file scores them all); progress is reported on `out`."""
    # with --labelled-only every position is in FILE and the engine is never started
    config = EngineConfig(name="labels", command=mallard_command("uci"),
                          tc=TimeControl().with_limits(nodes=label_nodes or 1))
    known = read_scores(scores_file) if scores_file else {}
    step = max(1, len(positions.texts) // 20)

    def progress(done: int, wanted: int) -> None:
        if done % step == 0 or done == wanted:
            print(f"searched {done} of {wanted} positions", file=out, flush=True)

    appender = ScoresAppender(scores_file, known) if scores_file else None
    try:
        scores = search_scores(positions.texts, config, jobs, known, progress, appender)
    finally:
        if appender is not None:
            appender.close()
    scale = fit_scale(positions.features.astype(float), positions.results, start)
    searched = int(np.count_nonzero(~np.isnan(scores)))
    nodes = f"{label_nodes} nodes" if label_nodes else f"from {scores_file}"
    print(f"K {scale:.4f}; {searched} positions labelled {result_share:g} result + "
          f"{1 - result_share:g} search score ({nodes})", file=out, flush=True)
    return mixed_labels(positions.results, scores, scale, result_share), scale
