"""What the UCI/UGI and GTP front-ends share: the output, the input, the session, the table of
command handlers, and closing.

A front-end turns one input line at a time into calls on its session and prints the answers
through `out`; `mallard.protocol.server` relies on `handle`, `quits`, `report_internal_error`,
`report_overlong_line`, `close` and `session`, nothing else. Handlers are the methods named
`cmd_<name>`; `handlers` maps each `<name>` to its bound method, built once per front-end.
`input` may be None (a front-end driven by hand rather than by a server); then a move's time
runs from when its command is handled.
"""

from __future__ import annotations

from typing import Callable, Optional

from mallard.engines.processes import MAX_LINE_BYTES
from mallard.protocol.io import Input, Output
from mallard.protocol.session import Session

HANDLER_PREFIX = "cmd_"
OVERLONG_MESSAGE = f"a line longer than {MAX_LINE_BYTES >> 20} MB was ignored"


class FrontEnd:
    def __init__(self, output: Output, input_: Optional[Input], session: Session):
        self.out = output
        self.input = input_
        self.session = session
        self.handlers: dict[str, Callable] = {
            name[len(HANDLER_PREFIX):]: getattr(self, name)
            for name in dir(self) if name.startswith(HANDLER_PREFIX)}

    def handle(self, line: str) -> bool:
        """Handle one input line; False when the process should end."""
        raise NotImplementedError

    @staticmethod
    def quits(line: str) -> bool:
        """Whether `handle` will read `line` as `quit` (the reader thread asks, to stop a
        search at once)."""
        raise NotImplementedError

    def report_internal_error(self, line: str) -> None:
        """Answer a line whose handler raised (a bug), in the protocol's own error form."""
        raise NotImplementedError

    def report_overlong_line(self) -> None:
        """Answer a line over `MAX_LINE_BYTES`, dropped unread, in the protocol's error form."""
        raise NotImplementedError

    def close(self) -> None:
        self.session.stop()
        self.session.wait(2.0)
