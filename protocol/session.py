"""One game-agnostic engine session under every front-end (UCI, UGI, GTP).

The session holds the variant, the position (root text plus the moves played from it), the
option values, the searcher, the stop flag, the search thread and the time manager (the clock
arithmetic of `mallard.engines.timeman` with `Move Overhead` taken off, and the ponder hit).
Front-ends parse lines into calls on it and print what it hands back; it never prints. A method that
takes user input raises a typed `GameError` (`PositionError`, `MoveError` with the move's index,
`OptionError`, `UnknownGameError`, or a searcher's own such as `TableSizeError`), which each
front-end turns into its own error line, and keeps the previous state, except `set_position`,
which keeps the moves before the first bad one as Fairy-Stockfish does. Options are declared
once (`PROTOCOL_OPTIONS` here, the game's in its `GameEntry`): `set_option` finds, parses and
applies them. A game's developer options exist for a session only when its process's
environment asks for them (`GameEntry.searcher_options`); otherwise they are unknown options.

A search runs on a worker thread (the kernels release the GIL), so the reading thread stays free
to answer `isready` and `stop`. Each `go` delivers exactly one result to its `on_done` callback,
also when stopped, superseded by another `go`, or when the game is already over. An `infinite`
or `ponder` search holds its result back until `stop` (or `ponderhit`), as UCI requires.

Start-up: `start_warm_up()` loads or compiles the game's compiled code on a background thread,
at once or (deferred) at the front-end's first `ready()`, so only the selected game compiles;
every method that needs the engine waits for a running warm-up (`wait_ready`), the rest answer at
once, so a server can send `uciok` before anything has compiled.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from typing import Callable, Optional

from mallard.engines import DEFAULT_GAMES, compile_cache, find_game, game_names
from mallard.engines.base import (
    GameError,
    Limits,
    MoveError,
    Option,
    OptionError,
    PositionError,
    SearchInfo,
    SearchResult,
    new_stop_flag,
)
from mallard.engines.skill import MAX_LEVEL, MIN_LEVEL, SkilledSearcher
from mallard.engines.timeman import (
    DEFAULT_MOVE_OVERHEAD_MS,
    after_overhead,
    freeze_long_lived_objects,
    move_budget_ms,
)

MAX_MULTIPV = 500


def _clear_hash(session: "Session", _) -> None:
    session.clear_hash()


def _select_variant(session: "Session", name: str) -> None:
    session.set_variant(name)


# The protocol's own options, before the game's (`GameEntry.options`). Those without `apply`
# are read where they matter (MultiPV, Ponder, Move Overhead, UCI_ShowWDL, UCI_AnalyseMode,
# Skill Level).
PROTOCOL_OPTIONS = [
    Option("UCI_Variant", "combo", DEFAULT_GAMES["uci"], apply=_select_variant),
    Option("MultiPV", "spin", 1, 1, MAX_MULTIPV),
    Option("Ponder", "check", False),
    Option("Move Overhead", "spin", DEFAULT_MOVE_OVERHEAD_MS, 0, 5000),
    Option("UCI_ShowWDL", "check", False),
    Option("UCI_AnalyseMode", "check", False),
    Option("Skill Level", "spin", MAX_LEVEL, MIN_LEVEL, MAX_LEVEL),
    Option("Clear Hash", "button", apply=_clear_hash),
]


class Session:
    def __init__(self, variant: str = DEFAULT_GAMES["uci"], **game_args):
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._stop = new_stop_flag()
        self._release = threading.Event()  # lets an infinite or ponder search deliver its result
        self._ponder_limits: Optional[Limits] = None
        self._ponder_timer: Optional[threading.Timer] = None
        self._ready = threading.Event()
        self._ready.set()
        self._abandoned = threading.Event()  # the client quit or closed its input
        self._warm_up_enabled = False  # set by start_warm_up (servers); API users compile lazily
        self._defer_warm_up = False
        self._warmed = None  # the game whose code the warm-up has loaded
        self._warm_error: Optional[str] = None
        self.values: dict[str, object] = {o.name.lower(): o.default for o in PROTOCOL_OPTIONS}
        self._searcher = None
        self._game_values: dict[str, object] = {}
        self._skill_rng = random.Random()
        entry = find_game(variant)
        self._select(entry, entry.new_game(**game_args))

    # --- variant, options ---------------------------------------------------------------------
    def _select(self, entry, game) -> None:
        """Play `game` from its start; the values of the game options the new game shares
        (Hash, Threads) are kept, as a GUI sets them once whatever the variant."""
        kept = self._game_values
        self.entry = entry  # the game's registry entry: its options, searcher, protocols
        self.game = game
        self.variant = entry.name  # the variant's own name, also when chosen by an alias
        self.values["uci_variant"] = entry.name
        self._searcher = None
        self._game_options = entry.searcher_options()
        self._game_values = {o.key: (kept[o.key] if o.key in kept and o.accepts(kept[o.key])
                                     else o.default) for o in self._game_options}
        self.root_text = "startpos"
        self._position = None  # made on first use: it may need compiled code
        self.moves: list[str] = []

    @property
    def position(self):
        if self._position is None:
            self._position = self.game.start_position()
        return self._position

    def set_variant(self, variant: str) -> None:
        """Switch to another game (its start position); UnknownGameError for an unknown one."""
        entry = find_game(variant)
        self.wait_ready()
        self.stop_and_wait()
        self._select(entry, entry.new_game())
        self._restart_warm_up()

    def resize(self, width: int, height: int) -> None:
        """The same game on a width x height board (GTP `boardsize`), from its start;
        PositionError (the board kept) when the game cannot have that size."""
        self.wait_ready()
        try:
            game = self.game.resized(width, height)
        except ValueError as error:  # GameError included
            raise PositionError(str(error)) from None
        self.stop_and_wait()
        self._select(self.entry, game)

    def options(self) -> list[Option]:
        """Every option to announce: the protocol's (UCI_Variant listing the registry's games),
        then the current game's."""
        variant = dataclasses.replace(PROTOCOL_OPTIONS[0], default=self.variant,
                                      choices=tuple(game_names()))
        return [variant] + PROTOCOL_OPTIONS[1:] + [o for o in self._game_options
                                                   if o.key not in self.values]

    def find_option(self, name: str) -> Optional[Option]:
        wanted = name.strip().lower()
        return next((option for option in self.options() if option.key == wanted), None)

    def set_option(self, name: str, text: Optional[str]) -> None:
        """Set an option from its value text; OptionError (or the GameError of a change the
        engine refuses, such as a table the machine cannot hold) keeps the old value."""
        option = self.find_option(name)
        if option is None:
            raise OptionError(f"no such option '{name.strip()}'")
        value = option.parse(text)
        if option.key in self._game_values:
            self._set_game_option(option, value)
        elif option.apply is not None:
            option.apply(self, value)
        else:
            self.values[option.key] = value

    def _set_game_option(self, option: Option, value) -> None:
        self.wait_ready()
        old, created = self._game_values[option.key], self._searcher is None
        self._game_values[option.key] = value
        try:  # applied now, so a table is allocated here and not inside a timed search
            if created:
                self.searcher()
            else:
                self.stop_and_wait()
                option.apply(self._searcher, value)
        except GameError:  # e.g. a table the machine cannot hold: the old one is kept
            self._game_values[option.key] = old
            if created:
                self._searcher = None
            raise

    def clear_hash(self) -> None:
        """Empty the searcher's tables (UCI's `Clear Hash` button)."""
        self.wait_ready()
        if self._searcher is not None:
            self.stop_and_wait()
            self._searcher.clear()

    def searcher(self):
        """The current game's searcher, created on first use with the options set so far."""
        if self._searcher is None:
            self._searcher = self.entry.new_searcher(self.game)
            for option in self._game_options:
                value = self._game_values[option.key]
                if value != option.default:
                    option.apply(self._searcher, value)
        return self._searcher

    # --- start-up -----------------------------------------------------------------------------
    def start_warm_up(self, defer: bool = False) -> None:
        """Load or compile the current game's code on a background thread: now, or with `defer`
        at the first `ready()` (a UCI client sets its variant after the handshake: compiling the
        default game meanwhile would make it wait for code it never uses)."""
        self._warm_up_enabled = True
        self._defer_warm_up = defer
        self._restart_warm_up()

    def _restart_warm_up(self) -> None:
        if not self._defer_warm_up:
            self._begin_warm_up()

    def _begin_warm_up(self) -> None:
        if not self._warm_up_enabled or self._warmed is self.game:
            return  # once per game
        self._warmed = self.game
        if self.searching:
            return  # its code is loaded, and the warm-up must not share its searcher
        self._ready.clear()
        game = self.game

        def warm() -> None:
            try:
                compile_cache.announce_compile(game.variant)
                position = game.start_position()
                searcher = self.searcher()
                searcher.warm_up()
                for move in position.legal_moves()[:1]:
                    text = position.format_move(move)
                    child = position.play(position.parse_move(text))
                    child.result()
                    child.fen()
                    searcher.search(child, Limits(depth=2, nodes=2000), new_stop_flag())
                    searcher.search(child, Limits(depth=1, nodes=500, multipv=2), new_stop_flag())
                searcher.clear()
                freeze_long_lived_objects()
            except Exception as error:  # reported by `isready`'s caller through warm_error
                self._warm_error = repr(error)
            finally:
                self._ready.set()

        threading.Thread(target=warm, name="mallard-warm-up", daemon=True).start()

    def ready(self, timeout: Optional[float] = None) -> bool:
        """Start the current game's warm-up if it waits for this, then wait for it; True when
        the compiled code is loaded. Front-ends call it before commands that need the engine."""
        self._begin_warm_up()
        return self.wait_ready(timeout)

    def wait_ready(self, timeout: Optional[float] = None) -> bool:
        """Wait until a running warm-up has loaded the compiled code; True when it has."""
        return self._ready.wait(timeout)

    @property
    def warm_error(self) -> Optional[str]:
        return self._warm_error

    # --- position -----------------------------------------------------------------------------
    def new_game(self) -> None:
        self.wait_ready()
        self.stop_and_wait()
        if self._searcher is not None:
            self._searcher.clear()
        self.root_text = "startpos"
        self._position = None
        self.moves = []

    def set_position(self, root: str, moves: list[str]) -> None:
        """`root` is "startpos" or a FEN. A bad FEN (PositionError) keeps the old position; a
        bad move (MoveError, with its 1-based index) keeps the moves before it, as
        Fairy-Stockfish does.

        When the root is the same and the moves extend those of the current position, as a GUI
        sends them move after move, only the new ones are played: replaying a whole game cost
        about 5 ms per hundred moves, which a clock of 1+0.01 could not spare."""
        self.wait_ready()
        if root == self.root_text and moves[:len(self.moves)] == self.moves:
            position, played = self.position, list(self.moves)
        else:
            try:
                position = self.game.start_position() if root == "startpos" else \
                    self.game.parse_position(root)
            except ValueError as error:  # GameError included
                raise PositionError(f"invalid position '{root}': {error}") from None
            played = []
        problem = None
        for index, text in enumerate(moves[len(played):], len(played)):
            try:
                position = position.play(position.parse_move(text))
            except GameError as error:
                problem = MoveError(f"illegal move {index + 1} '{text}': {error}", index + 1)
                break
            played.append(text)
        self.root_text, self._position, self.moves = root, position, played
        if problem is not None:
            raise problem

    def play(self, text: str) -> None:
        """Play one more move from the current position; MoveError when it is illegal."""
        self.wait_ready()
        position = self.position.play(self.position.parse_move(text))
        self._position = position
        self.moves.append(text)

    def undo(self) -> None:
        """Take back the last move played (MoveError when there is none)."""
        if not self.moves:
            raise MoveError("no move to undo")
        self.set_position(self.root_text, self.moves[:-1])

    def parse_moves(self, texts: list[str]) -> tuple[list, Optional[str]]:
        """Moves of the current position from texts (`searchmoves`); bad ones are named."""
        self.wait_ready()
        moves, bad = [], []
        for text in texts:
            try:
                moves.append(self.position.parse_move(text))
            except GameError:
                bad.append(text)
        return moves, (f"not legal here: {' '.join(bad)}" if bad else None)

    def game_result(self):
        """The result when the game is over (draws a player may claim count), else None."""
        self.wait_ready()
        return self.position.result(claim_draw=True)

    # --- searching ----------------------------------------------------------------------------
    def effective_limits(self, limits: Limits) -> Limits:
        """The limits with the move overhead taken off the clocks and the move time."""
        return after_overhead(limits, int(self.values["move overhead"]))

    def go(self, limits: Limits, on_info: Callable[[SearchInfo], None],
           on_done: Callable[[SearchResult], None]) -> None:
        """Start a search on the worker thread; `on_done` gets its one result."""
        self.wait_ready()
        self.stop_and_wait()
        position = self.position
        searcher = self.searcher()
        level = int(self.values["skill level"])
        if level < MAX_LEVEL and self.entry.skill is not None:
            searcher = SkilledSearcher(searcher, self.entry.skill, level, self._skill_rng)
        limits = self.effective_limits(limits)
        if limits.multipv == 1 and int(self.values["multipv"]) > 1:
            limits = dataclasses.replace(limits, multipv=int(self.values["multipv"]))
        hold = limits.infinite or limits.ponder
        self._ponder_limits = dataclasses.replace(limits, ponder=False) if limits.ponder else None
        self._release.clear()
        self._stop[0] = 1 if self._abandoned.is_set() else 0  # after quit: answer at once
        stop = self._stop

        def run() -> None:
            try:
                result = searcher.search(position, limits, stop, on_info)
            except Exception as error:  # a search bug must still answer the go
                result = SearchResult(_any_move(position), extra={"error": repr(error)})
            if hold:
                self._release.wait()
            self._cancel_ponder_timer()
            on_done(result)

        with self._lock:
            self._thread = threading.Thread(target=run, name="mallard-search", daemon=True)
            self._thread.start()

    def ponderhit(self) -> None:
        """The opponent played the expected move: the ponder search goes on as a normal search
        whose time starts now."""
        limits = self._ponder_limits
        if limits is None or not self.searching:
            return
        self._ponder_limits = None
        budget = move_budget_ms(limits, self.position.side_to_move)
        if budget is not None:
            timer = threading.Timer(budget / 1000, self.stop)
            timer.daemon = True
            self._ponder_timer = timer
            timer.start()
        elif not limits.infinite and limits.depth is None and limits.nodes is None \
                and limits.mate is None:
            self.stop()  # nothing else would ever end it
        self._release.set()

    def _cancel_ponder_timer(self) -> None:
        timer, self._ponder_timer = self._ponder_timer, None
        if timer is not None:
            timer.cancel()

    def abandon(self) -> None:
        """The client quit or closed its input: stop the search, and every later one at once."""
        self._abandoned.set()
        self.stop()

    def stop(self) -> None:
        self._stop[0] = 1
        self._ponder_limits = None
        self._release.set()

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

    def search_now(self, limits: Limits, on_info: Optional[Callable[[SearchInfo], None]] = None
                   ) -> SearchResult:
        """A search that returns its result (GTP, which answers one command at a time)."""
        done: list[SearchResult] = []
        finished = threading.Event()

        def deliver(result: SearchResult) -> None:
            done.append(result)
            finished.set()

        self.go(limits, on_info or (lambda info: None), deliver)
        finished.wait()
        self.wait()
        return done[0]


def _any_move(position):
    """A legal move for a search that failed, so its `go` is still answered (with the error)."""
    try:
        moves = position.legal_moves()
    except Exception:  # the rules' compiled code failed as well: no move, but still an answer
        return None
    return moves[0] if moves else None
