"""A match database as a watching test reads it (while the runner may be writing it), and a
runner SIGKILLed mid-match."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Optional


def games_in(db: Path) -> list[int]:
    """The numbers of the games stored so far ([] while the file or its table is not there)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return [row[0] for row in connection.execute("SELECT idx FROM games ORDER BY idx")]
    except sqlite3.OperationalError:
        return []


def kill_match_after(command: list[str], db: Path, games: int, cwd: Optional[Path] = None,
                     timeout_s: float = 120) -> list[int]:
    """Start a match runner, SIGKILL its whole process group (the runner, its engines, a local
    cluster) once `games` games are stored, and return the games stored by then."""
    runner = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True, cwd=cwd)
    deadline = time.monotonic() + timeout_s
    while len(games_in(db)) < games and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait()
    return games_in(db)
