"""Connect Four rules and text forms for any board with width*(height+1) <= 64 (default 7x6).

A `Connect4Position` is immutable and holds Python-int bitboards in the kernels' layout (see
`kernels.py`): `cur` = stones of the side to move, `mask` = all stones, `moves` = stones played.
A move is the 0-based column index.

Text forms, all round-tripping:
- the digit sequence of 1-based columns (`4453`; columns past 9 are not expressible this way);
- the drop notation of Fairy-Stockfish and Cute Chess: `P@d1` (upper-case P for both sides, the
  file of the column and the rank where the stone lands);
- the cfour FEN: ranks from the top, `P` first player, `p` second, the stones in hand in
  brackets, side to move, `- -`, half-move clock (always 0: every move is a pawn drop), move number;
- 0-based column actions (OpenSpiel, PettingZoo, Kaggle ConnectX) via `to_action`/`from_action`.
"""

from __future__ import annotations

import numbers
from typing import Optional

from mallard.engines.base import (
    THREADS_OPTION,
    EndReason,
    Game,
    GameResult,
    MoveError,
    Option,
    Position,
    PositionError,
    hash_option,
    is_number,
)

DEFAULT_WIDTH, DEFAULT_HEIGHT = 7, 6
DEFAULT_HASH_MB = 128
MAX_HASH_MB = 65536
SEARCHER_OPTIONS = (  # applied to a `solver.Connect4Searcher`
    hash_option(DEFAULT_HASH_MB, MAX_HASH_MB),
    Option("OwnBook", "check", True, apply=lambda searcher, on: searcher.set_own_book(on)),
    THREADS_OPTION,
)
FILES = "abcdefghijklmnopqrstuvwxyz"


def check_size(width: int, height: int) -> None:
    if not all(isinstance(size, numbers.Integral) and not isinstance(size, bool)
               for size in (width, height)):
        raise PositionError(f"board {width}x{height} is not supported: sizes are whole numbers")
    if width < 1 or height < 1 or width * (height + 1) > 64 or width > len(FILES):
        raise PositionError(
            f"board {width}x{height} is not supported: need width*(height+1) <= 64 and width <= 26")


def has_four(stones: int, height: int) -> bool:
    """Whether a bitboard (kernel layout) holds four in a row."""
    for shift in (1, height, height + 1, height + 2):
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


class Connect4End(EndReason):
    FOUR_IN_A_ROW = "four in a row"
    BOARD_FULL = "board full"


class Connect4Position(Position):
    __slots__ = ("game", "cur", "mask", "moves", "winner", "history")

    def __init__(self, game: "Connect4Game", cur: int, mask: int, moves: int,
                 winner: Optional[int] = None, history: Optional[tuple] = ()):
        self.game = game
        self.cur = cur
        self.mask = mask
        self.moves = moves
        self.winner = winner
        self.history = history  # columns played from the empty board, None when unknown

    # --- geometry helpers -------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.game.width

    @property
    def height(self) -> int:
        return self.game.height

    def column_height(self, column: int) -> int:
        h1 = self.height + 1
        bits = (self.mask >> (column * h1)) & ((1 << h1) - 1)
        return bits.bit_length()

    def cell(self, column: int, row: int) -> Optional[int]:
        """The player (0 first, 1 second) whose stone is at (column, row from the bottom)."""
        bit = 1 << (column * (self.height + 1) + row)
        if not self.mask & bit:
            return None
        mine = bool(self.cur & bit)
        return self.side_to_move if mine else 1 - self.side_to_move

    # --- Position interface -----------------------------------------------------------------
    @property
    def side_to_move(self) -> int:
        return self.moves & 1

    @property
    def ply(self) -> int:
        return self.moves

    def is_over(self) -> bool:
        return self.winner is not None or self.moves == self.width * self.height

    def legal_moves(self) -> list[int]:
        if self.is_over():
            return []
        return [c for c in range(self.width) if self.column_height(c) < self.height]

    def play(self, column: int) -> "Connect4Position":
        if self.is_over():
            raise MoveError("the game is over")
        if not isinstance(column, int) or not 0 <= column < self.width:
            raise MoveError(f"column {column} is outside the board")
        if self.column_height(column) >= self.height:
            raise MoveError(f"column {FILES[column]} ({column + 1}) is full")
        move = (self.mask + (1 << (column * (self.height + 1)))) & self.game.column_mask(column)
        mover_stones = self.cur | move
        mask = self.mask | move
        winner = self.side_to_move if has_four(mover_stones, self.height) else None
        history = self.history + (column,) if self.history is not None else None
        return Connect4Position(self.game, self.cur ^ self.mask, mask, self.moves + 1, winner,
                                history)

    def result(self, claim_draw: bool = False) -> Optional[GameResult]:
        if self.winner is not None:
            return GameResult(self.winner, Connect4End.FOUR_IN_A_ROW)
        if self.moves == self.width * self.height:
            return GameResult(None, Connect4End.BOARD_FULL)
        return None

    def key(self) -> int:
        return self.cur + self.mask

    # --- text forms -------------------------------------------------------------------------
    def fen(self) -> str:
        ranks = []
        for row in range(self.height - 1, -1, -1):
            text, empty = "", 0
            for column in range(self.width):
                owner = self.cell(column, row)
                if owner is None:
                    empty += 1
                    continue
                if empty:
                    text += str(empty)
                    empty = 0
                text += "P" if owner == 0 else "p"
            ranks.append(text + (str(empty) if empty else ""))
        first, second = self.game.stones_per_player()
        placed_first = (self.moves + 1) // 2
        holdings = "P" * (first - placed_first) + "p" * (second - self.moves // 2)
        side = "w" if self.side_to_move == 0 else "b"
        return f"{'/'.join(ranks)}[{holdings}] {side} - - 0 {self.moves // 2 + 1}"

    def sequence(self) -> str:
        """The moves played as `parse_sequence` reads them: 1-based digits, or column letters
        on a board wider than 9 (needs a known history)."""
        if self.history is None:
            raise PositionError("the move history of this position is unknown")
        if self.width > 9:
            return "".join(FILES[c] for c in self.history)
        return "".join(str(c + 1) for c in self.history)

    def format_move(self, column: int) -> str:
        """Drop notation of a legal move: `P@` + file + landing rank."""
        return f"P@{FILES[column]}{self.column_height(column) + 1}"

    def human_move(self, column: int) -> str:
        """The column a person counts, 1 to the width (`P@d1` is 4)."""
        return str(column + 1)

    def gtp_move(self, column: int) -> str:
        """The GTP vertex of a move: its column letter."""
        return FILES[column]

    def parse_move(self, text: str) -> int:
        """A legal column from drop notation (`P@d1`), a column letter (`d`) or 1-based number."""
        if not isinstance(text, str):
            raise MoveError(f"{text!r} is not a move text")
        raw = text.strip()
        if self.is_over():
            raise MoveError(f"'{raw}': the game is over")
        lower = raw.lower()
        if lower.startswith("p@"):
            square = lower[2:]
            if len(square) < 2 or square[0] not in FILES[: self.width] or not is_number(square[1:]):
                raise MoveError(f"'{raw}' is not a drop on this board")
            column, rank = FILES.index(square[0]), int(square[1:])
            landing = self.column_height(column) + 1
            if landing > self.height:
                raise MoveError(f"'{raw}': column {square[0]} is full")
            if rank != landing:
                raise MoveError(f"'{raw}': a stone dropped in column {square[0]} lands on rank "
                                f"{landing}")
            return column
        if len(lower) == 1 and lower in FILES[: self.width]:
            column = FILES.index(lower)
        elif is_number(lower) and 1 <= int(lower) <= self.width:
            column = int(lower) - 1
        else:
            raise MoveError(f"'{raw}' is not a move (use P@d1, a column letter or 1..{self.width})")
        if self.column_height(column) >= self.height:
            raise MoveError(f"'{raw}': column {FILES[column]} is full")
        return column

    @staticmethod
    def to_action(column: int) -> int:
        """OpenSpiel / PettingZoo / ConnectX action of a move (0-based column)."""
        return column

    def from_action(self, action: int) -> int:
        if not isinstance(action, int) or not 0 <= action < self.width:
            raise MoveError(f"action {action} is outside 0..{self.width - 1}")
        if self.column_height(action) >= self.height:
            raise MoveError(f"action {action}: column is full")
        return action

    def board_text(self) -> str:
        """A readable board: X first player, O second, . empty, files underneath."""
        lines = []
        for row in range(self.height - 1, -1, -1):
            cells = []
            for column in range(self.width):
                owner = self.cell(column, row)
                cells.append("." if owner is None else "XO"[owner])
            lines.append(f"{row + 1:>2} " + " ".join(cells))
        lines.append("   " + " ".join(FILES[: self.width]))
        return "\n".join(lines)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Connect4Position) and self.game == other.game
                and (self.cur, self.mask, self.moves) == (other.cur, other.mask, other.moves))

    def __hash__(self) -> int:
        return hash((self.width, self.height, self.cur, self.mask))

    def __repr__(self) -> str:
        return f"Connect4Position('{self.fen()}')"


class Connect4Game(Game):
    """Connect Four on a width x height board (`cfour` is Fairy-Stockfish's name for 7x6)."""

    # On 7x6 with the book every solve ends within a fraction of this; larger boards may not.
    default_move_ms = 5000

    def __init__(self, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT):
        check_size(width, height)
        self.width = width
        self.height = height
        self.variant = "cfour"

    def __eq__(self, other) -> bool:
        return (isinstance(other, Connect4Game)
                and (self.width, self.height) == (other.width, other.height))

    def __hash__(self) -> int:
        return hash(("cfour", self.width, self.height))

    def column_mask(self, column: int) -> int:
        return ((1 << self.height) - 1) << (column * (self.height + 1))

    def stones_per_player(self) -> tuple[int, int]:
        area = self.width * self.height
        return (area + 1) // 2, area // 2

    def start_position(self) -> Connect4Position:
        return Connect4Position(self, 0, 0, 0)

    def parse_sequence(self, text: str) -> Connect4Position:
        """A position from 1-based column digits (c4solver's); on a board wider than 9, whose
        columns past 9 have no digit, from column letters instead (`a` the first). A move that
        ends the game is rejected.

        MoveError's `index` is the 1-based number of the offending move.
        """
        position = self.start_position()
        wide = self.width > 9
        for index, char in enumerate(text):
            if wide and char in FILES[:self.width]:
                column = FILES.index(char)
            elif not wide and is_number(char) and 1 <= int(char) <= self.width:
                column = int(char) - 1
            else:
                names = f"a..{FILES[self.width - 1]}" if wide else f"1..{self.width}"
                raise MoveError(f"Invalid move {index + 1} '{char}': not a column {names}",
                                index + 1)
            if position.column_height(column) >= self.height:
                raise MoveError(f"Invalid move {index + 1} '{char}': column {char} is full",
                                index + 1)
            position = position.play(column)
            if position.winner is not None:
                raise MoveError(f"Invalid move {index + 1} '{char}': it completes four, the game "
                                "is over", index + 1)
        return position

    def parse_position(self, text: str) -> Connect4Position:
        """A position from a cfour FEN (brackets, side and counters may be omitted)."""
        fields = text.strip().split()
        if not fields:
            raise PositionError("empty FEN")
        board, holdings = fields[0], None
        if "[" in board:
            if not board.endswith("]"):
                raise PositionError(f"unclosed holdings in '{board}'")
            board, holdings = board[:-1].split("[", 1)
        first, second, counts = self._stones(self._grid(board))
        moves = counts[0] + counts[1]
        if counts[0] - counts[1] not in (0, 1):
            raise PositionError(f"{counts[0]} first-player stones and {counts[1]} "
                                "second-player stones")
        side = moves & 1
        self._check_fields(fields, holdings, counts, side)
        wins = [has_four(first, self.height), has_four(second, self.height)]
        winner = None
        if wins[0] and wins[1]:
            raise PositionError("both players have four in a row")
        if wins[0] or wins[1]:
            winner = 0 if wins[0] else 1
            if winner == side:
                raise PositionError("the side to move already has four in a row")
        cur = first if side == 0 else second
        return Connect4Position(self, cur, first | second, moves, winner, None)

    def _grid(self, board: str) -> list[list[Optional[int]]]:
        """The placement field as grid[row][column] (row 0 at the bottom; None: empty)."""
        ranks = board.split("/")
        if len(ranks) != self.height:
            raise PositionError(f"FEN has {len(ranks)} ranks, the board has {self.height}")
        grid = []
        for text_rank in ranks:
            row: list[Optional[int]] = []
            number = ""
            for char in text_rank + " ":
                if is_number(char):
                    number += char
                    continue
                if number:
                    if int(number) > self.width - len(row):  # also keeps a huge count cheap
                        raise PositionError(f"rank '{text_rank}' has more than {self.width} cells")
                    row.extend([None] * int(number))
                    number = ""
                if char == " ":
                    break
                if char not in "Pp":
                    raise PositionError(f"unknown piece '{char}' in rank '{text_rank}'")
                row.append(0 if char == "P" else 1)
            if len(row) != self.width:
                raise PositionError(f"rank '{text_rank}' has {len(row)} cells, the board has "
                                    f"{self.width}")
            grid.append(row)
        grid.reverse()
        return grid

    def _stones(self, grid: list[list[Optional[int]]]) -> tuple[int, int, list[int]]:
        """Each player's bitboard and stone count; no stone may float above an empty cell."""
        first = second = 0
        counts = [0, 0]
        for column in range(self.width):
            floating = False
            for row in range(self.height):
                owner = grid[row][column]
                if owner is None:
                    floating = True
                    continue
                if floating:
                    raise PositionError(f"stone at {FILES[column]}{row + 1} floats above an "
                                        "empty cell")
                counts[owner] += 1
                bit = 1 << (column * (self.height + 1) + row)
                if owner == 0:
                    first |= bit
                else:
                    second |= bit
        return first, second, counts

    def _check_fields(self, fields: list[str], holdings: Optional[str], counts: list[int],
                      side: int) -> None:
        """The side to move, the holdings and the counters must agree with the stones."""
        if len(fields) > 1:
            if fields[1] not in ("w", "b"):
                raise PositionError(f"side to move '{fields[1]}' is not w or b")
            if fields[1] != "wb"[side]:
                raise PositionError(f"side to move '{fields[1]}' does not match the stone counts")
        if holdings is not None:
            in_hand = self.stones_per_player()
            expected = "P" * (in_hand[0] - counts[0]) + "p" * (in_hand[1] - counts[1])
            if sorted(holdings) != sorted(expected):
                raise PositionError(f"holdings '[{holdings}]' do not match the stones on the board")
        for counter in fields[4:6]:
            if not is_number(counter):
                raise PositionError(f"counter '{counter}' is not a number")
        if len(fields) > 6:
            raise PositionError(f"unexpected text after the FEN: '{' '.join(fields[6:])}'")

    def resized(self, width: int, height: int) -> "Connect4Game":
        return Connect4Game(width, height)


