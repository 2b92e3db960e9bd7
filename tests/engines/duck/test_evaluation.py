"""The evaluation is linear in its weights: the tuner's features, dotted with the weights, give
evaluate's score, and the weights block of the source is what weights_source writes."""

import random

import numpy as np
import pytest

from mallard.engines.duck import evaluation
from mallard.engines.duck.evaluation import (
    N_FEATURES,
    TERM_FEATURES,
    evaluate,
    features,
    weight_vector,
    weights_source,
)
from mallard.engines.duck.rules import DuckGame
from mallard.engines.duck.terms import (
    ALL_TERMS,
    TERM_ENDGAME_KING,
    TERM_KING_EXPOSURE,
    TERM_LONE_KING,
    TERM_MOBILITY,
    TERM_PAWNS,
)
from tests.engines.duck.conftest import fen_pieces


def _random_positions(count: int, seed: int) -> list:
    """Positions along random games (captures, promotions and lost kings included)."""
    rng = random.Random(seed)
    game = DuckGame()
    positions = []
    while len(positions) < count:
        position = game.start_position()
        for _ in range(rng.randrange(20, 160)):
            moves = position.legal_moves()
            if not moves or position.result() is not None:
                break
            position = position.play(rng.choice(moves))
            positions.append(position)
    return positions[:count]


@pytest.mark.parametrize("terms", [0, TERM_MOBILITY, TERM_KING_EXPOSURE, TERM_PAWNS,
                                   TERM_ENDGAME_KING, TERM_LONE_KING, ALL_TERMS])
def test_features_dotted_with_the_weights_are_the_evaluation(terms):
    weights = weight_vector()
    for column_term, columns in TERM_FEATURES.items():
        if not terms & column_term:
            weights[list(columns)] = 0
    row = np.zeros(N_FEATURES, dtype=np.int64)
    for position in _random_positions(400, seed=terms):
        state = position.state.copy()
        features(state, row)
        white = int(row @ weights)
        expected = white if position.side_to_move == 0 else -white
        assert evaluate(state, terms) == expected, position.fen()


def test_the_features_count_what_they_say():
    # 8/8/8/8/8/P7/P6k/K7: two white pawns on the a-file (one doubled; both isolated and passed),
    # kings in the corners
    state = DuckGame().parse_position("8/8/8/8/8/P7/P6k/K7 w - - 0 1").state.copy()
    row = np.zeros(N_FEATURES, dtype=np.int64)
    features(state, row)
    assert row[evaluation.F_MATERIAL] == 2  # pawns, White minus Black
    assert row[evaluation.F_MATERIAL + 1:evaluation.F_PLACEMENT].tolist() == [0, 0, 0, 0]
    assert row[evaluation.F_DOUBLED] == -1 and row[evaluation.F_ISOLATED] == -2
    assert row[evaluation.F_PASSED + 1] == 1 and row[evaluation.F_PASSED + 2] == 1
    # open lines: White's king on a1 sees b1-h1 and b2-h8 (a2 holds a pawn); Black's on h2 sees
    # g2-b2 (up to the pawn), h3-h8, h1, g3-b8 and g1
    white_open = 7 + 7
    black_open = 6 + 6 + 1 + 6 + 1
    assert row[evaluation.F_EXPOSURE] == black_open - white_open


def test_the_endgame_king_counts_steps_from_the_centre_as_the_pieces_go():
    """Centre steps: rank plus file steps to the nearest of d4, e4, d5, e5. Endgame steps: 0
    with 40 or more of knights, bishops (3), rooks (5) and queens (9), then one more for each 8
    less, 5 with none."""
    row = np.zeros(N_FEATURES, dtype=np.int64)
    game = DuckGame()

    def counted(fen):
        features(game.parse_position(fen).state.copy(), row)
        return int(row[evaluation.F_ENDGAME_KING])

    assert counted("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") == 0
    # White's king a1 is 6 steps out, Black's h2 5 (2 ranks, 3 files); nothing but pawns: 5
    assert counted("8/8/8/8/8/P7/P6k/K7 w - - 0 1") == (5 - 6) * 5
    # a rook and a queen (14): 40 - 14 = 26, ceil(26 / 8) = 4 endgame steps; kings e4 and a8
    assert counted("k7/8/8/8/4K3/8/8/RQ6 w - - 0 1") == (6 - 0) * 4
    # 39 of pieces is already a step in
    assert counted("k7/8/8/8/4K3/8/8/QQQqN3 b - - 0 1") == 6 * 1
    assert [evaluation.centre_steps(sq) for sq in (0x33, 0x44, 0x00, 0x77, 0x07, 0x23)] == \
        [0, 0, 6, 6, 6, 1]


def test_the_lone_king_counts_its_steps_from_the_centre_and_the_kings_nearness():
    """With one king alone and the other side more, the lone king's centre steps and 7 minus
    the kings' distance in king steps, for the stronger side; nothing otherwise. The evaluation
    is the features times the weights here too (random games seldom leave a king alone)."""
    row = np.zeros(N_FEATURES, dtype=np.int64)
    weights = weight_vector()
    game = DuckGame()

    def counted(fen):
        state = game.parse_position(fen).state.copy()
        features(state, row)
        white = int(row @ weights)
        assert evaluate(state, ALL_TERMS) == (white if fen.split()[1] == "w" else -white)
        return tuple(row[evaluation.F_LONE_KING:evaluation.F_LONE_KING + 2].tolist())

    # a rook against Black's king on h8 (6 steps out), White's on g1 (7 king steps away)
    assert counted("7k/8/8/8/8/8/8/R5K1 w - - 0 1") == (6, 0)
    # the kings closer: h8 and g6, 2 steps
    assert counted("7k/8/6K1/8/8/8/8/R7 b - - 0 1") == (6, 5)
    # a pawn against White's king on d5 (the centre), Black's on h1, 4 steps away
    assert counted("8/8/8/3K4/8/8/p7/7k b - - 0 1") == (0, -3)
    # both sides more than a king, or both kings alone, or a king taken: nothing
    assert counted("7k/7p/8/8/8/8/8/R5K1 w - - 0 1") == (0, 0)
    assert counted("7k/8/8/8/8/8/8/6K1 w - - 0 1") == (0, 0)
    assert counted("8/8/8/8/8/8/8/R5K1 b - - 0 1") == (0, 0)
    # so the stronger side gains LONE_KING per step the lone king is pushed out, per step nearer
    centre_weight, near_weight = evaluation.LONE_KING
    assert centre_weight > 0 and near_weight > 0


def test_the_source_block_is_what_weights_source_writes():
    source = open(evaluation.__file__).read()
    assert weights_source(weight_vector()) in source
    names: dict = {}
    exec(weights_source(weight_vector()), names)
    assert names["MATERIAL"] == evaluation.MATERIAL and names["PASSED"] == evaluation.PASSED
    assert names["PLACEMENT"] == evaluation.PLACEMENT
    assert names["ENDGAME_KING"] == evaluation.ENDGAME_KING
    assert names["LONE_KING"] == evaluation.LONE_KING


def test_weights_source_refuses_a_vector_of_another_length():
    with pytest.raises(ValueError, match=str(N_FEATURES)):
        weights_source([0] * 5)


def _pawn_structure_by_definition(fen: str) -> tuple:
    """The oracle, from the FEN text: per colour doubled, isolated, and passed pawns by the rank
    from the owner's side (a list of 8)."""
    pawns = {"P": [], "p": []}
    for square, char in fen_pieces(fen).items():
        if char in pawns:
            pawns[char].append(square)
    result = []
    for own, enemy, ahead in (("P", "p", 1), ("p", "P", -1)):
        files = [f for f, _ in pawns[own]]
        doubled = sum(max(0, files.count(f) - 1) for f in range(8))
        isolated = sum(1 for f in files if f - 1 not in files and f + 1 not in files)
        passed = [0] * 8
        for f, r in pawns[own]:
            if not any(abs(ef - f) <= 1 and (er - r) * ahead > 0 for ef, er in pawns[enemy]):
                passed[r if ahead == 1 else 7 - r] += 1
        result.append((doubled, isolated, passed))
    return tuple(result)


def test_the_pawn_structure_is_what_its_definition_counts():
    checked = 0
    for position in _random_positions(600, seed=7):
        found = evaluation.pawn_structure(position.state.copy())
        unpacked = tuple((found[3 * c], found[3 * c + 1],
                          [(found[3 * c + 2] >> (4 * rank)) & 15 for rank in range(8)])
                         for c in range(2))
        assert unpacked == _pawn_structure_by_definition(position.fen()), position.fen()
        checked += any(unpacked[c][0] or unpacked[c][1] for c in range(2))
    assert checked > 100  # positions with doubled or isolated pawns among them


def _mobility_by_definition(fen: str) -> list:
    """The oracle, from the FEN text: per kind (knight .. queen), White's squares reached minus
    Black's. A slider reaches along its lines up to and including the first piece; a knight its
    targets not holding a piece of its own colour."""
    # the duck is not a piece: the evaluation never reads it
    board = {square: char for square, char in fen_pieces(fen).items() if char != "*"}
    lines = {"b": [(1, 1), (1, -1), (-1, 1), (-1, -1)], "r": [(1, 0), (-1, 0), (0, 1), (0, -1)]}
    lines["q"] = lines["b"] + lines["r"]
    totals = [0, 0, 0, 0]
    for (file, rank), char in board.items():
        kind = char.lower()
        if kind not in "nbrq":
            continue
        reach = 0
        if kind == "n":
            for df, dr in ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)):
                target = board.get((file + df, rank + dr), "")
                if 0 <= file + df < 8 and 0 <= rank + dr < 8 and \
                        (not target or target.isupper() != char.isupper()):
                    reach += 1
        else:
            for df, dr in lines[kind]:
                f, r = file + df, rank + dr
                while 0 <= f < 8 and 0 <= r < 8:
                    reach += 1
                    if (f, r) in board:
                        break
                    f, r = f + df, r + dr
        totals["nbrq".index(kind)] += reach if char.isupper() else -reach
    return totals


def test_the_mobility_is_what_its_definition_counts():
    row = np.zeros(N_FEATURES, dtype=np.int64)
    positions = _random_positions(600, seed=11)
    positions.append(DuckGame().parse_position("Q6Q/8/8/8/8/8/8/Q3k1KQ w - - 0 1"))  # corners
    for position in positions:
        features(position.state.copy(), row)
        found = row[evaluation.F_MOBILITY:evaluation.F_MOBILITY + 4].tolist()
        assert found == _mobility_by_definition(position.fen()), position.fen()


def test_the_bitboard_primitives_against_brute_force():
    from mallard.engines.duck import bitboards

    rng = random.Random(5)
    words = [1 << b for b in range(64)] + [rng.getrandbits(64) | 1 << rng.randrange(64)
                                           for _ in range(500)]
    for word in words:
        signed = bitboards._signed(word)
        assert bitboards.lowest_index(signed) == (word & -word).bit_length() - 1
        assert bitboards.count(signed) == bin(word).count("1")
        assert bitboards.reverse(signed) == bitboards._signed(int(f"{word:064b}"[::-1], 2))


def test_slider_attacks_and_capturing_pawns_against_a_walk_of_the_board():
    """The capture generator's filters: the squares a slider's lines reach up to and including
    the first piece, and the pawns with a target diagonally ahead, found square by square."""
    from mallard.engines.duck import bitboards
    from mallard.engines.duck.board import BISHOP, QUEEN, ROOK

    rng = random.Random(8)
    lines = {ROOK: ((1, 0), (-1, 0), (0, 1), (0, -1)), BISHOP: ((1, 1), (1, -1), (-1, 1), (-1, -1))}
    lines[QUEEN] = lines[ROOK] + lines[BISHOP]
    for _ in range(3000):
        density = rng.choice((0.1, 0.3, 0.6, 0.9))
        occupied = sum(1 << b for b in range(64) if rng.random() < density)
        b = rng.randrange(64)
        occupied |= 1 << b
        kind = rng.choice((BISHOP, ROOK, QUEEN))
        walked = 0
        for df, dr in lines[kind]:
            f, r = b % 8 + df, b // 8 + dr
            while 0 <= f < 8 and 0 <= r < 8:
                walked |= 1 << (r * 8 + f)
                if occupied >> (r * 8 + f) & 1:
                    break
                f, r = f + df, r + dr
        found = bitboards.slider_attacks(b, kind, bitboards._signed(occupied))
        assert found == bitboards._signed(walked), (b, kind, hex(occupied))
        assert (bitboards.count(found)
                == bitboards.slider_reach(b, kind, bitboards._signed(occupied)))
        pawns = rng.getrandbits(64) & 0x00FFFFFFFFFFFF00  # never on the first or last rank
        targets = rng.getrandbits(64)
        for side, ahead in ((0, 1), (1, -1)):
            expected = sum(1 << p for p in range(64) if pawns >> p & 1 and any(
                0 <= p % 8 + df < 8 and targets >> (p + 8 * ahead + df) & 1 for df in (-1, 1)))
            got = bitboards.capturing_pawns(bitboards._signed(pawns), bitboards._signed(targets),
                                            side)
            assert got == bitboards._signed(expected), (side, hex(pawns), hex(targets))


def test_the_search_cache_of_evaluations_answers_what_evaluate_does():
    """`static_value` (the search's cached evaluation) against `evaluate`: positions met twice
    and slots shared by other positions (a small cache full many times over), the terms in the
    key, and the duck left out of it (the evaluation never reads it)."""
    from mallard.engines.duck import search_kernels as SK
    from mallard.engines.duck.board import S_DUCK

    ctx = np.zeros(SK.CTX_SIZE, dtype=np.int64)
    positions = _random_positions(3 * SK.EVAL_CACHE_SLOTS, seed=17)
    hits = 0
    for _ in range(2):
        for index, position in enumerate(positions):
            terms = ALL_TERMS if index % 3 else TERM_PAWNS
            ctx[SK.C_EVAL_TERMS] = terms
            state = position.state.copy()
            key = int(state[SK.S_KEY]) ^ terms
            slot = SK.C_EVAL_CACHE + 2 * (key & (SK.EVAL_CACHE_SLOTS - 1))
            hits += int(ctx[slot] ^ ctx[slot + 1]) == key
            assert SK.static_value(state, ctx) == evaluate(state, terms), position.fen()
            ctx[SK.C_EVAL_TERMS] = terms ^ TERM_MOBILITY
            assert SK.static_value(state, ctx) == evaluate(state, terms ^ TERM_MOBILITY)
            state[S_DUCK] = (state[S_DUCK] + 17) & 0x77
            assert SK.static_value(state, ctx) == evaluate(state, terms ^ TERM_MOBILITY)
    assert hits > 0  # some answers came from the cache
