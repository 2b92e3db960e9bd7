"""Ultimate Tic-Tac-Toe positions and their text forms (the rules are `kernels.py`).

Text forms:
- A move is two letters, board then cell, row-major `a..i` (`ae`: the centre cell of the top-left
  board). `parse_move` also reads a GTP vertex on the 9x9 grid (`E5`; Go's letters, which skip
  `I`, row 1 at the bottom) and CodinGame's `row col` (0-based, from the top-left).
- A position is `<side>;<9 global chars>;<9 boards of 9 chars separated by '/'>` with global
  chars `.` open, `X`/`O` won, `#` drawn, `@` the board the side to move must play in, and
  cells `.`, `X`, `O` — the notation of the write-up's engine; `fen()` writes it and
  `parse_position` reads it back (round trip).
- OpenSpiel's `ultimate_tic_tac_toe` plays a move as two actions (board, then cell `r*3+c`) when
  the board is free and one (the cell) otherwise: `openspiel_actions` / `from_openspiel_actions`.
- CodinGame's coordinates: `codingame_coordinates` / `from_codingame`.

Player 0 is X (moves first; GTP's black), player 1 is O.
"""

from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from mallard.engines.base import (
    THREADS_OPTION,
    EndReason,
    Game,
    GameResult,
    MoveError,
    Position,
    PositionError,
    hash_option,
    is_number,
)
from mallard.engines.uttt.board import (
    DRAWN,
    FULL,
    HAS_LINE,
    LETTERS,
    O_WON,
    RESULT_NONE,
    S_DRAWN,
    S_FORCED,
    S_KEY,
    S_LAST,
    S_O,
    S_PLY,
    S_RESULT,
    S_SIDE,
    S_WON_O,
    S_WON_X,
    S_X,
    STATE_SIZE,
    X_WON,
)

SIDES = "XO"
GTP_COLUMNS = "ABCDEFGHJ"  # Go skips I
DEFAULT_HASH_MB = 64
MAX_HASH_MB = 4096
SEARCHER_OPTIONS = (  # applied to a `searcher.UtttSearcher`
    hash_option(DEFAULT_HASH_MB, MAX_HASH_MB),
    THREADS_OPTION,
)


def _kernels():
    # numba: the registry imports the rules, and listing the games must not load the compiler
    from mallard.engines.uttt import kernels

    return kernels


def grid_coordinates(move: int) -> tuple[int, int]:
    """(row, column) of a move on the 9x9 grid, 0-based from the top-left."""
    board, cell = divmod(move, 9)
    return (board // 3) * 3 + cell // 3, (board % 3) * 3 + cell % 3


def move_from_grid(row: int, column: int) -> int:
    return ((row // 3) * 3 + column // 3) * 9 + (row % 3) * 3 + column % 3


class UtttEnd(EndReason):
    THREE_BOARDS_IN_A_ROW = "three boards in a row"
    EVERY_BOARD_CLOSED = "every board is closed"


class UtttPosition(Position):
    def __init__(self, game: "UtttGame", state: np.ndarray):
        self.game = game
        self.state = state

    # --- queries ----------------------------------------------------------------------------
    @property
    def side_to_move(self) -> int:
        return int(self.state[S_SIDE])

    @property
    def ply(self) -> int:
        return int(self.state[S_PLY])

    @property
    def forced_board(self) -> Optional[int]:
        forced = int(self.state[S_FORCED])
        return None if forced < 0 else forced

    def key(self) -> int:
        return int(self.state[S_KEY])

    def cell(self, board: int, cell: int) -> Optional[int]:
        for player in range(2):
            if int(self.state[S_X + 9 * player + board]) >> cell & 1:
                return player
        return None

    def board_status(self, board: int) -> str:
        """'.' open, 'X'/'O' won, '#' drawn."""
        if int(self.state[S_WON_X]) >> board & 1:
            return "X"
        if int(self.state[S_WON_O]) >> board & 1:
            return "O"
        if int(self.state[S_DRAWN]) >> board & 1:
            return "#"
        return "."

    def legal_moves(self) -> list[int]:
        moves = np.zeros(81, dtype=np.int64)
        count = _kernels().generate_moves(self.state, moves)
        return [int(move) for move in moves[:count]]

    def play(self, move: int) -> "UtttPosition":
        if not isinstance(move, (int, np.integer)) or move not in self.legal_moves():
            over = self.result()
            if over is not None:
                raise MoveError(f"the game is over ({over.reason})")
            raise MoveError(f"{self._describe(move)} is not legal here")
        state = self.state.copy()
        _kernels().make_move(state, int(move))
        return UtttPosition(self.game, state)

    def _describe(self, move) -> str:
        try:
            return f"'{self.format_move(int(move))}'"
        except (TypeError, ValueError, IndexError):
            return repr(move)

    def result(self, claim_draw: bool = False) -> Optional[GameResult]:
        result = int(self.state[S_RESULT])
        if result == X_WON:
            return GameResult(0, UtttEnd.THREE_BOARDS_IN_A_ROW)
        if result == O_WON:
            return GameResult(1, UtttEnd.THREE_BOARDS_IN_A_ROW)
        if result == DRAWN:
            return GameResult(None, UtttEnd.EVERY_BOARD_CLOSED)
        return None

    # --- text forms -------------------------------------------------------------------------
    def fen(self) -> str:
        global_chars = []
        for board in range(9):
            status = self.board_status(board)
            if status == "." and self.forced_board == board and self.result() is None:
                status = "@"
            global_chars.append(status)
        boards = []
        for board in range(9):
            text = ""
            for cell in range(9):
                owner = self.cell(board, cell)
                text += "." if owner is None else SIDES[owner]
            boards.append(text)
        return f"{SIDES[self.side_to_move]};{''.join(global_chars)};{'/'.join(boards)}"

    def format_move(self, move: int) -> str:
        board, cell = divmod(int(move), 9)
        if not 0 <= board < 9:
            raise ValueError(f"move {move} is outside 0..80")
        return LETTERS[board] + LETTERS[cell]

    def pgn_move(self, move: int) -> str:
        return self.format_move(move)

    def gtp_move(self, move: int) -> str:
        row, column = grid_coordinates(int(move))
        return f"{GTP_COLUMNS[column]}{9 - row}"

    def parse_move(self, text: str) -> int:
        """A legal move from `ae`, a GTP vertex `E5`, or CodinGame's `row col`."""
        if not isinstance(text, str):
            raise MoveError(f"{text!r} is not a move text")
        raw = text.strip()
        over = self.result()
        if over is not None:
            raise MoveError(f"'{raw}': the game is over ({over.reason})")
        move = _read_move(raw)
        if move is None:
            raise MoveError(f"'{raw}' is not a move (write board and cell letters a-i, as 'ae')")
        if move not in self.legal_moves():
            board, cell = divmod(move, 9)
            forced = self.forced_board
            if self.board_status(board) != ".":
                why = f"board {LETTERS[board]} is closed"
            elif self.cell(board, cell) is not None:
                why = "the cell is taken"
            else:
                why = f"the move must be in board {LETTERS[forced]}"
            raise MoveError(f"'{raw}' ({self.format_move(move)}) is illegal: {why}")
        return move

    def board_text(self) -> str:
        """The 9x9 grid, X and O, '.' empty; the board to play in is framed by its status."""
        lines = []
        for row in range(9):
            chars = []
            for column in range(9):
                board, cell = divmod(move_from_grid(row, column), 9)
                owner = self.cell(board, cell)
                chars.append("." if owner is None else SIDES[owner])
            lines.append(" ".join(chars[0:3]) + " | " + " ".join(chars[3:6]) + " | "
                         + " ".join(chars[6:9]))
            if row in (2, 5):
                lines.append("------+-------+------")
        return "\n".join(lines) + "\n" + self.fen()

    # --- other tools' numberings ----------------------------------------------------------------
    def openspiel_actions(self, move: int) -> list[int]:
        board, cell = divmod(int(move), 9)
        return [cell] if self.forced_board is not None else [board, cell]

    def from_openspiel_actions(self, actions: Iterable[int]) -> int:
        actions = list(actions)
        if any(not isinstance(a, (int, np.integer)) or not 0 <= a < 9 for a in actions):
            raise MoveError(f"actions {actions}: each is a board or cell number 0..8")
        if self.forced_board is not None:
            if len(actions) != 1:
                raise MoveError(f"the board is set ({LETTERS[self.forced_board]}): one action")
            move = self.forced_board * 9 + int(actions[0])
        else:
            if len(actions) != 2:
                raise MoveError("the board is free: two actions, board then cell")
            move = int(actions[0]) * 9 + int(actions[1])
        if move not in self.legal_moves():
            raise MoveError(f"actions {actions} are not a legal move")
        return move

    @staticmethod
    def codingame_coordinates(move: int) -> tuple[int, int]:
        return grid_coordinates(int(move))

    def from_codingame(self, row: int, column: int) -> int:
        if not (0 <= row < 9 and 0 <= column < 9):
            raise MoveError(f"({row}, {column}) is outside the 9x9 grid")
        move = move_from_grid(row, column)
        if move not in self.legal_moves():
            raise MoveError(f"({row}, {column}) is not a legal move")
        return move

    # --- perft ------------------------------------------------------------------------------------
    def perft(self, depth: int, bulk: bool = True) -> int:
        """Leaves of the move tree (a finished game is a leaf). The last ply is always counted
        from the move list: a UTTT move has no second half to check, so `bulk` changes nothing."""
        if depth <= 0:
            return 1
        kernels = _kernels()
        stack = kernels.new_stack(depth)
        stack[0] = self.state
        moves = np.zeros(81 * (depth + 2), dtype=np.int64)
        return int(kernels.perft_kernel(stack, np.int64(depth), moves))

    def divide(self, depth: int, bulk: bool = True) -> list[tuple[int, int]]:
        return [(move, self.play(move).perft(depth - 1) if self.play(move).result() is None
                 or depth == 1 else 0) for move in self.legal_moves()]

    def critical_boards(self) -> tuple[int, int]:
        """Masks (bit b = board b) of the boards critical for X and for O."""
        kernels = _kernels()
        return (int(kernels.critical_boards(self.state, 0)),
                int(kernels.critical_boards(self.state, 1)))

    def __eq__(self, other) -> bool:
        return isinstance(other, UtttPosition) and self.fen() == other.fen()

    def __hash__(self) -> int:
        return hash(self.fen())

    def __repr__(self) -> str:
        return f"UtttPosition('{self.fen()}')"


def _read_move(raw: str) -> Optional[int]:
    lower = raw.lower()
    if len(lower) == 2 and lower[0] in LETTERS and lower[1] in LETTERS:
        return LETTERS.index(lower[0]) * 9 + LETTERS.index(lower[1])
    upper = raw.upper()
    if 2 <= len(upper) <= 2 and upper[0] in GTP_COLUMNS and is_number(upper[1]) \
            and 1 <= int(upper[1]) <= 9:
        return move_from_grid(9 - int(upper[1]), GTP_COLUMNS.index(upper[0]))
    parts = raw.split()
    if len(parts) == 2 and all(is_number(part) for part in parts):
        row, column = int(parts[0]), int(parts[1])
        if row < 9 and column < 9:
            return move_from_grid(row, column)
    return None


class UtttGame(Game):
    """Ultimate Tic-Tac-Toe with the standard closed-board rules (`uttt`)."""

    variant = "uttt"
    solve_ms = 2000  # the prover cannot always finish: a solve gives its answer when it has one

    def resized(self, width: int, height: int) -> "UtttGame":
        if (width, height) != (9, 9):
            raise PositionError("Ultimate Tic-Tac-Toe is played on 9x9 only")
        return self

    START = ("X;.........;........./........./........./........./........./........./"
             "........./........./.........")

    def start_position(self) -> UtttPosition:
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        state[S_FORCED] = -1
        state[S_RESULT] = RESULT_NONE
        state[S_LAST] = -1
        state[S_KEY] = _kernels().compute_key(state)
        return UtttPosition(self, state)

    def parse_position(self, text: str) -> UtttPosition:
        if not isinstance(text, str):
            raise PositionError(f"{text!r} is not a position text")
        fields = text.strip().split(";")
        if len(fields) != 3:
            raise PositionError(f"'{text.strip()}': expected side;global;boards (three fields "
                                "separated by ';')")
        side_text, global_text, boards_text = (field.strip() for field in fields)
        if side_text not in ("X", "O"):
            raise PositionError(f"side to move '{side_text}' is not X or O")
        if len(global_text) != 9 or any(char not in ".XO#@" for char in global_text):
            raise PositionError(f"global field '{global_text}' needs 9 of . X O # @")
        boards = boards_text.split("/")
        if len(boards) != 9 or any(len(board) != 9 or any(c not in ".XO" for c in board)
                                   for board in boards):
            raise PositionError("boards field needs 9 boards of 9 of . X O separated by '/'")
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        state[S_SIDE] = SIDES.index(side_text)
        state[S_FORCED] = -1
        state[S_LAST] = -1
        x_count, o_count = _place_marks(state, boards)
        _mark_boards(state, global_text)
        # X moves first: X has as many marks as O (X to move) or one more (O to move)
        if x_count - o_count != int(state[S_SIDE]):
            raise PositionError(f"{x_count} X and {o_count} O marks do not fit {side_text} "
                                "to move")
        state[S_PLY] = x_count + o_count
        _set_result(state, side_text)
        state[S_KEY] = _kernels().compute_key(state)
        return UtttPosition(self, state)



def _place_marks(state: np.ndarray, boards: list[str]) -> tuple[int, int]:
    """Put the boards' X and O marks on `state`; returns how many of each."""
    x_count = o_count = 0
    for board, cells in enumerate(boards):
        for cell, char in enumerate(cells):
            if char == "X":
                state[S_X + board] |= 1 << cell
                x_count += 1
            elif char == "O":
                state[S_O + board] |= 1 << cell
                o_count += 1
    return x_count, o_count


def _mark_boards(state: np.ndarray, global_text: str) -> None:
    """The global field: each board's status, checked against its marks, and the forced one."""
    if global_text.count("@") > 1:
        raise PositionError("more than one board is marked '@'")
    for board, status in enumerate(global_text):
        x_cells, o_cells = int(state[S_X + board]), int(state[S_O + board])
        x_line, o_line = bool(HAS_LINE[x_cells]), bool(HAS_LINE[o_cells])
        full = (x_cells | o_cells) == FULL
        name = LETTERS[board]
        if x_line and o_line:
            raise PositionError(f"board {name} has a line of X and a line of O")
        if status == "X":
            if not x_line:
                raise PositionError(f"board {name} is marked won by X without an X line")
            state[S_WON_X] |= 1 << board
        elif status == "O":
            if not o_line:
                raise PositionError(f"board {name} is marked won by O without an O line")
            state[S_WON_O] |= 1 << board
        elif status == "#":
            if not full or x_line or o_line:
                raise PositionError(f"board {name} is marked drawn but is not full "
                                    "without a line")
            state[S_DRAWN] |= 1 << board
        else:
            if x_line or o_line or full:
                raise PositionError(f"board {name} is marked open but is closed")
            if status == "@":
                state[S_FORCED] = board


def _set_result(state: np.ndarray, side_text: str) -> None:
    """The game's result from the closed boards; the side to move cannot have won already."""
    won_x, won_o = int(state[S_WON_X]), int(state[S_WON_O])
    if HAS_LINE[won_x] and HAS_LINE[won_o]:
        raise PositionError("both players have three boards in a row")
    closed = won_x | won_o | int(state[S_DRAWN])
    if HAS_LINE[won_x if state[S_SIDE] == 0 else won_o]:
        raise PositionError(f"{side_text} to move has already won: the last move was the "
                            "other side's")
    if HAS_LINE[won_x]:
        state[S_RESULT] = X_WON
    elif HAS_LINE[won_o]:
        state[S_RESULT] = O_WON
    elif closed == FULL:
        state[S_RESULT] = DRAWN
    else:
        state[S_RESULT] = RESULT_NONE
    if state[S_RESULT] != RESULT_NONE and state[S_FORCED] >= 0:
        raise PositionError("a finished game has no board to play in ('@')")
