"""`maestro serve`: the embedded stack as a long-running loopback server.

Every path is a row of :data:`ROUTES`: its method, who may call it (its guard) and what answers.
Webhook routes (``/twilio/sms``, ``/twilio/status``, ``/twilio/transcript``, ``/app/messages``,
``/assistant/kickoff``, and the fallback API's ``/fallback/twilio/sms``) go to the stack's edge
(:mod:`maestro_dev.local.edge`) as API Gateway REST events: the WAF's cheap check (signature
headers out of shape: a 403 before any handler), then the inbound function (a 502 when it
raised) or, for the fallback, the fallback queue. (Serve sets no stage throttle: the embedded
stack's tests rehearse a 429 with ``LocalStack(stage_throttle=...)``.)
Operator routes under ``/local/`` serve `maestro executions`, `maestro step`, `maestro
ledger`, `maestro wo` (show, list) and `maestro directory` (import, export, show, erase; the
import's is the one body that may be large: a whole directory), to the operator alone: the
run's token, a loopback Host and no foreign Origin (:mod:`maestro_dev.local.operator_access`).
A ticker moves the virtual clock with real time (scaled by ``--speed``: `maestro serve`'s
default, 60, passes the 5-minute idle window in 5 s), so idle windows pass as they would. With
a feed (`maestro serve`'s stdout), each package is printed as it flows
(:mod:`maestro_dev.local.serve_feed`).

It takes load the way the cloud does: every request is answered on its own thread and holds no
lock across the pipeline (the stack serializes each AWS call inside, see ``threads.py``), and the
clock's tick delivers due debounce signals without waiting for the executions they start. Every
request gets an HTTP answer, as API Gateway gives one: a body it cannot read is a 4xx, a handler
that raised is a 502 (API Gateway's answer to a failed Lambda), never a dropped connection.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TextIO
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from maestro.domain.directory import Directory
from maestro.domain.directory_import import Problem, check_directory
from maestro.ingest.fallback import FALLBACK_ROUTE
from maestro.ingest.webhooks import MAX_REQUEST_BYTES
from maestro.observability import logger
from maestro_dev import directory_erase, work_orders
from maestro_dev.directory.apply import apply_directory
from maestro_dev.local.edge import FALLBACK_PREFIX
from maestro_dev.local.operator_access import OperatorAccess, new_token
from maestro_dev.local.serve_feed import PackageFeed
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.threads import Priority
from maestro_dev.local.world import seed

LISTEN_BACKLOG = 128
"""socketserver's default is 5: 50 concurrent senders had a tenth of their connections reset."""
READ_TIMEOUT_SECONDS = 30.0
"""A client that declares a body and stops sending gets a 408, not a thread held forever."""
MAX_DRAIN_BYTES = 64 * 1024 * 1024
"""A refused body is read to its end before the answer (closing on unread data resets the
connection, and the client never sees the 413); past this much, the connection is just closed."""
_DIGITS = re.compile(r"[0-9]+")

Guard = Literal["operator", "edge"]
"""Who may call a route: the operator (:class:`OperatorAccess`), or whoever the cloud's edge lets
through (the stack's :class:`~maestro_dev.local.edge.Edge`: WAF, throttle; the handler then
verifies the signature)."""


@dataclass(frozen=True)
class Request:
    """What a route's answer reads: the HTTP request (for its event) and its body."""

    http: BaseHTTPRequestHandler
    path: str
    query: str
    body: bytes


@dataclass(frozen=True)
class Reply:
    status: int
    body: str
    content_type: str = "application/json"


@dataclass(frozen=True)
class Route:
    method: Literal["GET", "POST"]
    guard: Guard
    answer: Callable[[LocalServer, Request], Reply]
    max_body: int = MAX_REQUEST_BYTES
    """The largest body it reads: a webhook's limit, unless the route carries more (a whole
    directory to import)."""


DIRECTORY_IMPORT_MAX_BYTES = 64 * 1024 * 1024


def _event_from_request(handler: BaseHTTPRequestHandler, body: bytes) -> dict[str, Any]:
    parts = urlsplit(handler.path)
    query = parse_qs(parts.query, keep_blank_values=True)
    headers = dict(handler.headers.items())
    headers.setdefault("X-Forwarded-Proto", "http")
    # API Gateway hands a body it cannot pass as text over base64-encoded; the handler decides.
    try:
        text, encoded = body.decode(), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode(), True
    return {
        "resource": parts.path,
        "path": parts.path,
        "httpMethod": handler.command,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": parts.path,
            "httpMethod": handler.command,
            "path": parts.path,
            "stage": "local",
            "domainName": headers.get("Host", "127.0.0.1"),
            "requestId": "local",
            "accountId": "123456789012",
            "apiId": "local",
            "identity": {"sourceIp": handler.client_address[0]},
        },
        "body": text,
        "isBase64Encoded": encoded,
    }


class _HttpServer(ThreadingHTTPServer):
    """One thread per request, each counted as answering (the stack's :class:`Priority`) from
    the moment its connection is accepted until it is closed."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, priority: Priority) -> None:
        self.priority = priority
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.priority.arrived(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.priority.answered(request)  # no thread was started to answer it
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            with self.priority.answering():
                super().process_request_thread(request, client_address)
        finally:
            self.priority.answered(request)


class LocalServer:
    """``token`` is the run's operator token (random when not given); ``refused`` counts the
    requests refused before any route answered, by reason (e.g. ``"twilio signature headers"``,
    ``"operator token"``)."""

    def __init__(
        self,
        stack: LocalStack,
        port: int,
        speed: float = 1.0,
        tick_seconds: float = 0.25,
        token: str | None = None,
        feed: TextIO | None = None,
    ) -> None:
        self.stack = stack
        self.speed = speed
        self.feed = PackageFeed(stack, feed) if feed is not None else None
        self.tick_seconds = tick_seconds
        self._stop = threading.Event()
        self.refused: Counter[str] = Counter()
        self._refused_lock = threading.Lock()
        self._import_lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = READ_TIMEOUT_SECONDS
            # A request line without a version is answered with a status line too (as HTTP/0.9,
            # http.server would send the error page alone, which no client reads as an answer).
            default_request_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the CLI prints what matters

            def _reply(
                self, status: int, body: str, content_type: str = "application/json"
            ) -> None:
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    if self.close_connection:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except OSError:
                    self.close_connection = True  # the client left first: nobody to answer

            def _refuse(self, status: int, message: str, *, close: bool = False) -> None:
                self.close_connection = self.close_connection or close
                self._reply(status, json.dumps({"statusCode": status, "message": message}))

            def _read_body(self, limit: int) -> bytes | None:
                """The request body, or None when a 4xx has been answered instead."""
                if self.headers.get("Transfer-Encoding"):
                    self._refuse(411, "a Content-Length is required", close=True)
                    return None
                declared = self.headers.get_all("Content-Length") or []
                if len({value.strip() for value in declared}) > 1:
                    self._refuse(400, "conflicting Content-Length headers", close=True)
                    return None
                raw = declared[0].strip() if declared else "0"
                if not _DIGITS.fullmatch(raw):
                    self._refuse(400, "Content-Length must be a number", close=True)
                    return None
                length = int(raw)
                try:
                    if length > limit:
                        # The edge refuses it in the cloud (a WAF rule on this same limit).
                        self._drain(length)
                        self._refuse(
                            413,
                            f"request body too large ({length} bytes, at most {limit})",
                            close=True,
                        )
                        return None
                    body = self.rfile.read(length)
                except TimeoutError:
                    self._refuse(408, "the request body did not arrive in time", close=True)
                    return None
                if len(body) < length:
                    self._refuse(400, "the request body is shorter than its Content-Length")
                    return None
                return body

            def _drain(self, length: int) -> None:
                if length > MAX_DRAIN_BYTES:
                    return
                left = length
                while left > 0 and (chunk := self.rfile.read(min(left, 1 << 16))):
                    left -= len(chunk)

            def _answer(self, body: bytes) -> None:
                parts = urlsplit(self.path)
                route = ROUTES.get(parts.path)
                if route is None or route.method != self.command:
                    self._refuse(404, "Not found")
                    return
                # The guard runs before the route's answer: a refused request does nothing.
                refused = server.guard(route.guard, self.headers)
                if refused is not None:
                    self._refuse(*refused)
                    return
                reply = route.answer(server, Request(self, parts.path, parts.query, body))
                self._reply(reply.status, reply.body, reply.content_type)

            def do_GET(self) -> None:
                self._answer(b"")

            def do_POST(self) -> None:
                route = ROUTES.get(urlsplit(self.path).path)
                limit = MAX_REQUEST_BYTES
                # A larger body is held in memory for the operator alone: anyone else gets the
                # webhook limit (and then the guard's refusal).
                if (
                    route
                    and route.max_body > limit
                    and server.operator.refusal(self.headers) is None
                ):
                    limit = route.max_body
                body = self._read_body(limit)
                if body is not None:
                    self._answer(body)

            def _not_allowed(self) -> None:
                self.close_connection = True  # any body it sent is left unread
                self._refuse(405, f"{self.command} is not allowed here: POST (GET for /local/)")

            def do_PUT(self) -> None:
                self._not_allowed()

            def do_DELETE(self) -> None:
                self._not_allowed()

            def do_PATCH(self) -> None:
                self._not_allowed()

            def do_HEAD(self) -> None:
                self._not_allowed()

            def do_OPTIONS(self) -> None:
                self._not_allowed()

        self.httpd = _HttpServer(("127.0.0.1", port), Handler, stack.priority)
        self.operator = OperatorAccess(token or new_token(), self.port)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def token(self) -> str:
        return self.operator.token

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def guard(self, guard: Guard, headers: Message) -> tuple[int, str] | None:
        """None when a route's caller may go on; else the status and message refusing it."""
        if guard == "edge":
            return None  # the stack's edge decides, as the cloud's does (see answer_webhook)
        refused = self.operator.refusal(headers)
        if refused is None:
            return None
        reason, status, message = refused
        self._count(f"operator {reason}")
        # Worth the operator's eye: a web page they visited may be trying these routes.
        logger.warning("maestro serve: refused an operator request", extra={"refused": reason})
        return status, message

    def _count(self, reason: str) -> None:
        with self._refused_lock:
            self.refused[reason] += 1

    def answer_webhook(self, request: Request) -> Reply:
        """Through the stack's edge: its WAF check, throttle, function (502 when it raised;
        logged through maestro's masking logger) or fallback queue."""
        response = self.stack.api(_event_from_request(request.http, request.body))
        headers = response.get("multiValueHeaders") or {}
        content_type = (headers.get("Content-Type") or ["application/json"])[0]
        return Reply(response["statusCode"], response.get("body") or "", content_type)

    def answer_executions(self, _request: Request) -> Reply:
        return Reply(200, json.dumps(self.executions()))

    def answer_ledger(self, request: Request) -> Reply:
        query = {k: v[-1] for k, v in parse_qs(request.query).items()}
        return Reply(200, json.dumps(self.ledger(query.get("package"), query.get("wo"))))

    def answer_step(self, request: Request) -> Reply:
        try:
            execution = str(json.loads(request.body or b"{}").get("execution", ""))
        except (ValueError, AttributeError):
            message = 'expected {"execution": "<name or ARN>"}'
            return Reply(400, json.dumps({"statusCode": 400, "message": message}))
        status, payload = self.step(execution)
        return Reply(status, json.dumps(payload))

    def answer_directory(self, _request: Request) -> Reply:
        return Reply(200, self.stack.directory.snapshot().model_dump_json())

    def answer_directory_import(self, request: Request) -> Reply:
        """A directory the CLI validated (re-checked here: the route trusts no caller's
        validation), applied as one: every error refuses all of it."""
        try:
            asked = _DirectoryImport.model_validate_json(request.body or b"{}")
        except ValidationError as error:
            problems = [
                Problem(
                    severity="error",
                    file="request",
                    column=".".join(map(str, detail["loc"])),
                    message=detail["msg"],
                )
                for detail in error.errors(include_url=False)
            ]
            return _refused_import(problems)
        problems = check_directory(asked.directory)
        if problems:
            return _refused_import(problems)
        with self._import_lock:  # two imports at once would each plan against a stale read
            plan = apply_directory(
                asked.directory,
                self.stack.directory,
                self.stack.parties,
                prune=asked.prune,
                dry_run=asked.dry_run,
            )
        return Reply(200, plan.model_dump_json())

    def wo_stores(self) -> work_orders.WoStores:
        return work_orders.WoStores(
            self.stack.ddb, self.stack.tables, self.stack.sfn, self.stack.wo_machine_arn
        )

    def answer_wo(self, request: Request) -> Reply:
        wo_id = _query(request).get("id", "")
        found = work_orders.show(self.wo_stores(), wo_id) if wo_id else None
        if found is None:
            message = f"no work order {wo_id!r}" if wo_id else "expected ?id=WO-…"
            return Reply(404 if wo_id else 400, json.dumps({"error": message}))
        return Reply(200, found.model_dump_json())

    def answer_wos(self, request: Request) -> Reply:
        query = _query(request)
        status = query.get("status", "unfinished")
        if status not in work_orders.STATUS_CHOICES:
            choices = ", ".join(work_orders.STATUS_CHOICES)
            return Reply(400, json.dumps({"error": f"status must be one of {choices}"}))
        found = work_orders.listing(self.wo_stores(), status, query.get("property") or None)
        return Reply(200, found.model_dump_json())

    def answer_erase(self, request: Request) -> Reply:
        try:
            who = str(json.loads(request.body or b"{}")["who"])
        except (ValueError, KeyError, TypeError):
            message = 'expected {"who": "<E.164 number or person id>"}'
            return Reply(400, json.dumps({"statusCode": 400, "message": message}))
        status, payload = directory_erase.erase(self.stack.ddb, self.stack.tables, who)
        return Reply(status, json.dumps(payload))

    def executions(self) -> list[dict[str, Any]]:
        gates = {g.execution_id: g for g in self.stack.pipeline.deps.gates.open_gates()}
        out = []
        for e in self.stack.executions():
            gate = gates.get(e["executionArn"])
            out.append(
                {
                    "name": e["name"],
                    "execution": e["executionArn"],
                    "status": e["status"],
                    "paused_at": gate.gate if gate else None,
                }
            )
        return out

    def ledger(self, package_id: str | None, wo_id: str | None) -> list[dict[str, Any]]:
        """The watcher's Evidence and Shame rows: a package's, a WO's, or all of them."""
        ledger = self.stack.ledger
        if package_id:
            rows = ledger.for_package(package_id)
        elif wo_id:
            rows = ledger.for_wo(wo_id)
        else:
            rows = self.stack.ledger_rows()
        if package_id and wo_id:
            rows = [r for r in rows if r.wo_id == wo_id]
        return [r.model_dump(mode="json") for r in rows]

    def step(self, execution: str) -> tuple[int, dict[str, Any]]:
        for gate in self.stack.pipeline.deps.gates.open_gates():
            if execution in (gate.execution_id, gate.execution_id.rsplit(":", 1)[-1]):
                self.stack.release_gate(gate)
                return 200, {"released": gate.gate, "execution": gate.execution_id}
        return 404, {"error": f"no paused gate for {execution!r}"}

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.tick_seconds):
            now = time.monotonic()
            try:
                # Deliver what fell due and move on: the executions it starts run on their own
                # threads while requests are answered and time passes.
                self.stack.advance((now - last) * self.speed, wait=False)
            except Exception:  # a failed tick must not stop the clock; logged masked
                logger.exception("maestro serve: a clock tick failed")
            last = now

    def _feed(self) -> None:
        if self.feed is not None:
            self.feed.run(self._stop)

    def serve_forever(self) -> None:
        # At speed 0 time stands still and whoever holds the stack moves it: a ticker would
        # only race them for the debounce queue (its poll takes a signal theirs then misses).
        ticker = threading.Thread(target=self._tick, daemon=True)
        if self.speed > 0:
            ticker.start()
        feeder = threading.Thread(target=self._feed, daemon=True)
        if self.feed is not None:
            feeder.start()
        try:
            self.httpd.serve_forever(poll_interval=0.05)  # shutdown waits one poll
        finally:
            self._stop.set()
            for thread in (ticker, feeder):
                if thread.is_alive():
                    thread.join(timeout=30)
            self.httpd.server_close()


ROUTES: dict[str, Route] = {
    "/twilio/sms": Route("POST", "edge", LocalServer.answer_webhook),
    "/twilio/status": Route("POST", "edge", LocalServer.answer_webhook),
    "/twilio/transcript": Route("POST", "edge", LocalServer.answer_webhook),
    "/app/messages": Route("POST", "edge", LocalServer.answer_webhook),
    "/assistant/kickoff": Route("POST", "edge", LocalServer.answer_webhook),
    FALLBACK_PREFIX + FALLBACK_ROUTE: Route("POST", "edge", LocalServer.answer_webhook),
    "/local/executions": Route("GET", "operator", LocalServer.answer_executions),
    "/local/ledger": Route("GET", "operator", LocalServer.answer_ledger),
    "/local/step": Route("POST", "operator", LocalServer.answer_step),
    "/local/directory": Route("GET", "operator", LocalServer.answer_directory),
    "/local/directory/import": Route(
        "POST",
        "operator",
        LocalServer.answer_directory_import,
        max_body=DIRECTORY_IMPORT_MAX_BYTES,
    ),
    directory_erase.ROUTE: Route("POST", "operator", LocalServer.answer_erase),
    work_orders.SHOW_ROUTE: Route("GET", "operator", LocalServer.answer_wo),
    work_orders.LIST_ROUTE: Route("GET", "operator", LocalServer.answer_wos),
}
"""Path → route. A new route is one row here: its method, its guard, its answer."""


def _query(request: Request) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(request.query).items()}


class _DirectoryImport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    directory: Directory
    prune: bool = False
    dry_run: bool = False


def _refused_import(problems: list[Problem]) -> Reply:
    errors = [p.model_dump(mode="json") for p in problems]
    return Reply(
        400, json.dumps({"statusCode": 400, "message": "nothing written", "errors": errors})
    )


def start(
    port: int, speed: float, step: bool, feed: TextIO | None = None
) -> tuple[LocalStack, LocalServer]:
    """The stack, seeded, and its server; ``feed``: where each package is printed as it flows."""
    stack = LocalStack(start=datetime.now(UTC), step_mode=step, model="env").__enter__()
    seed(stack)
    server = LocalServer(stack, port, speed, feed=feed)
    stack.wire_twilio(server.url)  # the loopback number's webhooks: this server's URLs
    return stack, server
