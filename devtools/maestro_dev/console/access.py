"""Who may use the console: the person who started it, from their own browser.

- **Bound to 127.0.0.1** (the command refuses any other address).
- **A per-run token**, random at each start and printed in the URL. Opening that URL once sets
  it as a cookie (HttpOnly, SameSite=Strict, scoped to this origin) and drops it from the address
  bar; API clients may send it as ``Authorization: Bearer <token>`` instead.
- **A loopback Host with the console's port** (a DNS-rebound name is refused).
- **No Origin, or the console's own**, on every request; and a state-changing request from a
  browser must name its origin (``Origin``) or say it is same-origin (``Sec-Fetch-Site``), so a
  page elsewhere cannot make the browser POST here.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from maestro_dev.local.operator_access import LOOPBACK_NAMES

COOKIE = "maestro_console"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class ConsoleAccess:
    token: str
    port: int

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def _good(self, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(
            (sent or "").encode("utf-8", "surrogateescape"), self.token.encode()
        )

    def refusal(self, method: str, headers: list[tuple[bytes, bytes]], query: str) -> str | None:
        """None when the request may go on; else why not."""
        named: dict[str, list[str]] = {}
        for key, value in headers:
            named.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        hosts = named.get("host", [])
        if len(hosts) != 1 or hosts[0].lower() not in self.hosts:
            return "host"
        origins = named.get("origin", [])
        if len(origins) > 1 or (origins and origins[0].lower() not in self.origins):
            return "origin"
        if method not in ("GET", "HEAD"):
            fetch_site = (named.get("sec-fetch-site") or [""])[0]
            if fetch_site and fetch_site not in ("same-origin", "none"):
                return "origin"
        bearer = [v[7:] for v in named.get("authorization", []) if v.startswith("Bearer ")]
        if len(bearer) == 1 and self._good(bearer[0]):
            return None
        cookie: SimpleCookie = SimpleCookie()
        for line in named.get("cookie", []):
            cookie.load(line)
        if COOKIE in cookie and self._good(cookie[COOKIE].value):
            return None
        if method == "GET" and self._good(dict(parse_qsl(query)).get("token")):
            return None
        return "token"


class AccessMiddleware:
    """The checks above, before any route; a first visit with ``?token=`` sets the cookie."""

    def __init__(self, app: App, access: ConsoleAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        refused = self.access.refusal(scope["method"], scope["headers"], query)
        if refused is not None:
            status, text = {
                "host": (403, "refused: the Host must be this console on 127.0.0.1 or localhost"),
                "origin": (403, "refused: a request from another origin"),
                "token": (
                    401,
                    "refused: no console token. Open the URL `maestro console` printed.",
                ),
            }[refused]
            await _plain(send, status, text)
            return
        params = parse_qsl(query)
        if any(k == "token" for k, _ in params) and scope["method"] == "GET":
            rest = urlencode([(k, v) for k, v in params if k != "token"])
            location = scope["path"] + (f"?{rest}" if rest else "")
            cookie = f"{COOKIE}={self.access.token}; Path=/; HttpOnly; SameSite=Strict"
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", location.encode()),
                        (b"set-cookie", cookie.encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)


async def _plain(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})
