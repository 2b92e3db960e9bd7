"""The board's proof of a whole UTTT game (`protocol/board/proof.py` and the session's `prove`):
the values against exhaustive minimax, the mistakes they mark, a proof that stops with a change
of the game or the page, and the server's bound on processes."""

from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("starlette", reason="mallard board needs mallard[board]")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from mallard.engines.uttt import kernels as K  # noqa: E402
from mallard.engines.uttt.reach import load_games  # noqa: E402
from mallard.protocol.board.app import create_app  # noqa: E402
from mallard.protocol.board.guard import Guard  # noqa: E402
from mallard.protocol.board.session import MIN_PROOF_INTERVAL_S  # noqa: E402
from mallard.protocol.tools import game_line, read_game_line  # noqa: E402
from tests.engines.uttt.test_prover import oracle_value  # noqa: E402
from tests.protocol.conftest import ENGINE, ROOT  # noqa: E402
from tests.protocol.test_board_server import TestClient, current_state, next_of, send, wait_gone  # noqa: E402

ORACLE_OPEN_CELLS = 12
VALUE_RANK = {"draw": 1}  # the mover's outcome, best last (wins and losses by the side)


@pytest.fixture(scope="module")
def games():
    return load_games()


def value_text(value: int, side: int) -> str:
    """The oracle's +1/0/-1 for `side` to move, as the prover says it."""
    if value == 0:
        return "draw"
    return f"{'XO'[side if value > 0 else 1 - side]} wins"


def mover_value(position, move, memo) -> int:
    """The oracle's value of `move` for the side that plays it."""
    child = position.play(move)
    end = child.result()
    if end is None:
        return -oracle_value(child.state.copy(), memo)
    return 0 if end.winner is None else 1 if end.winner == position.side_to_move else -1


def rank(value: str, mover: int) -> int:
    return VALUE_RANK.get(value, 2 if value.startswith("XO"[mover]) else 0)


def spoiled_game(games):
    """(start position, move texts, oracle values of every position): from a late position of a
    real game, a move that spoils its player's result, then the oracle's best moves to the end."""
    memo: dict = {}
    for game in games:
        start = next(position for position in game.positions
                     if K.count_open_cells(position.state) <= ORACLE_OPEN_CELLS)
        value = oracle_value(start.state.copy(), memo)
        for move in start.legal_moves():
            child = start.play(move)
            if child.result() is None and mover_value(start, move, memo) < value:
                break
        else:
            continue
        texts, position = [start.format_move(move)], child
        while position.result() is None:
            best = max(position.legal_moves(), key=lambda m: mover_value(position, m, memo))
            texts.append(position.format_move(best))
            position = position.play(best)
        values, walk = [], start
        for text in [None, *texts]:
            if text is not None:
                walk = walk.play(walk.parse_move(text))
            values.append(None if walk.result() is not None else
                          value_text(oracle_value(walk.state.copy(), memo), walk.side_to_move))
        return start, texts, values
    raise AssertionError("no real game with a spoiling move near its end")


def play(ws, texts):
    """The state after the page played `texts` (from no moves)."""
    for text in texts:
        send(ws, cmd="move", move=text)
    while True:
        message = ws.receive_json()
        assert message["type"] != "error", message
        if message["type"] == "state" and len(message["moves"]) == len(texts):
            return message


def state_where(ws, accept, timeout=300.0):
    """The first state that `accept`s (a proof's states may come before it)."""
    while True:
        state = next_of(ws, "state", timeout=timeout)
        if accept(state):
            return state


def proven(ws):
    """The state once the running proof has ended."""
    return state_where(ws, lambda state: not state["proof"]["running"])


def test_the_line_format_reads_back():
    for ply, move, value, seconds, nodes in [(0, None, "unknown", 10.0, 123_456_789),
                                             (54, "ie", "X wins", 0.004, 0),
                                             (7, "aa", "draw", 123.45, 12),
                                             (80, "ii", "O wins", 12345.67, 10**13)]:
        text = game_line(ply, 3, move, value, seconds, nodes)
        assert read_game_line(text) == {"ply": ply, "beforeEnd": 3, "move": move,
                                        "value": value, "seconds": round(seconds, 2),
                                        "nodes": nodes}
    assert read_game_line("3 of 7 positions proven  1,234 nodes  0.12 s") is None


def test_a_game_is_proven_backwards_with_its_mistake_marked(client, games):
    start, texts, values = spoiled_game(games)
    with client.websocket_connect("/ws?game=uttt") as ws:
        next_of(ws, "state")
        send(ws, cmd="load", text=start.fen())
        next_of(ws, "state")
        play(ws, texts)
        send(ws, cmd="prove", on=True, limit=30)
        state = proven(ws)
        proofs = state["proofs"]
        assert state["proof"] == {"running": False, "limit": 30, "done": len(texts) + 1,
                                  "total": len(texts) + 1, "error": None}
        for ply, (proof, value) in enumerate(zip(proofs, values)):
            if value is None:  # the finished game: the prover says who won
                continue
            assert proof["value"] == value, ply
            assert proof["seconds"] >= 0 and proof["nodes"] >= 0
        marked = [ply for ply, proof in enumerate(proofs) if "mistake" in proof]
        assert marked == [1], proofs
        before, after = rank(values[0], start.side_to_move), rank(values[1], start.side_to_move)
        assert proofs[1]["mistake"] == ("lets the win go" if before == 2 else "loses")
        assert before > after


def test_a_proof_stops_with_a_change_keeping_what_stays_and_ends_with_the_page(client, games):
    game = next(game for game in games if game.plies >= 55)
    position, texts = game.positions[0], []
    for after in game.positions[1:]:
        move = next(m for m in position.legal_moves() if position.play(m) == after)
        texts.append(position.format_move(move))
        position = after
    slots = client.app.state.slots
    with client.websocket_connect("/ws?game=uttt") as ws:
        next_of(ws, "state")
        play(ws, texts)
        for limit in (0, 61, "10", None):
            send(ws, cmd="prove", on=True, limit=limit)
            assert "the time per position must be a whole number from 1 to 60 s" in \
                next_of(ws, "error")["message"]
        send(ws, cmd="prove", on=True, limit=60)
        (session,) = client.app_sessions
        state = next_of(ws, "state")
        assert state["proof"]["running"] and slots.in_use == 1
        while state["proof"]["done"] < 4:  # the last positions are proven in milliseconds
            state = next_of(ws, "state", timeout=300)
        pid = session.game_proof.process.process.pid
        last = game.plies
        assert [proof["value"] for proof in state["proofs"][last - 3:]] == \
            [state["proofs"][last]["value"]] * 4
        kept = state["proofs"][last - 3]
        send(ws, cmd="goto", ply=last - 3)  # looking back does not stop it
        assert state_where(ws, lambda state: state["cursor"] == last - 3)["proof"]["running"]
        other = next(m for m in game.positions[last - 3].legal_moves()
                     if game.positions[last - 3].play(m) != game.positions[last - 2])
        send(ws, cmd="move", move=game.positions[last - 3].format_move(other))
        state = state_where(ws, lambda state: len(state["moves"]) == last - 2)
        assert not state["proof"]["running"] and slots.in_use == 0
        assert wait_gone(pid), "the game changed but its proof's process lives on"
        assert len(state["proofs"]) == last - 1
        assert state["proofs"][last - 3] == kept and state["proofs"][last - 2] is None

        send(ws, cmd="prove", on=True, limit=60)
        next_of(ws, "state")
        pid = session.game_proof.process.process.pid
        os.kill(pid, 0)
        send(ws, cmd="prove", on=True, limit=60)  # a double click: the same proof goes on
        assert next_of(ws, "state")["proof"]["running"]
        assert session.game_proof.process.process.pid == pid and slots.in_use == 1
        send(ws, cmd="prove", on=False)
        state_where(ws, lambda state: not state["proof"]["running"])
        assert slots.in_use == 0
        assert wait_gone(pid)

        for _ in range(20):  # each start is a process: a page gets one a second at most
            send(ws, cmd="prove", on=True, limit=60)
            assert "a proof started less than a second ago" in next_of(ws, "error")["message"]
        assert session.game_proof is None or not session.game_proof.process.alive
        time.sleep(MIN_PROOF_INTERVAL_S)
        send(ws, cmd="prove", on=True, limit=60)
        assert next_of(ws, "state")["proof"]["running"]
        pid = session.game_proof.process.process.pid
    assert wait_gone(pid), "the page closed but its proof's process lives on"
    assert slots.in_use == 0


def test_a_proof_takes_a_slot_and_is_refused_past_the_limit(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    app = create_app(ENGINE, Guard("testserver"), max_engines=1)
    with TestClient(app) as test_client, \
            test_client.websocket_connect("/ws?game=uttt") as first, \
            test_client.websocket_connect("/ws?game=uttt") as second:
        for ws in (first, second):
            next_of(ws, "state")
            play(ws, ["ee"])
        send(first, cmd="prove", on=True, limit=60)
        assert next_of(first, "state")["proof"]["running"]
        send(second, cmd="prove", on=True, limit=60)
        error = next_of(second, "error")["message"]
        assert "at most 1 processes for engines and proofs" in error and "--max-engines" in error
        assert not current_state(second)["proof"]["running"]
        send(second, cmd="new", game="duck")
        next_of(second, "state")
        send(second, cmd="prove", on=True)
        assert "for Ultimate Tic-Tac-Toe" in next_of(second, "error")["message"]
        assert app.state.slots.in_use == 1
    assert app.state.slots.in_use == 0
