"""`mallard warmup`: compile every game's code for this machine into the cache ahead of use.

Optional: an engine compiles what its game needs on first use anyway (and says so on stderr).
This fills the cache for all games at once, one worker process per game, as many at a time as
the machine has cores, so a later first start of any game only loads code. Each worker runs what
an engine's start-up runs (the session's warm-up), the perft kernels, and what the game's
`finish_warm_up` adds (the UTTT prover's helper compile, the Connect Four book conversion). Prints
one line per game on stdout: `<variant> ready in <seconds> s`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import TextIO

from mallard.engines import GAMES, compile_cache
from mallard.engines.processes import python_command
from mallard.protocol import print_notice
from mallard.protocol.session import Session


def warm_one(variant: str) -> None:
    """Load or compile everything `variant` uses, in this process."""
    session = Session(variant)
    session.start_warm_up()
    session.wait_ready()
    if session.warm_error:
        raise RuntimeError(f"{variant}: {session.warm_error}")
    if session.entry.perft:
        session.game.start_position().perft(2)
    if session.entry.finish_warm_up is not None:
        session.entry.finish_warm_up()


def run(out: TextIO = sys.stdout, jobs: int = 0) -> int:
    """Warm every game in worker processes; 0 when all succeeded, else 1. Workers write their
    notices and failures on stderr themselves, one line each."""
    jobs = jobs or os.cpu_count() or 1
    pending = [game.name for game in GAMES]
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    status = 0
    try:
        while pending or running:
            while pending and len(running) < jobs:
                variant = pending.pop(0)
                # a session of its own: a terminal's Ctrl-C reaches this process alone, which
                # ends the workers (no worker prints a KeyboardInterrupt's traceback)
                process = subprocess.Popen(python_command("-m", "mallard.protocol.warmup",
                                                          variant), start_new_session=True)
                running[variant] = (process, time.perf_counter())
            for variant, (process, started) in list(running.items()):
                if process.poll() is None:
                    continue
                del running[variant]
                if process.returncode == 0:
                    out.write(f"{variant} ready in {time.perf_counter() - started:.1f} s\n")
                    out.flush()
                else:
                    status = 1
            time.sleep(0.05)
    finally:
        for process, _ in running.values():
            process.kill()
            process.wait()
    return status


def _worker(variant: str) -> int:
    compile_cache.set_notice_handler(print_notice)
    try:
        warm_one(variant)
    except Exception as error:
        print(f"mallard: warming {variant} failed: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # one game (a worker), or all of them (setup.py's ahead-of-time build)
    sys.exit(_worker(sys.argv[1]) if len(sys.argv) > 1 else run())
