"""Duck Chess for python-chess users: `DuckMove`, `DuckBoard` and `DuckGameBuilder` (issue 18).

python-chess drives UCI engines (`chess.engine`) and reads and writes PGN (`chess.pgn`) through
its `Board` and `Move` classes. This module gives it Duck Chess without changing python-chess:

- `DuckMove` is a `chess.Move` that also carries the duck's square; `uci()` is Fairy-Stockfish's
  `e2e4,e4d5` (`b7b8q,b8a1`, castling as the king's move `e1g1,g1e1`).
- `DuckBoard` is a `chess.Board` whose rules are ours (`mallard.engines.duck.rules`), never
  python-chess's chess legality: no check, a captured king loses, a side without a move wins
  (fowling), the 50-move rule and threefold repetition (the duck's square counted) are draws a
  player may claim. Its class attribute `uci_variant = "duck"` makes `chess.engine` send
  `UCI_Variant duck`, and `parse_uci`/`push_uci` read the engines' `info pv`/`bestmove` moves.
  Methods of `chess.Board` that mean nothing here (check, pins, EPD, Chess960, xboard moves) raise
  `DuckChessUnsupported`.
- Importing the module registers `DuckBoard` with `chess.variant.find_variant` (the list
  python-chess reads `[Variant "..."]` tags from), so `chess.pgn` builds a `DuckBoard` for a duck
  game and `chess.pgn.Game.from_board(board)` writes `[Variant "duck"]` PGN.
- `DuckGameBuilder` is the visitor for `chess.pgn.read_game`: python-chess's PGN tokenizer splits
  `e4,d5` at the comma, so the visitor joins each piece token with the duck token after it.

Invariants of a `DuckBoard`: python-chess's own fields (bitboards, turn, castling rights, en
passant square, counters) and `duck` describe the position; the duck never stands on a piece.
The rules' position is derived from them on demand and cached under a key of those fields, so
a field changed by hand is seen at the next question. The en-passant square is kept the way
Fairy-Stockfish writes it (only when a pawn of the side to move can take there), so `fen()` is
pyffish's FEN. Every pushed move is legal: `push` raises `IllegalMoveError` otherwise.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterator, Optional

import chess
import chess.pgn
import chess.svg
import chess.variant

from mallard.engines.base import MoveError, PositionError, is_number
from mallard.engines.duck import notation
from mallard.engines.duck.board import (
    S_CASTLE,
    S_DUCK,
    S_EP,
    S_FULLMOVE,
    S_HALFMOVE,
    S_SIDE,
    with_duck,
)
from mallard.engines.duck.rules import DuckGame, DuckPosition

VARIANT = "duck"
_GAME = DuckGame()
_CASTLING_CORNERS = (("K", chess.BB_H1), ("Q", chess.BB_A1), ("k", chess.BB_H8), ("q", chess.BB_A8))
_CASTLING_BITS = ((1, chess.BB_H1), (2, chess.BB_A1), (4, chess.BB_H8), (8, chess.BB_A8))


def _to_0x88(square: chess.Square) -> int:
    return (square >> 3) << 4 | (square & 7)


def _from_0x88(square: int) -> chess.Square:
    return (square >> 4) << 3 | (square & 7)


_SQUARE_64 = {_to_0x88(square): square for square in chess.SQUARES}


class DuckChessUnsupported(NotImplementedError):
    """A `chess.Board` method with no meaning in Duck Chess was called."""


def _unsupported(name: str, why: str):
    def method(self, *args, **kwargs):
        raise DuckChessUnsupported(f"DuckBoard.{name}: {why}")

    method.__name__ = name
    method.__doc__ = f"Not available in Duck Chess: {why}."
    return method


# --- moves -------------------------------------------------------------------------------------

@dataclasses.dataclass(unsafe_hash=True)
class DuckMove(chess.Move):
    """A piece move plus the square the duck is put on (`None` only while a move is incomplete,
    for example a bare `e2e4` read by `from_uci`; such a move is never legal)."""

    duck: Optional[chess.Square] = None

    def uci(self) -> str:
        piece = super().uci()
        if self.duck is None or not self or self.drop:
            return piece
        return f"{piece},{chess.SQUARE_NAMES[self.to_square]}{chess.SQUARE_NAMES[self.duck]}"

    def __repr__(self) -> str:
        return f"DuckMove.from_uci({self.uci()!r})"

    @classmethod
    def from_uci(cls, uci: str) -> "DuckMove":
        """Reads `e2e4,e4d5` (also the short `e2e4,d5`); InvalidMoveError when malformed."""
        piece_text, comma, duck_text = uci.partition(",")
        move = super().from_uci(piece_text)
        if not comma:
            return move
        if not move or move.drop:
            raise chess.InvalidMoveError(f"invalid duck uci (no piece move before the duck): "
                                         f"{uci!r}")
        target = chess.SQUARE_NAMES[move.to_square]
        if len(duck_text) == 4 and duck_text[:2] != target:
            raise chess.InvalidMoveError(f"invalid duck uci: the duck part of {uci!r} must start "
                                         f"at the piece's target {target}")
        duck_name = duck_text[2:] if len(duck_text) == 4 else duck_text
        if duck_name not in chess.SQUARE_NAMES:
            raise chess.InvalidMoveError(f"invalid duck uci (bad duck square): {uci!r}")
        return dataclasses.replace(move, duck=chess.SQUARE_NAMES.index(duck_name))


def _duck_move(move: int) -> DuckMove:
    """The `DuckMove` of a full move in the encoding of `mallard.engines.duck.board`."""
    promotion = (move >> 14) & 7
    duck = (move >> 20) & 0x7F
    return DuckMove(_SQUARE_64[move & 0x7F], _SQUARE_64[(move >> 7) & 0x7F],
                    promotion or None, None, _SQUARE_64[duck])


class _Rules:
    """The rules' view of one board position, with its legal moves computed on first use."""

    __slots__ = ("position", "_moves", "_full_moves", "_piece_moves")

    def __init__(self, position: DuckPosition):
        self.position = position
        self._moves = None
        self._full_moves = None
        self._piece_moves = None

    def over(self) -> bool:
        return self.position.result() is not None

    def full_moves(self) -> frozenset:
        if self._full_moves is None:
            self._full_moves = frozenset() if self.over() else \
                frozenset(self.position.legal_moves())
        return self._full_moves

    def count(self) -> int:
        return 0 if self.over() else len(self.position.legal_moves())

    def moves(self) -> tuple:
        if self._moves is None:
            self._moves = () if self.over() else \
                tuple(_duck_move(move) for move in self.position.legal_moves())
        return self._moves

    def encode(self, move: chess.Move) -> Optional[int]:
        """The full move of a `DuckMove`, None when it names no piece move of this position."""
        if not isinstance(move, DuckMove) or move.duck is None or move.drop or not move:
            return None
        if self._piece_moves is None:
            self._piece_moves = {}
            for piece in self.position.piece_moves().tolist():
                key = (_SQUARE_64[piece & 0x7F], _SQUARE_64[(piece >> 7) & 0x7F],
                       (piece >> 14) & 7)
                self._piece_moves[key] = piece
        piece = self._piece_moves.get((move.from_square, move.to_square, move.promotion or 0))
        return None if piece is None else with_duck(piece, _to_0x88(move.duck))


class _DuckBoardState(chess._BoardState):
    """python-chess's saved position plus the duck, the rules' view and the repetition key."""

    def __init__(self, board: "DuckBoard", rules: _Rules, cache_key: tuple) -> None:
        super().__init__(board)
        self.duck = board.duck
        self.rules = rules
        self.cache_key = cache_key
        self.repetition_key = rules.position.key

    def restore(self, board: chess.Board) -> None:
        super().restore(board)
        board._duck = self.duck
        board._rules_cache = (self.cache_key, self.rules)


class _DuckLegalMoves(chess.LegalMoveGenerator):
    def __bool__(self) -> bool:
        return self.board._rules().count() > 0

    def count(self) -> int:
        return self.board._rules().count()


# --- the board -----------------------------------------------------------------------------------

class DuckBoard(chess.Board):
    """A `chess.Board` playing Duck Chess by the rules of `mallard.engines.duck` (see the module
    text).

    `duck` is the duck's square (`None` before the first move); the FEN writes it `*`.
    """

    aliases = ["duck", "Duck", "Duck Chess", "DuckChess"]
    uci_variant = VARIANT
    xboard_variant = None
    starting_fen = chess.STARTING_FEN
    tbw_suffix = tbz_suffix = pawnless_tbw_suffix = pawnless_tbz_suffix = None
    tbw_magic = tbz_magic = pawnless_tbw_magic = pawnless_tbz_magic = None

    def __init__(self, fen: Optional[str] = chess.STARTING_FEN, *, chess960: bool = False) -> None:
        if chess960:
            raise ValueError("Duck Chess is played from standard castling rules; chess960 is not "
                             "supported")
        self._duck: Optional[chess.Square] = None
        self._rules_cache: Optional[tuple] = None
        super().__init__(fen, chess960=False)

    # --- the duck and the rules' view --------------------------------------------------------
    @property
    def duck(self) -> Optional[chess.Square]:
        return self._duck

    def set_duck(self, square: Optional[chess.Square]) -> None:
        """Puts the duck on an empty `square` (None takes it off) and clears the move stack."""
        if square is not None:
            if square not in chess.SQUARES:
                raise ValueError(f"duck square {square!r} is not a square")
            piece = self.piece_at(square)
            if piece is not None:
                raise ValueError(f"the duck cannot stand on {chess.SQUARE_NAMES[square]}: it is "
                                 f"occupied by {chess.COLOR_NAMES[piece.color]} "
                                 f"{chess.piece_name(piece.piece_type)}")
        self._duck = square
        self.clear_stack()

    def _cache_key(self) -> tuple:
        return (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
                self.occupied_co[chess.WHITE], self.occupied_co[chess.BLACK], self.turn,
                self.castling_rights, self.ep_square, self.halfmove_clock, self.fullmove_number,
                self._duck)

    def _rules(self) -> _Rules:
        """The rules' view of the current fields; ValueError when they are no Duck Chess
        position."""
        key = self._cache_key()
        cache = self._rules_cache
        if cache is not None and cache[0] == key:
            return cache[1]
        fen = self._plain_fen()
        try:
            state = notation.parse_fen(fen)
        except PositionError as error:
            raise ValueError(f"not a valid Duck Chess position ({fen}): {error}") from None
        rules = _Rules(DuckPosition(_GAME, state))
        self._rules_cache = (key, rules)
        return rules

    def _load(self, state) -> None:
        """Sets every field from a state array of `mallard.engines.duck.board`."""
        board = state[:128].tolist()
        bitboards = [0] * 7
        colours = [0, 0]
        for square_88, square in _SQUARE_64.items():
            piece = board[square_88]
            if piece:
                bit = 1 << square
                bitboards[piece & 7] |= bit
                colours[piece >> 3] |= bit
        (self.pawns, self.knights, self.bishops, self.rooks, self.queens,
         self.kings) = bitboards[1:]
        self.occupied_co[chess.WHITE], self.occupied_co[chess.BLACK] = colours
        self.occupied = colours[0] | colours[1]
        self.promoted = chess.BB_EMPTY
        self.turn = int(state[S_SIDE]) == 0
        rights = int(state[S_CASTLE])
        self.castling_rights = 0
        for bit, corner in _CASTLING_BITS:
            if rights & bit:
                self.castling_rights |= corner
        ep = int(state[S_EP])
        self.ep_square = None if ep < 0 else _SQUARE_64[ep]
        self.halfmove_clock = int(state[S_HALFMOVE])
        self.fullmove_number = int(state[S_FULLMOVE])
        duck = int(state[S_DUCK])
        self._duck = None if duck < 0 else _SQUARE_64[duck]

    def _placement(self) -> str:
        rows = []
        for rank in range(7, -1, -1):
            row, empty = "", 0
            for file in range(8):
                square = chess.square(file, rank)
                piece = self.piece_at(square)
                symbol = "*" if square == self._duck else piece.symbol() if piece else ""
                if not symbol:
                    empty += 1
                    continue
                row += (str(empty) if empty else "") + symbol
                empty = 0
            rows.append(row + (str(empty) if empty else ""))
        return "/".join(rows)

    def _plain_fen(self) -> str:
        """The FEN of the fields as they stand, without validation."""
        castling = "".join(letter for letter, corner in _CASTLING_CORNERS
                           if self.castling_rights & corner) or "-"
        ep = chess.SQUARE_NAMES[self.ep_square] if self.ep_square is not None else "-"
        side = "w" if self.turn == chess.WHITE else "b"
        return f"{self._placement()} {side} {castling} {ep} {self.halfmove_clock} " \
               f"{self.fullmove_number}"

    # --- setting up ------------------------------------------------------------------------------
    def reset_board(self) -> None:
        self._duck = None
        super().reset_board()

    def clear_board(self) -> None:
        self._duck = None
        super().clear_board()

    def set_fen(self, fen: str) -> None:
        """Sets a Duck Chess FEN (`*` is the duck); ValueError names the first problem."""
        if not isinstance(fen, str):
            raise ValueError(f"a Duck Chess FEN is a string, not {fen!r}")
        try:
            state = notation.parse_fen(fen)
        except PositionError as error:
            raise ValueError(f"invalid Duck Chess FEN {fen!r}: {error}") from None
        self._load(state)
        self.clear_stack()
        self._rules_cache = (self._cache_key(), _Rules(DuckPosition(_GAME, state)))

    def fen(self, *, shredder: bool = False, en_passant: chess.EnPassantSpec = "legal",
            promoted: Optional[bool] = None) -> str:
        """The FEN as Fairy-Stockfish writes it (en passant only when a pawn can take there;
        `en_passant` and `promoted` change nothing). A board that is no valid position yet (say
        after `clear()`) gets the FEN of its fields as they stand."""
        if shredder:
            raise DuckChessUnsupported("DuckBoard.fen: Shredder-FEN castling is for Chess960, "
                                       "which Duck Chess does not play")
        try:
            return notation.format_fen(self._rules().position.state)
        except ValueError:
            return self._plain_fen()

    def board_fen(self, *, promoted: Optional[bool] = False) -> str:
        return self._placement()

    def set_board_fen(self, fen: str) -> None:
        """The placement field with at most one `*` (the duck)."""
        if not isinstance(fen, str):
            raise ValueError(f"a board FEN is a string, not {fen!r}")
        fen = fen.strip()
        duck = None
        rows = fen.split("/")
        if fen.count("*") > 1:
            raise ValueError(f"board FEN {fen!r} has {fen.count('*')} ducks; there is one duck")
        if fen.count("*") == 1 and len(rows) == 8:
            row = next(index for index, text in enumerate(rows) if "*" in text)
            before, after = rows[row].split("*")
            file = sum(int(char) if is_number(char) else 1 for char in before)
            duck = chess.square(file, 7 - row)
            rows[row] = re.sub(r"\d+", lambda digits: str(sum(map(int, digits.group()))),
                               f"{before}1{after}")  # the duck's square is empty for python-chess
        super().set_board_fen("/".join(rows))
        self._duck = duck

    def set_piece_at(self, square: chess.Square, piece: Optional[chess.Piece],
                     promoted: bool = False) -> None:
        if piece is not None and square == self._duck:
            raise ValueError(f"{chess.SQUARE_NAMES[square]} holds the duck; move the duck first "
                             "(set_duck)")
        super().set_piece_at(square, piece, promoted=promoted)

    def set_piece_map(self, pieces) -> None:
        if self._duck is not None and self._duck in pieces:
            raise ValueError(f"{chess.SQUARE_NAMES[self._duck]} holds the duck; move the duck "
                             "first (set_duck)")
        super().set_piece_map(pieces)

    def apply_transform(self, f) -> None:
        super().apply_transform(f)
        if self._duck is not None:
            self._duck = chess.msb(f(chess.BB_SQUARES[self._duck]))

    def copy(self, *, stack: bool | int = True) -> "DuckBoard":
        board = super().copy(stack=stack)
        board._duck = self._duck
        board._rules_cache = self._rules_cache
        return board

    def is_valid(self) -> bool:
        """Whether the fields are a Duck Chess position our rules (and Fairy-Stockfish) accept."""
        try:
            self._rules()
        except ValueError:
            return False
        return True

    # --- moves -----------------------------------------------------------------------------------
    @property
    def legal_moves(self) -> chess.LegalMoveGenerator:
        return _DuckLegalMoves(self)

    @property
    def pseudo_legal_moves(self) -> chess.LegalMoveGenerator:
        return _DuckLegalMoves(self)  # no check in Duck Chess: every pseudo-legal move is legal

    def generate_legal_moves(self, from_mask: chess.Bitboard = chess.BB_ALL,
                             to_mask: chess.Bitboard = chess.BB_ALL) -> Iterator[DuckMove]:
        moves = self._rules().moves()
        if from_mask == chess.BB_ALL and to_mask == chess.BB_ALL:
            return iter(moves)
        return (move for move in moves if chess.BB_SQUARES[move.from_square] & from_mask
                and chess.BB_SQUARES[move.to_square] & to_mask)

    generate_pseudo_legal_moves = generate_legal_moves

    def generate_legal_captures(self, from_mask: chess.Bitboard = chess.BB_ALL,
                                to_mask: chess.Bitboard = chess.BB_ALL) -> Iterator[DuckMove]:
        return (move for move in self.generate_legal_moves(from_mask, to_mask)
                if self.is_capture(move))

    generate_pseudo_legal_captures = generate_legal_captures

    def generate_legal_ep(self, from_mask: chess.Bitboard = chess.BB_ALL,
                          to_mask: chess.Bitboard = chess.BB_ALL) -> Iterator[DuckMove]:
        return (move for move in self.generate_legal_moves(from_mask, to_mask)
                if self.is_en_passant(move))

    generate_pseudo_legal_ep = generate_legal_ep

    def has_legal_en_passant(self) -> bool:
        """Asked by python-chess's `==` too, so an unfinished board answers False."""
        if self.ep_square is None or not self.is_valid():
            return False
        return any(self.generate_legal_ep())

    has_pseudo_legal_en_passant = has_legal_en_passant

    def is_legal(self, move: chess.Move) -> bool:
        rules = self._rules()
        full = rules.encode(move)
        return full is not None and full in rules.full_moves()

    is_pseudo_legal = is_legal

    def _illegal(self, move: chess.Move, rules: _Rules) -> chess.IllegalMoveError:
        """The error for an illegal `move`, with the rules' reason."""
        text = move.uci() if isinstance(move, chess.Move) else repr(move)
        if not isinstance(move, chess.Move):
            reason = "not a move"
        elif not move:
            reason = "Duck Chess has no null move"
        elif move.drop:
            reason = "Duck Chess has no drops"
        elif not isinstance(move, DuckMove) or move.duck is None:
            reason = "a Duck Chess move also places the duck (e2e4,e4d5)"
        else:
            result = rules.position.result()
            if result is not None:
                reason = f"the game is over ({result.reason})"
            else:
                try:
                    rules.position.parse_move(text)
                    reason = "not a legal move here"
                except MoveError as error:
                    reason = str(error)
        return chess.IllegalMoveError(f"illegal duck move {text!r} in {self.fen()}: {reason}")

    def push(self, move: chess.Move) -> None:
        """Plays a legal `DuckMove`; IllegalMoveError (a ValueError) says why another is not."""
        key = self._cache_key()
        rules = self._rules()
        full = rules.encode(move)
        if full is None or full not in rules.full_moves():
            raise self._illegal(move, rules)
        after = rules.position.play(full)
        self._stack.append(_DuckBoardState(self, rules, key))
        self.move_stack.append(move)
        self._load(after.state)
        self._rules_cache = (self._cache_key(), _Rules(after))

    def parse_uci(self, uci: str) -> DuckMove:
        """A legal move from `e2e4,e4d5` (or `e2e4,d5`): InvalidMoveError when malformed,
        IllegalMoveError when not legal here."""
        move = DuckMove.from_uci(uci)
        rules = self._rules()
        full = rules.encode(move)
        if full is None or full not in rules.full_moves():
            raise self._illegal(move, rules)
        return move

    def push_uci(self, uci: str) -> DuckMove:
        move = self.parse_uci(uci)
        self.push(move)
        return move

    def uci(self, move: chess.Move, *, chess960: Optional[bool] = None) -> str:
        return move.uci()

    def san(self, move: chess.Move) -> str:
        """SAN as pyffish writes it: `e4,d5`, `Nbd7,e5`, `O-O,e7`."""
        rules = self._rules()
        full = rules.encode(move)
        if full is None or full not in rules.full_moves():
            raise self._illegal(move, rules)
        return rules.position.san(full)

    def _algebraic_and_push(self, move: chess.Move, *, long: bool = False) -> str:
        if long:
            raise DuckChessUnsupported("DuckBoard.lan: Duck Chess has no long algebraic form; "
                                       "use san() or uci()")
        san = self.san(move)
        self.push(move)
        return san

    def parse_san(self, san: str) -> DuckMove:
        """A legal move from SAN (`e4,d5`, `Nbd7,e5`, `O-O,e7`; also `e4,@d5`) or the UCI form.
        InvalidMoveError when it is no move text, AmbiguousMoveError, IllegalMoveError."""
        if not isinstance(san, str):
            raise chess.InvalidMoveError(f"a SAN move is a string, not {san!r}")
        text = san.strip().replace(",@", ",")
        if not (notation.SAN_PATTERN.match(text) or notation.UCI_PATTERN.match(text)):
            raise chess.InvalidMoveError(f"invalid duck san: {san!r} (write it like e4,d5)")
        rules = self._rules()
        try:
            full = rules.position.parse_move(text)
        except MoveError as error:
            kind = chess.AmbiguousMoveError if "ambiguous" in str(error) else \
                chess.IllegalMoveError
            raise kind(f"illegal duck san {san!r} in {self.fen()}: {error}") from None
        return _duck_move(full)

    def push_san(self, san: str) -> DuckMove:
        move = self.parse_san(san)
        self.push(move)
        return move

    # --- the result ------------------------------------------------------------------------------
    def _decided(self):
        """(termination, winner) of a finished game without claims, or None."""
        result = self._rules().position.result()
        if result is None:
            return None
        winner = chess.WHITE if result.winner == 0 else chess.BLACK
        # the side to move wins when it has no move, loses when its king was taken
        termination = chess.Termination.VARIANT_WIN if winner == self.turn else \
            chess.Termination.VARIANT_LOSS
        return termination, winner

    def is_variant_end(self) -> bool:
        return self._decided() is not None

    def is_variant_win(self) -> bool:
        decided = self._decided()
        return decided is not None and decided[1] == self.turn

    def is_variant_loss(self) -> bool:
        decided = self._decided()
        return decided is not None and decided[1] != self.turn

    def is_variant_draw(self) -> bool:
        return False

    def outcome(self, *, claim_draw: bool = False) -> Optional[chess.Outcome]:
        """King captured (`VARIANT_LOSS` of the side to move), no move (`VARIANT_WIN` of the side
        to move, fowling); with `claim_draw` also the 50-move rule and threefold repetition."""
        decided = self._decided()
        if decided is not None:
            return chess.Outcome(*decided)
        if claim_draw:
            if self.is_fifty_moves():
                return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
            if self.is_repetition(3):
                return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
        return None

    def is_fifty_moves(self) -> bool:
        """100 plies without a capture or a pawn move: a draw either player may claim."""
        return self.halfmove_clock >= 100

    can_claim_fifty_moves = is_fifty_moves

    def is_repetition(self, count: int = 3) -> bool:
        """Whether this position (the duck's square included) has stood on the board `count`
        times over the moves on the stack."""
        key = self._rules().position.key
        seen = 1 + sum(1 for state in self._stack
                       if isinstance(state, _DuckBoardState) and state.repetition_key == key)
        return seen >= count

    def can_claim_threefold_repetition(self) -> bool:
        return self.is_repetition(3)

    def can_claim_draw(self) -> bool:
        return self.is_fifty_moves() or self.is_repetition(3)

    def is_insufficient_material(self) -> bool:
        """Never: a lone king can still take the other king, and fowling wins."""
        return False

    def has_insufficient_material(self, color: chess.Color) -> bool:
        return False

    def has_chess960_castling_rights(self) -> bool:
        return False

    def _transposition_key(self):
        return (super()._transposition_key(), self._duck)

    def __str__(self) -> str:
        rows = []
        for rank in range(7, -1, -1):
            cells = []
            for file in range(8):
                square = chess.square(file, rank)
                piece = self.piece_at(square)
                cells.append("*" if square == self._duck else piece.symbol() if piece else ".")
            rows.append(" ".join(cells))
        return "\n".join(rows)

    def _repr_svg_(self) -> str:
        fill = {self._duck: "#e8c547cc"} if self._duck is not None else {}
        return chess.svg.board(board=self, size=390, fill=fill,
                               lastmove=self.peek() if self.move_stack else None)

    # --- chess.Board methods without a meaning here ---------------------------------------------
    _NO_CHECK = "Duck Chess has no check (kings are captured)"
    is_check = _unsupported("is_check", _NO_CHECK)
    is_checkmate = _unsupported("is_checkmate", _NO_CHECK + "; see outcome()")
    is_stalemate = _unsupported("is_stalemate", "a side without a move wins in Duck Chess; see "
                                "outcome()")
    checkers = _unsupported("checkers", _NO_CHECK)
    checkers_mask = _unsupported("checkers_mask", _NO_CHECK)
    gives_check = _unsupported("gives_check", _NO_CHECK)
    is_into_check = _unsupported("is_into_check", _NO_CHECK)
    was_into_check = _unsupported("was_into_check", _NO_CHECK)
    pin = _unsupported("pin", "Duck Chess has no pins (moving into check is allowed)")
    pin_mask = _unsupported("pin_mask", "Duck Chess has no pins (moving into check is allowed)")
    is_pinned = _unsupported("is_pinned", "Duck Chess has no pins (moving into check is allowed)")
    is_seventyfive_moves = _unsupported(
        "is_seventyfive_moves", "Duck Chess has no automatic draw; the 50-move rule is a claim "
        "(is_fifty_moves, outcome(claim_draw=True))")
    is_fivefold_repetition = _unsupported(
        "is_fivefold_repetition", "Duck Chess has no automatic draw; threefold repetition is a "
        "claim (is_repetition, outcome(claim_draw=True))")
    status = _unsupported("status", "python-chess's status bits are chess rules; use is_valid()")
    find_move = _unsupported("find_move", "a Duck Chess move needs the duck's square; use "
                             "parse_uci('e2e4,e4d5') or DuckMove(..., duck=square)")
    lan = _unsupported("lan", "Duck Chess has no long algebraic form; use san() or uci()")
    epd = _unsupported("epd", "EPD operations are not defined for Duck Chess; use fen()")
    set_epd = _unsupported("set_epd", "EPD operations are not defined for Duck Chess; use "
                           "set_fen()")
    xboard = _unsupported("xboard", "no xboard move form is defined for Duck Chess; use uci()")
    parse_xboard = _unsupported("parse_xboard", "no xboard move form is defined for Duck Chess")
    push_xboard = _unsupported("push_xboard", "no xboard move form is defined for Duck Chess")
    set_chess960_pos = _unsupported("set_chess960_pos", "Duck Chess is not played as Chess960")
    chess960_pos = _unsupported("chess960_pos", "Duck Chess is not played as Chess960")
    generate_castling_moves = _unsupported("generate_castling_moves", "castling is part of "
                                           "the duck moves; filter legal_moves with is_castling")

    @classmethod
    def from_epd(cls, epd: str, *, chess960: bool = False):
        raise DuckChessUnsupported("DuckBoard.from_epd: EPD operations are not defined for Duck "
                                   "Chess; use DuckBoard(fen)")

    @classmethod
    def from_chess960_pos(cls, scharnagl: int):
        raise DuckChessUnsupported("DuckBoard.from_chess960_pos: Duck Chess is not played as "
                                   "Chess960")


# --- PGN -----------------------------------------------------------------------------------------

class DuckGameBuilder(chess.pgn.GameBuilder):
    """The `Visitor` of `chess.pgn.read_game` for duck games: `[Variant "duck"]` (any alias, any
    case) makes python-chess build a `DuckBoard`; its tokenizer reads `e4,d5` as the two tokens
    `e4` and `d5` (`e4,@d5` as `e4` and `@d5`), so this visitor holds the piece token back and
    visits the joined move at the duck token. Other games are read as `GameBuilder` reads them."""

    def begin_game(self) -> None:
        super().begin_game()
        self._pending: Optional[str] = None

    def begin_parse_san(self, board: chess.Board, san: str):
        if not isinstance(board, DuckBoard) or self._pending is not None:
            return None
        self._pending = san
        return chess.pgn.SKIP

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        if not isinstance(board, DuckBoard):
            return super().parse_san(board, san)
        piece, self._pending = self._pending, None
        return board.parse_san(f"{piece},{san.lstrip('@')}")

    def _drop_pending(self) -> None:
        if self._pending is not None:
            piece, self._pending = self._pending, None
            self.handle_error(chess.IllegalMoveError(
                f"duck move {piece!r} has no duck square (write it like {piece},d5)"))

    def begin_variation(self):
        self._drop_pending()
        return super().begin_variation()

    def end_variation(self) -> None:
        self._drop_pending()
        super().end_variation()

    def visit_result(self, result: str) -> None:
        self._drop_pending()
        super().visit_result(result)

    def end_game(self) -> None:
        self._drop_pending()
        super().end_game()


def _register() -> None:
    """Makes `chess.variant.find_variant("duck")` (which `chess.pgn` asks for a `[Variant]` tag)
    answer `DuckBoard`."""
    if DuckBoard not in chess.variant.VARIANTS:
        chess.variant.VARIANTS.append(DuckBoard)


_register()

__all__ = ["VARIANT", "DuckBoard", "DuckChessUnsupported", "DuckGameBuilder", "DuckMove"]
