"""The tools' batch work on a Dask cluster (`mallard.tournaments.cluster`): a book built on a
`LocalCluster` equals the local build byte for byte, self-play gives the same games, and a
cluster that cannot be used is one line."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from mallard.engines.connect4 import book_builder
from mallard.engines.connect4.book_builder import build_book
from mallard.engines.duck.selfplay import match
from mallard.engines.duck.terms import parse_terms
from mallard.tournaments.cluster import ClusterError, open_cluster, parse_address


@pytest.fixture(scope="module")
def cluster():
    with open_cluster("local:2") as opened:
        opened.wait_for_workers(2)
        yield opened


def test_a_book_built_on_the_cluster_equals_the_local_build(cluster, tmp_path, monkeypatch):
    # the workers were started before this: only the coordinator's work directory moves
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(book_builder, "CHUNK", 150)  # many chunks, so both workers solve some
    chunks = {}

    def progress(level: int, done: int, total: int) -> None:
        chunks[level] = total

    local = build_book(5, 4, 6, jobs=2, output=tmp_path / "local.book")
    remote = build_book(5, 4, 6, output=tmp_path / "cluster.book", pool=cluster.pool(),
                        progress=progress)
    assert max(chunks.values()) >= 4
    assert remote.read_bytes() == local.read_bytes()


def test_self_play_on_the_cluster_plays_the_same_games(cluster):
    terms = parse_terms("all"), parse_terms("none")
    here = match(*terms, pairs=3, nodes=400, seed=7, jobs=1)
    there = match(*terms, pairs=3, nodes=400, seed=7, pool=cluster.pool())
    assert there == here and there.games == 6


def test_an_unreachable_scheduler_is_one_clear_line():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ClusterError) as caught:
        open_cluster(f"tcp://127.0.0.1:{port}", timeout_s=1)
    message = str(caught.value)
    assert "\n" not in message and f"127.0.0.1:{port}" in message


@pytest.mark.parametrize("text, expected", [
    ("local", ("local", None)), ("local:3", ("local", 3)),
    ("tcp://10.0.0.5:8786", ("tcp://10.0.0.5:8786", None)),
])
def test_cluster_addresses(text, expected):
    where, workers = parse_address(text)
    assert where == expected[0]
    assert workers == expected[1] or (expected[1] is None and where == "local" and workers >= 1)


@pytest.mark.parametrize("text", ["", "local:0", "local:two", "10.0.0.5:8786", "tcp://"])
def test_bad_cluster_addresses_say_what_is_expected(text):
    with pytest.raises(ValueError, match="local"):
        parse_address(text)


def test_book_build_on_a_cluster_from_the_command_line(tmp_path):
    books = []
    for where in (["--jobs", "1"], ["--cluster", "local:2"]):
        output = tmp_path / f"book{len(books)}"
        done = subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "book", "build",
                               "--width", "4", "--height", "4", "--depth", "5",
                               "--output", str(output), *where],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(output)
        assert "Traceback" not in done.stderr and "Warning" not in done.stderr
        books.append(output.read_bytes())
    assert books[0] == books[1]
