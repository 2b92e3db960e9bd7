"""Shared data for the Duck Chess tests: the reference perft table and random-game helpers."""

import random

import pytest

from mallard.engines.duck.rules import DuckGame

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

# The published reference table (Fairy-Stockfish, checked with pyffish): FEN and perft 1, 2, 3.
PERFT_ROWS = [
    (START, [640, 379440, 249921262]),
    ("rnbqkb1r/ppp1*ppp/4pn2/3p2B1/3PP3/2N5/PPP2PPP/R2QKBNR b KQkq - 1 4",
     [746, 976828, 936508677]),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     [1371, 1771254, 2572846482]),
    ("r3k2r/1P4p1/8/2pP3*/8/8/6p1/R3K2R w KQkq c6 0 1", [1670, 2808810, 4429527084]),
    ("rnbqkbnr/ppp1p1pp/*7/8/3pPp2/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", [870, 713297, 657378022]),
    ("4k3/8/8/3*4/8/8/4P3/4K2R w K - 0 1", [944, 273760, 275813322]),
    ("4k3/8/8/8/8/8/4Q3/4K3 w - - 0 1", [1587, 450121]),
    ("k6*/bp6/1p6/1P6/8/8/8/4K3 w - - 0 1", [285, 31920]),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", [1510, 1940435]),
]


@pytest.fixture(scope="session")
def game():
    return DuckGame()


def random_positions(game, count, seed, max_plies=60):
    """Positions reached by random play from the reference FENs (every one distinct in kind)."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        position = game.parse_position(rng.choice(PERFT_ROWS)[0])
        for _ in range(rng.randrange(max_plies)):
            moves = position.legal_moves()
            if not moves:
                break
            position = position.play(rng.choice(moves))
        positions.append(position)
    return positions


def fen_pieces(fen: str) -> dict:
    """What the placement field of a FEN holds, read from its text (an oracle independent of
    the parser): {(file, rank): letter}, a1 = (0, 0), the duck as '*'."""
    pieces = {}
    for row_index, row in enumerate(fen.split()[0].split("/")):
        file = 0
        for char in row:
            if char.isdigit():
                file += int(char)
            else:
                pieces[(file, 7 - row_index)] = char
                file += 1
    return pieces
