"""The Duck Chess engine: tactics with the right mate scores, legal moves whose duck square
delivers the value the search claims, limits and stopping."""

import threading
import time

import numpy as np
import pyffish
import pytest

from mallard.engines.base import Limits
from mallard.engines.driver import HELPERS_FROM_DEPTH
from mallard.engines.duck import search_kernels as SK
from mallard.engines.duck.evaluation import MATERIAL
from mallard.engines.duck.rules import DEV_OPTIONS, SELECTIVE_PIECES
from mallard.engines.duck.searcher import (
    DEFAULT_SELECTIVITY,
    SELECTIVITY_BITS,
    DuckRoot,
    DuckSearcher,
    SearchBuffers,
    enumeration_value,
    root_state,
)
from mallard.engines.search_common import INF
from tests.engines.duck.conftest import fen_pieces, random_positions


@pytest.fixture
def searcher(game):
    return DuckSearcher(game, hash_mb=16)


FORCED_KING_CAPTURES = pytest.mark.parametrize("fen,best,mate,plain_depth", [
    # the king can be taken at once
    ("4k3/8/8/8/8/8/8/4RK1* w - - 0 1", "e1e8", 1, 1),
    # a knight check cannot be blocked by the duck: Nc7 and Nxa8 next
    ("kn6/pp6/8/3N4/8/8/8/7K w - - 0 1", "d5c7", 2, 3),
    # "reserving": the duck on e7 blocks the rook now, and must leave e7 on Black's turn, so
    # Black cannot use it to block Re6xe8
    ("3bkb2/3r1r2/R7/8/8/8/8/7K w - - 0 1", "a6e6,e6e7", 2, 3),
    # two lines on the king (and knight and bishop on its flight squares): one duck blocks one
    ("k6R/1p1N4/8/8/8/4B3/8/R5K1 b - - 0 1", None, -1, 2),
])


@FORCED_KING_CAPTURES
@pytest.mark.parametrize("threads,selective", [(1, True), (2, True), (1, False)])
def test_forced_king_captures_get_mate_scores(game, searcher, fen, best, mate, plain_depth,
                                              threads, selective):
    """Also with a helper thread writing the same table (a ply deeper), and with every
    selective piece of the search off."""
    searcher.set_threads(threads)
    for piece in SELECTIVITY_BITS:
        searcher.set_selective(piece, selective)
    position = game.parse_position(fen)
    result = searcher.search(position, Limits(depth=4))
    assert result.score.kind == "mate" and result.score.value == mate
    if best:
        assert position.format_move(result.best_move).startswith(best)


def test_every_selective_piece_is_on_and_has_its_own_developer_switch(game):
    """The engine searches with every piece on; each developer option switches one alone."""
    assert sorted(SELECTIVITY_BITS) == sorted(piece for _, piece in SELECTIVE_PIECES)
    searcher = DuckSearcher(game, hash_mb=1)
    assert searcher.selectivity == DEFAULT_SELECTIVITY == sum(SELECTIVITY_BITS.values())
    assert [option.name for option in DEV_OPTIONS] == [name for name, _ in SELECTIVE_PIECES]
    for option, (_, piece) in zip(DEV_OPTIONS, SELECTIVE_PIECES):
        assert option.type == "check" and option.default is True
        option.apply(searcher, False)
        assert searcher.selectivity == DEFAULT_SELECTIVITY & ~SELECTIVITY_BITS[piece]
        option.apply(searcher, True)
        assert searcher.selectivity == DEFAULT_SELECTIVITY


@FORCED_KING_CAPTURES
def test_the_full_enumeration_proves_the_same_forced_king_captures(game, fen, best, mate,
                                                                   plain_depth):
    plain, _ = enumeration_value(game.parse_position(fen), plain_depth, False, 0)
    assert plain == (30000 - (2 * mate - 1) if mate > 0 else -(30000 - 2 * -mate))


def test_one_line_on_the_king_is_blocked_by_the_duck(game, searcher):
    position = game.parse_position("k7/1p6/8/8/8/8/8/R5K1 b - - 0 1")
    result = searcher.search(position, Limits(depth=3))
    assert result.score.kind == "cp"
    after = position.play(result.best_move)
    assert after.duck is not None and after.duck & 7 == 0  # the duck stands on the a-file
    assert pyffish.legal_moves("duck", after.fen(), [])  # and the game goes on


def test_search_returns_pyffish_legal_moves_from_random_positions(game):
    searcher = DuckSearcher(game, hash_mb=16)
    for position in random_positions(game, 30, 7):
        if position.result() is not None:
            assert searcher.search(position, Limits(depth=2)).best_move is None
            continue
        result = searcher.search(position, Limits(depth=3))
        text = position.format_move(result.best_move)
        assert text in pyffish.legal_moves("duck", position.fen(), [])
        fen = position.fen()
        for move in result.pv:  # the whole PV is a legal line with duck squares
            assert position.format_move(move) in pyffish.legal_moves("duck", fen, [])
            fen = pyffish.get_fen("duck", fen, [position.format_move(move)])
            position = position.play(move)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_duck_square_played_delivers_the_searched_value(game, depth):
    """The value of the full move played (piece and duck), by plain enumeration one ply less,
    is the root value: the duck goes where the exception search said it should. From depth 2
    on, the principal variation's replies are searched with their duck fixed (`fixed_child`),
    which chooses that square."""
    searcher = DuckSearcher(game, hash_mb=4, quiescence=False)
    checked = 0
    for position in random_positions(game, 25, 11 + depth):
        if position.result() is not None:
            continue
        searcher.clear()
        result = searcher.search(position, Limits(depth=depth))
        after = position.play(result.best_move)
        root = _raw(result.score)
        if after.result() is not None:
            continue
        value, _ = enumeration_value(after, depth - 1, False, 0)
        assert -value == root, (position.fen(), position.format_move(result.best_move))
        checked += 1
    assert checked >= 10


def _raw(score):
    if score.kind == "cp":
        return score.value
    return 30000 - (2 * score.value - 1) if score.value > 0 else -(30000 - 2 * -score.value)


def test_node_limit_and_depth_limit(game, searcher):
    position = game.start_position()
    result = searcher.search(position, Limits(depth=3))
    assert result.depth == 3
    limited = searcher.search(position, Limits(nodes=5000))
    assert limited.best_move is not None and limited.nodes < 5000 + 4096


@pytest.mark.parametrize("threads", [1, 2])
def test_stop_flag_ends_an_infinite_search_quickly(game, searcher, threads):
    """With a helper thread too: it is stopped and joined before the answer."""
    searcher.set_threads(threads)
    position = game.parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    searcher.search(position, Limits(depth=1))  # compiled
    flag = np.zeros(1, dtype=np.int64)
    results = []
    helpers_started = threading.Event()  # helpers start once depth HELPERS_FROM_DEPTH is done

    def on_info(info):
        if info.depth is not None and info.depth >= HELPERS_FROM_DEPTH:
            helpers_started.set()

    thread = threading.Thread(target=lambda: results.append(
        searcher.search(position, Limits(infinite=True), flag, on_info)))
    thread.start()
    assert helpers_started.wait(30)
    time.sleep(0.3)
    flag[0] = 1
    stopped_at = time.perf_counter()
    thread.join(5)
    assert not thread.is_alive()
    assert time.perf_counter() - stopped_at < 0.2
    assert results[0].best_move is not None and results[0].stopped
    if threads > 1:  # every thread searched, and everyone's nodes are counted
        assert results[0].nodes > searcher.buffers.nodes > 0
        assert all(helper.stop[0] for helper in searcher.helpers)
        # one record of the positions threads are in, every mark taken back when they stopped
        assert all(helper.busy is searcher.buffers.busy for helper in searcher.helpers)
        assert searcher.buffers.ctx[SK.C_BUSY_MASK] == SK.BUSY_SLOTS - 1
        assert not searcher.buffers.busy.any()


def test_a_table_entry_torn_by_two_writers_answers_for_neither(game):
    """Threads write the four words of an entry without a lock: a slot holding words of two
    stores must not answer for either position."""
    searcher = DuckSearcher(game, hash_mb=1)
    tt, ctx = searcher.buffers.tt, searcher.buffers.ctx
    key = np.int64(0x5DEECE66D1234)
    other = key + np.int64(ctx[SK.C_TT_MASK] + 1)  # the same bucket
    slot = SK._slot(ctx, key)
    SK._store(tt, ctx, slot, key, 0, 5, 1234, 17, 3, 20, -1, -100, 100)
    assert SK.probe(tt, ctx, key) == (1234, 20, -1)
    first = tt[slot:slot + SK.TT_WORDS].copy()
    SK._store(tt, ctx, slot, other, 0, 6, 4321, -40, -50, 33, 34, -100, 100)
    assert SK.probe(tt, ctx, other) == (4321, 33, 34)
    for word in range(1, SK.TT_WORDS):  # the second store's key with one word of the first
        torn = tt[slot:slot + SK.TT_WORDS].copy()
        torn[word] = first[word]
        tt[slot:slot + SK.TT_WORDS] = torn
        assert SK.probe(tt, ctx, other) == (0, -1, -1) and SK.probe(tt, ctx, key) == (0, -1, -1)


def test_a_bucket_keeps_the_deeper_entry_and_the_latest_one(game):
    """A shallower result goes to the bucket's second entry while the first holds a deeper one
    of this search, so a window only the shallower result resolves is still answered; a new
    search may replace the deeper entry."""
    searcher = DuckSearcher(game, hash_mb=1)
    tt, ctx = searcher.buffers.tt, searcher.buffers.ctx
    key = np.int64(0x5DEECE66D1234)
    other = key + np.int64(ctx[SK.C_TT_MASK] + 1)  # the same bucket

    def store(position, depth, move, score):
        at = SK._replacement(tt, ctx, position, depth)
        SK._store(tt, ctx, at, position, 0, depth, move, score, score, -1, -1, -100, 100)
        return at

    slot = SK._slot(ctx, key)
    assert store(key, 8, 1111, 150) == slot  # a lower bound at depth 8
    assert store(other, 3, 2222, 17) == slot + SK.TT_WORDS
    assert SK.probe(tt, ctx, key)[0] == 1111 and SK.probe(tt, ctx, other)[0] == 2222
    assert SK._table_answer(tt, ctx, key, 0, 4, 200, 201)[0] is False  # 150 is not >= 201
    assert store(key, 4, 3333, 300) == slot + SK.TT_WORDS  # the other position gives way
    answered, move, score = SK._table_answer(tt, ctx, key, 0, 4, 200, 201)[:3]
    assert answered and (move, score) == (3333, 300)
    assert SK.probe(tt, ctx, key)[0] == 1111  # the deeper entry orders the moves
    searcher.buffers.next_generation()
    assert store(other, 1, 4444, 0) == slot
    assert SK.probe(tt, ctx, other)[0] == 4444 and SK.probe(tt, ctx, key)[0] == 3333


def test_hashfull_counts_what_the_running_search_stored(game):
    """`hashfull` samples the entries of the current search's generation: a search fills part
    of a small table, and the next one starts from zero though the old entries stay."""
    searcher = DuckSearcher(game, hash_mb=1)
    searcher.search(game.start_position(), Limits(depth=6))
    root = DuckRoot(searcher.buffers, game.start_position())
    filled = root.hashfull()
    assert 0 < filled <= 1000
    searcher.buffers.next_generation()
    assert root.hashfull() == 0 and searcher.buffers.tt.any()


def test_the_principal_variation_goes_past_a_move_the_duck_now_blocks(game):
    """A principal-variation node remembers the move it found with the duck first tried there;
    when its duck went elsewhere in the end, that move may be blocked, and the line goes on with
    the table's move instead of stopping (at depth 7 from the start it stopped after 2 moves)."""
    searcher = DuckSearcher(game, hash_mb=64)
    result = searcher.search(game.start_position(), Limits(depth=7))
    assert len(result.pv) >= 5
    position = game.start_position()
    for move in result.pv:
        assert move in position.legal_moves()
        position = position.play(move)


def test_a_thread_alone_defers_nothing_it_is_in_itself(game):
    """A duck position can come back on its own path (here kings step to and fro): with
    ABDADA's marks on and no other thread, the search must be the one-thread search, move for
    move and node for node (a thread once deferred its own marks: 1.2 times the nodes here).
    The fixed-duck nodes keep their one-thread rule (`table_shared`), which is not the marks'."""
    position = game.parse_position("8/2k5/3p4/p2P1p2/P2P1P2/8/3K4/8 w - - 0 40")
    searched = {}
    for shared in (False, True):
        buffers = SearchBuffers(16)
        buffers.start(selectivity=DEFAULT_SELECTIVITY, shared=shared, table_shared=False)
        moves = np.array(position.piece_moves(), dtype=np.int64)
        values, ducks = np.zeros_like(moves), np.zeros_like(moves)
        buffers.root(root_state(position), 14, -INF, INF, moves, values, ducks)
        searched[shared] = (values.tolist(), ducks.tolist(), buffers.nodes)
        if shared:
            assert not buffers.busy.any()  # every mark taken back
    assert searched[True] == searched[False]


def test_finished_game_has_no_move(game, searcher):
    result = searcher.search(game.parse_position("k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1"))
    assert result.best_move is None and result.score.value == 0



def _most_blocking_square_in_python(state, old_duck) -> int:
    """The oracle: the searcher's former pure-Python count over the same move generator."""
    from mallard.engines.duck import kernels
    from mallard.engines.duck.board import MAX_MOVES

    buffer = np.empty(MAX_MOVES, dtype=np.int64)
    count = kernels.generate_piece_moves(state, buffer, 0, -1)
    best, best_blocked = -1, -1
    for rank in range(8):
        for file in range(8):
            square = rank * 16 + file
            if state[square] != 0 or square == old_duck:
                continue
            blocked = sum(1 for move in buffer[:count] if kernels.is_blocked(int(move), square))
            if blocked > best_blocked:
                best, best_blocked = square, blocked
    return best


def test_the_most_blocking_duck_square_kernel_matches_the_python_count(game):
    from mallard.engines.duck import kernels
    from mallard.engines.duck.board import UNDO_SIZE
    from mallard.engines.duck.searcher import root_state

    checked = 0
    for position in random_positions(game, 40, 5):
        if position.result() is not None:
            continue
        for piece in position.piece_moves()[:3]:  # the state the searcher places a duck in
            state = root_state(position)
            kernels.push_piece_move(state, np.zeros(2 * UNDO_SIZE, dtype=np.int64), int(piece))
            assert kernels.most_blocking_square(state, position.duck) == \
                _most_blocking_square_in_python(state, position.duck), position.fen()
            checked += 1
    assert checked > 60


# the piece values loses_to_recapture weighs with: the evaluation's material, whatever the fit
PIECE_WORTH = dict(zip("pnbrq", MATERIAL))


def test_losing_capture_pruning_knows_who_takes_back_as_pyffish_does(game):
    """`loses_to_recapture` against pyffish's move generator: after the capture (any duck
    square: none blocks a pawn or a knight), the opponent's legal moves onto the square decide."""
    from mallard.engines.duck.board import KIND_EN_PASSANT, MOVE_KIND_SHIFT, MOVE_PROMO_SHIFT

    seen = {True: 0, False: 0}
    for position in random_positions(game, 60, 23):
        if position.result() is not None:
            continue
        fen = position.fen()
        board = {"abcdefgh"[file] + str(rank + 1): char
                 for (file, rank), char in fen_pieces(fen).items()}
        full_moves = pyffish.legal_moves("duck", fen, [])
        for move in position.piece_moves():
            move = int(move)
            text = position.format_move(move).split(",")[0]
            mover, target = board[text[:2]], board.get(text[2:4], "*")
            if target in "*" or (move >> MOVE_KIND_SHIFT) & 3 == KIND_EN_PASSANT:
                continue
            after = pyffish.get_fen("duck", fen,
                                    [next(m for m in full_moves if m.startswith(text))])
            takers = [board[m[:2]] for m in pyffish.legal_moves("duck", after, [])
                      if m[2:4] == text[2:4] and board.get(m[:2], "").lower() in ("p", "n")]
            cheapest = min((PIECE_WORTH[taker.lower()] for taker in takers), default=0)
            expected = (cheapest > 0 and mover.lower() not in "pk" and target.lower() != "k"
                        and (move >> MOVE_PROMO_SHIFT) & 7 == 0
                        and PIECE_WORTH[mover.lower()] > PIECE_WORTH[target.lower()] + cheapest)
            assert SK.loses_to_recapture(position.state.copy(), move) == expected, (fen, text)
            seen[expected] += 1
    assert seen[True] >= 10 and seen[False] >= 50, seen


# a middle game with captures everywhere, some of them defended by pawns and knights
BUSY_CENTRE = "r1bqkb1r/ppp2ppp/2n2n2/3pp3/3PP3/2N2N2/PPP2PPP/R1BQKB1R w KQkq - 0 5"


# The quiescence pieces are held to the quiescence nodes, which they prune: the tree above
# them grows or shrinks as the values they return change (with the recaptures piece here, since
# the root's late-move reductions, 43,828 nodes against 42,539 in all, of them 37,399
# quiescence nodes against 40,716)
@pytest.mark.parametrize("piece", ["losing", "recaptures", "razor"])
def test_a_pruning_piece_shrinks_the_search(game, piece):
    position = game.parse_position(BUSY_CENTRE)
    in_quiescence = piece in ("losing", "recaptures")
    nodes = {}
    for on in (False, True):
        searcher = DuckSearcher(game, hash_mb=16)
        searcher.set_selective(piece, on)
        searched = searcher.search(position, Limits(depth=5)).nodes
        nodes[on] = int(searcher.buffers.ctx[SK.C_QNODES]) if in_quiescence else searched
    assert nodes[True] < nodes[False]


def test_razoring_hands_a_hopeless_node_to_its_quiescence_search(game):
    """Black to move, a rook and pawns against a whole army, nothing to take: at depth 1 and 2
    in a null window above its evaluation by more than the margin, a razored node is its
    quiescence search, value and duck squares alike, and one node more; at depth 3, or with the
    window within the margin, razoring leaves the node to its moves."""
    position = game.parse_position("r3k3/pppp1ppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQq - 0 1")

    def node(selectivity, depth, alpha):
        buffers = SearchBuffers(16)
        buffers.start(selectivity=selectivity)
        state = root_state(position)
        args = (state, buffers.undo, buffers.moves, buffers.order, buffers.ex, buffers.ctx)
        if depth == 0:
            buffers.ctx[SK.C_QUIESCENCE_START] = 1
            value = SK.quiescence(*args, buffers.stop, 1, alpha, alpha + 1)
        else:
            value = SK.search(*args, buffers.tt, buffers.busy, buffers.stop, 1, depth, alpha,
                              alpha + 1)
        ctx = buffers.ctx
        return int(value), int(ctx[SK.C_RX]), int(ctx[SK.C_RE]), buffers.nodes

    buffers = SearchBuffers(16)
    buffers.start()
    static = int(SK.static_value(root_state(position), buffers.ctx))
    assert static < -2000
    razor = SK.SELECT_RAZOR
    assert SK.RAZOR_MAX_DEPTH == 2
    for depth in (1, 2):
        alpha = static + SK.RAZOR_MARGIN * depth + 400
        value, rx, re, nodes = node(razor, depth, alpha)
        q_value, q_rx, q_re, q_nodes = node(0, 0, alpha)
        assert value <= alpha
        assert (value, rx, re) == (q_value, q_rx, q_re)
        assert nodes == q_nodes + 1
        assert node(0, depth, alpha)[3] > nodes  # the full node searches more
    alpha = static + SK.RAZOR_MARGIN * 3 + 400
    assert node(razor, 3, alpha)[3] > node(0, 0, alpha)[3] + 1  # a ply too deep: searched
    # within the margin (at depth 1, whose children razoring never touches): its moves
    alpha = static + SK.RAZOR_MARGIN - 50
    assert node(razor, 1, alpha) == node(0, 1, alpha)


def test_quiescence_recaptures_take_only_on_the_last_square_from_the_third_ply(game):
    """White's knight has just taken on a7 and Black's c-pawn can take the queen on d4, which
    no duck square stops. From the third quiescence ply on, with the piece on, only a7 may be
    taken on: Black stands pat; a ply earlier it takes the queen."""
    from mallard.engines.duck.kernels import push_piece_move

    position = game.parse_position("4k3/p7/8/1Np5/3Q4/8/8/4K3 w - - 0 1")
    capture = next(int(m) for m in position.piece_moves()
                   if position.format_move(int(m)).startswith("b5a7"))

    def quiescence(selectivity, plies_in):
        buffers = SearchBuffers(16)
        buffers.start(selectivity=selectivity)
        state = root_state(position)
        push_piece_move(state, buffers.undo, capture)
        buffers.ctx[SK.C_QUIESCENCE_START] = 4 - plies_in
        value = SK.quiescence(state, buffers.undo, buffers.moves, buffers.order, buffers.ex,
                              buffers.ctx, buffers.stop, 4, -3000, 3000)
        return int(value), int(SK.static_value(state, buffers.ctx))

    recaptures = SK.SELECT_RECAPTURES
    assert SK.RECAPTURES_FROM == 3
    narrowed, black_stands = quiescence(recaptures, 3)
    assert narrowed == black_stands
    taken, _ = quiescence(recaptures, 2)
    assert taken > black_stands + 500
    assert taken == quiescence(0, 3)[0]


def test_a_move_blocked_on_every_open_square_is_not_searched(game):
    """With the common score at beta, only the listed squares below beta are open: a move the
    duck blocks on all of them cannot change the node, one free on any of them can."""
    position = game.parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    moves = {position.format_move(int(m))[:4]: int(m) for m in position.piece_moves()}
    f3, e4 = 0x25, 0x34
    ex = np.full(SK.EX_STRIDE, -1, dtype=np.int64)
    SK._open_list(ex, 0)
    SK._link(ex, 0, f3, SK.NO_MOVE, 0)
    SK._link(ex, 0, e4, 80, moves["e2e4"])  # above beta: not open

    def matters(move, common=100, beta=50):
        return SK._can_matter(ex, 0, common, beta, moves[move])

    assert not matters("g1f3") and not matters("f2f3")
    assert matters("e2e4") and matters("g2g3")
    assert matters("g1f3", common=40)  # every unlisted square is open
    SK._link(ex, 0, 0x24, 20, 0)  # e3 open too: f2f3 is free there
    assert matters("f2f3") and matters("g1f3")


def test_a_quiescence_node_without_a_piece_move_is_a_fowling_win(game):
    """On crowded boards (`test_board.crowded_fens`) some sides have no piece move at all, some
    only a capture or two. A quiescence node below beta is then won outright (MATE - ply) when
    the generator finds no piece move (`kernels.generate_piece_moves`, the oracle here), and is
    not when it finds one, whether or not any of them takes; at the quiescence ply limit too,
    where it takes no capture."""
    from mallard.engines.duck import kernels
    from mallard.engines.duck.board import MAX_MOVES
    from tests.engines.duck.test_board import crowded_fens

    buffers = SearchBuffers(16)
    scratch = np.empty(MAX_MOVES, dtype=np.int64)
    ply, seen = 3, {"none": 0, "moves": 0}
    for fen in crowded_fens(7, 400):
        state = root_state(game.parse_position(fen))
        move_count = kernels.generate_piece_moves(state.copy(), scratch, 0, -1)
        seen["none" if move_count == 0 else "moves"] += 1
        for limit in (ply + 2, ply):  # crowded: many captures, so two plies of them at most
            buffers.start(selectivity=0, quiescence_ply_limit=limit)
            buffers.ctx[SK.C_QUIESCENCE_START] = ply
            value = int(SK.quiescence(state, buffers.undo, buffers.moves, buffers.order,
                                      buffers.ex, buffers.ctx, buffers.stop, ply, -INF, INF))
            if move_count == 0:
                assert value == SK.MATE - ply, (fen, limit)
            else:  # a king taken is MATE - ply - 1 at best
                assert value != SK.MATE - ply, (fen, limit)
    assert seen["none"] >= 3 and seen["moves"] >= 100
