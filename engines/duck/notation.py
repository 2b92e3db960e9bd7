"""Duck Chess text forms: FEN with `*` for the duck, and moves in the Fairy-Stockfish UCI form
(`e2e4,e4d5`: piece move, comma, the piece's target and the duck's square) and in the SAN form
pyffish writes (`e4,d5`, `Nbd7,e5`, `exd6,d5`, `a8=Q,d6`, `O-O,e7`).

FEN parsing validates the position and normalises it the way Fairy-Stockfish does (an
en-passant square that no pawn can capture on is dropped; a missing or zero full-move number is
1), so `format_fen(parse_fen(text))` equals pyffish's `get_fen(text)` for every valid input.
All functions here work on the state array of `board.py`; none of them changes its argument.
"""

from __future__ import annotations

import re

import numpy as np

from mallard.engines.base import MoveError, PositionError, is_number
from mallard.engines.duck.board import (
    BLACK_BIT,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    KIND_CASTLE,
    KIND_EN_PASSANT,
    KING,
    PAWN,
    PIECE_LETTERS,
    PROMOTION_LETTERS,
    ROOK,
    S_CASTLE,
    S_DUCK,
    S_EP,
    S_FULLMOVE,
    S_HALFMOVE,
    S_KEY,
    S_KING,
    S_OCCUPIED,
    S_PAWNS,
    S_PIECES,
    S_PLACEMENT,
    S_SIDE,
    S_WHITE,
    SQUARE_NAMES,
    STATE_SIZE,
    move_duck,
    move_from,
    move_kind,
    move_promotion,
    move_to,
    parse_square,
    square,
    square_name,
)

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
CASTLING_LETTERS = (("K", CASTLE_WK, 0, 7), ("Q", CASTLE_WQ, 0, 0),
                    ("k", CASTLE_BK, 7, 7), ("q", CASTLE_BQ, 7, 0))
COLOUR_NAMES = ("White", "Black")


MAX_COUNTER = (1 << 31) - 1  # the move counters' range in the kernels' state


def _parse_counter(text: str, name: str) -> int:
    if not is_number(text):
        raise PositionError(f"{name} '{text}' is not a non-negative integer")
    value = int(text)
    if value > MAX_COUNTER:
        raise PositionError(f"{name} {value} is above {MAX_COUNTER}")
    return value


def parse_fen(text: str) -> np.ndarray:
    """The state array of a FEN; PositionError names the first problem found."""
    from mallard.engines.duck.bitboards import (
        board_sets,  # numba: rules load the kernels on first use
    )
    from mallard.engines.duck.evaluation import placement_sum
    from mallard.engines.duck.kernels import compute_key

    if not isinstance(text, str) or not text.strip():
        raise PositionError("empty FEN")
    fields = text.split()
    if len(fields) > 6:
        raise PositionError(f"FEN has {len(fields)} fields, at most 6 are allowed")
    fields += ["w", "-", "-", "0", "1"][len(fields) - 1:]
    placement, side_text, castling_text, ep_text, halfmove_text, fullmove_text = fields

    state = np.zeros(STATE_SIZE, dtype=np.int64)
    ducks, kings = _read_placement(placement, state)
    if side_text not in ("w", "b"):
        raise PositionError(f"side to move '{side_text}' is neither 'w' nor 'b'")
    side = 0 if side_text == "w" else 1
    _check_kings(kings, side)
    state[S_SIDE] = side
    state[S_CASTLE] = _read_castling(castling_text, state)
    state[S_EP] = _read_en_passant(ep_text, state, side, ducks)
    state[S_DUCK] = ducks[0] if ducks else -1
    state[S_HALFMOVE] = _parse_counter(halfmove_text, "half-move clock")
    state[S_FULLMOVE] = max(_parse_counter(fullmove_text, "full-move number"), 1)
    state[S_KING] = kings[0][0] if kings[0] else -1
    state[S_KING + 1] = kings[1][0] if kings[1] else -1
    state[S_KEY] = compute_key(state)
    state[S_OCCUPIED], state[S_WHITE], state[S_PAWNS] = board_sets(state)
    state[S_PLACEMENT] = placement_sum(state)
    return state


def _read_placement(placement: str, state: np.ndarray) -> tuple[list[int], list[list[int]]]:
    """Put the pieces of the placement field on `state` (and count them in S_PIECES); returns
    the duck squares and each colour's king squares."""
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise PositionError(f"piece placement has {len(ranks)} ranks, expected 8")
    ducks: list[int] = []
    kings: list[list[int]] = [[], []]
    for row, rank_text in enumerate(ranks):
        rank = 7 - row
        file = 0
        for index, char in enumerate(rank_text):
            if is_number(char):
                if index and is_number(rank_text[index - 1]):  # "44" is no count of squares
                    raise PositionError(f"rank {rank + 1} '{rank_text}' has two digits in a row")
                file += int(char)
                continue
            if file >= 8:
                file += 1
                continue
            sq = square(file, rank)
            if char == "*":
                ducks.append(sq)
            elif char in "PNBRQKpnbrqk":
                piece = PIECE_LETTERS.index(char)
                if piece & 7 == PAWN and rank in (0, 7):
                    raise PositionError(
                        f"pawn on {square_name(sq)}: pawns cannot stand on the first or last rank")
                if piece & 7 == KING:
                    kings[piece >> 3].append(sq)
                state[sq] = piece
                state[S_PIECES] += 1
            else:
                raise PositionError(f"unknown piece letter '{char}' in rank {rank + 1}")
            file += 1
        if file != 8:
            raise PositionError(f"rank {rank + 1} ('{rank_text}') has {file} squares, expected 8")
    if len(ducks) > 1:
        raise PositionError(
            f"{len(ducks)} ducks ({', '.join(square_name(sq) for sq in ducks)}); there is one duck")
    return ducks, kings


def _check_kings(kings: list[list[int]], side: int) -> None:
    """At most one king a side, and only the side to move may have lost its king."""
    for colour in (0, 1):
        if len(kings[colour]) > 1:
            raise PositionError(f"{COLOUR_NAMES[colour]} has {len(kings[colour])} kings")
    if not kings[1 - side]:
        if not kings[side]:
            raise PositionError("neither side has a king")
        raise PositionError(f"{COLOUR_NAMES[1 - side]} has no king but is not to move: "
                            "only the side to move can have lost its king")


def _read_castling(castling_text: str, state: np.ndarray) -> int:
    """The castling-rights bits; each right needs its king and rook at home."""
    rights = 0
    if castling_text == "-":
        return rights
    for char in castling_text:
        entry = next((e for e in CASTLING_LETTERS if e[0] == char), None)
        if entry is None:
            raise PositionError(f"unknown castling letter '{char}' in '{castling_text}'")
        _, bit, rank, rook_file = entry
        if rights & bit:
            raise PositionError(f"castling letter '{char}' appears twice")
        colour = 0 if char.isupper() else 1
        king_sq, rook_sq = square(4, rank), square(rook_file, rank)
        if state[king_sq] != KING + colour * BLACK_BIT or \
                state[rook_sq] != ROOK + colour * BLACK_BIT:
            raise PositionError(
                f"castling right '{char}' needs the {COLOUR_NAMES[colour].lower()} king on "
                f"{square_name(king_sq)} and a rook on {square_name(rook_sq)}")
        rights |= bit
    return rights


def _read_en_passant(ep_text: str, state: np.ndarray, side: int, ducks: list[int]) -> int:
    """The en-passant square, or -1 (also when no pawn can capture there, as Fairy-Stockfish
    writes it); the square must fit a double step just played."""
    if ep_text == "-":
        return -1
    try:
        ep = parse_square(ep_text)
    except ValueError:
        raise PositionError(f"en-passant field '{ep_text}' is not a square") from None
    expected_rank = 5 if side == 0 else 2
    step = -16 if side == 0 else 16  # from the ep square towards the pawn that moved
    pawn = PAWN + (1 - side) * BLACK_BIT
    if ep >> 4 != expected_rank:
        raise PositionError(f"en-passant square {ep_text} is not on rank {expected_rank + 1}")
    if state[ep] != 0 or state[ep - step] != 0 or state[ep + step] != pawn:
        raise PositionError(
            f"en-passant square {ep_text} needs an empty {ep_text} and "
            f"{square_name(ep - step)} and a {COLOUR_NAMES[1 - side].lower()} pawn on "
            f"{square_name(ep + step)}")
    if ducks and ducks[0] == ep:
        raise PositionError(f"en-passant square {ep_text} holds the duck, which makes the "
                            "capture impossible")
    own_pawn = PAWN + side * BLACK_BIT
    if not any(not (sq & 0x88) and state[sq] == own_pawn
               for sq in (ep + step - 1, ep + step + 1)):
        return -1
    return ep


def format_fen(state: np.ndarray) -> str:
    rows = []
    duck = int(state[S_DUCK])
    for rank in range(7, -1, -1):
        row, empty = [], 0
        for file in range(8):
            sq = square(file, rank)
            char = "*" if sq == duck else PIECE_LETTERS[state[sq]] if state[sq] else ""
            if not char:
                empty += 1
                continue
            if empty:
                row.append(str(empty))
                empty = 0
            row.append(char)
        if empty:
            row.append(str(empty))
        rows.append("".join(row))
    rights = int(state[S_CASTLE])
    castling = "".join(letter for letter, bit, _, _ in CASTLING_LETTERS if rights & bit) or "-"
    ep = square_name(int(state[S_EP])) if state[S_EP] >= 0 else "-"
    side = "wb"[int(state[S_SIDE])]
    return f"{'/'.join(rows)} {side} {castling} {ep} {int(state[S_HALFMOVE])} " \
           f"{int(state[S_FULLMOVE])}"


# --- moves -------------------------------------------------------------------------------------

def format_piece_uci(move: int) -> str:
    promotion = move_promotion(move)
    text = SQUARE_NAMES[move_from(move)] + SQUARE_NAMES[move_to(move)]
    return text + PROMOTION_LETTERS[promotion] if promotion else text


def format_uci(move: int) -> str:
    """Fairy-Stockfish form: `e2e4,e4d5` (a piece move alone is written without the comma)."""
    duck = move_duck(move)
    text = format_piece_uci(move)
    if duck < 0:
        return text
    return f"{text},{SQUARE_NAMES[move_to(move)]}{SQUARE_NAMES[duck]}"


UCI_PATTERN = re.compile(r"^([a-h][1-8])([a-h][1-8])([nbrqNBRQ]?)(?:,([a-h][1-8])([a-h][1-8])?)?$")
SAN_PATTERN = re.compile(
    r"^(?:(?P<castle>O-O-O|O-O|0-0-0|0-0)|(?P<piece>[NBRQK])?(?P<file>[a-h])?(?P<rank>[1-8])?"
    r"(?P<capture>x)?(?P<to>[a-h][1-8])(?:=?(?P<promotion>[NBRQnbrq]))?)[+#]?(?:\s*e\.p\.)?"
    r"(?:,@?(?P<duck>[a-h][1-8]))?$")


def parse_uci(text: str, piece_moves, state) -> tuple[int, int | None]:
    """(piece move, duck square or None) of a UCI-form text; MoveError when it is not legal."""
    match = UCI_PATTERN.match(text)
    if not match:
        raise MoveError(f"'{text}' is not a move in the form e2e4,e4d5")
    frm, to = parse_square(match.group(1)), parse_square(match.group(2))
    promotion = PROMOTION_LETTERS.find(match.group(3).lower()) if match.group(3) else 0
    duck = None
    if match.group(4):
        first, second = match.group(4), match.group(5)
        if second is None:
            duck = parse_square(first)
        elif parse_square(first) != to:
            raise MoveError(f"'{text}': the duck part must start at the piece's target "
                            f"{SQUARE_NAMES[to]}")
        else:
            duck = parse_square(second)
    for move in piece_moves:
        if move_from(move) == frm and move_to(move) == to and move_promotion(move) == promotion:
            return move, duck
    piece = int(state[frm])
    if not piece or piece >> 3 != int(state[S_SIDE]):
        raise MoveError(f"'{text}': no {COLOUR_NAMES[int(state[S_SIDE])].lower()} piece "
                        f"on {SQUARE_NAMES[frm]}")
    if piece & 7 == PAWN and not promotion and to >> 4 in (0, 7):
        raise MoveError(f"'{text}': a promotion needs the piece letter (q, r, b or n)")
    raise MoveError(f"'{text}' is not a legal piece move here")


def parse_san(text: str, piece_moves, state) -> tuple[int, int | None]:
    """(piece move, duck square or None) of a SAN-form text such as `Nf3,e5`."""
    match = SAN_PATTERN.match(text)
    if not match:
        raise MoveError(f"'{text}' is neither a UCI (e2e4,e4d5) nor a SAN (e4,d5) move")
    duck = parse_square(match.group("duck")) if match.group("duck") else None
    candidates = []
    if match.group("castle"):
        long_side = match.group("castle").count("-") == 2
        for move in piece_moves:
            if move_kind(move) == KIND_CASTLE and (move_to(move) < move_from(move)) == long_side:
                candidates.append(move)
    else:
        letter = match.group("piece")
        kind = PIECE_LETTERS.index(letter) if letter else PAWN
        to = parse_square(match.group("to"))
        promotion_letter = match.group("promotion")
        promotion = PROMOTION_LETTERS.find(promotion_letter.lower()) if promotion_letter else 0
        for move in piece_moves:
            frm = move_from(move)
            if move_to(move) != to or int(state[frm]) & 7 != kind or \
                    move_kind(move) == KIND_CASTLE or move_promotion(move) != promotion:
                continue
            if match.group("file") and "abcdefgh".index(match.group("file")) != frm & 7:
                continue
            if match.group("rank") and int(match.group("rank")) - 1 != frm >> 4:
                continue
            candidates.append(move)
    if len(candidates) > 1 and duck is not None:  # the duck square can settle it (see format_san)
        candidates = [m for m in candidates if state[duck] == 0 or duck == move_from(m)] or \
            candidates
    if not candidates:
        raise MoveError(f"'{text}' is not a legal move here")
    if len(candidates) > 1:
        options = ", ".join(format_piece_uci(m) for m in candidates)
        raise MoveError(f"'{text}' is ambiguous ({options})")
    return candidates[0], duck


def format_san(move: int, piece_moves, state) -> str:
    """SAN as pyffish writes it, the duck square after a comma; `piece_moves` are the legal ones."""
    frm, to, kind = move_from(move), move_to(move), move_kind(move)
    piece = int(state[frm]) & 7
    if kind == KIND_CASTLE:
        text = "O-O" if to > frm else "O-O-O"
    else:
        capture = bool(state[to]) or kind == KIND_EN_PASSANT
        target = SQUARE_NAMES[to]
        if piece == PAWN:
            text = (SQUARE_NAMES[frm][0] + "x" if capture else "") + target
            if move_promotion(move):
                text += "=" + PROMOTION_LETTERS[move_promotion(move)].upper()
        else:
            # Fairy-Stockfish disambiguates among full moves: a rival counts only when the
            # same duck square is legal after it (free, or the square the rival leaves).
            duck = move_duck(move)
            rivals = [move_from(m) for m in piece_moves
                      if move_to(m) == to and move_from(m) != frm and int(state[move_from(m)]) & 7
                      == piece and move_kind(m) != KIND_CASTLE
                      and (duck < 0 or state[duck] == 0 or duck == move_from(m))]
            qualifier = ""
            if rivals:
                if all(r & 7 != frm & 7 for r in rivals):
                    qualifier = SQUARE_NAMES[frm][0]
                elif all(r >> 4 != frm >> 4 for r in rivals):
                    qualifier = SQUARE_NAMES[frm][1]
                else:
                    qualifier = SQUARE_NAMES[frm]
            text = PIECE_LETTERS[piece] + qualifier + ("x" if capture else "") + target
    duck = move_duck(move)
    return text if duck < 0 else f"{text},{SQUARE_NAMES[duck]}"
