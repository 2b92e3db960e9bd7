"""UCI (Fairy-Stockfish dialect) and UGI front-ends over the session: parse a line, print lines.

Both dialects share everything but the handshake (`uci`/`uciok` vs `ugi`/`ugiok`), the new-game
command, the clock names of `go` (UGI's `p1time p2time p1inc p2inc` are accepted in both) and
UGI's `query`; UGI's `bestmove` has exactly two tokens (no ponder move).

Errors are `info string error: ...` lines on stdout, at most one per command (the first problem,
and how many more there were); the state stays as it was (a bad move list keeps the moves before
the bad one). Unknown commands are ignored; an unknown option is an error, as in Stockfish.
Every `go` gets exactly one `bestmove`, preceded by at least one `info ... score` line; a finished
game answers `info depth 0 score mate 0` (`score cp 0` for a draw) and `bestmove (none)`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from mallard.engines.base import (
    LIMIT_MAX,
    MESSAGE_LIMIT,
    GameError,
    Limits,
    Score,
    SearchInfo,
    SearchResult,
    clip_line,
)
from mallard.protocol import ENGINE_AUTHOR, ENGINE_NAME, VERSION
from mallard.protocol.frontend import OVERLONG_MESSAGE, FrontEnd
from mallard.protocol.io import Input, Output
from mallard.protocol.session import Session
from mallard.protocol.signature import run_signature

DEFAULT_MOVETIME_ON_ERROR = 1000  # ms: a `go` whose limits could not be read still ends

INT_TOKENS = {
    "wtime": "wtime", "btime": "btime", "winc": "winc", "binc": "binc",
    "p1time": "wtime", "p2time": "btime", "p1inc": "winc", "p2inc": "binc",
    "movestogo": "movestogo", "movetime": "movetime", "depth": "depth", "nodes": "nodes",
    "mate": "mate",
}
POSITIVE = {"movestogo", "movetime", "depth", "nodes", "mate"}
FLAG_TOKENS = {"infinite", "ponder"}


def parse_go(tokens: list[str]) -> tuple[dict, list[str], list[str]]:
    """Limits (as keyword arguments of `Limits`), searchmoves texts and error texts."""
    fields: dict = {}
    searchmoves: list[str] = []
    errors: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index].lower()
        index += 1
        if token in FLAG_TOKENS:
            fields[token] = True
        elif token in INT_TOKENS:
            name = INT_TOKENS[token]
            if index >= len(tokens):
                errors.append(f"go: '{token}' needs a value")
                continue
            text = tokens[index]
            index += 1
            try:
                value = min(int(text), LIMIT_MAX)
            except ValueError:
                errors.append(f"go: '{token}' needs an integer, not '{text}'")
                continue
            if name in POSITIVE and value <= 0:
                errors.append(f"go: '{token}' must be positive, not {value}")
                continue
            fields[name] = max(0, value)
        elif token == "searchmoves":
            while index < len(tokens) and tokens[index].lower() not in INT_TOKENS \
                    and tokens[index].lower() not in FLAG_TOKENS:
                searchmoves.append(tokens[index])
                index += 1
        else:
            errors.append(f"go: unknown token '{tokens[index - 1]}'")
    return fields, searchmoves, errors


class UciFrontEnd(FrontEnd):
    def __init__(self, output: Output, input_: Optional[Input], dialect: str = "uci",
                 session: Optional[Session] = None):
        super().__init__(output, input_, session or Session())
        self.dialect = dialect
        self._errors: Optional[list[str]] = None  # collected while a command runs

    # --- plumbing -----------------------------------------------------------------------------
    def error(self, text: str) -> None:
        """Report a problem: while a command runs, the first one is kept for `_flush_errors`."""
        if self._errors is not None:
            self._errors.append(text)
        else:
            self._print_error(text)

    def _flush_errors(self) -> None:
        """The current command's one error line: its first problem, and how many followed."""
        errors, self._errors = self._errors, ([] if self._errors is not None else None)
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            self._print_error(errors[0], more)

    def _print_error(self, text: str, suffix: str = "") -> None:
        # one printable line whatever the client sent, and not a megabyte of it echoed back
        text = clip_line(text, MESSAGE_LIMIT)
        self.out.line(f"info string error: {text}{suffix}")
        self.out.log(f"error: {text}{suffix}")

    def report_internal_error(self, line: str) -> None:
        self.error(f"internal error while handling '{line.strip()[:80]}' (state kept)")

    def report_overlong_line(self) -> None:
        self.error(OVERLONG_MESSAGE)

    def _wait_ready(self) -> bool:
        """Wait for the compiled code (commands are handled in order, as they came)."""
        return self.session.ready()

    # --- dispatch -----------------------------------------------------------------------------
    @staticmethod
    def quits(line: str) -> bool:
        return line.split()[:1] == ["quit"]

    def handle(self, line: str) -> bool:
        """Handle one input line; False when the process should end."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        self.out.log(f"<< {line}")
        if command == "quit":
            return False
        handler = self.handlers.get(command)
        if handler is None or (command == "query" and self.dialect != "ugi"):
            self.out.log(f"ignored unknown command '{command}'")
            return True
        # setoption waits only where it must (session.set_option): the variant a client sets
        # after the handshake is the one whose code the warm-up then loads
        if command not in ("uci", "ugi", "debug", "stop", "ponderhit", "setoption") \
                and not self._wait_ready():
            return False
        self._errors = []
        try:
            handler(args, line)
        finally:
            self._flush_errors()
            self._errors = None
        return True

    # --- commands -----------------------------------------------------------------------------
    def cmd_uci(self, args, line) -> None:
        self._handshake("uciok")

    def cmd_ugi(self, args, line) -> None:
        self._handshake("ugiok")

    def _handshake(self, ok: str) -> None:
        self.out.line(f"id name {ENGINE_NAME} {VERSION}")
        self.out.line(f"id author {ENGINE_AUTHOR}")
        for option in self.session.options():
            self.out.line(option.uci_line())
        self.out.line(ok)
        self.session.start_warm_up(defer=True)

    def cmd_debug(self, args, line) -> None:
        self.out.debug = bool(args) and args[0].lower() == "on"

    def cmd_isready(self, args, line) -> None:
        if self.session.warm_error:
            self.error(f"start-up check failed: {self.session.warm_error}")
        self.out.line("readyok")

    def cmd_setoption(self, args, line) -> None:
        lowered = [a.lower() for a in args]
        if not lowered or lowered[0] != "name":
            self.error("setoption needs 'name <id> [value <x>]'")
            return
        if "value" in lowered[1:]:
            at = lowered.index("value", 1)
            name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        else:
            name, value = " ".join(args[1:]), None
        if not name:
            self.error("setoption needs an option name")
            return
        try:
            self.session.set_option(name, value)
        except GameError as error:  # the option keeps its value
            self.error(str(error))

    def cmd_ucinewgame(self, args, line) -> None:
        self.session.new_game()

    cmd_uginewgame = cmd_ucinewgame

    def cmd_position(self, args, line) -> None:
        if not args:
            self.error("position needs 'startpos' or 'fen <fen>'")
            return
        lowered = [a.lower() for a in args]
        at = lowered.index("moves") if "moves" in lowered else len(args)
        moves = args[at + 1:]
        if lowered[0] == "startpos":
            if at != 1:
                self.error(f"position: unexpected '{' '.join(args[1:at])}' after startpos")
                return
            root = "startpos"
        elif lowered[0] == "fen":
            root = " ".join(args[1:at])
            if not root:
                self.error("position fen needs a FEN")
                return
        else:
            self.error(f"position: expected 'startpos' or 'fen', not '{args[0]}'")
            return
        try:
            self.session.set_position(root, moves)
        except GameError as error:  # see Session.set_position for what is kept
            self.error(str(error))

    def cmd_go(self, args, line) -> None:
        fields, searchmove_texts, errors = parse_go(args)
        for text in errors:
            self.error(text)
        session = self.session
        if searchmove_texts:
            moves, problem = session.parse_moves(searchmove_texts)
            if problem:
                self.error(f"searchmoves: {problem}")
            if moves:
                fields["searchmoves"] = tuple(moves)
        limits = Limits(**fields, started=self.input.arrived if self.input else None)
        has_bound = any(getattr(limits, name) is not None for name in
                        ("depth", "nodes", "movetime", "wtime", "btime", "mate")) \
            or limits.infinite
        if errors and not has_bound:
            limits = dataclasses.replace(limits, movetime=DEFAULT_MOVETIME_ON_ERROR)
        self._flush_errors()  # before the search's first line
        if session.position.result() is not None:
            session.stop_and_wait()
            result = session.position.result()
            score = "cp 0" if result.winner is None else "mate 0"
            self.out.line(f"info depth 0 score {score}")
            self.out.line("bestmove (none)")
            return
        position = session.position
        scored = False
        show_wdl = bool(session.values["uci_showwdl"])

        def on_info(info: SearchInfo) -> None:
            nonlocal scored
            scored = scored or info.score is not None
            self.out.line(info_line(info, position, show_wdl))

        def on_done(result: SearchResult) -> None:
            if "error" in result.extra:
                self._print_error(f"search failed ({result.extra['error']}); "
                                  "playing a legal move")
            if not scored:
                score = result.score or Score.cp(0)
                self.out.line(info_line(SearchInfo(depth=result.depth, score=score,
                                                   nodes=result.nodes, time_ms=result.time_ms,
                                                   pv=result.pv or [result.best_move]),
                                        position, show_wdl))
            if result.best_move is None:
                self.out.line("bestmove (none)")
                return
            text = f"bestmove {position.format_move(result.best_move)}"
            if self.dialect == "uci" and result.ponder_move is not None:
                line_texts = move_texts(position, [result.best_move, result.ponder_move])
                if len(line_texts) == 2:
                    text += f" ponder {line_texts[1]}"
            self.out.line(text)

        session.go(limits, on_info, on_done)

    def cmd_stop(self, args, line) -> None:
        self.session.stop_and_wait()

    def cmd_ponderhit(self, args, line) -> None:
        self.session.ponderhit()

    def cmd_query(self, args, line) -> None:
        what = args[0].lower() if args else ""
        result = self.session.game_result()
        if what == "p1turn":
            answer = "true" if self.session.position.side_to_move == 0 else "false"
        elif what == "gameover":
            answer = "true" if result is not None else "false"
        elif what == "result":
            answer = "none" if result is None else {0: "p1win", 1: "p2win", None: "draw"}[
                result.winner]
        else:
            self.error(f"query: unknown question '{' '.join(args)}' "
                       "(p1turn, gameover or result)")
            return
        self.out.line(f"response {answer}")

    def cmd_bench(self, args, line) -> None:
        """Stockfish's `bench`: the current variant's bench signature, searched in a session of
        its own (this one's position, options and table stay); a running search is stopped
        first, so that the timing is the bench's alone. The last line is `Nodes searched: N`."""
        if args:
            self.error(f"bench takes no arguments, not '{' '.join(args)}'")
            return
        self.session.stop_and_wait()
        try:
            result = run_signature(self.session.variant)
        except (KeyError, ValueError) as error:
            self.error(f"bench: {error.args[0] if error.args else error}")
            return
        speed = result.nodes * 1000 // max(1, round(result.seconds * 1000))
        self.out.line(f"info string bench {result.variant}: {result.positions} positions at "
                      f"depth {result.depth}, time {round(result.seconds * 1000)} ms, "
                      f"nps {speed}")
        self.out.line(f"Nodes searched: {result.nodes}")

    def cmd_d(self, args, line) -> None:
        """Stockfish's debugging display: the board and the FEN."""
        position = self.session.position
        for text in position.board_text().splitlines():
            self.out.line(text)
        self.out.line(f"Fen: {position.fen()}")


def move_texts(position, moves) -> list[str]:
    """Texts of moves played in sequence from `position`, cut at the first illegal one."""
    texts = []
    for move in moves:
        try:
            texts.append(position.format_move(move))
            position = position.play(move)
        except Exception:  # a PV read from a table may go stale; print the legal prefix
            break
    return texts


def info_line(info: SearchInfo, position, show_wdl: bool) -> str:
    if info.string is not None:
        return f"info string {info.string}"
    parts = ["info", "depth", str(int(info.depth))]
    if info.seldepth is not None:
        parts += ["seldepth", str(int(info.seldepth))]
    if info.multipv is not None:
        parts += ["multipv", str(int(info.multipv))]
    if info.score is not None:
        parts += ["score", info.score.kind, str(int(info.score.value))]
        if info.bound:
            parts.append(info.bound)
        if show_wdl:
            wdl = info.wdl or info.score.wdl()
            parts += ["wdl"] + [str(int(x)) for x in wdl]
    parts += ["nodes", str(int(info.nodes)), "nps", str(int(info.nps)), "time",
              str(int(info.time_ms))]
    if info.hashfull is not None:
        parts += ["hashfull", str(int(info.hashfull))]
    pv = move_texts(position, info.pv) if info.pv else []
    if pv:
        parts += ["pv"] + pv
    return " ".join(parts)
