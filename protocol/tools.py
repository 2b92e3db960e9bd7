"""`mallard perft`, `prove` and `book build`: each runs one of the games' tools and prints what
it found, the answer on the `out` stream it is given (stdout), progress on `err` (stderr).

The games compute (`Position.perft`/`divide`, the UTTT prover, the Connect Four book builder);
this module only prints. A book is built on the `WorkPool` the caller opens: local processes
or a Dask cluster, which the command line opens with the match runner's code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, TextIO

from mallard.engines import compile_cache, get_game
from mallard.engines.workpool import WorkPool


def perft(variant: str, depth: int, fen: Optional[str], divide: bool, bulk: bool,
          out: TextIO) -> int:
    """The leaves `depth` plies below `fen` (None: the start position); with `divide`, first
    'move: count' for every root move."""
    if divide and depth < 1:  # every game alike: a divide lists the moves of depth 1 and on
        raise ValueError("--divide needs a depth of at least 1")
    game = get_game(variant)
    compile_cache.announce_compile(game.variant, "perft")
    position = game.parse_position(fen) if fen is not None else game.start_position()
    if divide:
        total = 0
        for move, count in position.divide(depth, bulk):
            print(f"{position.format_move(move)}: {count}", file=out, flush=True)
            total += count
        print(file=out)
    else:
        total = position.perft(depth, bulk)
    print(f"Nodes searched: {total}", file=out)
    return 0


def prove(text: str, limit: Optional[float], hash_mb: int, critical: bool, threads: int,
          out: TextIO) -> int:
    """The value of the UTTT position `text`, proven within `limit` seconds (None: no limit);
    130 when Ctrl-C stopped the proof (what it had is printed)."""
    from mallard.engines.uttt.prover import Prover, format_outcome, solve_interruptibly

    compile_cache.announce_compile("uttt")
    position = get_game("uttt").parse_position(text)
    prover = Prover(hash_mb=hash_mb, critical=critical, threads=threads)
    outcome, interrupted = solve_interruptibly(prover, position, limit)
    print(format_outcome(position, outcome), file=out)
    return 130 if interrupted else 0


def prove_game(start: Optional[str], moves_text: str, limit: Optional[float], plies: Optional[int],
               hash_mb: int, critical: bool, threads: int, out: TextIO) -> int:
    """Game analysis: the positions of the game `moves_text` (from `start`, None: the start
    position) proven from the last backwards on one table, one line each, then a summary; only
    the last `plies` + 1 positions when `plies` is given. 130 when Ctrl-C stopped it."""
    from mallard.engines.base import MoveError
    from mallard.engines.uttt.prover import Prover, analyse_game, run_interruptibly

    game = get_game("uttt")
    position = game.parse_position(start) if start else game.start_position()
    positions, played = [position], [None]
    for number, text in enumerate(game_move_texts(moves_text), 1):
        try:
            move = positions[-1].parse_move(text)
        except MoveError as error:
            raise MoveError(f"move {number}: {error}") from None
        played.append(positions[-1].format_move(move))
        positions.append(positions[-1].play(move))
    first = 0 if plies is None else max(0, len(positions) - 1 - plies)
    compile_cache.announce_compile("uttt")
    prover = Prover(hash_mb=hash_mb, critical=critical, threads=threads)
    last = len(positions) - 1
    totals = {"seconds": 0.0, "nodes": 0, "proven": 0, "positions": 0}

    def work() -> None:
        for index, outcome in analyse_game(prover, positions[first:], time_limit=limit):
            ply = first + index
            print(game_line(ply, last - ply, played[ply], outcome.text, outcome.seconds,
                            outcome.nodes), file=out, flush=True)
            totals["seconds"] += outcome.seconds
            totals["nodes"] += outcome.nodes
            totals["positions"] += 1
            totals["proven"] += outcome.value is not None

    _, interrupted = run_interruptibly(prover, work)
    print(f"{totals['proven']} of {totals['positions']} positions proven  "
          f"{totals['nodes']:,} nodes  {totals['seconds']:.2f} s", file=out)
    return 130 if interrupted else 0


def game_line(ply: int, before_end: int, move: Optional[str], value: str, seconds: float,
              nodes: int) -> str:
    """One position's line of a game analysis (`read_game_line` reads it back)."""
    after = f"after {move}" if move else "start"
    return (f"ply {ply:>2} ({before_end:>2} before the end, {after:<8})  {value:<7}  "
            f"{seconds:6.2f} s  {nodes:>12,} nodes")


GAME_LINE = re.compile(r"ply +(\d+) \( *(\d+) before the end, (?:start|after (\S+)) *\)  +"
                       r"(X wins|O wins|draw|unknown) +([\d.]+) s +([\d,]+) nodes")


def read_game_line(text: str) -> Optional[dict]:
    """The fields of a `game_line` (ply, beforeEnd, move, value, seconds, nodes); None for any
    other line (the summary)."""
    found = GAME_LINE.fullmatch(text.strip())
    if found is None:
        return None
    ply, before_end, move, value, seconds, nodes = found.groups()
    return {"ply": int(ply), "beforeEnd": int(before_end), "move": move, "value": value,
            "seconds": float(seconds), "nodes": int(nodes.replace(",", ""))}


def game_move_texts(moves_text: str) -> list[str]:
    """The moves of a game's text: separated by spaces or commas; move numbers ("12.") and a
    result ("1-0", "0-1", "1/2-1/2", "*") are skipped."""
    texts = []
    for token in moves_text.replace(",", " ").split():
        if token in ("1-0", "0-1", "1/2-1/2", "*") or token.rstrip(".").isdigit():
            continue
        texts.append(token)
    return texts


def build_book(width: int, height: int, depth: int, output: Optional[str], use_base: bool,
               pool: WorkPool, out: TextIO, err: TextIO) -> int:
    """A Connect Four book of every position up to `depth` stones, solved on `pool`; prints its
    path. With `use_base`, a 7x6 book shallower than 12 plies is searched with BitBully's."""
    from mallard.engines.connect4 import book_builder
    from mallard.engines.connect4.book import BITBULLY_FILE, bitbully_book, cache_dir

    def progress(level: int, done: int, total: int) -> None:
        print(f"level {level}: {done}/{total} chunks", file=err, flush=True)

    if output is not None:  # said before the build, not after it
        target = Path(output)
        if not output.strip() or target.is_dir() or not target.name:
            raise ValueError(f"--output '{output}' is not a file name (the book is one file, "
                             "e.g. book.npz)")
        if not target.parent.is_dir():
            raise ValueError(f"--output '{output}': no directory '{target.parent}'")
    base = None
    if use_base and (width, height) == (7, 6) and depth < 12:
        if bitbully_book() is not None:  # converts and caches it on first use
            base = cache_dir() / BITBULLY_FILE
    path = book_builder.build_book(width, height, depth, output=output, base=base,
                                   progress=progress, pool=pool)
    print(path, file=out)
    return 0
