"""Engines as subprocesses: start, handshake, one move at a time, and what went wrong.

An `EngineConfig` is what the user wrote after `-engine` (command, protocol, options, limits);
it is plain data that survives JSON, so the match database and other executors can carry it.
A `Player` drives one engine process over UCI, UGI or GTP. The runner never trusts an engine:
every read has a deadline, and the three ways an engine can fail are separate exceptions —
`EngineDisconnected` (it exited or closed its pipe), `EngineTimeout` (no answer in time, the
caller kills it) and `EngineProtocolError` (an answer that does not parse).

An engine's output is read a bounded line at a time (`mallard.engines.processes.read_lines`): a
line over 1 MB is a protocol error, and unread lines wait in a bounded queue. Its stderr is read
to the end and only its last non-blank line kept, so that an engine that exits is reported with
its status and what it said last (`exit status 1; stderr: ValueError: ...`).
Times are integer milliseconds; lines are timestamped with `time.monotonic_ns()` as they arrive,
so the clock charges an engine for its own thinking, not for the runner's scheduling.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from mallard.engines import compile_cache
from mallard.engines.base import ScoreKind, clip, clip_line
from mallard.engines.processes import MAX_LINE_BYTES, OVERLONG_LINE, read_lines
from mallard.tournaments.timecontrol import Clock, TimeControl, go_fields, ugi_go_fields

PROTOCOLS = ("uci", "ugi", "gtp")
# Lines an engine may have written that the runner has not read yet; at most this many lines
# of at most MAX_LINE_BYTES each, so an engine that floods its output costs bounded memory.
QUEUED_LINES = 64
STDERR_KEPT = 200  # characters of the engine's last stderr line kept for the report of its end
STDERR_WAIT_S = 0.5  # how long a report of an exit waits for the status and the last stderr
NO_MOVE = ("(none)", "0000")  # UCI's answers for "no move", which the runner never asks for


class EngineError(Exception):
    """An engine failed; `kind` is the word the termination reason uses."""

    kind = "error"


class EngineDisconnected(EngineError):
    """The engine exited or closed its pipe; `detail` says how it ended, when that is known."""

    kind = "disconnect"

    def __init__(self, message: str, detail: str = ""):
        super().__init__(f"{message} ({detail})" if detail else message)
        self.detail = detail


class EngineTimeout(EngineError):
    kind = "timeout"


class EngineProtocolError(EngineError):
    kind = "protocol"


@dataclass
class EngineConfig:
    """One `-engine` of the command line (after `-each` is merged in)."""

    name: str
    command: list[str]
    protocol: str = "uci"
    options: dict[str, str] = field(default_factory=dict)
    tc: TimeControl = field(default_factory=lambda: TimeControl.parse("inf"))
    timemargin_ms: int = 0
    restart: bool = False
    workdir: Optional[str] = None

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"engine '{self.name}': unknown protocol '{self.protocol}' "
                             f"(use {', '.join(PROTOCOLS)})")
        if not self.command:
            raise ValueError(f"engine '{self.name}': no command (cmd=...)")

    def to_dict(self) -> dict:
        return {"name": self.name, "command": list(self.command), "protocol": self.protocol,
                "options": dict(self.options), "tc": self.tc.to_dict(),
                "timemargin_ms": self.timemargin_ms, "restart": self.restart,
                "workdir": self.workdir}

    @classmethod
    def from_dict(cls, data: dict) -> "EngineConfig":
        data = dict(data)
        data["tc"] = TimeControl.from_dict(data["tc"])
        return cls(**data)

    @property
    def command_text(self) -> str:
        return shlex.join(self.command)


@dataclass
class Reply:
    """An engine's answer to one `go`: the move text and what it said about it."""

    move: str
    elapsed_ms: int
    score: Optional[tuple[ScoreKind, int]] = None  # (CP, centipawns) or (MATE, moves), mover's view
    depth: Optional[int] = None


class EngineProcess:
    """The subprocess and a reader thread that queues (arrival_ns, line); None marks the end."""

    def __init__(self, config: EngineConfig):
        self.config = config
        try:
            self.process = subprocess.Popen(
                config.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=config.workdir, start_new_session=True,
                env=compile_cache.engine_environment())
        except OSError as error:
            raise EngineDisconnected(f"cannot start '{config.command_text}': {error}") from None
        self.lines: queue.Queue = queue.Queue(QUEUED_LINES)
        self.ended = False
        self._killed = False
        self._kill_lock = threading.Lock()
        self.last_stderr = ""  # the last non-blank line the engine wrote on stderr, clipped
        threading.Thread(target=self._read, daemon=True,
                         name=f"engine-{config.name}-reader").start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True,
                                               name=f"engine-{config.name}-stderr")
        self._stderr_reader.start()

    def _read(self) -> None:
        try:
            for text in read_lines(self.process.stdout):
                if not self._queue(text):
                    return
        except (OSError, ValueError):
            pass
        self._queue(None)

    def _read_stderr(self) -> None:
        """Read stderr to its end (an engine never blocks on it), keeping the last line."""
        try:
            for text in read_lines(self.process.stderr):
                if text is OVERLONG_LINE or not text.strip():
                    continue
                self.last_stderr = clip_line(text.strip(), STDERR_KEPT)
        except (OSError, ValueError):
            pass

    def exit_detail(self, wait_s: float = 0.0) -> str:
        """How the engine ended (`exit status 3; stderr: ...`), or "" while it runs. A caller
        that may block (a reader thread) passes `wait_s`: an engine whose stdout closed is
        exiting, and its status and last stderr line come a moment later."""
        try:
            code = self.process.wait(wait_s)
        except subprocess.TimeoutExpired:
            return ""
        self._stderr_reader.join(wait_s)
        if code < 0:
            try:
                status = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                status = f"killed by signal {-code}"
        else:
            status = f"exit status {code}"
        return f"{status}; stderr: {self.last_stderr}" if self.last_stderr else status

    def _queue(self, text) -> bool:
        """Queue a line (None: the end) with its arrival time, waiting while the queue is full
        (the engine's pipe fills and holds it back); False once the engine is given up."""
        arrived = time.monotonic_ns()
        while not self.ended:
            try:
                self.lines.put((arrived, text), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def send(self, line: str) -> None:
        if self.ended:
            raise EngineDisconnected("the engine has exited")
        try:
            self.process.stdin.write((line + "\n").encode())
            self.process.stdin.flush()
        except (OSError, ValueError):
            self.ended = True
            # no wait: `send` may run on a server's event loop
            raise EngineDisconnected("the engine closed its input", self.exit_detail()) from None

    def next_line(self, deadline_ns: Optional[int], skip_blank: bool = True) -> tuple[int, str]:
        """The next line and its arrival time; EngineTimeout at the deadline."""
        if self.ended:
            raise EngineDisconnected("the engine has exited")
        while True:
            if deadline_ns is None:
                timeout = None
            else:
                timeout = (deadline_ns - time.monotonic_ns()) / 1e9
                if timeout <= 0:
                    timeout = 0
            try:
                arrived, text = self.lines.get(timeout=timeout) if timeout != 0 \
                    else self.lines.get_nowait()
            except queue.Empty:
                raise EngineTimeout("no answer in time") from None
            if text is None:
                self.ended = True
                raise EngineDisconnected("the engine exited", self.exit_detail(STDERR_WAIT_S))
            if text is OVERLONG_LINE:
                raise EngineProtocolError(f"a line longer than {MAX_LINE_BYTES // (1 << 20)} MB")
            if text.strip() or not skip_blank:
                return arrived, text

    def until(self, accept: Callable[[str], bool], deadline_ns: Optional[int],
              on_line: Optional[Callable[[str], None]] = None) -> tuple[int, str]:
        while True:
            arrived, text = self.next_line(deadline_ns)
            if accept(text):
                return arrived, text
            if on_line is not None:
                on_line(text)

    @property
    def alive(self) -> bool:
        return not self.ended and self.process.poll() is None

    def kill(self) -> None:
        """Kill the engine and everything it started (it runs in its own process group), once:
        later calls do nothing, since the group's number may by then be another's. A thread
        waiting for a line is told that the engine has gone."""
        # the main thread (Ctrl-C) and a game's thread may both call: the second returns
        # once the signal is sent, so an exiting main thread never leaves the engine alive
        with self._kill_lock:
            if self._killed:
                return
            self._killed = True
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # also helpers the leader left
            except (OSError, AttributeError):
                if self.process.poll() is None:
                    self.process.kill()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.ended = True
        while True:  # the reader queues no end once `ended` is set: queue it here
            try:
                self.lines.put_nowait((time.monotonic_ns(), None))
                break
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self.lines.get_nowait()
        # stdout stays open: closing it would wait for the reader thread's blocked read, which
        # only ends when every process holding the pipe has gone. The reader ends at EOF.
        try:
            self.process.stdin.close()
        except (OSError, ValueError):
            pass

    def close(self, quit_command: str, grace_s: float = 2.0) -> None:
        """Ask politely, then kill (also when Ctrl-C cuts the wait short)."""
        try:
            if self.process.poll() is None:
                try:
                    self.send(quit_command)
                    self.process.wait(grace_s)
                except (EngineError, subprocess.TimeoutExpired):
                    pass
        finally:
            self.kill()


def deadline_after(ms: Optional[float]) -> Optional[int]:
    return None if ms is None else time.monotonic_ns() + int(ms * 1_000_000)


def parse_info_score(tokens: list[str]
                     ) -> tuple[Optional[tuple[ScoreKind, int]], Optional[int], bool]:
    """(score, depth, primary) from the tokens of a UCI/UGI `info` line; `primary` is False for
    the second and later MultiPV lines, whose scores are not the engine's opinion of its move."""
    score = depth = None
    primary = True
    index = 1
    while index < len(tokens):
        token = tokens[index]
        try:
            if token == "depth":
                depth = int(tokens[index + 1])
                index += 1
            elif token == "multipv":
                primary = int(tokens[index + 1]) == 1
                index += 1
            elif token == "score" and index + 2 < len(tokens) + 1:
                kind, value = ScoreKind.read(tokens[index + 1]), int(tokens[index + 2])
                if kind is not None:
                    score = (kind, value)
                index += 2
            elif token in ("pv", "string"):
                break
        except (IndexError, ValueError):
            pass
        index += 1
    return score, depth, primary


class Player:
    """One engine in one protocol; `start()` runs the handshake and sets the options."""

    quit_command = "quit"

    def __init__(self, config: EngineConfig, variant: str, startup_timeout_ms: int = 20_000,
                 ready_timeout_ms: int = 120_000):
        self.config = config
        self.variant = variant
        self.startup_timeout_ms = startup_timeout_ms
        self.ready_timeout_ms = ready_timeout_ms
        self.process: Optional[EngineProcess] = None
        self.engine_name: Optional[str] = None

    @staticmethod
    def create(config: EngineConfig, variant: str, **timeouts) -> "Player":
        kind = {"uci": UciPlayer, "ugi": UgiPlayer, "gtp": GtpPlayer}[config.protocol]
        return kind(config, variant, **timeouts)

    def start(self) -> None:
        self.process = EngineProcess(self.config)
        try:
            self.handshake()
        except BaseException:  # a failed start, and Ctrl-C or SIGTERM during it
            self.process.kill()
            raise

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.alive

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()

    def close(self) -> None:
        if self.process is not None:
            self.process.close(self.quit_command)

    # --- protocol specifics -------------------------------------------------------------------
    def handshake(self) -> None:
        raise NotImplementedError

    def new_game(self, start_fen: Optional[str], width_height: Optional[tuple[int, int]]) -> None:
        raise NotImplementedError

    def go(self, start_fen: Optional[str], moves: list[str], side: int, clocks: list[Clock],
           wait_ms: Optional[int]) -> Reply:
        """Ask for a move; `wait_ms` bounds the wait from the moment the clock starts. An
        EngineTimeout with the clock running is a time loss; one before it is a stall."""
        raise NotImplementedError


def undeclared_options(config: EngineConfig, variant: str, timeout_ms: int) -> list[str]:
    """The `option.NAME`s of `config` its UCI/UGI engine does not declare, found by starting it
    once; empty when it has none, speaks GTP (no options) or does not start (its game says so)."""
    if not config.options or config.protocol == "gtp":
        return []
    player = Player.create(config, variant, startup_timeout_ms=timeout_ms)
    try:
        player.start()  # kills the engine itself when interrupted
    except EngineError:
        return []
    try:
        return [name for name in config.options if name.lower() not in player.declared]
    finally:
        player.close()  # kills it, even when interrupted


class UciPlayer(Player):
    """UCI in the Fairy-Stockfish dialect: `UCI_Variant`, pre-incremented clocks, `movestogo`."""

    hello, hello_ok, new_game_command = "uci", "uciok", "ucinewgame"

    def handshake(self) -> None:
        process = self.process
        process.send(self.hello)
        deadline = deadline_after(self.startup_timeout_ms)
        self.declared: set[str] = set()

        def note(line: str) -> None:
            tokens = line.split()
            if tokens[:2] == ["id", "name"]:
                self.engine_name = " ".join(tokens[2:])
            elif tokens[:2] == ["option", "name"] and "type" in tokens:
                self.declared.add(" ".join(tokens[2:tokens.index("type")]).lower())

        try:
            process.until(lambda line: line.strip() == self.hello_ok, deadline, note)
        except EngineTimeout:
            raise EngineTimeout(f"no '{self.hello_ok}' within "
                                f"{self.startup_timeout_ms / 1000:g} s") from None
        if self.variant != "chess" and (self.hello == "uci" or "uci_variant" in self.declared):
            process.send(f"setoption name UCI_Variant value {self.variant}")
        for name, value in self.config.options.items():
            process.send(f"setoption name {name} value {value}"
                         if value != "" else f"setoption name {name}")
        if "ponder" in self.declared:  # the runner never sends `go ponder`
            process.send("setoption name Ponder value false")

    def ready(self, timeout_ms: int) -> None:
        self.process.send("isready")
        try:
            self.process.until(lambda line: line.strip() == "readyok", deadline_after(timeout_ms))
        except EngineTimeout:
            raise EngineTimeout(f"no 'readyok' within {timeout_ms / 1000:g} s") from None

    def new_game(self, start_fen, width_height) -> None:
        self.process.send(self.new_game_command)
        self.ready(self.ready_timeout_ms)

    def position_command(self, start_fen: Optional[str], moves: list[str]) -> str:
        text = f"position fen {start_fen}" if start_fen else "position startpos"
        return text + (" moves " + " ".join(moves) if moves else "")

    def go_command(self, side: int, clocks: list[Clock]) -> str:
        fields = go_fields(clocks[0], clocks[1], side == 0)
        return "go " + " ".join(f"{key} {value}" for key, value in fields.items()) \
            if fields else "go infinite"

    def go(self, start_fen, moves, side, clocks, wait_ms) -> Reply:
        process = self.process
        process.send(self.position_command(start_fen, moves))
        command = self.go_command(side, clocks)
        best = {"score": None, "depth": None}

        def note(line: str) -> None:
            tokens = line.split()
            if tokens and tokens[0] == "info":
                score, depth, primary = parse_info_score(tokens)
                if primary:
                    if score is not None:
                        best["score"] = score
                    if depth is not None:
                        best["depth"] = depth

        clock = clocks[side]
        process.send(command)
        clock.start()
        try:
            arrived, line = process.until(lambda text: text.split()[0] == "bestmove",
                                          deadline_after(wait_ms), note)
        except EngineTimeout:
            raise EngineTimeout("no 'bestmove' before its time ran out") from None
        elapsed = clock.stop(arrived)
        tokens = line.split()
        if len(tokens) < 2 or tokens[1] in NO_MOVE:
            raise EngineProtocolError(f"'{clip(line.strip())}' names no move")
        return Reply(tokens[1], elapsed, best["score"], best["depth"])


class UgiPlayer(UciPlayer):
    """UGI (cutegames): `ugi`/`ugiok`, `uginewgame`, p1/p2 clocks that are not pre-incremented."""

    hello, hello_ok, new_game_command = "ugi", "ugiok", "uginewgame"

    def go_command(self, side: int, clocks: list[Clock]) -> str:
        fields = ugi_go_fields(clocks[0], clocks[1], side == 0)
        return "go " + " ".join(f"{key} {value}" for key, value in fields.items()) \
            if fields else "go infinite"


class GtpPlayer(Player):
    """GTP v2 for Connect Four: black is the first player, moves are column letters. The engine
    is told the opponent's moves with `play` and asked with `genmove`."""

    COLOURS = ("b", "w")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.known: list[str] = []
        self.serial = 0

    def command(self, text: str, deadline_ns: Optional[int]) -> tuple[int, str]:
        """Send one command; (arrival of its reply's first line, the reply text)."""
        self.serial += 1
        self.process.send(f"{self.serial} {text}")
        while True:
            arrived, head = self.process.next_line(deadline_ns)
            head = head.strip()
            if head[:1] not in ("=", "?"):
                continue  # chatter outside a reply
            body = []
            while True:  # a reply ends with an empty line
                _, more = self.process.next_line(deadline_ns, skip_blank=False)
                if not more.strip():
                    break
                body.append(more.strip())
            status, _, rest = head.partition(" ")
            ident = status[1:]
            if ident and ident != str(self.serial):
                continue  # the answer to an earlier command that timed out
            reply = "\n".join([rest] + body).strip()
            if status.startswith("?"):
                raise EngineProtocolError(f"'{text}' failed: {reply}")
            return arrived, reply

    def handshake(self) -> None:
        deadline = deadline_after(self.startup_timeout_ms)
        try:
            _, version = self.command("protocol_version", deadline)
            _, name = self.command("name", deadline)
        except EngineTimeout:
            raise EngineTimeout(f"no answer to 'protocol_version' within "
                                f"{self.startup_timeout_ms / 1000:g} s") from None
        if version.strip() != "2":
            raise EngineProtocolError(f"GTP version '{version}' (expected 2)")
        self.engine_name = name
        # GTP cannot name a game; engines that know our private command are told it.
        try:
            _, known = self.command("known_command mallard-variant", deadline)
        except EngineProtocolError:  # known_command is required, but be lenient
            known = "false"
        if known.strip() == "true":
            self.command(f"mallard-variant {self.variant}", deadline)
        for name, value in self.config.options.items():
            self.command(f"{name} {value}".strip(), deadline)

    def new_game(self, start_fen, width_height) -> None:
        if start_fen:
            raise EngineProtocolError("GTP cannot set up a position: use move openings")
        deadline = deadline_after(self.ready_timeout_ms)
        if width_height is not None:
            self.command(f"boardsize {width_height[0]} {width_height[1]}", deadline)
        self.command("clear_board", deadline)
        self.known = []
        tc = self.config.tc
        if tc.movetime_ms is not None:
            # a fixed time per move is Canadian byo-yomi of one stone with no main time
            self.command(f"time_settings 0 {tc.movetime_ms / 1000:g} 1", deadline)
        elif not tc.infinite and tc.time_ms:
            # GTP has no increment: tell the main time, then the exact clock before each move.
            # `time_settings 0 0 0` would mean no limit: under a second is sent as one
            self.command(f"time_settings {max(1, -(-tc.time_ms // 1000))} 0 0", deadline)

    def go(self, start_fen, moves, side, clocks, wait_ms) -> Reply:
        deadline = deadline_after(self.ready_timeout_ms)
        if self.known != moves[:len(self.known)]:
            self.command("clear_board", deadline)
            self.known = []
        for index in range(len(self.known), len(moves)):
            self.command(f"play {self.COLOURS[index % 2]} {moves[index]}", deadline)
            self.known.append(moves[index])
        clock = clocks[side]
        if clock.tc.movetime_ms is not None:
            self.command(f"time_left {self.COLOURS[side]} {clock.tc.movetime_ms / 1000:g} 1",
                         deadline)
        elif clock.remaining_ms is not None and not clock.tc.infinite:
            self.command(f"time_left {self.COLOURS[side]} {max(0, clock.remaining_ms) // 1000} 0",
                         deadline)
        clock.start()
        try:
            arrived, vertex = self.command(f"genmove {self.COLOURS[side]}",
                                           deadline_after(wait_ms))
        except EngineTimeout:
            raise EngineTimeout("no answer to 'genmove' before its time ran out") from None
        elapsed = clock.stop(arrived)
        vertex = vertex.strip()
        if not vertex or " " in vertex:
            raise EngineProtocolError(f"genmove answered '{vertex}'")
        self.known.append(vertex.lower())
        return Reply(vertex.lower(), elapsed)
