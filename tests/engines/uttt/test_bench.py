"""The UTTT bench's random positions (engines/uttt/bench.py), made through `UtttPosition` since
the bench moved out of protocol/: the open-cell count agrees with the kernels' own, and the
positions are the ones the kernel-level version drew from the same seed."""

from __future__ import annotations

import random

import numpy as np

from mallard.engines.uttt import kernels as K
from mallard.engines.uttt.bench import open_cells, random_game, random_late_position
from mallard.engines.uttt.board import RESULT_NONE, S_RESULT
from mallard.engines.uttt.rules import UtttGame


def test_open_cells_agrees_with_the_kernels():
    rng = random.Random(5)
    for _ in range(20):
        for position in random_game(rng):
            assert open_cells(position) == K.count_open_cells(position.state)


def test_random_late_position_draws_what_the_kernel_loop_drew():
    """The loop protocol/uttt_bench.py ran on the state array, with the same random numbers."""
    moves = np.zeros(81, dtype=np.int64)
    for seed in range(5):
        rng = random.Random(seed)
        while True:
            state = UtttGame().start_position().state.copy()
            while state[S_RESULT] == RESULT_NONE and K.count_open_cells(state) > 38:
                count = K.generate_moves(state, moves)
                K.make_move(state, int(moves[rng.randrange(count)]))
            if state[S_RESULT] == RESULT_NONE:
                break
        position = random_late_position(random.Random(seed), 38)
        assert np.array_equal(position.state, state) and open_cells(position) <= 38


def test_prover_threads_table_solves_each_position_twice_and_agrees():
    import io

    from mallard.engines.uttt.bench import _prover_threads_table

    out = io.StringIO()
    assert _prover_threads_table(1, 2.0, 1, 2, out) == 0
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| 2")]
    assert [row.split("|")[1].strip() for row in rows] == ["22", "24", "26"]
    for row in rows:
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert cells[3] in ("X wins", "O wins", "draw", "unknown")
        assert int(cells[5].replace(",", "")) > 0 and int(cells[7].replace(",", "")) > 0
