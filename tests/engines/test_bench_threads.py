"""`mallard bench threads`: every variant's bench positions with 1 and 2 threads."""

from __future__ import annotations

import io

from mallard.engines.bench_threads import bench_threads


def test_a_row_per_variant_and_thread_count_with_their_nodes():
    out = io.StringIO()
    assert bench_threads(["duck", "uttt"], 30, 2, out) == 0
    rows = [line.split("|")[1:-1] for line in out.getvalue().splitlines()
            if line.startswith("| duck") or line.startswith("| uttt")]
    assert [(row[0].strip(), row[1].strip()) for row in rows] == [
        ("duck", "1"), ("duck", "2"), ("uttt", "1"), ("uttt", "2")]
    for variant, threads, positions, depths, _, nodes, rate, ratio, to_depths, speedup in rows:
        assert len(depths.split()) == int(positions) >= 5
        # (a depth may be 0: a heavy duck position can take longer than 30 ms for depth 1)
        assert max(int(depth) for depth in depths.split()) >= 2
        assert int(nodes.replace(",", "")) > 0 and float(rate.replace(",", "")) > 0
        assert float(to_depths) > 0 and float(speedup) > 0
        if threads.strip() == "1":
            assert ratio.strip() == "1.00" and speedup.strip() == "1.00"
