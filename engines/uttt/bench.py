"""Ultimate Tic-Tac-Toe benchmarks, computed here and printed by `mallard.protocol.bench` (`mallard bench
uttt`), and the game's bench signature. Every random position is drawn from
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

Every solve starts from an empty table (64 MB). `SIGNATURE` holds positions with more than the
searcher's `PROVER_MAX_OPEN` open cells: a depth-limited search asks the prover for a slice of
time only in later positions, and a time slice would make the node count depend on the machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from mallard.engines import bench
from mallard.engines.bench import BenchSignature, PerftRow, PerftTiming
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

