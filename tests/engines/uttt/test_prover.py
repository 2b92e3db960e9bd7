"""The df-pn prover (`mallard.engines.uttt.prover`) against the reference page's proven positions
and against an exhaustive minimax written here (plain Python over the rules' move generator, no
pruning, no proof numbers), with and without the critical-board analysis; the soundness of every
static decision and pruned move; stopping; the `mallard prove` command line."""

from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest

from mallard.engines import get_game
from mallard.engines.uttt import kernels as K
from mallard.engines.uttt import prover_kernels as PK
from mallard.engines.uttt.board import DRAWN, RESULT_NONE, S_RESULT, S_SIDE
from mallard.engines.uttt.prover import ProofOutcome, Prover, prove
from mallard.engines.uttt.rules import UtttPosition
from mallard.protocol.cli import main

# the reference page's proven positions (side to move first in the text)
REFERENCE_PROVEN = [
    ("O;OX..@XXX.;X.OOO.OO./XO.X.OXO./X.XXX.O.O/XXOOXOO../OXOOXO.O./XXX....O./X.OX..X.O/"
     "XO.XXX.../.O.....XX", "X wins"),
    ("X;OXO..X@XX;XOOOOO.O./XXXXOO.OO/X.X...OOO/XX.OXO.../OXOOX..O./XXX....O./.O..X.X.O/"
     "XO.XXX.../.O....XXX", "X wins"),
    ("X;O..XOX@X.;X.OOO.OO./XO.XXOOO./X.X..OO.O/.X.OXO.X./OXOOX.O../XXX....O./.XX...XX./"
     "XO.XXXOO./OO.....XX", "O wins"),
]
CRITICAL_EXAMPLE = ("X;OXO.O.@..;X.OOOO.O./XO.X.OXO./X.X.X.OOO/.XXOXO.OX/OXOOX.O../.XXXX..O./"
                    "X.O...X.O/XO.X.XOXX/.O.O.O.XX")
ORACLE_POSITIONS = 120
ORACLE_SEED = 20240611


@pytest.fixture(scope="module")
def game():
    return get_game("uttt")


@pytest.fixture(scope="module")
def provers():
    return {True: Prover(hash_mb=16, critical=True), False: Prover(hash_mb=16, critical=False)}


# --- the oracle -------------------------------------------------------------------------------
def oracle_value(state: np.ndarray, memo: dict) -> int:
    """+1 / 0 / -1 for the side to move, by plain exhaustive minimax (memoised on the state)."""
    result = int(state[S_RESULT])
    if result != RESULT_NONE:
        # the previous mover ended the game: it won, or it is a draw
        return 0 if result == DRAWN else -1
    key = state.tobytes()
    if key in memo:
        return memo[key]
    moves = np.zeros(81, dtype=np.int64)
    count = K.generate_moves(state, moves)
    best = -1
    for move in moves[:count]:
        child = state.copy()
        K.make_move(child, int(move))
        best = max(best, -oracle_value(child, memo))
        if best == 1:
            break
    memo[key] = best
    return best


def random_late_state(rng: random.Random, open_cells: int) -> np.ndarray:
    moves = np.zeros(81, dtype=np.int64)
    while True:
        state = get_game("uttt").start_position().state.copy()
        while state[S_RESULT] == RESULT_NONE and K.count_open_cells(state) > open_cells:
            count = K.generate_moves(state, moves)
            K.make_move(state, int(moves[rng.randrange(count)]))
        if state[S_RESULT] == RESULT_NONE:
            return state


@pytest.fixture(scope="module")
def oracle_cases():
    """(state, oracle value) for random positions with 8..14 open cells."""
    rng = random.Random(ORACLE_SEED)
    memo: dict = {}
    cases = []
    for _ in range(ORACLE_POSITIONS):
        state = random_late_state(rng, rng.randint(8, 14))
        cases.append((state, oracle_value(state, memo)))
    return cases, memo


def _replay(game, state, pv) -> UtttPosition:
    position = UtttPosition(game, state.copy())
    for move in pv:
        position = position.play(move)  # raises on an illegal move
    return position


def _check_pv(game, state, outcome: ProofOutcome) -> None:
    end = _replay(game, state, outcome.pv).result()
    assert end is not None, "the PV stops before the end of the game"
    side = int(state[S_SIDE])
    if outcome.value == 0:
        assert end.winner is None
    else:
        assert end.winner == (side if outcome.value > 0 else 1 - side)
    assert outcome.best_move == (outcome.pv[0] if outcome.pv else None)


# --- the reference page -------------------------------------------------------------------------
@pytest.mark.parametrize("critical", [True, False])
@pytest.mark.parametrize("text, expected", REFERENCE_PROVEN)
def test_reference_proven_positions(game, provers, text, expected, critical):
    position = game.parse_position(text)
    outcome = provers[critical].solve(position)
    assert outcome.text == expected
    assert outcome.value == (1 if expected[0] == "XO"[position.side_to_move] else -1)
    assert outcome.proof_size >= 1
    _check_pv(game, position.state, outcome)


@pytest.mark.parametrize("text, expected", REFERENCE_PROVEN)
def test_reference_positions_with_both_searches_at_once(game, text, expected):
    """Two threads running a solve's searches at once, whichever win is tried first, and the
    prover as it was before the reach work: the reference page's values."""
    position = game.parse_position(text)
    at_once = Prover(hash_mb=16, threads=2)
    for guess in (None, 0, 1):
        outcome = at_once.solve(position, likely_winner=guess)
        assert outcome.text == expected
        _check_pv(game, position.state, outcome)
    before = Prover(hash_mb=16, threads=2, heuristic=False, open_lines=False, at_once=False)
    assert before.solve(position, details=False).text == expected


def test_critical_boards_of_the_reference_example(game):
    position = game.parse_position(CRITICAL_EXAMPLE)
    assert position.critical_boards() == (0x0, 0x140)
    # X must play in board g; cells b and e send O to a closed board (O then wins in board i)
    moves = np.zeros(81, dtype=np.int64)
    count = PK.generate_safe_moves(position.state, moves)
    assert sorted(position.format_move(int(m)) for m in moves[:count]) == ["gd", "gf", "gh"]
    assert sorted(position.format_move(m) for m in position.legal_moves()) == \
        ["gb", "gd", "ge", "gf", "gh"]


# --- against the oracle -------------------------------------------------------------------------
@pytest.mark.parametrize("critical", [True, False])
def test_solve_agrees_with_exhaustive_minimax(game, provers, oracle_cases, critical):
    cases, _ = oracle_cases
    assert len(cases) >= 100
    values = set()
    for state, expected in cases:
        outcome = provers[critical].solve(UtttPosition(game, state))
        assert outcome.value == expected, UtttPosition(game, state).fen()
        _check_pv(game, state, outcome)
        assert outcome.proof_size >= 1
        values.add(expected)
    assert values == {-1, 0, 1}  # the sample holds wins, draws and losses


def test_prove_win_agrees_with_exhaustive_minimax(game, provers, oracle_cases):
    cases, _ = oracle_cases
    for state, expected in cases[:40]:
        position = UtttPosition(game, state)
        side = position.side_to_move
        for critical in (True, False):
            mover_wins, _ = provers[critical].prove_win(position, side)
            opponent_wins, _ = provers[critical].prove_win(position, 1 - side)
            assert mover_wins == (expected == 1)
            assert opponent_wins == (expected == -1)


def test_static_decisions_and_pruned_moves_are_sound(game, oracle_cases):
    """Every move the critical analysis prunes loses, and every static decision (game over, dead
    lines, a win at once, no safe move) matches the oracle — at the sample positions and at every
    position the oracle visited below them."""
    _, memo = oracle_cases
    flags = PK.CRITICAL | PK.DEAD_LINES
    moves = np.zeros(81, dtype=np.int64)
    safe = np.zeros(81, dtype=np.int64)
    pruned_seen = decided_seen = 0
    rng = random.Random(5)
    keys = list(memo)
    rng.shuffle(keys)
    for key in keys[:12000]:
        state = np.frombuffer(key, dtype=np.int64).copy()
        value = memo[key]
        side = int(state[S_SIDE])
        for attacker in (0, 1):
            static = PK.static_value(state, np.int64(attacker), flags)
            if static != PK.UNKNOWN:
                decided_seen += 1
                attacker_wins = value == (1 if attacker == side else -1)
                assert static == (PK.PROVEN if attacker_wins else PK.DISPROVEN)
            if not PK.can_still_win(state, np.int64(attacker)):
                assert value != (1 if attacker == side else -1)
        count = K.generate_moves(state, moves)
        kept = set(int(m) for m in safe[:PK.generate_safe_moves(state, safe)])
        assert kept <= set(int(m) for m in moves[:count])
        assert PK.has_safe_move(state) == bool(kept)
        assert PK.count_node_moves(state, flags) == len(kept)
        if K.winning_move(state) >= 0:
            continue  # pruning applies only when the side to move cannot win at once
        for move in moves[:count]:
            if int(move) in kept:
                continue
            pruned_seen += 1
            child = state.copy()
            K.make_move(child, int(move))
            assert oracle_value(child, memo) == 1, "a pruned move does not lose"
    assert pruned_seen > 100 and decided_seen > 100


@pytest.mark.slow
def test_solve_agrees_with_exhaustive_minimax_on_bigger_positions(game, provers):
    rng = random.Random(ORACLE_SEED + 1)
    for _ in range(25):
        state = random_late_state(rng, rng.randint(15, 17))
        expected = oracle_value(state, {})
        for critical in (True, False):
            outcome = provers[critical].solve(UtttPosition(game, state))
            assert outcome.value == expected, UtttPosition(game, state).fen()
            _check_pv(game, state, outcome)


@pytest.mark.parametrize("open_cells, count", [
    (30, 8), pytest.param(36, 10, marks=pytest.mark.slow)])
def test_with_and_without_the_analysis_agree(game, provers, open_cells, count):
    """Beyond the oracle's reach: the analysis may change the work, never the value."""
    rng = random.Random(open_cells)
    plain_nodes = critical_nodes = 0
    for _ in range(count):
        state = random_late_state(rng, open_cells)
        outcomes = {critical: provers[critical].solve(UtttPosition(game, state))
                    for critical in (True, False)}
        assert outcomes[True].value is not None
        assert outcomes[True].value == outcomes[False].value
        for outcome in outcomes.values():
            _check_pv(game, state, outcome)
        critical_nodes += outcomes[True].nodes
        plain_nodes += outcomes[False].nodes
    assert critical_nodes < plain_nodes


# --- other behaviour ----------------------------------------------------------------------------
def test_small_table_still_proves_and_reads_the_proof_back(game):
    rng = random.Random(11)
    big, small = Prover(hash_mb=64), Prover(hash_mb=1)
    for _ in range(3):
        position = UtttPosition(game, random_late_state(rng, 34))
        expected = big.solve(position)
        outcome = small.solve(position)
        assert expected.value is not None and outcome.value == expected.value
        _check_pv(game, position.state, outcome)


# --- threads ------------------------------------------------------------------------------------
def test_two_threads_agree_with_exhaustive_minimax(game, oracle_cases):
    cases, _ = oracle_cases
    prover = Prover(hash_mb=16, threads=2)
    for state, expected in cases[:60]:
        outcome = prover.solve(UtttPosition(game, state))
        assert outcome.value == expected, UtttPosition(game, state).fen()
        _check_pv(game, state, outcome)
    assert not prover.busy.any(), "a search left a mark behind"


@pytest.mark.parametrize("hash_mb", [1, 64])
def test_two_threads_agree_with_one_beyond_the_oracle(game, hash_mb):
    """Positions that take thousands of nodes, so that both threads work and meet in the table
    (with 1 MB, while it evicts)."""
    rng = random.Random(29 + hash_mb)
    one, two = Prover(hash_mb=hash_mb), Prover(hash_mb=hash_mb, threads=2)
    helped = 0
    for _ in range(6):
        position = UtttPosition(game, random_late_state(rng, 32))
        expected = one.solve(position)
        outcome = two.solve(position)
        assert expected.value is not None and outcome.value == expected.value, position.fen()
        _check_pv(game, position.state, outcome)
        assert outcome.nodes == two.nodes + two.helper_nodes - outcome.walk_nodes
        helped += two.helper_nodes
    assert helped > 0


def test_table_refuses_torn_entries_and_keeps_decided_ones():
    tt = np.zeros(PK.BUCKET * PK.TT_WORDS * 4, dtype=np.int64)
    mask = np.int64(3)
    key, other = np.int64(0x1234_5678_9ABC_DEF1), np.int64(0x0FED_CBA9_8765_4321)
    PK.tt_store(tt, mask, key, np.int64(5), np.int64(7), np.int64(100))
    assert PK.tt_read(tt, mask, key) == (5, 7, 100)
    entry = next(e for e in range(0, len(tt), PK.TT_WORDS) if tt[e + 3] == 100)
    tt[entry + 1] = 0  # a pn another thread wrote between this entry's words
    assert PK.tt_read(tt, mask, key)[2] == 0, "a torn entry was read as a proof"
    PK.tt_store(tt, mask, other, np.int64(0), PK.INF, np.int64(10))
    PK.tt_store(tt, mask, other, np.int64(3), np.int64(4), np.int64(20))  # stale numbers
    assert PK.tt_read(tt, mask, other) == (0, PK.INF, 10)
    PK.tt_store(tt, mask, key, PK.INF, np.int64(0), np.int64(30))  # a decision replaces numbers
    assert PK.tt_read(tt, mask, key) == (PK.INF, 0, 30)


def test_two_threads_stop_on_request_and_on_time(game):
    prover = Prover(hash_mb=16, threads=2)
    outcome, latency = _stopped_within(lambda: prover.solve(game.start_position()),
                                       prover.request_stop, 5.0)
    assert outcome.value is None and latency < 1.0
    assert prover.helper_nodes > 0
    started = time.perf_counter()
    outcome = prover.solve(game.start_position(), time_limit=0.3)
    assert outcome.value is None and time.perf_counter() - started < 1.5
    assert not any(thread.name.startswith("mallard-prover") for thread in threading.enumerate())
    with pytest.raises(ValueError):
        prover.set_threads(0)


def test_node_limit_gives_unknown(game):
    outcome = Prover(hash_mb=4).solve(game.start_position(), node_limit=20_000)
    assert outcome.value is None and outcome.text == "unknown"
    assert outcome.pv == [] and outcome.best_move is None
    assert 20_000 <= outcome.nodes < 30_000


def _stopped_within(run, stop, seconds: float) -> tuple[object, float]:
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("outcome", run()))
    thread.start()
    time.sleep(0.5)
    stopped_at = time.perf_counter()
    stop()
    thread.join(seconds)
    assert not thread.is_alive(), "the search did not stop"
    return box["outcome"], time.perf_counter() - stopped_at


def test_request_stop_from_another_thread(game):
    prover = Prover(hash_mb=16)
    outcome, latency = _stopped_within(lambda: prover.solve(game.start_position()),
                                       prover.request_stop, 5.0)
    assert outcome.value is None and outcome.nodes > 0
    assert latency < 1.0


def test_stop_flag_and_time_limit(game):
    prover = Prover(hash_mb=16)
    flag = np.zeros(1, dtype=np.int64)
    outcome, latency = _stopped_within(
        lambda: prover.solve(game.start_position(), stop_flag=flag), lambda: flag.__setitem__(0, 1),
        5.0)
    assert outcome.value is None and latency < 1.0
    started = time.perf_counter()
    outcome = prover.solve(game.start_position(), time_limit=0.3)
    assert outcome.value is None and time.perf_counter() - started < 1.5
    result, nodes = prover.prove_win(game.start_position(), 0, time_limit=0.2)
    assert result is None and nodes > 0


def test_finished_positions_and_the_game_api(game, oracle_cases):
    cases, _ = oracle_cases
    state, expected = next((s, v) for s, v in cases if v != 0)
    position = UtttPosition(game, state)
    result = prove(position, node_limit=1_000_000)
    assert result is not None
    assert result.winner == (position.side_to_move if expected > 0 else 1 - position.side_to_move)
    # a finished game: the value of the side to move, no search
    finished = position
    while finished.result() is None:
        finished = finished.play(finished.legal_moves()[0])
    outcome = Prover(hash_mb=1).solve(finished)
    winner = finished.result().winner
    assert outcome.nodes == 0 and outcome.pv == []
    assert outcome.value == (0 if winner is None else 1 if winner == finished.side_to_move else -1)


# --- the command line ---------------------------------------------------------------------------
def test_prove_command_prints_one_line(capsys):
    text, expected = REFERENCE_PROVEN[2]
    for extra in ([], ["--no-critical"], ["--limit", "30", "--hash", "8"], ["--threads", "2"]):
        assert main(["prove", "uttt", text] + extra) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        assert len(lines) == 1
        line = lines[0]
        assert line.startswith(expected)
        assert "proof" in line and "nodes searched" in line and " s " in line
        pv = line.split("pv: ")[1].split()
        position = get_game("uttt").parse_position(text)
        for move in pv:
            position = position.play(position.parse_move(move))
        assert position.result() is not None and position.result().winner == 1


def test_prove_command_rejects_a_bad_position(capsys):
    assert main(["prove", "uttt", "X;.........;nonsense"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mallard:") and "Traceback" not in captured.err


# --- initial numbers and a kept table -----------------------------------------------------------
def test_plain_df_pn_agrees_with_exhaustive_minimax(game, oracle_cases):
    """Without the evaluation's and the open lines' initial numbers (the default prover has
    them: the tests above), values stay exact."""
    cases, _ = oracle_cases
    prover = Prover(hash_mb=16, heuristic=False, open_lines=False)
    for state, expected in cases[:60]:
        assert prover.solve(UtttPosition(game, state.copy()), details=False).value == expected


def test_a_kept_table_agrees_with_exhaustive_minimax(game, oracle_cases):
    """One table through every position, proven or not (entries from other roots, shared
    endings): the values stay the oracle's, the proofs read back from it still end the game."""
    cases, _ = oracle_cases
    prover = Prover(hash_mb=1)
    for index, (state, expected) in enumerate(cases):
        outcome = prover.solve(UtttPosition(game, state.copy()), keep_table=True,
                               details=index % 10 == 0)
        assert outcome.value == expected
        if index % 10 == 0:
            _check_pv(game, state, outcome)


# --- the order of a solve's two searches, and both at once ---------------------------------------
def test_the_likely_winner_changes_the_work_not_the_value(game, oracle_cases):
    """Whichever side's win is tried first, the value is the oracle's; on decided positions a
    right guess costs fewer nodes than a wrong one (it needs one search, not two)."""
    cases, _ = oracle_cases
    prover = Prover(hash_mb=16)
    right = wrong = 0
    for state, expected in cases[:80]:
        position = UtttPosition(game, state.copy())
        side = int(state[S_SIDE])
        spent = {}
        for guess in (0, 1):
            outcome = prover.solve(position, details=False, likely_winner=guess)
            assert outcome.value == expected, (position.fen(), guess)
            spent[guess] = outcome.nodes
        if expected != 0:
            winner = side if expected > 0 else 1 - side
            right += spent[winner]
            wrong += spent[1 - winner]
    assert right < wrong
    with pytest.raises(ValueError):
        prover.solve(game.start_position(), likely_winner=2)


@pytest.mark.parametrize("threads", [2, 3])
def test_both_searches_at_once_agree_with_one_thread(game, threads):
    """With threads, a solve runs its two searches at once (threads split between them, a
    thread whose search is decided joins the other): the values of one thread, on positions
    of every value (and of the threads on one search at a time), and no thread or mark left
    behind."""
    rng = random.Random(41 + threads)
    one, many = Prover(hash_mb=16), Prover(hash_mb=16, threads=threads)
    in_turn = Prover(hash_mb=16, threads=threads, at_once=False)
    values, solved = set(), 0
    while solved < 8 or (values != {-1, 0, 1} and solved < 40):
        solved += 1
        position = UtttPosition(game, random_late_state(rng, 30))
        expected = one.solve(position, details=False)
        for guess in (None, 0, 1):
            outcome = many.solve(position, details=False, likely_winner=guess)
            assert expected.value is not None and outcome.value == expected.value, position.fen()
            assert outcome.nodes == many.nodes + many.helper_nodes
        assert in_turn.solve(position, details=False).value == expected.value
        values.add(expected.value)
    assert values == {-1, 0, 1}
    assert many.helper_nodes > 0 and not many.busy.any()
    assert not any(thread.name.startswith("mallard-prover") for thread in threading.enumerate())


def test_open_lines_counts_the_global_lines_each_side_can_still_complete(game):
    assert PK.open_lines(game.start_position().state, 0) == 8
    # O won the centre: the four lines through it are X's no more
    centre = game.parse_position("X;....O....;XX......./........./........./........./OOO....../"
                                 "........./........./........./X........")
    assert (PK.open_lines(centre.state, 0), PK.open_lines(centre.state, 1)) == (4, 8)
    # board a is open but O has a mark on each of its lines (X can win it no more), and X has
    # one on each line of board i: three lines lost each
    blocked = game.parse_position("X;.........;O...OO.O./........./........./........./........./"
                                  "........./........./........./XX...XX..")
    assert (PK.open_lines(blocked.state, 0), PK.open_lines(blocked.state, 1)) == (5, 5)
