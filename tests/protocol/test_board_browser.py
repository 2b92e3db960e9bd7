"""`mallard board` in a real browser: Debian's headless Chromium driven by Playwright (the system
browser; Playwright never downloads one). The page is served by the board's app on a free port
in this process, with `mallard uci` from this checkout as the engine. Each game's page is
photographed under .cache/board-screenshots/ for a person to look at."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pytest.importorskip("starlette", reason="mallard board needs mallard[board]")
pytest.importorskip("uvicorn", reason="mallard board needs mallard[board]")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no {CHROMIUM}: install Debian's chromium package (.ci/run does when apt-get "
                "is there)", allow_module_level=True)

import uvicorn  # noqa: E402

from mallard.engines import get_game  # noqa: E402
from mallard.protocol.board import _listen  # noqa: E402
from mallard.protocol.board.app import create_app  # noqa: E402
from mallard.protocol.board.guard import Guard  # noqa: E402

with warnings.catch_warnings():  # the PGN helper's module imports Starlette's TestClient
    warnings.simplefilter("ignore")
    from tests.protocol.test_board_server import expected_pgn, wait_gone  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / ".cache" / "board-screenshots"
ENGINE = [sys.executable, "-m", "mallard.protocol.cli", "uci"]
WAIT_MS = 90_000
TOKEN = "browser-test-token"
LATE_UTTT = ("X;@.....XOO;.X.OOX.X./OXO.OX.XX/...OOX.XX/XOOX...XX/OOX.XOOXX/XO.X..OOX/O.....XXX/"
             "OX..OOXOO/.OOOXOOXO")


@pytest.fixture(scope="module")
def server():
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)  # the engine subprocesses run this checkout
    # compiled first: after an edit of the engines' sources their kernels compile again (a
    # minute or more on a busy machine), which a page's wait must not have to cover
    subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "warmup"], check=True,
                   timeout=900, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = create_app(ENGINE, Guard("127.0.0.1", TOKEN))  # as `mallard board` serves it
    listener = _listen("127.0.0.1", 0)
    config = uvicorn.Config(app, log_level="warning", ws="auto", lifespan="on")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    host, port = listener.getsockname()[:2]
    yield app, f"http://{host}:{port}/"
    running.should_exit = True
    thread.join(15)
    if saved is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1100, "height": 720})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    yield opened
    context.close()


def open_game(page, server, game: str):
    _, address = server
    page.goto(f"{address}?game={game}&token={TOKEN}")
    page.wait_for_selector("#connection:has-text('connected')")
    page.wait_for_function(f"document.querySelector('#games button.active')?.dataset.game "
                           f"=== '{game}'")


def fen(page) -> str:
    return page.input_value("#fen")


def move_count(page) -> int:
    return page.locator("#moves .move").count()


def wait_moves(page, count: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('#moves .move').length === {count}")


def shoot(page, name: str, full_page: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


def engine_pid(server) -> int:
    app, _ = server
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        engines = [s.engine for s in app.state.sessions if s.engine is not None]
        if engines:
            return engines[0].pid
        time.sleep(0.1)
    raise AssertionError("no engine started")


def test_duck_move_by_clicks_engine_reply_and_analysis(page, server):
    open_game(page, server, "duck")
    page.select_option("#engine-side", "1")
    page.fill("#movetime", "0.3")
    page.click("#apply-play")
    start = fen(page)
    page.click("[data-square=e2]")
    assert page.locator("rect.target[data-square=e4]").count() == 1
    page.click("[data-square=e4]")
    page.wait_for_selector("rect.duck-target[data-square=e5]")
    # a square the duck cannot take (the pawn stands there): a message, nothing changes
    page.click("[data-square=e4]")
    page.wait_for_selector("#message.error:has-text('occupied')")
    assert fen(page) == start and move_count(page) == 0
    page.click("[data-square=e2]")
    page.click("[data-square=e4]")
    page.click("[data-square=d5]")
    wait_moves(page, 2)  # ours and the engine's reply
    assert page.locator("#moves .move").first.inner_text() == "e4,d5"
    assert "duck" not in page.inner_text("#message")
    page.click("#analyse")
    page.wait_for_selector("#analysis .line .pv-move")
    first_depth = page.inner_text("#analysis .line .muted")
    page.wait_for_function(
        f"document.querySelector('#analysis .line .muted')?.textContent !== '{first_depth}'")
    assert page.locator("#analysis .line").count() >= 2  # MultiPV lines
    before = fen(page)
    page.locator("#analysis .line .pv-move").first.click()  # preview, the game unchanged
    page.wait_for_selector("#preview-bar:not([hidden])")
    assert fen(page) == before
    page.click("#preview-back")
    page.wait_for_selector("#preview-bar[hidden]", state="attached")
    assert page.locator("[data-duck]").count() == 1
    shoot(page, "duck")


def test_connect_four_drops_and_exact_scores_for_every_column(page, server):
    open_game(page, server, "cfour")
    for column in (3, 3, 4, 2):
        page.click(f"rect.cf-column[data-column='{column}']")
    wait_moves(page, 4)
    assert fen(page) == get_game("cfour").start_position().play_text("4453").fen()
    page.click("#analyse")
    page.wait_for_function("document.querySelectorAll('#cfour-scores .cfour-score').length === 7")
    scores = page.locator("#cfour-scores .cfour-score").all_inner_texts()
    assert all(re.fullmatch(r"[a-g]: (win in \d+|loss in \d+|draw)", text) for text in scores), \
        scores
    labels = page.locator("text.colscore").all_text_contents()
    assert len(labels) == 7 and all(re.fullmatch(r"win in \d+|loss in \d+|draw", text)
                                    for text in labels), labels
    shoot(page, "cfour")
    page.click("#analyse")


def test_uttt_forced_board_is_highlighted_and_illegal_clicks_change_nothing(page, server):
    open_game(page, server, "uttt")
    page.click("rect.uttt-cell[data-move='4']")  # board a, centre cell: O must play in e
    page.wait_for_selector("rect.miniboard.forced[data-board='4']")
    page.click("rect.uttt-cell[data-move='44']")  # board e, bottom right: X must play in i
    page.wait_for_selector("rect.miniboard.forced[data-board='8']")
    assert page.locator("rect.miniboard.forced").count() == 1
    before = fen(page)
    page.click("rect.uttt-cell[data-move='0']")  # not in board i
    page.wait_for_selector("#message.error:has-text('must be in board i')")
    assert fen(page) == before and move_count(page) == 2
    page.click("rect.uttt-cell[data-move='4']")  # taken
    page.wait_for_selector("#message.error:has-text('illegal')")
    assert fen(page) == before
    page.fill("#load-text", LATE_UTTT)  # late enough for the prover to settle it
    page.click("#load")
    page.wait_for_function(f"document.querySelector('#fen').value === '{LATE_UTTT}'")
    assert page.locator("rect.miniboard.closed").count() == 3  # g, h, i
    page.click("#analyse")
    page.wait_for_selector("#analysis .line .pv-move")
    page.wait_for_selector("#verdict:has-text('Prover: proven draw')")
    shoot(page, "uttt")
    page.click("#analyse")


def test_a_finished_games_pgn_is_what_the_rules_give(page, server):
    open_game(page, server, "cfour")
    page.fill("#load-text", "not a position")
    page.click("#load")
    page.wait_for_selector("#message.error:has-text('not a cfour position')")
    assert move_count(page) == 0
    page.fill("#load-text", "445566")
    page.click("#load")
    wait_moves(page, 6)
    page.click("rect.cf-column[data-column='6']")
    page.wait_for_selector("#result:has-text('Yellow wins (four in a row)')")
    page.click("rect.cf-column[data-column='0']")  # after the end: refused
    page.wait_for_selector("#message.error:has-text('over')")
    page.click("#pgn-export")
    page.wait_for_function("document.querySelector('#pgn').value.includes('1-0')")
    exported = page.input_value("#pgn")
    assert exported == expected_pgn("cfour", list("4455667"), exported)
    page.click("#takeback")
    wait_moves(page, 6)
    page.click("#moves .move >> nth=1")  # jump to ply 2
    page.wait_for_function("document.querySelector('#moves .move.current')?.dataset.ply === '2'")
    assert fen(page) == get_game("cfour").start_position().play_text("44").fen()


def test_closing_the_page_ends_its_engine(browser, server):
    app, _ = server
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    deadline = time.monotonic() + 15
    while app.state.sessions and time.monotonic() < deadline:  # earlier pages' sessions end
        time.sleep(0.1)
    assert not app.state.sessions
    open_game(opened, server, "cfour")
    opened.click("#analyse")
    opened.wait_for_selector("#analysis .line")
    pid = engine_pid(server)
    os.kill(pid, 0)
    opened.close()
    context.close()
    assert wait_gone(pid), "the page closed but its engine process lives on"


def test_another_server_of_this_host_never_receives_the_token(page, server):
    """Browsers send a host's cookies to all of its ports: a token kept in a cookie would reach
    any other server on 127.0.0.1, another user's too. The page connects with the token of its
    address, and a later visit to another port of the host carries nothing of it."""
    import http.server

    seen = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(str(self.headers))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"another server")

        def log_message(self, *args):
            pass

    other = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        open_game(page, server, "cfour")  # connected: the socket took the token
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        assert "another server" in page.content()
    finally:
        other.shutdown()
    assert seen and not any(TOKEN in headers for headers in seen)


def drag(page, start: str, end: str) -> None:
    """Press on one square, move the mouse in steps, and release on another."""
    begin = page.locator(f"rect[data-square={start}]").bounding_box()
    finish = page.locator(f"rect[data-square={end}]").bounding_box()
    page.mouse.move(begin["x"] + begin["width"] / 2, begin["y"] + begin["height"] / 2)
    page.mouse.down()
    page.mouse.move(finish["x"] + finish["width"] / 2, finish["y"] + finish["height"] / 2,
                    steps=8)
    page.mouse.up()


def move_texts(page) -> list[str]:
    return page.locator("#moves .move").evaluate_all("links => links.map(l => l.title)")


def duck_fen(moves: list[str]) -> str:
    position = get_game("duck").start_position()
    for text in moves:
        position = position.play(position.parse_move(text))
    return position.fen()


def test_drag_and_drop_moves_a_piece_and_then_the_duck(page, server):
    open_game(page, server, "duck")
    drag(page, "e2", "e4")
    page.wait_for_selector("rect.duck-target[data-square=d5]")
    assert move_count(page) == 0  # the piece move waits for its duck
    page.click("[data-square=d5]")  # the first duck comes from outside the board: a click
    wait_moves(page, 1)
    drag(page, "e7", "e5")
    page.wait_for_selector("rect.duck-target[data-square=d4]")
    drag(page, "d5", "d4")  # the duck, dragged from its square
    wait_moves(page, 2)
    assert move_texts(page) == ["e2e4,e4d5", "e7e5,e5d4"]  # the duck written from the piece
    assert fen(page) == duck_fen(move_texts(page))
    assert sorted(page.locator("rect.square.last").evaluate_all(
        "squares => squares.map(s => s.dataset.square)")) == ["e5", "e7"]
    assert page.locator(".ghost").count() == 0
    drag(page, "d2", "d5")  # not a move of that pawn: refused, nothing changes
    page.wait_for_selector("#message.error")
    assert move_count(page) == 2 and fen(page) == duck_fen(move_texts(page))
    drag(page, "g1", "g1")  # put back where it was: still picked, as after a click
    page.wait_for_selector("rect.selected[data-square=g1]")
    page.click("[data-square=f3]")
    page.wait_for_selector("rect.duck-target[data-square=a6]")
    drag(page, "d4", "a6")
    wait_moves(page, 3)
    assert move_texts(page)[-1] == "g1f3,f3a6"


def test_clocks_run_for_the_side_to_move_and_a_fallen_flag_ends_the_game(page, server):
    open_game(page, server, "cfour")
    page.select_option("#engine-side", "1")
    page.select_option("#time-control", "60+0")
    assert page.locator("#movetime-label").is_hidden()  # a clock replaces the time per move
    page.click("#apply-play")
    page.wait_for_selector("#clock-bottom.running")
    first = page.inner_text("#clock-bottom .time")
    assert first in ("1:00", "0:59"), first
    page.wait_for_function(f"document.querySelector('#clock-bottom .time').textContent "
                           f"!== '{first}'")  # it counts down
    page.click("rect.cf-column[data-column='3']")
    wait_moves(page, 2)
    page.wait_for_selector("#clock-bottom.running")
    assert page.locator("#clock-top.running").count() == 0
    assert re.fullmatch(r"0:5\d|1:00", page.inner_text("#clock-top .time"))
    # a short clock (the page's own message: its menu starts at a minute), to see a flag fall
    page.evaluate("send({cmd: 'play', side: 1, clock: {base: 1500, increment: 0}})")
    page.wait_for_selector("#game-over:not([hidden])")
    assert page.inner_text("#game-over-text") == "Yellow loses on time"
    assert page.inner_text("#result") == "Yellow loses on time"
    assert page.inner_text("#clock-bottom .time") == "0:00.0"
    shoot(page, "cfour-time-loss")
    page.click("#game-over-new")
    page.wait_for_selector("#game-over", state="hidden")
    assert move_count(page) == 0


def session_of(server, variant):
    app, _ = server
    return next(s for s in app.state.sessions if s.variant == variant)


def test_the_level_chosen_on_the_page_is_the_engines(page, server):
    open_game(page, server, "uttt")
    page.select_option("#level", "0")
    page.select_option("#engine-side", "0")
    page.fill("#movetime", "0.3")
    page.click("#apply-play")
    wait_moves(page, 1)  # the engine opens, at level 0
    session = session_of(server, "uttt")
    assert session.level == 0 and session.engine._level == 0
    page.select_option("#level", "20")
    page.click("#apply-play")
    cell = page.locator("rect.uttt-cell.legal").first
    cell.click()
    wait_moves(page, 3)
    assert session.engine._level == 20
    assert page.input_value("#level") == "20"


def test_the_evaluation_graph_draws_the_engines_scores_and_jumps_to_a_move(page, server):
    open_game(page, server, "cfour")
    page.select_option("#engine-side", "1")
    page.fill("#movetime", "0.2")
    page.click("#apply-play")
    for ply, column in zip((2, 4, 6, 8), (3, 2, 4, 3)):
        page.click(f"rect.cf-column[data-column='{column}']")
        wait_moves(page, ply)
    plies = page.locator("#graph circle.graph-point").evaluate_all(
        "points => points.map(p => Number(p.dataset.ply))")
    assert {1, 3, 5, 7} <= set(plies), plies  # the engine's scores, one per move it made
    point = page.locator("#graph circle.graph-point[data-ply='3']")
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("document.querySelector('#moves .move.current')?.dataset.ply === '3'")
    assert page.locator("#graph circle.graph-point.current[data-ply='3']").count() == 1
    shown = page.get_attribute("#eval-bar", "data-eval")
    assert shown and ("cp" in shown or "mate" in shown)


@pytest.mark.parametrize("width, height", [(390, 844), (1920, 1080)])
def test_every_game_fits_a_phone_and_a_wide_screen(browser, server, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        for game, moves in (("duck", None), ("cfour", ("3", "2")), ("uttt", ("40",))):
            open_game(page, server, game)
            page.select_option("#engine-side", "1")
            page.select_option("#level", "5")
            page.select_option("#time-control", "300+3")
            page.click("#apply-play")
            if game == "duck":
                page.click("[data-square=e2]")
                page.click("[data-square=e4]")
                page.click("[data-square=d5]")
                wait_moves(page, 2)
            else:
                for index, target in enumerate(moves):
                    selector = "rect.cf-column[data-column='{}']" if game == "cfour" else \
                        "rect.uttt-cell[data-move='{}']"
                    page.locator(selector.format(target)).click()
                    wait_moves(page, 2 * (index + 1))
            page.click("#analyse")
            page.wait_for_selector("#analysis .line .pv-move")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            board = page.locator("#board").bounding_box()
            assert board["x"] >= 0 and board["x"] + board["width"] <= width
            assert board["width"] >= min(width, 1000) * 0.5  # the board uses the room it has
            shoot(page, f"{game}-{width}", full_page=width < 600)
            page.click("#analyse")
    finally:
        context.close()


def test_a_uttt_game_is_proven_move_by_move_and_its_mistake_marked(page, server):
    from mallard.engines.uttt.reach import load_games
    from tests.protocol.test_board_proof import spoiled_game

    start, texts, values = spoiled_game(load_games())
    open_game(page, server, "duck")
    assert page.locator("#prove-box").is_hidden()  # a whole game is proven only in UTTT
    open_game(page, server, "uttt")
    page.fill("#load-text", start.fen())
    page.click("#load")
    page.wait_for_function(f"document.querySelector('#fen').value === '{start.fen()}'")
    position = start
    for number, text in enumerate(texts, 1):
        move = position.parse_move(text)
        page.click(f"rect.uttt-cell[data-move='{move}']")
        wait_moves(page, number)
        position = position.play(move)
    page.select_option("#prove-limit", "3")
    page.click("#prove")
    total = len(texts) + 1
    page.wait_for_selector(f"#proof-status:has-text('{total} of {total} positions proven')")
    assert page.text_content("#prove") == "Prove the game"
    marks = page.locator("#moves .proof-mark").evaluate_all(
        "marks => marks.map(m => [m.dataset.value, m.textContent])")
    assert [value for value, _ in marks[:-1]] == values[1:-1]
    assert [text.endswith("??") for _, text in marks] == [True] + [False] * (len(marks) - 1)
    page.click("#moves .move[data-ply='1']")
    page.wait_for_selector("#moves .move.current[data-ply='1']")
    shown = page.text_content("#proof-shown")
    assert shown.startswith(f"This position: {values[1]}") and "the move before it" in shown
    shoot(page, "uttt-proof")
