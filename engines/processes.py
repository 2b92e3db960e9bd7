"""Processes and pipes: the command lines of the Python processes our code starts (engines,
workers, compile helpers), the one way lines are read from a pipe another program writes, and
the exit statuses our commands end with when a signal cuts their work short.

Invariants:
- a child imports our package from where this interpreter has it, never from its working
  directory. `-m` and `-c` put the working directory first on `sys.path`, so a folder named
  `mallard`, `engines` or `protocol` where the user stands would replace our code; `-P` keeps it
  off (`PYTHONPATH` and the installed packages still apply);
- a line read from a pipe is at most `MAX_LINE_BYTES`: a longer one is reported as
  `OVERLONG_LINE` and the rest of it is read and dropped, so a writer that never ends its line
  costs the reader one line's memory, not all it prints.
"""

from __future__ import annotations

import signal
import sys
from typing import BinaryIO, Iterator, Optional, TextIO, Union

MAX_LINE_BYTES = 1 << 20  # longer than any line a protocol needs (a UCI pv, a PGN move list)
OVERLONG_LINE = object()  # what `read_lines` yields for a line over MAX_LINE_BYTES

ENGINE_MODULE = "mallard.protocol.cli"  # what the `mallard` console script runs

# 128 + the signal, as a shell reports a C tool that the signal ended
EXIT_INTERRUPTED = 128 + signal.SIGINT  # Ctrl-C
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # the reader of our output went away


def python_command(*arguments: str) -> list[str]:
    """This interpreter, with the working directory off `sys.path`, then `arguments`."""
    return [sys.executable, "-P", *arguments]


def mallard_command(*arguments: str) -> list[str]:
    """`mallard ARGUMENTS` as this interpreter runs it, installed or from an editable checkout."""
    return python_command("-m", ENGINE_MODULE, *arguments)


def read_lines(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[Union[str, object]]:
    """The lines of `stream` as text (UTF-8, bad bytes replaced; the line end stripped), each
    line over `limit` bytes as one `OVERLONG_LINE`, until the end of the stream."""
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            yield OVERLONG_LINE  # at once: the reader need not wait for the line to end
            while raw and not raw.endswith(b"\n"):  # then drop the rest, a piece at a time
                raw = stream.readline(limit)
            continue
        yield raw.decode("utf-8", "replace").rstrip("\r\n")


def input_lines(stream: Optional[TextIO]) -> Iterator[Union[str, object]]:
    """The lines of a text stream, bounded as `read_lines` bounds them when it has a byte
    buffer (stdin); one without (a test's StringIO) is read as it is."""
    if stream is None:  # no stdin at all (started with it closed): nothing to read
        return iter(())
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        return (line.rstrip("\r\n") for line in stream)
    return read_lines(buffer)
