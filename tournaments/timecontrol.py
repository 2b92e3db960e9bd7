"""Time controls as cutechess-cli engine settings describe them, and the clock a match keeps for
one player.

`TimeControl` holds the limits of one engine (`tc=`, `st=`, `depth=`, `nodes=`); `Clock` charges
the time of each move against it and says when the player has lost on time; `go_fields` and
`ugi_go_fields` turn two clocks into the fields of a UCI or UGI `go` command.

Conventions: every time is an integer number of milliseconds (`*_ms`); seconds appear only in
the texts that are parsed and written (`tc=40/60+0.6`, the PGN TimeControl tag). Player 0 moves
first (White, UGI's p1).
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Callable, Optional, Union

# One number of seconds as cutechess accepts it: "60", "0.6", "60.", ".5" (never a sign).
_SECONDS = r"(?:\d+(?:\.\d*)?|\.\d+)"
# [moves/]time[+increment], where time is seconds, minutes:seconds or hours:minutes:seconds.
_TC_PATTERN = re.compile(
    rf"(?:(?P<moves>\d+)/)?"
    rf"(?P<time>(?:(?:\d+:)?\d+:)?{_SECONDS})"
    rf"(?:\+(?P<increment>{_SECONDS}))?",
    re.ASCII,
)
_INFINITE_TEXT = "inf"
# The longest time any limit may give (a year): longer ones are typing slips, and far longer
# ones overflow the waits of the threads that run a game.
MAX_TIME_MS = 365 * 24 * 3600 * 1000


def _seconds_to_ms(text: str) -> int:
    """Decimal arithmetic, so that "0.29" is exactly 290 ms and not 289.99999."""
    try:
        seconds = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number of seconds: {text!r}") from None
    if not seconds.is_finite():
        raise ValueError(f"not a number of seconds: {text!r}")
    return int((seconds * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _clock_time_to_ms(text: str) -> int:
    """Seconds, minutes:seconds or hours:minutes:seconds; like cutechess, parts may exceed 59."""
    *upper_parts, seconds = text.split(":")
    total_ms = _seconds_to_ms(seconds)
    for scale_ms, part in zip((60_000, 3_600_000), reversed(upper_parts)):
        total_ms += int(part) * scale_ms
    return total_ms


def _format_seconds(ms: int) -> str:
    """Milliseconds as seconds without trailing zeros: 60000 -> "60", 600 -> "0.6"."""
    whole, fraction = divmod(ms, 1000)
    if fraction == 0:
        return str(whole)
    return f"{whole}.{fraction:03d}".rstrip("0")


def _positive_int(name: str, value: Union[int, str]) -> int:
    """An engine setting such as depth=10, given as an int or as the text of the command line."""
    if isinstance(value, bool):  # bool is an int subclass; True is not a depth
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]+", value.strip()):
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
        value = int(value)
    if not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


@dataclass(frozen=True)
class TimeControl:
    """The limits of one engine in a game.

    A clock: `time_ms` for each period of `moves` moves (0 = one period for the whole game),
    plus `increment_ms` after every move. Or a fixed `movetime_ms` per move (cutechess `st=`).
    Or `infinite` (`tc=inf`): no clock at all. `depth` and `nodes` may be added to any of them.
    The default value limits nothing; `is_bounded` tells whether a move is sure to end.
    """

    moves: int = 0
    time_ms: int = 0
    increment_ms: int = 0
    movetime_ms: Optional[int] = None
    depth: Optional[int] = None
    nodes: Optional[int] = None
    infinite: bool = False

    def __post_init__(self) -> None:
        for name in ("moves", "time_ms", "increment_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
        for name in ("movetime_ms", "depth", "nodes"):
            value = getattr(self, name)
            if value is not None:
                _positive_int(name, value)
        for name, what in (("time_ms", "clock time"), ("increment_ms", "increment"),
                           ("movetime_ms", "move time")):
            value = getattr(self, name)
            if value is not None and value > MAX_TIME_MS:
                raise ValueError(f"a {what} of {_format_seconds(value)} s is more than a year")
        if self.moves and not self.has_clock():
            raise ValueError(f"a period of {self.moves} moves needs a time or an increment")
        if self.infinite and (self.has_clock() or self.movetime_ms is not None):
            raise ValueError("an infinite time control cannot also have a clock or a move time")
        if self.movetime_ms is not None and self.has_clock():
            raise ValueError("a fixed move time (st) excludes a clock (tc)")

    # --- constructors ---------------------------------------------------------------------

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TimeControl:
        return cls(**data)

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A cutechess `tc=` value: "40/60", "40/60+0.6", "60+0.6", "2:30+1", "1:00:00", "inf"."""
        stripped = text.strip() if isinstance(text, str) else text
        if not isinstance(stripped, str) or not stripped:
            raise ValueError(f"empty time control: {text!r}")
        if stripped == _INFINITE_TEXT:
            return cls(infinite=True)
        match = _TC_PATTERN.fullmatch(stripped)
        if match is None:
            raise ValueError(f"bad time control {text!r}: expected [moves/]time[+increment] "
                             f"(time as seconds, m:s or h:m:s; all non-negative) or 'inf'")
        moves = int(match["moves"]) if match["moves"] is not None else 0
        if match["moves"] is not None and moves == 0:
            raise ValueError(f"bad time control {text!r}: a period needs at least one move "
                             f"(write the time alone for sudden death)")
        time_ms = _clock_time_to_ms(match["time"])
        increment_ms = _seconds_to_ms(match["increment"]) if match["increment"] else 0
        if time_ms == 0 and increment_ms == 0:
            raise ValueError(f"bad time control {text!r}: it gives no time at all")
        return cls(moves=moves, time_ms=time_ms, increment_ms=increment_ms)

    @classmethod
    def fixed_move_time(cls, seconds: Union[float, int, str]) -> TimeControl:
        """cutechess `st=`: this many seconds for every move, with no clock carried over."""
        if isinstance(seconds, bool):
            raise ValueError(f"bad move time {seconds!r}: expected seconds")
        text = seconds.strip() if isinstance(seconds, str) else repr(seconds)
        if isinstance(seconds, str) and not re.fullmatch(_SECONDS, text, re.ASCII):
            raise ValueError(f"bad move time {seconds!r}: expected a positive number of seconds")
        try:
            movetime_ms = _seconds_to_ms(text)
        except ValueError:
            raise ValueError(f"bad move time {seconds!r}: expected seconds") from None
        if movetime_ms <= 0:
            raise ValueError(f"bad move time {seconds!r}: it must be at least 1 ms")
        return cls(movetime_ms=movetime_ms)

    @classmethod
    def from_settings(cls, tc: Optional[str] = None, st: Union[float, str, None] = None,
                      depth: Union[int, str, None] = None,
                      nodes: Union[int, str, None] = None) -> TimeControl:
        """The limits of a cutechess `-engine`/`-each` line; refuses a set that never ends a move
        (nothing given, or `tc=inf` alone), since the game would hang."""
        if tc is not None and st is not None:
            raise ValueError(f"tc={tc} and st={st} exclude each other: give one of them")
        if tc is not None:
            base = cls.parse(tc)
        elif st is not None:
            base = cls.fixed_move_time(st)
        else:
            base = cls()
        combined = base.with_limits(depth=depth, nodes=nodes)
        if not combined.is_bounded():
            raise ValueError("no limit ends a move: give tc (other than inf), st, depth or nodes")
        return combined

    def with_limits(self, depth: Union[int, str, None] = None,
                    nodes: Union[int, str, None] = None) -> TimeControl:
        """This control with a depth and/or node limit added (None keeps the current one)."""
        return dataclasses.replace(
            self,
            depth=self.depth if depth is None else _positive_int("depth", depth),
            nodes=self.nodes if nodes is None else _positive_int("nodes", nodes),
        )

    # --- questions ------------------------------------------------------------------------

    def has_clock(self) -> bool:
        """True for a `tc=` clock (time and/or increment), false for st, inf and limits alone."""
        return self.time_ms > 0 or self.increment_ms > 0

    def is_bounded(self) -> bool:
        """True when something ends every move: a clock, a move time, a depth or a node count."""
        return (self.has_clock() or self.movetime_ms is not None
                or self.depth is not None or self.nodes is not None)

    # --- texts ----------------------------------------------------------------------------

    def pgn_tag(self) -> str:
        """The PGN TimeControl tag: "40/60", "40/60+0.6", "60+0.6", "60", "1/move" for a fixed
        move time, "-" when no clock applies (inf, depth or nodes alone)."""
        if self.has_clock():
            return self._clock_text()
        if self.movetime_ms is not None:
            return f"{_format_seconds(self.movetime_ms)}/move"
        return "-"

    def __str__(self) -> str:
        return self.pgn_tag()

    def cutechess_string(self) -> str:
        """The `tc=` value that parses back to this clock ("inf" when infinite)."""
        if self.infinite:
            return _INFINITE_TEXT
        if not self.has_clock():
            raise ValueError(f"{self!r} has no tc= form (it is st, depth or nodes only)")
        return self._clock_text()

    def cutechess_settings(self) -> dict[str, str]:
        """The engine settings (tc, st, depth, nodes) that `from_settings(**...)` reads back."""
        settings: dict[str, str] = {}
        if self.infinite or self.has_clock():
            settings["tc"] = self.cutechess_string()
        if self.movetime_ms is not None:
            settings["st"] = _format_seconds(self.movetime_ms)
        if self.depth is not None:
            settings["depth"] = str(self.depth)
        if self.nodes is not None:
            settings["nodes"] = str(self.nodes)
        return settings

    def _clock_text(self) -> str:
        text = _format_seconds(self.time_ms)
        if self.moves:
            text = f"{self.moves}/{text}"
        if self.increment_ms:
            text += f"+{_format_seconds(self.increment_ms)}"
        return text


class Clock:
    """One player's clock for one game, kept by the runner (never by the engine).

    `start()` when the engine is told to move, `stop()` when its move arrives. A clock control
    loses on time (`flagged`) when the move overruns the remaining time by more than
    `margin_ms` (cutechess `timemargin`); an overrun within the margin leaves the clock at zero
    and the game goes on. A fixed move time flags when a move takes longer than it plus the
    margin. Depth, node and infinite controls never flag; `deadline_ms` then returns None.

    `preincrement` adds the increment before the first move, as cutechess and fastchess do for
    UCI (tc=10+0.1 starts at 10100 ms); UGI players (cutegames) start with the bare time.
    """

    def __init__(self, tc: TimeControl, margin_ms: int = 0, *, preincrement: bool = True,
                 now_ns: Callable[[], int] = time.monotonic_ns) -> None:
        if margin_ms < 0:
            raise ValueError(f"margin_ms must be non-negative, not {margin_ms}")
        self.tc = tc
        self.margin_ms = margin_ms
        self.flagged = False
        self.last_move_ms: Optional[int] = None
        self._now_ns = now_ns
        self._started_ns: Optional[int] = None
        self._remaining_ms: Optional[int] = None
        self._moves_left: Optional[int] = None
        if tc.has_clock():
            self._remaining_ms = tc.time_ms + (tc.increment_ms if preincrement else 0)
            self._moves_left = tc.moves or None

    @property
    def remaining_ms(self) -> Optional[int]:
        """Time left on the clock; None for controls without a clock (st, depth, nodes, inf)."""
        return self._remaining_ms

    @property
    def increment_ms(self) -> int:
        return self.tc.increment_ms

    @property
    def moves_to_go(self) -> Optional[int]:
        """Moves left in the current period (>= 1), or None when the whole game is one period."""
        return self._moves_left

    @property
    def allowed_ms(self) -> Optional[int]:
        """How long the next move may take before it is late (the margin aside): the time left
        on a clock, the fixed move time, None when no time bounds it (depth, nodes, inf)."""
        if self._remaining_ms is not None:
            return max(0, self._remaining_ms)
        return self.tc.movetime_ms

    @property
    def running(self) -> bool:
        return self._started_ns is not None

    def start(self) -> None:
        """The player is on move from now."""
        if self.flagged:
            raise RuntimeError("this clock has already lost on time")
        if self._started_ns is not None:
            raise RuntimeError("the clock is already running")
        self._started_ns = self._now_ns()

    def stop(self, at_ns: Optional[int] = None) -> int:
        """The player's move arrived (at `at_ns`, on the clock's time source; default now):
        charge it and return its time in ms (`flagged` says whether it lost on time)."""
        if self._started_ns is None:
            raise RuntimeError("the clock is not running")
        stopped_ns = self._now_ns() if at_ns is None else at_ns
        # Whole milliseconds, truncated as cutechess measures them; a clock cannot go backwards.
        elapsed_ms = max(0, stopped_ns - self._started_ns) // 1_000_000
        self._started_ns = None
        self.last_move_ms = elapsed_ms
        if self._remaining_ms is not None:
            self._charge_clock(elapsed_ms)
        elif self.tc.movetime_ms is not None:
            if elapsed_ms > self.tc.movetime_ms + self.margin_ms:
                self.flagged = True
        return elapsed_ms

    def _charge_clock(self, elapsed_ms: int) -> None:
        remaining_ms = self._remaining_ms - elapsed_ms
        if remaining_ms < -self.margin_ms:
            # Keep the overrun visible for the game record; nothing more is credited.
            self._remaining_ms = remaining_ms
            self.flagged = True
            return
        remaining_ms = max(0, remaining_ms) + self.tc.increment_ms
        if self._moves_left is not None:
            self._moves_left -= 1
            if self._moves_left == 0:
                remaining_ms += self.tc.time_ms
                self._moves_left = self.tc.moves
        self._remaining_ms = remaining_ms

    def deadline_ms(self, grace_ms: int = 0) -> Optional[int]:
        """How long after `start()` the runner should wait for the move before declaring a hang
        (past the flag, plus the caller's grace for pipes and scheduling); None when nothing
        bounds the move's time (depth, nodes or infinite alone)."""
        if self._remaining_ms is not None:
            return max(0, self._remaining_ms) + self.margin_ms + grace_ms
        if self.tc.movetime_ms is not None:
            return self.tc.movetime_ms + self.margin_ms + grace_ms
        return None


def _go_fields(mover: Clock, other: Clock, mover_is_first: bool,
               names: tuple[str, str, str, str]) -> dict[str, int]:
    """Shared by UCI and UGI; `names` are (first time, second time, first inc, second inc)."""
    first, second = (mover, other) if mover_is_first else (other, mover)
    fields: dict[str, int] = {}
    if mover.remaining_ms is not None:
        first_time, second_time, first_inc, second_inc = names
        # The opponent's clock is information only; an opponent without one sends nothing.
        for clock, time_name, inc_name in ((first, first_time, first_inc),
                                           (second, second_time, second_inc)):
            if clock.remaining_ms is not None:
                fields[time_name] = max(0, clock.remaining_ms)
                fields[inc_name] = clock.increment_ms
        if mover.moves_to_go is not None:
            fields["movestogo"] = mover.moves_to_go
    elif mover.tc.movetime_ms is not None:
        fields["movetime"] = mover.tc.movetime_ms
    if mover.tc.depth is not None:
        fields["depth"] = mover.tc.depth
    if mover.tc.nodes is not None:
        fields["nodes"] = mover.tc.nodes
    # An unbounded mover (inf alone) gets no field; from_settings refuses such a control.
    return fields


def go_fields(white_clock: Clock, black_clock: Clock, white_to_move: bool) -> dict[str, int]:
    """The UCI `go` fields for the side to move: wtime/btime/winc/binc (+ movestogo in a period)
    for a clock, movetime for st, plus depth/nodes when set, in ms as the clocks hold them."""
    mover, other = (white_clock, black_clock) if white_to_move else (black_clock, white_clock)
    return _go_fields(mover, other, white_to_move, ("wtime", "btime", "winc", "binc"))


def ugi_go_fields(p1_clock: Clock, p2_clock: Clock, p1_to_move: bool) -> dict[str, int]:
    """The UGI `go` fields: p1time/p2time/p1inc/p2inc (+ movestogo), movetime, depth, nodes.
    UGI clocks should be made with `preincrement=False`: cutegames does not pre-add the
    increment, so the times sent are the clocks' own."""
    mover, other = (p1_clock, p2_clock) if p1_to_move else (p2_clock, p1_clock)
    return _go_fields(mover, other, p1_to_move, ("p1time", "p2time", "p1inc", "p2inc"))
