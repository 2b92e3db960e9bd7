"""The Ultimate Tic-Tac-Toe engine (`mallard.engines.uttt.searcher`): legal moves, one-move wins and
defences, exact mate scores against a brute-force minimax written here over the rules'
positions, limits and stopping, MultiPV and searchmoves, proven wins kept (prover), and a
sanity match against a random mover."""

from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest

from mallard.engines import get_game
from mallard.engines.base import Limits, Score
from mallard.engines.timeman import move_budget_ms
from mallard.engines.uttt import kernels as K
from mallard.engines.uttt import search_kernels as SK
from mallard.engines.uttt.searcher import UtttSearcher, wait_for_prover_code

MATE = 30000

# X to move, boards a and b won by X, board c forced with X's two in a row: 'cc' wins the game
WIN_IN_ONE = ("X;XX@......;XXX....../XXX....../XX......./OO......./OO......./OO......./"
              "OO......./........./.........")
# X to move in board e; O holds a and b and has two in a row in c: cells a, b, c of board e
# (a free move for O, or board c) let O win at once
DEFENCE = ("X;OO..@....;OOO....../OOO....../OO......./XX......./........./XX......./"
           "XX......./XX......./.........")
# the reference's proven X win (X to move)
PROVEN_X_WIN = ("X;OXO..X@XX;XOOOOO.O./XXXXOO.OO/X.X...OOO/XX.OXO.../OXOOX..O./XXX....O./"
                ".O..X.X.O/XO.XXX.../.O....XXX")
# X to move, 26 open cells, a proven draw; 'bg' (move 15) sends O to board g, where O wins
PROVEN_DRAW = ("X;O@.OX....;.O..OO.OO/X..XO..X./X..O.O..O/XO.XO.OO./X..X..X../XXO..XO../"
               ".OXO..XOO/.OX..XX.O/..XX..XX.")
# X to move, 28 open cells: a win the prover proves in milliseconds (an 11-ply line) that a
# depth-2 search does not see (it scores the position about +40)
DEEP_X_WIN = ("X;XX..OO...;...XXX.O./.OX..XO.X/O...OX.../OOX....../XOO.OXO.X/O...O...O/"
              ".X.XX.XO./....X.OX./.X.O..O..")


@pytest.fixture(scope="module")
def game():
    return get_game("uttt")


@pytest.fixture(scope="module")
def searcher(game):
    searcher = UtttSearcher(game, hash_mb=16)
    searcher.warm_up()
    return searcher


def random_position(game, rng: random.Random, plies: int):
    position = game.start_position()
    for _ in range(plies):
        if position.result() is not None:
            break
        position = position.play(rng.choice(position.legal_moves()))
    return position


def late_positions(game, count: int, seed: int, max_open: int):
    """Running games with at most `max_open` open cells, reached by random play."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        position = game.start_position()
        while position.result() is None and K.count_open_cells(position.state) > max_open:
            position = position.play(rng.choice(position.legal_moves()))
        if position.result() is None:
            positions.append(position)
    return positions


# --- brute force: plain minimax over UtttPosition, shortest wins and longest losses ------------
def brute_force(position) -> int:
    """Negamax value of the side to move: MATE - n for a win whose last move is the n-th ply
    from here, -(MATE - n) for a loss after n plies, 0 for a draw."""
    memo = {}

    def value(current) -> int:
        result = current.result()
        if result is not None:
            return 0 if result.winner is None else -MATE  # the player who just moved won
        key = current.fen()
        if key not in memo:
            best = -10 * MATE
            for move in current.legal_moves():
                child = -value(current.play(move))
                # one ply further from here: a win or a loss is one ply later
                child = child - 1 if child > 0 else child + 1 if child < 0 else 0
                best = max(best, child)
            memo[key] = best
        return memo[key]

    return value(position)


def score_of(value: int) -> Score:
    if value > 0:
        return Score.mate((MATE - value + 1) // 2)
    if value < 0:
        return Score.mate(-((MATE + value + 1) // 2))
    return Score.cp(0, exact=True)


# --- legality ------------------------------------------------------------------------------------
def test_every_returned_move_and_pv_is_legal_over_random_positions(game, searcher):
    rng = random.Random(7)
    checked = 0
    for index in range(60):
        position = random_position(game, rng, rng.randrange(0, 70))
        if position.result() is not None:
            result = searcher.search(position, Limits(depth=2))
            assert result.best_move is None and result.score == Score.mate(0)
            continue
        limits = Limits(depth=3) if index % 2 else Limits(nodes=3000)
        result = searcher.search(position, limits)
        assert result.best_move in position.legal_moves(), position.fen()
        assert result.pv and result.pv[0] == result.best_move
        current = position
        for move in result.pv:  # the whole PV is a legal line
            assert move in current.legal_moves()
            current = current.play(move)
        if len(result.pv) > 1:
            assert result.ponder_move == result.pv[1]
        checked += 1
    assert checked >= 40


# --- tactics -------------------------------------------------------------------------------------
def test_finds_a_one_move_game_win(game, searcher):
    position = game.parse_position(WIN_IN_ONE)
    result = searcher.search(position, Limits(depth=3))
    assert position.format_move(result.best_move) == "cc"
    assert result.score == Score.mate(1)
    assert position.play(result.best_move).result().winner == 0


def test_finds_a_one_move_win_even_at_depth_one_and_when_stopped(game, searcher):
    position = game.parse_position(WIN_IN_ONE)
    assert position.format_move(searcher.search(position, Limits(depth=1)).best_move) == "cc"
    flag = np.ones(1, dtype=np.int64)  # stopped before it starts
    result = searcher.search(position, Limits(infinite=True), flag)
    assert position.format_move(result.best_move) == "cc"


def test_avoids_a_move_that_lets_the_opponent_win_at_once(game, searcher):
    position = game.parse_position(DEFENCE)
    losing = {"ea", "eb", "ec"}
    for limits in (Limits(depth=1), Limits(depth=4), Limits(movetime=50)):
        searcher.clear()
        result = searcher.search(position, limits)
        after = position.play(result.best_move)
        assert position.format_move(result.best_move) not in losing
        assert K.winning_move(after.state) < 0  # O has no win at once
        assert not (result.score.kind == "mate" and result.score.value == -1)
    # the moves that lose are seen as losing: searched alone, they score mate -1
    for text in sorted(losing):
        move = position.parse_move(text)
        result = searcher.search(position, Limits(depth=3, searchmoves=(move,)))
        assert result.best_move == move and result.score == Score.mate(-1)


# --- exact scores --------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_exact_scores_of_late_positions_agree_with_brute_force(game, seed):
    searcher = UtttSearcher(game, hash_mb=4)
    for position in late_positions(game, 4, 100 + seed, max_open=10):
        open_cells = int(K.count_open_cells(position.state))
        expected = score_of(brute_force(position))
        searcher.clear()
        result = searcher.search(position, Limits(depth=open_cells))
        assert result.score == expected, position.fen()
        after = position.play(result.best_move)
        # the move played keeps the value: the child is worth minus it, one ply later
        child = brute_force(after)
        parent = -child - 1 if -child > 0 else -child + 1 if -child < 0 else 0
        assert score_of(parent) == expected, position.fen()


@pytest.mark.parametrize("threads", [1, 2])
def test_search_without_prover_is_exact_too(game, threads):
    """Also with a helper thread writing the same table (every other depth a ply deeper)."""
    searcher = UtttSearcher(game, hash_mb=4, use_prover=False)
    searcher.set_threads(threads)
    for position in late_positions(game, 6, 999, max_open=9):
        open_cells = int(K.count_open_cells(position.state))
        result = searcher.search(position, Limits(depth=open_cells))
        assert result.score == score_of(brute_force(position)), position.fen()


# --- limits and stopping -------------------------------------------------------------------------
def test_depth_limit_and_info_per_iteration(game, searcher):
    infos = []
    result = searcher.search(game.start_position(), Limits(depth=5), on_info=infos.append)
    assert result.depth == 5
    depths = [info.depth for info in infos if info.string is None]
    assert depths[:5] == [1, 2, 3, 4, 5]
    for info in infos:
        assert info.pv and info.nodes > 0 and 0 <= info.hashfull <= 1000
    assert infos[-1].nodes <= result.nodes


def test_node_limit(game, searcher):
    position = random_position(game, random.Random(3), 20)
    result = searcher.search(position, Limits(nodes=5000))
    assert result.best_move in position.legal_moves()
    assert result.nodes < 5000 + 1200


@pytest.mark.parametrize("plies", [0, 30, 50])
def test_movetime_is_respected(game, searcher, plies):
    position = random_position(game, random.Random(plies), plies)
    if position.result() is not None:
        pytest.skip("the random game ended")
    started = time.perf_counter()
    result = searcher.search(position, Limits(movetime=150))
    elapsed = time.perf_counter() - started
    assert result.best_move in position.legal_moves()
    assert elapsed < 0.150 + 0.06


def test_clock_limits_go_through_the_time_manager(game, searcher):
    position = game.start_position().play(40)  # O to move: O's clock counts
    limits = Limits(wtime=100, btime=2000, winc=0, binc=20)
    budget = move_budget_ms(limits, 1)
    assert budget == 2000 // 25 + 15
    started = time.perf_counter()
    result = searcher.search(position, limits)
    elapsed = time.perf_counter() - started
    assert result.best_move in position.legal_moves()
    assert elapsed < budget / 1000 + 0.05


@pytest.mark.parametrize("max_open,wait,threads", [(81, 0.3, 1), (45, 0.05, 1), (30, 0.3, 1),
                                                   (81, 0.3, 2), (45, 0.05, 2)])
def test_stop_flag_from_another_thread_returns_within_50_ms(game, searcher, max_open, wait,
                                                            threads):
    """From the start, and from later positions where an infinite search gives the prover its
    slice first (45 open cells: stopped inside the prover's slice); with a helper thread, the
    helper is stopped and joined within the same time."""
    searcher.set_threads(threads)
    try:
        _stop_within_50_ms(game, searcher, max_open, wait)
        if threads > 1:  # one record of the positions threads are in, every mark taken back
            assert all(helper.busy is searcher.buffers.busy for helper in searcher.helpers)
            assert searcher.buffers.ctx[SK.C_BUSY_MASK] == SK.BUSY_SLOTS - 1
            assert not searcher.buffers.busy.any()
    finally:
        searcher.set_threads(1)


def _stop_within_50_ms(game, searcher, max_open, wait, attempts: int = 3):
    """A search that does not poll its flag misses every attempt; a loaded machine's scheduler
    (other test workers on the same two cores) can hold one thread back past 50 ms once."""
    position = late_positions(game, 1, 12, max_open=max_open)[0]
    latencies = []
    for _ in range(attempts):
        flag = np.zeros(1, dtype=np.int64)
        results = []
        thread = threading.Thread(target=lambda: results.append(
            searcher.search(position, Limits(infinite=True), flag)))
        thread.start()
        time.sleep(wait)
        stopped_at = time.perf_counter()
        flag[0] = 1
        thread.join(5)
        latencies.append(time.perf_counter() - stopped_at)
        assert not thread.is_alive()
        assert results[0].best_move in position.legal_moves()
        if latencies[-1] < 0.050:
            return
    pytest.fail(f"stopped {', '.join(f'{t * 1000:.1f}' for t in latencies)} ms after the flag")


def test_mate_limit_bounds_the_depth(game, searcher):
    position = game.parse_position(WIN_IN_ONE)
    result = searcher.search(position, Limits(mate=1))
    assert result.score == Score.mate(1) and result.depth <= 1
    result = searcher.search(game.start_position(), Limits(mate=2))
    assert result.depth <= 3


# --- multipv and searchmoves ---------------------------------------------------------------------
def test_multipv_reports_distinct_lines(game, searcher):
    position = random_position(game, random.Random(11), 12)
    infos = []
    result = searcher.search(position, Limits(depth=4, multipv=3), on_info=infos.append)
    last = [info for info in infos if info.depth == 4 and info.multipv]
    firsts = [info.pv[0] for info in last[:3]]
    assert [info.multipv for info in last[:3]] == [1, 2, 3]
    assert len(set(firsts)) == 3 and firsts[0] == result.best_move
    assert all(move in position.legal_moves() for move in firsts)
    values = [info.score.value for info in last[:3]]
    assert values == sorted(values, reverse=True)


def test_searchmoves_restrict_the_root(game, searcher):
    position = game.parse_position(WIN_IN_ONE)
    others = [move for move in position.legal_moves() if position.format_move(move) != "cc"]
    allowed = tuple(others[:3])
    result = searcher.search(position, Limits(depth=3, searchmoves=allowed))
    assert result.best_move in allowed
    # nothing legal listed: the whole root
    result = searcher.search(position, Limits(depth=2, searchmoves=(80,)))
    assert position.format_move(result.best_move) == "cc"


def test_finished_game_returns_no_move(game, searcher):
    position = game.parse_position(WIN_IN_ONE)
    over = position.play(position.parse_move("cc"))
    result = searcher.search(over, Limits(depth=3))
    assert result.best_move is None and result.score == Score.mate(0)


def test_hash_and_clear(game):
    searcher = UtttSearcher(game, hash_mb=1)
    searcher.set_hash(2)
    assert searcher.buffers.tt.nbytes <= 2 << 20
    searcher.search(game.start_position(), Limits(depth=3))
    searcher.clear()
    assert not searcher.buffers.tt.any()


# --- proven wins ---------------------------------------------------------------------------------
def play_out(game, fen: str, searcher, rng: random.Random, movetime: int):
    """Winner of a game from `fen`: the searcher plays X, a random mover O."""
    position = game.parse_position(fen)
    while position.result() is None:
        if position.side_to_move == 0:
            move = searcher.search(position, Limits(movetime=movetime)).best_move
        else:
            move = rng.choice(position.legal_moves())
        position = position.play(move)
    return position.result().winner


@pytest.mark.parametrize("fen", [PROVEN_X_WIN, DEEP_X_WIN])
def test_a_proven_win_is_kept_against_a_random_opponent(game, fen):
    searcher = UtttSearcher(game, hash_mb=16)
    rng = random.Random(21)
    for _ in range(5):
        assert play_out(game, fen, searcher, rng, movetime=20) == 0


def test_the_proven_move_is_played_whatever_a_shallow_search_says(game):
    from mallard.engines.uttt.prover import Prover

    position = game.parse_position(DEEP_X_WIN)
    searcher = UtttSearcher(game, hash_mb=16)
    result = searcher.search(position, Limits(depth=1))
    assert result.score.kind == "mate" and result.score.value > 0
    after = position.play(result.best_move)
    assert Prover(hash_mb=8).solve(after, time_limit=5).value == -1  # O is lost after it
    # the proof is cached for the game: the same position is answered without the prover
    assert position.key() in searcher.proofs
    again = searcher.search(position, Limits(depth=1))
    assert again.best_move == result.best_move and again.score == result.score


def test_threads_prove_on_as_many_threads_except_under_a_node_limit(game):
    wait_for_prover_code()  # a warm-up may be compiling it in the background (a cold cache)
    position = game.parse_position(DEEP_X_WIN)
    searcher = UtttSearcher(game, hash_mb=16)
    searcher.set_threads(2)
    result = searcher.search(position, Limits(depth=1))
    assert result.score.kind == "mate" and result.score.value > 0
    assert searcher.prover().threads == 2
    searcher.clear()
    repeated = [searcher.search(position, Limits(depth=3, nodes=200_000)) for _ in range(2)]
    assert searcher.prover().threads == 1
    assert repeated[0].best_move == repeated[1].best_move


def test_a_proven_draw_is_reported_exactly_and_kept(game):
    position = game.parse_position(PROVEN_DRAW)
    searcher = UtttSearcher(game, hash_mb=16)
    result = searcher.search(position, Limits(depth=1))
    assert result.score == Score.cp(0, exact=True)
    # the check made at a proven draw: a move after which the opponent wins is refused
    losing = position.parse_move("bg")
    assert not searcher._keeps_draw(position, losing, None, time.perf_counter(), None, None)
    drawing = searcher.proofs[position.key()].best_move
    assert searcher._keeps_draw(position, drawing, None, time.perf_counter(), None, None)


# --- strength ------------------------------------------------------------------------------------
def test_depth_four_beats_a_random_mover(game):
    searcher = UtttSearcher(game, hash_mb=16)
    rng = random.Random(2024)
    wins = 0
    for index in range(10):
        engine_side = index % 2
        position = game.start_position()
        while position.result() is None:
            if position.side_to_move == engine_side:
                move = searcher.search(position, Limits(depth=4)).best_move
            else:
                move = rng.choice(position.legal_moves())
            position = position.play(move)
        wins += position.result().winner == engine_side
        searcher.clear()
    assert wins >= 9
