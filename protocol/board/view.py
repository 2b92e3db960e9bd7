"""What the board page draws and may click, from the rules: the page holds no rules of its own.

`board_view(position)` describes a position for drawing and clicking, per game:
- duck: the 64 squares with their pieces (FEN letters) and the duck's square, and the legal
  piece moves, each with the squares its duck may go to (from `legal_moves`' texts `e2e4,e4d5`);
- cfour: the stones column by column from the bottom, and the columns that take a stone;
- uttt: the 81 cells, each small board's status (open, X, O, drawn), the board to play in, and
  the move text of every cell.
`last_move_marks` says which squares, stone or cell the page marks as the last move.
`load_position(game, text)` reads what the page's load box takes: a FEN or `startpos`, a UTTT
position, or for Connect Four a sequence of 1-based column digits. `export_pgn` and `read_pgn`
write and read our match runner's PGN (tournaments/pgn.py, whose reader reads any PGN), for
every game.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Optional

from mallard.engines.base import Game, GameError, GameResult, MoveError, Position, PositionError
from mallard.tournaments.pgn import game_pgn, read_games
from mallard.tournaments.players import EngineConfig
from mallard.tournaments.records import (
    GameJob,
    GameRecord,
    MoveRecord,
    Opening,
    Reason,
    Termination,
)

SIDE_LABELS = {"duck": ("White", "Black"), "cfour": ("Yellow", "Red"), "uttt": ("X", "O")}
CFOUR_SEQUENCE = re.compile(r"^[1-9]+$")


def board_view(position: Position, playable: bool = True) -> dict:
    """The drawing of `position`; with `playable` False (a game lost on time) nothing is
    clickable."""
    variant = position.game.variant
    over = not playable or position.result(claim_draw=True) is not None
    if variant == "duck":
        return _duck_view(position, over)
    if variant == "cfour":
        return _cfour_view(position, over)
    return _uttt_view(position, over)


def last_move_marks(position: Position, text: str) -> dict:
    """What the page marks of the move `text` played in `position`: a duck move's `from`,
    `to` and `duck` squares, a Connect Four stone's `column` and `row`, a UTTT `cell`."""
    variant = position.game.variant
    move = position.parse_move(text)
    if variant == "duck":
        piece, _, duck = position.format_move(move).partition(",")
        return {"from": piece[:2], "to": piece[2:4], "duck": duck[-2:]}
    if variant == "cfour":
        return {"column": move, "row": position.column_height(move)}
    return {"cell": move}


def _duck_view(position, over: bool) -> dict:
    placement = position.fen().split()[0]
    squares, duck = {}, None
    for rank_index, rank in enumerate(placement.split("/")):
        file_index = 0
        for char in rank:
            if char.isdecimal():
                file_index += int(char)
                continue
            name = "abcdefgh"[file_index] + str(8 - rank_index)
            if char == "*":
                duck = name
            else:
                squares[name] = char
            file_index += 1
    moves: dict[str, dict] = {}
    if not over:
        for move in position.legal_moves():
            text = position.format_move(move)  # `e2e4,e4d5`: the piece move, then the duck's
            piece, _, duck_part = text.partition(",")
            entry = moves.setdefault(piece, {"from": piece[:2], "to": piece[2:4],
                                             "promotion": piece[4:], "ducks": []})
            entry["ducks"].append(duck_part[-2:])
    return {"kind": "duck", "squares": squares, "duck": duck, "moves": list(moves.values())}


def _cfour_view(position, over: bool) -> dict:
    columns = [[position.cell(column, row) for row in range(position.column_height(column))]
               for column in range(position.width)]
    return {"kind": "cfour", "width": position.width, "height": position.height,
            "columns": columns, "files": "abcdefghijklmnopqrstuvwxyz"[:position.width],
            "playable": [] if over else position.legal_moves()}


def _uttt_view(position, over: bool) -> dict:
    legal = set() if over else set(position.legal_moves())
    return {"kind": "uttt",
            "cells": [[position.cell(board, cell) for cell in range(9)] for board in range(9)],
            "boards": [position.board_status(board) for board in range(9)],
            "forced": None if over else position.forced_board,
            "legal": sorted(legal),
            "moveTexts": [position.format_move(move) for move in range(81)]}


def result_text(result: Optional[GameResult]) -> str:
    """The runner's reason text: `White wins (four in a row)`, `Draw (board full)`."""
    return str(Reason.of_result(result)) if result is not None else ""


def load_position(game: Game, text: str) -> tuple[Position, list[str]]:
    """(root position, moves from it) of a load-box text; PositionError names the problem.
    A Connect Four column sequence loads as moves from the empty board, so it can be replayed."""
    text = text.strip()
    if not text:
        raise PositionError("nothing to load: paste a position")
    if game.variant == "cfour" and CFOUR_SEQUENCE.match(text):
        position = game.start_position()
        moves = []
        for index, digit in enumerate(text):
            try:
                move = position.parse_move(digit)
            except MoveError as error:
                raise PositionError(f"move {index + 1} of '{text}': {error}") from None
            moves.append(position.format_move(move))
            position = position.play(move)
        return game.start_position(), moves
    try:
        return game.parse_position(text), []
    except (GameError, ValueError, IndexError) as error:
        raise PositionError(f"not a {game.variant} position: {error}") from None


@dataclass
class BoardMove(MoveRecord):
    """A move of the page's game: like the runner's, but a move nobody timed (a person's, a
    loaded one) carries no comment instead of the runner's `{book}`; `human` is the move as the
    page shows it (`Position.human_move`: Connect Four's column 1-7), while `text` and `san`
    stay the protocol's and the PGN's."""

    human: str = ""

    @classmethod
    def of(cls, position: Position, move) -> "BoardMove":
        return cls(position.format_move(move), position.pgn_move(move),
                   human=position.human_move(move))

    def comment(self) -> Optional[str]:
        if self.time_ms is None:
            return None
        return super().comment()


def export_pgn(game: Game, root: Position, moves: list[BoardMove], names: tuple[str, str],
               started_at: str) -> str:
    """The game as the match runner writes it (mallard.tournaments.pgn.game_pgn)."""
    position = root
    for move in moves:
        position = position.play(position.parse_move(move.text))
    result = position.result(claim_draw=True)
    board = (game.width, game.height) if game.variant == "cfour" and \
        (game.width, game.height) != (7, 6) else None
    players = [EngineConfig(name, ["board"]) for name in names]
    job = GameJob(1, 1, 1, game.variant, players[0], players[1], 0, 1, Opening(), board=board)
    reason = Reason.of_result(result) if result else Reason(None)  # an unfinished game says none
    termination = Termination.NORMAL if result else Termination.UNTERMINATED
    record = GameRecord(job, result.pgn if result else "*", reason, termination, list(moves),
                        root.fen(), started_at, 0, names[0], names[1])
    return game_pgn(record, event="mallard board", site="local")


def read_pgn(text: str) -> tuple[dict, list[str]]:
    """(tags, move texts) of the first game of a PGN text (mallard.tournaments.pgn.read_games:
    comments, variations, move numbers, NAGs and the result are left out). PositionError when it
    holds no game."""
    games = read_games(text)
    if not games:
        raise PositionError("no PGN game found")
    return games[0].tags, games[0].moves


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds")
