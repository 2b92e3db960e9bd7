"""Who may use the board: requests that name this server, come from its own page, and know its
token (as Jupyter guards its notebooks).

Browsers do not apply the same-origin policy to WebSockets, so without these checks any web
page open in the user's browser could drive the board (and start engines), and a page of a
domain that resolves to 127.0.0.1 (DNS rebinding) could read it. A request is refused, with
403 and before any engine starts, unless:
- its `Host` names an address the server serves: 127.0.0.1, localhost, ::1 or the `--host`
  given (for a wildcard host, any IP address: rebinding needs a name);
- its `Origin`, when it has one (browsers always send it on a WebSocket), is this server;
- it carries the token, as `?token=` (the address the server prints) or the cookie the page
  gets on its first load; `token=None` (`--no-token`) lifts this rule only.
"""

from __future__ import annotations

import ipaddress
import secrets
from http import cookies
from typing import Optional
from urllib.parse import parse_qs, urlsplit

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
COOKIE = "mallard_board_token"


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
        if self.token is not None and not self._has_token(scope, headers):
            return "open the address with the token that `mallard board` printed"
        return None

    def sets_cookie(self, scope) -> bool:
        """Whether the page's response should hand the token over as a cookie."""
        return self.token is not None and self._query_token(scope) == self.token

    def _names_us(self, host_header: str) -> bool:
        name = urlsplit(f"//{host_header}").hostname or ""
        if name in LOOPBACK_NAMES or name == self.host:
            return True
        if self.host in WILDCARDS:
            try:
                ipaddress.ip_address(name)
                return True
            except ValueError:
                return False
        return False

    def _is_us(self, origin: str, host_header: str) -> bool:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host_header.lower()

    @staticmethod
    def _query_token(scope) -> Optional[str]:
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return values[0] if values else None

    def _has_token(self, scope, headers: dict) -> bool:
        given = self._query_token(scope)
        if given is None:
            jar = cookies.SimpleCookie()
            try:
                jar.load(headers.get("cookie", ""))
            except cookies.CookieError:
                return False
            given = jar[COOKIE].value if COOKIE in jar else None
        return given is not None and secrets.compare_digest(given, self.token)


class GuardMiddleware:
    """ASGI middleware: a refused request gets 403 (a WebSocket is closed before it is
    accepted, which the server answers with 403), and never reaches the app; the page's
    response to an address with the right token sets the token's cookie."""

    def __init__(self, app, guard: Guard):
        self.app = app
        self.guard = guard

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        reason = self.guard.refusal(scope)
        if reason is not None:
            if scope["type"] == "websocket":
                await receive()  # the connect event
                await send({"type": "websocket.close", "code": 1008, "reason": reason})
                return
            body = f"403 Forbidden: {reason}\n".encode()
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http" and self.guard.sets_cookie(scope):
            cookie = (f"{COOKIE}={self.guard.token}; Path=/; HttpOnly; SameSite=Strict"
                      ).encode("latin-1")

            async def send_with_cookie(message):
                if message["type"] == "http.response.start":
                    message = dict(message, headers=[*message.get("headers", []),
                                                     (b"set-cookie", cookie)])
                await send(message)

            return await self.app(scope, receive, send_with_cookie)
        return await self.app(scope, receive, send)
