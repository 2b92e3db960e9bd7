"""The match database: every finished game in SQLite the moment it ends, so a match resumes.

Tables: `meta(key, value)` holds the match settings (JSON), the seed and the PGN file's length
before the match first wrote to it; `games` holds one row per finished game, keyed by its
schedule number, with the whole record as JSON, the PGN text and `retries` (how many times the
game was started again because its cluster worker was lost; a column added to databases written
before it, defaulting to 0, so old databases open and resume). Each game is one transaction
with `synchronous=FULL` in rollback-journal mode, so a SIGKILL at any instant leaves either the
whole game or none of it. The PGN file is derived data: on resume it is cut back to its length
before the match and rewritten from the database, so a kill between the database commit and the
PGN write can neither lose nor duplicate a game.

A database that already exists is checked, read-only, before anything is written to it:
SQLite's own structure check, then every stored game and setting decoded. A damaged one is
refused with a `StorageError` naming the file and the damage, and is left byte for byte as it
was, so the games that can still be read are never overwritten or dropped.

One runner at a time holds a database: a second one is refused at once, naming the first's pid
(`mallard.engines.locks`), before it starts a game.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Callable, Optional

from mallard.engines import locks
from mallard.tournaments.records import GameRecord

SCHEMA_VERSION = 2  # 2: games.retries
# Beside the database: the lock that one runner at a time holds on it (another runner's games
# would be thrown away, as the first owns the schedule); readers such as the tuner take none.
LOCK_SUFFIX = ".lock"


class StorageError(RuntimeError):
    pass


def _damaged(path: str, damage: str) -> StorageError:
    return StorageError(f"the match database '{path}' is damaged ({damage}); it was left "
                        "unchanged: move it away, or use a new -db file")


def check_readable(db: sqlite3.Connection, path: str) -> None:
    """Raise a StorageError naming the damage unless every page, game and setting reads back.
    Reads only (a hot journal left by a kill is rolled back by SQLite, which is recovery)."""
    try:
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise _damaged(path, "; ".join(problems[:2]))
        tables = {row[0] for row in
                  db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" in tables:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            try:
                if "settings" in meta and not isinstance(json.loads(meta["settings"]), dict):
                    raise ValueError("not an object")
                for key, value in meta.items():
                    if key == "seed" or key.startswith("pgn_base:"):
                        int(value)
            except (ValueError, TypeError) as error:
                raise _damaged(path, f"unreadable match settings: {error}") from None
        if "games" in tables:
            for idx, record, pgn in db.execute("SELECT idx, record, pgn FROM games"):
                try:
                    game = GameRecord.from_dict(json.loads(record))
                    if game.index != idx or not isinstance(pgn, str):
                        raise ValueError(f"it says it is game {game.index}")
                except (ValueError, TypeError, KeyError, AttributeError) as error:
                    raise _damaged(path, f"the record of game {idx} does not read back: "
                                         f"{type(error).__name__}: {error}") from None
    except sqlite3.Error as error:
        raise _damaged(path, str(error)) from None


class MatchStore:
    """The database of one match, held by this runner alone (`LOCK_SUFFIX`) until `close()`."""

    def __init__(self, path: str):
        self.path = path
        self._lock = locks.hold(Path(path + LOCK_SUFFIX), f"the match database '{path}'")
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            self._lock.release()
            raise StorageError(f"cannot open the match database '{path}': {error}") from None
        try:
            check_readable(self.db, path)  # before the first write
        except StorageError:
            self.close()
            raise
        try:
            self.db.execute("PRAGMA journal_mode=DELETE")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS games (idx INTEGER PRIMARY KEY, round INTEGER, "
                "white TEXT, black TEXT, result TEXT, reason TEXT, termination TEXT, "
                "opening TEXT, moves TEXT, started_at TEXT, duration_ms INTEGER, "
                "record TEXT NOT NULL, pgn TEXT NOT NULL, finished_order INTEGER, "
                "retries INTEGER NOT NULL DEFAULT 0)")
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(games)")}
            if "retries" not in columns:  # a database from before schema 2
                self.db.execute("ALTER TABLE games ADD COLUMN retries INTEGER NOT NULL DEFAULT 0")
        except sqlite3.Error as error:
            raise StorageError(f"cannot open the match database '{path}': {error}") from None

    # --- settings -----------------------------------------------------------------------------
    def _rows(self, query: str, parameters: tuple = ()) -> list[tuple]:
        """Every row of a query; a database that fails underneath is a StorageError."""
        try:
            return self.db.execute(query, parameters).fetchall()
        except sqlite3.Error as error:
            raise StorageError(f"cannot use the match database '{self.path}': {error}") from None

    def get_meta(self, key: str) -> Optional[str]:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._rows("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def bind_settings(self, settings: dict,
                      lengthen: Optional[Callable[[int], None]] = None) -> bool:
        """Record the match settings, or check them against the recorded ones; True when the
        database already held this match (a resume). A different match is an error: resuming
        it with other engines or limits would mix two experiments in one result. One that
        differs only in `games` is handed, with the recorded count, to `lengthen`, which raises
        a StorageError unless the recorded match can become this longer one; then the new
        settings replace the recorded ones."""
        text = json.dumps(settings, sort_keys=True)
        recorded = self.get_meta("settings")
        if recorded is None:
            self._rows("BEGIN IMMEDIATE")
            self.set_meta("schema", str(SCHEMA_VERSION))
            self.set_meta("settings", text)
            self._rows("COMMIT")
            return False
        if recorded != text:
            old, new = json.loads(recorded), json.loads(text)
            changed = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
            if changed != ["games"] or lengthen is None or not isinstance(old["games"], int):
                raise StorageError(f"'{self.path}' holds another match (it differs in: "
                                   f"{', '.join(changed)}); use a new -db file")
            lengthen(old["games"])
            self._rows("BEGIN IMMEDIATE")
            self.set_meta("settings", text)
            self._rows("COMMIT")
        return True

    # --- games --------------------------------------------------------------------------------
    def records(self) -> list[GameRecord]:
        rows = self._rows("SELECT record FROM games ORDER BY finished_order, idx")
        return [GameRecord.from_dict(json.loads(row[0])) for row in rows]  # checked at open

    def pgn_texts(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT pgn FROM games ORDER BY finished_order, idx")]

    def retries(self) -> dict[int, int]:
        """{game: times it was started again} for the games that were."""
        return dict(self._rows("SELECT idx, retries FROM games WHERE retries > 0"))

    def add(self, record: GameRecord, pgn: str, retries: int = 0) -> bool:
        """Store a finished game; False (and nothing written) when its number is already in."""
        job = record.job
        try:
            self.db.execute("BEGIN IMMEDIATE")
            order = self.db.execute("SELECT COALESCE(MAX(finished_order), 0) + 1 FROM games"
                                    ).fetchone()[0]
            self.db.execute(
                "INSERT OR IGNORE INTO games (idx, round, white, black, result, reason, "
                "termination, opening, moves, started_at, duration_ms, record, pgn, "
                "finished_order, retries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job.index, job.round, record.white_name, record.black_name, record.result,
                 str(record.reason), str(record.termination), json.dumps(job.opening.to_dict()),
                 " ".join(move.text for move in record.moves), record.started_at,
                 record.duration_ms, json.dumps(record.to_dict()), pgn, order, retries))
            added = self.db.execute("SELECT changes()").fetchone()[0] == 1
            self.db.execute("COMMIT")
            return added
        except sqlite3.Error as error:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise StorageError(f"cannot store game {job.index} in '{self.path}': {error}") from None

    # --- the PGN file ---------------------------------------------------------------------------
    def restore_pgn(self, pgn_path: str) -> None:
        """Make the PGN file its pre-match content followed by exactly the stored games."""
        path = Path(pgn_path)
        base_text = self.get_meta(f"pgn_base:{os.path.abspath(pgn_path)}")
        current = path.stat().st_size if path.exists() else 0
        if base_text is None:
            self.set_meta(f"pgn_base:{os.path.abspath(pgn_path)}", str(current))
            base = current
        else:
            base = min(int(base_text), current)
        games = "".join(self.pgn_texts())
        with open(path, "ab") as handle:
            handle.truncate(base)
            handle.write(games.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def close(self) -> None:
        self.db.close()
        self._lock.release()
