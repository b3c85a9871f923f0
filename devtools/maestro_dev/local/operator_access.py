"""Who may call `maestro serve`'s operator routes (``/local/…``): the operator, not a web page.

A page the operator visits can POST to ``127.0.0.1`` (a cross-site request releasing a gate), or
rebind its own name to ``127.0.0.1`` and read the answers (the ledger). So every operator
request must carry:

- **the run's token** in :data:`TOKEN_HEADER`: random per ``maestro serve`` run, printed once at
  its start and written to :func:`token_path` (mode 0600, in a directory only the user can
  enter), where the ``maestro`` command finds it by the URL's port. A page cannot read it, and
  a browser sends a custom header cross-origin only after a preflight serve refuses;
- **a loopback Host with the server's port** (a rebound name is not one of them);
- **no Origin, or the server's own** (a page on another origin names itself).

Light on purpose: the ``maestro`` command imports it without the embedded stack.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

TOKEN_HEADER = "X-Maestro-Local-Token"
TOKEN_ENV = "MAESTRO_LOCAL_TOKEN"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names a Host may carry (with the server's port): a page's rebound name is none of them."""
_URL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})  # urlsplit drops the brackets


def new_token() -> str:
    # Hex, not urlsafe: a urlsafe token starts with "-" one time in 64, and `--token <it>` is
    # then read by argparse as an option (the printed command fails for that run).
    return secrets.token_hex(32)


def token_dir() -> Path:
    """``~/.maestro``: the user's, so `maestro step` finds the token from any directory."""
    return Path.home() / ".maestro"


def token_path(port: int) -> Path:
    return token_dir() / f"serve-{port}.token"


def write_token(port: int, token: str) -> Path:
    """Write the run's token where only this user can read it; the path. Written to a new file
    (created 0600, never through a link someone left) and renamed over any stale one."""
    directory = token_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = token_path(port)
    staging = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, token.encode())
    finally:
        os.close(fd)
    os.replace(staging, path)
    return path


def remove_token(port: int, token: str) -> None:
    """Remove the run's token file at exit, unless another run has written its own since."""
    path = token_path(port)
    with contextlib.suppress(OSError):
        if path.read_text() == token:
            path.unlink()


def is_loopback_url(url: str) -> bool:
    return (urlsplit(url).hostname or "") in _URL_HOSTS


def token_for(url: str, given: str | None) -> str | None:
    """The token the ``maestro`` command sends to a `maestro serve` at ``url``: ``--token``,
    else ``$MAESTRO_LOCAL_TOKEN``, else the file serve wrote for the URL's port. The file is
    read only for a loopback URL: its token is never sent to another host."""
    if given:
        return given
    if env := os.environ.get(TOKEN_ENV):
        return env
    parts = urlsplit(url)
    if not is_loopback_url(url) or parts.port is None:
        return None
    try:
        return token_path(parts.port).read_text().strip() or None
    except OSError:
        return None


Refusal = Literal["host", "origin", "token"]


@dataclass(frozen=True)
class OperatorAccess:
    """The checks on one run's operator requests (its token, its port)."""

    token: str
    port: int

    def refusal(self, headers: Message) -> tuple[Refusal, int, str] | None:
        """None when the request may go on; else why not, the status and a message. A header
        sent twice is refused: which copy would count is what an attacker would pick."""
        hosts = headers.get_all("Host") or []
        expected = " or ".join(f"{name}:{self.port}" for name in LOOPBACK_NAMES)
        if len(hosts) != 1 or hosts[0].lower() not in self._hosts:
            return "host", 403, f"refused: the Host must be {expected} (this server, on loopback)"
        origins = headers.get_all("Origin") or []
        if len(origins) > 1 or (origins and origins[0].lower() not in self._origins):
            return (
                "origin",
                403,
                "refused: a request from another origin (a web page) may not use the operator "
                "routes",
            )
        tokens = headers.get_all(TOKEN_HEADER) or []
        sent = tokens[0] if len(tokens) == 1 else None
        if not sent or not hmac.compare_digest(
            sent.encode("utf-8", "surrogateescape"), self.token.encode()
        ):
            what = "a wrong" if tokens else "no"
            return (
                "token",
                401,
                f"refused: {what} {TOKEN_HEADER} header. The operator routes need the token "
                f"`maestro serve` printed at its start (the maestro command reads it from "
                f"{token_path(self.port)}, or takes --token or ${TOKEN_ENV})",
            )
        return None

    @property
    def _hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    @property
    def _origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self._hosts)
