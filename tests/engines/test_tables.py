"""Table sizes (engines/tables.py and the searchers' `Hash`): sizing, refusal, pages touched.

The memory a machine has is replaced by a smaller one (monkeypatched `available_bytes`) where a
test needs a refusal, so that the tests mean the same on any machine; the pages-touched tests
ask the kernel which pages of a table are in memory (mincore(2)), which the allocation code
never does."""

import ctypes
import mmap
import sys

import numpy as np
import pytest

from mallard.engines import find_game, get_game, tables
from mallard.engines.base import GameError, Limits
from mallard.engines.tables import MB, TableSizeError

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="calls mincore(2)")


def pages_not_in_memory(table: np.ndarray) -> int:
    """How many of the pages that hold `table` the kernel has not mapped yet (mincore(2)).

    Asked of the table itself, not of the process's resident size: a table that malloc placed
    in memory an earlier test freed is resident without growing the process (CI saw it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    page = mmap.PAGESIZE
    address = table.ctypes.data
    first = address - address % page
    pages = (address + table.nbytes - first + page - 1) // page
    vector = ctypes.create_string_buffer(pages)
    if libc.mincore(first, pages * page, vector) != 0:
        raise OSError(ctypes.get_errno(), "mincore failed")
    return sum(1 for byte in vector.raw if not byte & 1)


def table_of(searcher) -> np.ndarray:
    """The search table of any game's searcher."""
    return searcher.solver.tt if hasattr(searcher, "solver") else searcher.buffers.tt


@pytest.fixture
def little_memory(monkeypatch):
    """A machine with 1 GiB available: 512 MB of it usable for a table after the headroom."""
    monkeypatch.setattr(tables, "available_bytes", lambda: 1024 * MB)


class Holder:
    tt = None


# --- sizing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("slot_bytes", [16, 32, 128])
@pytest.mark.parametrize("hash_mb", [1, 3, 64, 100, 4095, 65536])
def test_slots_are_the_largest_power_of_two_that_fits(hash_mb, slot_bytes):
    slots = tables.slots_for(hash_mb, slot_bytes, 256)
    assert slots & (slots - 1) == 0
    assert slots * slot_bytes <= hash_mb * MB < 2 * slots * slot_bytes


def test_the_games_map_megabytes_to_the_same_table_bytes():
    """Every table is the largest power of two of bytes within the MB asked for."""
    from mallard.engines.connect4.solver import Solver
    from mallard.engines.duck.searcher import SearchBuffers as DuckBuffers
    from mallard.engines.uttt.prover import Prover
    from mallard.engines.uttt.searcher import SearchBuffers as UtttBuffers

    for hash_mb in (1, 3, 24):
        expected = 1 << (hash_mb * MB).bit_length() - 1
        for owner in (Solver(hash_mb=hash_mb), DuckBuffers(hash_mb), UtttBuffers(hash_mb),
                      Prover(hash_mb=hash_mb)):
            assert owner.tt.nbytes == expected, (type(owner), hash_mb)


@pytest.mark.parametrize("value", [0, -5, 65537, 999999, "x", "12.5", None])
def test_sizes_outside_the_range_are_refused_by_name(value):
    with pytest.raises(TableSizeError, match="Hash must be") as caught:
        tables.check_hash_mb(value, 65536)
    assert isinstance(caught.value, GameError) and isinstance(caught.value, ValueError)
    assert str(value) in str(caught.value)


def test_a_table_starts_on_a_cache_line_and_is_zeroed():
    holder = Holder()
    for words in (MB // 8, MB // 8 + 3):
        table = tables.install_table(holder, "tt", words, np.int64, 1)
        assert table.ctypes.data % tables.CACHE_LINE == 0
        assert len(table) == words and table.flags.c_contiguous and not table.any()


# --- refusal -----------------------------------------------------------------------------------

def test_a_table_larger_than_memory_is_refused_and_the_old_one_kept(little_memory):
    holder = Holder()
    tables.install_table(holder, "tt", MB // 8, np.int64, 1)
    old = holder.tt
    old[::1000] = 7
    with pytest.raises(TableSizeError, match=r"Hash 4096 MB needs 4096 MB but only 513 MB"):
        tables.install_table(holder, "tt", 4096 * MB // 8, np.int64, 4096)
    assert holder.tt is old and int(old[::1000].sum()) == 7 * len(old[::1000])


def test_a_table_that_fits_only_in_the_old_ones_place_replaces_it(monkeypatch):
    monkeypatch.setattr(tables, "available_bytes",
                        lambda: (tables.HEADROOM_MB + 40) * MB)  # 40 MB free, 32 more held
    holder = Holder()
    holder.tt = np.ones(32 * MB // 8, dtype=np.int64)
    table = tables.install_table(holder, "tt", 64 * MB // 8, np.int64, 64)
    assert holder.tt is table and table.nbytes == 64 * MB and not table.any()


def test_an_allocation_the_system_refuses_leaves_a_table_of_the_old_size(monkeypatch):
    monkeypatch.setattr(tables, "available_bytes", lambda: (tables.HEADROOM_MB + 8) * MB)
    real_touch = tables.touch_pages
    calls = []

    def refuse_once(table):
        calls.append(table.nbytes)
        if len(calls) == 1:
            raise MemoryError
        real_touch(table)

    monkeypatch.setattr(tables, "touch_pages", refuse_once)
    holder = Holder()
    holder.tt = np.ones(16 * MB // 8, dtype=np.int64)
    with pytest.raises(TableSizeError, match="refused"):
        tables.install_table(holder, "tt", 20 * MB // 8, np.int64, 20)
    assert calls == [20 * MB, 16 * MB]
    assert holder.tt.nbytes == 16 * MB and not holder.tt.any()


@pytest.mark.parametrize("variant", ["cfour", "duck", "uttt"])
def test_every_searcher_refuses_an_impossible_hash_keeps_its_tables_and_still_plays(
        variant, little_memory):
    game = get_game(variant)
    searcher = find_game(variant).new_searcher(game)
    position = game.start_position()
    searcher.search(position, Limits(depth=2))
    table = table_of(searcher)
    prover = getattr(searcher, "prover", lambda: None)()
    prover_table = prover.tt if prover is not None else None
    maximum = next(o.max for o in find_game(variant).options if o.name == "Hash")
    for value in (maximum, 0, maximum + 1):
        with pytest.raises(TableSizeError):
            searcher.set_hash(value)
        assert table_of(searcher) is table
        if prover is not None:
            assert searcher.prover() is prover and prover.tt is prover_table
    result = searcher.search(position, Limits(depth=3))
    assert result.best_move in position.legal_moves()


def test_uttt_keeps_both_sizes_when_the_prover_table_is_refused(monkeypatch):
    game = get_game("uttt")
    searcher = find_game("uttt").new_searcher(game, hash_mb=8)
    searcher.set_hash(16)
    table, prover_table = searcher.buffers.tt.nbytes, searcher.prover().tt.nbytes
    real_install = tables.install_table

    def refuse_prover(owner, *args, **kwargs):
        if owner is searcher.prover():
            raise TableSizeError("no memory for the prover")
        return real_install(owner, *args, **kwargs)

    monkeypatch.setattr(tables, "install_table", refuse_prover)
    with pytest.raises(TableSizeError):
        searcher.set_hash(64)
    assert (searcher.buffers.tt.nbytes, searcher.prover().tt.nbytes) == (table, prover_table)
    assert searcher.hash_mb == 16


# --- pages touched when the size is set --------------------------------------------------------

@linux_only
def test_np_zeros_alone_leaves_pages_unmapped():
    """The control for the tests below: the oracle can tell a touched table from a lazy one."""
    lazy = np.zeros(256 * MB // 8, dtype=np.int64)
    pages = lazy.nbytes // mmap.PAGESIZE
    assert pages_not_in_memory(lazy) > pages * 9 // 10
    tables.touch_pages(lazy)
    assert pages_not_in_memory(lazy) == 0


@linux_only
@pytest.mark.parametrize("variant", ["cfour", "duck", "uttt"])
def test_set_hash_maps_every_page_of_the_table(variant):
    game = get_game(variant)
    searcher = find_game(variant).new_searcher(game, hash_mb=1)
    if hasattr(searcher, "prover"):
        searcher.prover()
    searcher.set_hash(256)
    assert table_of(searcher).nbytes == 256 * MB
    assert pages_not_in_memory(table_of(searcher)) == 0
    if hasattr(searcher, "prover"):  # UTTT: the prover's table is resized with it
        assert searcher.prover().tt.nbytes == 64 * MB
        assert pages_not_in_memory(searcher.prover().tt) == 0
