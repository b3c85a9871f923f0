"""`maestro serve`: the embedded stack as a long-running loopback server.

Webhook routes (``/twilio/sms``, ``/twilio/status``, ``/twilio/transcript``, ``/app/messages``,
``/assistant/kickoff``) are handed to the real inbound resolver as API Gateway REST events.
Operator routes under ``/local/`` serve `maestro executions`, `maestro step` and `maestro
ledger`. A ticker moves the virtual clock with real time (scaled by ``--speed``), so idle
windows pass as they would.

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
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from maestro.ingest.webhooks import MAX_REQUEST_BYTES
from maestro.observability import logger
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.threads import Priority
from maestro_dev.local.world import seed

WEBHOOK_ROUTES = (
    "/twilio/sms",
    "/twilio/status",
    "/twilio/transcript",
    "/app/messages",
    "/assistant/kickoff",
)
LISTEN_BACKLOG = 128
"""socketserver's default is 5: 50 concurrent senders had a tenth of their connections reset."""
READ_TIMEOUT_SECONDS = 30.0
"""A client that declares a body and stops sending gets a 408, not a thread held forever."""
MAX_DRAIN_BYTES = 64 * 1024 * 1024
"""A refused body is read to its end before the answer (closing on unread data resets the
connection, and the client never sees the 413); past this much, the connection is just closed."""
_DIGITS = re.compile(r"[0-9]+")


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
    def __init__(
        self, stack: LocalStack, port: int, speed: float = 1.0, tick_seconds: float = 0.25
    ) -> None:
        self.stack = stack
        self.speed = speed
        self.tick_seconds = tick_seconds
        self._stop = threading.Event()
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

            def _read_body(self) -> bytes | None:
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
                    if length > MAX_REQUEST_BYTES:
                        # The edge refuses it in the cloud (a WAF rule on this same limit).
                        self._drain(length)
                        self._refuse(
                            413,
                            f"request body too large ({length} bytes, at most {MAX_REQUEST_BYTES})",
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

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/local/executions":
                    self._reply(200, json.dumps(server.executions()))
                elif parts.path == "/local/ledger":
                    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                    self._reply(
                        200, json.dumps(server.ledger(query.get("package"), query.get("wo")))
                    )
                else:
                    self._refuse(404, "Not found")

            def do_POST(self) -> None:
                body = self._read_body()
                if body is None:
                    return
                path = urlsplit(self.path).path
                if path == "/local/step":
                    try:
                        execution = str(json.loads(body or b"{}").get("execution", ""))
                    except (ValueError, AttributeError):
                        self._refuse(400, 'expected {"execution": "<name or ARN>"}')
                        return
                    status, payload = server.step(execution)
                    self._reply(status, json.dumps(payload))
                    return
                if path not in WEBHOOK_ROUTES:
                    self._refuse(404, "Not found")
                    return
                try:
                    response = server.stack.http(_event_from_request(self, body))
                except Exception:
                    # Through maestro's logger: its formatter masks numbers and words (#11).
                    logger.exception("maestro serve: a webhook failed", extra={"path": path})
                    self._refuse(502, "Internal server error")
                    return
                headers = response.get("multiValueHeaders") or {}
                content_type = (headers.get("Content-Type") or ["application/json"])[0]
                self._reply(response["statusCode"], response.get("body") or "", content_type)

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

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

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

    def serve_forever(self) -> None:
        ticker = threading.Thread(target=self._tick, daemon=True)
        ticker.start()
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            self._stop.set()
            ticker.join(timeout=30)
            self.httpd.server_close()


def start(port: int, speed: float, step: bool) -> tuple[LocalStack, LocalServer]:
    stack = LocalStack(start=datetime.now(UTC), step_mode=step, model="env").__enter__()
    seed(stack)
    return stack, LocalServer(stack, port, speed)
