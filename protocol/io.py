"""The engine process's stdin and stdout: `Input` reads lines on its own thread, `Output` writes
them one at a time. The error lines the front-ends print are clipped to
`mallard.engines.base.MESSAGE_LIMIT` by `mallard.engines.base.clip`, the one rule for echoing input.

Threads: `Input` reads stdin on a daemon thread into a queue (None after the last line); the
moment it reads `quit` (also GTP's `<id> quit`) or the end of input it calls the `on_finish`
callbacks, before the main thread, which may be busy, gets to that line. Invalid UTF-8 becomes
U+FFFD instead of ending input; a line over `MAX_LINE_BYTES` is read and dropped a piece at a
time and comes as one `OVERLONG_LINE` (a client that never ends its line costs one line's
memory). `Output` is shared by the main thread and search threads: a lock
keeps each write whole, every write is flushed, and nothing raises: a closed pipe sets `closed`
and later writes are dropped (the server then ends quietly). Log lines go to stderr only after
the client's `debug on`.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Optional, TextIO, Union

from mallard.engines.base import is_number
from mallard.engines.processes import OVERLONG_LINE, input_lines


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
        try:
            for text in input_lines(stream):
                if text is OVERLONG_LINE:
                    self.lines.put((time.perf_counter(), OVERLONG_LINE))
                    continue
                line = text.replace("\r", "")
                words = line.split()
                if words[:1] == ["quit"] or (len(words) == 2 and is_number(words[0])
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

    def next(self) -> Union[str, None, object]:
        """The next line (None at the end, `OVERLONG_LINE` for one too long); `arrived` says
        when it was read, since a move's time runs from the arrival of its `go`, not from when
        the main thread got to it."""
        self.arrived, line = self.lines.get()
        return line
