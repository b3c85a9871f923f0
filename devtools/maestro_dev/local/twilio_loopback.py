"""A Twilio-compatible Messages API on the loopback: what the real ``twilio`` SDK talks to on the
embedded stack, so the demo's texts go through the very adapter the cloud runs.

- ``POST /2010-04-01/Accounts/{AccountSid}/Messages.json`` creates a message (``SM…`` sid,
  status ``queued``), ``GET …/Messages/{Sid}.json`` fetches one, ``GET …/Messages.json`` lists
  them newest first (``To``, ``From``, ``PageSize``), each in Twilio's JSON shapes and with
  Twilio's error bodies (``{"code", "message", "more_info", "status"}``).
- HTTP basic auth is checked against the account SID and auth token (401, code 20003).
- Statuses move queued → sent → delivered on the clock it is given (virtual on the embedded
  stack), or to ``undelivered`` with an error code when asked; each move is a status callback
  to the message's ``StatusCallback``, signed with the auth token as Twilio signs it.
- Faults on request, for the tests: an HTTP error (a 5xx, a 429, a 400 with a Twilio code) or
  a slow answer (a timeout for the client), with or without the message being created first.
  Over HTTP, a slow answer is held until the client gives up (closes the connection) or its
  time passes: the client's own timeout decides, never how fast this machine is.

:class:`TwilioLoopback` holds the state and answers requests; :class:`TwilioLoopbackServer`
serves it over HTTP on 127.0.0.1 (the embedded stack), and :class:`LoopbackHttpClient` hands
the SDK's requests to it in-process (unit tests, which have no sockets).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from twilio.http import HttpClient
from twilio.http.response import Response
from twilio.request_validator import RequestValidator

API_VERSION = "2010-04-01"
LOCAL_ACCOUNT_SID = "AC" + hashlib.md5(b"maestro-local").hexdigest()
SENT_AFTER = timedelta(seconds=1)
DELIVERED_AFTER = timedelta(seconds=2)
_E164 = re.compile(r"^\+[1-9]\d{6,14}$")
_MESSAGES = re.compile(rf"^/{API_VERSION}/Accounts/(?P<account>[^/]+)/Messages\.json$")
_MESSAGE = re.compile(
    rf"^/{API_VERSION}/Accounts/(?P<account>[^/]+)/Messages/(?P<sid>[^/]+)\.json$"
)

CallbackPoster = Callable[[str, dict[str, str], str], None]
"""(url, form parameters, X-Twilio-Signature) → deliver the callback."""


@dataclass
class Fault:
    """What the next matching create request gets instead of the normal answer."""

    to: str | None = None  # None: any recipient
    status: int = 503
    code: int | None = None
    message: str = "Service Unavailable"
    hang_seconds: float = 0.0  # answer this late (longer than the client waits: a timeout)
    accept: bool = False  # create the message anyway (Twilio accepted it, the answer was lost)
    times: int = 1


@dataclass
class Answer:
    status: int
    body: dict[str, Any]
    hang_seconds: float = 0.0


@dataclass
class _Message:
    data: dict[str, Any]
    created: datetime
    callback: str | None
    error_code: int | None = None  # undeliverable: it ends undelivered with this code
    posted: list[str] = field(default_factory=list)


def _rfc2822(at: datetime) -> str:
    return format_datetime(at, usegmt=True)


def _error(status: int, code: int, message: str) -> Answer:
    return Answer(
        status,
        {
            "code": code,
            "message": message,
            "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status,
        },
    )


class TwilioLoopback:
    """The state of one Twilio account and the answers its Messages API gives."""

    def __init__(
        self,
        auth_token: str,
        clock: Callable[[], datetime],
        *,
        account_sid: str = LOCAL_ACCOUNT_SID,
        numbers: tuple[str, ...] = (),
        post_callback: CallbackPoster | None = None,
    ) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.numbers = numbers  # the account's own numbers; empty: any From is accepted
        self.clock = clock
        self.post_callback = post_callback
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order
        self.callbacks: list[tuple[str, dict[str, str]]] = []  # every status callback posted
        self._messages: dict[str, _Message] = {}
        self._faults: list[Fault] = []
        self._undeliverable: dict[str, int] = {}
        self._count = 0
        self._lock = threading.RLock()

    # -- what a test asks for ---------------------------------------------------------------

    def fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def undeliverable(self, to: str, error_code: int = 30003) -> None:
        """Messages to ``to`` end ``undelivered`` with ``error_code`` (30003: unreachable)."""
        with self._lock:
            self._undeliverable[to] = error_code

    def messages(self, to: str | None = None) -> list[dict[str, Any]]:
        """Every message as the API shows it, oldest first (optionally to one number)."""
        with self._lock:
            return [
                dict(m.data) for m in self._messages.values() if to is None or m.data["to"] == to
            ]

    def message(self, sid: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._messages.get(sid)
            return dict(found.data) if found else None

    # -- the API ------------------------------------------------------------------------------

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        form: dict[str, str],
        authorization: str | None,
    ) -> Answer:
        with self._lock:
            self.requests.append((method, path))
            account = self._authenticated(authorization)
            if account is None:
                return _error(401, 20003, "Authenticate")
            if (match := _MESSAGES.match(path)) and match["account"] == account:
                if method == "POST":
                    return self._create(form)
                if method == "GET":
                    return self._list(query)
            if (match := _MESSAGE.match(path)) and match["account"] == account and method == "GET":
                found = self._messages.get(match["sid"])
                if found is None:
                    return _error(404, 20404, f"The requested resource {path} was not found")
                return Answer(200, dict(found.data))
            return _error(404, 20404, f"The requested resource {path} was not found")

    def _authenticated(self, authorization: str | None) -> str | None:
        if not authorization or not authorization.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(authorization[6:]).decode().partition(":")
        except ValueError:
            return None
        if (user, password) != (self.account_sid, self.auth_token):
            return None
        return user

    def _create(self, form: dict[str, str]) -> Answer:
        to, sender, body = form.get("To", ""), form.get("From", ""), form.get("Body", "")
        fault = self._take_fault(to)
        if fault is not None and not fault.accept:
            answer = _error(fault.status, fault.code or fault.status, fault.message)
            answer.hang_seconds = fault.hang_seconds
            return answer
        if not to:
            return _error(400, 21604, "A 'To' phone number is required.")
        if not _E164.match(to):
            return _error(400, 21211, f"The 'To' number {to} is not a valid phone number.")
        if self.numbers and sender not in self.numbers:
            return _error(
                400,
                21606,
                f"The From phone number {sender} is not a valid, SMS-capable inbound phone "
                "number or short code for your account.",
            )
        if not body:
            return _error(400, 21602, "Message body is required.")
        if len(body) > 1600:
            return _error(
                400, 21617, "The concatenated message body exceeds the 1600 character limit."
            )
        self._count += 1
        now = self.clock()
        sid = "SM" + hashlib.sha256(f"{self._count}:{to}:{body}".encode()).hexdigest()[:32]
        uri = f"/{API_VERSION}/Accounts/{self.account_sid}/Messages/{sid}.json"
        data = {
            "account_sid": self.account_sid,
            "api_version": API_VERSION,
            "body": body,
            "date_created": _rfc2822(now),
            "date_sent": None,
            "date_updated": _rfc2822(now),
            "direction": "outbound-api",
            "error_code": None,
            "error_message": None,
            "from": sender,
            "messaging_service_sid": None,
            "num_media": "0",
            "num_segments": str(max(1, -(-len(body) // 153))),
            "price": None,
            "price_unit": "USD",
            "sid": sid,
            "status": "queued",
            "subresource_uris": {"media": uri.replace(".json", "/Media.json")},
            "to": to,
            "uri": uri,
        }
        self._messages[sid] = _Message(
            data=data,
            created=now,
            callback=form.get("StatusCallback") or None,
            error_code=self._undeliverable.get(to),
        )
        if fault is not None:  # accepted, but the answer is lost or late
            answer = _error(fault.status, fault.code or fault.status, fault.message)
            answer.hang_seconds = fault.hang_seconds
            return answer
        return Answer(201, dict(data))

    def _take_fault(self, to: str) -> Fault | None:
        for fault in self._faults:
            if fault.to is None or fault.to == to:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    def _list(self, query: dict[str, str]) -> Answer:
        found = [
            m.data
            for m in reversed(self._messages.values())
            if (not query.get("To") or m.data["to"] == query["To"])
            and (not query.get("From") or m.data["from"] == query["From"])
        ]
        size = int(query.get("PageSize") or 50)
        uri = f"/{API_VERSION}/Accounts/{self.account_sid}/Messages.json"
        return Answer(
            200,
            {
                "messages": [dict(m) for m in found[:size]],
                "end": max(0, min(size, len(found)) - 1),
                "first_page_uri": f"{uri}?PageSize={size}&Page=0",
                "next_page_uri": None,
                "page": 0,
                "page_size": size,
                "previous_page_uri": None,
                "start": 0,
                "uri": f"{uri}?PageSize={size}&Page=0",
            },
        )

    # -- time ---------------------------------------------------------------------------------

    def progress(self) -> int:
        """Move every message as far as the clock allows (queued → sent → delivered, or
        undelivered), posting a signed status callback for each move; how many moves."""
        moves: list[tuple[str, dict[str, str]]] = []
        with self._lock:
            now = self.clock()
            for message in self._messages.values():
                data = message.data
                steps = []
                if data["status"] == "queued" and now >= message.created + SENT_AFTER:
                    steps.append("sent")
                due = now >= message.created + DELIVERED_AFTER
                if due and data["status"] in {"queued", "sent"}:
                    steps.append("undelivered" if message.error_code else "delivered")
                for status in steps:
                    data["status"] = status
                    data["date_updated"] = _rfc2822(now)
                    if status == "sent":
                        data["date_sent"] = _rfc2822(message.created + SENT_AFTER)
                    if status == "undelivered":
                        data["error_code"] = message.error_code
                        data["error_message"] = "Unreachable destination handset"
                    if message.callback:
                        moves.append((message.callback, self._callback_form(data)))
                    message.posted.append(status)
        for url, form in moves:
            self.post(url, form)
        return len(moves)

    def _callback_form(self, data: dict[str, Any]) -> dict[str, str]:
        form = {
            "MessageSid": data["sid"],
            "SmsSid": data["sid"],
            "AccountSid": self.account_sid,
            "From": data["from"],
            "To": data["to"],
            "MessageStatus": data["status"],
            "SmsStatus": data["status"],
            "ApiVersion": API_VERSION,
        }
        if data["error_code"]:
            form["ErrorCode"] = str(data["error_code"])
        return form

    def post(self, url: str, form: dict[str, str]) -> None:
        """Deliver one status callback, signed with the auth token (as Twilio signs it)."""
        signature = RequestValidator(self.auth_token).compute_signature(url, form)
        with self._lock:
            self.callbacks.append((url, dict(form)))
        if self.post_callback is not None:
            self.post_callback(url, form, signature)


# -- transports --------------------------------------------------------------------------------


def _form(data: Any) -> dict[str, str]:
    if not data:
        return {}
    return {str(k): str(v) for k, v in dict(data).items()}


class LoopbackHttpClient(HttpClient):  # type: ignore[misc]  # the SDK is untyped
    """The SDK's requests answered in-process by a :class:`TwilioLoopback` (no sockets): a
    late answer is a ``requests`` timeout when it is later than the client's timeout."""

    def __init__(self, loopback: TwilioLoopback, timeout: float = 10.0) -> None:
        super().__init__(logger=None, is_async=False, timeout=timeout)
        self.loopback = loopback

    def request(
        self,
        method: str,
        url: str,
        params: dict[str, object] | None = None,
        data: dict[str, object] | None = None,
        headers: dict[str, str] | None = None,  # noqa: ARG002 - the SDK's signature
        auth: tuple[str, str] | None = None,
        timeout: float | None = None,
        allow_redirects: bool = False,  # noqa: ARG002
    ) -> Response:
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        query |= {str(k): str(v) for k, v in (params or {}).items() if v is not None}
        authorization = None
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            authorization = f"Basic {token}"
        answer = self.loopback.handle(method, parts.path, query, _form(data), authorization)
        limit = timeout if timeout is not None else self.timeout
        if limit is not None and answer.hang_seconds >= limit:
            raise requests.exceptions.ReadTimeout(f"{url}: no answer within {limit} s")
        return Response(answer.status, json.dumps(answer.body), {})


def _until_the_client_gives_up(connection: socket.socket, seconds: float) -> None:
    """Hold a late answer ``seconds``, or until the client closes the connection (its timeout
    fired) if that comes first: a timeout then happens because the client's limit is shorter
    than the hang, whatever the machine's load, and costs no more wall time than that limit."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([connection], [], [], left)
        if readable:
            return  # closed (or the client sent more): nobody waits for this answer any longer


class TwilioLoopbackServer:
    """:class:`TwilioLoopback` over HTTP on 127.0.0.1 (a free port): the SDK's own HTTP client
    reaches it by its base URL alone."""

    def __init__(self, loopback: TwilioLoopback) -> None:
        self.loopback = loopback

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                answer = loopback.handle(
                    self.command,
                    parts.path,
                    {k: v[-1] for k, v in parse_qs(parts.query).items()},
                    {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()},
                    self.headers.get("Authorization"),
                )
                if answer.hang_seconds:
                    _until_the_client_gives_up(self.connection, answer.hang_seconds)
                body = json.dumps(answer.body).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting (a timeout): nobody reads the answer

            do_GET = _answer  # noqa: N815 - BaseHTTPRequestHandler's names
            do_POST = _answer  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> TwilioLoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
