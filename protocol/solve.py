"""`mallard solve`: the line protocol of Pascal Pons' `c4solver`, which existing harnesses drive.

One position per input line (1-based column digits; an empty line is the empty board). Output per
line: `<moves> <score>`; with analysis `<moves> s1 .. sW` (-1000 for a full column); weak solving
prints the sign only; `--stats` appends `<nodes> <microseconds>`. A bad line prints
`Line N: Invalid move M "<moves>" (reason)` on stderr (a long line clipped, one over 1 MB read
and dropped a piece at a time) and the run goes on.
"""

from __future__ import annotations

import time
from typing import TextIO

from mallard.engines import compile_cache
from mallard.engines.base import MoveError, clip
from mallard.engines.connect4.book import default_book
from mallard.engines.connect4.rules import Connect4Game
from mallard.engines.connect4.solver import Solver
from mallard.engines.processes import MAX_LINE_BYTES, OVERLONG_LINE, input_lines


def run(stdin: TextIO, stdout: TextIO, stderr: TextIO, *, weak: bool = False,
        analyze: bool = False, book: bool = True, stats: bool = False, width: int = 7,
        height: int = 6, hash_mb: int = 128, threads: int = 1) -> int:
    game = Connect4Game(width, height)
    compile_cache.announce_compile("cfour")
    solver = Solver(width, height, hash_mb=hash_mb, threads=threads,
                    book=default_book(width, height) if book else None)
    for number, raw in enumerate(input_lines(stdin), 1):
        if raw is OVERLONG_LINE:
            stderr.write(f"Line {number}: Invalid line (longer than {MAX_LINE_BYTES} bytes)\n")
            stderr.flush()
            continue
        line = raw.strip()
        try:
            position = game.parse_sequence(line)
        except MoveError as error:
            reason = clip(str(error).split(": ", 1)[-1])
            stderr.write(f'Line {number}: Invalid move {error.index} "{clip(line)}" ({reason})\n')
            stderr.flush()
            continue
        started = time.perf_counter()
        if analyze:
            values = solver.analyze(position, weak=weak)
            text = " ".join(str(v) for v in values)
        else:
            text = str(solver.solve(position, weak=weak))
        micros = int((time.perf_counter() - started) * 1e6)
        out = f"{line} {text}"
        if stats:
            out += f" {solver.nodes} {micros}"
        stdout.write(out + "\n")
        stdout.flush()
    return 0


