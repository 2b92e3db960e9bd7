"""Draws in the Duck Chess search: a position of the search that repeats one of the game's,
duck square included, is worth 0 with the duck there, and one where either side may claim the
50-move rule is worth 0 everywhere. The rules' repetition count and 50-move check are the
oracles."""

import numpy as np
import pytest

from mallard.engines.base import Limits
from mallard.engines.duck import search_kernels as SK
from mallard.engines.duck.board import PIECE_MOVE_MASK, S_DUCK, S_KEY, with_duck
from mallard.engines.duck.evaluation import evaluate
from mallard.engines.duck.notation import parse_square
from mallard.engines.duck.searcher import (
    DEFAULT_TERMS,
    DuckSearcher,
    SearchBuffers,
    game_positions,
    root_state,
)
from mallard.engines.search_common import INF

# a queen up for White; Black's king far from it, so that nothing is taken within a few plies
QUEEN_UP = "k7/8/8/8/4*3/8/8/1Q5K {side} - - {clock} 80"
# the same a queen up for Black, who is to move, and both kings stepping away and back, the duck
# returning to e4 and c5: after seven moves, White's eighth can bring the start back a third time
QUEEN_DOWN = "K7/8/8/8/4*3/8/8/1q5k b - - 0 80"
SHUFFLE = ["h1g1,c6", "a8a7,e4", "g1h1,c5", "a7a8,e4"] * 2


def node_values(position, repetitions):
    """(score, RX, RE, RX2) of the exception node `position` (its duck lifted: every square
    counts) at depth 2 in a full window, one ply below the root."""
    buffers = SearchBuffers(16)
    buffers.start(repetitions=repetitions)
    state = root_state(position)
    state[S_DUCK] = -1
    value = SK.search(state, buffers.undo, buffers.moves, buffers.order, buffers.ex, buffers.ctx,
                      buffers.tt, buffers.busy, buffers.stop, 1, 2, -INF, INF)
    ctx = buffers.ctx
    return int(value), int(ctx[SK.C_RX]), int(ctx[SK.C_RE]), int(ctx[SK.C_RX2])


def test_a_repeated_position_is_a_draw_on_the_duck_squares_it_repeats_with(game):
    """White is a queen up, so every square but the repeated ones is worth far more than a
    draw: the node's lowest score is the draw, on exactly those squares."""
    position = game.parse_position(QUEEN_UP.format(side="w", clock=0))
    key = int(position.state[S_KEY])
    free = node_values(position, [])
    assert free[0] > 300
    # another position's entry changes nothing (draws on in both: the evaluation's scaling
    # toward the 50-move rule is the same)
    assert node_values(position, [(key ^ 1, parse_square("d4"))]) == free
    value, rx, re, _ = node_values(position, [(key, parse_square("d4"))])
    assert (value, rx) == (0, parse_square("d4")) and re > 300
    value, rx, re, rx2 = node_values(position, [(key, parse_square("d4")),
                                                (key, parse_square("f6"))])
    assert (value, re) == (0, 0) and {rx, rx2} == {parse_square("d4"), parse_square("f6")}


def test_the_evaluation_shrinks_on_the_way_to_the_fifty_move_rule(game):
    """With draws on, the search takes the evaluation times (200 - plies since the last capture
    or pawn move) / 200: a queen up 60 plies on is worth 0.7 of itself; the exact search (draws
    off) takes it whole. The oracle: `evaluate` with the search's terms."""

    def static(clock, repetitions):
        buffers = SearchBuffers(16)
        buffers.start(repetitions=repetitions)
        state = root_state(game.parse_position(QUEEN_UP.format(side="w", clock=clock)))
        first = int(SK.static_value(state, buffers.ctx))
        assert int(SK.static_value(state, buffers.ctx)) == first  # from the evaluation cache
        return first, int(evaluate(state, DEFAULT_TERMS))

    value, whole = static(0, [])
    assert value == whole > 800
    assert static(60, []) == (whole * 140 // 200, whole)
    assert static(60, None) == (whole, whole)
    assert static(99, [])[0] == whole * 101 // 200


def test_the_side_behind_repeats_the_position_a_third_time_and_scores_a_draw(game):
    position = game.parse_position(QUEEN_DOWN).play_text(SHUFFLE[:-1])
    assert position.repetition_count() == 2 and not position.result(claim_draw=True)
    result = DuckSearcher(game, hash_mb=16).search(position, Limits(depth=4))
    assert (result.score.kind, result.score.value) == ("cp", 0)
    after = position.play(result.best_move)
    assert after.repetition_count() == 3 and after.result(claim_draw=True).winner is None


@pytest.mark.parametrize("moves,drawn", [(3, False), (7, True)])
def test_a_position_that_stood_once_is_no_draw(game, moves, drawn):
    """After three moves White could bring the start back a second time: no draw, and the
    queen counts; after seven, a third time."""
    position = game.parse_position(QUEEN_DOWN).play_text(SHUFFLE[:moves])
    score = DuckSearcher(game, hash_mb=16).search(position, Limits(depth=4)).score
    assert (score.kind, score.value < -300) == ("cp", True) if not drawn else score.value == 0


def test_even_a_depth_one_search_sees_the_reply_that_repeats_a_third_time(game):
    """Black, a queen up, steps back to h1 with the duck on e4, which must move: White's a7a8
    with the duck back on e4 would bring the start back a third time, unless Black's duck
    stands on a8. A clock near zero leaves depth 1, and the root's children are searched a ply
    for such replies."""
    position = game.parse_position(QUEEN_DOWN).play_text(SHUFFLE[:6])
    piece = position.parse_move("g1h1,c5") & PIECE_MOVE_MASK
    buffers = SearchBuffers(16)
    buffers.start(repetitions=game_positions(position))
    values, ducks = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    buffers.root(root_state(position), 1, -INF, INF, np.array([piece], dtype=np.int64), values,
                 ducks)
    assert values[0] > 300 and ducks[0] == parse_square("a8")
    after = position.play(with_duck(piece, int(ducks[0])))
    assert not any(after.play(move).is_repetition(3) for move in after.legal_moves())


# The end of a self-play game at 1+0.01 (2026-11-27), from its last capture: Black, a queen up
# for a bishop, shuffles with the engine's search before the table's draws knew of earlier
# searches, and its last move there let White bring a position back a third time. Black's
# moves were searched to these depths, one searcher throughout, as in the game.
RECORDED_FEN = "k7/1*6/1qB5/8/8/8/8/6K1 w - - 0 60"
RECORDED_MOVES = (
    "c6e4,e4d4 b6c6,c6d5 e4f3,f3e4 c6d6,d6b7 f3e4,e4d5 d6e5,e5c6 e4f3,f3e4 e5d4,d4b7 g1h1,h1e4 "
    "d4e5,e5b7 f3c6,c6d4 a8b8,b8d5 h1g1,g1e4 b8a8,a8b7 g1h1,h1d4 a8b8,b8f3 c6b5,b5c5 e5d5,d5e2 "
    "h1g1,g1c5 b8a8,a8d4 b5d7,d7d6 a8b8,b8f5 d7b5,b5c5 b8a8,a8d4 b5d7,d7d6 d5e5,e5c6 g1h1,h1d4 "
    "e5e4,e4b5 h1g1,g1d4 e4d5,d5e5 d7b5,b5c5 d5d4,d4c6 g1h1,h1e4 d4d5,d5e2 h1g1,g1c5 d5d4,d4c6 "
    "g1h1,h1e4").split()
BLACK_DEPTHS = (5, 3, 6, 1, 1, 1, 1, 2, 4, 3, 6, 3, 1, 1, 1, 1, 1, 2)


def test_the_table_of_earlier_moves_does_not_hide_the_reply_that_repeats(game):
    """Its table held the positions two plies on from earlier searches, valued before they
    were a draw. Now at depth 1 Black's move leaves White no reply that repeats a position a
    third time (the rules' count says so), and keeps the queen's advantage."""
    position = game.parse_position(RECORDED_FEN)
    searcher = DuckSearcher(game, hash_mb=16)
    depths = iter(BLACK_DEPTHS)
    for text in RECORDED_MOVES:
        if position.side_to_move == 1:
            searcher.search(position, Limits(depth=next(depths)))
        position = position.play(position.parse_move(text))
    assert position.side_to_move == 1 and next(depths, None) is None
    result = searcher.search(position, Limits(depth=1))
    assert result.score.kind == "cp" and result.score.value > 300
    after = position.play(result.best_move)
    assert not any(after.play(move).is_repetition(3) for move in after.legal_moves())


@pytest.mark.parametrize("clock,drawn", [(99, True), (0, False)])
def test_the_fifty_move_rule_draws_every_reversible_move(game, clock, drawn):
    """At clock 99 every move of White's (none captures or moves a pawn) lets the 50-move rule
    be claimed, though the king falls in a few moves; at 0 it does."""
    position = game.parse_position(QUEEN_UP.format(side="w", clock=clock))
    assert all(position.play(move).is_fifty_moves() == drawn
               for move in position.legal_moves()[::37])
    score = DuckSearcher(game, hash_mb=16).search(position, Limits(depth=3)).score
    assert (score.kind, score.value) == ("cp", 0) if drawn else (score.kind, score.value > 0) == \
        ("mate", True)


def test_game_positions_are_those_since_the_last_capture_or_pawn_move_that_stood_twice(game):
    moves = ["b1b2,c3", "a8b8,e4", "b2b1,c3", "b8a8,e4",  # the start again
             "a2a3,c3",                                  # a pawn move
             "a8b8,e4", "b1b2,c3", "b8a8,e4", "b2b1,c3", "a8b8,e4", "b1b2,c3", "b8a8,e4"]
    position = game.parse_position("k7/8/8/8/4*3/8/P7/1Q5K w - - 0 80")
    seen, found = [], []
    for text in moves:
        seen.append((int(position.state[S_KEY]), int(position.state[S_DUCK])))
        found.append(game_positions(position))
        position = position.play(position.parse_move(text))
    assert list(position.history) == seen
    assert found[4] == (seen[0],) and found[5] == ()
    assert set(game_positions(position)) == {seen[5], seen[6], seen[7], seen[8]}
