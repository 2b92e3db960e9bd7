"""`mallard.engines.duck.python_chess` (issue 18): python-chess's `Board`, `chess.engine` and
`chess.pgn` playing Duck Chess on our rules, checked against pyffish (Fairy-Stockfish's rules) and
against a real `mallard uci` subprocess and `mallard match` PGN."""

from __future__ import annotations

import ast
import io
import logging
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import chess.variant
import pyffish
import pytest

from mallard.engines.duck.python_chess import (
    DuckBoard,
    DuckChessUnsupported,
    DuckGameBuilder,
    DuckMove,
)
from tests.engines.duck.conftest import PERFT_ROWS, START
from tests.protocol.harness import run_with_timeout

ROOT = Path(__file__).resolve().parents[3]  # the repository whose code is under test
ENGINE = [sys.executable, "-m", "mallard.protocol.cli"]
ROW_IDS = [f"row{number}" for number in range(1, len(PERFT_ROWS) + 1)]


def engine_env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def pyffish_moves(fen: str) -> set:
    return set(pyffish.legal_moves("duck", fen, []))


def board_moves(board: DuckBoard) -> set:
    return {move.uci() for move in board.legal_moves}


# --- DuckMove ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,fields", [
    ("e2e4,e4d5", (chess.E2, chess.E4, None, chess.D5)),
    ("b7b8q,b8a1", (chess.B7, chess.B8, chess.QUEEN, chess.A1)),
    ("e1g1,g1e1", (chess.E1, chess.G1, None, chess.E1)),
])
def test_duck_move_uci_round_trip(text, fields):
    move = DuckMove.from_uci(text)
    assert isinstance(move, chess.Move)
    assert (move.from_square, move.to_square, move.promotion, move.duck) == fields
    assert move.uci() == str(move) == text
    assert move == DuckMove(*fields[:3], duck=fields[3])
    assert hash(move) == hash(DuckMove.from_uci(text))
    assert move != chess.Move(*fields[:3])
    assert DuckMove.from_uci(text[:-4] + text[-2:]) == move  # the short form e2e4,d5


@pytest.mark.parametrize("text", ["e2e4,e5d5", "e2e4,e4d", "e2e4,e4z9", "0000,e4d5", "e2e4,,"])
def test_duck_move_from_uci_rejects_malformed_text(text):
    with pytest.raises(chess.InvalidMoveError):
        DuckMove.from_uci(text)


# --- move generation against pyffish ------------------------------------------------------------

@pytest.mark.parametrize("fen,counts", PERFT_ROWS, ids=ROW_IDS)
def test_perft_2_and_moves_equal_pyffish(fen, counts):
    """Depth 1 and 2 move for move at the root, depth 2 by count below every root move, and the
    children's move lists against pyffish on every 16th child (all of them: the slow test)."""
    board = DuckBoard(fen)
    assert board.fen() == pyffish.get_fen("duck", fen, [])
    moves = list(board.legal_moves)
    assert {move.uci() for move in moves} == pyffish_moves(fen)
    assert len(moves) == board.legal_moves.count() == counts[0]
    leaves = 0
    for index, move in enumerate(moves):
        board.push(move)
        leaves += board.legal_moves.count()
        if index % 16 == 0:
            assert board.fen() == pyffish.get_fen("duck", fen, [move.uci()])
            assert board_moves(board) == pyffish_moves(board.fen()), move.uci()
        board.pop()
    assert leaves == counts[1]
    assert board.fen() == pyffish.get_fen("duck", fen, []) and not board.move_stack


@pytest.mark.slow
@pytest.mark.parametrize("fen", [row[0] for row in PERFT_ROWS], ids=ROW_IDS)
def test_every_child_equals_pyffish(fen):
    board = DuckBoard(fen)
    for move in list(board.legal_moves):
        board.push(move)
        assert board_moves(board) == pyffish_moves(board.fen()), move.uci()
        board.pop()


def random_game_boards(count: int, seed: int):
    """`count` boards met in random games from the reference positions (about one ply in three,
    and every game's last position), each with its move stack."""
    rng = random.Random(seed)
    while True:
        board = DuckBoard(rng.choice(PERFT_ROWS)[0])
        for _ in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if rng.random() < 0.3 or board.is_game_over():
                yield board.copy()
                count -= 1
                if not count:
                    return


def test_200_random_positions_equal_pyffish():
    for board in random_game_boards(200, seed=18):
        root = board.root()
        played = [move.uci() for move in board.move_stack]
        fen = pyffish.get_fen("duck", root.fen(), played)
        assert board.fen() == fen, played
        assert board_moves(board) == pyffish_moves(fen), fen
        game_end, score = pyffish.is_immediate_game_end("duck", fen, [])
        assert board.is_game_over() == game_end == (board.legal_moves.count() == 0), fen
        if game_end:
            # pyffish scores for the side to move
            assert board.outcome().winner == (board.turn if score > 0 else not board.turn)
        # FEN round trip, and back to the root move by move
        assert DuckBoard(fen).fen() == fen and DuckBoard(fen) == board.copy(stack=False)
        while board.move_stack:
            board.pop()
        assert board.fen() == root.fen()


@pytest.mark.parametrize("fen", [row[0] for row in PERFT_ROWS] + [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pp1ppppp/8/1*6/2pPP3/8/PPP2PPP/RNBQKBNR b KQkq d3 0 3",
    "7r/8/8/8/8/8/8/R3K3 b - - 0 1",
])
def test_fen_round_trips(fen):
    board = DuckBoard(fen)
    assert board.fen() == pyffish.get_fen("duck", fen, [])
    again = DuckBoard(board.fen())
    assert again.fen() == board.fen() and again.duck == board.duck
    assert board.board_fen() == board.fen().split()[0]
    copy = DuckBoard(None)
    copy.set_board_fen(board.board_fen())
    assert copy.duck == board.duck and copy.board_fen() == board.board_fen()


def test_duck_and_fields():
    board = DuckBoard()
    assert board.duck is None and board.uci_variant == "duck"
    board.push_san("e4,d5")
    assert board.duck == chess.D5 and board.turn == chess.BLACK and board.ep_square is None
    assert "*" in str(board) and board.piece_at(chess.D5) is None
    mirrored = board.mirror()
    assert mirrored.duck == chess.D4 and mirrored.turn == chess.WHITE
    assert board.copy().move_stack == board.move_stack and board.root() == DuckBoard()
    assert chess.variant.find_variant("Duck") is DuckBoard
    empty = DuckBoard(None)  # no kings yet: not a position, yet printable and comparable
    assert not empty.is_valid() and empty == DuckBoard(None) and "8/8/8/8" in repr(empty)
    with pytest.raises(ValueError, match="not a valid Duck Chess position"):
        empty.legal_moves.count()


# --- SAN ----------------------------------------------------------------------------------------

def test_san_equals_pyffish_on_random_games():
    for board in random_game_boards(20, seed=7):
        fen = board.fen()
        for move in list(board.legal_moves)[::37]:
            san = board.san(move)
            assert san == pyffish.get_san("duck", fen, move.uci()), move.uci()
            assert board.parse_san(san) == move


def test_san_forms():
    board = DuckBoard()
    assert board.parse_san("e4,d5") == board.parse_san("e4,@d5") == \
        board.parse_san("e2e4,e4d5") == DuckMove.from_uci("e2e4,e4d5")
    board.set_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    castle = board.parse_san("O-O,e1")
    assert castle.uci() == "e1g1,g1e1" and board.is_castling(castle)
    assert board.variation_san([castle, DuckMove.from_uci("e8c8,c8e8")]) == "1. O-O,e1 O-O-O,e8"


# --- results ------------------------------------------------------------------------------------

def test_king_captured_and_fowling():
    board = DuckBoard("7r/8/8/8/8/8/8/R3K3 b - - 0 1")  # Black's king was taken
    assert board.outcome() == chess.Outcome(chess.Termination.VARIANT_LOSS, chess.WHITE)
    assert board.result() == "1-0" and board.is_variant_loss() and not board.legal_moves
    board = DuckBoard("k*6/bp6/1p6/1P6/8/8/8/4K3 b - - 0 1")  # Black cannot move: Black wins
    assert board.outcome() == chess.Outcome(chess.Termination.VARIANT_WIN, chess.BLACK)
    assert board.result() == "0-1" and board.is_variant_win()
    assert not board.is_insufficient_material()
    with pytest.raises(chess.IllegalMoveError, match="game is over"):
        board.push(DuckMove.from_uci("a8b8,b8c8"))


def test_claimable_draws():
    board = DuckBoard("4k3/8/8/8/8/8/8/4K1N1 w - - 99 80")
    board.push_san("Nf3,a1")
    assert board.is_fifty_moves() and board.can_claim_draw()
    assert board.outcome() is None and board.result() == "*"
    assert board.outcome(claim_draw=True).termination == chess.Termination.FIFTY_MOVES
    board = DuckBoard("4k3/8/8/8/8/8/*7/4K1N1 w - - 0 1")
    shuffle = ["Nf3,a1", "Kd8,a2", "Ng1,a1", "Ke8,a2"]
    for san in shuffle * 2:
        assert not board.can_claim_threefold_repetition()
        board.push_san(san)
    assert board.is_repetition(3) and board.can_claim_draw()
    assert board.outcome(claim_draw=True).termination == chess.Termination.THREEFOLD_REPETITION
    board = DuckBoard("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1")
    for san in ["Nf3,a1", "Kd8,a2", "Ng1,a1", "Ke8,b2", "Nf3,a1", "Kd8,a2", "Ng1,a1", "Ke8,c2"]:
        board.push_san(san)  # the pieces stand as at the start three times, the duck elsewhere
    assert not board.is_repetition(2)


# --- bad input ----------------------------------------------------------------------------------

def test_illegal_moves_raise_illegal_move_error():
    board = DuckBoard()
    board.push_uci("e2e4,e4d5")
    with pytest.raises(chess.IllegalMoveError, match="the duck must move"):
        board.push_uci("e7e5,e5d5")
    with pytest.raises(chess.IllegalMoveError, match="occupied"):
        board.push_uci("e7e5,e5e4")  # the duck on White's pawn
    with pytest.raises(chess.IllegalMoveError, match="places the duck"):
        board.push(chess.Move.from_uci("e7e5"))
    with pytest.raises(chess.IllegalMoveError, match="no black piece on e3"):
        board.parse_uci("e3e4,e4a3")
    with pytest.raises(chess.IllegalMoveError, match="null move"):
        board.push(DuckMove.null())
    with pytest.raises(chess.IllegalMoveError, match="no duck square"):
        board.parse_san("e5")
    with pytest.raises(chess.InvalidMoveError):
        board.parse_san("e9,e5")
    assert not board.is_legal(DuckMove.from_uci("e7e5,e5d5"))
    assert DuckMove.from_uci("e7e5,e5d4") in board.legal_moves
    assert board.fen() == pyffish.get_fen("duck", START, ["e2e4,e4d5"])  # nothing changed


def test_ambiguous_san():
    board = DuckBoard("4k3/8/8/8/8/8/8/N1N1K3 w - - 0 1")
    with pytest.raises(chess.AmbiguousMoveError, match="ambiguous"):
        board.parse_san("Nb3,d5")
    assert board.parse_san("Nab3,d5").from_square == chess.A1


@pytest.mark.parametrize("fen,message", [
    ("rnbqkbnr/pppppppp/8/3**3/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "2 ducks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "king"),
])
def test_bad_fens_raise_value_error(fen, message):
    with pytest.raises(ValueError, match=message):
        DuckBoard(fen)
    with pytest.raises(ValueError, match=message):
        DuckBoard().set_fen(fen)


def test_the_duck_never_stands_on_a_piece():
    board = DuckBoard()
    with pytest.raises(ValueError, match="cannot stand on e2: it is occupied by white pawn"):
        board.set_duck(chess.E2)
    board.set_duck(chess.E4)
    with pytest.raises(ValueError, match="holds the duck"):
        board.set_piece_at(chess.E4, chess.Piece(chess.QUEEN, chess.WHITE))
    assert board.fen().startswith("rnbqkbnr/pppppppp/8/8/4*3/8/")
    with pytest.raises(ValueError, match="2 ducks"):
        board.set_board_fen("rnbqkbnr/pppppppp/8/8/3**3/8/PPPPPPPP/RNBQKBNR")


@pytest.mark.parametrize("name,args", [
    ("is_check", ()), ("is_checkmate", ()), ("is_stalemate", ()), ("gives_check", (None,)),
    ("checkers", ()), ("is_pinned", (chess.WHITE, chess.E2)), ("lan", (None,)), ("epd", ()),
    ("is_fivefold_repetition", ()), ("is_seventyfive_moves", ()), ("find_move", (12, 28)),
    ("status", ()), ("xboard", (None,)),
])
def test_chess_only_methods_raise_a_clear_error(name, args):
    with pytest.raises(DuckChessUnsupported, match=f"DuckBoard.{name}: "):
        getattr(DuckBoard(), name)(*args)
    assert issubclass(DuckChessUnsupported, NotImplementedError)
    with pytest.raises(ValueError, match="chess960"):
        DuckBoard(chess960=True)


# --- PGN ----------------------------------------------------------------------------------------

SAN_TOKEN = re.compile(r"(?<![{\w])(?:O-O(?:-O)?|[NBRQK]?[a-h]?[1-8]?x?[a-h][1-8](?:=[NBRQ])?),"
                       r"@?[a-h][1-8]")


def movetext_sans(pgn: str) -> list[str]:
    """The SAN tokens of a one-game PGN's movetext, comments removed: read independently of
    python-chess."""
    movetext = re.sub(r"\{[^}]*\}", " ", pgn.split("\n\n", 1)[1])
    return SAN_TOKEN.findall(movetext)


def _may_be(uci: str, san: str) -> bool:
    """Whether a UCI move could have this SAN, judged by the target and duck squares only (so
    that pyffish is asked for the SAN of a few moves, not of all of them)."""
    piece, duck = san.split(",")
    if not uci.endswith(duck):
        return False
    if piece.startswith("O-O"):
        return uci[:4] in (("e1c1", "e8c8") if piece == "O-O-O" else ("e1g1", "e8g8"))
    return uci[2:4] == re.findall(r"[a-h][1-8]", piece)[-1]


def pyffish_replay(fen: str, sans: list[str]) -> list[str]:
    """The UCI moves pyffish finds for SAN tokens (each must match exactly one legal move)."""
    played: list[str] = []
    current = fen
    for san in sans:
        wanted = san.replace(",@", ",")
        matches = [uci for uci in pyffish.legal_moves("duck", current, [])
                   if _may_be(uci, wanted) and pyffish.get_san("duck", current, uci) == wanted]
        assert len(matches) == 1, (san, current)
        played.append(matches[0])
        current = pyffish.get_fen("duck", current, matches[:1])
    return played


def read_games(text: str) -> list:
    handle, games = io.StringIO(text), []
    while (game := chess.pgn.read_game(handle, Visitor=DuckGameBuilder)) is not None:
        games.append(game)
    return games


@pytest.fixture(scope="module")
def match_pgn(tmp_path_factory) -> str:
    """PGN written by `mallard match -variant duck` (depth 1, from two set-up positions, one with
    a promotion at hand)."""
    folder = tmp_path_factory.mktemp("match")
    openings = folder / "openings.epd"
    openings.write_text(PERFT_ROWS[3][0] + "\n" + PERFT_ROWS[1][0] + "\n")
    pgn = folder / "games.pgn"
    engine = " ".join(ENGINE + ["uci"])
    done = subprocess.run(ENGINE + ["match", "-variant", "duck", "-each", f"cmd={engine}",
                                    "proto=uci", "depth=1", "-engine", "name=a", "-engine",
                                    "name=b", "-games", "4", "-repeat", "-maxmoves", "40",
                                    "-openings", f"file={openings}", "-pgnout", str(pgn),
                                    "-startuptimeout", "300"],  # a cold numba cache compiles
                          capture_output=True, text=True, timeout=240, cwd=ROOT, env=engine_env())
    assert done.returncode == 0, done.stderr
    return pgn.read_text()


def test_match_pgn_read_back_move_for_move(match_pgn):
    texts = [chunk for chunk in re.split(r"\n\n(?=\[Event )", match_pgn) if chunk.strip()]
    games = read_games(match_pgn)
    assert len(games) == len(texts) == 4
    for text, game in zip(texts, games):
        assert not game.errors
        board = game.board()
        assert isinstance(board, DuckBoard) and board.fen() == game.headers["FEN"]
        sans = movetext_sans(text)
        moves = list(game.mainline_moves())
        assert len(moves) == len(sans) == int(game.headers["PlyCount"]) > 0
        assert [move.uci() for move in moves] == pyffish_replay(board.fen(), sans)
        for san, move in zip(sans, moves):
            assert board.san(move) == san
            board.push(move)
        if "repetition" in text.rsplit("{", 1)[-1]:
            assert board.outcome(claim_draw=True).termination == \
                chess.Termination.THREEFOLD_REPETITION


def test_pgn_written_from_a_duck_board_replays_in_pyffish():
    boards = list(random_game_boards(6, seed=3))
    boards.append(DuckBoard())
    for san in ["e4,a6", "f6,a5", "Qh5,a6", "Nc6,a5", "Qxe8,a6"]:
        boards[-1].push_san(san)  # ends with the king taken
    for board in boards:
        game = chess.pgn.Game.from_board(board)
        text = str(game)
        assert '[Variant "duck"]' in text and f'[FEN "{board.root().fen()}"]' in text
        assert f'[Result "{board.result()}"]' in text
        sans = movetext_sans(text + "\n")
        assert pyffish_replay(board.root().fen(), sans) == [m.uci() for m in board.move_stack]
        again, = read_games(text + "\n\n")
        assert list(again.mainline_moves()) == board.move_stack
        assert again.end().board().fen() == board.fen()
    assert boards[-1].result() == "1-0"


def test_fairy_stockfish_style_pgn():
    """SAN from pyffish itself (Fairy-Stockfish's notation, as pychess writes it), a `Duck`
    variant tag, `,@` duck squares, a comment, a variation and a NAG."""
    rng = random.Random(5)
    played = []
    for _ in range(24):
        moves = pyffish.legal_moves("duck", START, played)
        if not moves:
            break
        played.append(rng.choice(sorted(moves)))
    sans = pyffish.get_san_moves("duck", START, played)
    tokens = []
    for ply, san in enumerate(sans):
        if ply % 2 == 0:
            tokens.append(f"{ply // 2 + 1}.")
        tokens.append(san.replace(",", ",@") if ply % 3 == 0 else san)
    after_two = pyffish.get_fen("duck", START, played[:2])
    other = sorted(set(pyffish.legal_moves("duck", after_two, [])) - {played[2]})[0]
    tokens.insert(3, "{a comment} $1")
    tokens.insert(6, f"(2. {pyffish.get_san('duck', after_two, other)})")
    text = ('[Event "pychess casual game"]\n[Variant "Duck"]\n[Result "*"]\n\n'
            + " ".join(tokens) + " *\n\n")
    game, = read_games(text)
    assert not game.errors
    assert [move.uci() for move in game.mainline_moves()] == played
    assert game.end().board().fen() == pyffish.get_fen("duck", START, played)
    branch = game.next().next()
    assert [node.move.uci() for node in branch.variations] == [played[2], other]


def test_a_duckless_move_in_pgn_is_an_error():
    game, = read_games('[Variant "duck"]\n\n1. e4,d5 e5 *\n\n')
    assert [move.uci() for move in game.mainline_moves()] == ["e2e4,e4d5"]
    assert game.errors and "no duck square" in str(game.errors[0])


# --- chess.engine against `mallard uci` ----------------------------------------------------------

def assert_line_legal(board: DuckBoard, moves) -> None:
    """Every move of a line legal by pyffish, played from `board`."""
    fen = board.fen()
    played: list[str] = []
    for move in moves:
        assert isinstance(move, DuckMove)
        assert move.uci() in pyffish.legal_moves("duck", fen, played), (fen, played, move)
        played.append(move.uci())


@pytest.fixture(scope="module")
def engine():
    engine = chess.engine.SimpleEngine.popen_uci(ENGINE + ["uci"], timeout=180, cwd=ROOT,
                                                 env=engine_env())
    try:
        yield engine
    finally:
        run_with_timeout(engine.quit, 30)


def midgame_board() -> DuckBoard:
    board = DuckBoard()
    for san in ["e4,d5", "Nc6,e6", "Nf3,d4", "e5,e3"]:
        board.push_san(san)
    return board


def test_engine_play_returns_a_legal_move(engine, caplog):
    board = midgame_board()
    with caplog.at_level(logging.DEBUG, logger="chess.engine"):
        result = run_with_timeout(lambda: engine.play(board, chess.engine.Limit(depth=3)))
    sent = [r.getMessage().split("<< ", 1)[1] for r in caplog.records if "<< " in r.getMessage()]
    # mallard's UCI_Variant already is duck, so python-chess has nothing to set
    assert engine.protocol.config["UCI_Variant"] == "duck"
    assert f"position fen {START} moves {' '.join(m.uci() for m in board.move_stack)}" in sent
    assert isinstance(result.move, DuckMove) and board.is_legal(result.move)
    assert_line_legal(board, [result.move])
    if result.ponder is not None:
        assert_line_legal(board, [result.move, result.ponder])
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


FAIRY_LIKE_ENGINE = """
import sys
for line in sys.stdin:
    command = line.split()
    if command == ["uci"]:
        print("id name fairy-like")
        print("option name UCI_Variant type combo default chess var chess var duck")
        print("uciok")
    elif command == ["isready"]:
        print("readyok")
    elif command[:1] == ["go"]:
        print("info depth 1 score cp 10 pv e2e4,e4d5 e7e5,e5e6")
        print("bestmove e2e4,e4d5 ponder e7e5,e5e6")
    elif command == ["quit"]:
        break
    sys.stdout.flush()
"""


def test_an_engine_whose_default_is_chess_gets_uci_variant_duck(caplog):
    """Fairy-Stockfish's UCI_Variant defaults to chess: the board's `uci_variant` is sent."""
    fake = chess.engine.SimpleEngine.popen_uci([sys.executable, "-c", FAIRY_LIKE_ENGINE])
    try:
        with caplog.at_level(logging.DEBUG, logger="chess.engine"):
            result = run_with_timeout(lambda: fake.play(DuckBoard(), chess.engine.Limit(depth=1),
                                                        info=chess.engine.INFO_ALL))
    finally:
        run_with_timeout(fake.quit, 30)
    sent = [r.getMessage().split("<< ", 1)[1] for r in caplog.records if "<< " in r.getMessage()]
    assert sent.index("setoption name UCI_Variant value duck") < sent.index(f"position fen {START}")
    assert result.move == DuckMove.from_uci("e2e4,e4d5")
    assert result.ponder == DuckMove.from_uci("e7e5,e5e6")
    assert [move.uci() for move in result.info["pv"]] == ["e2e4,e4d5", "e7e5,e5e6"]


def test_engine_analyse_multipv_3(engine):
    board = midgame_board()
    infos = run_with_timeout(lambda: engine.analyse(board, chess.engine.Limit(depth=3),
                                                    multipv=3))
    assert [info["multipv"] for info in infos] == [1, 2, 3]
    firsts = set()
    for info in infos:
        assert info["depth"] == 3 and isinstance(info["score"], chess.engine.PovScore)
        assert info["pv"], info
        assert_line_legal(board, info["pv"])
        firsts.add(info["pv"][0])
    assert len(firsts) == 3
    assert board.move_stack == midgame_board().move_stack  # the caller's board is untouched


def test_engine_threaded_analysis_stopped_after_a_fifth_of_a_second(engine):
    board = DuckBoard(PERFT_ROWS[2][0])
    infos: list = []
    with engine.analysis(board) as analysis:
        reader = threading.Thread(target=lambda: infos.extend(analysis), daemon=True)
        reader.start()
        time.sleep(0.2)
        analysis.stop()
        best = run_with_timeout(analysis.wait, 60)
        reader.join(60)
    assert not reader.is_alive()
    assert isinstance(best.move, DuckMove) and board.is_legal(best.move)
    lines = [info["pv"] for info in infos if info.get("pv")]
    assert lines
    for line in lines:
        assert_line_legal(board, line)
    run_with_timeout(engine.ping)


@pytest.mark.skipif(not os.access(os.environ.get("FAIRY_STOCKFISH", ""), os.X_OK),
                    reason="set FAIRY_STOCKFISH to a Fairy-Stockfish binary to run this")
def test_fairy_stockfish(caplog):
    """The same calls against the real Fairy-Stockfish (its UCI_Variant defaults to chess)."""
    board = DuckBoard(PERFT_ROWS[1][0])
    fairy = chess.engine.SimpleEngine.popen_uci([os.environ["FAIRY_STOCKFISH"]])
    try:
        with caplog.at_level(logging.DEBUG, logger="chess.engine"):
            result = run_with_timeout(lambda: fairy.play(board, chess.engine.Limit(depth=4)))
        sent = [r.getMessage().split("<< ", 1)[1] for r in caplog.records
                if "<< " in r.getMessage()]
        assert "setoption name UCI_Variant value duck" in sent
        assert_line_legal(board, [result.move])
        infos = run_with_timeout(lambda: fairy.analyse(board, chess.engine.Limit(depth=5),
                                                       multipv=3))
        assert [info["multipv"] for info in infos] == [1, 2, 3]
        for info in infos:
            assert_line_legal(board, info["pv"])
        with fairy.analysis(board) as analysis:
            time.sleep(0.2)
            analysis.stop()
            best = run_with_timeout(analysis.wait, 60)
        assert_line_legal(board, [best.move])
    finally:
        run_with_timeout(fairy.quit, 30)


# --- the import contract ------------------------------------------------------------------------

def test_only_this_module_imports_python_chess():
    """python-chess is a test dependency: in the packages, only `engines/duck/python_chess.py`
    imports it, and importing the engines does not load it."""
    importers = set()
    for package in ("engines", "protocol", "tournaments"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                if any(name == "chess" or name.startswith("chess.") for name in names):
                    importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"engines/duck/python_chess.py"}
    done = subprocess.run([sys.executable, "-c", "import sys, mallard.engines.duck.rules; "
                           "print('chess' in sys.modules)"], capture_output=True, text=True,
                          cwd=ROOT, env=engine_env(), timeout=120)
    assert done.stdout.strip() == "False", done.stderr
