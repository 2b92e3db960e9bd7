"""Ultimate Tic-Tac-Toe benchmarks (`mallard bench uttt`), computed and written as compact
Markdown tables here, and the game's bench signature. Every random position is drawn from
`random.Random(seed)`, so a run is repeatable.

1. Perft (`time_perfts`): from the start (depths 5-7) and from the reference mid-game position
   (depths 4-7); rows with a reference count say whether it matched.
2. The prover with and without the critical-board analysis (`compare_prover`) on the three
   proven positions of the reference page and `positions` random late positions (random moves
   from the start until at most LATE_OPEN_CELLS open cells remain; games that end first are
   redrawn).
3. How far from the end the prover solves (`plies_before_end`): for k = 10, 12, ... random
   complete games (the same games in every row) stepped back k plies, each solved within a time
   limit (critical analysis on). Rows stop at k = 40, after a row that solves nothing, or after
   two rows in a row that solve at most a quarter.
4. The prover with 1 and N threads (`prover_threads`): the same games stepped back
   THREADS_PLIES plies (positions the prover solves in a fraction of a second to seconds).

Every solve starts from an empty table (64 MB). `bench_uttt` writes the tables, in this
order and each row as soon as it is known, to the stream the caller passes. `SIGNATURE` holds
positions with more than the searcher's `PROVER_MAX_OPEN` open cells: a depth-limited search asks
the prover for a slice of time only in later positions, and a time slice would make the node count
depend on the machine.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, TextIO

from mallard.engines import bench
from mallard.engines.bench import BenchSignature, PerftRow, PerftTiming, machine_line, rate
from mallard.engines.uttt.prover import ProofOutcome, Prover
from mallard.engines.uttt.rules import UtttGame, UtttPosition

MID_GAME = ("X;...@.....;.XO....../...O....O/...X..X.X/...O.X.O./.......O./..O....../"
            "O.O....../.X.XX..../X.....XO.")


PERFT_ROWS = (
    PerftRow("start", None, 5, 473_256),
    PerftRow("start", None, 6, 4_020_960),
    PerftRow("start", None, 7, 33_782_544),
    PerftRow("mid-game", MID_GAME, 4, 2037),
    PerftRow("mid-game", MID_GAME, 6, None),
    PerftRow("mid-game", MID_GAME, 7, None),
)

REFERENCE_PROVEN = (
    ("ref 1", "O;OX..@XXX.;X.OOO.OO./XO.X.OXO./X.XXX.O.O/XXOOXOO../OXOOXO.O./XXX....O./X.OX..X.O/"
     "XO.XXX.../.O.....XX", "X wins"),
    ("ref 2", "X;OXO..X@XX;XOOOOO.O./XXXXOO.OO/X.X...OOO/XX.OXO.../OXOOX..O./XXX....O./.O..X.X.O/"
     "XO.XXX.../.O....XXX", "X wins"),
    ("ref 3", "X;O..XOX@X.;X.OOO.OO./XO.XXOOO./X.X..OO.O/.X.OXO.X./OXOOX.O../XXX....O./.XX...XX./"
     "XO.XXXOO./OO.....XX", "O wins"),
)

LATE_OPEN_CELLS = 38
FIRST_PLIES_BEFORE_END = 10
PLIES_STEP = 2
MAX_PLIES_BEFORE_END = 40
HASH_MB = 64

# The start and six positions after random moves (4 to 16 plies), each with more than 60 open
# cells: about seven million nodes at depth 12, three or four seconds.
SIGNATURE_POSITIONS = (
    "X;.........;........./........./........./........./........./........./........./"
    "........./.........",
    "X;.@.......;........./....X...X/........./........./.O......./........./........./"
    "........./.O.......",
    "X;.@.......;.......O./.......X./........./.O......./........./........./...X...../"
    "XO......X/......O..",
    "X;@........;O......O./.....O.../........./.X......./...O..O../X...X..../X......../"
    "....X..../.........",
    "X;...O....@;...X.O.O./........./........./......OOO/........./...X...../X......../"
    "...X....X/X.......O",
    "X;.....@...;......O../..X....../X....O.../...X.X..O/........./...O...../........X/"
    "..OO...X./.O.....X.",
    "X;.......@.;.......X./......X../........./....O..O./....X.X.O/........X/...X.O..O/"
    "O...O..../...X..OX.",
)
SIGNATURE = BenchSignature(SIGNATURE_POSITIONS, 12, (("Hash", str(HASH_MB)),))


# --- random positions -------------------------------------------------------------------------

def open_cells(position: UtttPosition) -> int:
    """Empty cells of the boards still open (won and drawn boards are closed)."""
    return sum(1 for board in range(9) if position.board_status(board) == "."
               for cell in range(9) if position.cell(board, cell) is None)


def random_late_position(rng: random.Random, most_open: int) -> UtttPosition:
    """Random moves from the start until at most `most_open` open cells remain (redrawn when
    the game ends first)."""
    game = UtttGame()
    while True:
        position = game.start_position()
        while position.result() is None and open_cells(position) > most_open:
            moves = position.legal_moves()
            position = position.play(moves[rng.randrange(len(moves))])
        if position.result() is None:
            return position


def random_game(rng: random.Random) -> list[UtttPosition]:
    """The positions of one random game, from the start to the finished position."""
    position = UtttGame().start_position()
    positions = [position]
    while position.result() is None:
        moves = position.legal_moves()
        position = position.play(moves[rng.randrange(len(moves))])
        positions.append(position)
    return positions


# --- perft ------------------------------------------------------------------------------------

def time_perfts(rows: Iterable[PerftRow] = PERFT_ROWS) -> Iterator[PerftTiming]:
    """Each row's perft (finished games are leaves; the last ply is counted), timed."""
    return bench.time_perfts(UtttGame(), rows)


# --- the prover with and without the critical-board analysis ----------------------------------

@dataclass(frozen=True)
class ProverComparison:
    """One position solved by both provers; `expected` is the reference value, if any."""

    label: str
    open_cells: int
    expected: Optional[str]
    critical: ProofOutcome
    plain: ProofOutcome

    @property
    def outcomes(self) -> tuple[ProofOutcome, ProofOutcome]:
        return self.critical, self.plain

    @property
    def agree(self) -> bool:
        """Both proven values are equal and none contradicts the reference."""
        texts = {outcome.text for outcome in self.outcomes if outcome.value is not None}
        return len(texts) <= 1 and (self.expected is None or all(
            outcome.text in (self.expected, "unknown") for outcome in self.outcomes))

    @property
    def value(self) -> str:
        """The proven value ("X wins", "draw", "O wins"), "unknown" when neither proved one."""
        texts = [outcome.text for outcome in self.outcomes if outcome.value is not None]
        return texts[0] if texts else "unknown"


def _warm_up(provers: Iterable[Prover]) -> None:
    position = random_late_position(random.Random(0), 24)
    for prover in provers:
        prover.solve(position, time_limit=5)


def compare_prover(positions: int, limit: float, seed: int) -> Iterator[ProverComparison]:
    """The reference positions, then `positions` random late ones, each solved within `limit`
    seconds with and without the critical-board analysis."""
    game = UtttGame()
    rng = random.Random(seed)
    entries = [(label, game.parse_position(text), expected)
               for label, text, expected in REFERENCE_PROVEN]
    for index in range(positions):
        entries.append((f"late {index + 1}", random_late_position(rng, LATE_OPEN_CELLS), None))
    with_critical = Prover(HASH_MB, critical=True)
    without = Prover(HASH_MB, critical=False)
    _warm_up([with_critical, without])
    for label, position, expected in entries:
        critical = with_critical.solve(position, time_limit=limit)
        plain = without.solve(position, time_limit=limit)
        yield ProverComparison(label, open_cells(position), expected, critical, plain)


# --- how far from the end the prover solves ---------------------------------------------------

@dataclass(frozen=True)
class PliesBeforeEnd:
    """The positions `plies` before the end of the random games: the values proven ("X wins",
    "draw", "O wins"), the search time of each proof, the open cells of every position."""

    plies: int
    positions: int
    values: list[str]
    seconds: list[float]
    open_cells: list[int]

    @property
    def solved(self) -> int:
        return len(self.values)


def plies_before_end(positions: int, limit: float, seed: int) -> Iterator[PliesBeforeEnd]:
    """One row per k (see the module docstring), until the prover has run out of reach."""
    rng = random.Random(seed + 1)
    games = [random_game(rng) for _ in range(positions)]
    prover = Prover(HASH_MB, critical=True)
    plies = FIRST_PLIES_BEFORE_END
    weak_rows = 0
    while plies <= MAX_PLIES_BEFORE_END:
        samples = [game[-1 - plies] for game in games if len(game) > plies]
        if not samples:
            break
        values, seconds, cells = [], [], []
        for position in samples:
            cells.append(open_cells(position))
            outcome = prover.solve(position, time_limit=limit, details=False)
            if outcome.value is not None:
                seconds.append(outcome.search_seconds)
                values.append(outcome.text)
        row = PliesBeforeEnd(plies, len(samples), values, seconds, cells)
        yield row
        # stop where the prover has run out of reach: nothing solved, or two rows in a row at
        # or below a quarter (each unsolved position costs the whole limit)
        weak_rows = weak_rows + 1 if row.solved * 4 <= row.positions else 0
        if row.solved == 0 or weak_rows >= 2:
            break
        plies += PLIES_STEP


# --- the prover with more threads -------------------------------------------------------------

THREADS_PLIES = (22, 24, 26)


@dataclass(frozen=True)
class ThreadsComparison:
    """One position solved with one thread (`single`) and with several (`parallel`)."""

    plies: int
    game: int
    open_cells: int
    single: ProofOutcome
    parallel: ProofOutcome

    @property
    def agree(self) -> bool:
        return self.single.value is None or self.parallel.value is None or \
            self.single.value == self.parallel.value


def prover_threads(positions: int, limit: float, seed: int,
                   threads: int) -> Iterator[ThreadsComparison]:
    """The positions THREADS_PLIES plies before the end of `plies_before_end`'s games, each
    solved within `limit` seconds with 1 thread and with `threads` (fresh table each)."""
    rng = random.Random(seed + 1)
    games = [random_game(rng) for _ in range(positions)]
    single, parallel = Prover(HASH_MB), Prover(HASH_MB, threads=threads)
    _warm_up([single, parallel])
    for plies in THREADS_PLIES:
        for index, game in enumerate(games):
            if len(game) > plies:
                position = game[-1 - plies]
                yield ThreadsComparison(
                    plies, index + 1, open_cells(position),
                    single.solve(position, time_limit=limit, details=False),
                    parallel.solve(position, time_limit=limit, details=False))


# --- the tables -----------------------------------------------------------------------------

def _header(title: str, out: TextIO) -> None:
    out.write(f"# {title}\n")
    out.write(machine_line())


def _compact_row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _compact_table_start(header, out: TextIO) -> None:
    out.write(_compact_row(header) + "\n" + "|" + "|".join("---" for _ in header) + "|\n")


def _perft_table(out: TextIO) -> int:
    timings = time_perfts()
    _header("mallard bench uttt: perft (finished games are leaves; the last ply is counted)",
            out)
    _compact_table_start(["position", "depth", "leaves", "correct", "seconds", "Mleaves/s"], out)
    failures = 0
    for timing in timings:
        row = timing.row
        if timing.correct is None:
            verdict = "-"
        else:
            verdict = "yes" if timing.correct else f"NO ({row.expected:,})"
            failures += not timing.correct
        out.write(_compact_row([row.label, str(row.depth), f"{timing.leaves:,}", verdict,
                                f"{timing.seconds:.3f}",
                                rate(timing.leaves, timing.seconds, 1e6)]) + "\n")
        out.flush()
    return failures


def _prover_table(positions: int, limit: float, seed: int, out: TextIO) -> int:
    comparisons = compare_prover(positions, limit, seed)
    out.write("\n")
    _header(f"mallard bench uttt: df-pn with / without the critical-board analysis; "
            f"{positions} random positions with <= {LATE_OPEN_CELLS} open cells "
            f"(seed {seed}), limit {limit:g} s per solve, fresh {HASH_MB} MB "
            "table", out)
    header = ["position", "open", "value", "crit nodes", "crit s", "crit knodes/s",
              "crit proof", "plain nodes", "plain s", "plain knodes/s", "plain proof",
              "node ratio"]
    _compact_table_start(header, out)
    failures = 0
    totals = [[0, 0.0], [0, 0.0]]  # (nodes, seconds) with and without the critical analysis
    for comparison in comparisons:
        cells = [comparison.label, str(comparison.open_cells)]
        if comparison.agree:
            cells.append(comparison.value)
        else:
            failures += 1
            cells.append("DISAGREE " + "/".join(o.text for o in comparison.outcomes))
        for total, outcome in zip(totals, comparison.outcomes):
            nodes = f"{outcome.nodes:,}" + ("" if outcome.value is not None else " (limit)")
            proof = f"{outcome.proof_size:,}" if outcome.proof_size >= 0 else "-"
            cells += [nodes, f"{outcome.search_seconds:.3f}",
                      rate(outcome.nodes, outcome.search_seconds, 1e3), proof]
            total[0] += outcome.nodes
            total[1] += outcome.search_seconds
        both = all(outcome.value is not None for outcome in comparison.outcomes)
        cells.append(f"{comparison.plain.nodes / max(1, comparison.critical.nodes):.2f}"
                     if both else "-")
        out.write(_compact_row(cells) + "\n")
        out.flush()
    cells = ["total", "", ""]
    for nodes, seconds in totals:
        cells += [f"{nodes:,}", f"{seconds:.2f}", rate(nodes, seconds, 1e3), ""]
    cells.append(f"{totals[1][0] / max(1, totals[0][0]):.2f}")
    out.write(_compact_row(cells) + "\n")
    return failures


def _plies_before_end_table(positions: int, limit: float, seed: int, out: TextIO) -> None:
    rows = plies_before_end(positions, limit, seed)
    out.write("\n")
    _header(f"mallard bench uttt: positions k plies before the end of {positions} random "
            f"games (seed {seed}), solved within {limit:g} s? (critical analysis on)", out)
    header = ["k", "positions", "solved", "fraction", "X wins", "draws", "O wins",
              "median s (solved)", "max s (solved)", "mean open cells"]
    _compact_table_start(header, out)
    for row in rows:
        seconds = row.seconds
        out.write(_compact_row([
            str(row.plies), str(row.positions), str(row.solved),
            f"{row.solved / row.positions:.2f}", str(row.values.count("X wins")),
            str(row.values.count("draw")), str(row.values.count("O wins")),
            f"{statistics.median(seconds):.2f}" if seconds else "-",
            f"{max(seconds):.2f}" if seconds else "-",
            f"{statistics.mean(row.open_cells):.1f}"]) + "\n")
        out.flush()


def _prover_threads_table(positions: int, limit: float, seed: int, threads: int,
                          out: TextIO) -> int:
    rows = prover_threads(positions, limit, seed, threads)
    out.write("\n")
    _header(f"mallard bench uttt: the prover with 1 and {threads} threads; positions k plies "
            f"before the end of the games above, limit {limit:g} s per solve", out)
    many = f"{threads} threads"
    header = ["k", "game", "open", "value", "1 thread s", "1 thread nodes", f"{many} s",
              f"{many} nodes", "speed-up"]
    _compact_table_start(header, out)
    failures = 0
    solved = [0.0, 0.0]
    speedups = []
    for row in rows:
        cells = [str(row.plies), str(row.game), str(row.open_cells)]
        if not row.agree:
            failures += 1
            cells.append(f"DISAGREE {row.single.text}/{row.parallel.text}")
        else:
            cells.append(row.single.text if row.single.value is not None else row.parallel.text)
        for outcome in (row.single, row.parallel):
            cells += [f"{outcome.search_seconds:.2f}" if outcome.value is not None else "limit",
                      f"{outcome.nodes:,}"]
        if row.single.value is not None and row.parallel.value is not None:
            solved[0] += row.single.search_seconds
            solved[1] += row.parallel.search_seconds
            speedup = row.single.search_seconds / max(1e-6, row.parallel.search_seconds)
            speedups.append(speedup)
            cells.append(f"{speedup:.2f}")
        else:
            cells.append("-")
        out.write(_compact_row(cells) + "\n")
        out.flush()
    if speedups:
        out.write(_compact_row([
            "both solved", str(len(speedups)), "", "", f"{solved[0]:.2f}", "", f"{solved[1]:.2f}",
            "", f"{solved[0] / max(1e-6, solved[1]):.2f} in total, median "
            f"{statistics.median(speedups):.2f}"]) + "\n")
    return failures


def bench_uttt(positions: int, limit: float, seed: int, threads: int,
               out: TextIO) -> int:
    failures = _perft_table(out)
    failures += _prover_table(positions, limit, seed, out)
    _plies_before_end_table(positions, limit, seed, out)
    if threads > 1:
        failures += _prover_threads_table(positions, limit, seed, threads, out)
    return 1 if failures else 0
