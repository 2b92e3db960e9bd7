"""Ultimate Tic-Tac-Toe rules against the reference numbers and against an independent model of
the rules written here from the specification (plain Python lists, no shared code)."""

from __future__ import annotations

import random

import pytest

from mallard.engines import get_game
from mallard.engines.base import MoveError, PositionError

START_PERFT = [81, 720, 6_336, 55_080, 473_256, 4_020_960, 33_782_544, 281_067_408]
MID_GAME = [
    ("X;...@.....;.XO....../...O....O/...X..X.X/...O.X.O./.......O./..O....../O.O....../"
     ".X.XX..../X.....XO.", [6, 41, 273, 2037]),
    ("X;@........;.XO.OX.../X..O..O.O/...X..X.X/O..O.X.OX/.X.....O./O.O....../O.OX...../"
     ".X.XX..../XO....XO.", [5, 25, 141, 902]),
    ("X;O.X.@....;.XO.OXO.X/X..OO.O.O/X..X..X.X/O.OO.X.OX/.X.....O./O.OX...../O.OX...X./"
     "OXXXX..../XO...OXO.", [7, 88, 636, 4975]),
    ("X;.......@.;X.OO...O./X..X.O.O./X.X...O.O/.X.OXO.../O.O.X..../.XX....O./......X.O/"
     ".O.X.X.../.O.....XX", [6, 34, 230, 1474]),
]


@pytest.fixture(scope="module")
def game():
    return get_game("uttt")


@pytest.mark.parametrize("depth", range(1, 7))
def test_perft_from_the_start(game, depth):
    assert game.start_position().perft(depth) == START_PERFT[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [7, 8])
def test_perft_from_the_start_deep(game, depth):
    assert game.start_position().perft(depth) == START_PERFT[depth - 1]


@pytest.mark.parametrize("text, counts", MID_GAME)
def test_mid_game_perft_and_round_trip(game, text, counts):
    position = game.parse_position(text)
    assert position.fen() == text
    assert [position.perft(depth) for depth in range(1, 5)] == counts


# --- an independent model of the rules ----------------------------------------------------------
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _line(cells, who) -> bool:
    return any(all(cells[i] == who for i in line) for line in LINES)


class Model:
    def __init__(self):
        self.cells = [["."] * 9 for _ in range(9)]
        self.status = ["."] * 9  # ".", "X", "O", "#"
        self.side = "X"
        self.target = None
        self.winner = None

    def over(self) -> bool:
        return self.winner is not None or all(s != "." for s in self.status)

    def moves(self) -> list[int]:
        if self.over():
            return []
        boards = [self.target] if self.target is not None else range(9)
        return [b * 9 + c for b in boards if self.status[b] == "."
                for c in range(9) if self.cells[b][c] == "."]

    def play(self, move: int) -> None:
        board, cell = divmod(move, 9)
        self.cells[board][cell] = self.side
        if _line(self.cells[board], self.side):
            self.status[board] = self.side
            if _line(self.status, self.side):
                self.winner = self.side
        elif "." not in self.cells[board]:
            self.status[board] = "#"
        self.target = cell if self.status[cell] == "." else None
        self.side = "O" if self.side == "X" else "X"


@pytest.mark.parametrize("seed", range(40))
def test_random_games_agree_with_the_model(game, seed):
    rng = random.Random(seed)
    position, model = game.start_position(), Model()
    keys = {}
    while True:
        assert sorted(position.legal_moves()) == model.moves()
        assert [position.board_status(b) for b in range(9)] == model.status
        assert game.parse_position(position.fen()) == position
        assert game.parse_position(position.fen()).key() == position.key()
        if not model.moves():
            break
        # transpositions share a key exactly when the hashed contents agree
        closed_view = (tuple(model.status), tuple(tuple(c) if model.status[b] == "." else ()
                                                  for b, c in enumerate(model.cells)),
                       model.target, model.side)
        assert keys.setdefault(position.key(), closed_view) == closed_view
        move = rng.choice(model.moves())
        position = position.play(move)
        model.play(move)
    result = position.result()
    if model.winner is None:
        assert result.winner is None
    else:
        assert result.winner == "XO".index(model.winner)


def test_a_closed_board_hashes_only_by_its_outcome(game):
    # board a won by X in two different ways; everything else equal
    one = game.parse_position("O;X...@....;XXXOO..../........./........./........./........./"
                              "........./........./O......../X........")
    two = game.parse_position("O;X...@....;XXX..OO../........./........./........./........./"
                              "........./........./O......../X........")
    assert one.key() == two.key() and one.fen() != two.fen()


def test_no_game_ends_before_ply_17(game):
    rng = random.Random(5)
    for _ in range(300):
        position = game.start_position()
        while position.result() is None:
            position = position.play(rng.choice(position.legal_moves()))
        assert position.ply >= 17


def test_critical_boards_of_the_reference_example(game):
    position = game.parse_position(
        "X;OXO.O.@..;X.OOOO.O./XO.X.OXO./X.X.X.OOO/.XXOXO.OX/OXOOX.O../.XXXX..O./X.O...X.O/"
        "XO.X.XOXX/.O.O.O.XX")
    assert position.critical_boards() == (0x0, 0x140)


# --- text forms and other numberings ------------------------------------------------------------
def test_move_notations_round_trip(game):
    rng = random.Random(1)
    position = game.start_position()
    for _ in range(30):
        for move in position.legal_moves():
            assert position.parse_move(position.format_move(move)) == move
            assert position.parse_move(position.gtp_move(move)) == move
            row, column = position.codingame_coordinates(move)
            assert position.from_codingame(row, column) == move
            assert position.parse_move(f"{row} {column}") == move
            assert position.from_openspiel_actions(position.openspiel_actions(move)) == move
        position = position.play(rng.choice(position.legal_moves()))
        if position.result() is not None:
            break


def test_notations_point_at_the_right_cell(game):
    start = game.start_position()
    move = start.parse_move("ae")  # top-left board, centre cell
    assert move == 4 and start.codingame_coordinates(move) == (1, 1)
    assert start.gtp_move(move) == "B8" and start.openspiel_actions(move) == [0, 4]
    after = start.play(move)
    assert after.fen().startswith("O;....@....;....X....")
    assert after.openspiel_actions(after.parse_move("ei")) == [8]  # the board is set: one action
    assert start.format_move(start.parse_move("J1")) == "ii"


@pytest.mark.parametrize("text, message", [
    ("X;.........", "three fields"),
    ("Z;.........;" + "/".join(["........."] * 9), "side to move"),
    ("X;....?....;" + "/".join(["........."] * 9), "global field"),
    ("X;.........;" + "/".join(["........."] * 8), "boards field"),
    ("O;.........;" + "/".join(["........."] * 9), "do not fit"),
    ("O;X........;X......../" + "/".join(["........."] * 8), "without an X line"),
    ("X;@@.......;" + "/".join(["........."] * 9), "more than one"),
])
def test_bad_positions_say_why(game, text, message):
    with pytest.raises(PositionError, match=message):
        game.parse_position(text)


def test_illegal_moves_say_why(game):
    position = game.start_position().play(4)  # O must play in board e
    with pytest.raises(MoveError, match="must be in board e"):
        position.parse_move("aa")
    with pytest.raises(MoveError, match="not a move"):
        position.parse_move("zz")
    with pytest.raises(MoveError, match="is not legal"):
        position.play(80 + 5)


def test_perft_command_prints_the_node_count(capsys):
    from mallard.protocol.cli import main

    assert main(["perft", "uttt", "4"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "Nodes searched: 55080"
    assert main(["perft", "uttt", "--position", MID_GAME[2][0], "3"]) == 0
    assert capsys.readouterr().out.strip().endswith("Nodes searched: 636")
    assert main(["perft", "uttt", "--position", "X;bad", "2"]) == 2
    assert "three fields" in capsys.readouterr().err


def test_impossible_positions_and_actions_are_refused(game):
    empty8 = "/".join(["........."] * 8)
    with pytest.raises(PositionError, match="line of X and a line of O"):
        game.parse_position("X;X........;XXXOOO.../" + empty8)
    with pytest.raises(PositionError, match="already won"):
        game.parse_position("X;XXX......;XXX.....O/XXX.....O/XXX.....O/OO......./OO......./"
                            "O......../O......../........./.........")
    start = game.start_position()
    for actions in ([0, 9], [1, -1], [9]):
        with pytest.raises(MoveError):
            start.from_openspiel_actions(actions)
