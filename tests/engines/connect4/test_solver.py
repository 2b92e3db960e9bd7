import random
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mallard.engines.base import Limits, new_stop_flag
from mallard.engines.connect4 import kernels as K
from mallard.engines.connect4.rules import Connect4Game
from mallard.engines.connect4.solver import Connect4Searcher, Solver
from mallard.engines.connect4.testsets import TEST_SETS, load

from .oracle import columns_of, minimax, move_scores

GAME = Connect4Game()
SAMPLE_STEP = {"End-Easy": 10, "Middle-Easy": 10, "Middle-Medium": 25, "Begin-Easy": 10,
               "Begin-Medium": 100}


@pytest.fixture(scope="module")
def solver():
    return Solver(hash_mb=64)


@pytest.mark.parametrize("name", [n for n in TEST_SETS if n != "Begin-Hard"])
def test_test_set_sample_strong_and_weak(solver, name):
    for moves, expected in load(name)[::SAMPLE_STEP[name]]:
        position = GAME.parse_sequence(moves)
        solver.reset()
        assert solver.solve(position) == expected, moves
        solver.reset()
        assert solver.solve(position, weak=True) == (expected > 0) - (expected < 0), moves


def test_begin_hard_sample_with_book(book_solver):
    for moves, expected in load("Begin-Hard")[::50]:
        position = GAME.parse_sequence(moves)
        if position.moves == 13:
            continue  # beyond the 12-ply book: minutes without it; covered by the slow test
        book_solver.reset()
        assert book_solver.solve(position) == expected, moves


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TEST_SETS))
def test_whole_test_sets(book_solver, name):
    for moves, expected in load(name):
        book_solver.reset()
        assert book_solver.solve(GAME.parse_sequence(moves)) == expected, moves


def test_analysis_equals_solving_each_child(solver):
    rng = random.Random(7)
    for moves, _ in rng.sample(load("Middle-Easy"), 15):
        position = GAME.parse_sequence(moves)
        solver.reset()
        scores = solver.analyze(position)
        for column in range(7):
            if position.column_height(column) == 6:
                assert scores[column] == K.UNKNOWN
                continue
            child = position.play(column)
            if child.winner is not None:
                expected = (42 + 1 - position.moves) // 2
            else:
                solver.reset()
                expected = -solver.solve(child)
            assert scores[column] == expected
        solver.reset()
        assert max(scores) == solver.solve(position)


def test_empty_board_column_scores_with_book(book_solver):
    book_solver.reset()
    assert book_solver.analyze(GAME.start_position()) == [-2, -1, 0, 1, 0, -1, -2]
    assert book_solver.solve(GAME.start_position()) == 1


def test_full_board_and_finished_game(solver):
    rng = random.Random(3)
    while True:  # find a drawn full board
        position = GAME.start_position()
        while not position.is_over():
            position = position.play(rng.choice(position.legal_moves()))
        if position.winner is None:
            break
    assert solver.solve(position) == 0
    assert solver.analyze(position) == [K.UNKNOWN] * 7
    won = GAME.parse_position("7/7/P6/Pp5/Pp5/Pp5 b")
    with pytest.raises(ValueError):
        solver.solve(won)


# --- small boards against the plain minimax oracle -------------------------------------------

def _random_position(data, game, min_moves, max_moves):
    width = game.width
    target = data.draw(st.integers(min_moves, max_moves))
    position, sequence = game.start_position(), []
    for _ in range(target):
        legal = [c for c in position.legal_moves() if position.play(c).winner is None]
        if not legal:
            break
        column = data.draw(st.sampled_from(legal))
        position = position.play(column)
        sequence.append(column)
    return position, columns_of(sequence, width)


BOARDS = [(4, 4, 0), (5, 4, 4), (4, 5, 4), (6, 5, 16)]


@pytest.mark.parametrize("width, height, min_moves, threads",
                         [(*board, 1) for board in BOARDS] + [(5, 4, 4, 2), (6, 5, 16, 2)])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_small_boards_match_minimax(width, height, min_moves, threads, data):
    """With 2 threads the table is tiny: they overwrite each other's slots all the time."""
    game = Connect4Game(width, height)
    position, columns = _random_position(data, game, min_moves, width * height - 1)
    if position.is_over():
        return
    solver = _small_solver(width, height) if threads == 1 else \
        Solver(width, height, hash_mb=1, threads=threads)
    solver.reset()
    truth = minimax(columns, width, height)
    assert solver.solve(position) == truth
    solver.reset()
    low, high = solver.score_range(position)
    if low < high:  # a null-window test answers on the right side of its value
        assert (solver.null_window(position, 0) <= 0) == (truth <= 0)
    solver.reset()
    expected = move_scores(columns, width, height)
    assert solver.analyze(position) == [K.UNKNOWN if s is None else s for s in expected]
    solver.reset()
    weak = solver.solve(position, weak=True)
    assert weak == (truth > 0) - (truth < 0)
    solver.reset()
    best = solver.best_move(position, solver.solve(position))
    assert expected[best] == max(s for s in expected if s is not None)
    ties = [c for c in K.centre_order(width) if expected[c] == expected[best]]
    assert best == ties[0]  # centre first among equals


_SMALL = {}


def _small_solver(width, height):
    if (width, height) not in _SMALL:
        _SMALL[(width, height)] = Solver(width, height, hash_mb=4)
    return _SMALL[(width, height)]


def test_four_by_four_start_is_a_draw():
    assert _small_solver(4, 4).solve(Connect4Game(4, 4).start_position()) == 0 == minimax(
        ((),) * 4, 4, 4)


# --- stopping, limits, mate scores, searcher -------------------------------------------------

def test_stop_from_another_thread_is_prompt():
    solver = Solver(hash_mb=16)
    solver.solve(GAME.parse_sequence(load("End-Easy")[0][0]))  # the code loaded: a search is timed
    position = GAME.start_position()  # minutes of work without the book
    result = {}

    def run():
        result["value"] = solver.solve(position)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    asked = time.perf_counter()
    solver.request_stop()
    thread.join(5)
    assert not thread.is_alive()
    assert time.perf_counter() - asked < 0.05
    assert result["value"] is None and solver.aborted


def test_node_limit():
    solver = Solver(hash_mb=16)
    assert solver.solve(GAME.start_position(), node_limit=20000) is None
    assert solver.nodes < 30000


def test_search_runs_with_the_gil_released():
    solver = Solver(hash_mb=16)
    thread = threading.Thread(target=solver.solve, args=(GAME.start_position(),))
    thread.start()
    counter, deadline = 0, time.perf_counter() + 0.3
    while time.perf_counter() < deadline:
        counter += 1
    solver.request_stop()
    thread.join()
    assert counter > 100000  # the main thread kept running Python while the search ran


@pytest.mark.parametrize("moves, score, mate", [
    (0, 1, 21), (1, 1, 21), (40, 1, 1), (41, 1, 1), (39, -1, -1), (0, -1, -21), (2, 18, 3),
    (3, -19, -1), (4, -18, -2),
])
def test_mate_distance(moves, score, mate):
    solver = Solver(hash_mb=1)
    assert solver.mate_distance(moves, score) == mate


def test_mate_distance_matches_game_length():
    """Playing the solver's best moves from both sides ends exactly when the score says."""
    solver = Solver(hash_mb=16)
    position = GAME.parse_sequence("2252576253462244111563365343")
    score = solver.solve(position)
    mate = solver.mate_distance(position.moves, score)
    start_side, start_moves = position.side_to_move, position.moves
    while not position.is_over():
        position = position.play(solver.best_move(position, solver.solve(position)))
    assert position.winner == (start_side if mate > 0 else 1 - start_side)
    played = position.moves - start_moves
    mover_moves = (played + 1) // 2 if mate > 0 else played // 2
    assert abs(mate) == mover_moves


def test_searcher_reports_exact_result(book_solver):
    searcher = Connect4Searcher(GAME, hash_mb=16)
    infos = []
    position = GAME.parse_sequence("2252576253462244111563365343671351441")
    result = searcher.search(position, Limits(), None, infos.append)
    # score -1 at 37 stones: the first player wins with the move after 40 stones, so the side
    # to move plays 2 more moves (stones 38 and 40 are the opponent's).
    assert result.score.kind == "mate" and result.score.value == -2 and not result.stopped
    assert result.best_move in position.legal_moves() and infos and infos[-1].score == result.score
    position = GAME.parse_sequence("4444")
    result = searcher.search(position, Limits(movetime=5000))
    assert not result.stopped
    book_solver.reset()
    scores = book_solver.analyze(position)
    assert scores[result.best_move] == max(scores)
    assert [c for c in K.centre_order(7) if scores[c] == max(scores)][0] == result.best_move


def test_searcher_stops_on_flag_and_movetime():
    searcher = Connect4Searcher(GAME, hash_mb=16, own_book=False)
    searcher.warm_up()  # a cold numba cache would otherwise compile the stop path in the timing
    flag = new_stop_flag()
    started = time.perf_counter()
    result = searcher.search(GAME.start_position(), Limits(movetime=200), flag)
    assert time.perf_counter() - started < 1.0
    assert result.stopped and result.best_move == 3
    flag[0] = 1
    result = searcher.search(GAME.parse_sequence("4"), Limits(infinite=True), flag)
    assert result.stopped and result.best_move in range(7)


def test_searcher_on_finished_game():
    searcher = Connect4Searcher(GAME, hash_mb=1)
    result = searcher.search(GAME.parse_position("7/7/P6/Pp5/Pp5/Pp5 b"), Limits())
    assert result.best_move is None and result.score.kind == "mate" and result.score.value == 0


def test_searcher_reports_bounds_then_the_exact_score():
    searcher = Connect4Searcher(GAME, hash_mb=16, own_book=False)
    infos = []
    position = GAME.parse_sequence("5554224333234511764415115")  # needs several null windows
    result = searcher.search(position, Limits(), None, infos.append)
    solver = Solver(hash_mb=16)
    exact = solver.solve(position)
    assert [i.bound for i in infos[:-1]] and all(i.bound in ("lowerbound", "upperbound")
                                                 for i in infos[:-1])
    final = infos[-1]
    assert final.bound is None and final.pv and final.pv[0] == result.best_move
    assert result.score == searcher.to_score(position, exact)
    for info in infos[:-1]:  # every reported bound holds for the exact score
        bound = info.score
        exact_score = result.score
        def order(score):  # UCI order: mates for us are best, shorter better; mates against worst
            if score.kind == "mate":
                return (1, -score.value) if score.value > 0 else (-1, -score.value)
            return (0, score.value)
        if info.bound == "lowerbound":
            assert order(exact_score) >= order(bound)
        else:
            assert order(exact_score) <= order(bound)
    assert len(result.pv) == 2 and result.ponder_move == result.pv[1]
    after = position.play(result.best_move)
    assert solver.analyze(after)[result.ponder_move] == max(solver.analyze(after))


def test_a_stopped_search_does_not_poison_the_next():
    solver = Solver(hash_mb=16)
    thread = threading.Thread(target=solver.solve, args=(GAME.start_position(),))
    thread.start()
    time.sleep(0.1)
    solver.request_stop()
    thread.join(5)
    assert solver.aborted
    position = GAME.parse_sequence("2252576253462244111563365343671351441")
    assert solver.solve(position) == -1
    assert solver.solve_bits(position.cur, position.mask, position.moves) == -1


def test_unfinished_solve_plays_what_the_table_proved(book_solver):
    """Stopped by a node limit, the searcher plays the column the table proves best so far; on
    these positions it is never worse than the instant heuristic move, and at least once better
    (each checked against the exact scores)."""
    game = Connect4Game()
    rng = random.Random(4)
    better = unfinished = 0
    for _ in range(40):
        position = game.start_position()
        for _ in range(rng.randint(4, 8)):
            moves = [m for m in position.legal_moves() if position.play(m).result() is None]
            position = position.play(rng.choice(moves))
        searcher = Connect4Searcher(game, own_book=False)
        result = searcher.search(position, Limits(nodes=1_000_000))
        if not result.stopped:
            continue
        unfinished += 1
        exact = book_solver.analyze(position)
        heuristic = searcher.solver.heuristic_move(position)
        assert exact[result.best_move] >= exact[heuristic], position.sequence()
        better += exact[result.best_move] > exact[heuristic]
    assert unfinished >= 20 and better >= 1


# --- threads (one lock-free table, ABDADA) --------------------------------------------------------

@pytest.mark.parametrize("name, step", [("Middle-Medium", 50), ("Begin-Medium", 100)])
def test_threads_solve_the_published_scores(name, step):
    solver = Solver(hash_mb=16, threads=3)  # more threads than cores: helpers interleave
    for moves, expected in load(name)[::step]:
        position = GAME.parse_sequence(moves)
        solver.reset()
        assert solver.solve(position) == expected, moves
        solver.reset()
        assert solver.solve(position, weak=True) == (expected > 0) - (expected < 0), moves


def _bucket_keys(count):
    """`count` keys that share one bucket of `_small_table`'s two, and its first word."""
    keys = [np.uint64(k) for k in range(1, 400)]
    bucket = K._slot(keys[0], 1)
    same = [k for k in keys if K._slot(k, 1) == bucket][:count]
    return same, bucket * K.TT_BUCKET_WORDS


def _small_table():
    ctx = K.make_context(7, 6)
    ctx[K.C_TT_BITS] = 1  # two buckets: keys that share one are easy to find
    return ctx, np.zeros(2 * K.TT_BUCKET_WORDS, dtype=np.uint64)


def test_an_entry_mixing_two_writes_reads_as_empty():
    """Two threads storing into one entry can leave one's key word beside the other's data
    word: the probe must not take that for either position's bounds."""
    ctx, tt = _small_table()
    (first, second), at = _bucket_keys(2)
    K.tt_store(tt, first, 3, 5, 20, ctx)
    written_first = tt[at:at + 2].copy()
    assert K.tt_probe(tt, first, ctx) == (3, 5)
    K.tt_store(tt, second, -2, 7, 20, ctx)  # as large a subtree: the first entry, `first` moved
    assert K.tt_probe(tt, second, ctx) == (-2, 7)
    assert K.tt_probe(tt, first, ctx) == (3, 5)
    tt[at + 2:at + 4] = 0  # `first` gone from the second entry ...
    tt[at] = written_first[0]  # ... and its key word beside `second`'s data word in the first
    assert K.tt_probe(tt, first, ctx) == (-128, 127)
    assert K.tt_probe(tt, second, ctx) == (-128, 127)


def test_a_bucket_keeps_the_larger_subtree():
    """The first entry holds the position with the most empty cells of the running search; the
    positions of smaller subtrees take turns in the second."""
    ctx, tt = _small_table()
    (root, *leaves), _ = _bucket_keys(4)
    K.tt_store(tt, root, -3, 4, 30, ctx)
    for number, leaf in enumerate(leaves):
        K.tt_store(tt, leaf, number, number, 6, ctx)
    assert K.tt_probe(tt, root, ctx) == (-3, 4)
    assert K.tt_probe(tt, leaves[-1], ctx) == (2, 2)
    assert K.tt_probe(tt, leaves[0], ctx) == (-128, 127)  # replaced by the later leaves
    K.tt_store(tt, leaves[0], 1, 127, 31, ctx)  # a larger subtree: first, the root moved second
    assert K.tt_probe(tt, leaves[0], ctx) == (1, 127)
    assert K.tt_probe(tt, root, ctx) == (-3, 4)
    assert K.tt_probe(tt, leaves[-1], ctx) == (-128, 127)


def test_a_stored_position_is_tightened_in_place():
    ctx, tt = _small_table()
    (first, second), _ = _bucket_keys(2)
    K.tt_store(tt, first, -128, 5, 20, ctx)
    K.tt_store(tt, second, -1, 1, 10, ctx)
    K.tt_store(tt, first, 2, 127, 20, ctx)
    assert K.tt_probe(tt, first, ctx) == (2, 5)
    assert K.tt_probe(tt, second, ctx) == (-1, 1)  # not pushed out by a second copy of `first`


def test_an_earlier_search_yields_the_first_entry():
    ctx, tt = _small_table()
    (old, new), _ = _bucket_keys(2)
    K.tt_store(tt, old, -3, 4, 30, ctx)
    ctx[K.C_GEN] += 1  # `Solver.reset`: a new search
    assert K.tt_probe(tt, old, ctx) == (-128, 127)
    K.tt_store(tt, new, 0, 0, 5, ctx)
    assert K.tt_probe(tt, new, ctx) == (0, 0)


def test_stop_reaches_every_thread_promptly():
    solver = Solver(hash_mb=16, threads=2)
    solver.solve(GAME.parse_sequence(load("End-Easy")[0][0]))  # the code loaded: a search is timed
    result = {}
    before = set(threading.enumerate())
    thread = threading.Thread(target=lambda: result.update(value=solver.solve(
        GAME.start_position())))
    thread.start()
    time.sleep(0.3)
    asked = time.perf_counter()
    solver.request_stop()
    thread.join(5)
    assert not thread.is_alive() and time.perf_counter() - asked < 0.05
    assert result["value"] is None and solver.aborted
    assert set(threading.enumerate()) <= before  # the helper threads were joined
    assert not solver.busy.any()  # every thread took its marks back as it unwound


def test_threads_take_back_their_marks():
    solver = Solver(hash_mb=16, threads=2)
    for moves, expected in load("Middle-Medium")[:20]:
        solver.reset()
        assert solver.solve(GAME.parse_sequence(moves)) == expected, moves
        assert not solver.busy.any(), moves
