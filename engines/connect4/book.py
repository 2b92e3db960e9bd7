"""Connect Four opening books: the format the search probes, BitBully's 12-ply database, and
where the project's own books are found (`book_builder` makes them).

A `Book` covers the positions whose stone counts are set in `depth_mask` (bit d: d stones) and in
which the side to move cannot win at once. Its `array` (uint64) holds the n sorted canonical keys
(see `kernels.canonical_key`) followed by their n Pons scores biased by +128; the search
binary-searches it at those depths only.

Files live in the cache directory (`$MALLARD_CACHE`, else `~/.cache/mallard`):
- `bitbully-12ply-7x6-v2.npz`: BitBully's database converted on first use (from the installed
  `bitbully-databases` package; nothing is downloaded). The version in the name changes whenever
  a conversion from an older release cannot be trusted; an older file (`bitbully-12ply-7x6.npz`,
  made by a stale decoder that scored most positions wrongly) is ignored and removed;
- `book-WxH-dN.npz`: books made by `book_builder.build_book`, with `build-WxH-dN/` holding the
  finished chunks of an unfinished build so that running it again resumes.

The package ships one small book of its own, `data/book-7x6-d4.npz` (every position with up to 4
stones, solved with BitBully's book by `mallard book build --depth 4`), so that the first plies
do not have to search down to ply 12.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import as_file, files
from pathlib import Path
from typing import Optional

import numpy as np

from mallard.engines.base import is_number
from mallard.engines.compile_cache import in_background, notify
from mallard.engines.connect4 import book_kernels as BK
from mallard.engines.connect4 import kernels as K

BITBULLY_FILE = "bitbully-12ply-7x6-v2.npz"
LEGACY_BITBULLY_FILES = ("bitbully-12ply-7x6.npz",)  # wrong conversions: never loaded
DECODER_CHECK_SAMPLE = 1000
SHIPPED_BOOKS = {(7, 6): "book-7x6-d4.npz"}


class BookFileError(ValueError):
    """A book file that cannot be read."""


def _load_or_none(path: Path, remedy: str) -> Optional["Book"]:
    """The book in `path`, or None with a notice saying what happens instead."""
    try:
        return Book.load(path)
    except BookFileError as error:
        notify(f"unreadable Connect Four book ({error}); {remedy}", once=f"book:{path}")
        return None


@dataclass
class Book:
    width: int
    height: int
    depth_mask: int
    array: np.ndarray

    @property
    def size(self) -> int:
        return self.array.shape[0] // 2

    @property
    def depths(self) -> list[int]:
        return [d for d in range(64) if self.depth_mask >> d & 1]

    @classmethod
    def from_entries(cls, width, height, depths, keys, scores) -> "Book":
        keys = np.asarray(keys, dtype=np.uint64)
        stored = np.asarray(scores, dtype=np.int64) + 128
        if keys.size and int(keys.max()) < 1 << 56 and 0 <= stored.min() and stored.max() < 256:
            # one sort of each key with its score in the low byte: a sort is several times
            # faster than an argsort (BitBully's 4.2 million entries: 0.1 s against 0.5 s)
            packed = np.sort(keys << np.uint64(8) | stored.astype(np.uint64))
            keys, stored = packed >> np.uint64(8), packed & np.uint64(255)
        else:
            order = np.argsort(keys, kind="stable")
            keys, stored = keys[order], stored[order].astype(np.uint64)
        if keys.size and np.any(keys[1:] == keys[:-1]):
            raise ValueError("book has duplicate keys")
        array = np.concatenate([keys, stored])
        return cls(width, height, sum(1 << d for d in set(depths)), array)

    @classmethod
    def merge(cls, books: list["Book"]) -> Optional["Book"]:
        """One book probing everything the given books hold (the largest wins on a shared key).
        Inserts sorted keys into sorted keys: no re-sort of the large book."""
        books = [b for b in books if b is not None]
        if not books:
            return None
        if len(books) == 1:
            return books[0]
        books.sort(key=lambda b: -b.size)
        keys, scores = books[0].keys(), books[0].scores()
        depth_mask = books[0].depth_mask
        for book in books[1:]:
            new_keys, new_scores = book.keys(), book.scores()
            at = np.searchsorted(keys, new_keys)
            present = keys[np.minimum(at, keys.size - 1)] == new_keys if keys.size else np.zeros(
                new_keys.size, dtype=bool)
            keys = np.insert(keys, at[~present], new_keys[~present])
            scores = np.insert(scores, at[~present], new_scores[~present])
            depth_mask |= book.depth_mask
        array = np.concatenate([keys, (scores + 128).astype(np.uint64)])
        return cls(books[0].width, books[0].height, depth_mask, array)

    def keys(self) -> np.ndarray:
        return self.array[: self.size]

    def scores(self) -> np.ndarray:
        return self.array[self.size:].astype(np.int64) - 128

    def save(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        try:
            np.savez(tmp, meta=np.array([self.width, self.height, self.depth_mask]),
                     array=self.array)
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)  # never a stray half of a book beside the target
            raise

    @classmethod
    def load(cls, path: Path) -> "Book":
        """The book in a file; BookFileError when it cannot be read or does not hold a book
        (emptied, truncated, garbage), so that a damaged file is never probed."""
        try:
            with np.load(path, allow_pickle=False) as data:
                width, height, depth_mask = (int(x) for x in data["meta"])
                array = data["array"]
        except Exception as error:  # numpy and zipfile raise many kinds for a damaged file
            raise BookFileError(f"{path}: {type(error).__name__}: {error}") from error
        if array.dtype != np.uint64 or array.ndim != 1 or array.size % 2 or \
                not (0 < width * (height + 1) <= 64) or depth_mask < 0:
            raise BookFileError(f"{path}: not a book (array {array.dtype} {array.shape}, "
                                f"board {width}x{height})")
        return cls(width, height, depth_mask, array)

    @cached_property
    def _lookup_context(self) -> np.ndarray:
        ctx = K.make_context(self.width, self.height)
        ctx[K.C_BOOK_SIZE] = self.size
        return ctx

    def lookup(self, position) -> Optional[int]:
        """The stored score of a position, or None."""
        if not self.depth_mask >> position.moves & 1:
            return None
        ctx = self._lookup_context
        key = K.canonical_key(np.uint64(position.cur + position.mask), ctx)
        value = K.book_lookup(key, self.array, ctx)
        return None if value == K.UNKNOWN else int(value)


def cache_dir() -> Path:
    return Path(os.environ.get("MALLARD_CACHE") or Path.home() / ".cache" / "mallard")


def bitbully_book(convert: bool = True) -> Optional[Book]:
    """BitBully's 12-ply exact-distance database as a 7x6 `Book` (converted once and cached);
    None when the `bitbully-databases` package is not installed."""
    cached = cache_dir() / BITBULLY_FILE
    if cached.exists():
        remedy = "rebuilding it from bitbully-databases" if convert else "not using it"
        book = _load_or_none(cached, remedy)
        if book is not None and (book.width, book.height) == (7, 6):
            return book
    if not convert:
        return None
    book = convert_bitbully()
    if book is not None:
        try:
            book.save(cached)
            for name in LEGACY_BITBULLY_FILES:
                (cache_dir() / name).unlink(missing_ok=True)
        except OSError:
            pass  # a read-only home still gets a working (converted in memory) book
    return book


def convert_bitbully_in_background():
    """On a first run (no converted BitBully book cached yet), a process that converts and caches
    it, so that its decoder compiles on another core while this process compiles the solver;
    None when there is nothing to convert. The caller waits for it before loading the book."""
    if (cache_dir() / BITBULLY_FILE).exists() or bitbully_source() is None:
        return None
    return in_background("from mallard.engines.connect4.book import bitbully_book; bitbully_book()")


def bitbully_source() -> Optional[Path]:
    try:
        from bitbully_databases import BitBullyDatabases  # large: loaded for a conversion only
    except ImportError:
        return None
    return Path(BitBullyDatabases.get_database_path("12-ply-dist"))


def convert_bitbully(path: Optional[Path] = None) -> Optional[Book]:
    """BitBully's 12-ply exact-distance database (5-byte records: big-endian int32 code, int8
    value; see `book_kernels` for the format) as a `Book` of Pons scores for the side to move."""
    path = path or bitbully_source()
    if path is None or not Path(path).exists():
        return None
    records = np.fromfile(path, dtype=np.dtype([("code", ">i4"), ("value", "i1")]))
    codes = records["code"].astype(np.int64)
    values = records["value"].astype(np.int64)
    keys = np.empty(codes.size, dtype=np.uint64)
    scores = np.empty(codes.size, dtype=np.int64)
    n = BK.decode_bitbully(codes, values, 7, 6, keys, scores)
    _check_compiled_decoder(codes, values)
    return Book.from_entries(7, 6, [12], keys[:n], scores[:n])


def _check_compiled_decoder(codes: np.ndarray, values: np.ndarray) -> None:
    """Decode a spread of records with the compiled decoder and with its Python source: machine
    code that no longer matches the source (a stale numba cache) must not make a book that is
    then cached for good."""
    sample = np.unique(np.linspace(0, codes.size - 1, min(codes.size, DECODER_CHECK_SAMPLE))
                       .astype(np.int64))
    codes, values = codes[sample], values[sample]
    results = []
    for decode in (BK.decode_bitbully, BK.decode_bitbully.py_func):
        keys = np.empty(codes.size, dtype=np.uint64)
        scores = np.empty(codes.size, dtype=np.int64)
        n = decode(codes, values, 7, 6, keys, scores)
        results.append((n, keys[:n], scores[:n]))
    (n, keys, scores), (py_n, py_keys, py_scores) = results
    if n != py_n or not np.array_equal(keys, py_keys) or not np.array_equal(scores, py_scores):
        raise RuntimeError("the compiled BitBully decoder disagrees with its source (a stale numba "
                           "cache?): delete engines/connect4/__pycache__/book_kernels.* and retry")


def built_book_path(width: int, height: int, depth: int) -> Path:
    return cache_dir() / f"book-{width}x{height}-d{depth}.npz"


def find_built_book(width: int, height: int) -> Optional[Path]:
    """The deepest finished book of our own for this board size, if any."""
    best, best_depth = None, -1
    prefix = f"book-{width}x{height}-d"
    directory = cache_dir()
    if not directory.exists():
        return None
    for path in directory.glob(prefix + "*.npz"):
        depth_text = path.name[len(prefix):-4]
        if is_number(depth_text) and int(depth_text) > best_depth:
            best, best_depth = path, int(depth_text)
    return best


def shipped_book(width: int, height: int) -> Optional[Book]:
    name = SHIPPED_BOOKS.get((width, height))
    if name is None:
        return None

    with as_file(files("mallard.engines.connect4").joinpath("data", name)) as path:
        if not path.exists():
            return None
        return _load_or_none(path, "solving without it (reinstall mallard to restore it)")


def _matches(book: Optional[Book], width: int, height: int) -> Optional[Book]:
    return book if book is not None and (book.width, book.height) == (width, height) else None


def default_book(width: int, height: int) -> Optional[Book]:
    """The book the engine uses: our deepest built book for the size, the shipped shallow book,
    and for 7x6 BitBully's 12-ply database, merged. An unreadable file is left out (a notice
    says so; BitBully's is converted again), so a damaged file costs speed, never a score."""
    built = find_built_book(width, height)
    built_book = _load_or_none(built, "solving without it (rebuild it with mallard book build)") \
        if built else None
    books = [_matches(built_book, width, height), _matches(shipped_book(width, height), width,
                                                             height)]
    if (width, height) == (7, 6):
        books.append(bitbully_book())
    return Book.merge(books)
