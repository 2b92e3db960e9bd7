"""The plain data of a match: openings, adjudication rules, one game's job and its record.

Everything here converts to and from JSON-ready dicts, because a game job may run in another
process or on another machine (see `executors`) and every finished game goes to SQLite.

Conventions: player 0 is White (the first player; GTP's black in Connect Four). A result is the
PGN token `1-0`, `0-1`, `1/2-1/2` or `*`; `reason` is a `Reason`: what ended the game (an
`EndKind`), the side it names and its detail, whose text is what cutechess prints in braces
(`White wins (four in a row)`, `Black loses on time (took 0.262 s of 0.250 s)`,
`Draw by adjudication`); `termination` is the PGN Termination tag, a `Termination` (`normal`,
`time forfeit`, `illegal move`, `adjudication`, `abandoned`), the one its kind has. A record
stores both as their texts, and reads them back typed: a text in the words of a kind (an older
runner's too) is that kind, any other is kept as it was. Move scores are from the mover's view:
(ScoreKind.CP, centipawns) or (ScoreKind.MATE, moves); JSON holds the kind's word.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from typing import Optional, Union

from mallard.engines.base import EndReason, GameResult, ScoreKind
from mallard.tournaments.players import EngineConfig

SIDE_NAMES = ("White", "Black")


class Termination(StrEnum):
    """The PGN `Termination` tag of a game, in cutechess's words."""

    NORMAL = "normal"
    ADJUDICATION = "adjudication"
    TIME_FORFEIT = "time forfeit"
    ILLEGAL_MOVE = "illegal move"
    RULES_INFRACTION = "rules infraction"
    STALLED_CONNECTION = "stalled connection"
    ABANDONED = "abandoned"
    UNTERMINATED = "unterminated"

    @classmethod
    def read(cls, text: str) -> Union["Termination", str]:
        """The tag of this text; a text that is none of them (not ours) stays as it is."""
        try:
            return cls(text)
        except ValueError:
            return text


class EndKind(Enum):
    """What ended a match game: its Termination tag and the words of its reason, cutechess's.
    `side_words` are said of the side the reason is about (`{side}`: White or Black; None when
    this kind is never about a side), `neutral_words` of no side (a draw; None when this kind
    is always about a side); a detail, when there is one, follows the words between `opening`
    and `closing`."""

    # (termination, words about a side, words about no side, the detail's opening and closing)
    RULES = (Termination.NORMAL, "{side} wins", "Draw", " (", ")")
    ADJUDICATION = (Termination.ADJUDICATION, "{side} wins by adjudication",
                    "Draw by adjudication", ": ", "")
    TIME_LOSS = (Termination.TIME_FORFEIT, "{side} loses on time", None, " (", ")")
    ILLEGAL_MOVE = (Termination.ILLEGAL_MOVE, "{side} makes an illegal move", None, ": ", "")
    PROTOCOL_ERROR = (Termination.RULES_INFRACTION, "{side} makes a protocol error", None, ": ",
                      "")
    STALL = (Termination.STALLED_CONNECTION, "{side}'s connection stalls", None, ": ", "")
    DISCONNECT = (Termination.ABANDONED, "{side} disconnects", None, ": ", "")
    START_FAILURE = (Termination.ABANDONED, "{side} fails to start", None, ": ", "")
    BAD_OPENING = (Termination.ABANDONED, None, "Bad opening", ": ", "")
    BAD_OPENING_MOVE = (Termination.ABANDONED, None, "Bad opening move", ": ", "")
    OPENING_ENDS_GAME = (Termination.ABANDONED, None, "The opening ends the game", ": ", "")
    STOPPED = (Termination.UNTERMINATED, None, "The match was stopped", ": ", "")

    def __init__(self, termination: Termination, side_words: Optional[str],
                 neutral_words: Optional[str], opening: str, closing: str):
        self.termination = termination
        self.side_words = side_words
        self.neutral_words = neutral_words
        self.opening = opening
        self.closing = closing

    def words(self, side: Optional[int]) -> Optional[str]:
        """The words about `side` (None: about no side), None when this kind has none."""
        if side is None:
            return self.neutral_words
        return self.side_words.format(side=SIDE_NAMES[side]) if self.side_words else None


@dataclass(frozen=True)
class Reason:
    """Why a match game ended: its `kind` (None: a text in no kind's words, kept whole as
    `detail`), the side its words are about (0 White, 1 Black; None: a draw, or none) and its
    detail (an `EndReason` of the rules, an engine's error, the time a move took). `str()` is
    the text cutechess prints in braces; `Reason.read` reads one back."""

    kind: Optional[EndKind]
    side: Optional[int] = None
    detail: str = ""

    def __post_init__(self):
        if self.kind is not None and self.kind.words(self.side) is None:
            raise ValueError(f"{self.kind.name} has no words for side {self.side}")

    def __str__(self) -> str:
        if self.kind is None:
            return self.detail
        text = self.kind.words(self.side)
        if self.detail:
            text += self.kind.opening + self.detail + self.kind.closing
        return text

    @property
    def termination(self) -> Optional[Termination]:
        """The Termination tag of this kind of ending (None for a kept text)."""
        return self.kind.termination if self.kind is not None else None

    @classmethod
    def of_result(cls, result: GameResult) -> "Reason":
        """The reason of a game its rules ended: `White wins (four in a row)`."""
        return cls(EndKind.RULES, result.winner, result.reason)

    @classmethod
    def read(cls, text: str) -> "Reason":
        """The reason a text says: the kind whose words it is in (its detail an EndReason when
        it is one's text), else the text as it is."""
        for kind in EndKind:
            for side in (None, 0, 1):
                words = kind.words(side)
                if words is None:
                    continue
                if text == words:
                    return cls(kind, side)
                head, tail = words + kind.opening, kind.closing
                if text.startswith(head) and text.endswith(tail) and \
                        len(text) > len(head) + len(tail):
                    detail = text[len(head):len(text) - len(tail)]
                    return cls(kind, side, EndReason.read(detail) or detail)
        return cls(None, detail=text)


@dataclass(frozen=True)
class Opening:
    """A start: a FEN (None: the variant's start position) and moves played from it."""

    fen: Optional[str] = None
    moves: tuple[str, ...] = ()
    label: str = ""

    def to_dict(self) -> dict:
        return {"fen": self.fen, "moves": list(self.moves), "label": self.label}

    @classmethod
    def from_dict(cls, data: dict) -> "Opening":
        return cls(data.get("fen"), tuple(data.get("moves", ())), data.get("label", ""))


@dataclass(frozen=True)
class Adjudication:
    """cutechess's `-draw`, `-resign` and `-maxmoves`, and our `-adjudicate solved`.

    Draw: from full move `draw_movenumber` on, once both engines' scores stayed within
    ±`draw_score` for `draw_movecount` consecutive moves each. Resign: an engine whose own score
    was ≤ −`resign_score` for `resign_movecount` consecutive moves loses (with `resign_twosided`
    the opponent must agree, scoring ≥ `resign_score`). Max moves: a draw after that many full
    moves. Solved: the referee's own solver ends the game once it proves the result
    (`solve_nodes` is its budget per position)."""

    draw_movenumber: Optional[int] = None
    draw_movecount: Optional[int] = None
    draw_score: Optional[int] = None
    resign_movecount: Optional[int] = None
    resign_score: Optional[int] = None
    resign_twosided: bool = False
    maxmoves: Optional[int] = None
    solved: bool = False
    solve_nodes: int = 2_000_000

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Adjudication":
        return cls(**data)


@dataclass
class GameJob:
    """Everything needed to play one game, independent of where it runs."""

    index: int  # 1-based number of the game in the match schedule
    round: int
    pair: int  # games sharing a pair number are the same opening with colours swapped
    variant: str
    white: EngineConfig
    black: EngineConfig
    white_id: int  # indices into the match's engine list
    black_id: int
    opening: Opening
    adjudication: Adjudication = field(default_factory=Adjudication)
    board: Optional[tuple[int, int]] = None  # Connect Four board size when not 7x6

    def to_dict(self) -> dict:
        return {"index": self.index, "round": self.round, "pair": self.pair,
                "variant": self.variant, "white": self.white.to_dict(),
                "black": self.black.to_dict(), "white_id": self.white_id,
                "black_id": self.black_id, "opening": self.opening.to_dict(),
                "adjudication": self.adjudication.to_dict(),
                "board": list(self.board) if self.board else None}

    @classmethod
    def from_dict(cls, data: dict) -> "GameJob":
        return cls(data["index"], data["round"], data["pair"], data["variant"],
                   EngineConfig.from_dict(data["white"]), EngineConfig.from_dict(data["black"]),
                   data["white_id"], data["black_id"], Opening.from_dict(data["opening"]),
                   Adjudication.from_dict(data["adjudication"]),
                   tuple(data["board"]) if data.get("board") else None)


@dataclass
class MoveRecord:
    text: str  # protocol notation, as the engine sent it (UCI `e2e4,e4d5`, `P@d1`)
    san: str  # the variant's PGN notation
    time_ms: Optional[int] = None  # None for opening moves
    score: Optional[tuple[ScoreKind, int]] = None
    depth: Optional[int] = None

    def comment(self) -> Optional[str]:
        """cutechess's per-move comment: `+0.31/12 0.512s`, `-M3/20 1.2s`, `book`."""
        if self.time_ms is None:
            return "book"
        parts = []
        if self.score is not None:
            kind, value = self.score
            if kind is ScoreKind.MATE:
                parts.append(f"{'+' if value > 0 else '-'}M{abs(value)}")
            else:
                parts.append(f"{value / 100:+.2f}")
            if self.depth is not None:
                parts[-1] += f"/{self.depth}"
        parts.append(f"{self.time_ms / 1000:.3f}s")
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {"text": self.text, "san": self.san, "time_ms": self.time_ms,
                "score": list(self.score) if self.score else None, "depth": self.depth}

    @classmethod
    def from_dict(cls, data: dict) -> "MoveRecord":
        score = (ScoreKind(data["score"][0]), data["score"][1]) if data.get("score") else None
        return cls(data["text"], data["san"], data.get("time_ms"), score, data.get("depth"))


@dataclass
class GameRecord:
    """A finished (or stopped) game; a `reason` or `termination` given as text is read into its
    type (`Reason.read`, `Termination.read`)."""

    job: GameJob
    result: str
    reason: Reason
    termination: Termination
    moves: list[MoveRecord]
    start_fen: str  # the FEN the game (opening included) started from
    started_at: str  # ISO time
    duration_ms: int
    white_name: str
    black_name: str
    loser_failed: Optional[str] = None  # "disconnect"/"timeout"/"startup" when an engine failed
    failed_engine_id: Optional[int] = None
    # A time loss: how long the losing move took (or had waited when the runner gave up on
    # it) and how long it was allowed, both in ms; None for every other ending.
    flag_move_ms: Optional[int] = None
    flag_allowed_ms: Optional[int] = None

    def __post_init__(self):
        if isinstance(self.reason, str):
            self.reason = Reason.read(self.reason)
        if not isinstance(self.termination, Termination):
            self.termination = Termination.read(self.termination)

    @property
    def index(self) -> int:
        return self.job.index

    def score_for(self, engine_id: int) -> Optional[float]:
        """1, 1/2 or 0 for the engine, None when it did not play or the game has no result."""
        if self.result == "*" or engine_id not in (self.job.white_id, self.job.black_id):
            return None
        white_score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[self.result]
        return white_score if engine_id == self.job.white_id else 1.0 - white_score

    def to_dict(self) -> dict:
        return {"job": self.job.to_dict(), "result": self.result, "reason": str(self.reason),
                "termination": str(self.termination), "moves": [m.to_dict() for m in self.moves],
                "start_fen": self.start_fen, "started_at": self.started_at,
                "duration_ms": self.duration_ms, "white_name": self.white_name,
                "black_name": self.black_name, "loser_failed": self.loser_failed,
                "failed_engine_id": self.failed_engine_id, "flag_move_ms": self.flag_move_ms,
                "flag_allowed_ms": self.flag_allowed_ms}

    @classmethod
    def from_dict(cls, data: dict) -> "GameRecord":
        return cls(GameJob.from_dict(data["job"]), data["result"], data["reason"],
                   data["termination"], [MoveRecord.from_dict(m) for m in data["moves"]],
                   data["start_fen"], data["started_at"], data["duration_ms"],
                   data["white_name"], data["black_name"], data.get("loser_failed"),
                   data.get("failed_engine_id"), data.get("flag_move_ms"),
                   data.get("flag_allowed_ms"))
