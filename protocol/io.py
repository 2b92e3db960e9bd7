"""The engine process's stdin and stdout: `Input` reads lines on its own thread, `Output` writes
them one at a time. The error lines the front-ends print are clipped to
`mallard.engines.base.MESSAGE_LIMIT` by `mallard.engines.base.clip`, the one rule for echoing
input.

Threads: `Input` reads stdin on a daemon thread into a deque (None after the last line); the
moment it reads the end of input, or a line its front-end's `quits` rule reads as `quit` (set
with `set_quit_rule` once the protocol is known; lines already queued are checked then), it
calls the `on_finish` callbacks, before the main thread, which may be busy, gets to that line.
Invalid UTF-8 becomes U+FFFD instead of ending input; a line over `MAX_LINE_BYTES` is read and
dropped a piece at a time and comes as one `OVERLONG_LINE` (a client that never ends its line
costs one line's memory). The queue holds at most `MAX_QUEUED_BYTES` of lines (counting
`LINE_OVERHEAD` for each): when it is full the reader waits for the main thread, so a client
that writes faster than the engine answers (a flood during a GTP `genmove`) is held back by its
pipe instead of filling our memory, and no line is lost. `Output` is shared by the main thread
and search threads: a lock keeps each write whole, every write is flushed, and nothing raises: a
closed pipe sets `closed` and later writes are dropped (the server then ends quietly). Log lines
go to stderr only after the client's `debug on`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, Optional, TextIO, Union

from mallard.engines.processes import MAX_LINE_BYTES, OVERLONG_LINE, input_lines

MAX_QUEUED_BYTES = 16 * MAX_LINE_BYTES
LINE_OVERHEAD = 128  # about what Python spends on a queued line besides its text


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

    def notice(self, text: str) -> None:
        """A line on stderr whatever `debug` says: for what no protocol is known yet to answer."""
        if self.log_stream is None:
            return
        with self._lock:
            try:
                self.log_stream.write(text.rstrip("\n") + "\n")
                self.log_stream.flush()
            except (OSError, ValueError):
                pass

    def log(self, text: str) -> None:
        """A log line on stderr, only when the client asked for `debug on`."""
        if self.debug:
            self.notice(text)


class Input:
    """Lines of stdin read on their own thread."""

    def __init__(self, stream: TextIO, max_queued_bytes: int = MAX_QUEUED_BYTES):
        self._queue: deque = deque()  # (arrival as time.perf_counter(), line, cost)
        self.queued_bytes = 0  # the cost of the lines queued; at most max_queued_bytes
        self._max_queued_bytes = max_queued_bytes
        self._changed = threading.Condition()  # a line queued or taken
        self._quits: Optional[Callable[[str], bool]] = None  # the protocol's own `quit`
        self.arrived: Optional[float] = None  # when the line `next()` last returned was read
        self.finished = threading.Event()  # `quit` read or end of input
        self._on_finish: list = []
        self._callbacks_lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), name="mallard-stdin",
                                        daemon=True)
        self._thread.start()

    def _read(self, stream: TextIO) -> None:
        try:
            for text in input_lines(stream):
                if text is OVERLONG_LINE:
                    self._put(OVERLONG_LINE)
                    continue
                line = text.replace("\r", "")
                quits = self._quits  # checked before a wait for room: `quit` is seen at once
                if quits is not None and quits(line):
                    self._finish()
                self._put(line, quits)
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        self._finish()
        self._put(None)

    def _put(self, line: Union[str, None, object],
              checked_with: Optional[Callable[[str], bool]] = None) -> None:
        """Queue `line`, first waiting until it fits (an empty queue takes any line). A quit
        rule set since `line` was checked with `checked_with` reads it now: `set_quit_rule`'s
        look at the queue came before the line was in it."""
        cost = LINE_OVERHEAD + (len(line) if isinstance(line, str) else 0)
        with self._changed:
            while self.queued_bytes and self.queued_bytes + cost > self._max_queued_bytes:
                self._changed.wait()
            self.queued_bytes += cost
            self._queue.append((time.perf_counter(), line, cost))
            self._changed.notify_all()
            quits = self._quits
            late = quits is not checked_with and isinstance(line, str) and quits(line)
        if late:
            self._finish()

    def set_quit_rule(self, quits: Callable[[str], bool]) -> None:
        """Read the lines from now on, and those queued, with `quits`: a line it says ends the
        session finishes input at once."""
        with self._changed:
            self._quits = quits
            queued = any(isinstance(line, str) and quits(line) for _, line, _ in self._queue)
        if queued:
            self._finish()

    @property
    def queued_lines(self) -> int:
        return len(self._queue)

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

    def next(self) -> Union[str, None, object]:
        """The next line (None at the end, `OVERLONG_LINE` for one too long); `arrived` says
        when it was read, since a move's time runs from the arrival of its `go`, not from when
        the main thread got to it."""
        with self._changed:
            while not self._queue:
                self._changed.wait()
            self.arrived, line, cost = self._queue.popleft()
            self.queued_bytes -= cost
            self._changed.notify_all()
        return line
