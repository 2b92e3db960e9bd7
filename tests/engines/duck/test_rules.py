"""Hand-made positions for each special rule, each also checked against pyffish."""

import pyffish
import pytest

from mallard.engines.base import MoveError
from mallard.engines.duck.board import S_EP


def legal(position):
    return {position.format_move(m) for m in position.legal_moves()}


def assert_same_as_pyffish(position):
    assert legal(position) == set(pyffish.legal_moves("duck", position.fen(), []))


def play(position, *texts):
    return position.play_text(texts)


def test_first_move_places_the_duck_anywhere_empty_even_on_the_vacated_square(game):
    start = game.start_position()
    moves = legal(start)
    assert len(moves) == 640 and start.duck is None
    assert "e2e4,e4e2" in moves          # the square just left
    assert "e2e4,e4e4" not in moves      # the square just taken
    assert "e2e4,e4e7" not in moves      # occupied
    after = play(start, "e2e4,e4d5")
    assert after.fen() == "rnbqkbnr/pppppppp/8/3*4/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def test_the_duck_must_move(game):
    position = game.parse_position("4k3/8/8/3*4/8/8/4P3/4K2R w K - 0 1")
    assert not any(m.endswith("d5") for m in legal(position))
    with pytest.raises(MoveError, match="must move"):
        position.parse_move("e1d1,d1d5")


def test_castling_through_and_into_attack_is_legal(game):
    # the black rooks attack f1 and g1; no check in duck chess
    position = game.parse_position("5rr1/4k3/8/8/8/8/8/4K2R w K - 0 1")
    moves = legal(position)
    assert "e1g1,g1e1" in moves and "e1g1,g1h1" in moves
    assert "e1g1,g1f1" not in moves and "e1g1,g1g1" not in moves  # the landing squares
    assert_same_as_pyffish(position)
    castled = play(position, "e1g1,g1h1")
    assert castled.fen() == "5rr1/4k3/8/8/8/8/8/5RK* b - - 1 1"


@pytest.mark.parametrize("duck,king_side,queen_side", [
    ("f1", False, True), ("g1", False, True), ("d1", True, False), ("c1", True, False),
    ("b1", True, False),  # only the rook passes b1, and the duck still blocks it
    ("h2", True, True),
])
def test_duck_between_king_and_rook_blocks_castling(game, duck, king_side, queen_side):
    rank1 = ["R", ".", ".", ".", "K", ".", ".", "R"]
    rank2 = ["."] * 8
    target = rank1 if duck[1] == "1" else rank2
    target["abcdefgh".index(duck[0])] = "*"

    def compress(cells):
        out, run = "", 0
        for cell in cells:
            if cell == ".":
                run += 1
                continue
            out += (str(run) if run else "") + cell
            run = 0
        return out + (str(run) if run else "")

    fen = f"r3k2r/8/8/8/8/8/{compress(rank2)}/{compress(rank1)} w KQkq - 0 1"
    position = game.parse_position(fen)
    pieces = {position.format_move(m).split(",")[0] for m in position.legal_moves()}
    assert ("e1g1" in pieces) == king_side
    assert ("e1c1" in pieces) == queen_side
    assert_same_as_pyffish(position)


def test_sliders_stop_at_the_duck_and_knights_jump_it(game):
    position = game.parse_position("4k3/8/8/8/R2*3r/8/8/1N2K3 w - - 0 1")
    pieces = {position.format_move(m).split(",")[0] for m in position.legal_moves()}
    assert "a4c4" in pieces and "a4d4" not in pieces and "a4h4" not in pieces
    assert "b1c3" in pieces and "b1d2" in pieces
    duck_on_knight_target = game.parse_position("4k3/8/8/8/8/2*5/8/1N2K3 w - - 0 1")
    pieces = {duck_on_knight_target.format_move(m).split(",")[0]
              for m in duck_on_knight_target.legal_moves()}
    assert "b1c3" not in pieces and "b1a3" in pieces
    assert_same_as_pyffish(position)


@pytest.mark.parametrize("duck,single,double", [("e3", False, False), ("e4", True, False)])
def test_duck_blocks_pawn_pushes(game, duck, single, double):
    fen = {"e3": "4k3/8/8/8/8/4*3/4P3/4K3 w - - 0 1",
           "e4": "4k3/8/8/8/4*3/8/4P3/4K3 w - - 0 1"}[duck]
    position = game.parse_position(fen)
    pieces = {position.format_move(m).split(",")[0] for m in position.legal_moves()}
    assert ("e2e3" in pieces) == single
    assert ("e2e4" in pieces) == double
    assert_same_as_pyffish(position)


def test_duck_on_the_passed_square_prevents_en_passant(game):
    position = game.parse_position("4k3/8/8/8/5p2/8/4P3/4K3 w - - 0 1")
    open_ep = play(position, "e2e4,e4a6")
    assert open_ep.fen().split()[3] == "e3"
    assert any(m.startswith("f4e3") for m in legal(open_ep))
    closed_ep = play(position, "e2e4,e4e3")
    assert closed_ep.fen().split()[3] == "-" and closed_ep.state[S_EP] == -1
    assert not any(m.startswith("f4e3") for m in legal(closed_ep))
    for p in (open_ep, closed_ep):
        assert_same_as_pyffish(p)


def test_en_passant_capture_lets_the_duck_take_the_captured_pawns_square(game):
    position = game.parse_position("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
    assert "e5d6,d6d5" in legal(position)
    after = play(position, "e5d6,d6d5")
    assert after.fen() == "4k3/8/3P4/3*4/8/8/8/4K3 b - - 0 2"
    assert_same_as_pyffish(position)


def test_no_en_passant_square_without_a_capturing_pawn(game):
    after = play(game.start_position(), "e2e4,e4a6")
    assert after.fen().split()[3] == "-"


def test_duck_on_the_promotion_square_blocks_only_the_push(game):
    position = game.parse_position("*n2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    pieces = {position.format_move(m).split(",")[0] for m in position.legal_moves()}
    assert not any(p.startswith("a7a8") for p in pieces)
    assert {"a7b8q", "a7b8r", "a7b8b", "a7b8n"} <= pieces
    blocked = game.parse_position("*3k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert not any(m.startswith("a7a8") for m in legal(blocked))
    free = game.parse_position("4k3/P7/8/8/8/8/8/4K2* w - - 0 1")
    assert {m.split(",")[0] for m in legal(free) if m.startswith("a7a8")} == \
        {"a7a8q", "a7a8r", "a7a8b", "a7a8n"}
    for p in (position, blocked, free):
        assert_same_as_pyffish(p)
    promoted = play(free, "a7a8n,a8h8")
    assert promoted.fen() == "N3k2*/8/8/8/8/8/8/4K3 b - - 0 1"


def test_capturing_the_king_wins_and_ends_the_game(game):
    position = game.parse_position("4k3/8/8/8/8/8/8/4RK1* w - - 0 1")
    assert "e1e8,e8a1" in legal(position)  # a duck placement is still written
    after = play(position, "e1e8,e8a1")
    assert after.legal_moves() == []
    result = after.result()
    assert result.winner == 0 and result.reason == "king captured" and result.pgn == "1-0"
    assert after.fen() == pyffish.get_fen("duck", position.fen(), ["e1e8,e8a1"])
    assert pyffish.game_result("duck", after.fen(), []) < 0  # the side to move lost
    with pytest.raises(MoveError, match="game is over"):
        after.parse_move("e8e7,e7e6")


def test_moving_into_attack_and_leaving_the_king_attacked_are_legal(game):
    position = game.parse_position("4k3/8/8/8/8/8/3r4/4K3 w - - 0 1")
    pieces = {position.format_move(m).split(",")[0] for m in position.legal_moves()}
    assert "e1e2" in pieces and "e1d1" in pieces and "e1d2" in pieces
    assert_same_as_pyffish(position)


def test_fowling_the_side_without_moves_wins(game):
    position = game.parse_position("k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1")
    assert position.legal_moves() == []
    result = position.result()
    assert result.winner == 1 and "cannot move" in result.reason
    assert pyffish.game_result("duck", position.fen(), []) > 0
    before = game.parse_position("k6*/bp6/1p6/1P6/8/8/8/4K3 w - - 0 1")
    assert "e1e2,e2b8" in legal(before)
    assert play(before, "e1e2,e2b8").result().winner == 1


def test_threefold_repetition_counts_the_duck_and_is_only_claimable(game):
    cycle = ["g1f3,f3a6", "g8f6,f6a3", "f3g1,g1a6", "f6g8,g8a3"]
    moves = ["g1f3,f3a6", "g8f6,f6a3", "f3g1,g1a5", "f6g8,g8a4"] + cycle * 3
    start = pyffish.start_fen("duck")
    position = game.start_position()
    for index, text in enumerate(moves):
        position = play(position, text)
        claimable, _ = pyffish.is_optional_game_end("duck", start, moves[:index + 1])
        assert position.is_repetition(3) == claimable, index
        assert position.result() is None
        assert (position.result(claim_draw=True) is not None) == claimable
    assert position.result(claim_draw=True).reason == "threefold repetition"
    assert position.result(claim_draw=True).winner is None


def test_fifty_move_rule_is_claimable_at_one_hundred_plies(game):
    position = game.parse_position("4k3/8/8/3*4/8/8/4P3/4K2R w K - 99 80")
    assert position.result(claim_draw=True) is None
    after = play(position, "h1h2,h2h3")
    assert after.halfmove_clock == 100 and after.result() is None
    assert after.result(claim_draw=True).reason == "fifty-move rule"
    assert pyffish.is_optional_game_end("duck", position.fen(), ["h1h2,h2h3"])[0]
    pawn_move = play(position, "e2e4,e4e3")
    assert pawn_move.halfmove_clock == 0 and pawn_move.result(claim_draw=True) is None


def test_san_forms_round_trip(game):
    position = game.parse_position(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p*1P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    for move in position.legal_moves()[::7]:
        san = position.san(move)
        assert san == pyffish.get_san("duck", position.fen(), position.format_move(move))
        assert position.parse_move(san) == move
    assert position.parse_move("O-O,e1") == position.parse_move("e1g1,g1e1")
    assert position.parse_move("Nxf7,e5") == position.parse_move("e5f7,f7e5")
