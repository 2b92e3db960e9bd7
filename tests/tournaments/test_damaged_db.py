"""A damaged match database (`mallard match -db FILE`) is refused: exit status 2, one line on
stderr naming the file and the damage, no traceback, and the file left byte for byte as it was,
so that the games that can still be read are never overwritten or dropped."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.tournaments.test_cli import engine_args, mallard_match

MATCH = ["-variant", "duck", *engine_args("alpha"), *engine_args("beta"), "-games", "2",
         "-maxmoves", "8"]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """The database of a real two-game match."""
    db = tmp_path_factory.mktemp("played") / "match.sqlite"
    done = mallard_match(*MATCH, "-db", str(db), timeout=120)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
    return db


def _copy(played: Path, tmp_path: Path) -> Path:
    db = tmp_path / "damaged.sqlite"
    shutil.copyfile(played, db)
    return db


def _refused(db: Path, damage: str) -> None:
    before = db.read_bytes()
    done = mallard_match(*MATCH, "-db", str(db), timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and str(db) in lines[0] and damage in lines[0], lines
    assert "Traceback" not in done.stderr and "Started game" not in done.stdout
    assert db.read_bytes() == before
    assert not Path(str(db) + "-journal").exists()


def test_a_page_of_garbage_in_the_middle_is_refused(played, tmp_path):
    db = _copy(played, tmp_path)
    data = bytearray(db.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    pages = len(data) // page_size
    assert pages >= 3
    middle = pages // 2  # never page 0, whose header stays intact
    data[middle * page_size:(middle + 1) * page_size] = bytes([0xA5]) * page_size
    db.write_bytes(bytes(data))
    assert data[:16] == b"SQLite format 3\x00"
    _refused(db, "damaged")


def test_a_truncated_file_is_refused(played, tmp_path):
    db = _copy(played, tmp_path)
    data = db.read_bytes()
    page_size = int.from_bytes(data[16:18], "big")
    db.write_bytes(data[:max(page_size, (len(data) // page_size // 2) * page_size)])
    _refused(db, "damaged")


@pytest.mark.parametrize("garbage", ["{not json", json.dumps({"job": {"index": 1}}), "[]"])
def test_a_record_that_does_not_read_back_is_refused(played, tmp_path, garbage):
    db = _copy(played, tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE games SET record = ? WHERE idx = 2", (garbage,))
    _refused(db, "the record of game 2 does not read back")


def test_garbage_settings_are_refused(played, tmp_path):
    db = _copy(played, tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE meta SET value = 'x{' WHERE key = 'settings'")
    _refused(db, "unreadable match settings")


def test_a_file_that_is_no_database_is_refused(tmp_path):
    db = tmp_path / "notes.sqlite"
    db.write_text("these are my notes, not a match database\n" * 200)
    _refused(db, "not a database")


def test_an_intact_database_still_resumes(played, tmp_path):
    db = _copy(played, tmp_path)
    done = mallard_match(*MATCH, "-db", str(db), timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 games are already played" in done.stdout
