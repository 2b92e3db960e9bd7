"""Who may use the board: requests that name this server, come from its own page, and know its
token (as Jupyter guards its notebooks).

Browsers do not apply the same-origin policy to WebSockets, so without these checks any web
page open in the user's browser could drive the board (and start engines), and a page of a
domain that resolves to 127.0.0.1 (DNS rebinding) could read it. A request is refused, with
403 and before any engine starts, unless:
- its `Host` names an address the server serves: 127.0.0.1, localhost, ::1 or the `--host`
  given (for a wildcard host, any IP address: rebinding needs a name);
- its `Origin`, when it has one (browsers always send it on a WebSocket), is this server;
- it carries the token as `?token=`: the address the server prints, and the page's WebSocket,
  which the page opens with the token of its own address. The page's files under `/static/`
  (public, shipped in the package) need no token. `token=None` (`--no-token`) lifts this rule.

The token is never put in a cookie: cookies are not kept apart by port, so a browser would
send it to every other server on 127.0.0.1, another user's among them. A request the checks
cannot even read (a malformed Host or Origin, a token of non-ASCII text) is refused like any
other.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Optional
from urllib.parse import parse_qs, urlsplit

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
PUBLIC_PREFIX = "/static/"


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Guard:
    def __init__(self, host: str = "127.0.0.1", token: Optional[str] = None):
        self.host = host.strip("[]").lower()
        self.token = token

    def refusal(self, scope) -> Optional[str]:
        """Why the request in `scope` (ASGI) is refused, or None when it may go on."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in scope.get("headers", [])}
        host = headers.get("host", "")
        if not self._names_us(host):
            return "this server does not serve that host name"
        origin = headers.get("origin")
        if origin is not None and not self._is_us(origin, host):
            return "requests from other sites are refused"
        if (self.token is not None and not scope.get("path", "").startswith(PUBLIC_PREFIX)
                and not self._has_token(scope)):
            return "open the address with the token that `mallard board` printed"
        return None

    def _names_us(self, host_header: str) -> bool:
        try:
            name = urlsplit(f"//{host_header}").hostname or ""
        except ValueError:  # not a host name at all ("[::1")
            return False
        if name in LOOPBACK_NAMES or name == self.host:
            return True
        if self.host in WILDCARDS:
            try:
                ipaddress.ip_address(name)
                return True
            except ValueError:
                return False
        return False

    @staticmethod
    def _is_us(origin: str, host_header: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host_header.lower()

    def _has_token(self, scope) -> bool:
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        if not values:
            return False
        # bytes: compare_digest refuses str with non-ASCII characters
        return secrets.compare_digest(values[0].encode("utf-8", "surrogateescape"),
                                      self.token.encode())


class GuardMiddleware:
    """ASGI middleware: a refused request gets 403 (a WebSocket is closed before it is
    accepted, which the server answers with 403), and never reaches the app."""

    def __init__(self, app, guard: Guard):
        self.app = app
        self.guard = guard

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        reason = self.guard.refusal(scope)
        if reason is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await receive()  # the connect event
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return
        body = f"403 Forbidden: {reason}\n".encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
