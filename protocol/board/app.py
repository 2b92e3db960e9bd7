"""The board's web server: a Starlette app serving the page and one WebSocket per page session.

`create_app(engine_command)` returns the ASGI app: `/` is the page, `/static/...` its files
(shipped in the package, nothing from elsewhere), `/ws` the WebSocket whose messages a
`BoardSession` carries out. Each WebSocket has its own session and engine process; the engine
ends when the WebSocket closes (the page closed or reloaded) and, for every open page, when the
server stops (the app's lifespan). `app.state.sessions` holds the open sessions. Every request
passes the `guard` first (`guard.py`): a foreign Host or Origin, or a missing token, is refused
with 403 before any session or engine exists.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Optional

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import FileResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from mallard.protocol.board.guard import Guard, GuardMiddleware
from mallard.protocol.board.session import DEFAULT_MAX_ENGINES, BoardSession, EngineSlots

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_VARIANT = "duck"


def create_app(engine_command: list[str], guard: Optional[Guard] = None,
               max_engines: int = DEFAULT_MAX_ENGINES) -> Starlette:
    """The app; `guard` (default: loopback names, no token) decides who may use it, and at
    most `max_engines` engine processes run at once."""
    sessions: set[BoardSession] = set()
    slots = EngineSlots(max_engines)

    async def page(request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        outbox: asyncio.Queue = asyncio.Queue()
        variant = websocket.query_params.get("game", DEFAULT_VARIANT)
        try:
            session = BoardSession(variant, engine_command, outbox.put_nowait,
                                   asyncio.get_running_loop(), slots)
        except ValueError:  # an unknown game in the address: the default one
            session = BoardSession(DEFAULT_VARIANT, engine_command, outbox.put_nowait,
                                   asyncio.get_running_loop(), slots)
        sessions.add(session)

        async def send_all() -> None:
            try:
                while True:
                    message = await outbox.get()
                    await websocket.send_json(message)
            except (WebSocketDisconnect, RuntimeError, OSError):
                pass  # the page went away: the receiving side ends the session

        sender = asyncio.create_task(send_all())
        try:
            session.emit(session.state())
            while True:
                received = await websocket.receive()
                if received["type"] == "websocket.disconnect":
                    break
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
