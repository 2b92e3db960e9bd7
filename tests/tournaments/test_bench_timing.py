"""`mallard bench timing`: the clock replay behind its columns (fast), and the benchmark's short
version, 20 games per row, which must end without a time loss (slow)."""

from __future__ import annotations

import io

import pytest

from mallard.tournaments import EngineConfig
from mallard.tournaments.bench_timing import bench_timing, move_timings, parse_control
from mallard.tournaments.records import GameJob, GameRecord, MoveRecord, Opening


def _record(control: str, times: list[int], flag_ms=None, opening_moves=0) -> GameRecord:
    engine = EngineConfig(name="e", command=["e"], tc=parse_control(control))
    job = GameJob(1, 1, 1, "duck", engine, engine, 0, 1, Opening())
    moves = [MoveRecord("m", "m") for _ in range(opening_moves)]
    moves += [MoveRecord("m", "m", time_ms) for time_ms in times]
    return GameRecord(job, "0-1" if flag_ms else "1/2-1/2", "", "", moves,
                      "startpos w", "", 0, "a", "b", flag_move_ms=flag_ms,
                      flag_allowed_ms=None)


def test_fixed_move_time_rows():
    rows = move_timings(_record("st=0.05", [21, 25, 60], flag_ms=None), overhead_ms=30)
    # allowed: the move time itself; the engine's budget: 50 - 30 ms
    assert rows == [(21, 50, 20), (25, 50, 20), (60, 50, 20)]


def test_clock_rows_follow_the_replayed_clocks():
    # tc=1+0.01, pre-incremented: each side starts at 1010 ms. By hand, with Move Overhead 30
    # kept five times in reserve: 860 ms to plan with -> 860/25 + 0.75 * 10 = 41.9 -> 41 ms.
    rows = move_timings(_record("tc=1+0.01", [100, 40, 500], flag_ms=700), overhead_ms=30)
    assert rows[0] == (100, 1010, 41)
    assert rows[1] == (40, 1010, 41)
    # white after its 100 ms move: 1010 - 100 + 10 = 920 left -> 770/25 + 7.5 = 38.3 -> 38
    assert rows[2] == (500, 920, 38)
    # black after 40 ms: 980 left; the losing move (700 ms) is counted with it
    assert rows[3] == (700, 980, int((980 - 150) / 25 + 7.5))


def test_book_moves_are_not_timed_and_keep_the_side_to_move():
    rows = move_timings(_record("tc=1+0.01", [100, 40], opening_moves=1), overhead_ms=30)
    # the first timed move is black's (ply 1), whose clock is untouched
    assert [row[1] for row in rows] == [1010, 1010]


@pytest.mark.slow
def test_no_time_loss_in_20_games_per_row():
    out = io.StringIO()
    assert bench_timing(games=20, out=out) == 0
    table = out.getvalue()
    rows = [line.split("|")[1:-1] for line in table.splitlines()
            if line.startswith("| duck") or line.startswith("| cfour")]
    assert len(rows) == 4, table
    for variant, control, games, losses, *_ in rows:
        assert int(games) == 20, table
        assert int(losses) == 0, table
    assert "loses on time" not in table and "disconnects" not in table
