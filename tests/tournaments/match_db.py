"""Reading a match database the way a watching test does: while the runner may be writing it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def games_in(db: Path) -> list[int]:
    """The numbers of the games stored so far ([] while the file or its table is not there)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return [row[0] for row in connection.execute("SELECT idx FROM games ORDER BY idx")]
    except sqlite3.OperationalError:
        return []
