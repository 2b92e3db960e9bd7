"""The match database: every finished game in SQLite the moment it ends, so a match resumes.

Tables: `meta(key, value)` holds the match settings (JSON), the seed and, for each PGN file, where
the match last wrote to it (`pgn_write:PATH`: the offset and the games of that write, stored in
the same transaction as the game); `games` holds one row per finished game, keyed by its
schedule number, with the whole record as JSON, the PGN text and `retries` (how many times the
game was started again because its cluster worker was lost; a column added to databases written
before it, defaulting to 0, so old databases open and resume). Each game is one transaction
with `synchronous=FULL` in rollback-journal mode, so a SIGKILL at any instant leaves either the
whole game or none of it. The PGN file is derived data, and may be shared with other matches
(cutechess users point several at one file): on resume only the stored games it lacks are
appended, and the only bytes ever removed are this match's own half-written last write (the file
ends inside it, where it began), so a kill between the database commit and the PGN write can
neither lose nor duplicate a game, and nobody else's games are touched.

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
import re
import sqlite3
from pathlib import Path
from typing import Callable, Optional

from mallard.engines import locks
from mallard.tournaments.records import GameRecord

SCHEMA_VERSION = 2  # 2: games.retries
# Beside the database: the lock that one runner at a time holds on it (another runner's games
# would be thrown away, as the first owns the schedule); readers such as the tuner take none.
LOCK_SUFFIX = ".lock"
# meta key prefix of the last write to a PGN file: {"offset": where it began, "games": [idx]}
PGN_WRITE = "pgn_write:"


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
                    if key == "seed" or key.startswith("pgn_base:"):  # pgn_base: before 2.x
                        int(value)
                    elif key.startswith(PGN_WRITE):
                        _pgn_write(value)
            except (ValueError, TypeError, KeyError) as error:
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


def _pgn_write(value: str) -> tuple[int, list[int]]:
    """The offset and games of a `pgn_write:` setting; ValueError when it is not one."""
    data = json.loads(value)
    offset, games = data["offset"], data["games"]
    if not (isinstance(offset, int) and offset >= 0 and isinstance(games, list)
            and all(isinstance(game, int) for game in games)):
        raise ValueError(f"not a PGN write: {value!r}")
    return offset, games


def _pgn_key(pgn_path: str) -> str:
    return PGN_WRITE + os.path.abspath(pgn_path)


def _pgn_write_row(pgn_path: str, games: list[int]) -> tuple[str, str]:
    """The setting that says the next write to `pgn_path`, of `games`, begins at its end."""
    try:
        offset = os.path.getsize(pgn_path)
    except OSError:
        offset = 0
    return _pgn_key(pgn_path), json.dumps({"offset": offset, "games": games})


def append_pgn(pgn_path: str, text: str) -> None:
    """Append games to a PGN file as the bytes whose length and place `MatchStore` records."""
    with open(pgn_path, "ab") as handle:
        handle.write(text.encode("utf-8"))


# where a game's text may begin in a PGN file: its first tag at the start of a line
_RECORD_START = re.compile(rb"^\[Event ", re.MULTILINE)


def _records(content: bytes) -> set[bytes]:
    """The file cut before each `[Event` tag: a game this runner wrote is one of the pieces
    unless another program's game without an Event tag follows it."""
    starts = [found.start() for found in _RECORD_START.finditer(content)] + [len(content)]
    return {content[start:end] for start, end in zip(starts, starts[1:])}


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

    def retries(self) -> dict[int, int]:
        """{game: times it was started again} for the games that were."""
        return dict(self._rows("SELECT idx, retries FROM games WHERE retries > 0"))

    def add(self, record: GameRecord, pgn: str, retries: int = 0,
            pgn_out: Optional[str] = None) -> bool:
        """Store a finished game; False (and nothing written) when its number is already in.
        With `pgn_out`, the caller appends `pgn` to that file next (`append_pgn`): where the
        write begins is recorded with the game, so that a write cut short can be told apart
        from everything else in the file."""
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
            if added and pgn_out is not None:
                self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                _pgn_write_row(pgn_out, [job.index]))
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
        """Make the PGN file hold every stored game, touching nothing that is not this match's:
        a last write cut short by a kill (the file ends inside it, at the place it began) is
        cut off, and the stored games the file lacks are appended, in the order they finished.
        Other matches' games, and anything else written after ours, stay as they are."""
        path = Path(pgn_path)
        rows = self._rows("SELECT idx, pgn FROM games ORDER BY finished_order, idx")
        texts = {idx: text.encode("utf-8") for idx, text in rows}
        content = path.read_bytes() if path.exists() else b""
        recorded = self.get_meta(_pgn_key(pgn_path))
        if recorded is not None:
            offset, games = _pgn_write(recorded)  # checked at open
            written = b"".join(texts.get(idx, b"") for idx in games)
            if offset < len(content) < offset + len(written) and \
                    written.startswith(content[offset:]):
                with open(path, "r+b") as handle:
                    handle.truncate(offset)
                    os.fsync(handle.fileno())
                content = content[:offset]
        present = _records(content)
        missing = [idx for idx, _ in rows
                   if texts[idx] not in present and texts[idx] not in content]
        if not missing:
            return
        self.set_meta(*_pgn_write_row(pgn_path, missing))
        with open(path, "ab") as handle:
            handle.write(b"".join(texts[idx] for idx in missing))
            handle.flush()
            os.fsync(handle.fileno())

    def close(self) -> None:
        self.db.close()
        self._lock.release()
