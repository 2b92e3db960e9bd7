"""`mallard board`: a local web page to play and analyse Duck Chess, Connect Four and UTTT.

A protocol-layer front-end like UCI and GTP: it parses the page's messages and prints views;
the rules come from `engines`, and the engine is a UCI subprocess (by default `mallard uci`)
driven through the match runner's player code, one process per page. Modules: `view` (board
descriptions, loading positions, PGN), `engine` (the engine process and its output), `session`
(one page's game), `app` (the Starlette app and its WebSocket), `static/` (the page: plain HTML,
CSS and JavaScript, no library, nothing fetched from elsewhere at run time).

Needs the optional `board` extra (Starlette, uvicorn, websockets); `missing_dependency()` says
which one is absent, so that `run` (`mallard board`) can say what to install in one line.
"""

from __future__ import annotations

import importlib.util
import shlex
import socket
import sys
import webbrowser
from typing import Optional

from mallard.engines.processes import mallard_command
from mallard.protocol.board.limits import DEFAULT_MAX_ENGINES, MAX_MESSAGE_BYTES

REQUIRED = ("starlette", "uvicorn", "websockets")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def missing_dependency() -> Optional[str]:
    return next((name for name in REQUIRED if importlib.util.find_spec(name) is None), None)


def default_engine() -> list[str]:
    """`mallard uci`, as this Python runs it (works from a checkout as well as installed)."""
    return mallard_command("uci")


def run(host: str, port: int, engine: Optional[str], open_browser: bool,
        use_token: bool = True, max_engines: int = DEFAULT_MAX_ENGINES) -> int:
    """`mallard board`: the page served (see `serve`), or one line saying what to install."""
    missing = missing_dependency()
    if missing is not None:
        print(f"mallard: 'mallard board' needs the {missing} package: "
              "pip install 'mallard[board]'", file=sys.stderr)
        return 2
    return serve(host, port, engine, open_browser, use_token, max_engines)


def serve(host: str, port: int, engine: Optional[str], open_browser: bool,
          use_token: bool = True, max_engines: int = DEFAULT_MAX_ENGINES) -> int:
    # imported on use: the web stack is an optional extra
    import uvicorn

    from mallard.protocol.board.app import create_app
    from mallard.protocol.board.guard import Guard, new_token

    command = shlex.split(engine) if engine else default_engine()
    token = new_token() if use_token else None
    app = create_app(command, Guard(host, token), max_engines)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", ws="auto",
                            lifespan="on", ws_max_size=MAX_MESSAGE_BYTES,
                            ws_per_message_deflate=False)  # a small message inflates to MBs
    server = uvicorn.Server(config)
    if host not in LOOPBACK:
        print(f"mallard: warning: serving on {host}, not only this machine: anyone who can "
              "reach it can start engine processes here", file=sys.stderr, flush=True)
    listener = _listen(host, port)  # bound before the address is printed: port 0 works too
    bound = listener.getsockname()
    shown = f"[{bound[0]}]" if ":" in str(bound[0]) else bound[0]
    address = f"http://{shown}:{bound[1]}/" + (f"?token={token}" if token else "")
    print(f"mallard board: {address} (Ctrl-C stops it)", flush=True)
    if open_browser:
        webbrowser.open(address)
    server.run(sockets=[listener])
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port; OSError (the port is taken, no such address) otherwise."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(128)  # connections wait in the backlog until the server starts
    except OSError as error:
        listener.close()
        raise OSError(f"cannot serve on {host}:{port}: {error.strerror or error}") from None
    return listener
