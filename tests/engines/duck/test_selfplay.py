"""The self-play match runner that justifies evaluation terms."""

import math

import pytest

from mallard.engines.duck.searcher import DuckSearcher
from mallard.engines.duck.selfplay import MatchResult, elo_text, match, play_game
from mallard.engines.duck.terms import ALL_TERMS, TERM_ENDGAME_KING, TERM_LONE_KING, parse_terms


def test_parse_terms():
    assert parse_terms("none") == 0 and parse_terms("") == 0
    assert parse_terms("mobility,pawns") == 5
    assert parse_terms("all") == ALL_TERMS == 31
    assert parse_terms("endgame") == TERM_ENDGAME_KING
    assert parse_terms("lone, pawns") == TERM_LONE_KING | 4
    with pytest.raises(ValueError, match="unknown evaluation term 'speed'"):
        parse_terms("speed")


def test_elo_of_even_and_lopsided_results():
    even = MatchResult(10, 20, 10)
    assert even.score == 0.5 and abs(even.elo()[0]) < 1e-9
    strong = MatchResult(75, 0, 25)
    elo, margin = strong.elo()
    assert math.isclose(elo, -400 * math.log10(1 / 0.75 - 1))
    assert 40 < margin < 120


@pytest.mark.parametrize("wins, draws, losses, text", [
    (2, 0, 0, "inf +- nan"), (0, 0, 3, "-inf +- nan"), (0, 2, 0, "0 +- 0"),
    (1, 0, 1, "0 +- nan"), (0, 0, 0, "nan +- nan")])
def test_elo_of_results_with_no_finite_interval_is_said_as_cutechess_says_it(wins, draws,
                                                                            losses, text):
    # a clean sweep is no finite Elo: it was clamped to +1200 +- 76 for 2-0
    assert elo_text(*MatchResult(wins, draws, losses).elo()) == text


def test_a_short_match_plays_both_colours_of_each_opening():
    result = match(1, 0, pairs=1, nodes=300, seed=3, max_plies=30)
    assert result.games == 2


def test_play_game_ends_with_a_rules_result(game):
    searcher = DuckSearcher(game, hash_mb=1)
    winner, reason = play_game(game.parse_position("4k3/8/8/8/8/8/8/4RK1* w - - 0 1"),
                               searcher, searcher, nodes=500, max_plies=10)
    assert winner == 0 and reason == "king captured"
