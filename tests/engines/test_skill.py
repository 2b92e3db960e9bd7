"""Skill Level: the weakened searcher's choices, with a scripted searcher and with the real ones."""

from __future__ import annotations

import random

import pytest

from mallard.engines import find_game
from mallard.engines.base import Limits, Score, SearchInfo, SearchResult
from mallard.engines.skill import WON, SkilledSearcher, SkillProfile, seen_value
from mallard.protocol.session import Session


class ScriptedSearcher:
    """Reports the given (move, score) lines best first, then plays the first."""

    def __init__(self, lines):
        self.lines = lines
        self.limits = None

    def search(self, position, limits, stop_flag=None, on_info=None):
        self.limits = limits
        for number, (move, score) in enumerate(self.lines, 1):
            on_info(SearchInfo(depth=3, score=score, pv=[move], multipv=number))
        move, score = self.lines[0]
        return SearchResult(move, score=score, pv=[move], depth=3)


class AnyPosition:
    def legal_moves(self):
        return list(range(10))


def test_seen_value_counts_plies_and_hides_results_beyond_the_horizon():
    assert seen_value(Score.cp(-35), None) == -35
    assert seen_value(Score.mate(1), None) == WON - 1  # one ply: my move wins
    assert seen_value(Score.mate(-1), None) == -(WON - 2)  # the reply wins
    assert seen_value(Score.mate(3), 4) == 0  # five plies: beyond a horizon of four
    assert seen_value(Score.mate(-2), 4) == -(WON - 4)
    assert seen_value(None, 4) is None


@pytest.mark.parametrize("level", [0, 7, 19])
def test_a_level_never_plays_a_move_worse_than_its_spread(level):
    profile = SkillProfile(spread_cp=300, lines=4)
    lines = [(1, Score.cp(50)), (2, Score.cp(20)), (3, Score.cp(-150)), (4, Score.cp(-900))]
    played = set()
    for seed in range(400):
        inner = ScriptedSearcher(lines)
        result = SkilledSearcher(inner, profile, level, random.Random(seed)).search(
            AnyPosition(), Limits(movetime=100))
        played.add(result.best_move)
        assert inner.limits.multipv == 4
        chosen = dict(lines)[result.best_move]
        assert result.score == chosen and result.pv == [result.best_move]
        assert chosen.value >= 50 - profile.spread(level)
    assert 4 not in played
    if level == 0:
        assert {1, 2, 3} <= played  # weak: now and then a lesser move
    if level == 19:
        assert played == {1}  # 30 cp worse is beyond a spread of 15


def test_a_seen_win_is_always_played_and_a_seen_loss_avoided():
    profile = SkillProfile(spread_cp=10_000, lines=4)
    winning = [(1, Score.mate(2)), (2, Score.cp(300)), (3, Score.cp(290))]
    losing = [(1, Score.cp(-100)), (2, Score.mate(-1)), (3, Score.mate(-2))]
    for seed in range(100):
        rng = random.Random(seed)
        assert SkilledSearcher(ScriptedSearcher(winning), profile, 0, rng).search(
            AnyPosition(), Limits()).best_move == 1
        assert SkilledSearcher(ScriptedSearcher(losing), profile, 0, rng).search(
            AnyPosition(), Limits()).best_move == 1


def test_the_node_budget_grows_with_the_level_and_never_exceeds_the_users():
    profile = SkillProfile(spread_cp=100, nodes_at_zero=40, levels_per_doubling=2)
    budgets = [profile.node_budget(level) for level in range(20)]
    assert budgets[0] == 40 and budgets[2] == 80 and budgets == sorted(budgets)
    skilled = SkilledSearcher(ScriptedSearcher([]), profile, 10)
    assert skilled.limits(Limits(), AnyPosition()).nodes == 1280
    assert skilled.limits(Limits(nodes=100), AnyPosition()).nodes == 100
    with pytest.raises(ValueError):
        SkilledSearcher(ScriptedSearcher([]), profile, 20)


def connect_four(columns):
    position = find_game("cfour").new_game().start_position()
    for column in columns:
        position = position.play(column)
    return position


def test_connect_four_level_zero_wins_at_once_and_blocks_the_threat_it_sees():
    session = Session("cfour")
    session.set_option("Skill Level", "0")
    # the side to move has three in column a: a fourth wins
    session.set_position("startpos", ["P@a1", "P@b1", "P@a2", "P@b2", "P@a3", "P@g1"])
    assert connect_four([0, 1, 0, 1, 0, 6]).legal_moves()
    for _ in range(10):
        assert session.search_now(Limits(movetime=2000)).best_move == 0
    # the opponent has three in column b: only b4 keeps the game
    session.set_position("startpos", ["P@b1", "P@a1", "P@b2", "P@g1", "P@b3"])
    for _ in range(10):
        assert session.search_now(Limits(movetime=2000)).best_move == 1


def test_skill_level_weakens_the_alpha_beta_games_and_varies_their_play():
    for variant in ("duck", "uttt"):
        session = Session(variant)
        full = session.search_now(Limits(depth=4))
        session.set_option("Skill Level", "0")
        moves = set()
        for _ in range(8):
            result = session.search_now(Limits(depth=4))
            assert result.nodes < full.nodes
            moves.add(result.best_move)
        assert len(moves) > 1, variant
        session.set_option("Skill Level", "20")  # the engine itself again
        assert session.search_now(Limits(depth=4)).best_move == full.best_move


def test_duck_level_zero_takes_the_king():
    session = Session("duck")
    session.set_option("Skill Level", "0")
    session.set_position("4k3/8/8/8/8/8/8/4QK2 w - - 0 1", [])
    for _ in range(5):
        result = session.search_now(Limits(movetime=1000))
        assert session.position.format_move(result.best_move).startswith("e1e8,")
