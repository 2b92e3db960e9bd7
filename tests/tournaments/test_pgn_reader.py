"""The one PGN reader (`mallard.tournaments.pgn.read_games`) as the PGN standard's import format
reads: tags and their escapes, comments, nested variations, NAGs, move numbers, results, `%`
escape lines; in time linear in the text; and the two readers built on it (the runner's
`-openings format=pgn`, the board's PGN import)."""

from __future__ import annotations

import time

import pytest

from mallard.engines import get_game
from mallard.engines.base import PositionError
from mallard.tournaments.openings import OpeningError, read_openings
from mallard.tournaments.pgn import read_games


def only_game(text: str):
    [game] = read_games(text)
    return game


def test_tags_with_escaped_quotes_and_backslashes():
    game = only_game('[Event "say \\"hi\\""]\n[Site "C:\\\\games"]\n[Round "1"]\n\n1. e4 *\n')
    assert game.tags == {"Event": 'say "hi"', "Site": "C:\\games", "Round": "1"}
    assert game.moves == ["e4"]


def test_nested_variations_are_skipped_with_everything_in_them():
    game = only_game("1. e4 (1. d4 d5 (1... Nf6 2. c4 (2. Nf3)) 2. c4) e5 "
                     "(1... c5 (1... e6)) 2. Nf3 *")
    assert game.moves == ["e4", "e5", "Nf3"]


def test_comments_inside_variations_and_brackets_inside_comments():
    game = only_game("1. e4 (1. d4 {a ) in a comment} d5 ; and ( in a line comment\n"
                     "2. c4) e5 {a ( that opens nothing} 2. Nf3 ; (\n2... Nc6 *")
    assert game.moves == ["e4", "e5", "Nf3", "Nc6"]


def test_escape_lines_nags_suffixes_and_move_numbers():
    text = ("% an escape line { that opens no comment\n"
            "[Event \"x\"]\n%(neither a variation\n\n"
            "1.e4! $1 1...e5?! 2. Nf3 $14 2... Nc6 3.Bb5 a6 1/2-1/2\n")
    assert only_game(text).moves == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]


def test_games_end_at_their_result_or_the_next_tags_and_know_their_first_line():
    text = ('[Event "a"]\n\n1. P@d1 P@d2 1-0\n\n[Event "b"]\n1. P@a1\n\n'
            '[Event "c"]\n\n1. P@c1 *\n1. P@e1 0-1\n')
    games = read_games(text)
    assert [(g.tags.get("Event"), g.moves, g.line) for g in games] == [
        ("a", ["P@d1", "P@d2"], 1), ("b", ["P@a1"], 5), ("c", ["P@c1"], 8),
        (None, ["P@e1"], 11)]


def test_an_unclosed_variation_or_comment_runs_to_the_end_and_a_stray_close_is_ignored():
    assert only_game("1. e4 ) e5 (2. Nf3 Nc6").moves == ["e4", "e5"]
    assert only_game("1. e4 e5 {2. Nf3").moves == ["e4", "e5"]


@pytest.mark.parametrize("shape", ["nested", "siblings"])
def test_a_large_variation_tree_reads_in_linear_time(shape):
    half = 128 * 1024  # 256 KiB of parentheses
    inner = "(" * half + ")" * half if shape == "nested" else "()" * half
    text = "1. e4 " + inner + " e5 *"
    started = time.perf_counter()
    game = only_game(text)
    assert time.perf_counter() - started < 2.0
    assert game.moves == ["e4", "e5"]


def test_openings_read_the_main_line_of_each_game(tmp_path):
    pgn = tmp_path / "o.pgn"
    pgn.write_text('[Event "a"]\n\n1. P@d1 (1. P@a1 (1... P@b1)) P@d2 ; P@g1\n'
                   '2. P@c1 $2 *\n\n[Event "b"]\n\n1. P@a1 1-0\n')
    openings = read_openings(str(pgn), get_game("cfour"), "pgn")
    assert [o.moves for o in openings] == [("P@d1", "P@d2", "P@c1"), ("P@a1",)]
    bad = tmp_path / "bad.pgn"
    bad.write_text('[Event "a"]\n\n1. P@d1 *\n\n\n[Event "b"]\n\n1. P@h1 *\n')
    with pytest.raises(OpeningError, match=r"bad.pgn:6"):
        read_openings(str(bad), get_game("cfour"), "pgn")


def test_the_board_imports_the_first_game_and_refuses_text_without_one():
    pytest.importorskip("starlette", reason="mallard board needs mallard[board]")
    from mallard.protocol.board.view import read_pgn

    tags, moves = read_pgn('[Variant "duck"]\n\n1. e4,e5 (1. d4,d5) e5,e4 *\n\n[Variant "x"]\n')
    assert tags == {"Variant": "duck"} and moves == ["e4,e5", "e5,e4"]
    with pytest.raises(PositionError, match="no PGN game"):
        read_pgn("{only a comment} *")
