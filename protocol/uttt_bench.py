"""`mallard bench uttt`: Ultimate Tic-Tac-Toe perft speed and df-pn prover tables (markdown).

Three tables, every random position drawn from `random.Random(seed)` so a run is repeatable:
1. perft from the start (depths 5-7) and from the reference mid-game position (depths 4-7):
   leaves, seconds, leaves/s; rows with a reference count say whether it matched.
2. the prover with and without the critical-board analysis on a fixed set: the three proven
   positions of the reference page and `positions` random late positions (random moves from the
   start until at most LATE_OPEN_CELLS open cells remain, games that end first are redrawn):
   value, nodes, seconds, nodes/s and proof size for each setting, and the node ratio.
3. how far from the end the prover solves: for k = 10, 12, ... random complete games are played
   (`positions` per row, the same games in every row) and stepped back k plies; the fraction
   solved within `limit` seconds (critical analysis on). Rows stop at k = 40, after a row that
   solves nothing, or after two rows in a row that solve at most a quarter.

Every solve starts from an empty table (64 MB); nodes/s is measured on the searches alone (the
proof walk afterwards is not timed in it). Time limits cover both runs of a solve.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from datetime import date
from typing import TextIO

import numpy as np

from engines.uttt import kernels as K
from engines.uttt.board import RESULT_NONE, S_RESULT
from engines.uttt.prover import Prover
from engines.uttt.rules import UtttGame, UtttPosition

PERFT_ROWS = [
    # (label, position text or None for the start, depth, reference leaves or None)
    ("start", None, 5, 473_256),
    ("start", None, 6, 4_020_960),
    ("start", None, 7, 33_782_544),
    ("mid-game", "X;...@.....;.XO....../...O....O/...X..X.X/...O.X.O./.......O./..O....../"
     "O.O....../.X.XX..../X.....XO.", 4, 2037),
    ("mid-game", "X;...@.....;.XO....../...O....O/...X..X.X/...O.X.O./.......O./..O....../"
     "O.O....../.X.XX..../X.....XO.", 6, None),
    ("mid-game", "X;...@.....;.XO....../...O....O/...X..X.X/...O.X.O./.......O./..O....../"
     "O.O....../.X.XX..../X.....XO.", 7, None),
]

REFERENCE_PROVEN = [
    ("ref 1", "O;OX..@XXX.;X.OOO.OO./XO.X.OXO./X.XXX.O.O/XXOOXOO../OXOOXO.O./XXX....O./X.OX..X.O/"
     "XO.XXX.../.O.....XX", "X wins"),
    ("ref 2", "X;OXO..X@XX;XOOOOO.O./XXXXOO.OO/X.X...OOO/XX.OXO.../OXOOX..O./XXX....O./.O..X.X.O/"
     "XO.XXX.../.O....XXX", "X wins"),
    ("ref 3", "X;O..XOX@X.;X.OOO.OO./XO.XXOOO./X.X..OO.O/.X.OXO.X./OXOOX.O../XXX....O./.XX...XX./"
     "XO.XXXOO./OO.....XX", "O wins"),
]

LATE_OPEN_CELLS = 38
FIRST_PLIES_BEFORE_END = 10
PLIES_STEP = 2
MAX_PLIES_BEFORE_END = 40
HASH_MB = 64


def random_late_state(rng: random.Random, open_cells: int) -> np.ndarray:
    """Random moves from the start until at most `open_cells` open cells remain (redrawn when
    the game ends first)."""
    game = UtttGame()
    moves = np.zeros(81, dtype=np.int64)
    while True:
        state = game.start_position().state.copy()
        while state[S_RESULT] == RESULT_NONE and K.count_open_cells(state) > open_cells:
            count = K.generate_moves(state, moves)
            K.make_move(state, int(moves[rng.randrange(count)]))
        if state[S_RESULT] == RESULT_NONE:
            return state


def random_game(rng: random.Random) -> list[np.ndarray]:
    """The states of one random game, from the start to the finished position."""
    game = UtttGame()
    moves = np.zeros(81, dtype=np.int64)
    state = game.start_position().state.copy()
    states = [state.copy()]
    while state[S_RESULT] == RESULT_NONE:
        count = K.generate_moves(state, moves)
        K.make_move(state, int(moves[rng.randrange(count)]))
        states.append(state.copy())
    return states


def _header(title: str, out: TextIO) -> None:
    out.write(f"# {title}\n")
    out.write(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, {date.today().isoformat()}\n")


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _table_start(header, out: TextIO) -> None:
    out.write(_row(header) + "\n" + "|" + "|".join("---" for _ in header) + "|\n")


def _rate(count: float, seconds: float, unit: float) -> str:
    return f"{count / seconds / unit:,.1f}" if seconds > 0 else "-"


def bench_perft(out: TextIO) -> int:
    game = UtttGame()
    game.start_position().perft(2)  # compile (or load the numba cache) outside the timings
    _header("mallard bench uttt: perft (finished games are leaves; the last ply is counted)", out)
    _table_start(["position", "depth", "leaves", "correct", "seconds", "Mleaves/s"], out)
    failures = 0
    for label, text, depth, expected in PERFT_ROWS:
        position = game.parse_position(text) if text else game.start_position()
        started = time.perf_counter()
        leaves = position.perft(depth)
        seconds = time.perf_counter() - started
        if expected is None:
            verdict = "-"
        else:
            verdict = "yes" if leaves == expected else f"NO ({expected:,})"
            failures += leaves != expected
        out.write(_row([label, str(depth), f"{leaves:,}", verdict, f"{seconds:.3f}",
                        _rate(leaves, seconds, 1e6)]) + "\n")
        out.flush()
    return failures


def _warm_up(provers) -> None:
    game = UtttGame()
    position = UtttPosition(game, random_late_state(random.Random(0), 24))
    for prover in provers:
        prover.solve(position, time_limit=5)


def bench_prover_set(positions: int, limit: float, seed: int, out: TextIO) -> int:
    game = UtttGame()
    rng = random.Random(seed)
    entries = [(label, game.parse_position(text), expected)
               for label, text, expected in REFERENCE_PROVEN]
    for index in range(positions):
        state = random_late_state(rng, LATE_OPEN_CELLS)
        entries.append((f"late {index + 1}", UtttPosition(game, state), None))
    with_critical = Prover(HASH_MB, critical=True)
    without = Prover(HASH_MB, critical=False)
    _warm_up([with_critical, without])
    out.write("\n")
    _header(f"mallard bench uttt: df-pn with / without the critical-board analysis; "
            f"{positions} random positions with <= {LATE_OPEN_CELLS} open cells (seed {seed}), "
            f"limit {limit:g} s per solve, fresh {HASH_MB} MB table", out)
    header = ["position", "open", "value", "crit nodes", "crit s", "crit knodes/s",
              "crit proof", "plain nodes", "plain s", "plain knodes/s", "plain proof",
              "node ratio"]
    _table_start(header, out)
    failures = 0
    totals = {True: [0, 0.0], False: [0, 0.0]}
    for label, position, expected in entries:
        cells = [label, str(int(K.count_open_cells(position.state)))]
        outcomes = {}
        for critical, prover in ((True, with_critical), (False, without)):
            outcomes[critical] = prover.solve(position, time_limit=limit)
        texts = {outcome.text for outcome in outcomes.values() if outcome.value is not None}
        if len(texts) > 1 or (expected is not None and any(
                outcome.text not in (expected, "unknown") for outcome in outcomes.values())):
            failures += 1
            cells.append("DISAGREE " + "/".join(o.text for o in outcomes.values()))
        else:
            cells.append(texts.pop() if texts else "unknown")
        for critical in (True, False):
            outcome = outcomes[critical]
            nodes = f"{outcome.nodes:,}" + ("" if outcome.value is not None else " (limit)")
            proof = f"{outcome.proof_size:,}" if outcome.proof_size >= 0 else "-"
            cells += [nodes, f"{outcome.search_seconds:.3f}",
                      _rate(outcome.nodes, outcome.search_seconds, 1e3), proof]
            totals[critical][0] += outcome.nodes
            totals[critical][1] += outcome.search_seconds
        both = all(outcome.value is not None for outcome in outcomes.values())
        cells.append(f"{outcomes[False].nodes / max(1, outcomes[True].nodes):.2f}"
                     if both else "-")
        out.write(_row(cells) + "\n")
        out.flush()
    cells = ["total", "", ""]
    for critical in (True, False):
        nodes, seconds = totals[critical]
        cells += [f"{nodes:,}", f"{seconds:.2f}", _rate(nodes, seconds, 1e3), ""]
    cells.append(f"{totals[False][0] / max(1, totals[True][0]):.2f}")
    out.write(_row(cells) + "\n")
    return failures


def bench_plies_before_end(positions: int, limit: float, seed: int, out: TextIO) -> int:
    rng = random.Random(seed + 1)
    games = [random_game(rng) for _ in range(positions)]
    prover = Prover(HASH_MB, critical=True)
    game = UtttGame()
    out.write("\n")
    _header(f"mallard bench uttt: positions k plies before the end of {positions} random games "
            f"(seed {seed}), solved within {limit:g} s? (critical analysis on)", out)
    header = ["k", "positions", "solved", "fraction", "X wins", "draws", "O wins",
              "median s (solved)", "max s (solved)", "mean open cells"]
    _table_start(header, out)
    plies = FIRST_PLIES_BEFORE_END
    weak_rows = 0
    while plies <= MAX_PLIES_BEFORE_END:
        samples = [states[-1 - plies] for states in games if len(states) > plies]
        if not samples:
            break
        solved_times, texts, open_cells = [], [], []
        for state in samples:
            open_cells.append(int(K.count_open_cells(state)))
            outcome = prover.solve(UtttPosition(game, state), time_limit=limit, details=False)
            if outcome.value is not None:
                solved_times.append(outcome.search_seconds)
                texts.append(outcome.text)
        solved = len(solved_times)
        out.write(_row([
            str(plies), str(len(samples)), str(solved), f"{solved / len(samples):.2f}",
            str(texts.count("X wins")), str(texts.count("draw")), str(texts.count("O wins")),
            f"{statistics.median(solved_times):.2f}" if solved_times else "-",
            f"{max(solved_times):.2f}" if solved_times else "-",
            f"{statistics.mean(open_cells):.1f}"]) + "\n")
        out.flush()
        # stop where the prover has run out of reach: nothing solved, or two rows in a row at
        # or below a quarter (each unsolved position costs the whole limit)
        weak_rows = weak_rows + 1 if solved * 4 <= len(samples) else 0
        if solved == 0 or weak_rows >= 2:
            break
        plies += PLIES_STEP
    return 0


def bench_uttt(positions: int = 5, limit: float = 10.0, seed: int = 1,
               out: TextIO = sys.stdout) -> int:
    failures = bench_perft(out)
    failures += bench_prover_set(positions, limit, seed, out)
    bench_plies_before_end(positions, limit, seed, out)
    return 1 if failures else 0


__all__ = ["bench_uttt", "random_late_state", "random_game"]
