"""Ctrl-C for the commands whose work runs in a numba kernel on the main thread.

Python runs a signal handler only between bytecodes of the main thread, and a kernel called
from it holds the main thread for as long as it runs (a 9x6 solve: minutes), so a
KeyboardInterrupt would wait for the kernel. The C-level handler also writes the signal's number
to the wakeup file descriptor (`signal.set_wakeup_fd`) at once: a watcher thread reads it, gives
the main thread `GRACE_S` to end by itself (a command that catches KeyboardInterrupt between
kernels, such as `mallard prove`, prints its last line), and then ends the process with status
130 (128 + SIGINT), as a shell expects after Ctrl-C, without a traceback. The work of these
commands is safe to cut at any instant: a solve's finished lines are printed, a book build's
finished chunks are on disk, and nothing else is written.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from mallard.engines.processes import EXIT_INTERRUPTED

GRACE_S = 0.5


def end_on_interrupt() -> None:
    """From now on, SIGINT ends this process within GRACE_S (call from the main thread)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_end,), name="mallard-interrupt",
                     daemon=True).start()


def _watch(read_end: int) -> None:
    while True:
        try:
            received = os.read(read_end, 64)
        except OSError:
            return
        if not received:
            return
        if signal.SIGINT in received:
            time.sleep(GRACE_S)  # the main thread may still end by itself
            os._exit(EXIT_INTERRUPTED)
