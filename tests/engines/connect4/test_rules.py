import random

import pyffish
import pytest

from mallard.engines import get_game
from mallard.engines.base import MoveError, PositionError
from mallard.engines.connect4.rules import Connect4Game, has_four
from tests import oracles  # noqa: F401  (loads the cfour variant into pyffish)

START = pyffish.start_fen("cfour")
GAME = Connect4Game()


def random_game(rng, game=GAME):
    position, played = game.start_position(), []
    while not position.is_over():
        column = rng.choice(position.legal_moves())
        played.append(position.format_move(column))
        position = position.play(column)
        yield position, list(played)


def test_start_fen_matches_fairy_stockfish():
    assert GAME.start_position().fen() == START
    assert GAME.parse_position(START) == GAME.start_position()


@pytest.mark.parametrize("seed", range(60))
def test_random_games_agree_with_pyffish(seed):
    rng = random.Random(seed)
    for position, played in random_game(rng):
        assert position.fen() == pyffish.get_fen("cfour", START, played)
        ours = sorted(position.format_move(c) for c in position.legal_moves())
        end, value = pyffish.is_immediate_game_end("cfour", START, played)
        theirs = [] if end else sorted(pyffish.legal_moves("cfour", START, played))
        assert ours == theirs
        if position.winner is not None:
            assert end and value < 0  # the side to move has lost
        elif position.moves == 42:
            assert not theirs and (not end or value == 0)
        else:
            assert not end
        parsed = GAME.parse_position(position.fen())
        assert parsed == position and parsed.winner == position.winner


@pytest.mark.parametrize("seed", range(20))
def test_text_forms_round_trip(seed):
    rng = random.Random(1000 + seed)
    for position, played in random_game(rng):
        if position.winner is not None:
            break
        assert GAME.parse_sequence(position.sequence()) == position
        assert GAME.parse_position(position.fen()) == position
        replay = GAME.start_position()
        for text in played:
            replay = replay.play(replay.parse_move(text))
        assert replay == position


def test_move_notations():
    position = GAME.parse_sequence("44")
    assert position.format_move(3) == "P@d3"
    assert (position.parse_move("P@d3") == 3 == position.parse_move("p@d3")
            == position.parse_move("d"))
    assert position.parse_move("4") == 3
    assert position.from_action(3) == 3 and position.to_action(3) == 3


@pytest.mark.parametrize("text, message", [
    ("P@d1", "lands on rank 3"),
    ("P@h1", "not a drop"),
    ("P@d", "not a drop"),
    ("8", "not a move"),
    ("0", "not a move"),
    ("x", "not a move"),
    ("", "not a move"),
])
def test_bad_moves(text, message):
    with pytest.raises(MoveError, match=message):
        GAME.parse_sequence("44").parse_move(text)


def test_full_column_and_finished_game():
    position = GAME.parse_sequence("444444")
    for text in ("4", "d", "P@d7"):
        with pytest.raises(MoveError):
            position.parse_move(text)
    with pytest.raises(MoveError):
        position.play(3)
    won = GAME.start_position()
    for column in (0, 1, 0, 1, 0, 1, 0):
        won = won.play(column)
    assert won.result().winner == 0 and won.legal_moves() == []
    with pytest.raises(MoveError, match="over"):
        won.parse_move("a")


@pytest.mark.parametrize("sequence, index, reason", [
    ("12x", 3, "not a column"),
    ("1280", 3, "not a column"),
    ("0", 1, "not a column"),
    ("4444444", 7, "full"),
    ("1212121", 7, "completes four"),
])
def test_bad_sequences(sequence, index, reason):
    with pytest.raises(MoveError, match=reason) as info:
        GAME.parse_sequence(sequence)
    assert info.value.index == index


def test_a_board_wider_than_nine_names_its_columns_by_letter():
    """Columns 10 and up have no digit: every column of such a board is a letter, and the
    sequence of a position reads back as that position."""
    wide = get_game("cfour", width=12, height=4)
    position = wide.parse_sequence("alj")
    assert [wide.start_position().parse_move(text) for text in "alj"] == [0, 11, 9]
    assert list(position.history) == [0, 11, 9] and position.sequence() == "alj"
    assert wide.parse_sequence(position.sequence()) == position
    with pytest.raises(MoveError, match="not a column a..l") as info:
        wide.parse_sequence("a10")
    assert info.value.index == 2


@pytest.mark.parametrize("fen, message", [
    ("7/7/7/7/7/8", "cells"),
    ("7/7/7/7/7", "ranks"),
    ("7/7/7/7/7/3x3", "unknown piece"),
    ("7/7/7/7/3P3/7", "floats"),
    ("7/7/7/7/7/PP5", "stones"),
    ("7/7/7/7/7/Pp5 b", "side to move"),
    ("7/7/7/7/7/P6 q", "not w or b"),
    ("7/7/7/7/7/P6[PP] b", "holdings"),
    ("7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp w - - x 1", "unclosed"),
    ("7/7/7/7/7/7 w - - x 1", "counter"),
    ("7/7/P6/Pp5/Pp5/Pp5 w", "side to move"),
    ("7/7/7/7/7/7 w - - 0 1 extra", "unexpected"),
    ("", "empty"),
])
def test_bad_fens(fen, message):
    with pytest.raises(PositionError, match=message):
        GAME.parse_position(fen)


def test_a_move_or_a_size_of_the_wrong_type_is_refused_with_the_games_errors():
    for move in (None, 3):
        with pytest.raises(MoveError, match="is not a move text"):
            GAME.start_position().parse_move(move)
    for width, height in ((7, 6.5), (True, 6), ("7", 6)):
        with pytest.raises(PositionError, match="sizes are whole numbers"):
            get_game("cfour", width=width, height=height)


def test_finished_fen_is_accepted_as_over():
    position = GAME.parse_position("7/7/P6/Pp5/Pp5/Pp5 b")
    assert position.result().winner == 0


@pytest.mark.parametrize("width, height", [(4, 4), (5, 4), (8, 7), (9, 6), (16, 3), (2, 31)])
def test_other_board_sizes(width, height):
    game = Connect4Game(width, height)
    rng = random.Random(width * 100 + height)
    for position, _ in random_game(rng, game):
        assert game.parse_position(position.fen()) == position
        if position.winner is not None:
            stones = position.cur ^ position.mask
            assert has_four(stones, height)


@pytest.mark.parametrize("width, height", [(0, 6), (7, 9), (65, 0)])
def test_unsupported_sizes(width, height):
    with pytest.raises(PositionError):
        Connect4Game(width, height)
