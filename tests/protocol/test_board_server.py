"""`mallard board` without a browser: the WebSocket protocol (every bad message answers one error
and keeps the game), the game commands against the rules, the runner's PGN both ways, the
engine process of a page (it plays, it analyses, it ends with the page), and the command line."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="mallard board needs mallard[board]")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

with warnings.catch_warnings():  # newer Starlette would rather have httpx2: both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from mallard.engines import get_game  # noqa: E402
from mallard.protocol import board  # noqa: E402
from mallard.protocol.board.app import create_app  # noqa: E402
from mallard.protocol.board.guard import Guard  # noqa: E402
from mallard.protocol.board.limits import MAX_MESSAGE  # noqa: E402
from mallard.protocol.board.view import read_pgn  # noqa: E402
from mallard.tournaments.pgn import game_pgn  # noqa: E402
from mallard.tournaments.players import EngineConfig  # noqa: E402
from mallard.tournaments.records import GameJob, GameRecord, MoveRecord, Opening  # noqa: E402
from tests.protocol.conftest import ENGINE, ROOT  # noqa: E402
from tests.protocol.test_cli import run_main  # noqa: E402


def send(ws, **message):
    ws.send_text(json.dumps(message))


def next_of(ws, kind, timeout=60.0):
    """The next message of a type (others skipped), within `timeout` seconds of engine work."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = ws.receive_json()
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message in {timeout} s")


def current_state(ws):
    send(ws, cmd="state")
    return next_of(ws, "state")


BAD_MESSAGES = [
    ("{not json", "bad JSON"),
    ("[1, 2]", '"cmd"'),
    ('"move"', '"cmd"'),
    (json.dumps({"cmd": "fly"}), "unknown command 'fly'"),
    (json.dumps({"cmd": 7}), '"cmd"'),
    (json.dumps({"cmd": "move"}), '"move" must be a text'),
    (json.dumps({"cmd": "move", "move": ["e4"]}), '"move" must be a text'),
    (json.dumps({"cmd": "move", "move": "P@d1"}), "P@d1"),  # a Connect Four move in duck
    (json.dumps({"cmd": "move", "move": "ae"}), "ae"),  # a UTTT move in duck
    (json.dumps({"cmd": "move", "move": "d7d5"}), "duck"),  # no duck square
    (json.dumps({"cmd": "move", "piece": "d7d5", "duck": "e4"}), "occupied"),
    (json.dumps({"cmd": "move", "move": "e2e3,e3e6"}), "e2"),  # White's move, Black to move
    (json.dumps({"cmd": "goto", "ply": 5}), "no ply 5"),
    (json.dumps({"cmd": "goto", "ply": True}), "no ply"),
    (json.dumps({"cmd": "load", "text": "rnbqkbnr/pppppppp/8 w"}), "not a duck position"),
    (json.dumps({"cmd": "load", "text": ""}), "nothing to load"),
    (json.dumps({"cmd": "new", "game": "chess960"}), "unknown variant"),
    (json.dumps({"cmd": "play", "side": 2}), '"side"'),
    (json.dumps({"cmd": "play", "side": 1, "movetime": -5}), "time per move"),
    (json.dumps({"cmd": "analyse", "on": "yes"}), '"on"'),
    (json.dumps({"cmd": "preview", "moves": "e2e4"}), '"moves"'),
    (json.dumps({"cmd": "preview", "moves": ["zz"]}), "zz"),
    (json.dumps({"cmd": "pgn_import", "pgn": "1. e4,e5 Qxx9 *"}), "PGN move"),
    (json.dumps({"cmd": "pgn_import", "pgn": '[Variant "chess960"]\n\n*'}), "unknown variant"),
    ("x" * (MAX_MESSAGE + 1), "message too large"),
    (json.dumps({"cmd": "move", "move": "e2e4,e4e5" * 100_000}), "message too large"),
    ("[" * 100_000 + "]" * 100_000, "bad JSON"),
]


def test_bad_messages_answer_one_error_and_keep_the_game(client):
    with client.websocket_connect("/ws?game=duck") as ws:
        first = next_of(ws, "state")
        send(ws, cmd="undo")
        assert next_of(ws, "error")["message"] == "no move to take back"
        send(ws, cmd="move", move="e2e4,e4e5")
        before = next_of(ws, "state")
        assert before["moves"] == [{"text": "e2e4,e4e5", "san": "e4,e5", "human": "e4,e5"}]
        for text, words in BAD_MESSAGES:
            ws.send_text(text)
            answer = ws.receive_json()
            assert answer["type"] == "error" and words in answer["message"], (text[:60], answer)
            after = current_state(ws)
            assert (after["fen"], after["moves"]) == (before["fen"], before["moves"]), text[:60]
        ws.send_bytes(b"\xff\xfe")
        assert ws.receive_json()["type"] == "error"
        assert current_state(ws)["fen"] == before["fen"] != first["fen"]


def test_moves_takeback_jumps_and_loading_follow_the_rules(client):
    with client.websocket_connect("/ws?game=cfour") as ws:
        next_of(ws, "state")
        for column in "dded":
            send(ws, cmd="move", move=column)
            state = next_of(ws, "state")
        expected = get_game("cfour").start_position().play_text("4454")
        assert state["fen"] == expected.fen() and state["cursor"] == 4
        assert [m["text"] for m in state["moves"]] == ["P@d1", "P@d2", "P@e1", "P@d3"]
        assert state["board"]["columns"][3] == [0, 1, 1] and state["board"]["playable"] == \
            list(range(7))
        send(ws, cmd="goto", ply=1)
        state = next_of(ws, "state")
        assert state["cursor"] == 1 and len(state["moves"]) == 4
        assert state["fen"] == get_game("cfour").start_position().play_text("4").fen()
        send(ws, cmd="move", move="a")  # from an earlier ply: the later moves go
        state = next_of(ws, "state")
        assert [m["text"] for m in state["moves"]] == ["P@d1", "P@a1"]
        send(ws, cmd="undo")
        assert [m["text"] for m in next_of(ws, "state")["moves"]] == ["P@d1"]
        send(ws, cmd="load", text="4444443")  # a column sequence: moves that can be replayed
        state = next_of(ws, "state")
        assert len(state["moves"]) == 7 and state["cursor"] == 7
        send(ws, cmd="move", move="d")
        assert "full" in next_of(ws, "error")["message"]
        send(ws, cmd="new", game="uttt")
        state = next_of(ws, "state")
        assert state["variant"] == "uttt" and len(state["board"]["legal"]) == 81
        send(ws, cmd="move", move="ae")
        state = next_of(ws, "state")
        assert state["board"]["forced"] == 4 and state["board"]["legal"] == list(range(36, 45))
        send(ws, cmd="move", move="aa")
        assert "must be in board e" in next_of(ws, "error")["message"]


class PersonsMove(MoveRecord):
    """A move nobody timed carries no comment (the runner's moves always have one)."""

    def comment(self):
        return None


def expected_pgn(variant: str, moves: list[str], exported: str) -> str:
    """What the match runner writes for these moves, with the exported game's date and names."""
    tags, _ = read_pgn(exported)
    position = get_game(variant).start_position()
    records = []
    for text in moves:
        move = position.parse_move(text)
        records.append(PersonsMove(position.format_move(move), position.pgn_move(move)))
        position = position.play(move)
    result = position.result(claim_draw=True)
    players = [EngineConfig(name, ["x"]) for name in ("?", "?")]
    job = GameJob(1, 1, 1, variant, players[0], players[1], 0, 1, Opening())
    reason = f"{('White', 'Black')[result.winner]} wins ({result.reason})"
    start = get_game(variant).start_position().fen()
    record = GameRecord(job, result.pgn, reason, "normal", records, start,
                        tags["GameStartTime"], 0, "?", "?")
    text = game_pgn(record, event="mallard board", site="local")
    return text


@pytest.mark.parametrize("variant, moves", [
    ("cfour", list("4455667")),
    ("duck", ["e2e4,e4e6", "f7f5,f5c6", "d1h5,h5h4", "a7a6,a6a5", "h5e8,e8e6"]),
])
def test_pgn_export_is_the_runners_and_imports_back(client, variant, moves):
    with client.websocket_connect(f"/ws?game={variant}") as ws:
        next_of(ws, "state")
        for move in moves:
            send(ws, cmd="move", move=move)
            state = next_of(ws, "state")
        winner = {"cfour": "Yellow", "duck": "White"}[variant]  # the game's own side names
        assert state["over"] and state["result"].startswith(f"{winner} wins")
        send(ws, cmd="pgn_export")
        pgn = next_of(ws, "pgn")["pgn"]
        assert pgn == expected_pgn(variant, moves, pgn)
        send(ws, cmd="new", game="uttt")
        next_of(ws, "state")
        send(ws, cmd="pgn_import", pgn=pgn)
        imported = next_of(ws, "state")
        assert imported["variant"] == variant and imported["fen"] == state["fen"]
        assert imported["moves"] == state["moves"]


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_the_engine_plays_analyses_and_ends_with_the_page(client):
    with client.websocket_connect("/ws?game=cfour") as ws:
        next_of(ws, "state")
        send(ws, cmd="play", side=1, movetime=300)
        next_of(ws, "state")
        send(ws, cmd="move", move="d")
        while True:  # the engine answers as the second player
            state = next_of(ws, "state", timeout=120)
            if len(state["moves"]) == 2:
                break
        send(ws, cmd="play", side=None, movetime=300)
        next_of(ws, "state")
        send(ws, cmd="analyse", on=True)
        columns = {}
        deadline = time.monotonic() + 120
        while len(columns) < 7 and time.monotonic() < deadline:
            info = next_of(ws, "info", timeout=120)
            if info["fen"] == state["fen"] and "column" in info:
                columns[info["column"]] = info["scoreText"]
        assert len(columns) == 7, columns
        assert all(text == "draw" or text.startswith(("win in", "loss in"))
                   for text in columns.values()), columns
        (session,) = client.app_sessions
        pid = session.engine.pid
        os.kill(pid, 0)
    assert wait_gone(pid), "the page closed but its engine process lives on"


SLOW_LOADING_ENGINE = [sys.executable, str(ROOT / "tests" / "tournaments" / "scripted_engine.py"),
                       "--behaviour", "slowload", "--delay", "0.5"]


def test_a_search_after_a_variant_switch_is_sent_once_the_engine_has_loaded_it():
    """The engine takes 0.5 s to load a game: the link's `go` (and a `stop` given meanwhile)
    wait for the `readyok` that follows the switch, so a move's time is not spent loading; two
    switches in a row each wait for theirs."""
    import pyffish

    from mallard.protocol.board.engine import EngineLink
    from tests import oracles  # noqa: F401  (loads the cfour variant into pyffish)

    events: queue.Queue = queue.Queue()
    link = EngineLink(SLOW_LOADING_ENGINE, "duck", lambda *event: events.put(event))
    link.start(30_000)

    def answer(search) -> tuple[list, str]:
        strings = []
        while True:
            kind, of, payload = events.get(timeout=30)
            assert kind != "gone", payload
            if of is not search:
                continue
            if kind == "info" and "string" in payload:
                strings.append(payload["string"])
            if kind == "bestmove":
                return strings, payload

    try:
        link.set_variant("cfour")
        search = link.go(None, [], "movetime 50", "play")
        strings, move = answer(search)
        assert strings == ["go after readyok"]
        assert move in pyffish.legal_moves("cfour", pyffish.start_fen("cfour"), [])
        link.set_variant("duck")
        search = link.go(None, ["e2e4,e4d5"], "infinite", "analyse")
        link.stop()
        strings, move = answer(search)
        assert search.stopped and strings == ["go after readyok"]
        assert move in pyffish.legal_moves("duck", pyffish.start_fen("duck"), ["e2e4,e4d5"])
        link.set_variant("cfour")  # two switches before the first has loaded
        link.set_variant("duck")
        search = link.go(None, [], "movetime 50", "play")
        strings, move = answer(search)
        assert strings == ["go after readyok"]
        assert move in pyffish.legal_moves("duck", pyffish.start_fen("duck"), [])
    finally:
        link.close()


def test_without_the_extra_board_says_what_to_install(monkeypatch):
    monkeypatch.setattr(board, "missing_dependency", lambda: "starlette")
    code, out, err = run_main(["board"])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "pip install 'mallard[board]'" in err


def test_the_command_prints_its_address_and_serves_the_page():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "board",
                                "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("mallard board: http://127.0.0.1:"), line
        address = line.split()[2]
        base, token = address.split("/?token=")
        with urllib.request.urlopen(address, timeout=10) as page:
            html = page.read().decode()
            assert page.headers["Set-Cookie"] is None  # the token stays in the address
        assert '<svg id="board"' in html and token
        assert 'src="http' not in html and 'href="http' not in html  # nothing from elsewhere
        with urllib.request.urlopen(base + "/static/board.js", timeout=10) as response:
            assert b"new WebSocket" in response.read()
        with pytest.raises(urllib.error.HTTPError) as refused:  # the address without its token
            urllib.request.urlopen(base + "/", timeout=10)
        assert refused.value.code == 403
    finally:
        process.terminate()
        process.wait(10)
    assert "Traceback" not in process.stderr.read()


def test_the_served_page_answers_odd_texts_in_one_printable_line_and_bounds_messages():
    """Through `mallard board`'s own server (the test client skips the wire): an echoed lone
    surrogate cannot be encoded as UTF-8, and once ended the page's sender for good; a NUL came
    back raw; a message over the bound is refused by the WebSocket layer, before it is read."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from mallard.protocol.board.limits import MAX_MESSAGE_BYTES

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "board",
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        address = process.stdout.readline().split()[2]
        base, token = address.split("/?token=")
        socket_address = base.replace("http://", "ws://") + f"/ws?game=cfour&token={token}"

        def answer(ws, kind):
            while True:
                message = json.loads(ws.recv(timeout=30))
                if message["type"] == kind:
                    return message

        with connect(socket_address, max_size=None) as ws:
            assert answer(ws, "state")["variant"] == "cfour"
            for move in ("\\ud800", "a\\u0000b"):  # JSON escapes: the wire text is ASCII
                ws.send('{"cmd": "move", "move": "%s"}' % move)
                message = answer(ws, "error")["message"]
                assert message.isprintable() and "?" in message, message
            ws.send('{"cmd": "move", "move": "d"}')
            assert answer(ws, "state")["moves"][0]["text"] == "P@d1"  # still answering
            ws.send("x" * (MAX_MESSAGE_BYTES + 1))
            with pytest.raises(ConnectionClosed) as closed:
                answer(ws, "state")
            assert closed.value.rcvd.code == 1009  # too big
    finally:
        process.terminate()
        process.wait(10)
    assert "Traceback" not in process.stderr.read()


def test_another_host_than_loopback_is_served_with_a_warning():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "board",
                                "--port", "0", "--host", "0.0.0.0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline().startswith("mallard board: http://0.0.0.0:")
    finally:
        process.terminate()
        process.wait(10)
    assert "warning: serving on 0.0.0.0" in process.stderr.read()


# --- who may use the board (guard.py) ---------------------------------------------------------

def engine_starts(monkeypatch) -> list:
    """Every engine start from now on, in a list."""
    from mallard.protocol.board import session as session_module

    starts = []
    original = session_module.EngineLink.start
    monkeypatch.setattr(session_module.EngineLink, "start",
                        lambda self, *a, **k: (starts.append(self), original(self, *a, **k)))
    return starts


@pytest.fixture
def guarded(monkeypatch):
    """An app with a token, as `mallard board` serves it; `engines_started` counts engines."""
    started = engine_starts(monkeypatch)
    app = create_app(ENGINE, Guard("testserver", "s3cret"))
    with TestClient(app) as test_client:
        test_client.engines_started = started
        yield test_client


def _refused_socket(client, path, **headers):
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect(path, headers=headers) as ws:
            ws.receive_json()
    return refused.value


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},                      # another site's page
    {"origin": "http://testserver:9999"},                   # another server on this machine
    {"host": "evil.example"},                               # DNS rebinding
    {"host": "evil.example", "origin": "http://evil.example"},
])
def test_a_foreign_origin_or_host_is_refused_and_starts_no_engine(guarded, headers):
    _refused_socket(guarded, "/ws?game=cfour&token=s3cret", **headers)
    if "host" in headers:
        assert guarded.get("/?token=s3cret", headers=headers).status_code == 403
    assert guarded.engines_started == [] and not guarded.app.state.sessions


def test_without_the_token_only_the_public_files_are_served(guarded):
    assert guarded.get("/").status_code == 403
    assert guarded.get("/?token=wrong").status_code == 403
    _refused_socket(guarded, "/ws?game=cfour")
    _refused_socket(guarded, "/ws?game=cfour&token=wrong")
    assert guarded.engines_started == []
    assert guarded.get("/static/board.js").status_code == 200  # shipped in the package
    assert guarded.get("/static/board.js", headers={"host": "evil.example"}).status_code == 403


def test_the_page_and_its_socket_take_the_token_of_the_address_and_set_no_cookie(guarded):
    page = guarded.get("/?token=s3cret", headers={"origin": "http://testserver"})
    assert page.status_code == 200 and "set-cookie" not in page.headers
    with guarded.websocket_connect("/ws?game=cfour&token=s3cret",
                                   headers={"origin": "http://testserver"}) as ws:
        assert next_of(ws, "state")["variant"] == "cfour"
    _refused_socket(guarded, "/ws?game=cfour", cookie="mallard_board_token=s3cret")


@pytest.mark.parametrize("path, headers", [
    ("/?token=%C3%A9", {}),                                 # a token of non-ASCII text
    ("/?token=%FF%FE", {}),                                 # not even UTF-8
    ("/?token=s3cret", {"host": "[::1"}),                   # a host that is no host name
    ("/?token=s3cret", {"origin": "http://[x"}),            # an origin that is no address
    ("/static/board.js", {"host": "[::1"}),
])
def test_headers_and_tokens_the_checks_cannot_read_are_refused_not_a_crash(guarded, path,
                                                                           headers):
    assert guarded.get(path, headers=headers).status_code == 403
    _refused_socket(guarded, "/ws" + path[1:] if path.startswith("/?") else "/ws", **headers)
    assert guarded.engines_started == []


# --- what one page and the server may cost ----------------------------------------------------

@pytest.fixture
def counted(monkeypatch):
    """An app of at most two engines; `starts` holds every engine start."""
    starts = engine_starts(monkeypatch)
    app = create_app(ENGINE, Guard("testserver"), max_engines=2)
    with TestClient(app) as test_client:
        test_client.starts = starts
        test_client.slots = app.state.slots
        yield test_client


def test_a_page_flooding_play_before_its_engine_is_up_gets_one_engine(counted):
    """Each early `play` started an engine of its own: 10-30 of them made up to 7 processes."""
    with counted.websocket_connect("/ws?game=cfour") as ws:
        next_of(ws, "state")
        for _ in range(20):
            send(ws, cmd="play", side=0, movetime=100)
        moves = []
        while len(moves) < 1:
            moves = next_of(ws, "state", timeout=120)["moves"]
        assert len(counted.starts) == 1 and counted.slots.in_use == 1
    assert counted.slots.in_use == 0  # the page closed: its slot is free


def test_a_page_beyond_the_engine_limit_is_told_why_it_has_none(counted):
    with counted.websocket_connect("/ws?game=cfour") as first, \
            counted.websocket_connect("/ws?game=cfour") as second, \
            counted.websocket_connect("/ws?game=cfour") as third:
        for ws in (first, second):
            next_of(ws, "state")
            send(ws, cmd="play", side=0, movetime=100)
            while not next_of(ws, "state", timeout=120)["moves"]:
                pass
        next_of(third, "state")
        send(third, cmd="play", side=0, movetime=100)
        error = next_of(third, "error", timeout=60)["message"]
        assert "at most 2 at once" in error and "--max-engines" in error
        assert len(counted.starts) == 2
    assert counted.slots.in_use == 0


def test_sigterm_ends_the_server_at_once_while_an_engine_never_answers(tmp_path):
    """An engine that never answers `uciok` held its page for the 60 s start timeout and the
    server's SIGTERM for up to 58 s; now the page's close kills the starting engine."""
    import asyncio
    import signal

    websockets = pytest.importorskip("websockets")
    stuck = tmp_path / "stuck_engine.py"
    stuck.write_text("import time\ntime.sleep(600)\n")
    board_process = subprocess.Popen(
        [sys.executable, "-m", "mallard.protocol.cli", "board", "--port", "0", "--engine",
         f"{sys.executable} {stuck}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base, token = board_process.stdout.readline().split()[2].split("/?token=")

        async def open_page():
            ws = await websockets.connect(f"ws{base[4:]}/ws?game=cfour&token={token}",
                                          origin=base)
            await ws.send(json.dumps({"cmd": "play", "side": 0, "movetime": 100}))
            await asyncio.sleep(2)  # the engine's start is under way, and stays so
            return ws

        loop = asyncio.new_event_loop()
        ws = loop.run_until_complete(open_page())
        sent = time.monotonic()
        board_process.send_signal(signal.SIGTERM)
        board_process.wait(30)
        assert time.monotonic() - sent < 2
        loop.run_until_complete(ws.close())
        loop.close()
    finally:
        if board_process.poll() is None:
            board_process.kill()
            board_process.wait()
    assert "Traceback" not in board_process.stderr.read()
    left = subprocess.run(["pgrep", "-f", str(stuck)], capture_output=True, text=True).stdout
    assert left == ""  # the stuck engine was killed, not left behind


def test_the_outbox_merges_superseded_messages_and_stays_bounded():
    from mallard.protocol.board.app import Outbox
    from mallard.protocol.board.limits import MAX_QUEUED

    outbox = Outbox()
    outbox.put({"type": "state", "n": 1})
    outbox.put({"type": "info", "search": 1, "multipv": 1, "depth": 1})
    outbox.put({"type": "error", "message": "kept"})
    outbox.put({"type": "state", "n": 2})
    outbox.put({"type": "info", "search": 1, "multipv": 1, "depth": 2})
    outbox.put({"type": "info", "search": 1, "multipv": 2, "depth": 2})
    kinds = [(m["type"], m.get("n", m.get("depth"))) for m in outbox._items]
    assert kinds == [("error", None), ("state", 2), ("info", 2), ("info", 2)]
    verdicts = Outbox()  # a proof's line is no score line: the next score keeps it
    verdicts.put({"type": "info", "search": 1, "multipv": 1, "string": "proven draw"})
    verdicts.put({"type": "info", "search": 1, "multipv": 1, "depth": 3})
    assert [m.get("string", m.get("depth")) for m in verdicts._items] == ["proven draw", 3]
    for column in range(10 * MAX_QUEUED):  # lines that merge nothing: the oldest go
        outbox.put({"type": "info", "search": 2, "multipv": 1, "column": column})
    assert len(outbox) == MAX_QUEUED
    assert [m["type"] for m in list(outbox._items)[:2]] == ["error", "state"]


def test_a_flood_and_a_nested_pgn_do_not_hold_another_page(tmp_path):
    """20,000 tiny messages froze the server for over a minute, and a 120 KB PGN of nested
    parentheses for 55 s: now a flood is dropped unread past the page's rate, the PGN reader is
    linear and off the event loop, and another page is answered at once."""
    import asyncio

    websockets = pytest.importorskip("websockets")
    server = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "board", "--port",
                               "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base, token = server.stdout.readline().split()[2].split("/?token=")
        url = f"ws{base[4:]}/ws?game=duck&token={token}"

        nested = "(" * 60_000 + "1. e4,e5" + ")" * 60_000
        pgn = json.dumps({"cmd": "pgn_import", "pgn": f'[Variant "duck"]\n\n{nested} *'})
        assert len(pgn) < MAX_MESSAGE  # the most a page may send in one message

        async def scenario() -> float:
            async with websockets.connect(url, origin=base) as flooder, \
                    websockets.connect(url, origin=base) as importer, \
                    websockets.connect(url, origin=base) as other:
                await other.recv()  # its first state
                await importer.send(pgn)
                for _ in range(20_000):
                    await flooder.send('{"cmd": "state"}')
                sent = time.monotonic()
                await other.send('{"cmd": "state"}')
                while json.loads(await asyncio.wait_for(other.recv(), 30))["type"] != "state":
                    pass
                return time.monotonic() - sent

        waited = asyncio.run(scenario())
        assert waited < 1, f"{waited:.2f} s"
    finally:
        server.terminate()
        server.wait(10)


def test_moves_read_as_people_count_them_and_files_keep_their_notation(client):
    """Connect Four moves read `P@d1` where a person counts columns: the page's `human` text
    is the column 1-7, while the wire and the PGN keep the engine's notation."""
    with client.websocket_connect("/ws?game=cfour") as ws:
        next_of(ws, "state")
        for column in "ddc":
            send(ws, cmd="move", move=column)
            state = next_of(ws, "state")
        assert [(m["text"], m["human"]) for m in state["moves"]] == [
            ("P@d1", "4"), ("P@d2", "4"), ("P@c1", "3")]
        send(ws, cmd="pgn_export")
        assert "1. P@d1 P@d2 2. P@c1" in next_of(ws, "pgn")["pgn"].replace("\n", " ")
        send(ws, cmd="analyse", on=True)
        info = next_of(ws, "info", timeout=120)
        assert info["pvHuman"] and all(text.isdigit() for text in info["pvHuman"])
        assert all(text.startswith("P@") for text in info["pv"])


def _rss_mb(pid) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmRSS:"))) / 1024


def _server_and_engines(pid: int) -> tuple[float, int, float]:
    """(the server's resident MB, its child processes, their resident MB), from /proc."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                              text=True).stdout.split()
    return _rss_mb(pid), len(children), sum(_rss_mb(child) for child in children)


def test_thirty_pages_run_at_most_max_engines_and_each_is_told_its_state():
    """30 sockets made 30 engines and 8.2 GB: now at most --max-engines run, and the pages
    beyond them hear why."""
    import asyncio

    websockets = pytest.importorskip("websockets")
    server = subprocess.Popen([sys.executable, "-m", "mallard.protocol.cli", "board", "--port",
                               "0", "--max-engines", "4"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        base, token = server.stdout.readline().split()[2].split("/?token=")
        url = f"ws{base[4:]}/ws?game=cfour&token={token}"

        async def page() -> str:
            async with websockets.connect(url, origin=base, open_timeout=60) as ws:
                await ws.send(json.dumps({"cmd": "play", "side": 0, "movetime": 100}))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 180))
                    if message["type"] == "error":
                        return message["message"]
                    if message["type"] == "state" and message["moves"]:
                        await asyncio.sleep(3)  # hold the engine while the others ask
                        return "played"

        async def pages() -> tuple[list, tuple]:
            tasks = [asyncio.create_task(page()) for _ in range(30)]
            await asyncio.sleep(5)
            peak = _server_and_engines(server.pid)
            return await asyncio.gather(*tasks), peak

        answers, (server_mb, engines, engines_mb) = asyncio.run(pages())
        assert len(answers) == 30 and answers.count("played") >= 4
        assert all(answer == "played" or "at most 4 at once" in answer for answer in answers)
        # the server's own memory; each engine is a process of its own, bounded by their count
        assert engines <= 4 and server_mb < 1536, (server_mb, engines, engines_mb)
    finally:
        server.terminate()
        server.wait(10)


def test_the_clocks_count_each_turn_and_add_the_increment():
    from mallard.protocol.board.clock import GameClock

    now = [100.0]
    clock = GameClock(1000, 200, now=lambda: now[0])
    clock.start(0)
    now[0] += 0.4
    assert clock.left_ms(0) == 600 and clock.left_ms(1) == 1000
    assert clock.moved(0) and clock.left_ms(0) == 800
    clock.start(1)
    now[0] += 0.25
    clock.pause()
    now[0] += 5  # paused: nobody's time runs
    assert clock.view() == {"base": 1000, "increment": 200, "left": [800, 750], "running": None}
    clock.start(1)
    now[0] += 0.75
    assert clock.flag_in() == 0 and not clock.moved(1) and clock.left_ms(1) == 0


@pytest.fixture
def idle_client(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    app = create_app(ENGINE, Guard("testserver"), idle_seconds=4)
    with TestClient(app) as test_client:
        test_client.app_sessions = app.state.sessions
        yield test_client


def test_a_person_who_lets_the_flag_fall_loses_on_time(client):
    with client.websocket_connect("/ws?game=cfour") as ws:
        next_of(ws, "state")
        send(ws, cmd="play", side=1, clock={"base": 1000, "increment": 0})
        started = next_of(ws, "state")
        assert started["clock"]["running"] == 0 and not started["over"]
        while True:
            state = next_of(ws, "state", timeout=10)
            if state["over"]:
                break
        assert state["result"] == "Yellow loses on time" and state["gameOver"] == state["result"]
        assert state["clock"]["left"][0] == 0 and state["board"]["playable"] == []
        send(ws, cmd="move", move="P@d1")
        assert "the game is over (Yellow loses on time)" in next_of(ws, "error")["message"]
        send(ws, cmd="new")
        fresh = next_of(ws, "state")
        assert not fresh["over"] and fresh["clock"]["left"] == [1000, 1000]


@pytest.mark.parametrize("level, deepest", [(0, 4), (20, None)])
def test_the_engine_plays_at_the_chosen_level_and_scores_the_game(client, level, deepest):
    with client.websocket_connect("/ws?game=duck") as ws:
        next_of(ws, "state")
        send(ws, cmd="play", side=1, movetime=500, level=level)
        assert next_of(ws, "state")["engine"]["level"] == level
        send(ws, cmd="move", piece="e2e4", duck="e4d5"[2:])
        while True:
            state = next_of(ws, "state")
            if len(state["moves"]) == 2:
                break
        assert state["board"]["last"]["from"] + state["board"]["last"]["to"] == \
            state["moves"][1]["text"][:4]
        assert state["evals"][0] is None and state["evals"][1] is not None  # the engine's turn
        session = next(iter(client.app_sessions))
        depth = session.moves[1].depth
        assert depth is not None
        if deepest is not None:
            assert depth <= deepest, depth  # 400 nodes at level 0
        else:
            assert depth > 4, depth


def test_an_idle_pages_engine_ends_and_starts_again_when_needed(idle_client):
    with idle_client.websocket_connect("/ws?game=uttt") as ws:
        next_of(ws, "state")
        send(ws, cmd="analyse", on=True)
        next_of(ws, "info")
        session = next(iter(idle_client.app_sessions))
        pid = session.engine.pid
        assert "analysis stopped" in next_of(ws, "error", timeout=20)["message"]
        state = next_of(ws, "state")
        assert not state["engine"]["running"] and not state["engine"]["analysing"]
        assert wait_gone(pid) and idle_client.app.state.slots.in_use == 0
        send(ws, cmd="analyse", on=True)
        next_of(ws, "info")
        restarted = session.engine  # read at once: in 4 s without a message it goes again
        assert restarted is not None and restarted.pid != pid


# --- the page's game, its engine and its clock while the engine starts -------------------------

def test_a_game_chosen_while_the_engine_starts_is_the_one_it_plays(client):
    """The engine of a duck page starts; the page switches to Connect Four before it is up. The
    engine used to keep the game it was started with: a duck move in Connect Four."""
    with client.websocket_connect("/ws?game=duck") as ws:
        next_of(ws, "state")
        send(ws, cmd="play", side=0, movetime=50)  # the engine is White: it starts now
        send(ws, cmd="new", game="cfour")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            message = ws.receive_json()
            assert message["type"] != "error", message
            if message["type"] == "state" and message["variant"] == "cfour" and \
                    message["moves"]:
                break
        start = get_game("cfour").start_position()
        legal = {start.format_move(move) for move in start.legal_moves()}
        assert message["moves"][0]["text"] in legal


SLOW_STARTING_ENGINE = [sys.executable, str(ROOT / "tests" / "tournaments" / "scripted_engine.py"),
                        "--behaviour", "slowstart", "--delay", "3"]


def test_the_engines_clock_runs_from_its_search_not_while_it_starts(monkeypatch):
    """The engine takes 3 s to start, then moves at once: its clock loses well under a second.
    It used to run from the human's move, start-up included (a 1 s clock lost on time)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    app = create_app(SLOW_STARTING_ENGINE, Guard("testserver"))
    with TestClient(app) as test_client:
        with test_client.websocket_connect("/ws?game=cfour") as ws:
            next_of(ws, "state")
            send(ws, cmd="play", side=1, clock={"base": 2000, "increment": 0})
            next_of(ws, "state")
            send(ws, cmd="move", move="d")
            state = next_of(ws, "state")
            while len(state["moves"]) < 2:
                assert not state["result"], state["result"]
                state = next_of(ws, "state")
            assert state["clock"]["left"][1] > 1000, state["clock"]


@contextlib.contextmanager
def two_pages(app):
    """A test client of `app` and two Connect Four pages open on it, past their first state."""
    with TestClient(app) as test_client:
        with test_client.websocket_connect("/ws?game=cfour") as first, \
                test_client.websocket_connect("/ws?game=cfour") as second:
            next_of(first, "state")
            next_of(second, "state")
            yield test_client, first, second


def test_a_refused_analysis_leaves_analysis_off(monkeypatch):
    """With the only engine slot taken, a second page's analysis is refused: it stays off, as
    the page shows it, and does not start by itself at the page's next move."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    with two_pages(create_app(ENGINE, Guard("testserver"), max_engines=1)) as (_, first, second):
        send(first, cmd="analyse", on=True)
        assert next_of(first, "info", timeout=120)["purpose"] == "analyse"
        send(second, cmd="analyse", on=True)
        assert "no engine for this page" in next_of(second, "error")["message"]
        assert current_state(second)["engine"]["analysing"] is False


def test_pages_beyond_the_servers_bound_are_told_and_closed():
    from starlette.websockets import WebSocketDisconnect

    with two_pages(create_app(ENGINE, Guard("testserver"), max_pages=2)) as (client, first, _):
        with client.websocket_connect("/ws?game=cfour") as third:
            message = third.receive_json()
            assert message["type"] == "error" and "2 pages open" in message["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                third.receive_json()
            assert closed.value.code == 1013
        first.close()
        deadline = time.monotonic() + 10
        while len(client.app.state.sessions) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        with client.websocket_connect("/ws?game=cfour") as again:  # room again
            assert next_of(again, "state")["variant"] == "cfour"
