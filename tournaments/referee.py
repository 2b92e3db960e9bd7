"""The referee: plays one game between two engine processes and decides how it ended.

The rules are the `engines` modules' (legality, the end of the game, claimable draws); the
engines only propose moves. `play_game(job, pool)` never raises for anything an engine does:
a crash, a hang, an illegal or unparsable move, a failed start all end the game with a result
and a `Reason` (whose kind gives the record its Termination tag), and the pool is told which
engine must not be reused. Moves an engine sends must
be in its protocol's own notation (`e2e4,e4d5` or `P@d1` over UCI/UGI, a column letter over
GTP); anything else is an illegal move.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
from typing import Optional

from mallard.engines import find_game, get_game
from mallard.engines.base import Game, GameError, Position, ScoreKind
from mallard.tournaments.players import (
    EngineConfig,
    EngineDisconnected,
    EngineError,
    EngineTimeout,
    Player,
    Reply,
)
from mallard.tournaments.records import EndKind, GameJob, GameRecord, MoveRecord, Reason
from mallard.tournaments.timecontrol import Clock

# How long past its clock (and margin) an engine may stay silent before it is killed: the time
# loss itself is decided by the clock, this only bounds how long the runner waits for a reply.
HANG_GRACE_MS = 1_000
# Without any clock (depth/nodes) a silent engine is declared stalled after this long
# (`EnginePool(stall_timeout_ms=...)`, `mallard match -stalltimeout`).
DEFAULT_STALL_TIMEOUT_MS = 600_000
MATE_CP = 100_000
MAX_MOVES_REACHED = "maximum number of moves"  # the detail of a -maxmoves draw
STOPPED = Reason(EndKind.STOPPED)


class StartGate:
    """Shared by the games a runner plays at once: no game makes its first move while an engine
    of any of them is still starting. A starting engine loads or compiles its code on a core, and
    a clock running beside it charged the other game's engines for it (first moves 2-10x over)."""

    def __init__(self):
        self._changed = threading.Condition()
        self._starting = 0

    @contextlib.contextmanager
    def starting(self):
        with self._changed:
            self._starting += 1
        try:
            yield
        finally:
            with self._changed:
                self._starting -= 1
                self._changed.notify_all()

    def wait_for_starts(self, timeout_s: float, stop_requested) -> None:
        """Until no engine is starting, the runner stops, or `timeout_s` has passed."""
        end = time.monotonic() + timeout_s
        with self._changed:
            while self._starting and not stop_requested() and time.monotonic() < end:
                self._changed.wait(min(0.1, max(0.0, end - time.monotonic())))


class EnginePool:
    """The engine processes one worker reuses from game to game, and its rules objects."""

    def __init__(self, startup_timeout_ms: int = 20_000, ready_timeout_ms: int = 120_000,
                 stall_timeout_ms: int = DEFAULT_STALL_TIMEOUT_MS,
                 gate: Optional[StartGate] = None):
        self.gate = gate or StartGate()
        self.startup_timeout_ms = startup_timeout_ms
        self.ready_timeout_ms = ready_timeout_ms
        self.stall_timeout_ms = stall_timeout_ms
        self.players: dict[tuple, Player] = {}
        self.active: list[Player] = []  # the players of the game being played
        self.games: dict[tuple, Game] = {}

    def game(self, variant: str, board: Optional[tuple[int, int]]) -> Game:
        key = (variant, board)
        if key not in self.games:
            kwargs = {"width": board[0], "height": board[1]} if board else {}
            self.games[key] = get_game(variant, **kwargs)
        return self.games[key]

    @staticmethod
    def _key(config: EngineConfig, variant: str) -> tuple:
        return (variant, repr(sorted(config.to_dict().items(), key=lambda item: item[0])))

    def acquire(self, config: EngineConfig, variant: str) -> Player:
        key = self._key(config, variant)
        player = self.players.pop(key, None)
        if player is not None and player.alive and not config.restart:
            self.active.append(player)
            return player
        if player is not None:
            player.close()
        player = Player.create(config, variant, startup_timeout_ms=self.startup_timeout_ms,
                               ready_timeout_ms=self.ready_timeout_ms)
        self.active.append(player)
        try:
            player.start()
        except BaseException:
            self.active.remove(player)
            raise
        return player

    def kill_active(self) -> None:
        """End the running game at once (from another thread): its engines are killed."""
        for player in list(self.active):
            player.kill()

    def release(self, player: Player, variant: str, healthy: bool) -> None:
        if player in self.active:
            self.active.remove(player)
        if not healthy or not player.alive or player.config.restart:
            player.close()
            return
        key = self._key(player.config, variant)
        old = self.players.pop(key, None)
        if old is not None:
            old.close()
        self.players[key] = player

    def close(self) -> None:
        for player in self.players.values():
            player.close()
        self.players.clear()


def load_rules(variant: str, board: Optional[tuple[int, int]]) -> None:
    """Load the compiled code the referee calls (moves, notations, the end of a game) before
    the first game, so that a match can take it out of the collector's sight at once."""
    try:
        game = EnginePool().game(variant, board)
        position = game.start_position()
        move = position.legal_moves()[0]
        position.pgn_move(move), position.gtp_move(move), position.fen()
        position.play(position.parse_move(position.format_move(move))).result(claim_draw=True)
    except (GameError, ValueError, KeyError, IndexError):
        pass  # a game that cannot start is the referee's to report, game by game


def _cp(score: Optional[tuple[ScoreKind, int]]) -> Optional[int]:
    if score is None:
        return None
    kind, value = score
    if kind is ScoreKind.MATE:
        return MATE_CP if value > 0 else -MATE_CP
    return value


class _Adjudicator:
    """cutechess's draw and resign rules over the scores the engines report with their moves
    (a move without a score breaks every streak)."""

    def __init__(self, rules):
        self.rules = rules
        self.draw_streak = 0
        self.losing_streak = [0, 0]
        self.winning_streak = [0, 0]

    def after_move(self, side: int, score: Optional[tuple[ScoreKind, int]], position: Position
                   ) -> Optional[Reason]:
        """The adjudication after `side`'s move (its side: the winner, None a draw), if any."""
        rules = self.rules
        cp = _cp(score)
        if rules.draw_movenumber and rules.draw_movecount and rules.draw_score is not None:
            quiet = cp is not None and abs(cp) <= rules.draw_score
            # As cutechess: a capture or pawn move (the fifty-move counter restarts) breaks the
            # streak, because the position has changed for good.
            irreversible = getattr(position, "halfmove_clock", None) == 0
            self.draw_streak = self.draw_streak + 1 if quiet and not irreversible else 0
            if (position.ply // 2 >= rules.draw_movenumber
                    and self.draw_streak >= 2 * rules.draw_movecount):
                return Reason(EndKind.ADJUDICATION)
        if rules.resign_movecount and rules.resign_score is not None:
            losing = cp is not None and cp <= -rules.resign_score
            winning = cp is not None and cp >= rules.resign_score
            self.losing_streak[side] = self.losing_streak[side] + 1 if losing else 0
            self.winning_streak[side] = self.winning_streak[side] + 1 if winning else 0
            if self.losing_streak[side] >= rules.resign_movecount and (
                    not rules.resign_twosided
                    or self.winning_streak[1 - side] >= rules.resign_movecount):
                return Reason(EndKind.ADJUDICATION, 1 - side)
        return None


def _legal_reply(position: Position, reply: Reply, protocol: str):
    """The move an engine's reply names, or a MoveError-style message."""
    text = reply.move.strip()
    try:
        move = position.parse_move(text)
    except GameError as error:
        return None, str(error)
    written = position.gtp_move(move) if protocol == "gtp" else position.format_move(move)
    if written.lower() != text.lower():
        return None, f"'{text}' is not in {protocol.upper()} notation (expected '{written}')"
    return move, None


def play_game(job: GameJob, pool: EnginePool, stop_requested=lambda: False) -> GameRecord:
    started = time.monotonic()
    started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    game = pool.game(job.variant, job.board)
    configs = (job.white, job.black)
    names = [job.white.name, job.black.name]
    moves: list[MoveRecord] = []
    vertices: list[str] = []  # the same moves as GTP writes them

    def finish(result: str, reason: Reason, failed: Optional[str] = None,
               failed_side: Optional[int] = None, start_fen: str = "",
               flag: tuple[Optional[int], Optional[int]] = (None, None)) -> GameRecord:
        ids = (job.white_id, job.black_id)
        return GameRecord(job, result, reason, reason.termination, moves, start_fen, started_at,
                          int((time.monotonic() - started) * 1000), names[0], names[1], failed,
                          ids[failed_side] if failed_side is not None else None, *flag)

    def loss(reason: Reason, failed: Optional[str] = None, start_fen: str = "",
             flag: tuple[Optional[int], Optional[int]] = (None, None)) -> GameRecord:
        """The side the reason is about loses."""
        return finish("0-1" if reason.side == 0 else "1-0", reason, failed, reason.side,
                      start_fen, flag)

    # The opening is the referee's business: a bad one is the match's fault, not an engine's.
    try:
        position = game.parse_position(job.opening.fen) if job.opening.fen \
            else game.start_position()
    except GameError as error:
        return finish("*", Reason(EndKind.BAD_OPENING, detail=str(error)))
    start_fen = position.fen()
    for text in job.opening.moves:
        try:
            move = position.parse_move(text)
        except GameError as error:
            return finish("*", Reason(EndKind.BAD_OPENING_MOVE, detail=str(error)),
                          start_fen=start_fen)
        moves.append(MoveRecord(position.format_move(move), position.pgn_move(move)))
        vertices.append(position.gtp_move(move).lower())
        position = position.play(move)
    if position.result(claim_draw=True) is not None:
        return finish("*", Reason(EndKind.OPENING_ENDS_GAME), start_fen=start_fen)

    players: list[Optional[Player]] = [None, None]
    healthy = [True, True]
    try:
        with pool.gate.starting():
            for side in (0, 1):
                try:
                    players[side] = pool.acquire(configs[side], job.variant)
                    if players[side].engine_name and names[side] == "":
                        names[side] = players[side].engine_name
                except EngineError as error:
                    if stop_requested():  # killed by the runner to stop the match
                        return finish("*", STOPPED, start_fen=start_fen)
                    return loss(Reason(EndKind.START_FAILURE, side, str(error)), "startup",
                                start_fen)
            for side in (0, 1):
                try:
                    players[side].new_game(job.opening.fen, job.board)
                except EngineError as error:
                    healthy[side] = False
                    if stop_requested():
                        return finish("*", STOPPED, start_fen=start_fen)
                    return _engine_failure(loss, side, error, start_fen)
        pool.gate.wait_for_starts(pool.ready_timeout_ms / 1000, stop_requested)
        return _play(job, game, position, start_fen, players, healthy, moves, vertices, loss,
                     finish, stop_requested, pool.stall_timeout_ms)
    except BaseException:
        healthy[:] = [False, False]  # a runner bug or an interrupt: the engines' state is unknown
        raise
    finally:
        for side in (0, 1):
            if players[side] is not None:
                if not healthy[side]:
                    players[side].kill()
                pool.release(players[side], job.variant, healthy[side])


def _time_loss(side: int, took_ms: int, allowed_ms: Optional[int], answered: bool) -> Reason:
    """cutechess's reason with the move's time: `White loses on time (took 0.312 s of 0.250 s)`,
    or `(no move after 1.250 s of 0.250 s)` when the runner stopped waiting."""
    took = f"took {took_ms / 1000:.3f} s" if answered else f"no move after {took_ms / 1000:.3f} s"
    allowed = f" of {allowed_ms / 1000:.3f} s" if allowed_ms is not None else ""
    return Reason(EndKind.TIME_LOSS, side, took + allowed)


def _engine_failure(loss, side: int, error: EngineError, start_fen: str) -> GameRecord:
    if isinstance(error, EngineDisconnected):
        return loss(Reason(EndKind.DISCONNECT, side, error.detail), "disconnect", start_fen)
    if isinstance(error, EngineTimeout):
        return loss(Reason(EndKind.STALL, side, str(error)), "timeout", start_fen)
    return loss(Reason(EndKind.PROTOCOL_ERROR, side, str(error)), None, start_fen)


def _play(job: GameJob, game: Game, position: Position, start_fen: str, players, healthy,
          moves: list[MoveRecord], vertices: list[str], loss, finish, stop_requested,
          stall_timeout_ms: int) -> GameRecord:
    configs = (job.white, job.black)
    clocks = [Clock(configs[side].tc, configs[side].timemargin_ms,
                    preincrement=configs[side].protocol != "ugi") for side in (0, 1)]
    rules = job.adjudication
    adjudicator = _Adjudicator(rules)
    prove = find_game(game.variant).prove if rules.solved else None
    texts = [m.text for m in moves]
    while True:
        over = position.result(claim_draw=True)
        if over is not None:
            return finish(over.pgn, Reason.of_result(over), start_fen=start_fen)
        if rules.maxmoves and position.ply >= 2 * rules.maxmoves:
            return finish("1/2-1/2", Reason(EndKind.ADJUDICATION, None, MAX_MOVES_REACHED),
                          start_fen=start_fen)
        if prove is not None:
            proven = prove(position, rules.solve_nodes)
            if proven is not None:
                return finish(proven.pgn, Reason(EndKind.ADJUDICATION, proven.winner,
                                                 proven.reason), start_fen=start_fen)
        if stop_requested():
            return finish("*", STOPPED, start_fen=start_fen)
        side = position.side_to_move
        player, clock = players[side], clocks[side]
        protocol = configs[side].protocol
        wait_ms = clock.deadline_ms(HANG_GRACE_MS)
        allowed_ms = clock.allowed_ms
        try:
            reply = player.go(job.opening.fen, vertices if protocol == "gtp" else texts, side,
                              clocks, wait_ms if wait_ms is not None else stall_timeout_ms)
        except EngineError as error:
            healthy[side] = False
            if stop_requested():  # the runner killed it to stop the match
                return finish("*", STOPPED, start_fen=start_fen)
            if not isinstance(error, EngineTimeout) or not clock.running:
                return _engine_failure(loss, side, error, start_fen)
            waited_ms = clock.stop()
            if wait_ms is None:  # no clock to lose on: the engine stalled
                return _engine_failure(loss, side, error, start_fen)
            return loss(_time_loss(side, waited_ms, allowed_ms, answered=False), "timeout",
                        start_fen, (waited_ms, allowed_ms))
        if clock.flagged:
            return loss(_time_loss(side, reply.elapsed_ms, allowed_ms, answered=True), None,
                        start_fen, (reply.elapsed_ms, allowed_ms))
        move, problem = _legal_reply(position, reply, protocol)
        if move is None:
            return loss(Reason(EndKind.ILLEGAL_MOVE, side, problem), None, start_fen)
        moves.append(MoveRecord(position.format_move(move), position.pgn_move(move),
                                reply.elapsed_ms, reply.score, reply.depth))
        texts.append(position.format_move(move))
        vertices.append(position.gtp_move(move).lower())
        position = position.play(move)
        verdict = adjudicator.after_move(side, reply.score, position)
        if verdict is not None and position.result(claim_draw=True) is None:
            winner = verdict.side
            result = "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")
            return finish(result, verdict, start_fen=start_fen)

