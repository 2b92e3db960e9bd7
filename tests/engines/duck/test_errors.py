"""Every bad FEN and bad move gets a clear error naming the problem; nothing else escapes."""

import pyffish
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mallard.engines.base import MoveError, PositionError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

BAD_FENS = [
    ("", "empty FEN"),
    ("   ", "empty FEN"),
    ("rnbqkbnr/pppppppp/8/3**3/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "2 ducks (d5, e5)"),
    ("rnbqkbnr/pppppppp/*7/8/8/7*/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "2 ducks (a6, h3)"),
    ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "rank 7 ('ppppppppp') has 9"),
    ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "rank 7 ('ppppppp') has 7"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "rank 6 ('9') has 9"),
    ("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "has 7 ranks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "has 9 ranks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "unknown piece letter 'X'"),
    ("rnbqkbnr/pppppppp/8/3d4/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "unknown piece letter 'd'"),
    ("Pnbqkbnr/pppppppp/8/8/8/8/1PPPPPPP/RNBQKBNR w KQkq - 0 1", "pawn on a8"),
    ("rnbqkbnr/1ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNp w KQkq - 0 1", "pawn on h1"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move 'x'"),
    ("4k3/8/8/8/8/8/8/4K2R w KQ - 0 1", "castling right 'Q' needs the white king on e1 and "
                                        "a rook on a1"),
    ("r3k2r/8/8/8/8/8/8/R4K1R w K - 0 1", "castling right 'K' needs the white king on e1"),
    ("r3k1r1/8/8/8/8/8/8/R3K2R w k - 0 1", "castling right 'k' needs the black king on e8 and "
                                           "a rook on h8"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkx - 0 1", "unknown castling letter 'x'"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KK - 0 1", "castling letter 'K' appears twice"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d3 0 1", "en-passant square d3 is not on rank 6"),
    ("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "en-passant square e6 needs an empty e6 and e7 and a "
                                       "black pawn on e5"),
    ("4k3/4p3/8/3pP3/8/8/8/4K3 w - d6 0 1", None),  # valid: the pawn sits on e7, not d7
    ("4k3/3p4/8/3pP3/8/8/8/4K3 w - d6 0 1", "needs an empty d6 and d7"),
    ("4k3/8/3*4/3pP3/8/8/8/4K3 w - d6 0 1", "en-passant square d6 holds the duck"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - z9 0 1", "en-passant field 'z9' is not a square"),
    ("4k3/8/8/8/8/8/8/4K3 w - - x 1", "half-move clock 'x'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - -1 1", "half-move clock '-1'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 abc", "full-move number 'abc'"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 7", "FEN has 7 fields"),
    ("8/8/8/8/8/8/8/4K3 w - - 0 1", "Black has no king but is not to move"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "neither side has a king"),
    ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "White has 2 kings"),
    # pyffish and python-chess refuse it; it was read as 4 + 4 empty squares
    ("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "two digits in a row"),
]


@pytest.mark.parametrize("fen,message", BAD_FENS)
def test_bad_fen_is_rejected_with_a_message_naming_the_problem(game, fen, message):
    if message is None:
        game.parse_position(fen)
        return
    with pytest.raises(PositionError) as error:
        game.parse_position(fen)
    assert message in str(error.value)


def test_side_to_move_without_a_king_is_a_finished_game(game):
    position = game.parse_position("4k3/8/8/8/8/8/8/8 w - - 0 1")
    assert position.legal_moves() == []
    assert position.result().winner == 1 and position.result().reason == "king captured"


@pytest.mark.parametrize("fen", [
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",  # nobody can take: dropped
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3",     # counters missing
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 0",  # full-move 0
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
])
def test_accepted_fens_are_normalised_as_fairy_stockfish_does(game, fen):
    assert game.parse_position(fen).fen() == pyffish.get_fen("duck", fen, [])


BAD_MOVES = [
    (START, "e2e4", "has no duck square: write it as e2e4,e4<square>"),
    (START, "e4", "has no duck square"),
    (START, "e2e5,e5d5", "is not a legal piece move"),
    (START, "e3e4,e4d5", "no white piece on e3"),
    (START, "e7e5,e5d4", "no white piece on e7"),
    (START, "e2e4,d5d6", "must start at the piece's target e4"),
    (START, "e2e4,e4e4", "occupied after the move"),
    (START, "e2e4,e4e7", "occupied after the move"),
    (START, "xyz", "neither a UCI"),
    (START, "", "neither a UCI"),
    (START, "e2e4,e4z9", "neither a UCI"),
    (START, "Nf6,e5", "not a legal move"),
    (START, "Ke2,e5", "not a legal move"),
    ("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8,a8b1", "needs the piece letter"),
    ("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "Nd2,a5", "ambiguous (b1d2, f1d2)"),
    ("4k3/8/8/3*4/8/8/8/4K3 w - - 0 1", "e1e2,e2d5", "the duck must move"),
    ("4k3/8/8/8/8/8/8/4RK1* w - - 0 1", "Rxe8,a3", None),
    ("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1", "e8e6,e6e5", "not a legal piece move"),
    ("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1", "e8e7,e7e6", None),  # into attack: no check rule
]


@pytest.mark.parametrize("fen,text,message", BAD_MOVES)
def test_bad_move_is_rejected_with_a_message(game, fen, text, message):
    position = game.parse_position(fen)
    if message is None:
        position.parse_move(text)
        return
    with pytest.raises(MoveError) as error:
        position.parse_move(text)
    assert message in str(error.value)


def test_play_rejects_moves_from_another_position(game):
    start = game.start_position()
    other = game.parse_position("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    with pytest.raises(MoveError):
        start.play(other.parse_move("h1h8,h8a1"))
    with pytest.raises(MoveError, match="no duck square"):
        start.play(start.parse_move("e2e4,e4d5") & 0xFFFFF)


def test_play_text_names_the_failing_move_and_keeps_nothing_half_done(game):
    start = game.start_position()
    with pytest.raises(MoveError, match="move 2 'e7e5'"):
        start.play_text(["e2e4,e4d5", "e7e5", "g1f3,f3e5"])
    assert start.fen() == START


FEN_ALPHABET = st.sampled_from(list("rnbqkpRNBQKP*12345678/ wb-KQkqe36x0"))


@settings(max_examples=400, deadline=None)
@given(st.text(FEN_ALPHABET, max_size=70))
def test_arbitrary_fen_text_parses_or_raises_position_error(text):
    from mallard.engines.duck.rules import DuckGame

    game = DuckGame()
    try:
        position = game.parse_position(text)
    except PositionError:
        return
    assert game.parse_position(position.fen()).fen() == position.fen()


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(list("abcdefgh12345678,xO-=NBRQK@ ")), max_size=14))
def test_arbitrary_move_text_parses_or_raises_move_error(text):
    from mallard.engines.duck.rules import DuckGame

    position = DuckGame().parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    try:
        move = position.parse_move(text)
    except MoveError:
        return
    assert move in position.legal_moves()
