"""One board page's game: positions, moves, the engine's side, analysis; commands in, messages out.

A `BoardSession` lives on the server's event loop, one per WebSocket. `handle(text)` takes one
message from the page (JSON `{"cmd": ...}`) and answers through `emit(dict)`: after every change
the full view state (`{"type": "state", ...}`: board drawing, click targets, move list, result,
FEN), or one `{"type": "error", "message": ...}` when the input is bad — the game is then exactly
as it was. Engine output arrives on the engine's reader thread and is handed to the loop;
`{"type": "info", ...}` lines of a search that is no longer current are dropped.

Invariants: `positions[i]` is the position after the first i moves from `root`, and `evals[i]`
the engine's last exact score of it (first player's view, None before one); `cursor` is the ply
shown (0..len(moves)); a move played while looking at an earlier ply cuts the moves after it.
The engine plays only at the end of the game, at the page's Skill Level; analysis follows the
ply shown, at full strength. With a time control (`GameClock`) the side to move's clock runs
while the game's end is shown, the engine's only once its search is sent (not while it starts);
a flag that falls ends the game (`time_loss`). A page that sends nothing for `idle_seconds`
loses its engine (and its analysis) until it next needs one.

For UTTT the page may also prove the whole game (`GameProof`: a process of its own, which like
an engine takes one of the server's slots): `proofs[i]` is the proven value of `positions[i]`
(None before its line came). Any change of the moves stops a proof, and so does the analysis
(both want the cores); a position's value does not depend on the moves that led to it, so the
proofs of the positions that stay are kept. A page starts at most one proof per
`MIN_PROOF_INTERVAL_S`: each start is a new process, which a page must not ask for by the hundred.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any, Callable, Optional

from mallard.engines import find_game
from mallard.engines.base import (
    MESSAGE_LIMIT,
    GameError,
    MoveError,
    Position,
    PositionError,
    ScoreKind,
    clip,
    clip_line,
)
from mallard.engines.skill import MAX_LEVEL, MIN_LEVEL
from mallard.protocol.board.clock import MAX_BASE_MS, MAX_INCREMENT_MS, MIN_BASE_MS, GameClock
from mallard.protocol.board.engine import EngineLink, Search
from mallard.protocol.board.limits import DEFAULT_MAX_ENGINES, IDLE_ENGINE_SECONDS, MAX_MESSAGE
from mallard.protocol.board.proof import DEFAULT_LIMIT_S, MAX_LIMIT_S, MIN_LIMIT_S, GameProof
from mallard.protocol.board.view import (
    SIDE_LABELS,
    BoardMove,
    board_view,
    export_pgn,
    last_move_marks,
    load_position,
    now_iso,
    read_pgn,
    result_text,
)
from mallard.tournaments.players import EngineError
from mallard.tournaments.records import SIDE_NAMES, EndKind, Reason

ANALYSIS_LINES = {"duck": 3, "uttt": 3}  # Connect Four: one line per column
DEFAULT_MOVETIME_MS = 1000
MAX_MOVETIME_MS = 600_000
MAX_PV = 16
MIN_PROOF_INTERVAL_S = 1.0


class CommandError(Exception):
    """A page message that cannot be carried out; its text is shown on the page."""


def score_text(variant: str, score: Optional[dict], depth: int, plies_left: Optional[int]) -> str:
    """A score for people, from the side to move's view."""
    if not score:
        return ""
    kind, value = score["kind"], score["value"]
    bound = {"lowerbound": " or more", "upperbound": " or less"}.get(score.get("bound"), "")
    if kind == ScoreKind.MATE:
        if value == 0:
            return "game over"
        if variant == "duck":
            return f"#{value}{bound}"
        return (f"win in {value}" if value > 0 else f"loss in {-value}") + bound
    if variant == "cfour" and value == 0 and plies_left is not None and depth >= plies_left:
        return "draw"  # searched to the end of the game: exact
    return f"{value / 100:+.2f}{bound}"


def first_player_eval(score: Optional[dict], side_to_move: int) -> Optional[dict]:
    """An exact score as the evaluation bar and graph draw it: `{"cp": n}` or `{"mate": n}`
    from the first player's view; None for a bound or no score."""
    if not score or score.get("bound"):
        return None
    sign = 1 if side_to_move == 0 else -1
    key = "mate" if score["kind"] == ScoreKind.MATE else "cp"
    return {key: sign * score["value"]}


class EngineSlots:
    """How many engine and proof processes the server may run at once (`--max-engines`): a
    page takes a slot when its engine or its game's proof starts, and gives it back when that
    process ends."""

    def __init__(self, limit: int = DEFAULT_MAX_ENGINES):
        self.limit = limit
        self.in_use = 0

    def take(self) -> bool:
        if self.in_use >= self.limit:
            return False
        self.in_use += 1
        return True

    def give_back(self) -> None:
        self.in_use = max(0, self.in_use - 1)


class BoardSession:
    def __init__(self, variant: str, engine_command: list[str], emit: Callable[[dict], None],
                 loop: asyncio.AbstractEventLoop, slots: Optional[EngineSlots] = None,
                 idle_seconds: float = IDLE_ENGINE_SECONDS):
        self.emit = emit
        self.loop = loop
        self.engine_command = engine_command
        self.slots = slots or EngineSlots()
        self._holds_slot = False
        self._engine_started: Optional[asyncio.Future] = None  # the one start under way
        self._starting: Optional[EngineLink] = None
        self.engine: Optional[EngineLink] = None
        self.engine_error: Optional[str] = None
        self.engine_side: Optional[int] = None  # the side the engine plays; None: free play
        self.movetime_ms = DEFAULT_MOVETIME_MS
        self.level = MAX_LEVEL
        self.clock: Optional[GameClock] = None
        self.time_loss: Optional[int] = None  # the side whose flag fell
        self._flag_timer: Optional[asyncio.TimerHandle] = None
        self.idle_seconds = idle_seconds
        self._idle_timer: Optional[asyncio.TimerHandle] = None
        self.analysing = False
        self.play_search: Optional[Search] = None
        self.analysis_search: Optional[Search] = None
        self._started_thinking = 0.0
        self._last_primary: dict = {}
        self.game_proof: Optional[GameProof] = None
        self._proof_holds_slot = False
        self.proof_limit_s = DEFAULT_LIMIT_S
        self.proof_error: Optional[str] = None
        self._proof_started = float("-inf")  # time.monotonic() of the last start
        self._tasks: set[asyncio.Task] = set()
        self.closed = False
        self._select(variant)

    # --- the game ---------------------------------------------------------------------------
    def _select(self, variant: str) -> None:
        entry = find_game(variant)
        self.variant = entry.name
        self.game = entry.new_game()
        self._reset(self.game.start_position(), [])

    def _reset(self, root: Position, moves: list[BoardMove],
               positions: Optional[list[Position]] = None) -> None:
        if positions is None:
            positions = [root]
            for move in moves:
                position = positions[-1]
                positions.append(position.play(position.parse_move(move.text)))
        self.root, self.moves, self.positions = root, list(moves), positions
        self.evals: list[Optional[dict]] = [None] * len(positions)
        self._stop_proof()
        self.proofs: list[Optional[dict]] = [None] * len(positions)
        self.cursor = len(moves)
        self.started_at = now_iso()
        self.time_loss = None
        if self.clock is not None:  # a new game: the clocks start again
            self.clock = GameClock(self.clock.base_ms, self.clock.increment_ms)

    @property
    def shown(self) -> Position:
        return self.positions[self.cursor]

    @property
    def at_end(self) -> bool:
        return self.cursor == len(self.moves)

    def _root_fen(self) -> Optional[str]:
        fen = self.root.fen()
        return None if fen == self.game.start_position().fen() else fen

    def game_over_text(self) -> str:
        """Why the game has ended ("" while it goes on): a loss on time, or the rules."""
        if self.time_loss is not None:
            return self._for_people(str(Reason(EndKind.TIME_LOSS, self.time_loss)))
        return self._for_people(result_text(self.positions[-1].result(claim_draw=True)))

    def _for_people(self, text: str) -> str:
        """A reason in the runner's words (`White wins ...`) with the game's own side names
        (`Yellow wins (four in a row)`)."""
        for side, runner_name in enumerate(SIDE_NAMES):
            if text.startswith(runner_name):
                return SIDE_LABELS[self.variant][side] + text[len(runner_name):]
        return text

    def state(self) -> dict:
        position = self.shown
        over = position.result(claim_draw=True)
        engine = self.engine
        board = board_view(position, playable=self.time_loss is None)
        if self.cursor > 0:
            board["last"] = last_move_marks(self.positions[self.cursor - 1],
                                            self.moves[self.cursor - 1].text)
        return {
            "type": "state", "variant": self.variant, "sides": SIDE_LABELS[self.variant],
            "board": board, "fen": position.fen(), "toMove": position.side_to_move,
            "moves": [{"text": m.text, "san": m.san, "human": m.human} for m in self.moves],
            "cursor": self.cursor, "evals": self.evals,
            "proofs": self._proofs_view(), "proof": self._proof_view(),
            "result": self.game_over_text() if self.time_loss is not None
            else self._for_people(result_text(over)),
            "over": over is not None or self.time_loss is not None,
            "gameOver": self.game_over_text(),
            "clock": self.clock.view() if self.clock is not None else None,
            "engine": {"name": engine.name if engine else None,
                       "running": bool(engine and engine.alive), "error": self.engine_error,
                       "side": self.engine_side, "movetime": self.movetime_ms,
                       "level": self.level, "analysing": self.analysing,
                       "thinking": self.play_search is not None},
        }

    # --- the page's messages ----------------------------------------------------------------
    async def handle(self, text: Any) -> None:
        """Carry out one page message; a bad one answers one error and changes nothing."""
        self._rearm_idle_timer()
        try:
            if not isinstance(text, str):
                raise CommandError("messages are JSON text")
            if len(text) > MAX_MESSAGE:
                raise CommandError(f"message too large ({len(text)} characters, at most "
                                   f"{MAX_MESSAGE})")
            try:
                message = json.loads(text)
            except (ValueError, RecursionError):
                raise CommandError("bad JSON") from None
            if not isinstance(message, dict) or not isinstance(message.get("cmd"), str):
                raise CommandError('a message is an object with a "cmd" text')
            command = getattr(self, "cmd_" + message["cmd"], None)
            if command is None:
                raise CommandError(f"unknown command '{message['cmd'][:40]}'")
            result = command(message)
            if asyncio.iscoroutine(result):
                await result
        except (CommandError, GameError, EngineError) as error:
            self.emit({"type": "error", "message": clip_line(error, MESSAGE_LIMIT)})
        except Exception as error:  # a bug: one line on the page, the game kept
            self.emit({"type": "error", "message": clip_line(
                f"internal error: {type(error).__name__}: {error}", MESSAGE_LIMIT)})

    @staticmethod
    def _text(message: dict, key: str) -> str:
        value = message.get(key)
        if not isinstance(value, str):
            raise CommandError(f'"{key}" must be a text')
        return value

    def cmd_state(self, message: dict) -> None:
        self.emit(self.state())

    def cmd_new(self, message: dict) -> None:
        variant = message.get("game", self.variant)
        if not isinstance(variant, str):
            raise CommandError('"game" must be a text')
        entry = find_game(variant)  # UnknownGameError names the games
        self._stop_searches()
        if entry.name != self.variant:
            self._select(entry.name)
            self._engine_follows_the_game()
        else:
            self._reset(self.game.start_position(), [])
        self._after_change()

    def cmd_move(self, message: dict) -> None:
        position = self.shown
        if "piece" in message:  # a duck move as the page clicks it: piece move, duck square
            piece, duck = self._text(message, "piece"), self._text(message, "duck")
            text = f"{piece},{piece[2:4]}{duck}"
        else:
            text = self._text(message, "move")
        if self.play_search is not None and self.at_end:
            raise CommandError("the engine is thinking: wait for its move")
        if self.time_loss is not None:
            raise CommandError(f"the game is over ({self.game_over_text()}): start a new game "
                               "or take back")
        move = position.parse_move(text)
        self._play(move, None)

    def _play(self, move, engine_reply: Optional[dict]) -> None:
        position = self.shown
        if self.clock is not None and self.at_end and self.engine_side is not None:
            if not self.clock.moved(position.side_to_move):
                self._lose_on_time(position.side_to_move)
                return
        child = position.play(move)
        record = BoardMove.of(position, move)
        if engine_reply is not None:
            record.time_ms = engine_reply["time_ms"]
            record.score = engine_reply.get("score")
            record.depth = engine_reply.get("depth")
        self._cut_after(self.cursor)
        self.moves.append(record)
        self.positions.append(child)
        self.evals.append(None)
        self.proofs.append(None)
        self.cursor += 1
        self._after_change()

    def _cut_after(self, ply: int) -> None:
        """Drop the moves after `ply`, with their positions, evaluations and proofs; a proof
        of the game as it was stops."""
        del self.moves[ply:], self.positions[ply + 1:]
        del self.evals[ply + 1:], self.proofs[ply + 1:]
        self._stop_proof()

    # --- the clocks -------------------------------------------------------------------------
    def _lose_on_time(self, side: int) -> None:
        self.time_loss = side
        self._stop_searches()
        self._after_change()

    def _update_clock(self) -> None:
        """Run the side to move's clock while the game's end is shown and undecided; then
        set the timer of its flag."""
        if self._flag_timer is not None:
            self._flag_timer.cancel()
            self._flag_timer = None
        clock = self.clock
        if clock is None:
            return
        position = self.shown
        if self.engine_side is None or self.time_loss is not None or not self.at_end or \
                position.result(claim_draw=True) is not None or \
                (self._engine_to_move() and self.play_search is None):
            clock.pause()  # the engine's clock runs from its `go`, not while it starts
            return
        clock.start(position.side_to_move)
        self._flag_timer = self.loop.call_later(clock.flag_in() + 0.005, self._flag_check)

    def _flag_check(self) -> None:
        self._flag_timer = None
        clock = self.clock
        if clock is None or clock.running is None or self.closed:
            return
        if clock.left_ms(clock.running) <= 0:
            self._lose_on_time(clock.running)
        else:
            self._update_clock()

    def cmd_undo(self, message: dict) -> None:
        if not self.moves:
            raise CommandError("no move to take back")
        self._stop_searches()
        if self.time_loss is not None:  # the lost clock cannot run again: play on without one
            self.time_loss, self.clock = None, None
        keep = len(self.moves) - 1
        if self.engine_side is not None and keep > 0 and \
                self.positions[keep].side_to_move == self.engine_side:
            keep -= 1  # back to the player's turn
        self._cut_after(keep)
        self.cursor = keep
        self._after_change()

    def cmd_goto(self, message: dict) -> None:
        ply = message.get("ply")
        if not isinstance(ply, int) or isinstance(ply, bool) or not 0 <= ply <= len(self.moves):
            raise CommandError(f"no ply {ply!r} in this game (0 to {len(self.moves)})")
        self._stop_searches()
        self.cursor = ply
        self._after_change()

    async def cmd_load(self, message: dict) -> None:
        text = self._text(message, "text")
        # off the event loop: a long text takes a while, and other pages must not wait for it
        root, moves, positions = await asyncio.to_thread(
            lambda: _replayed(*load_position(self.game, text)))
        self._stop_searches()
        self._reset(root, moves, positions)
        self._after_change()

    def cmd_pgn_export(self, message: dict) -> None:
        names = self._player_names()
        self.emit({"type": "pgn", "pgn": export_pgn(self.game, self.root, self.moves, names,
                                                    self.started_at)})

    def _player_names(self) -> tuple[str, str]:
        engine = self.engine.name if self.engine else "engine"
        if self.engine_side is None:
            return ("?", "?")
        return (engine, "Human") if self.engine_side == 0 else ("Human", engine)

    async def cmd_pgn_import(self, message: dict) -> None:
        text = self._text(message, "pgn")
        # off the event loop, like `load`: the reader is linear, but a game is long to replay
        entry, game, root, moves, positions = await asyncio.to_thread(
            _imported, text, self.variant, self.game)
        self._stop_searches()
        if entry.name != self.variant:
            self.variant, self.game = entry.name, game
            self._engine_follows_the_game()
        self._reset(root, moves, positions)
        self._after_change()

    def cmd_preview(self, message: dict) -> None:
        texts = message.get("moves")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts) \
                or len(texts) > MAX_PV * 4:
            raise CommandError('"moves" must be a list of move texts')
        position = self.shown
        for text in texts:
            position = position.play(position.parse_move(text))
        self.emit({"type": "preview", "board": board_view(position), "fen": position.fen(),
                   "moves": texts})

    def cmd_play(self, message: dict) -> None:
        side = message.get("side")
        if side not in (None, 0, 1) or isinstance(side, bool):
            raise CommandError('"side" is 0, 1 or null (the engine plays no side)')
        movetime = _whole(message, "movetime", self.movetime_ms, 10, MAX_MOVETIME_MS,
                          "time per move", "ms")
        level = _whole(message, "level", self.level, MIN_LEVEL, MAX_LEVEL, "the level", "")
        clock = message.get("clock")
        if clock is not None:
            if not isinstance(clock, dict):
                raise CommandError('"clock" is null or {"base": ms, "increment": ms}')
            clock = GameClock(_whole(clock, "base", None, MIN_BASE_MS, MAX_BASE_MS,
                                     "a clock's base time", "ms"),
                              _whole(clock, "increment", 0, 0, MAX_INCREMENT_MS,
                                     "a clock's increment", "ms"))
        self.engine_side, self.movetime_ms, self.level = side, movetime, level
        self.clock = clock if side is not None else None  # clocks are for games against it
        self.time_loss = None
        if self.play_search is not None:
            self._stop_play()
        self._after_change()

    async def cmd_analyse(self, message: dict) -> None:
        on = _switch(message)
        if on:
            self._stop_proof()
            await self.ensure_engine()  # no engine for the page: an error, analysis stays off
            self.analysing = True
            self._start_analysis()
        else:
            self.analysing = False
            if self.analysis_search is not None:
                self.analysis_search = None
                if self.play_search is None:
                    self.engine.stop()
        self.emit(self.state())

    # --- the engine -------------------------------------------------------------------------
    def _engine_follows_the_game(self) -> None:
        """Switch the engine to the page's game; one still starting switches once it is up."""
        if self.engine is not None and self.engine.variant != self.variant:
            self.engine.set_variant(self.variant)

    async def ensure_engine(self) -> EngineLink:
        """The page's engine, started on first need: one process per page whatever the page
        sends (messages that arrive while it starts wait for the same start), and only while
        the server has a slot for it."""
        if self.engine is not None and self.engine.alive:
            return self.engine
        if self._engine_started is None:
            self._engine_started = self.loop.create_future()
            task = self.loop.create_task(self._start_engine(self._engine_started))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await asyncio.shield(self._engine_started)

    async def _start_engine(self, started: asyncio.Future) -> None:
        try:
            started.set_result(await self._started_engine())
        except BaseException as error:  # every waiting message gets the same answer
            started.set_exception(error)
            started.exception()  # retrieved: nobody may be waiting any more
        finally:
            self._engine_started = None

    async def _started_engine(self) -> EngineLink:
        if self.engine is not None:  # an earlier one died: make sure it is gone
            self._end_engine()
        if not self.slots.take():
            self.engine_error = (f"no engine for this page: the server runs at most "
                                 f"{self.slots.limit} at once (mallard board --max-engines); "
                                 "close another page's engine or try again later")
            raise CommandError(self.engine_error)
        self._holds_slot = True
        link = self._starting = EngineLink(self.engine_command, self.variant,
                                           self._from_engine_thread)
        try:
            await asyncio.to_thread(link.start)
        except EngineError as error:
            self._end_engine(link)
            if self.closed:
                raise CommandError("the page is closed") from None
            self.engine_error = f"the engine did not start: {error}"
            raise CommandError(self.engine_error) from None
        finally:
            self._starting = None
        if self.closed:  # the page went away while the engine started
            self._end_engine(link)
            raise CommandError("the page is closed")
        self.engine, self.engine_error = link, None
        self._engine_follows_the_game()  # the page chose another game while it started
        return link

    def _end_engine(self, link: Optional[EngineLink] = None) -> None:
        """Kill the page's engine (or `link`, one that is starting) and free its slot."""
        link = link or self.engine
        if link is not None:
            link.close()
        if link is self.engine:
            self.engine = None
        if self._holds_slot:
            self._holds_slot = False
            self.slots.give_back()

    # --- idle pages -------------------------------------------------------------------------
    def _rearm_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = self.loop.call_later(self.idle_seconds, self._idle)

    def _idle(self) -> None:
        """Nothing from the page for `idle_seconds`: end its engine, unless it is to move."""
        self._idle_timer = None
        if self._engine_started is not None:  # still starting: idle from when it is up
            self._rearm_idle_timer()
            return
        if self.engine is None or self.play_search is not None or self.closed:
            return
        was_analysing = self.analysing
        self.analysing, self.analysis_search = False, None
        self._end_engine()
        if was_analysing:
            self.emit({"type": "error", "message": f"analysis stopped: nothing happened on this "
                                                   f"page for {self.idle_seconds:g} s"})
        self.emit(self.state())

    def _from_engine_thread(self, kind: str, search: Optional[Search], payload: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self._engine_event, kind, search, payload)
        except RuntimeError:  # the loop has closed: the server is stopping
            pass

    def _engine_event(self, kind: str, search: Optional[Search], payload: Any) -> None:
        if kind == "gone":
            self.play_search = self.analysis_search = None
            self.analysing = False
            self._end_engine()
            self.engine_error = f"the engine stopped: {payload}"
            self.emit({"type": "error", "message": self.engine_error})
            self.emit(self.state())
            return
        if search is None or search.stopped and kind == "info":
            return
        if kind == "info":
            self._engine_info(search, payload)
        elif kind == "bestmove" and search is self.play_search:
            self.play_search = None
            self._engine_move(search, payload)

    def _engine_info(self, search: Search, info: dict) -> None:
        position: Position = search.context
        pv_texts, pv_human = [], []
        walk = position
        for text in info.get("pv", [])[:MAX_PV]:
            try:
                move = walk.parse_move(text)
            except GameError:
                break
            pv_texts.append(walk.format_move(move))
            pv_human.append(walk.human_move(move))
            walk = walk.play(move)
        plies_left = None
        if self.variant == "cfour":
            plies_left = position.width * position.height - position.ply
        depth = info.get("depth", 0)
        evaluation = None
        if info.get("multipv", 1) == 1 and "score" in info:
            if search.purpose == "play":
                self._last_primary = {"score": (info["score"]["kind"], info["score"]["value"]),
                                      "depth": depth}
            evaluation = first_player_eval(info["score"], position.side_to_move)
            if evaluation is not None:
                for ply in range(len(self.positions) - 1, -1, -1):
                    if self.positions[ply] is position:
                        self.evals[ply] = evaluation
                        break
        message = {"type": "info", "purpose": search.purpose, "search": search.ident,
                   "depth": depth, "multipv": info.get("multipv", 1),
                   "score": info.get("score"),
                   "scoreText": score_text(self.variant, info.get("score"), depth, plies_left),
                   "pv": pv_texts, "pvHuman": pv_human, "nodes": info.get("nodes"),
                   "nps": info.get("nps"), "string": info.get("string"),
                   "fen": position.fen(), "eval": evaluation}
        if self.variant == "cfour" and pv_texts:
            message["column"] = position.parse_move(pv_texts[0])
        self.emit(message)

    def _engine_move(self, search: Search, text: Optional[str]) -> None:
        elapsed = int((time.monotonic() - self._started_thinking) * 1000)
        if search.context is not self.shown or not self.at_end:
            return
        if text is None:
            self.emit(self.state())
            return
        try:
            move = self.shown.parse_move(text)
        except GameError as error:
            self.engine_side = None
            self.emit({"type": "error", "message": f"the engine played '{text}', which is not "
                                                   f"legal here ({error}); free play now"})
            self.emit(self.state())
            return
        reply = {"time_ms": elapsed, **self._last_primary}
        self._play(move, reply)

    def _engine_to_move(self) -> bool:
        position = self.shown
        return self.engine_side is not None and self.at_end and self.time_loss is None and \
            position.side_to_move == self.engine_side and position.result(claim_draw=True) is None

    def _after_change(self) -> None:
        """Send the new state; then the engine moves when it is its turn, and analysis
        follows the position shown."""
        self._update_clock()
        self.emit(self.state())
        task = self.loop.create_task(self._restart_engine_work())
        self._tasks.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(self._tasks.discard)

    async def _restart_engine_work(self) -> None:
        try:
            wants_play = self._engine_to_move()
            if not (wants_play or self.analysing):
                return
            await self.ensure_engine()
            if wants_play and self._engine_to_move() and self.play_search is None:
                self._start_play()
            elif self.analysing:
                self._start_analysis()
        except (CommandError, EngineError) as error:
            self.emit({"type": "error", "message": str(error)})
        except Exception as error:  # a bug: one line on the page
            self.emit({"type": "error",
                       "message": f"internal error: {type(error).__name__}: {error}"})

    def _engine_moves(self, upto: int) -> list[str]:
        return [move.text for move in self.moves[:upto]]

    def _start_play(self) -> None:
        self.analysis_search = None
        self._last_primary = {}
        self._started_thinking = time.monotonic()
        multipv = self._analysis_lines() if self.analysing else 1
        limits = f"movetime {self.movetime_ms}"
        if self.clock is not None:
            white, black = self.clock.left_ms(0), self.clock.left_ms(1)
            increment = self.clock.increment_ms
            limits = f"wtime {white} btime {black} winc {increment} binc {increment}"
        self.play_search = self.engine.go(self._root_fen(), self._engine_moves(self.cursor),
                                          limits, "play", multipv, context=self.shown,
                                          level=self.level)
        self._update_clock()
        self.emit(self.state())

    def _analysis_lines(self) -> int:
        return ANALYSIS_LINES.get(self.variant, getattr(self.game, "width", 3))

    def _start_analysis(self) -> None:
        if self.play_search is not None:
            return  # the engine's own move comes first; its lines are shown meanwhile
        if self.shown.result(claim_draw=True) is not None:
            self.analysis_search = None
            if self.engine is not None:
                self.engine.stop()
            return
        self.analysis_search = self.engine.go(self._root_fen(), self._engine_moves(self.cursor),
                                              "infinite", "analyse", self._analysis_lines(),
                                              context=self.shown, level=MAX_LEVEL)

    def _stop_play(self) -> None:
        self.play_search = None
        if self.engine is not None:
            self.engine.stop()

    def _stop_searches(self) -> None:
        self.play_search = self.analysis_search = None
        if self.engine is not None and self.engine.alive:
            self.engine.stop()

    def close(self) -> None:
        """End the engine process, also one still starting (a kill: it returns within
        milliseconds), and the game's proof; free their slots."""
        self.closed = True
        for timer in (self._idle_timer, self._flag_timer):
            if timer is not None:
                timer.cancel()
        if self._starting is not None:
            self._starting.close()
        self._end_engine()
        self._stop_proof()

    # --- the proof of a whole UTTT game -----------------------------------------------------
    def cmd_prove(self, message: dict) -> None:
        if not _switch(message):
            self._stop_proof()
            self.emit(self.state())
            return
        if self.variant != "uttt":
            raise CommandError("proving a whole game is for Ultimate Tic-Tac-Toe")
        limit = _whole(message, "limit", self.proof_limit_s, MIN_LIMIT_S, MAX_LIMIT_S,
                       "the time per position", "s")
        if self.game_proof is not None and limit == self.proof_limit_s:
            self.emit(self.state())  # a second click of the button: this proof runs already
            return
        if time.monotonic() - self._proof_started < MIN_PROOF_INTERVAL_S:
            raise CommandError("a proof started less than a second ago: try again in a moment")
        self._stop_proof()  # its slot back first: a new proof replaces it
        if not self.slots.take():
            raise CommandError(f"no process for this proof: the server runs at most "
                               f"{self.slots.limit} processes for engines and proofs "
                               "(mallard board --max-engines); try again later")
        try:
            proof = GameProof(self._root_fen(), self._engine_moves(len(self.moves)), limit,
                              lambda proof, line: self._from_proof_thread(proof, line, None),
                              lambda proof, error: self._from_proof_thread(proof, None,
                                                                           error or ""))
        except BaseException as error:
            self.slots.give_back()
            if isinstance(error, EngineError):
                raise CommandError(f"the proof did not start: {error}") from None
            raise
        self.game_proof, self._proof_holds_slot = proof, True
        self._proof_started = time.monotonic()
        self.proof_limit_s, self.proof_error = limit, None
        self.proofs = [None] * len(self.positions)
        if self.analysing:  # both would share the same cores
            self.analysing, self.analysis_search = False, None
            if self.play_search is None and self.engine is not None and self.engine.alive:
                with contextlib.suppress(EngineError):  # it just died: its event says so
                    self.engine.stop()
        self.emit(self.state())

    def _from_proof_thread(self, proof: GameProof, line: Optional[dict],
                           ended: Optional[str]) -> None:
        try:
            self.loop.call_soon_threadsafe(self._proof_event, proof, line, ended)
        except RuntimeError:  # the loop has closed: the server is stopping
            pass

    def _proof_event(self, proof: GameProof, line: Optional[dict], ended: Optional[str]) -> None:
        if proof is not self.game_proof or self.closed:
            return  # a proof stopped since: its late lines are for another game
        if line is not None:
            ply = line["ply"]
            if 0 <= ply < len(self.proofs):
                self.proofs[ply] = {"value": line["value"], "seconds": line["seconds"],
                                    "nodes": line["nodes"]}
        else:
            self.proof_error = ended or None
            self._stop_proof()
        self.emit(self.state())

    def _stop_proof(self) -> None:
        proof, self.game_proof = self.game_proof, None
        if proof is not None:
            proof.stop()
        if self._proof_holds_slot:
            self._proof_holds_slot = False
            self.slots.give_back()

    def _proof_view(self) -> dict:
        return {"running": self.game_proof is not None, "limit": self.proof_limit_s,
                "done": sum(proof is not None for proof in self.proofs),
                "total": len(self.positions), "error": self.proof_error}

    def _proofs_view(self) -> list[Optional[dict]]:
        """`proofs`, each with the mistake of the move that led to its position, if that
        move changed the proven value against its player."""
        shown = []
        for ply, proof in enumerate(self.proofs):
            before = self.proofs[ply - 1] if ply > 0 else None
            if proof is not None and before is not None:
                mover = "XO"[self.positions[ply - 1].side_to_move]
                mistake = _mistake(mover, before["value"], proof["value"])
                if mistake:
                    proof = {**proof, "mistake": mistake}
            shown.append(proof)
        return shown


def _mistake(mover: str, before: str, after: str) -> Optional[str]:
    """What a move did wrong, from the proven values before and after it (None: nothing)."""
    def rank(value: str) -> Optional[int]:  # the mover's outcome, best last
        if value == "draw":
            return 1
        if value.endswith(" wins"):
            return 2 if value.startswith(mover) else 0
        return None
    worse = rank(before), rank(after)
    if None in worse or worse[1] >= worse[0]:
        return None
    return "lets the win go" if worse[0] == 2 else "loses"


def _switch(message: dict) -> bool:
    """`message["on"]`: a switch is turned on or off."""
    on = message.get("on")
    if not isinstance(on, bool):
        raise CommandError('"on" is true or false')
    return on


def _whole(message: dict, key: str, default: Optional[int], low: int, high: int, what: str,
           unit: str) -> int:
    """The whole number `message[key]` (`default` when absent), within low..high."""
    value = message.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise CommandError(f"{what} must be a whole number from {low} to {high}"
                           + (f" {unit}" if unit else ""))
    return value


def _replayed(root: Position, texts: list[str]) -> tuple[Position, list[BoardMove],
                                                           list[Position]]:
    """(root, the moves, every position) of move texts played from `root`; MoveError names
    the move (by its 1-based number) that is not legal."""
    positions, moves = [root], []
    for index, text in enumerate(texts):
        position = positions[-1]
        try:
            move = position.parse_move(text)
        except GameError as error:
            raise MoveError(f"move {index + 1} '{clip(text)}': {error}") from None
        moves.append(BoardMove.of(position, move))
        positions.append(position.play(move))
    return root, moves, positions


def _imported(text: str, variant: str, game) -> tuple:
    """(entry, game, root, moves, positions) of a PGN text's first game."""
    tags, texts = read_pgn(text)
    entry = find_game(tags.get("Variant", variant))
    game = entry.new_game() if entry.name != variant else game
    try:
        root = game.parse_position(tags["FEN"]) if "FEN" in tags else game.start_position()
    except (GameError, ValueError) as error:
        raise PositionError(f"the PGN's FEN: {error}") from None
    try:
        return (entry, game, *_replayed(root, texts))
    except MoveError as error:
        raise MoveError(f"PGN {error}") from None
