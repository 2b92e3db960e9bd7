import pytest

from mallard.engines.connect4.book import bitbully_book
from mallard.engines.connect4.solver import Solver


@pytest.fixture(scope="session")
def bitbully():
    book = bitbully_book()
    assert book is not None, "the bitbully-databases package is a dependency"
    return book


@pytest.fixture(scope="session")
def book_solver(bitbully):
    return Solver(hash_mb=64, book=bitbully)
