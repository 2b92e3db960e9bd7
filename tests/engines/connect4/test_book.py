import os
import random
import subprocess
import time
import types

import numpy as np
import pytest

from mallard.engines import locks
from mallard.engines.connect4 import book as book_module
from mallard.engines.connect4 import book_kernels as BK
from mallard.engines.connect4 import kernels as K
from mallard.engines.connect4.book import Book
from mallard.engines.connect4.book_builder import CHUNK, LOCK_FILE, build_book, enumerate_levels
from mallard.engines.connect4.rules import Connect4Game
from mallard.engines.connect4.solver import Solver
from mallard.engines.processes import mallard_command

GAME = Connect4Game()


def test_bitbully_book_size_and_depth(bitbully):
    assert (bitbully.width, bitbully.height, bitbully.depths) == (7, 6, [12])
    assert bitbully.size == 4200899
    keys = bitbully.keys()
    assert np.all(keys[1:] > keys[:-1])


def test_bitbully_examples_from_its_documentation(bitbully):
    # Positions documented by bitbully-databases: first player wins in 29 plies (value 71) and
    # loses in 12 plies (-88). Columns bottom-up, 1 = first player.
    def position_of(columns):
        game = Connect4Game()
        first = second = 0
        for c, stones in enumerate(columns):
            for r, who in enumerate(stones):
                bit = 1 << (c * 7 + r)
                if who == 1:
                    first |= bit
                else:
                    second |= bit
        return game.parse_position(_fen(first, second))

    wins = position_of([[], [2, 1, 2, 1], [], [1, 2, 1, 2, 1], [], [2, 1, 2], []])
    assert bitbully.lookup(wins) == 1  # the 21st stone wins: (43 - 40) // 2
    loses = position_of([[], [1, 1], [1, 2, 2, 1], [2, 1, 2, 1], [], [2], [2]])
    assert bitbully.lookup(loses) == -10  # the second player's 12th stone wins


def _fen(first: int, second: int) -> str:
    ranks = []
    for row in range(5, -1, -1):
        text, empty = "", 0
        for column in range(7):
            bit = 1 << (column * 7 + row)
            char = "P" if first & bit else "p" if second & bit else None
            if char is None:
                empty += 1
                continue
            text += (str(empty) if empty else "") + char
            empty = 0
        ranks.append(text + (str(empty) if empty else ""))
    return "/".join(ranks)


def _random_position(rng, stones, game=GAME):
    """A position reached by `stones` random moves, none of which ends the game."""
    position = game.start_position()
    for _ in range(stones):
        candidates = [c for c in position.legal_moves() if position.play(c).winner is None]
        position = position.play(rng.choice(candidates))
    return position


def _wins_at_once(position, ctx) -> bool:
    return bool(K.can_win_next(np.uint64(position.cur), np.uint64(position.mask), ctx))


def _check_book_against_search(bitbully, played: int, sampled: int, seed: int) -> None:
    """`played` random-play 12-stone positions (those where the side to move wins at once are
    skipped: the database leaves them out) and `sampled` entries drawn uniformly from the book:
    the book's score equals the score of a search without book."""
    solver = Solver(hash_mb=64)
    rng = random.Random(seed)
    positions = []
    while len(positions) < played:
        position = _random_position(rng, 12)
        if not _wins_at_once(position, solver.ctx):
            positions.append(position)
    keys = bitbully.keys()
    positions += [_position_from_key(int(keys[i]))
                  for i in rng.sample(range(bitbully.size), sampled)]
    wrong = []
    for position in positions:
        assert not _wins_at_once(position, solver.ctx)
        stored = bitbully.lookup(position)
        assert stored is not None, position.fen()  # every such position is in the database
        solver.reset()
        searched = solver.solve(position)
        if stored != searched:
            wrong.append((position.fen(), stored, searched))
    assert not wrong, f"{len(wrong)} of {len(positions)} book values differ: {wrong[:5]}"


def test_book_values_equal_search_values(bitbully):
    # About 7 s: a 12-stone position takes some 35 ms on average to solve without book.
    _check_book_against_search(bitbully, played=150, sampled=50, seed=12)


@pytest.mark.slow
def test_book_values_equal_search_values_many(bitbully):
    _check_book_against_search(bitbully, played=1000, sampled=500, seed=2024)


def test_bitbully_record_decoding():
    # The record of 1-based columns 255235466151 in book_12ply_distances.dat: code -173740432
    # (BitBully's Board::toHuffman, 11110 10110 100 100 111011100 11100 0 for columns 1 to 7, then
    # the padding 0), value 97: the first player, to move, wins with the 15th stone (3 plies on).
    # The Pons score is (43 - 14) // 2 = 14; BitBully's solver says 14 too.
    position = GAME.parse_sequence("255235466151")
    ctx = K.make_context(7, 6)
    key = int(K.canonical_key(np.uint64(position.cur + position.mask), ctx))
    code = -173740432
    codes = np.array([code, code, code, code, code | 1, 0x7FFFFFFF], dtype=np.int64)
    values = np.array([97, -88, 0, 71, 0, 0], dtype=np.int64)
    keys = np.empty(codes.size, dtype=np.uint64)
    scores = np.empty(codes.size, dtype=np.int64)
    n = BK.decode_bitbully(codes, values, 7, 6, keys, scores)
    assert n == 4  # a padding 1, a column of more than 6 stones: not records, skipped
    assert [int(k) for k in keys[:n]] == [key] * 4
    # value -88: the second player wins with the 24th stone, (43 - 23) // 2 = 10 for it.
    assert list(scores[:n]) == [14, -10, 0, 1]
    # The mirrored position is the same book entry.
    mirrored = GAME.parse_sequence("".join(str(8 - int(c)) for c in "255235466151"))
    book = Book.from_entries(7, 6, [12], keys[:1], scores[:1])
    assert book.lookup(position) == book.lookup(mirrored) == 14


def test_compiled_bitbully_decoder_equals_its_source():
    """The compiled decoder must not run stale machine code (numba's cache only notices edits to
    the function's own file): it equals its Python source on real records, and it takes nothing
    from another module that numba would compile into it."""
    path = book_module.bitbully_source()
    records = np.fromfile(path, dtype=np.dtype([("code", ">i4"), ("value", "i1")]))
    book_module._check_compiled_decoder(records["code"].astype(np.int64),
                                        records["value"].astype(np.int64))
    for function in (BK.decode_bitbully, BK._mirrored):
        for name in function.py_func.__code__.co_names:
            value = vars(BK).get(name)
            foreign = (value is not None and not isinstance(value, types.ModuleType)
                       and vars(K).get(name) is value)
            assert not foreign, f"{function.__name__} uses kernels.{name}"


def test_stale_bitbully_cache_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path))
    converted = Book.from_entries(7, 6, [12], [5, 9], [3, -2])
    stale = Book.from_entries(7, 6, [12], [5, 9], [-7, 4])
    for name in book_module.LEGACY_BITBULLY_FILES:
        stale.save(tmp_path / name)
    calls = []
    monkeypatch.setattr(book_module, "convert_bitbully", lambda: calls.append(1) or converted)
    book = book_module.bitbully_book()
    assert list(book.scores()) == [3, -2] and calls == [1]
    assert not any((tmp_path / name).exists() for name in book_module.LEGACY_BITBULLY_FILES)
    assert book_module.BITBULLY_FILE not in book_module.LEGACY_BITBULLY_FILES
    assert list(book_module.bitbully_book().scores()) == [3, -2] and calls == [1]  # cached


# True values by BitBully's solver: 5, 6 and 7 stones, where the search has no book to probe.
KNOWN_OPENINGS = [("44531", 5), ("44537", 2), ("445312", 0), ("4453121", 4)]


@pytest.fixture(scope="module")
def default_book_solver():
    return Solver(hash_mb=64, book=book_module.default_book(7, 6))


@pytest.mark.parametrize("moves, expected", KNOWN_OPENINGS)
def test_default_book_known_openings(default_book_solver, moves, expected):
    default_book_solver.reset()
    assert default_book_solver.solve(GAME.parse_sequence(moves)) == expected


def _check_default_book_against_search(default_book_solver, per_count: int, seed: int) -> None:
    solver = Solver(hash_mb=64)
    rng = random.Random(seed)
    for stones in range(5, 13):
        for _ in range(per_count):
            position = _random_position(rng, stones)
            default_book_solver.reset()
            solver.reset()
            assert default_book_solver.solve(position) == solver.solve(position), position.fen()


def test_search_with_default_book_equals_search_without(default_book_solver):
    # One position per stone count 5..12; without book, 5 stones can take seconds (0.9 to 6.5 s
    # measured), 6 and 7 stones up to 2 s, 8 to 12 mostly under 0.5 s.
    _check_default_book_against_search(default_book_solver, per_count=1, seed=3)


@pytest.mark.slow
def test_search_with_default_book_equals_search_without_many(default_book_solver):
    _check_default_book_against_search(default_book_solver, per_count=4, seed=99)
    for moves, expected in KNOWN_OPENINGS:
        solver = Solver(hash_mb=64)
        assert solver.solve(GAME.parse_sequence(moves)) == expected, moves


def test_search_with_book_equals_search_without(book_solver):
    solver = Solver(hash_mb=64)
    rng = random.Random(5)
    for _ in range(5):
        position = GAME.start_position()
        for _ in range(10):
            candidates = [c for c in position.legal_moves() if position.play(c).winner is None]
            position = position.play(rng.choice(candidates))
        book_solver.reset()
        solver.reset()
        assert book_solver.solve(position) == solver.solve(position)


def test_enumerated_levels_match_a_brute_force_count():
    levels = enumerate_levels(4, 4, 4)
    game = Connect4Game(4, 4)
    seen = [set() for _ in range(5)]

    def walk(position):
        key = min(position.key(),
                  int(K.mirror_key(np.uint64(position.key()), K.make_context(4, 4))))
        seen[position.moves].add(key)
        if position.moves < 4:
            for column in position.legal_moves():
                child = position.play(column)
                if child.winner is None:
                    walk(child)

    walk(game.start_position())
    for depth, (curs, masks) in enumerate(levels):
        assert set(int(k) for k in curs + masks) == seen[depth]


def test_build_book_small_board_and_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path))
    path = build_book(5, 4, 5, jobs=2)
    book = Book.load(path)
    assert (book.width, book.height, book.depths) == (5, 4, [0, 1, 2, 3, 4, 5])
    game = Connect4Game(5, 4)
    solver = Solver(5, 4, hash_mb=4)
    rng = random.Random(2)
    for _ in range(30):
        position = game.start_position()
        for _ in range(rng.randint(0, 5)):
            candidates = [c for c in position.legal_moves() if position.play(c).winner is None]
            position = position.play(rng.choice(candidates))
        if K.can_win_next(np.uint64(position.cur), np.uint64(position.mask), solver.ctx):
            assert book.lookup(position) is None
            continue
        solver.reset()
        assert book.lookup(position) == solver.solve(position)
    assert book_module.find_built_book(5, 4) == path
    assert book_module.default_book(5, 4).size == book.size

    # Resume: a finished chunk left in the work directory is used, not solved again.
    path.unlink()
    work = tmp_path / "build-5x4-d5"
    work.mkdir()
    levels = enumerate_levels(5, 4, 5)
    chunk = np.full(min(CHUNK, levels[5][0].size), 99, dtype=np.int64)
    np.save(work / "level5-chunk0.npy", chunk)
    resumed = Book.load(build_book(5, 4, 5, jobs=1))
    assert np.count_nonzero(resumed.scores() == 99) > 0
    assert not work.exists()


def test_a_second_build_of_the_same_book_is_refused_at_once(tmp_path):
    """Two builds writing one work directory collided (a raw `[Errno 2] ... chunk15.tmp.npy`):
    while one holds the lock, `mallard book build` of that book exits 2 with one line."""
    work = tmp_path / "build-5x4-d3"
    work.mkdir()
    env = dict(os.environ, MALLARD_CACHE=str(tmp_path))
    with locks.hold(work / LOCK_FILE, "the first build"):
        started = time.monotonic()
        second = subprocess.run(mallard_command("book", "build", "--width", "5", "--height", "4",
                                                "--depth", "3"),
                                capture_output=True, text=True, env=env, timeout=120)
        assert time.monotonic() - started < 60
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr == (f"mallard: the book build's work directory {work} is in use by "
                             f"process {os.getpid()} ({work / LOCK_FILE})\n")
    assert list(work.iterdir()) == [work / LOCK_FILE]  # nothing written beside it


def test_build_book_rejects_bad_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLARD_CACHE", str(tmp_path))
    with pytest.raises(ValueError):
        build_book(5, 4, 25)
    with pytest.raises(ValueError):
        build_book(9, 7, 2)


def test_shipped_shallow_book_equals_search(book_solver):
    shipped = book_module.shipped_book(7, 6)
    assert shipped.depths == [0, 1, 2, 3, 4] and shipped.size > 500
    solver = Solver(hash_mb=64, book=book_module.bitbully_book())  # BitBully's book only
    rng = random.Random(4)
    keys, scores = shipped.keys(), shipped.scores()
    checked = 0
    for index in rng.sample(range(shipped.size), 40):
        position = _position_from_key(int(keys[index]))
        if position.moves > 3:
            continue  # deeper ones take seconds each without the shipped book
        solver.reset()
        assert solver.solve(position) == scores[index]
        checked += 1
    assert checked >= 5


def _position_from_key(key: int):
    """Rebuild a 7x6 position from its key (cur + mask): a column of h stones has key bits
    between 2^h - 1 (no stone of the side to move) and 2^(h+1) - 2."""
    game = Connect4Game()
    cur = mask = 0
    for column in range(7):
        bits = (key >> (column * 7)) & 0x7F
        height = (bits + 1).bit_length() - 1
        column_mask = (1 << height) - 1
        cur |= (bits - column_mask) << (column * 7)  # key - mask = cur in this column
        mask |= column_mask << (column * 7)
    moves = bin(mask).count("1")
    first = cur if moves % 2 == 0 else cur ^ mask
    second = mask ^ first
    return game.parse_position(_fen(first, second))


def test_default_book_merges_all_sources(bitbully):
    book = book_module.default_book(7, 6)
    assert book.depths == [0, 1, 2, 3, 4, 12]
    assert book.size == bitbully.size + book_module.shipped_book(7, 6).size
    assert book.lookup(GAME.start_position()) == 1
