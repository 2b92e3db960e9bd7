"""One UCI engine subprocess for one board page, driven through the match runner's player code.

`EngineLink` starts the engine with `mallard.tournaments.players.UciPlayer` (the handshake, the
variant) and then reads its output on a thread of its own, so that `info` lines reach the page as
they come. Searches are queued in the order they were sent: a UCI engine answers them in that order,
so every `info` line belongs to the oldest search without a `bestmove` yet, and each `bestmove`
ends that search. A new search first stops the running one; its late lines are still told to
the caller, marked with their search, which drops them. A variant switch is followed by
`isready`, and the commands after it wait here until its `readyok`: the engine then has the
game's code loaded, so a search's time is all spent searching.

Callbacks run on the reader thread: `on_event(kind, search, payload)` with kind `info` (a dict
from `parse_info`), `bestmove` (the move text, None for `(none)`) or `gone` (an error text).
"""

from __future__ import annotations

import collections
import itertools
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from mallard.engines.base import ScoreKind
from mallard.tournaments.players import NO_MOVE, EngineConfig, EngineError, UciPlayer

SCORE_BOUNDS = ("lowerbound", "upperbound")


@dataclass
class Search:
    """One `go` sent to the engine: `purpose` is `analyse` or `play`; `context` is the caller's."""

    ident: int
    purpose: str
    context: Any = None
    stopped: bool = False


def parse_info(line: str) -> Optional[dict]:
    """The fields of a UCI `info` line: depth, seldepth, multipv, score (kind, value, bound),
    nodes, nps, time, pv (move texts) or string; None when it is not one."""
    tokens = line.split()
    if not tokens or tokens[0] != "info":
        return None
    info: dict = {}
    index = 1
    while index < len(tokens):
        token = tokens[index]
        if token == "string":
            info["string"] = " ".join(tokens[index + 1:])
            break
        if token == "pv":
            info["pv"] = tokens[index + 1:]
            break
        if token == "score" and index + 2 < len(tokens) and ScoreKind.read(tokens[index + 1]):
            try:
                info["score"] = {"kind": ScoreKind(tokens[index + 1]),
                                 "value": int(tokens[index + 2])}
            except ValueError:
                pass
            index += 3
            if index < len(tokens) and tokens[index] in SCORE_BOUNDS:
                info["score"]["bound"] = tokens[index]
                index += 1
            continue
        if token in ("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull") \
                and index + 1 < len(tokens):
            try:
                info[token] = int(tokens[index + 1])
            except ValueError:
                pass
            index += 2
            continue
        index += 1
    return info


class EngineLink:
    """A UCI engine process playing one variant at a time (see the module docstring)."""

    def __init__(self, command: list[str], variant: str,
                 on_event: Callable[[str, Optional[Search], Any], None]):
        self.command = list(command)
        self.variant = variant
        self.on_event = on_event
        self.player: Optional[UciPlayer] = None
        self.name = command[0]
        self._lock = threading.Lock()
        self._pending: collections.deque[Search] = collections.deque()
        self._idents = itertools.count(1)
        self._closed = False
        self._level: Optional[int] = None  # the Skill Level last sent
        self._awaiting_ready = False  # an `isready` after a variant switch is unanswered
        self._held: list[str] = []  # the lines given meanwhile, in order, sent at its `readyok`

    def start(self, timeout_ms: int = 60_000) -> None:
        """Start the engine and run the handshake (blocking); EngineError when it fails."""
        player = UciPlayer(EngineConfig("engine", self.command), self.variant,
                           startup_timeout_ms=timeout_ms, ready_timeout_ms=timeout_ms)
        self.player = player  # before the handshake: `close()` during it kills the process
        if self._closed:
            raise EngineError("the page closed while its engine started")
        player.start()
        player.ready(timeout_ms)  # the engine's code loaded: its first move gets its whole time
        if self._closed:  # closed during the handshake, which the kill may have let finish
            player.kill()
            raise EngineError("the page closed while its engine started")
        self.name = player.engine_name or self.name
        threading.Thread(target=self._read, name="board-engine-reader", daemon=True).start()

    @property
    def pid(self) -> Optional[int]:
        return self.player.process.process.pid if self.player else None

    @property
    def alive(self) -> bool:
        return self.player is not None and self.player.alive

    def declares(self, option: str) -> bool:
        return self.player is not None and option.lower() in self.player.declared

    def _send(self, line: str) -> None:
        """Send `line`, or hold it while a variant loads; call with `_lock` held. An `isready`
        sent makes the lines after it wait for its `readyok`."""
        if self.player is None:
            raise EngineError("the engine is not running")
        if self._awaiting_ready:
            self._held.append(line)
            return
        self.player.process.send(line)
        self._awaiting_ready = line == "isready"

    def _answered_ready(self) -> None:
        """Send the held lines again: an `isready` among them (a second switch of game while
        the first loaded) holds the rest once more."""
        with self._lock:
            if not self._awaiting_ready:
                return
            self._awaiting_ready = False
            held, self._held = self._held, []
            try:
                for line in held:
                    self._send(line)
            except EngineError:
                self._held = []  # the engine is gone: the reader's next line says so

    def set_variant(self, variant: str) -> None:
        """Play another game from now on (the running search is stopped)."""
        self.stop()
        with self._lock:
            self.variant = variant
            self._send(f"setoption name UCI_Variant value {variant}")
            self._send("ucinewgame")
            self._send("isready")

    def go(self, root_fen: Optional[str], moves: list[str], go_arguments: str, purpose: str,
           multipv: int = 1, context: Any = None, level: Optional[int] = None) -> Search:
        """Stop the running search and start another at Skill Level `level` (None: as it
        is); its lines and move come as events."""
        self.stop()
        search = Search(next(self._idents), purpose, context)
        with self._lock:
            if self.declares("multipv"):
                self._send(f"setoption name MultiPV value {multipv}")
            if level is not None and level != self._level and self.declares("skill level"):
                self._send(f"setoption name Skill Level value {level}")
                self._level = level
            position = f"position fen {root_fen}" if root_fen else "position startpos"
            self._send(position + (" moves " + " ".join(moves) if moves else ""))
            self._pending.append(search)
            self._send(f"go {go_arguments}")
        return search

    def stop(self) -> None:
        """Ask the running searches to end (their `bestmove`s still come, marked stopped)."""
        with self._lock:
            running = [search for search in self._pending if not search.stopped]
            for search in running:
                search.stopped = True
            if running:
                self._send("stop")

    @property
    def searching(self) -> bool:
        with self._lock:
            return any(not search.stopped for search in self._pending)

    def _read(self) -> None:
        process = self.player.process
        while True:
            try:
                _, line = process.next_line(None)
            except EngineError as error:
                if not self._closed:
                    self.on_event("gone", None, str(error))
                return
            tokens = line.split()
            if tokens[0] == "bestmove":
                with self._lock:
                    search = self._pending.popleft() if self._pending else None
                move = tokens[1] if len(tokens) > 1 and tokens[1] not in NO_MOVE else None
                self.on_event("bestmove", search, move)
            elif tokens[0] == "readyok":
                self._answered_ready()
            elif tokens[0] == "info":
                with self._lock:
                    search = self._pending[0] if self._pending else None
                info = parse_info(line)
                if search is not None and info:
                    self.on_event("info", search, info)

    def close(self) -> None:
        """End the engine now, its process group included (it has nothing left to say; a
        polite `quit` would hold the page's teardown, which may be cancelled while it waits)."""
        self._closed = True
        if self.player is not None:
            self.player.kill()
