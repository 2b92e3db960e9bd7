"""The board's web server: a Starlette app serving the page and one WebSocket per page session.

`create_app(engine_command)` returns the ASGI app: `/` is the page, `/static/...` its files
(shipped in the package, nothing from elsewhere), `/ws` the WebSocket whose messages a
`BoardSession` carries out. Each WebSocket has its own session and engine process; the engine
ends when the WebSocket closes (the page closed or reloaded) and, for every open page, when the
server stops (the app's lifespan). `app.state.sessions` holds the open sessions. Every request
passes the `guard` first (`guard.py`): a foreign Host or Origin, or a missing token, is refused
with 403 before any session or engine exists. A page costs bounded memory and time: its outbox
merges superseded messages (`Outbox`), and it may send RATE_PER_S messages a second
(`RateLimit`); the rest are dropped unread, with one error line a second. A page beyond
`max_pages` open ones gets one error message and its WebSocket closed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
from pathlib import Path
from typing import Optional

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import FileResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from mallard.protocol.board.guard import Guard, GuardMiddleware
from mallard.protocol.board.limits import (
    BURST,
    DEFAULT_MAX_ENGINES,
    IDLE_ENGINE_SECONDS,
    MAX_PAGES,
    MAX_QUEUED,
    RATE_PER_S,
)
from mallard.protocol.board.session import BoardSession, EngineSlots

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_VARIANT = "duck"


TOO_FAST = f"too many messages: some were dropped; at most {RATE_PER_S} a second"


class Outbox:
    """What the server has yet to send one page, bounded whatever the page reads: a new state
    replaces a queued one, a new line of a search replaces its queued line, and past
    MAX_QUEUED the oldest lines are dropped (states and errors are kept)."""

    def __init__(self):
        self._items: collections.deque = collections.deque()
        self._ready = asyncio.Event()

    def put(self, message: dict) -> None:
        key = _superseded_by(message)
        if key is not None:
            for index, queued in enumerate(self._items):
                if _superseded_by(queued) == key:
                    del self._items[index]
                    break
        self._items.append(message)
        while len(self._items) > MAX_QUEUED:
            lines = [queued for queued in self._items if queued.get("type") == "info"]
            self._items.remove(lines[0] if lines else self._items[0])
        self._ready.set()

    async def get(self) -> dict:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        return self._items.popleft()

    def __len__(self) -> int:
        return len(self._items)


def _superseded_by(message: dict):
    """What a later message must share to make this one worthless (None: it never is)."""
    kind = message.get("type")
    if kind == "state":
        return ("state",)
    if kind == "info":
        if message.get("string"):  # a verdict (a proof): only a later verdict replaces it
            return ("verdict", message.get("search"))
        return ("info", message.get("search"), message.get("multipv"), message.get("column"))
    return None


class RateLimit:
    """A token bucket: `allow()` is False once a page sends faster than RATE_PER_S for long."""

    def __init__(self):
        self.tokens = float(BURST)
        self.last = time.monotonic()
        self.warned_at = 0.0

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(BURST, self.tokens + (now - self.last) * RATE_PER_S)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def warn(self) -> bool:
        """Whether to say so now (once a second at most)."""
        now = time.monotonic()
        if now - self.warned_at >= 1:
            self.warned_at = now
            return True
        return False


def create_app(engine_command: list[str], guard: Optional[Guard] = None,
               max_engines: int = DEFAULT_MAX_ENGINES,
               idle_seconds: float = IDLE_ENGINE_SECONDS,
               max_pages: int = MAX_PAGES) -> Starlette:
    """The app; `guard` (default: loopback names, no token) decides who may use it, at most
    `max_engines` engine processes run at once and `max_pages` pages are open, and a page idle
    for `idle_seconds` loses its engine until it needs one again."""
    sessions: set[BoardSession] = set()
    slots = EngineSlots(max_engines)

    async def page(request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        if len(sessions) >= max_pages:
            refusal = (f"the server has {max_pages} pages open, as many as it serves at once: "
                       "close one and reload this page")
            await websocket.send_text(json.dumps({"type": "error", "message": refusal}))
            await websocket.close(code=1013)  # try again later
            return
        outbox = Outbox()
        rate = RateLimit()
        variant = websocket.query_params.get("game", DEFAULT_VARIANT)
        loop = asyncio.get_running_loop()
        try:
            session = BoardSession(variant, engine_command, outbox.put, loop, slots, idle_seconds)
        except ValueError:  # an unknown game in the address: the default one
            session = BoardSession(DEFAULT_VARIANT, engine_command, outbox.put, loop, slots,
                                   idle_seconds)
        sessions.add(session)

        async def send_all() -> None:
            try:
                while True:
                    message = await outbox.get()
                    # ASCII: a lone surrogate in an echoed text cannot end the page's messages
                    await websocket.send_text(json.dumps(message, separators=(",", ":")))
            except (WebSocketDisconnect, RuntimeError, OSError):
                pass  # the page went away: the receiving side ends the session

        sender = asyncio.create_task(send_all())
        try:
            session.emit(session.state())
            while True:
                received = await websocket.receive()
                if received["type"] == "websocket.disconnect":
                    break
                if not rate.allow():  # dropped unread: a flood costs nothing to parse
                    if rate.warn():
                        outbox.put({"type": "error", "message": TOO_FAST})
                    continue
                text = received.get("text")
                if text is None and received.get("bytes") is not None:
                    text = received["bytes"]
                await session.handle(text)
        except (WebSocketDisconnect, RuntimeError):
            pass  # the page went away mid-message
        finally:
            sender.cancel()
            sessions.discard(session)
            session.close()  # not awaited: a cancelled teardown must still end the engine

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        for session in list(sessions):
            session.close()

    app = Starlette(routes=[Route("/", page), WebSocketRoute("/ws", socket),
                            Mount("/static", StaticFiles(directory=STATIC), name="static")],
                    lifespan=lifespan,
                    middleware=[Middleware(GuardMiddleware, guard=guard or Guard())])
    app.state.sessions = sessions
    app.state.slots = slots
    return app
