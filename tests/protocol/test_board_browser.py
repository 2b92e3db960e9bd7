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

with warnings.catch_warnings():  # the PGN helper's module imports Starlette's TestClient
    warnings.simplefilter("ignore")
    from tests.protocol.test_board_server import expected_pgn, wait_gone  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / ".cache" / "board-screenshots"
ENGINE = [sys.executable, "-m", "mallard.protocol.cli", "uci"]
WAIT_MS = 90_000
LATE_UTTT = ("X;@.....XOO;.X.OOX.X./OXO.OX.XX/...OOX.XX/XOOX...XX/OOX.XOOXX/XO.X..OOX/O.....XXX/"
             "OX..OOXOO/.OOOXOOXO")


@pytest.fixture(scope="module")
def server():
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)  # the engine subprocesses run this checkout
    # compiled first: after an edit of the engines' sources their kernels compile again (a
    # minute or more on a busy machine), which a page's wait must not have to cover
    subprocess.run([sys.executable, "-m", "mallard.protocol.cli", "warmup"], check=True, timeout=900,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = create_app(ENGINE)
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
    page.goto(f"{address}?game={game}")
    page.wait_for_selector("#connection:has-text('connected')")
    page.wait_for_function(f"document.querySelector('#games button.active')?.dataset.game "
                           f"=== '{game}'")


def fen(page) -> str:
    return page.input_value("#fen")


def move_count(page) -> int:
    return page.locator("#moves .move").count()


def wait_moves(page, count: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('#moves .move').length === {count}")


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


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
    page.wait_for_selector("#result:has-text('White wins (four in a row)')")
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
