"""One game-agnostic engine session under every front-end (UCI, UGI, GTP).

The session holds the variant, the position (root text plus the moves played from it), the
option values, the searcher, the stop flag and the search thread. Front-ends parse lines into
calls on it and print what it hands back; it never prints. Every method that takes user input
returns an error text (None when all went well) and keeps the previous state on error, except
`set_position`, which keeps the moves before the first bad one as Fairy-Stockfish does.

A search runs on a worker thread (the kernels release the GIL), so the reading thread stays free
to answer `isready` and `stop`. Each `go` delivers exactly one result to its `on_done` callback,
also when stopped, superseded by another `go`, or when the game is already over.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Callable, Optional

from engines import GAMES, get_game
from engines.base import GameError, Limits, Option, SearchInfo, SearchResult, new_stop_flag

DEFAULT_VARIANT = "duck"
VARIANTS = ("duck", "cfour")  # the order UCI_Variant lists them in

PROTOCOL_OPTIONS = [
    Option("UCI_Variant", "combo", DEFAULT_VARIANT, choices=VARIANTS),
    Option("Ponder", "check", False),
    Option("Move Overhead", "spin", 30, 0, 5000),
    Option("UCI_ShowWDL", "check", False),
    Option("UCI_AnalyseMode", "check", False),
    Option("Clear Hash", "button"),
]


def parse_option_value(option: Option, text: Optional[str]):
    """The typed value of an option text; ValueError names what is wrong."""
    if option.type == "button":
        return None
    if text is None:
        raise ValueError(f"option '{option.name}' needs a value")
    if option.type == "check":
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"option '{option.name}' takes true or false, not '{text}'")
        return lowered == "true"
    if option.type == "spin":
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"option '{option.name}' takes an integer, not '{text}'") from None
        if (option.min is not None and value < option.min) or \
                (option.max is not None and value > option.max):
            raise ValueError(f"option '{option.name}' must be between {option.min} and "
                             f"{option.max}, not {value}")
        return value
    if option.type == "combo":
        for choice in option.choices:
            if choice.lower() == text.strip().lower():
                return choice
        raise ValueError(f"option '{option.name}' takes one of {', '.join(option.choices)}, "
                         f"not '{text}'")
    return text


class Session:
    def __init__(self, variant: str = DEFAULT_VARIANT):
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._stop = new_stop_flag()
        self.values: dict[str, object] = {o.name.lower(): o.default for o in PROTOCOL_OPTIONS}
        self._searcher = None
        self._game_values: dict[str, object] = {}
        self._select(variant)

    # --- variant, options ---------------------------------------------------------------------
    def _select(self, variant: str) -> None:
        self.game = get_game(variant)
        self.variant = variant
        self.values["uci_variant"] = variant
        self._searcher = None
        self._game_values = {o.name.lower(): o.default for o in self.game.options()}
        self.root_text = "startpos"
        self.position = self.game.start_position()
        self.moves: list[str] = []

    def options(self) -> list[Option]:
        """Every option to announce: the protocol's, then the current game's."""
        return PROTOCOL_OPTIONS + [o for o in self.game.options()
                                   if o.name.lower() not in self.values]

    def find_option(self, name: str) -> Optional[Option]:
        for option in self.options():
            if option.name.lower() == name.strip().lower():
                return option
        return None

    def set_option(self, name: str, text: Optional[str]) -> Optional[str]:
        option = self.find_option(name)
        if option is None:
            return None  # unknown options are ignored: clients send them blindly
        try:
            value = parse_option_value(option, text)
        except ValueError as error:
            return str(error)
        key = option.name.lower()
        if key == "uci_variant":
            if value not in GAMES:
                return f"unknown variant '{value}'"
            self.stop_and_wait()
            self._select(value)
            return None
        if key == "clear hash":
            if self._searcher is not None:
                self.stop_and_wait()
                self._searcher.clear()
            return None
        if key in self._game_values:
            self._game_values[key] = value
            if self._searcher is not None:
                self.stop_and_wait()
                self._searcher.set_option(option.name, value)
            return None
        self.values[key] = value
        return None

    def searcher(self):
        """The current game's searcher, created on first use with the options set so far."""
        if self._searcher is None:
            self._searcher = self.game.new_searcher()
            for option in self.game.options():
                value = self._game_values[option.name.lower()]
                if value != option.default:
                    self._searcher.set_option(option.name, value)
        return self._searcher

    # --- position -----------------------------------------------------------------------------
    def new_game(self) -> None:
        self.stop_and_wait()
        if self._searcher is not None:
            self._searcher.clear()
        self.root_text = "startpos"
        self.position = self.game.start_position()
        self.moves = []

    def set_position(self, root: str, moves: list[str]) -> Optional[str]:
        """`root` is "startpos" or a FEN. A bad FEN keeps the old position; a bad move keeps
        the moves before it. Returns the error text."""
        try:
            position = self.game.start_position() if root == "startpos" else \
                self.game.parse_position(root)
        except GameError as error:
            return f"invalid position '{root}': {error}"
        played = []
        error_text = None
        for index, text in enumerate(moves):
            try:
                position = position.play(position.parse_move(text))
            except GameError as error:
                error_text = f"illegal move {index + 1} '{text}': {error}"
                break
            played.append(text)
        self.root_text, self.position, self.moves = root, position, played
        return error_text

    # --- searching ----------------------------------------------------------------------------
    def effective_limits(self, limits: Limits) -> Limits:
        """The limits with the move overhead taken off the clocks and the move time."""
        overhead = int(self.values["move overhead"])

        def less(value):
            return None if value is None else max(1, value - overhead)

        return dataclasses.replace(limits, wtime=less(limits.wtime), btime=less(limits.btime),
                                   movetime=less(limits.movetime))

    def go(self, limits: Limits, on_info: Callable[[SearchInfo], None],
           on_done: Callable[[SearchResult], None]) -> None:
        """Start a search on the worker thread; `on_done` gets its one result."""
        self.stop_and_wait()
        position = self.position
        searcher = self.searcher()
        limits = self.effective_limits(limits)
        self._stop[0] = 0
        stop = self._stop

        def run() -> None:
            try:
                result = searcher.search(position, limits, stop, on_info)
            except Exception as error:  # a search bug must still answer the go
                result = SearchResult(_any_move(position), extra={"error": repr(error)})
            on_done(result)

        with self._lock:
            self._thread = threading.Thread(target=run, name="mallard-search", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop[0] = 1

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait for the running search; True when none is left running."""
        with self._lock:
            thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def stop_and_wait(self) -> None:
        self.stop()
        self.wait()

    @property
    def searching(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread.is_alive()


def _any_move(position):
    moves = position.legal_moves()
    return moves[0] if moves else None
