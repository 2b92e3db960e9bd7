"""The engine process: stdin on a reader thread, one front-end, one session, clean shutdown.

`serve(stdin, stdout, stderr, protocol)` runs until `quit` or the end of stdin and returns the
exit status (0). With `protocol=None` the first non-empty line decides: `uci` (or another UCI
command) speaks UCI, `ugi` speaks UGI, anything else GTP.

A front-end is made as soon as its protocol is known: at once for a given one (so a first
line over the length bound is answered in its form), else at the first non-empty line (an
over-long line before it is answered on stderr).

Threads: the reader puts every line on a queue (None at the end of input) and, the moment it
reads the end of input or a line the front-end reads as `quit` (`FrontEnd.quits`: GTP's
`1 QUIT # done` too), abandons the session: the running search stops and any later
one stops at once, so a GTP `genmove` or an infinite search never holds the exit (commands still
run in order, so a piped script gets its answers). The main thread hands lines to the
front-end; searches print `info`/`bestmove` from their worker thread. All output goes through
one `Output` (mallard.protocol.io), which serialises lines, flushes each, and never raises (a closed
stdout ends the process instead of printing a traceback).

Imports run one way: this module -> the front-ends (uci, gtp) -> frontend, io and session.
"""

from __future__ import annotations

import sys
import traceback
from typing import Optional, TextIO

from mallard.engines import DEFAULT_GAMES
from mallard.engines.processes import OVERLONG_LINE
from mallard.protocol.frontend import OVERLONG_MESSAGE
from mallard.protocol.gtp import GtpFrontEnd
from mallard.protocol.io import Input, Output
from mallard.protocol.session import Session
from mallard.protocol.uci import UciFrontEnd

UCI_FIRST_COMMANDS = {"uci", "isready", "position", "go", "setoption", "ucinewgame", "debug"}


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
    if protocol == "gtp":
        return GtpFrontEnd(output, input_, Session(variant or DEFAULT_GAMES["gtp"]))
    return UciFrontEnd(output, input_, dialect=protocol,
                       session=Session(variant) if variant else None)


def serve(stdin: TextIO = None, stdout: TextIO = None, stderr: TextIO = None,
          protocol: Optional[str] = None, variant: Optional[str] = None) -> int:
    stdin = stdin or sys.stdin
    output = Output(stdout or sys.stdout, stderr or sys.stderr)
    input_ = Input(stdin)
    front = None

    def start(chosen: str):
        made = make_front_end(chosen, output, input_, variant)
        input_.set_quit_rule(made.quits)
        input_.on_finish(made.session.abandon)
        return made

    try:
        if protocol is not None:
            front = start(protocol)
        while True:
            line = input_.next()
            if line is None or output.closed.is_set():
                break
            if line is OVERLONG_LINE:
                if front is not None:
                    front.report_overlong_line()
                else:  # no protocol yet to answer in: stderr, which every client leaves alone
                    output.notice(f"mallard: {OVERLONG_MESSAGE} (no protocol chosen yet)")
                continue
            if front is None:
                chosen = detect(line)
                if chosen is None:
                    continue
                front = start(chosen)
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
