import random

import numpy as np
import pytest

from engines.connect4 import book as book_module
from engines.connect4 import kernels as K
from engines.connect4.book import Book, build_book, enumerate_levels
from engines.connect4.rules import Connect4Game
from engines.connect4.solver import Solver

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


def test_book_values_equal_search_values(bitbully):
    solver = Solver(hash_mb=64)
    rng = random.Random(12)
    checked = 0
    while checked < 12:
        position = GAME.start_position()
        for _ in range(12):
            candidates = [c for c in position.legal_moves() if position.play(c).winner is None]
            position = position.play(rng.choice(candidates))
        if K.can_win_next(np.uint64(position.cur), np.uint64(position.mask), solver.ctx):
            continue
        solver.reset()
        assert bitbully.lookup(position) == solver.solve(position), position.sequence()
        checked += 1


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
        key = min(position.key(), int(K.mirror_key(np.uint64(position.key()), K.make_context(4, 4))))
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
    chunk = np.full(min(book_module.CHUNK, levels[5][0].size), 99, dtype=np.int64)
    np.save(work / "level5-chunk0.npy", chunk)
    resumed = Book.load(build_book(5, 4, 5, jobs=1))
    assert np.count_nonzero(resumed.scores() == 99) > 0
    assert not work.exists()


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
