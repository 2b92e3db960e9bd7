"""The engine process: stdin on a reader thread, one front-end, one session, clean shutdown.

`serve(stdin, stdout, stderr, protocol)` runs until `quit` or the end of stdin and returns the
exit status (0). With `protocol=None` the first non-empty line decides: `uci` (or another UCI
command) speaks UCI, `ugi` speaks UGI, anything else GTP.

Threads: the reader puts every line on a queue (None at the end of input) and, the moment it
reads `quit` or the end of input, abandons the session: the running search stops and any later
one stops at once, so a GTP `genmove` or an infinite search never holds the exit (commands still
run in order, so a piped script gets its answers). The main thread hands lines to the
front-end; searches print `info`/`bestmove` from their worker thread. All output goes through
one `Output`, which serialises lines, flushes each, and never raises (a closed stdout ends the
process instead of printing a traceback).
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import traceback
from typing import Optional, TextIO

UCI_FIRST_COMMANDS = {"uci", "isready", "position", "go", "setoption", "ucinewgame", "debug"}


class Output:
    """Line output shared by the reading thread and the search thread."""

    def __init__(self, stream: TextIO, log_stream: Optional[TextIO] = None):
        self.stream = stream
        self.log_stream = log_stream
        self.debug = False
        self.closed = threading.Event()
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        self.write(text + "\n")

    def write(self, text: str) -> None:
        with self._lock:
            if self.closed.is_set():
                return
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # the client closed the pipe
                self.closed.set()

    def log(self, text: str) -> None:
        """A log line on stderr, only when the client asked for `debug on`."""
        if not self.debug or self.log_stream is None:
            return
        with self._lock:
            try:
                self.log_stream.write(text.rstrip("\n") + "\n")
                self.log_stream.flush()
            except (OSError, ValueError):
                pass


class Input:
    """Lines of stdin read on their own thread."""

    def __init__(self, stream: TextIO):
        self.lines: queue.Queue = queue.Queue()  # (arrival as time.perf_counter(), line)
        self.arrived: Optional[float] = None  # when the line `next()` last returned was read
        self.finished = threading.Event()  # `quit` read or end of input
        self._on_finish: list = []
        self._callbacks_lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), name="mallard-stdin",
                                        daemon=True)
        self._thread.start()

    def _read(self, stream: TextIO) -> None:
        # bytes when possible: a client's invalid UTF-8 becomes U+FFFD instead of ending input
        source = getattr(stream, "buffer", stream)
        try:
            for raw in source:
                if isinstance(raw, bytes):
                    raw = raw.decode("utf-8", "replace")
                line = raw.replace("\r", "").rstrip("\n")
                words = line.split()
                if words[:1] == ["quit"] or (len(words) == 2 and words[0].isdigit()
                                             and words[1] == "quit"):
                    self._finish()
                self.lines.put((time.perf_counter(), line))
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        self._finish()
        self.lines.put((time.perf_counter(), None))

    def on_finish(self, callback) -> None:
        """Call `callback()` at `quit` or the end of input (at once if that has happened): the
        reader sees them before the main thread, which may be busy with a search."""
        with self._callbacks_lock:
            if not self.finished.is_set():
                self._on_finish.append(callback)
                return
        callback()

    def _finish(self) -> None:
        with self._callbacks_lock:
            if self.finished.is_set():
                return
            self.finished.set()
            callbacks, self._on_finish = self._on_finish, []
        for callback in callbacks:
            callback()

    def next(self) -> Optional[str]:
        """The next line (None at the end); `arrived` says when it was read, since a move's
        time runs from the arrival of its `go`, not from when the main thread got to it."""
        self.arrived, line = self.lines.get()
        return line


def detect(line: str) -> Optional[str]:
    """The protocol a first line speaks, or None for a blank line."""
    words = line.split("#", 1)[0].split()
    if not words:
        return None
    if words[0] == "ugi":
        return "ugi"
    if words[0] in UCI_FIRST_COMMANDS:
        return "uci"
    return "gtp"


def make_front_end(protocol: str, output: Output, input_: Input, variant: Optional[str] = None):
    from protocol.session import Session

    if protocol == "gtp":
        from protocol.gtp import DEFAULT_VARIANT, GtpFrontEnd

        return GtpFrontEnd(output, input_, Session(variant or DEFAULT_VARIANT))
    from protocol.uci import UciFrontEnd

    return UciFrontEnd(output, input_, dialect=protocol,
                       session=Session(variant) if variant else None)


def serve(stdin: TextIO = None, stdout: TextIO = None, stderr: TextIO = None,
          protocol: Optional[str] = None, variant: Optional[str] = None) -> int:
    stdin = stdin or sys.stdin
    output = Output(stdout or sys.stdout, stderr or sys.stderr)
    input_ = Input(stdin)
    front = None
    try:
        while True:
            line = input_.next()
            if line is None or output.closed.is_set():
                break
            if front is None:
                chosen = protocol or detect(line)
                if chosen is None:
                    continue
                front = make_front_end(chosen, output, input_, variant)
                input_.on_finish(front.session.abandon)
            try:
                if not front.handle(line):
                    break
            except Exception:  # a bug must not kill the engine: report, keep the state, go on
                output.log(traceback.format_exc())
                front.report_internal_error(line)
    except KeyboardInterrupt:
        pass
    finally:
        if front is not None:
            front.close()
    return 0
