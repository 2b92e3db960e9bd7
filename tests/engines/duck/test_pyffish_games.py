"""Random games replayed move by move against pyffish (Fairy-Stockfish's own rules).

At every ply: the legal move sets are equal as sets of strings, the SAN of the move played is
the one pyffish writes (and parses back to the same move), the FEN after the move is equal, and
the repetition key matches the FEN's. At the end of each game the result agrees, including the
claimable draws pyffish reports through `is_optional_game_end`.
"""

import random

import pyffish
import pytest

from tests.engines.duck.conftest import PERFT_ROWS

MAX_PLIES = 160


def choose(rng, position, style):
    moves = position.legal_moves()
    if style == "captures":  # reach king captures, promotions and sparse boards sooner
        captures = [m for m in moves if position.san(m).find("x") >= 0]
        if captures and rng.random() < 0.7:
            return rng.choice(captures)
    return rng.choice(moves)


def replay_random_game(game, seed):
    rng = random.Random(seed)
    start = PERFT_ROWS[seed % len(PERFT_ROWS)][0]
    style = "captures" if seed % 2 else "uniform"
    position = game.parse_position(start)
    fen = start
    history = []
    keys_by_fen = {}
    assert position.fen() == pyffish.get_fen("duck", start, [])
    for ply in range(MAX_PLIES + 1):
        ours = {position.format_move(m) for m in position.legal_moves()}
        theirs = set(pyffish.legal_moves("duck", fen, []))
        assert ours == theirs, (fen, sorted(ours - theirs)[:5], sorted(theirs - ours)[:5])
        plain_key = " ".join(fen.split()[:4])
        assert keys_by_fen.setdefault(plain_key, position.key) == position.key
        if not theirs:
            result = position.result()
            expected = pyffish.game_result("duck", fen, [])
            assert result is not None and result.winner is not None
            assert (result.winner == position.side_to_move) == (expected > 0), fen
            break
        assert position.result() is None
        if ply == MAX_PLIES:
            break
        move = choose(rng, position, style)
        text = position.format_move(move)
        san = pyffish.get_san("duck", fen, text)
        assert position.san(move) == san, (fen, text)
        assert position.parse_move(san) == move
        assert position.parse_move(text) == move
        position = position.play(move)
        history.append(text)
        fen = pyffish.get_fen("duck", fen, [text])
        assert position.fen() == fen, (history, text)
    claimable, value = pyffish.is_optional_game_end("duck", start, history)
    ours = position.result(claim_draw=True)
    if position.result() is None:
        assert claimable == (ours is not None), (start, history)
    return len(history)


@pytest.mark.parametrize("block", range(8))
def test_random_games_agree_with_pyffish(game, block):
    """80 games: 10 per block, alternating uniform and capture-seeking play (the slow run
    adds 2,000)."""
    for seed in range(block * 10, block * 10 + 10):
        replay_random_game(game, seed)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(20))
def test_thousands_of_random_games_agree_with_pyffish(game, block):
    for seed in range(10_000 + block * 100, 10_000 + block * 100 + 100):
        replay_random_game(game, seed)
