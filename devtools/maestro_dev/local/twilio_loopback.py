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
- The account's phone numbers (``IncomingPhoneNumbers``: list by ``PhoneNumber``, fetch,
  update), with the webhooks Twilio calls for them: ``sms_url``, ``sms_fallback_url``,
  ``status_callback`` (what `maestro twilio wire` sets through the SDK).
- A phone texting a number (:meth:`TwilioLoopback.text`): an inbound message (``SM…``), its
  signed webhook to the number's ``sms_url``; when that answers an error (a 4xx or 5xx), cannot
  be reached or answers later than Twilio waits (15 s), the same request to
  ``sms_fallback_url`` with ``ErrorCode`` and ``ErrorUrl`` added, as Twilio does; with neither
  answering, Twilio gives up (logged there, not retried).

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
from collections.abc import Callable, Sequence
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

_NUMBERS = re.compile(rf"^/{API_VERSION}/Accounts/(?P<account>[^/]+)/IncomingPhoneNumbers\.json$")
_NUMBER = re.compile(
    rf"^/{API_VERSION}/Accounts/(?P<account>[^/]+)/IncomingPhoneNumbers/(?P<sid>PN[0-9a-f]{{32}})\.json$"
)
NUMBER_SETTINGS = {
    "SmsUrl": "sms_url",
    "SmsMethod": "sms_method",
    "SmsFallbackUrl": "sms_fallback_url",
    "SmsFallbackMethod": "sms_fallback_method",
    "StatusCallback": "status_callback",
    "StatusCallbackMethod": "status_callback_method",
    "SmsApplicationSid": "sms_application_sid",
    "FriendlyName": "friendly_name",
}
"""The update parameters the loopback keeps (the SDK's names → the resource's fields)."""
WEBHOOK_TIMEOUT_SECONDS = 15.0
"""How long Twilio waits for a webhook's answer (its read timeout): a slower answer is a failure,
and the fallback URL is requested, whatever the first one did meanwhile."""
WEBHOOK_ERROR = 11200
"""Twilio's "HTTP retrieval failure": the ErrorCode a fallback request carries."""

CallbackPoster = Callable[[str, dict[str, str], str], None]
"""(url, form parameters, X-Twilio-Signature) → deliver the callback."""
WebhookPoster = Callable[[str, dict[str, str], str], int]
"""(url, form parameters, X-Twilio-Signature) → the HTTP status the webhook answered (a
connection that failed or timed out: 0)."""


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
class Delivery:
    """What Twilio did with one inbound message: each webhook it requested, and the answer."""

    sid: str
    attempts: list[tuple[str, int]] = field(default_factory=list)  # (url, status; 0: no answer)

    @property
    def accepted(self) -> bool:
        """A webhook answered 2xx: the message reached maestro."""
        return any(200 <= status < 300 for _, status in self.attempts)


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
        post_webhook: WebhookPoster | None = None,
        webhook_timeout_seconds: float = WEBHOOK_TIMEOUT_SECONDS,
    ) -> None:
        self.account_sid = account_sid
        self.webhook_timeout_seconds = webhook_timeout_seconds
        self.auth_token = auth_token
        self.numbers = numbers  # the account's own numbers; empty: any From is accepted
        self.clock = clock
        self.post_callback = post_callback
        self.post_webhook = post_webhook
        self.deliveries: list[Delivery] = []  # every inbound message, in order
        self._received: dict[str, dict[str, Any]] = {}  # inbound messages, by SID
        self._numbers = {number: self._number_resource(number) for number in numbers}
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
                received = self._received.get(match["sid"])
                if found is None and received is None:
                    return _error(404, 20404, f"The requested resource {path} was not found")
                return Answer(200, dict(found.data if found is not None else received or {}))
            if (match := _NUMBERS.match(path)) and match["account"] == account and method == "GET":
                return self._list_numbers(query)
            if (match := _NUMBER.match(path)) and match["account"] == account:
                number = next((n for n in self._numbers.values() if n["sid"] == match["sid"]), None)
                if number is None:
                    return _error(404, 20404, f"The requested resource {path} was not found")
                if method == "POST":
                    return self._update_number(number, form)
                if method == "GET":
                    return Answer(200, dict(number))
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

    # -- phone numbers --------------------------------------------------------------------------

    def _number_resource(self, number: str) -> dict[str, Any]:
        sid = "PN" + hashlib.md5(f"{self.account_sid}:{number}".encode()).hexdigest()
        now = _rfc2822(self.clock())
        return {
            "sid": sid,
            "account_sid": self.account_sid,
            "phone_number": number,
            "friendly_name": number,
            "api_version": API_VERSION,
            "capabilities": {"sms": True, "mms": True, "voice": True, "fax": False},
            "date_created": now,
            "date_updated": now,
            "sms_url": "",
            "sms_method": "POST",
            "sms_fallback_url": "",
            "sms_fallback_method": "POST",
            "sms_application_sid": "",
            "status_callback": "",
            "status_callback_method": "POST",
            "uri": f"/{API_VERSION}/Accounts/{self.account_sid}/IncomingPhoneNumbers/{sid}.json",
        }

    def number(self, phone_number: str) -> dict[str, Any]:
        """A number's resource as the API shows it (its webhooks included)."""
        with self._lock:
            return dict(self._numbers[phone_number])

    def _list_numbers(self, query: dict[str, str]) -> Answer:
        wanted = query.get("PhoneNumber")
        found = [
            dict(n) for n in self._numbers.values() if not wanted or n["phone_number"] == wanted
        ]
        uri = f"/{API_VERSION}/Accounts/{self.account_sid}/IncomingPhoneNumbers.json"
        return Answer(
            200,
            {
                "incoming_phone_numbers": found,
                "end": max(0, len(found) - 1),
                "first_page_uri": uri,
                "next_page_uri": None,
                "page": 0,
                "page_size": 50,
                "previous_page_uri": None,
                "start": 0,
                "uri": uri,
            },
        )

    def _update_number(self, number: dict[str, Any], form: dict[str, str]) -> Answer:
        changes = {NUMBER_SETTINGS[k]: v for k, v in form.items() if k in NUMBER_SETTINGS}
        sms_url = changes.get("sms_url", number["sms_url"])
        if changes.get("sms_fallback_url") and not sms_url:
            return _error(400, 21406, "Cannot set SmsFallbackUrl without setting SmsUrl")
        for name in ("sms_method", "sms_fallback_method", "status_callback_method"):
            if changes.get(name, "POST").upper() not in ("GET", "POST"):
                return _error(400, 21403, f"{name} must be GET or POST")
        number.update(changes)
        number["date_updated"] = _rfc2822(self.clock())
        return Answer(200, dict(number))

    # -- a phone texting a number ---------------------------------------------------------------

    def text(
        self,
        from_phone: str,
        body: str,
        *,
        to: str | None = None,
        media: Sequence[tuple[str, str]] = (),
    ) -> Delivery:
        """A phone texts one of the account's numbers (``to``, default its first), with the
        files of an MMS (``media``: each its URL and content type), and Twilio posts the signed
        webhook to the number's ``sms_url`` and, when that fails, to its
        ``sms_fallback_url``. Returns what happened; nothing is retried beyond that."""
        with self._lock:
            line = to or next(iter(self._numbers))
            number = dict(self._numbers[line])
            self._count += 1
            sid = (
                "SM"
                + hashlib.sha256(f"in:{self._count}:{from_phone}:{body}".encode()).hexdigest()[:32]
            )
            now = _rfc2822(self.clock())
            # Kept apart from what the account sent: `messages()` lists maestro's texts.
            self._received[sid] = {
                "account_sid": self.account_sid,
                "api_version": API_VERSION,
                "body": body,
                "date_created": now,
                "date_sent": now,
                "date_updated": now,
                "direction": "inbound",
                "error_code": None,
                "error_message": None,
                "from": from_phone,
                "num_media": str(len(media)),
                "sid": sid,
                "status": "received",
                "to": line,
            }
            delivery = Delivery(sid)
            self.deliveries.append(delivery)
        form = {
            "MessageSid": sid,
            "SmsMessageSid": sid,
            "SmsSid": sid,
            "AccountSid": self.account_sid,
            "MessagingServiceSid": "",
            "From": from_phone,
            "To": line,
            "Body": body,
            "NumMedia": str(len(media)),
            "NumSegments": str(max(1, -(-len(body) // 153))),
            "SmsStatus": "received",
            "ApiVersion": API_VERSION,
            **{f"MediaUrl{n}": url for n, (url, _) in enumerate(media)},
            **{f"MediaContentType{n}": kind for n, (_, kind) in enumerate(media)},
        }
        form = {k: v for k, v in form.items() if v != ""}
        primary, fallback = number["sms_url"], number["sms_fallback_url"]
        if not primary or number["sms_application_sid"] or self.post_webhook is None:
            return delivery  # nothing configured to call: Twilio logs it and drops it
        status = self._request(delivery, primary, form)
        if 200 <= status < 300 or not fallback:
            return delivery
        self._request(
            delivery, fallback, {**form, "ErrorCode": str(WEBHOOK_ERROR), "ErrorUrl": primary}
        )
        return delivery

    def _request(self, delivery: Delivery, url: str, form: dict[str, str]) -> int:
        signature = RequestValidator(self.auth_token).compute_signature(url, form)
        assert self.post_webhook is not None
        started = time.monotonic()
        try:
            status = self.post_webhook(url, form, signature)
        except Exception:  # the server could not be reached, or dropped the connection
            status = 0
        if time.monotonic() - started > self.webhook_timeout_seconds:
            status = 0  # Twilio stopped waiting: whatever the answer, it counts as a failure
        with self._lock:
            delivery.attempts.append((url, status))
        return status

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
        # A short poll: stop() waits for the loop's next look, and every stack's close pays it.
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

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
