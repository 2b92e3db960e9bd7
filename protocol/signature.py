"""The bench signature of a game (Stockfish's `bench`), run the way a client runs a search.

`run_signature(variant)` takes the game's `BenchSignature` (`GameEntry.bench()`, declared in the
game package's `bench` module) and searches its positions through a new `Session`: the
signature's options set once, then for each position a new game (an empty table), the position,
and `go depth N`. The node total depends on the search alone, so `mallard bench` and UCI `bench`
print the same number on every machine. The searches run on the session's own thread as a `go`
does; a first one-ply search loads the compiled code, so compiling is not timed (the signature's
searches all start from an empty table, so it does not change the count).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from mallard.engines import find_game
from mallard.engines.base import Limits
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
