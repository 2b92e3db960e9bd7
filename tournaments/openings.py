"""Opening suites: files of start positions, read once and checked against the rules.

Formats (cutechess's `-openings format=`): `epd` and `fen` — one position per line (an EPD's
operations after the four position fields are ignored, a FEN's counters are kept); `moves` — one
line of moves from the variant's start position per line, in any notation the rules read (UCI
`e2e4,e4d5`, SAN `e4,d5`, `P@d1`, column letters); `pgn` — the main line and `FEN` tag of
each game (read by `mallard.tournaments.pgn.read_games`; an error names the game's first line).
`plies=N` cuts every opening's moves to its first N. `order=random` shuffles with the
match's seed, so a resumed match plays the same openings in the same order. In the line formats
blank lines and lines starting with `#` are skipped; a line the rules reject is an error naming
the line.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Optional

from mallard.engines.base import Game, GameError
from mallard.tournaments.pgn import read_games
from mallard.tournaments.records import Opening

FORMATS = ("epd", "fen", "moves", "pgn")


class OpeningError(ValueError):
    pass


def _epd_to_fen(game: Game, line: str) -> str:
    fields = line.split()
    if len(fields) >= 4:
        # EPD has four position fields then operations; a FEN's two counters are numbers.
        if len(fields) >= 6 and fields[4].isdecimal() and fields[5].isdecimal():
            return " ".join(fields[:6])
        return " ".join(fields[:4]) + " 0 1"
    return line


def read_openings(path: str, game: Game, fmt: str = "epd", plies: Optional[int] = None
                  ) -> list[Opening]:
    if fmt not in FORMATS:
        raise OpeningError(f"unknown opening format '{fmt}' (use {', '.join(FORMATS)})")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise OpeningError(f"cannot read openings '{path}': {error.strerror or error}") from None
    entries: list[tuple[Optional[str], list[str], int]] = []
    if fmt == "pgn":
        entries = [(game.tags.get("FEN"), game.moves, game.line) for game in read_games(text)]
    else:
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if fmt == "moves":
                entries.append((None, _split_moves(line), number))
            else:
                entries.append((_epd_to_fen(game, line) if fmt == "epd" else line, [], number))
    openings = []
    for fen, moves, number in entries:
        if plies is not None:
            moves = moves[:plies]
        try:
            position = game.parse_position(fen) if fen else game.start_position()
            start_fen = position.fen()
            protocol_moves = []
            for text_move in moves:
                move = position.parse_move(text_move)
                protocol_moves.append(position.format_move(move))
                position = position.play(move)
        except (GameError, ValueError, OverflowError) as error:
            raise OpeningError(f"{path}:{number}: {error}") from None
        if position.result(claim_draw=True) is not None:
            raise OpeningError(f"{path}:{number}: the opening ends the game")
        openings.append(Opening(start_fen if fen else None, tuple(protocol_moves),
                                f"{Path(path).name}:{number}"))
    if not openings:
        raise OpeningError(f"'{path}' holds no openings")
    return openings


def _split_moves(line: str) -> list[str]:
    """Moves of a `moves` line: separated by spaces; move numbers (`1.`) are skipped."""
    return [token for token in line.split() if not re.fullmatch(r"\d+\.+", token)]


def ordered(openings: list[Opening], order: str, seed: int) -> list[Opening]:
    if order == "sequential":
        return list(openings)
    if order == "random":
        shuffled = list(openings)
        random.Random(seed).shuffle(shuffled)
        return shuffled
    raise OpeningError(f"unknown opening order '{order}' (use sequential or random)")
