"""GTP version 2 front-end over the session, for the two-player games whose registry entry
speaks GTP (Connect Four, Ultimate Tic-Tac-Toe); the first player is black. The game is
Connect Four unless `mallard gtp --variant uttt` or the private `mallard-variant uttt` says so.

Framing: a command is `[id] name args`; the reply is `=[id] result` or `?[id] message`, then an
empty line, never one inside a reply. Control characters are dropped, tabs become spaces,
anything after `#` is a comment, empty lines are skipped. GTP is synchronous: `genmove` answers
when its search ends (time from `time_settings`/`time_left`, else a full solve).

Moves are what the game parses (for Connect Four a column letter `d`, a 1-based column `4`, or
`P@d1`); `genmove` answers the game's GTP vertex (the column letter). Private commands:
`mallard-analyze` (one line per legal move: move and UCI-style score), `mallard-solve`
(`win|draw|loss <move> <score>` for the side to move) and `mallard-variant NAME`. Ultimate
Tic-Tac-Toe's vertices are the 9x9 grid's (`E5`; Go's letters, without I). Without time
settings `genmove` thinks `Game.default_move_ms`; the solve commands run `Game.solve_ms` (None:
until solved). `quit` and the end of input stop any of them at once (the session is abandoned).
Numbers are checked: times must be finite, not negative and at most `LIMIT_MAX` ms; a refused
command keeps the previous settings.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Optional

from mallard.engines import DEFAULT_GAMES, find_game
from mallard.engines.base import (
    LIMIT_MAX,
    MESSAGE_LIMIT,
    GameError,
    Limits,
    Score,
    ScoreKind,
    clip,
    is_number,
)
from mallard.protocol import ENGINE_NAME, VERSION
from mallard.protocol.frontend import OVERLONG_MESSAGE, FrontEnd
from mallard.protocol.io import Input, Output
from mallard.protocol.session import Session

COLOURS = {"b": 0, "black": 0, "w": 1, "white": 1}
COLOUR_NAMES = ("black", "white")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GtpError(Exception):
    """A command that fails: its message becomes the `?` reply."""


class GtpFrontEnd(FrontEnd):
    def __init__(self, output: Output, input_: Optional[Input] = None,
                 session: Optional[Session] = None):
        super().__init__(output, input_, session or Session(DEFAULT_GAMES["gtp"]))
        self.main_time: Optional[float] = None  # seconds, from time_settings
        self.byo_yomi_time = 0.0
        self.byo_yomi_stones = 0
        self.time_left: dict[int, tuple[float, int]] = {}  # colour -> (seconds, stones)
        self.commands = sorted(name.replace("_mallard_", "mallard-") for name in self.handlers)
        self.session.start_warm_up()

    # --- plumbing -----------------------------------------------------------------------------
    def report_internal_error(self, line: str) -> None:
        self.out.write("? internal error (state kept)\n\n")

    def report_overlong_line(self) -> None:
        self.out.write(f"? {OVERLONG_MESSAGE}\n\n")

    @staticmethod
    def command(line: str) -> tuple[str, str, list[str]]:
        """A line as GTP reads it: its id ('' without one), the command's name in lower case
        ('' for none) and the arguments; control characters and a `#` comment are dropped."""
        words = CONTROL.sub("", line.replace("\t", " ")).split("#", 1)[0].split()
        ident = ""
        if words and is_number(words[0]):
            ident, words = words[0], words[1:]
        return ident, (words[0].lower() if words else ""), words[1:]

    @staticmethod
    def quits(line: str) -> bool:
        return GtpFrontEnd.command(line)[1] == "quit"

    def handle(self, line: str) -> bool:
        ident, name, args = self.command(line)
        if not name:
            if ident:
                self.out.write(f"?{ident} missing command\n\n")
            return True
        line = " ".join([ident, name, *args]).strip()
        self.out.log(f"<< {line}")
        handler = self.handlers.get(name.replace("mallard-", "_mallard_"))
        if handler is None:
            self.out.write(f"?{ident} unknown command\n\n")
            return True
        if name not in ("protocol_version", "name", "version", "known_command",
                        "list_commands", "quit"):
            self.session.wait_ready()
        try:
            result = handler(args)
        except (GtpError, GameError) as error:  # a refused command: the state is kept
            # one line, never an empty one
            message = clip(" ".join(str(error).split()), MESSAGE_LIMIT)
            self.out.write(f"?{ident} {message}\n\n")
            return True
        text = "" if result is None else str(result)
        separator = " " if text and not text.startswith("\n") else ""
        self.out.write(f"={ident}{separator}{text}\n\n")
        return name != "quit"

    # --- required commands --------------------------------------------------------------------
    def cmd_protocol_version(self, args):
        return "2"

    def cmd_name(self, args):
        return ENGINE_NAME

    def cmd_version(self, args):
        return VERSION

    def cmd_known_command(self, args):
        return "true" if args and args[0].lower() in self.commands else "false"

    def cmd_list_commands(self, args):
        return "\n".join(self.commands)

    def cmd_quit(self, args):
        return None

    def cmd_boardsize(self, args):
        sizes = [_integer(a, "board size") for a in args]
        if len(sizes) == 1:
            sizes = sizes * 2
        if len(sizes) != 2:
            raise GtpError("boardsize needs a size or 'width height'")
        try:
            self.session.resize(*sizes)
        except GameError as error:
            raise GtpError(f"unacceptable size: {error}") from None

    def cmd_clear_board(self, args):
        self.session.new_game()

    def cmd_komi(self, args):  # accepted for Go clients' sake; our games have no komi
        if len(args) != 1:
            raise GtpError("komi needs one number")
        if not math.isfinite(_number(args[0], "komi")):
            raise GtpError(f"komi must be a finite number, not '{args[0]}'")

    def cmd_play(self, args):
        if len(args) != 2:
            raise GtpError("play needs a colour and a move")
        self._check_turn(args[0])
        if args[1].lower() in ("pass", "resign"):
            raise GtpError(f"illegal move: {self.session.variant} has no {args[1].lower()}")
        try:
            self.session.play(args[1])
        except GameError as error:
            raise GtpError(f"illegal move: {error}") from None

    def cmd_genmove(self, args):
        return self._generate(args, play=True)

    def cmd_reg_genmove(self, args):
        return self._generate(args, play=False)

    def cmd_undo(self, args):
        try:
            self.session.undo()
        except GameError as error:
            raise GtpError(f"cannot undo: {error}") from None

    def cmd_showboard(self, args):
        position = self.session.position
        turn = COLOUR_NAMES[position.side_to_move]
        result = self.session.game_result()
        status = f"{turn} to move" if result is None else f"game over: {_result_text(result)}"
        return "\n" + position.board_text() + "\n" + status

    def cmd_final_score(self, args):
        result = self.session.game_result()
        if result is None:
            score, best = self._solve()
            if score.kind is ScoreKind.CP and not score.exact:
                raise GtpError("cannot score an unfinished game the solver has not solved")
            side = self.session.position.side_to_move
            if score.kind is ScoreKind.CP:
                return "0"
            winner = side if score.value > 0 else 1 - side
            return "B+1" if winner == 0 else "W+1"
        return {0: "B+1", 1: "W+1", None: "0"}[result.winner]

    def cmd_time_settings(self, args):
        if len(args) != 3:
            raise GtpError("time_settings needs main_time byo_yomi_time byo_yomi_stones")
        main, byo = _seconds(args[0], "main time"), _seconds(args[1], "byo-yomi time")
        stones = _count(args[2], "byo-yomi stones")
        self.main_time, self.byo_yomi_time, self.byo_yomi_stones = main, byo, stones
        self.time_left = {}

    def cmd_time_left(self, args):
        if len(args) != 3:
            raise GtpError("time_left needs colour time stones")
        colour = _colour(args[0])
        # a negative time left is an overrun: none left
        seconds = _seconds(args[1], "time", minimum=-math.inf)
        stones = _count(args[2], "stones")
        self.time_left[colour] = (max(0.0, seconds), stones)

    # --- private commands ---------------------------------------------------------------------
    def cmd__mallard_analyze(self, args):
        self._require_unfinished()
        legal = self.session.position.legal_moves()
        lines = {}

        def collect(info):
            if info.multipv is not None and info.pv and info.score is not None:
                lines[info.multipv] = (info.pv[0], info.score)
            elif info.score is not None and info.pv and not info.bound and len(legal) == 1:
                lines[1] = (info.pv[0], info.score)

        self.session.search_now(self._solve_limits(multipv=max(2, len(legal))), collect)
        if not lines:
            raise GtpError("the analysis was stopped before it finished")
        position = self.session.position
        return "\n".join(f"{position.gtp_move(move)} {score}"
                         for _, (move, score) in sorted(lines.items()))

    def cmd__mallard_variant(self, args):
        """Switch the game (GTP has no command for it): `mallard-variant uttt`."""
        if len(args) != 1:
            raise GtpError("mallard-variant needs a variant name")
        name = args[0].lower()
        if not find_game(name).speaks("gtp"):
            raise GtpError(f"{name} cannot be played over GTP (its first player is not black)")
        self.session.set_variant(name)

    def cmd__mallard_solve(self, args):
        self._require_unfinished()
        score, best = self._solve()
        if score.kind is ScoreKind.CP and not score.exact:
            raise GtpError("the solve was stopped before it finished")
        outcome = "draw" if score.kind is ScoreKind.CP else "win" if score.value > 0 else "loss"
        return f"{outcome} {self.session.position.gtp_move(best)} {score}"

    # --- helpers ------------------------------------------------------------------------------
    def _check_turn(self, colour_text: str) -> int:
        colour = _colour(colour_text)
        side = self.session.position.side_to_move
        if self.session.game_result() is None and colour != side:
            raise GtpError(f"illegal move: it is {COLOUR_NAMES[side]}'s turn")
        return colour

    def _require_unfinished(self) -> None:
        result = self.session.game_result()
        if result is not None:
            raise GtpError(f"the game is over ({_result_text(result)})")

    def _solve(self):
        result = self.session.search_now(self._solve_limits())
        return result.score or Score.cp(0), result.best_move

    def _solve_limits(self, **fields) -> Limits:
        """Limits of a search for a position's value: to the end, or the game's solve time."""
        limit = self.session.game.solve_ms
        return Limits(movetime=limit, **fields) if limit else Limits(**fields)

    def _limits(self, side: int) -> Limits:
        if self.main_time is None or (self.main_time == 0 and self.byo_yomi_time == 0):
            return Limits(movetime=self.session.game.default_move_ms)
        seconds, stones = self.time_left.get(side, (self.main_time, 0))
        if stones > 0:
            return Limits(wtime=int(seconds * 1000), btime=int(seconds * 1000),
                          movestogo=stones)
        if seconds <= 0 and self.byo_yomi_stones > 0:
            per_period = int(self.byo_yomi_time * 1000)
            return Limits(wtime=per_period, btime=per_period, movestogo=self.byo_yomi_stones)
        return Limits(wtime=int(seconds * 1000), btime=int(seconds * 1000))

    def _generate(self, args, play: bool):
        if len(args) != 1:
            raise GtpError("genmove needs a colour")
        colour = self._check_turn(args[0])
        self._require_unfinished()
        limits = self._limits(colour)
        if self.input is not None:  # the move's time runs from the command's arrival
            limits = dataclasses.replace(limits, started=self.input.arrived)
        result = self.session.search_now(limits)
        position = self.session.position
        if result.best_move is None:
            raise GtpError("no move to play")
        vertex = position.gtp_move(result.best_move)
        if play:
            try:
                self.session.play(vertex)
            except GameError as error:
                raise GtpError(f"internal error: own move rejected: {error}") from None
        return vertex


def _result_text(result) -> str:
    if result.winner is None:
        return f"draw, {result.reason}"
    return f"{COLOUR_NAMES[result.winner]} wins, {result.reason}"


def _colour(text: str) -> int:
    try:
        return COLOURS[text.lower()]
    except KeyError:
        raise GtpError(f"invalid color '{text}' (b, w, black or white)") from None


_MAX_SECONDS = LIMIT_MAX / 1000


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GtpError(f"{what} is not an integer: '{text}'") from None


def _count(text: str, what: str) -> int:
    """A number of stones or moves: 0 to LIMIT_MAX."""
    value = _integer(text, what)
    if not 0 <= value <= LIMIT_MAX:
        raise GtpError(f"{what} must be between 0 and {LIMIT_MAX}, not {value}")
    return value


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise GtpError(f"{what} is not a number: '{text}'") from None


def _seconds(text: str, what: str, minimum: float = 0.0) -> float:
    """A time: finite, from `minimum` (not negative unless said) to LIMIT_MAX milliseconds."""
    seconds = _number(text, what)
    if not (math.isfinite(seconds) and minimum <= seconds <= _MAX_SECONDS):
        lowest = f"from {minimum:.0f} " if math.isfinite(minimum) else ""
        raise GtpError(f"{what} must be a finite number of seconds {lowest}up to "
                       f"{_MAX_SECONDS:.0f}, not '{text}'")
    return seconds
