"""The `mallard` console script: it loads the command line's modules (numpy, numba, the engines),
which takes a moment in which Ctrl-C must end it as quietly as later, when `cli.main` catches it.
"""

import os
import signal
import sys


def run() -> None:
    """The `mallard` command."""
    try:
        from mallard.protocol.cli import main
    except KeyboardInterrupt:  # Ctrl-C while loading: end by the signal, as if never caught
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        raise
    sys.exit(main())
