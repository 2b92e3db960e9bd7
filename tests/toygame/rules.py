"""Tic-tac-toe rules. Cells `a1`..`c3` (file, rank), moves are cell indices 0..8 (a1 = 0,
b1 = 1, ..., c3 = 8); a position's text is the nine cells from a1 to c3 (`x`, `o`, `.`), a
space, and the side to move: `......... x`."""

from __future__ import annotations

from typing import Optional

from mallard.engines.base import EndReason, Game, GameResult, MoveError, Position, PositionError

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
MARKS = "xo"


class TicTacToeEnd(EndReason):
    THREE_IN_A_ROW = "three in a row"
    BOARD_FULL = "board full"


class TicTacToePosition(Position):
    def __init__(self, game: "TicTacToe", cells: str, side: int):
        self.game, self.cells, self._side = game, cells, side

    @property
    def side_to_move(self) -> int:
        return self._side

    @property
    def ply(self) -> int:
        return 9 - self.cells.count(".")

    def winner(self) -> Optional[int]:
        for a, b, c in LINES:
            if self.cells[a] != "." and self.cells[a] == self.cells[b] == self.cells[c]:
                return MARKS.index(self.cells[a])
        return None

    def result(self, claim_draw: bool = False) -> Optional[GameResult]:
        winner = self.winner()
        if winner is not None:
            return GameResult(winner, TicTacToeEnd.THREE_IN_A_ROW)
        return GameResult(None, TicTacToeEnd.BOARD_FULL) if "." not in self.cells else None

    def legal_moves(self) -> list:
        return [] if self.result() else [i for i, mark in enumerate(self.cells) if mark == "."]

    def play(self, move) -> "TicTacToePosition":
        if move not in self.legal_moves():
            raise MoveError(f"cell {move} is not free")
        cells = self.cells[:move] + MARKS[self._side] + self.cells[move + 1:]
        return TicTacToePosition(self.game, cells, 1 - self._side)

    def fen(self) -> str:
        return f"{self.cells} {MARKS[self._side]}"

    def parse_move(self, text: str):
        text = text.strip().lower()
        if len(text) != 2 or text[0] not in "abc" or text[1] not in "123":
            raise MoveError(f"'{text}' is not a cell a1..c3")
        move = "abc".index(text[0]) + 3 * (int(text[1]) - 1)
        if move not in self.legal_moves():
            raise MoveError(f"'{text}' is not free")
        return move

    def format_move(self, move) -> str:
        return "abc"[move % 3] + str(move // 3 + 1)


class TicTacToe(Game):
    variant = "tictactoe"

    def start_position(self) -> TicTacToePosition:
        return TicTacToePosition(self, "." * 9, 0)

    def parse_position(self, text: str) -> TicTacToePosition:
        if text.strip() == "startpos":
            return self.start_position()
        fields = text.split()
        if len(fields) != 2 or len(fields[0]) != 9 or set(fields[0]) - set("xo.") \
                or fields[1] not in MARKS:
            raise PositionError(f"'{text}' is not nine cells of x, o, . and a side")
        return TicTacToePosition(self, fields[0], MARKS.index(fields[1]))
