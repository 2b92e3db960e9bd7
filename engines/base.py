"""The interface every game implements, so that `protocol` and `tournaments` stay game-agnostic.

A game's rules are a `Game` object. It creates immutable
`Position` values from its start position or from a FEN-style text; a position lists its legal
moves, plays a move into a new position, and reports the game result with its reason (one of
the game's `EndReason` members). Moves are opaque to callers: they are produced by
`legal_moves`/`parse_move` and written by `format_move`.

Searching goes through a `Searcher`: `search(position, limits, stop_flag, on_info) ->
SearchResult`. Each game package declares itself once, as a `GameEntry` (its names, rules,
options, protocols, and the factories of its searcher and prover); `mallard.engines.find_game` finds
it. The rules never import the search: the entry ties them together.

Invariants:
- Player 0 moves first (White in chess, the first player in Connect Four); `side_to_move` is 0/1.
- Scores are from the side to move: centipawns, or mate-in-moves (`Score.mate(n)`: n > 0 means the
  side to move wins with its n-th move from now, n < 0 that it loses after -n of its moves,
  `Score.mate(0)` for a finished game). A proven draw is `Score.cp(0)` with `exact=True`.
- `stop_flag` is a numpy int array; a non-zero first element asks the search to stop soon. The
  search never prints; it reports progress through `on_info(SearchInfo)`.
"""

from __future__ import annotations

import abc
import os
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

ECHO_LIMIT = 80  # characters of a user's or an engine's text that a message repeats
MESSAGE_LIMIT = 300  # characters of a whole error line a user is shown


def clip(text: object, limit: int = ECHO_LIMIT) -> str:
    """`text` as a message may echo it: whole when short, else its first `limit` characters and
    its length, so that a megabyte of bad input is never repeated back (the one rule for it)."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def clip_line(text: object, limit: int = ECHO_LIMIT) -> str:
    """`clip(text, limit)` kept to one printable line: control characters become '?'."""
    return "".join(c if c.isprintable() else "?" for c in clip(text, limit))


def is_number(text: str) -> bool:
    """Whether `text` is a whole number in ASCII digits, the only digits any notation of ours
    takes (`str.isdecimal` also takes other scripts' digits, such as '٤')."""
    return text.isascii() and text.isdecimal()


class GameError(ValueError):
    """Base class for bad positions and moves; the message names the offending input."""


class PositionError(GameError):
    """A position text that cannot be parsed or describes an impossible position."""


class MoveError(GameError):
    """A move text that cannot be parsed or is illegal in the position; `index` is the 1-based
    place of the move in the list it came from, when it came from one."""

    def __init__(self, message: str, index: Optional[int] = None):
        super().__init__(message)
        self.index = index


class OptionError(GameError):
    """An engine option that does not exist, or a value it does not take."""


class UnknownGameError(GameError):
    """A variant name that no game in the registry has."""


class EndReason(StrEnum):
    """Why a game is over, as its rules say: each game declares its reasons as a subclass (an
    enumeration with members cannot be extended, this one has none); a member's value is the
    text the protocols and the PGN print (`four in a row`)."""

    @classmethod
    def read(cls, text: str) -> Optional["EndReason"]:
        """The reason with this text of any game loaded (or `Proven`), None for none."""
        for reasons in cls.__subclasses__():
            try:
                return reasons(text)
            except ValueError:
                continue
        return None


class Proven(EndReason):
    """A game's value proven by a search (`GameEntry.prove`: a referee's `-adjudicate solved`)."""

    WIN = "the position is a proven win"
    DRAW = "the position is a proven draw"


@dataclass(frozen=True)
class GameResult:
    """The end of a game: `winner` is 0, 1 or None for a draw; `reason` says why (what is
    printed is its text)."""

    winner: Optional[int]
    reason: EndReason

    @property
    def pgn(self) -> str:
        """The PGN result token (player 0 is White)."""
        return {0: "1-0", 1: "0-1", None: "1/2-1/2"}[self.winner]


MAX_THREADS = os.cpu_count() or 1  # `THREADS_OPTION`'s maximum: one search thread per core
LIMIT_MAX = 1 << 40  # larger times, depths and node counts mean "no limit" (34 years in ms)


@dataclass(frozen=True)
class Limits:
    """Search limits as a GUI sends them. Times are in milliseconds, `None` means unset. Front-ends
    keep every number within `LIMIT_MAX` (clamping or refusing), so kernels never overflow."""

    depth: Optional[int] = None
    nodes: Optional[int] = None
    movetime: Optional[int] = None
    wtime: Optional[int] = None
    btime: Optional[int] = None
    winc: Optional[int] = None
    binc: Optional[int] = None
    movestogo: Optional[int] = None
    mate: Optional[int] = None
    infinite: bool = False
    ponder: bool = False
    # The `time.perf_counter()` instant the command arrived: the move's time runs from there,
    # as the GUI's clock does (None: from the start of `search`).
    started: Optional[float] = None
    multipv: int = 1
    searchmoves: tuple = ()  # moves (as `parse_move` returns them) the root is restricted to

    def clock_for(self, side: int) -> tuple[Optional[int], int]:
        """(remaining time, increment) of `side` (0 = first player), time None when no clock."""
        if side == 0:
            return self.wtime, self.winc or 0
        return self.btime, self.binc or 0


class ScoreKind(StrEnum):
    """What a score's value counts; the value is UCI's word for it (`score cp 31`)."""

    CP = "cp"  # centipawns
    MATE = "mate"  # moves to mate

    @classmethod
    def read(cls, word: str) -> Optional["ScoreKind"]:
        """The kind UCI's word names, None for any other word."""
        try:
            return cls(word)
        except ValueError:
            return None


@dataclass(frozen=True)
class Score:
    """A score from the side to move: `kind` says what `value` counts; see the module
    docstring. `str()` is UCI's form, `cp 31` or `mate -3`."""

    kind: ScoreKind
    value: int
    exact: bool = False

    @staticmethod
    def cp(value: int, exact: bool = False) -> "Score":
        return Score(ScoreKind.CP, int(value), exact)

    @staticmethod
    def mate(moves: int) -> "Score":
        return Score(ScoreKind.MATE, int(moves), True)

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"

    def wdl(self) -> tuple[int, int, int]:
        """Win/draw/loss chances in per mille for the side to move. Mates and proven draws are
        certain; a centipawn score goes through a logistic model (100 cp ~ 64 % expected score,
        draws likeliest near 0) that is a display aid, not a measured fit."""
        if self.kind is ScoreKind.MATE:
            return (1000, 0, 0) if self.value > 0 else (0, 0, 1000)
        if self.exact and self.value == 0:
            return (0, 1000, 0)
        win = 1000 / (1 + 10 ** (-(self.value - 100) / 250))
        loss = 1000 / (1 + 10 ** ((self.value + 100) / 250))
        win, loss = round(win), round(loss)
        return win, 1000 - win - loss, loss


@dataclass
class SearchInfo:
    """One progress report of a search (the fields of a UCI `info` line)."""

    depth: int = 0
    seldepth: Optional[int] = None
    score: Optional[Score] = None
    nodes: int = 0
    time_ms: int = 0
    pv: Sequence[Any] = ()
    multipv: Optional[int] = None
    hashfull: Optional[int] = None
    wdl: Optional[tuple[int, int, int]] = None
    bound: Optional[str] = None  # "lowerbound" / "upperbound" when the score is only a bound
    string: Optional[str] = None

    @property
    def nps(self) -> int:
        return int(self.nodes * 1000 / self.time_ms) if self.time_ms > 0 else 0


@dataclass
class SearchResult:
    """What a search returns: `best_move` is None only when the game is over."""

    best_move: Any
    ponder_move: Any = None
    score: Optional[Score] = None
    pv: Sequence[Any] = ()
    depth: int = 0
    nodes: int = 0
    time_ms: int = 0
    stopped: bool = False
    extra: dict = field(default_factory=dict)


class Position(abc.ABC):
    """An immutable game position."""

    game: "Game"

    @property
    @abc.abstractmethod
    def side_to_move(self) -> int: ...

    @property
    @abc.abstractmethod
    def ply(self) -> int:
        """Number of moves played since the game's start position."""

    @abc.abstractmethod
    def legal_moves(self) -> list: ...

    @abc.abstractmethod
    def play(self, move) -> "Position":
        """The position after `move`; raises MoveError when the move is illegal."""

    @abc.abstractmethod
    def result(self, claim_draw: bool = False) -> Optional[GameResult]:
        """The game result when the game is over, else None. With `claim_draw` it also reports
        the draws a player may claim (50 moves, repetition) where the game has them."""

    @abc.abstractmethod
    def fen(self) -> str: ...

    @abc.abstractmethod
    def parse_move(self, text: str):
        """A legal move from its text (every notation the game accepts); MoveError otherwise."""

    @abc.abstractmethod
    def format_move(self, move) -> str:
        """The move in the game's protocol notation (UCI-style)."""

    def gtp_move(self, move) -> str:
        """The move as a GTP vertex (a Connect Four column letter); the protocol form by default."""
        return self.format_move(move)

    def pgn_move(self, move) -> str:
        """The move as the variant's PGN movetext writes it (the protocol form by default)."""
        return self.format_move(move)

    def human_move(self, move) -> str:
        """The move as a person reads it in a move list (the PGN form by default); protocols
        and files keep `format_move` and `pgn_move`."""
        return self.pgn_move(move)

    def board_text(self) -> str:
        """A readable picture of the position (GTP `showboard`); the FEN unless a game draws."""
        return self.fen()

    def perft(self, depth: int, bulk: bool = True) -> int:
        """Leaves of the move tree `depth` moves deep, for games whose `GameEntry.perft` is
        set; with `bulk` the last ply may be counted without being played."""
        raise NotImplementedError(f"{self.game.variant} has no perft")

    def divide(self, depth: int, bulk: bool = True) -> list[tuple[Any, int]]:
        """(move, perft(depth - 1) below it) for every legal move (see `perft`)."""
        raise NotImplementedError(f"{self.game.variant} has no perft")

    def play_text(self, texts: Iterable[str]) -> "Position":
        """Play moves given as texts; the MoveError names the failing move and its index."""
        position = self
        for index, text in enumerate(texts):
            try:
                move = position.parse_move(text)
            except MoveError as error:
                raise MoveError(f"move {index + 1} '{text}': {error}", index + 1) from None
            position = position.play(move)
        return position


class Searcher(abc.ABC):
    """A game's search engine; it keeps its tables between searches until `clear()`."""

    @abc.abstractmethod
    def search(
        self,
        position: Position,
        limits: Limits,
        stop_flag: Optional[np.ndarray] = None,
        on_info: Optional[Callable[[SearchInfo], None]] = None,
    ) -> SearchResult: ...

    def clear(self) -> None:
        """Forget everything learnt (a new game)."""

    def warm_up(self) -> None:
        """Load or compile the compiled code (a server calls it in the background at start-up)."""


@dataclass(frozen=True)
class Option:
    """An engine option, declared once (Stockfish style): its UCI type (check, spin, combo,
    button or string), default and range; `parse` reads a value from its text, `uci_line` is how
    an engine announces it, and `apply(target, value)` is what a change does (the target is the
    searcher for a game's options, the session for the protocol's; None: the value is only
    remembered, for whoever reads it)."""

    name: str
    type: str
    default: Any = None
    min: Optional[int] = None
    max: Optional[int] = None
    choices: tuple = ()
    apply: Optional[Callable[[Any, Any], None]] = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """The name as UCI compares it (case-insensitively)."""
        return self.name.lower()

    def parse(self, text: Optional[str]) -> Any:
        """The typed value of a value text (None for a button); OptionError names the problem."""
        if self.type == "button":
            return None
        if text is None:
            raise OptionError(f"option '{self.name}' needs a value")
        if self.type == "check":
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise OptionError(f"option '{self.name}' takes true or false, not '{text}'")
            return lowered == "true"
        if self.type == "spin":
            try:
                value = int(text.strip())
            except ValueError:
                raise OptionError(f"option '{self.name}' takes an integer, not '{text}'") from None
            if (self.min is not None and value < self.min) or \
                    (self.max is not None and value > self.max):
                raise OptionError(f"option '{self.name}' must be between {self.min} and "
                                  f"{self.max}, not {value}")
            return value
        if self.type == "combo":
            for choice in self.choices:
                if choice.lower() == text.strip().lower():
                    return choice
            raise OptionError(f"option '{self.name}' takes one of {', '.join(self.choices)}, "
                              f"not '{text}'")
        return text

    def accepts(self, value: Any) -> bool:
        """Whether `value`, a value of an option of the same name, is one this option takes."""
        if self.type in ("button", "string"):
            return self.type != "button" and isinstance(value, str)
        try:
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            return self.parse(text) == value
        except OptionError:
            return False

    def uci_line(self) -> str:
        """`option name ... type ...` with the default, range and choices the type has."""
        text = f"option name {self.name} type {self.type}"
        if self.type == "button":
            return text
        default = self.default
        if self.type == "check":
            default = "true" if default else "false"
        elif self.type == "string" and default in (None, ""):
            default = "<empty>"
        text += f" default {default}"
        if self.type == "spin":
            text += f" min {self.min} max {self.max}"
        if self.type == "combo":
            text += "".join(f" var {choice}" for choice in self.choices)
        return text


# the searchers' `Threads`, one search thread per core at most (each game's searcher has
# `set_threads`)
THREADS_OPTION = Option("Threads", "spin", 1, 1, MAX_THREADS,
                        apply=lambda searcher, threads: searcher.set_threads(threads))

# Set to 1 in an engine's environment, it makes the engine list its games' developer options
# (`GameEntry.dev_options`) too: switches for experiments, such as an SPRT of one piece of a
# search, that a GUI's user never sets (in the spirit of Stockfish's TUNE). Unset, they are
# unknown options like any other. `mallard match` starts engines with its own environment.
DEV_OPTIONS_VARIABLE = "MALLARD_DEV_OPTIONS"


def dev_options_enabled() -> bool:
    """Whether this process lists developer options (`DEV_OPTIONS_VARIABLE` is 1)."""
    return os.environ.get(DEV_OPTIONS_VARIABLE) == "1"


def hash_option(default_mb: int, max_mb: int) -> Option:
    """A game's `Hash`: its search table's size in MB, 1..max_mb (each game's searcher has
    `set_hash`, which sizes its tables through `mallard.engines.tables.HashTable`)."""
    return Option("Hash", "spin", default_mb, 1, max_mb,
                  apply=lambda searcher, megabytes: searcher.set_hash(megabytes))


class Game(abc.ABC):
    """A game's rules: its variant name and positions."""

    variant: str = ""
    # How long a move is thought over when nothing says (GTP's genmove without time settings):
    # a client waits for its answer, so every game bounds it.
    default_move_ms: int = 2000
    # How long a search asked for a position's value (GTP's mallard-solve, mallard-analyze) may
    # run: None until it proves the value, for games whose search always ends in reasonable time.
    solve_ms: Optional[int] = None

    def resized(self, width: int, height: int) -> "Game":
        """The same game on another board (GTP `boardsize`); PositionError when not possible."""
        raise PositionError(f"{self.variant} has no board size to change")

    @abc.abstractmethod
    def start_position(self) -> Position: ...

    @abc.abstractmethod
    def parse_position(self, text: str) -> Position:
        """A position from its FEN-style text; PositionError names the problem."""



@dataclass(frozen=True)
class GameEntry:
    """A game as its package declares it, once (`engines/<game>/__init__.py`).

    `name` is the variant name the protocols use (UCI_Variant, `-variant`); `aliases` are other
    names accepted for it. `new_game(**board)` makes the rules; `new_searcher(game, **options)`
    the searcher; `prove(position, node_limit)` (a referee's `-adjudicate solved`) returns the
    `GameResult` under perfect play when proven within the node limit, else None. `options` are
    the searcher's engine options beyond the protocol's own, declared here so that a server can
    list them before any search code loads; `dev_options` are searcher options for experiments,
    listed only when `dev_options_enabled()` (`searcher_options`). `protocols` are those that can
    play the game (GTP needs two players, the first called black). `perft` says whether positions
    count leaf nodes (`Position.perft`, `Position.divide`). `bench()` returns the game's bench
    signature (`mallard.engines.bench.BenchSignature`, from the game's `bench` module, loaded on
    use: it imports the search). `skill` says how `Skill Level` weakens it. `finish_warm_up()`, when
    a game has one, completes in this process what a start-up's warm-up leaves to later or to
    another process (`mallard warmup` calls it).
    """

    name: str
    new_game: Callable[..., Game]
    new_searcher: Callable[..., Searcher]
    aliases: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    dev_options: tuple[Option, ...] = ()
    protocols: tuple[str, ...] = ("uci", "ugi")
    prove: Optional[Callable[[Position, int], Optional[GameResult]]] = None
    perft: bool = False
    bench: Optional[Callable[[], Any]] = None
    finish_warm_up: Optional[Callable[[], None]] = None
    skill: Any = None  # the game's `mallard.engines.skill.SkillProfile` (Skill Level)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,) + self.aliases

    def searcher_options(self) -> tuple[Option, ...]:
        """The searcher options an engine lists now: `options`, then `dev_options` when this
        process's environment asks for them."""
        return self.options + (self.dev_options if dev_options_enabled() else ())

    def speaks(self, protocol: str) -> bool:
        return protocol in self.protocols


def new_stop_flag() -> np.ndarray:
    """The shared flag array searches poll: element 0 set to 1 means stop."""
    return np.zeros(1, dtype=np.int64)
