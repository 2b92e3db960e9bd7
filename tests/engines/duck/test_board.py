"""The 0x88 ray tables, duck blocking, Zobrist keys and make/unmake, against plain geometry."""

import random

import chess
import numpy as np
import pytest

from mallard.engines.duck import kernels
from mallard.engines.duck.bitboards import board_sets
from mallard.engines.duck.board import (
    ALL_SQUARES,
    KIND_CASTLE,
    KIND_EN_PASSANT,
    MAX_MOVES,
    MAX_PLY,
    RAY_DIRECTION,
    RAY_DISTANCE,
    RAY_OFFSET,
    S_DEPTH,
    S_DUCK,
    S_KEY,
    S_KING,
    S_OCCUPIED,
    S_PAWNS,
    S_PLACEMENT,
    S_SIDE,
    S_WHITE,
    UNDO_SIZE,
    Z_DUCK,
    move_from,
    move_kind,
    move_to,
)
from mallard.engines.duck.evaluation import placement_sum
from tests.engines.duck.conftest import PERFT_ROWS, random_positions


def coordinates(sq):
    return sq & 7, sq >> 4


def geometric_ray(frm, to):
    """(unit step, length) when `to` is on a line from `frm` or a knight jump away, else None."""
    (f0, r0), (f1, r1) = coordinates(frm), coordinates(to)
    df, dr = f1 - f0, r1 - r0
    if (abs(df), abs(dr)) in ((1, 2), (2, 1)):
        return (df, dr), 1
    if (df, dr) == (0, 0) or not (df == 0 or dr == 0 or abs(df) == abs(dr)):
        return None
    length = max(abs(df), abs(dr))
    return (df // length, dr // length), length


def path_squares(frm, end):
    """Squares a move from `frm` passes through up to and including `end` (geometry only)."""
    ray = geometric_ray(frm, end)
    (sf, sr), length = ray
    f, r = coordinates(frm)
    if (abs(sf), abs(sr)) in ((1, 2), (2, 1)):
        return {end}
    return {16 * (r + sr * i) + f + sf * i for i in range(1, length + 1)}


def test_ray_tables_match_geometry():
    for frm in ALL_SQUARES:
        for to in ALL_SQUARES:
            if frm == to:
                continue
            ray = geometric_ray(frm, to)
            index = to - frm + RAY_OFFSET
            if ray is None:
                assert RAY_DIRECTION[index] == 0
                continue
            assert RAY_DIRECTION[index] != 0
            assert RAY_DISTANCE[index] == ray[1]
            # one code per direction: pairs share a code exactly when their unit steps agree
            for other in ALL_SQUARES:
                other_ray = geometric_ray(frm, other) if other != frm else None
                same = other_ray is not None and other_ray[0] == ray[0]
                assert (RAY_DIRECTION[other - frm + RAY_OFFSET] == RAY_DIRECTION[index]) == same


@pytest.mark.parametrize("seed", range(4))
def test_is_blocked_equals_path_geometry(game, seed):
    """A duck blocks a move exactly when it stands on the move's path
    (castling: between K and R)."""
    for position in random_positions(game, 10, seed):
        state = position.state.copy()
        buffer = np.empty(MAX_MOVES, dtype=np.int64)
        count = kernels.generate_piece_moves(state, buffer, 0, -1)
        empty = [sq for sq in ALL_SQUARES if state[sq] == 0]
        for move in buffer[:count]:
            frm, to = move_from(move), move_to(move)
            end = (frm + 3 if to > frm else frm - 4) if move_kind(move) == KIND_CASTLE else to
            path = path_squares(frm, end)
            for k in empty:
                assert kernels.is_blocked(move, k) == (k in path), (position.fen(), move, k)


@pytest.mark.parametrize("seed", range(4))
def test_generation_with_duck_is_duck_free_generation_filtered(game, seed):
    for position in random_positions(game, 10, seed):
        state = position.state.copy()
        free = np.empty(MAX_MOVES, dtype=np.int64)
        count = kernels.generate_piece_moves(state, free, 0, -1)
        for k in ALL_SQUARES:
            if state[k] != 0:
                continue
            ducked = np.empty(MAX_MOVES, dtype=np.int64)
            n = kernels.generate_piece_moves(state, ducked, 0, k)
            expected = [m for m in free[:count] if not kernels.is_blocked(m, k)]
            assert ducked[:n].tolist() == expected


@pytest.mark.parametrize("seed", range(4))
def test_capture_generation_is_every_move_onto_an_enemy_piece_or_en_passant(game, seed):
    """Quiescence's generator (bitboards): the moves whose target square holds an enemy piece,
    and en passant, in the order the full generation (the board walk) gives them."""
    checked = 0
    for position in random_positions(game, 300, seed, max_plies=150):
        state = position.state.copy()
        every = np.empty(MAX_MOVES, dtype=np.int64)
        count = kernels.generate_piece_moves(state, every, 0, -1)
        captures = np.empty(MAX_MOVES, dtype=np.int64)
        n = kernels.generate_captures(state, captures, 0)
        expected = [m for m in every[:count]
                    if state[move_to(m)] != 0 or move_kind(m) == KIND_EN_PASSANT]
        assert captures[:n].tolist() == expected, position.fen()
        assert all(state[move_to(m)] >> 3 != state[S_SIDE] for m in expected
                   if move_kind(m) != KIND_EN_PASSANT)
        checked += len(expected) > 1
    assert checked > 50  # positions with several captures to order


def crowded_fens(seed: int, count: int):
    """Boards 70% to 100% full of random pieces, nearly all of the side to move (all on a full
    board, but the other king): its pieces mostly block each other, so many positions have a
    move or two left, a few none at all (a fowling win)."""
    rng = random.Random(seed)
    fens = []
    for _ in range(count):
        king, enemy_king = rng.sample(range(64), 2)
        side = rng.choice("wb")
        squares = {king: "K" if side == "w" else "k", enemy_king: "k" if side == "w" else "K"}
        density = rng.choice((0.7, 0.9, 1.0, 1.0))
        for cell in range(64):
            if cell in squares or rng.random() > density:
                continue
            piece = rng.choice("PPPNBRQ")
            if piece == "P" and cell // 8 in (0, 7):
                piece = rng.choice("NBRQ")
            own = density == 1.0 or rng.random() < 0.9
            squares[cell] = piece if (side == "w") == own else piece.lower()
        board = chess.Board(None)
        for cell, piece in squares.items():
            board.set_piece_at(cell, chess.Piece.from_symbol(piece))
        fens.append(f"{board.board_fen()} {side} - - 0 1")
    return fens


@pytest.mark.parametrize("seed", range(3))
def test_has_piece_move_agrees_with_generation(game, seed):
    """Against the generator: positions of play, two where only one or two moves are left, and
    crowded boards, where whole sides have no move (the question is a fowling win)."""
    positions = random_positions(game, 40, seed)
    edge = [game.parse_position(fen) for fen in (
        "kb6/pp6/PP6/8/8/8/8/4K3 b - - 0 1",        # only a7xb6 and the bishop's moves
        "k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1")]     # only Kb8, where the duck stands now
    crowded = [game.parse_position(fen) for fen in crowded_fens(seed, 1500)]
    counts = []
    for position in positions + edge + crowded:
        state = position.state.copy()
        scratch = np.empty(MAX_MOVES, dtype=np.int64)
        counts.append(kernels.generate_piece_moves(state, scratch, 0, -1))
        assert kernels.has_piece_move(state) == (counts[-1] > 0), position.fen()
    # the crowded boards do ask for sides without a move, and with one or two
    assert counts.count(0) >= 3 and counts.count(1) + counts.count(2) >= 50
    lost = edge[0].state.copy()
    lost[S_KING + 1] = -1
    assert not kernels.has_piece_move(lost)


@pytest.mark.parametrize("seed", range(3))
def test_make_unmake_restores_and_keys_stay_incremental(game, seed):
    """The key, the occupied, White and pawn sets and the material-and-placement sum kept by
    make/unmake equal those computed afresh from the board (castling, en passant, promotions
    and captures among the moves)."""
    for position in random_positions(game, 8, seed) + [game.parse_position(fen) for fen, _ in
                                                        PERFT_ROWS]:
        state = position.state.copy()
        state[S_DEPTH] = 0
        before = state.copy()
        undo = np.zeros(MAX_PLY * UNDO_SIZE, dtype=np.int64)
        moves = position.legal_moves()
        for move in moves[:: max(1, len(moves) // 60)]:
            kernels.make_move(state, undo, move)
            assert state[S_KEY] == kernels.compute_key(state)
            assert kernels.full_key(state) == state[S_KEY] ^ Z_DUCK[state[S_DUCK]]
            assert (state[S_OCCUPIED], state[S_WHITE], state[S_PAWNS]) == board_sets(state)
            assert state[S_PLACEMENT] == placement_sum(state)
            kernels.pop_move(state, undo)
            assert np.array_equal(state, before)


def test_duck_key_separates_positions_that_differ_only_by_the_duck(game):
    a = game.parse_position("4k3/8/8/3*4/8/8/4P3/4K2R w K - 0 1")
    b = game.parse_position("4k3/8/8/4*3/8/8/4P3/4K2R w K - 0 1")
    assert a.state[S_KEY] == b.state[S_KEY]  # the search's key ignores the duck
    assert a.key != b.key                    # repetition does not
