"""How far from the end of real games the UTTT prover proves positions (`mallard bench
uttt-reach`), computed and written as a Markdown table to the stream the caller passes.

The games are `data/games.moves`: games of mallard against itself at a few time controls and
fixed depths (the file's header says how they were played). A game's NAME/N is the N-th game of
its group.

Reach: for one game and one prover setting, the positions 1, 2, 3, ... plies before the end
are each solved from an empty table within the largest time limit, until the first that is not
proven (or `max_back`). The reach at a limit L is the largest k such that every position from k
plies before the end to the end was proven within L seconds; so one scan at the largest limit
gives the reach at every smaller one. Settings that prove the same position must agree on its
value (`ReachScan.values`); a disagreement is marked in the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, TextIO

from mallard.engines.bench import machine_line
from mallard.engines.uttt.prover import Prover
from mallard.engines.uttt.rules import UtttGame

GAMES_FILE = Path(__file__).resolve().parent / "data" / "games.moves"
HASH_MB = 64
MAX_BACK = 40


@dataclass(frozen=True)
class RealGame:
    name: str                        # GROUP/N
    positions: list                  # UtttPosition from the start to the finished position

    @property
    def plies(self) -> int:
        return len(self.positions) - 1

    @property
    def result(self) -> str:
        over = self.positions[-1].result()
        if over.winner is None:
            return "draw"
        return f"{'XO'[over.winner]} won"


def load_games(path: Path = GAMES_FILE) -> list[RealGame]:
    """The games of a moves file: `## NAME: ...` starts a group, `#` lines are comments, every
    other non-empty line is one finished game's moves."""
    game = UtttGame()
    games, group, number = [], "game", 0
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line.startswith("##"):
            group, number = line[2:].split(":", 1)[0].strip(), 0
            continue
        if not line or line.startswith("#"):
            continue
        position = game.start_position()
        positions = [position]
        for text in line.split():
            position = position.play(position.parse_move(text))
            positions.append(position)
        if position.result() is None:
            raise ValueError(f"{path}: a game of group {group} does not end")
        number += 1
        games.append(RealGame(f"{group}/{number}", positions))
    return games


@dataclass(frozen=True)
class ProverSetting:
    label: str
    threads: int
    improved: bool = True            # False: the prover before the reach work (plain df-pn
    #                                  numbers, a solve's two searches one after the other)

    def prover(self) -> Prover:
        return Prover(hash_mb=HASH_MB, threads=self.threads, heuristic=self.improved,
                      open_lines=self.improved, at_once=self.improved)


@dataclass
class ReachScan:
    game: RealGame
    setting: ProverSetting
    limit: float
    seconds: list = field(default_factory=list)   # seconds[k - 1]: the position k before the end
    values: dict = field(default_factory=dict)    # k -> "X wins" / "O wins" / "draw" (proven)

    def reach(self, limit: float) -> int:
        reach = 0
        for back, seconds in enumerate(self.seconds, 1):
            if back not in self.values or seconds > limit:
                break
            reach = back
        return reach


def scan_reach(game: RealGame, setting: ProverSetting, limit: float,
               max_back: int = MAX_BACK, prover: Optional[Prover] = None) -> ReachScan:
    """Solves the positions 1, 2, ... plies before the end of `game` (see the module docstring)."""
    prover = prover or setting.prover()
    scan = ReachScan(game, setting, limit)
    for back in range(1, min(max_back, game.plies) + 1):
        outcome = prover.solve(game.positions[game.plies - back], time_limit=limit,
                               details=False)
        scan.seconds.append(outcome.seconds)
        if outcome.value is None:
            break
        scan.values[back] = outcome.text
    return scan


def settings_for(threads: Iterable[int], baseline: bool) -> list[ProverSetting]:
    settings = [ProverSetting(f"{count} thread{'s' if count > 1 else ''}", count)
                for count in threads]
    if baseline:
        settings += [ProverSetting(f"before, {count} thread{'s' if count > 1 else ''}",
                                   count, improved=False) for count in threads]
    return settings


def _warm_up(settings: list[ProverSetting]) -> None:
    """Compiles the kernels before anything is timed."""
    position = UtttGame().start_position()
    for setting in settings:
        setting.prover().solve(position, node_limit=5000)


def bench_reach(games: list[RealGame], limits: list[float], threads: list[int], baseline: bool,
                max_back: int, out: TextIO) -> int:
    """The reach table: a row per game, the reach at each limit for each setting; each row is
    written as soon as it is known. Returns 1 when two settings disagreed on a value."""
    limits = sorted(limits)
    settings = settings_for(threads, baseline)
    _warm_up(settings)
    out.write(f"Reach of the prover on real games (`{GAMES_FILE.name}`): plies before the end "
              f"from which every position is proven, within "
              f"{', '.join(f'{lim:g}' for lim in limits)} s per position; positions from an "
              f"empty {HASH_MB} MB table, at most {max_back} plies back.\n\n")
    out.write(machine_line())
    header = ["game", "plies", "result"] + [f"{s.label}, {lim:g} s"
                                            for s in settings for lim in limits]
    out.write("| " + " | ".join(header) + " |\n")
    out.write("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|\n")
    out.flush()
    disagreed = False
    for game in games:
        scans = [scan_reach(game, setting, limits[-1], max_back) for setting in settings]
        cells = [game.name, str(game.plies), game.result]
        for scan in scans:
            cells += [str(scan.reach(limit)) for limit in limits]
        conflict = _conflict(scans)
        if conflict:
            disagreed = True
            cells[0] += f" (values disagree {conflict} plies before the end)"
        out.write("| " + " | ".join(cells) + " |\n")
        out.flush()
    return 1 if disagreed else 0


def _conflict(scans: list[ReachScan]) -> Optional[int]:
    """The first ply-before-the-end where two scans proved different values, else None."""
    for back in sorted({back for scan in scans for back in scan.values}):
        found = {scan.values[back] for scan in scans if back in scan.values}
        if len(found) > 1:
            return back
    return None


__all__ = ["GAMES_FILE", "ProverSetting", "RealGame", "ReachScan", "bench_reach", "load_games",
           "scan_reach"]
