"""Duck Chess rules at the Python level: `DuckGame` and the immutable `DuckPosition`.

A move is an int in the full-move encoding of `board.py` (piece move plus duck square). Rules
(as Fairy-Stockfish plays the variant): no check; capturing the king wins; a side with no legal
move wins; castling may pass attacked squares but not the duck; the 50-move rule and threefold
repetition (the duck's square is part of the position) are draws a player may claim, so
`result()` reports them only with `claim_draw=True`.

A position keeps every earlier position since its root FEN as its `place`, the duck-free key
and the duck square (`history`): repetition is judged over the moves actually played, and the
search reads there which of its positions would repeat one played.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

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
from mallard.engines.duck import notation
from mallard.engines.duck.board import (
    MAX_MOVES,
    MAX_PLY,
    MOVE_DUCK,
    PIECE_MOVE_MASK,
    S_DEPTH,
    S_DUCK,
    S_HALFMOVE,
    S_KEY,
    S_KING,
    S_SIDE,
    SQUARE_NAMES,
    UNDO_SIZE,
    move_duck,
    move_from,
    move_to,
    with_duck,
)

MAX_FULL_MOVES = MAX_MOVES * 64
DEFAULT_HASH_MB = 64
MAX_HASH_MB = 4096
# the search's selective pieces, (developer option name, the searcher's name for it): each is
# in the search because a self-play SPRT accepted it, and is on; all off is the exact search
SELECTIVE_PIECES = (
    ("Late Move Reductions", "lmr"),
    ("Null Move Pruning", "null"),
    ("Delta Pruning", "delta"),
    ("Losing Capture Pruning", "losing"),
    ("Quiescence Recaptures", "recaptures"),
    ("Razoring", "razor"),
)


def _selective_option(name: str, piece: str) -> Option:
    return Option(name, "check", True,
                  apply=lambda searcher, on: searcher.set_selective(piece, on))


OPTIONS = (  # applied to a `searcher.DuckSearcher`
    hash_option(DEFAULT_HASH_MB, MAX_HASH_MB),
    THREADS_OPTION,
)
# a switch per selective piece, to measure one off against the search (an SPRT); listed only
# with developer options on (`mallard.engines.base.DEV_OPTIONS_VARIABLE`)
DEV_OPTIONS = tuple(_selective_option(*piece) for piece in SELECTIVE_PIECES)


def _kernels():
    # numba: the registry imports the rules, and listing the games must not load the compiler
    from mallard.engines.duck import kernels

    return kernels


class DuckEnd(EndReason):
    KING_CAPTURED = "king captured"
    NO_LEGAL_MOVE = "no legal move (the side that cannot move wins)"
    FIFTY_MOVES = "fifty-move rule"
    THREEFOLD_REPETITION = "threefold repetition"


class DuckPosition(Position):
    __slots__ = ("game", "state", "history", "_piece_moves", "_full_moves")

    def __init__(self, game: "DuckGame", state: np.ndarray, history: tuple = ()):
        self.game = game
        self.state = state
        self.state.flags.writeable = False
        self.history = history  # the `place` of each earlier position, oldest first
        self._piece_moves = None
        self._full_moves = None

    # --- board queries --------------------------------------------------------------------------
    @property
    def side_to_move(self) -> int:
        return int(self.state[S_SIDE])

    @property
    def ply(self) -> int:
        return len(self.history)

    @property
    def duck(self) -> Optional[int]:
        duck = int(self.state[S_DUCK])
        return None if duck < 0 else duck

    @property
    def halfmove_clock(self) -> int:
        return int(self.state[S_HALFMOVE])

    @property
    def key(self) -> int:
        """Repetition key: the duck-free Zobrist key and the duck's term."""
        return int(_kernels().full_key(self.state))

    @property
    def place(self) -> tuple[int, int]:
        """What a repetition compares: (the duck-free Zobrist key, the duck square, -1 for
        none)."""
        return int(self.state[S_KEY]), int(self.state[S_DUCK])

    def piece_moves(self) -> np.ndarray:
        """The legal piece moves (without duck squares)."""
        if self._piece_moves is None:
            buffer = np.empty(MAX_MOVES, dtype=np.int64)
            count = _kernels().generate_piece_moves(self._scratch_state(), buffer, 0,
                                                    self.state[S_DUCK])
            self._piece_moves = buffer[:count]
        return self._piece_moves

    # --- Position interface ---------------------------------------------------------------------
    def legal_moves(self) -> list:
        if self._full_moves is None:
            buffer = np.empty(MAX_FULL_MOVES, dtype=np.int64)
            count = _kernels().generate_full_moves(self._scratch_state(), _undo(), buffer)
            self._full_moves = buffer[:count].tolist()
        return self._full_moves

    def _scratch_state(self) -> np.ndarray:
        """A writable copy for the kernels (a read-only array would compile them once more)."""
        state = self.state.copy()
        state[S_DEPTH] = 0
        return state

    def play(self, move: int) -> "DuckPosition":
        move = int(move)
        if not move & MOVE_DUCK:
            raise MoveError(f"'{notation.format_uci(move)}' has no duck square")
        piece = move & PIECE_MOVE_MASK
        if piece not in self.piece_moves():
            raise MoveError(f"'{notation.format_uci(move)}' is not a legal move here")
        duck = move_duck(move)
        kernels = _kernels()
        state = self._scratch_state()
        kernels.push_piece_move(state, _undo(), piece)
        if duck & 0x88 or state[duck] != 0 or duck == self.state[S_DUCK]:
            raise MoveError(self._duck_error(piece, duck, state))
        kernels.drop_duck(state, duck)
        state[S_DEPTH] = 0
        return DuckPosition(self.game, state, self.history + (self.place,))

    def _duck_error(self, piece: int, duck: int, after: np.ndarray) -> str:
        text = notation.format_piece_uci(piece)
        if duck & 0x88:
            return f"'{text}': duck square {duck} is off the board"
        name = SQUARE_NAMES[duck]
        if duck == self.state[S_DUCK]:
            return f"'{text},{name}': the duck must move, it already stands on {name}"
        return f"'{text},{name}': the duck cannot go to {name}, which is occupied after the move"

    def result(self, claim_draw: bool = False) -> Optional[GameResult]:
        side = self.side_to_move
        if self.state[S_KING + side] < 0:
            return GameResult(1 - side, DuckEnd.KING_CAPTURED)
        if len(self.piece_moves()) == 0:
            return GameResult(side, DuckEnd.NO_LEGAL_MOVE)
        if claim_draw:
            if self.is_fifty_moves():
                return GameResult(None, DuckEnd.FIFTY_MOVES)
            if self.is_repetition(3):
                return GameResult(None, DuckEnd.THREEFOLD_REPETITION)
        return None

    def is_fifty_moves(self) -> bool:
        """Whether the 50-move rule may be claimed (100 plies without pawn move or capture)."""
        return self.halfmove_clock >= 100

    def repetition_count(self) -> int:
        """How often this position (duck included) has stood on the board since the root."""
        return 1 + self.history.count(self.place)

    def is_repetition(self, count: int = 3) -> bool:
        return self.repetition_count() >= count

    def fen(self) -> str:
        return notation.format_fen(self.state)

    def board_text(self) -> str:
        """The board as Stockfish's `d` draws it: White's pieces upper case, the duck `*`."""
        rule = " +---+---+---+---+---+---+---+---+"
        lines = [rule]
        for rank_number, rank in zip(range(8, 0, -1), self.fen().split()[0].split("/")):
            cells = "".join(" " * int(char) if is_number(char) else char for char in rank)
            lines.append(" | " + " | ".join(cells) + f" | {rank_number}")
            lines.append(rule)
        lines.append("   a   b   c   d   e   f   g   h")
        return "\n".join(lines)

    def parse_move(self, text: str) -> int:
        """A legal full move from the UCI form (`e2e4,e4d5`) or SAN (`e4,d5`)."""
        if not isinstance(text, str):
            raise MoveError(f"{text!r} is not a move text")
        text = text.strip()
        if self.result() is not None:
            raise MoveError(f"'{text}': the game is over ({self.result().reason})")
        legal = self.piece_moves()
        if notation.UCI_PATTERN.match(text):
            piece, duck = notation.parse_uci(text, legal, self.state)
        else:
            piece, duck = notation.parse_san(text, legal, self.state)
        if duck is None:
            raise MoveError(f"'{text}' has no duck square: write it as "
                            f"{notation.format_piece_uci(piece)},{SQUARE_NAMES[move_to(piece)]}"
                            "<square>")
        move = with_duck(piece, duck)
        self.play(move)  # validates the duck square
        return move

    def format_move(self, move: int) -> str:
        return notation.format_uci(int(move))

    def san(self, move: int) -> str:
        return notation.format_san(int(move), self.piece_moves(), self.state)

    def pgn_move(self, move: int) -> str:
        return self.san(move)

    # --- perft ----------------------------------------------------------------------------------
    def perft(self, depth: int, bulk: bool = True) -> int:
        """Leaves of the full-move tree (a king gone or no move: no children). With `bulk` the
        last ply is counted from the piece moves instead of being played."""
        if not 0 <= depth < MAX_PLY:
            raise ValueError(f"perft depth must be between 0 and {MAX_PLY - 1}")
        buffers = _perft_buffers()
        return int(_kernels().perft(self._scratch_state(), *buffers, 0, depth, bulk))

    def divide(self, depth: int, bulk: bool = True) -> list[tuple[int, int]]:
        """(root full move, perft(depth - 1) below it) for every legal move."""
        if not 1 <= depth < MAX_PLY:
            raise ValueError(f"divide depth must be between 1 and {MAX_PLY - 1}")
        undo, moves = _perft_buffers()
        out_moves = np.empty(MAX_FULL_MOVES, dtype=np.int64)
        out_counts = np.empty(MAX_FULL_MOVES, dtype=np.int64)
        count = _kernels().perft_divide(self._scratch_state(), undo, moves, depth, bulk,
                                        out_moves, out_counts)
        return list(zip(out_moves[:count].tolist(), out_counts[:count].tolist()))

    def __repr__(self) -> str:
        return f"DuckPosition('{self.fen()}')"

    def __eq__(self, other) -> bool:
        return isinstance(other, DuckPosition) and self.fen() == other.fen()

    def __hash__(self) -> int:
        return hash(self.fen())


def _perft_buffers() -> tuple[np.ndarray, np.ndarray]:
    return (np.zeros(MAX_PLY * UNDO_SIZE, dtype=np.int64),
            np.zeros(MAX_PLY * MAX_MOVES, dtype=np.int64))


def _undo() -> np.ndarray:
    return np.zeros(2 * UNDO_SIZE, dtype=np.int64)


class DuckGame(Game):
    variant = "duck"

    def start_position(self) -> DuckPosition:
        return DuckPosition(self, notation.parse_fen(notation.START_FEN))

    def parse_position(self, text: str) -> DuckPosition:
        text = text.strip()
        if text == "startpos":
            return self.start_position()
        return DuckPosition(self, notation.parse_fen(text))


__all__ = ["DuckGame", "DuckPosition", "PositionError", "MoveError", "move_from", "move_to"]
