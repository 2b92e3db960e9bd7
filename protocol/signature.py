"""The bench signature of a game (Stockfish's `bench`), run the way a client runs a search.

`run_signature(variant)` takes the game's `BenchSignature` (`GameEntry.bench()`, declared in the
game package's `bench` module) and searches its positions through a new `Session`: the
signature's options set once, then for each position a new game (an empty table), the position,
and `go depth N`. The node total depends on the search alone, so `mallard bench` and UCI `bench`
print the same number on every machine. The searches run on the session's own thread as a `go`
does; a first one-ply search loads the compiled code, so compiling is not timed (the signature's
searches all start from an empty table, so it does not change the count).

`bench_signatures` is `mallard bench` without a benchmark: Stockfish's form of the signatures,
the counts on stdout and the time and speed on stderr.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Optional, TextIO

from mallard.engines import find_game
from mallard.engines.base import Limits
from mallard.engines.bench import rate
from mallard.protocol.session import Session


@dataclass(frozen=True)
class SignatureResult:
    """A game's signature: `nodes` over its `positions` searched to `depth` in `seconds`."""

    variant: str
    positions: int
    depth: int
    nodes: int
    seconds: float


def run_signature(variant: str) -> SignatureResult:
    """The signature of the game called `variant`; ValueError when it declares none,
    RuntimeError when one of its searches fails."""
    entry = find_game(variant)
    if entry.bench is None:
        raise ValueError(f"{entry.name} has no bench signature")
    signature = entry.bench()
    session = Session(entry.name)
    for name, value in signature.options:
        session.set_option(name, value)
    session.set_position(signature.positions[0], [])
    session.search_now(Limits(depth=1))  # load (or compile) the search outside the timing
    nodes, seconds = 0, 0.0
    for text in signature.positions:
        session.new_game()
        session.set_position(text, [])
        started = time.perf_counter()
        result = session.search_now(Limits(depth=signature.depth))
        seconds += time.perf_counter() - started
        if "error" in result.extra:  # a failed search is no signature (it counted no nodes)
            raise RuntimeError(f"the {entry.name} search failed on '{text}': "
                               f"{result.extra['error']}")
        nodes += result.nodes
    return SignatureResult(entry.name, len(signature.positions), signature.depth, nodes, seconds)


def bench_signatures(variants, out: Optional[TextIO] = None,
                     err: Optional[TextIO] = None) -> int:
    """Stockfish's `bench`: `<variant>: Nodes searched: N` per game, then the total, on `out`
    (stdout); the time and speed of each game on `err` (stderr), as Stockfish reports them."""
    out, err = out or sys.stdout, err or sys.stderr
    results: list[SignatureResult] = []
    for variant in variants:
        result = run_signature(variant)
        results.append(result)
        err.write(f"{result.variant}: {result.positions} positions at depth {result.depth}, "
                  f"{result.seconds:.2f} s, {rate(result.nodes, result.seconds, 1e3)} "
                  "knodes/s\n")
        err.flush()
        out.write(f"{result.variant}: Nodes searched: {result.nodes}\n")
        out.flush()
    nodes = sum(result.nodes for result in results)
    seconds = sum(result.seconds for result in results)
    err.write(f"Total time (ms): {seconds * 1000:.0f}, nodes/second: "
              f"{nodes / seconds if seconds > 0 else 0:.0f}\n")
    out.write(f"Nodes searched: {nodes}\n")
    return 0
