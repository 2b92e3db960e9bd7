"""The game-agnostic session under the protocol front-ends."""

import threading
import time

import pytest

from mallard.engines.base import Limits, MoveError, OptionError, PositionError, UnknownGameError
from mallard.protocol.session import Session


def run(session, limits):
    done = []
    event = threading.Event()

    def finished(result):
        done.append(result)
        event.set()

    session.go(limits, lambda info: None, finished)
    assert event.wait(60)
    return done


def test_bad_fen_keeps_the_previous_position():
    session = Session("duck")
    session.set_position("startpos", ["e2e4,e4d5"])
    before = session.position.fen()
    with pytest.raises(PositionError, match="invalid position"):
        session.set_position("8/8/8 w - - 0 1", [])
    assert session.position.fen() == before


def test_bad_move_keeps_the_moves_before_it():
    session = Session("duck")
    with pytest.raises(MoveError, match="illegal move 2 'e7e5'") as refused:
        session.set_position("startpos", ["e2e4,e4d5", "e7e5", "g1f3,f3e5"])
    assert refused.value.index == 2
    assert session.moves == ["e2e4,e4d5"]
    assert session.position.ply == 1


GAME = ["e2e4,e6", "d7d5,d4", "e4d5,c6", "g8f6,f3", "b1c3,h3", "f6d5,a6"]


def test_moves_that_extend_the_position_are_played_on_it():
    """As a GUI sends a game move after move: only the new moves are played, and the position
    is the one a replay from the root gives (its repetition history too); a bad move in the
    new ones keeps the moves before it, with its index in the whole list."""
    session = Session("duck")
    replayed = Session("duck")
    for count in range(1, len(GAME) + 1):
        session.set_position("startpos", GAME[:count])
        replayed.set_position("startpos", [])
        replayed.set_position("startpos", GAME[:count])
        assert session.position.fen() == replayed.position.fen()
        assert session.position.history == replayed.position.history
    with pytest.raises(MoveError, match="illegal move 8 'e7e5'") as refused:
        session.set_position("startpos", [*GAME, "a2a3,a5", "e7e5"])
    assert refused.value.index == 8
    assert session.moves == [*GAME, "a2a3,a5"]
    session.set_position("startpos", GAME[:2])  # not an extension: played from the root
    replayed.set_position("startpos", [])
    replayed.set_position("startpos", GAME[:2])
    assert session.moves == GAME[:2] and session.position.fen() == replayed.position.fen()


def test_options_are_checked_and_kept_on_error():
    session = Session("duck")
    with pytest.raises(OptionError, match="integer"):
        session.set_option("Move Overhead", "lots")
    assert session.values["move overhead"] == 30
    session.set_option("move overhead", "100")
    assert session.values["move overhead"] == 100
    with pytest.raises(OptionError, match="between"):
        session.set_option("Hash", "0")
    with pytest.raises(OptionError, match="^no such option 'UCI_Chess960'$"):
        session.set_option("UCI_Chess960", "true")
    with pytest.raises(OptionError, match="one of"):
        session.set_option("UCI_Variant", "xiangqi")
    with pytest.raises(UnknownGameError, match="unknown variant 'xiangqi'"):
        session.set_variant("xiangqi")
    session.set_option("UCI_Variant", "cfour")
    assert session.variant == "cfour" and session.position.fen().startswith("7/7/7/7/7/7")
    assert session.find_option("OwnBook") is not None


def test_move_overhead_comes_off_the_clocks():
    session = Session("cfour")
    limits = session.effective_limits(Limits(wtime=1000, btime=20, movetime=500))
    # once off a move time; five times off a clock, which keeps them in reserve
    assert (limits.wtime, limits.btime, limits.movetime) == (850, 1, 470)


def test_go_delivers_one_legal_result_per_search_in_both_games():
    for variant, moves in (("duck", ["e2e4,e4d5"]), ("cfour", ["P@d1"])):
        session = Session(variant)
        session.set_position("startpos", moves)
        results = run(session, Limits(depth=2))
        assert len(results) == 1
        assert results[0].best_move in session.position.legal_moves()


def test_stop_ends_an_infinite_search_with_one_result():
    session = Session("duck")
    run(session, Limits(depth=1))  # compiled
    done = []
    session.go(Limits(infinite=True), lambda info: None, done.append)
    time.sleep(0.3)
    assert session.searching
    started = time.perf_counter()
    session.stop_and_wait()
    assert time.perf_counter() - started < 0.5
    assert len(done) == 1 and done[0].best_move is not None


def test_a_new_go_supersedes_the_running_one():
    session = Session("duck")
    first, second = [], []
    session.go(Limits(infinite=True), lambda info: None, first.append)
    session.go(Limits(depth=1), lambda info: None, second.append)
    session.wait(60)
    assert len(first) == 1 and len(second) == 1


def test_finished_game_answers_without_a_move():
    session = Session("duck")
    session.set_position("k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1", [])
    results = run(session, Limits(depth=3))
    assert results[0].best_move is None and results[0].score.value == 0
