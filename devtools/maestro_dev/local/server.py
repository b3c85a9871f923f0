"""`maestro serve`: the embedded stack as a long-running loopback server.

Webhook routes (``/twilio/sms``, ``/twilio/status``, ``/twilio/transcript``, ``/app/messages``,
``/assistant/kickoff``) are handed to the real inbound resolver as API Gateway REST events.
Operator routes under ``/local/`` serve `maestro executions` and `maestro step`. A ticker moves
the virtual clock with real time (scaled by ``--speed``), so idle windows pass as they would.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

WEBHOOK_ROUTES = (
    "/twilio/sms",
    "/twilio/status",
    "/twilio/transcript",
    "/app/messages",
    "/assistant/kickoff",
)


def _event_from_request(handler: BaseHTTPRequestHandler, body: str) -> dict[str, Any]:
    parts = urlsplit(handler.path)
    query = parse_qs(parts.query, keep_blank_values=True)
    headers = dict(handler.headers.items())
    headers.setdefault("X-Forwarded-Proto", "http")
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
        "body": body,
        "isBase64Encoded": False,
    }


class LocalServer:
    def __init__(self, stack: LocalStack, port: int, speed: float = 1.0) -> None:
        self.stack = stack
        self.speed = speed
        self._lock = threading.Lock()  # one request or tick at a time: moto is shared state
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the CLI prints what matters

            def _reply(self, status: int, body: str, content_type: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/local/executions":
                    self._reply(200, json.dumps(server.executions()), "application/json")
                elif parts.path == "/local/ledger":
                    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                    rows = server.ledger(query.get("package"), query.get("wo"))
                    self._reply(200, json.dumps(rows), "application/json")
                else:
                    self._reply(404, "{}", "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                path = urlsplit(self.path).path
                if path == "/local/step":
                    status, payload = server.step(json.loads(body or "{}").get("execution", ""))
                    self._reply(status, json.dumps(payload), "application/json")
                    return
                if path not in WEBHOOK_ROUTES:
                    self._reply(404, "{}", "application/json")
                    return
                with server._lock:
                    response = server.stack.http(_event_from_request(self, body))
                headers = response.get("multiValueHeaders") or {}
                content_type = (headers.get("Content-Type") or ["application/json"])[0]
                self._reply(response["statusCode"], response.get("body") or "", content_type)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def executions(self) -> list[dict[str, Any]]:
        with self._lock:
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
        with self._lock:
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
        with self._lock:
            for gate in self.stack.pipeline.deps.gates.open_gates():
                if execution in (gate.execution_id, gate.execution_id.rsplit(":", 1)[-1]):
                    self.stack.release_gate(gate)
                    return 200, {"released": gate.gate, "execution": gate.execution_id}
        return 404, {"error": f"no paused gate for {execution!r}"}

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(1.0):
            now = time.monotonic()
            with self._lock:
                self.stack.advance((now - last) * self.speed)
            last = now

    def serve_forever(self) -> None:
        ticker = threading.Thread(target=self._tick, daemon=True)
        ticker.start()
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            self._stop.set()
            self.httpd.server_close()


def start(port: int, speed: float, step: bool) -> tuple[LocalStack, LocalServer]:
    stack = LocalStack(start=datetime.now(UTC), step_mode=step, model="env").__enter__()
    seed(stack)
    return stack, LocalServer(stack, port, speed)
