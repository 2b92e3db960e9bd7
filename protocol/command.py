"""The `mallard` console script: it loads the command line and numba before `cli.main` runs, and
a Ctrl-C in that moment must end it as quietly as one later, which `cli.main` catches.

numba's C extensions, imported with numba, print the traceback of a KeyboardInterrupt that
lands inside their import and raise ImportError instead; so Ctrl-C is held back (blocked, not
lost) while they load, and it arrives once they have.
"""

import os
import signal
import sys


def run() -> None:
    """The `mallard` command."""
    holds = hasattr(signal, "pthread_sigmask")
    try:
        if holds:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            import numba  # noqa: F401 - loaded here, where a Ctrl-C cannot land inside it

            from mallard.protocol.cli import main
        finally:
            if holds:  # a Ctrl-C held back arrives now, as a KeyboardInterrupt here
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    except KeyboardInterrupt:  # Ctrl-C while loading: end by the signal, as if never caught
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        raise
    sys.exit(main())
