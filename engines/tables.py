"""Transposition-table memory: the one place that sizes, checks and allocates a search table.

A table size is asked for in megabytes (the `Hash` option): `check_hash_mb` holds it to the
option's range, `slots_for` turns it into the largest power-of-two number of slots that fits,
and `install_table` puts the table on an object attribute once the machine's available memory
can hold it. `HashTable.set_hash` is the three in one call, the one resize path of every
game's tables (the searchers' buffers, the Connect Four solver, the UTTT prover): a subclass
declares its slot layout and its `Hash` maximum, and how its context describes the table.
`hashfull` is the table fill a search reports (UCI `hashfull`), from a sample of slots.
`ThreadTable` is the table part of one search thread's buffers: its own table, or the table of
another thread's buffers (lazy SMP helpers), with the context slots that describe the table.

Invariants:
- An installed table is zeroed and every one of its pages has been written once before it is
  installed, so no timed search pays the operating system's first-touch cost.
- A refused request raises `TableSizeError` (a `GameError`, so a ValueError) whose message
  names the size and the limit, and leaves the old table in place, contents and all.
- A request is refused when the table would not fit in the available memory (MemAvailable,
  plus what the table it replaces frees) less `HEADROOM_MB`, which is kept for everything else.
"""

from __future__ import annotations

import mmap
import os
from typing import Optional

import numpy as np

from mallard.engines.base import GameError

MB = 1 << 20
HEADROOM_MB = 512
CACHE_LINE = 64  # bytes: tables start on one (`aligned_zeros`)


class TableSizeError(GameError):
    """A table size out of the option's range or larger than the machine's free memory."""


def available_bytes() -> Optional[int]:
    """Memory the machine can give a new allocation without swapping; None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_hash_mb(hash_mb, maximum: int, name: str = "Hash") -> int:
    """`hash_mb` as an int when it lies in 1..maximum; TableSizeError otherwise."""
    try:
        value = int(hash_mb)
    except (TypeError, ValueError):
        raise TableSizeError(f"{name} must be a whole number of MB, not '{hash_mb}'") from None
    if not 1 <= value <= maximum:
        raise TableSizeError(f"{name} must be between 1 and {maximum} MB, not {value}")
    return value


def slots_for(hash_mb: int, slot_bytes: int, min_slots: int) -> int:
    """The largest power-of-two number of `slot_bytes`-byte slots in `hash_mb` MB, at least
    `min_slots` (a power of two)."""
    slots = max(min_slots, int(hash_mb) * MB // slot_bytes)
    return 1 << (slots.bit_length() - 1)


def hashfull(in_use: np.ndarray) -> int:
    """Per mille of a sample of a table's slots that are in use (a game's table layout says
    which slots it samples and what counts as in use)."""
    return int(np.count_nonzero(in_use) * 1000 // max(1, len(in_use)))


def touch_pages(table: np.ndarray) -> None:
    """Write every page of `table` once (a zero: it stays zeroed), so that the operating system
    maps them now; np.zeros only reserves them."""
    flat = table.reshape(-1).view(np.uint8)
    flat[::mmap.PAGESIZE] = 0
    flat[-1:] = 0  # a table need not start on a page: then its last page is not one step away


def aligned_zeros(words: int, dtype) -> np.ndarray:
    """np.zeros(words, dtype) starting on a cache line (64 bytes; numpy gives 16), so that a
    bucket of 64 bytes is one line: one miss to read, one line to prefetch."""
    itemsize = np.dtype(dtype).itemsize
    spare = CACHE_LINE // itemsize
    buffer = np.zeros(words + spare, dtype=dtype)
    skip = (-buffer.ctypes.data % CACHE_LINE) // itemsize
    return buffer[skip:skip + words]


def install_table(owner, attribute: str, words: int, dtype, hash_mb: int,
                  name: str = "Hash") -> np.ndarray:
    """Replace `owner.<attribute>` by a zeroed, touched table of `words` elements of `dtype`.

    Refused with TableSizeError (the old table kept) when it would not fit in memory. When it
    fits only once the old table is gone, the old one is dropped first; should the allocation
    still fail, a zeroed table of the old size is put back before the error is raised."""
    dtype = np.dtype(dtype)
    needed = int(words) * dtype.itemsize
    old = getattr(owner, attribute, None)
    old_bytes = old.nbytes if isinstance(old, np.ndarray) else 0
    available = available_bytes()
    headroom = HEADROOM_MB * MB
    if available is not None and needed > available + old_bytes - headroom:
        usable = max(0, available + old_bytes - headroom) // MB
        raise TableSizeError(f"{name} {hash_mb} MB needs {needed // MB} MB but only {usable} MB "
                             "of memory are available")
    if available is not None and needed > available - headroom and old is not None:
        setattr(owner, attribute, None)  # it fits only in the old table's place
        old = None
    try:
        table = aligned_zeros(words, dtype)
        touch_pages(table)
    except MemoryError:
        if old is None and old_bytes:
            restored = aligned_zeros(old_bytes // dtype.itemsize, dtype)
            touch_pages(restored)
            setattr(owner, attribute, restored)
        raise TableSizeError(f"{name} {hash_mb} MB: the system refused {needed // MB} MB "
                             "of memory") from None
    setattr(owner, attribute, table)
    return table


class HashTable:
    """An owner of a search table, `tt`, that the game's `Hash` option sizes.

    A subclass declares the table's layout: slots of `slot_words` elements of `dtype`, at
    least `min_slots` of them (a power of two), and the game's `Hash` maximum `max_hash_mb`;
    its context array `ctx` learns the new table's size through `describe_table` (by default
    the slot mask, slots - 1, in ctx[mask_slot])."""

    max_hash_mb: int
    slot_words: int
    min_slots: int
    dtype = np.int64
    mask_slot: int
    ctx: np.ndarray
    tt: np.ndarray

    def set_hash(self, hash_mb: int) -> None:
        """A fresh table of the largest power-of-two number of slots that fits in `hash_mb` MB
        (checked against 1..max_hash_mb), its pages touched now (not inside a timed search);
        TableSizeError, the old table kept, when refused."""
        hash_mb = check_hash_mb(hash_mb, self.max_hash_mb)
        slots = slots_for(hash_mb, self.slot_words * np.dtype(self.dtype).itemsize,
                          self.min_slots)
        install_table(self, "tt", slots * self.slot_words, self.dtype, hash_mb)
        self.describe_table(slots)

    def describe_table(self, slots: int) -> None:
        """Tell the kernels' context the size of the table just installed."""
        self.ctx[self.mask_slot] = slots - 1


class ThreadTable(HashTable):
    """A search thread's table, `tt`: its own (`set_hash`, in the layout the game's buffers
    declare) or, for a helper thread, the one of the buffers it was made with (`table_of`).

    The game's buffers hold their context array in `ctx` and name, in `shared_slots`, the
    slots that describe the table (its mask, and its generation where entries are aged); a
    helper copies them from the owner with the table. Only an owner clears the table.
    With the table goes `busy`, the keys of the positions the threads are in (ABDADA): the
    kernels defer a move another thread is searching when ctx[busy_mask_slot] is its mask
    (`share_work`), and defer nothing when it is 0."""

    shared_slots: tuple[int, ...]
    busy_mask_slot: int
    busy: np.ndarray

    def _take_table(self, hash_mb: int, table_of: Optional["ThreadTable"],
                    busy_slots: int) -> None:
        """Make a table of `hash_mb` MB and a `busy` record of `busy_slots` keys (a power of
        two), or use `table_of`'s (call once `ctx` exists)."""
        self.owns_table = table_of is None
        if table_of is None:
            self.busy = np.zeros(busy_slots, dtype=np.int64)
            self.set_hash(hash_mb)
        else:
            self.share_table(table_of)

    def share_table(self, other: "ThreadTable") -> None:
        """Search in `other`'s table, as it stands now (call again after both `start`)."""
        self.tt = other.tt
        self.busy = other.busy
        for slot in self.shared_slots:
            self.ctx[slot] = other.ctx[slot]

    def share_work(self, shared: bool) -> None:
        """`shared`: other threads search beside this one in the next search, so its kernels
        defer what they are in; the owner then forgets the marks an earlier search left."""
        self.ctx[self.busy_mask_slot] = len(self.busy) - 1 if shared else 0
        if shared and self.owns_table:
            self.busy.fill(0)

    def clear_table(self) -> None:
        """Zero the table, when it is this thread's own."""
        if self.owns_table:
            self.tt.fill(0)
