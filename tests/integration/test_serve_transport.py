"""`maestro serve` over raw sockets: what API Gateway's edge and transport would answer.

Every request gets an HTTP status line back, however broken it is: a dropped connection is what
a caller cannot tell from an outage (and, behind API Gateway, a 502). Many concurrent senders
are all answered and all stored, in each sender's order.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from maestro.adapters.webhook_auth import twilio_signature
from maestro.domain.models import conversation_id_for
from maestro.ingest.webhooks import MAX_REQUEST_BYTES
from maestro_dev.local.events import MAESTRO_LINE, form_body, signed_app_event, twilio_sid
from maestro_dev.local.operator_access import TOKEN_HEADER
from maestro_dev.local.server import LocalServer, start

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    stack, srv = start(port=0, speed=1.0, step=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        thread.join(timeout=30)
        stack.__exit__(None, None, None)


def _exchange(server: LocalServer, request: bytes, *, half_close: bool = False) -> bytes:
    """Send raw bytes; everything the server answers until it closes."""
    host, port = server.httpd.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=60) as sock:
        sock.sendall(request)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/"), f"no HTTP answer: {answer[:80]!r}"
    return int(answer.split(b" ", 2)[1])


def _post(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    host = [] if any(k.lower() == "host" for k in headers) else ["Host: 127.0.0.1"]
    lines = [f"POST {path} HTTP/1.1", *host, *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _signed_sms(server: LocalServer, params: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """``params``, of the embedded stack's Twilio account, signed as Twilio signs them."""
    params = {"AccountSid": server.stack.twilio.account_sid, **params}
    body = form_body(params).encode()
    url = f"http://{urlsplit(server.url).netloc}/twilio/sms"
    signature = twilio_signature(server.stack.twilio_token, url, params)
    host = urlsplit(server.url).netloc
    headers = {
        "Host": host,
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": str(len(body)),
        "X-Twilio-Signature": signature,
    }
    return body, headers


FORM = {"Content-Type": "application/x-www-form-urlencoded"}
_SHA1_SHAPED = "bm90IGEgcmVhbCBTSEExIHN1bS4="  # base64 of 20 bytes, as an HMAC-SHA1 is


@pytest.mark.parametrize(
    ("name", "request_bytes", "status"),
    [
        (
            "Content-Length not a number",
            _post("/twilio/sms", b"a=1", {"Content-Length": "abc"}),
            400,
        ),
        ("Content-Length negative", _post("/twilio/sms", b"a=1", {"Content-Length": "-1"}), 400),
        ("Content-Length 1_0", _post("/twilio/sms", b"a=1", {"Content-Length": "1_0"}), 400),
        (
            "two Content-Lengths",
            _post("/twilio/sms", b"a=1", {"Content-Length": "3", "content-length": "30"}),
            400,
        ),
        (
            "a 1 MB body",
            _post("/twilio/sms", b"B" * 1_000_000, {"Content-Length": "1000000", **FORM}),
            413,
        ),
        (
            "a 20 MB body",
            _post("/app/messages", b"{" * 20_000_000, {"Content-Length": "20000000"}),
            413,
        ),
        (
            "one byte over the limit",
            _post(
                "/twilio/sms",
                b"x" * (MAX_REQUEST_BYTES + 1),
                {"Content-Length": str(MAX_REQUEST_BYTES + 1), **FORM},
            ),
            413,
        ),
        (
            "invalid UTF-8",
            _post(  # signature headers in shape: past the edge, to the handler's 400
                "/twilio/sms",
                b"Body=\xff\xfe",
                {"Content-Length": "7", "X-Twilio-Signature": _SHA1_SHAPED, **FORM},
            ),
            400,
        ),
        (
            "chunked",
            _post("/twilio/sms", b"3\r\na=1\r\n0\r\n\r\n", {"Transfer-Encoding": "chunked"}),
            411,
        ),
        ("not HTTP", b"HELLO THERE\r\n\r\n", 400),
        ("a header line of 70,000 bytes", _post("/twilio/sms", b"", {"X-Big": "h" * 70_000}), 431),
        ("PUT", b"PUT /twilio/sms HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        ("DELETE", b"DELETE /twilio/sms HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        ("HEAD", b"HEAD /twilio/sms HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        ("an unknown path", _post("/twilio/nothing", b"", {"Content-Length": "0"}), 404),
        ("an unsigned webhook", _post("/twilio/sms", b"a=1", {"Content-Length": "3", **FORM}), 403),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_broken_requests_get_an_http_answer(
    server: LocalServer, name: str, request_bytes: bytes, status: int
) -> None:
    assert _status(_exchange(server, request_bytes)) == status, name


@pytest.mark.parametrize("body", [b"{x", b"[1]"], ids=["not JSON", "a JSON list"])
def test_a_step_that_is_not_a_json_object_gets_a_400(server: LocalServer, body: bytes) -> None:
    operator = {"Host": urlsplit(server.url).netloc, TOKEN_HEADER: server.token}
    request = _post("/local/step", body, {**operator, "Content-Length": str(len(body))})
    assert _status(_exchange(server, request)) == 400


@pytest.mark.parametrize(
    ("path", "signature_headers"),
    [
        ("/twilio/sms", {"X-Twilio-Signature": "junk"}),
        ("/twilio/status", {"X-Twilio-Signature": ""}),
        ("/twilio/transcript", {}),
        ("/twilio/sms", {"X-Twilio-Signature": _SHA1_SHAPED[:-1] + "!"}),  # not base64
        ("/twilio/sms", {"X-Twilio-Signature": _SHA1_SHAPED + "AAAA"}),  # a length of neither
        ("/twilio/sms", {"X-Maestro-Signature": "v1=" + "0" * 64, "X-Maestro-Timestamp": "1"}),
        ("/app/messages", {"X-Maestro-Signature": "v1=" + "ab" * 32}),  # no timestamp
        (
            "/assistant/kickoff",
            {"X-Maestro-Signature": "v2=" + "ab" * 32, "X-Maestro-Timestamp": "1"},
        ),
        ("/app/messages", {"X-Twilio-Signature": _SHA1_SHAPED}),
    ],
    ids=[
        "junk",
        "empty",
        "absent",
        "not base64",
        "too long",
        "app headers on a Twilio route",
        "no timestamp",
        "v2",
        "Twilio's header on an app route",
    ],
)
def test_signature_headers_out_of_shape_are_refused_before_the_handler(
    server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    signature_headers: dict[str, str],
) -> None:
    """The edge's cheap check, as the WAF rule makes it in the cloud: the handler (which reads
    the secret and computes the signature) never runs for them."""
    handled: list[dict[str, object]] = []

    def handler(event: dict[str, object]) -> dict[str, object]:
        handled.append(event)
        return {"statusCode": 200, "body": "handled"}

    monkeypatch.setattr(server.stack, "http", handler)
    kind = "twilio" if path.startswith("/twilio/") else "app"
    before = server.stack.edge.refused[f"{kind} signature headers"]
    body = b"MessageSid=SMedge&Body=hello" if kind == "twilio" else b'{"message_id": "m-edge"}'
    content_type = "application/x-www-form-urlencoded" if kind == "twilio" else "application/json"
    request = _post(
        path,
        body,
        {"Content-Type": content_type, "Content-Length": str(len(body)), **signature_headers},
    )
    answer = _exchange(server, request)
    assert _status(answer) == 403, answer
    assert handled == []
    assert server.stack.edge.refused[f"{kind} signature headers"] == before + 1


def test_well_formed_signature_headers_reach_the_handler_which_verifies_them(
    server: LocalServer,
) -> None:
    """The shape is not the signature: a well-formed wrong one passes the edge, and the handler
    refuses it."""
    refused_before = sum(server.refused.values())
    twilio = _post(
        "/twilio/sms",
        b"Body=hello",
        {**FORM, "Content-Length": "10", "X-Twilio-Signature": _SHA1_SHAPED},
    )
    assert b"invalid Twilio signature" in _exchange(server, twilio)
    event = signed_app_event("not the app's secret", "/app/messages", {"message_id": "m-edge"})
    body = event["body"].encode()
    app = _post("/app/messages", body, {**event["headers"], "Content-Length": str(len(body))})
    assert b"invalid maestro signature" in _exchange(server, app)
    assert sum(server.refused.values()) == refused_before


def test_a_body_shorter_than_its_content_length_gets_an_answer(server: LocalServer) -> None:
    request = _post("/twilio/sms", b"Body=hi", {"Content-Length": "500", **FORM})
    assert _status(_exchange(server, request, half_close=True)) == 400


def test_hostile_senders_and_sizes_over_http(server: LocalServer) -> None:
    sids = [twilio_sid("SM", f"http {n}") for n in range(5)]
    base = {"MessageSid": sids[0], "From": "+14155550123", "To": MAESTRO_LINE, "Body": "hi"}
    cases = [
        ({**base, "MessageSid": sids[1], "From": "AMAZON"}, 422),
        ({**base, "MessageSid": sids[2], "From": "whatsapp:+14155550123"}, 422),
        ({**base, "MessageSid": sids[3], "Body": "x" * 10_000}, 413),
        ({**base, "MessageSid": sids[4], "Body": "🚿 הברז דולף {{7*7}}"}, 200),
        ({**base, "MessageSid": "SMhttp0006"}, 400),  # not a Twilio SID
    ]
    for params, status in cases:
        body, headers = _signed_sms(server, params)
        answer = _exchange(server, _post("/twilio/sms", body, headers))
        assert _status(answer) == status, (params["From"], answer[-200:])
    stored = server.stack.buffer.get_message(sids[4])
    assert stored is not None
    assert stored.body == "🚿 הברז דולף {{7*7}}"
    assert server.stack.buffer.get_message(sids[1]) is None


def test_forty_concurrent_senders_are_all_answered_and_stored_in_order(
    server: LocalServer,
) -> None:
    senders = [f"+1415557{n:04d}" for n in range(40)]

    def send_all(phone: str) -> list[int]:
        statuses = []
        for k in range(5):
            params = {
                "MessageSid": twilio_sid("SM", f"{phone} {k}"),
                "From": phone,
                "To": MAESTRO_LINE,
                "Body": f"message {k}",
            }
            body, headers = _signed_sms(server, params)
            request = urllib.request.Request(
                server.url + "/twilio/sms", data=body, headers=headers, method="POST"
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                statuses.append(response.status)
        return statuses

    with ThreadPoolExecutor(max_workers=len(senders)) as pool:
        results = list(pool.map(send_all, senders))
    assert results == [[200] * 5] * len(senders)
    for phone in senders:
        meta = server.stack.buffer.meta(conversation_id_for(phone))
        assert meta is not None, phone
        assert meta.seq == 5, phone
        stored = [
            server.stack.buffer.get_message(twilio_sid("SM", f"{phone} {k}")) for k in range(5)
        ]
        assert [m.seq for m in stored if m is not None] == [1, 2, 3, 4, 5], phone
    request = urllib.request.Request(
        server.url + "/local/executions", headers={TOKEN_HEADER: server.token}
    )
    listing = json.loads(urllib.request.urlopen(request, timeout=60).read())
    assert isinstance(listing, list)


def test_every_connection_is_counted_answered_once_it_is_closed(server: LocalServer) -> None:
    # While a request counts as being answered, the executions give way to it at their next
    # AWS call (threads.Priority): a connection left counted would slow the pipeline for good.
    host, port = server.httpd.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=60):
        _until(lambda: server.stack.priority.pending == 1)  # counted from its accept
    for request in (
        b"HELLO THERE\r\n\r\n",
        _post("/twilio/sms", b"a=1", {"Content-Length": "3", **FORM}),
        _post("/twilio/sms", b"x" * 2_000_000, {"Content-Length": "2000000", **FORM}),
    ):
        _status(_exchange(server, request))
    _exchange(server, _post("/twilio/sms", b"Body=hi", {"Content-Length": "99"}), half_close=True)
    params = {"MessageSid": twilio_sid("SM", "counted"), "From": "+14155550188"}
    body, headers = _signed_sms(server, params)
    assert _status(_exchange(server, _post("/twilio/sms", body, headers))) == 200
    _until(lambda: server.stack.priority.pending == 0)


def _until(condition: Callable[[], bool], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_a_webhook_that_fails_inside_is_a_502_logged_without_the_senders_number(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The handler raising (a bug, an outage) is still answered, and its traceback goes through
    maestro's masking logger, not raw to stderr: the number in the exception is masked."""
    import io
    import logging

    from maestro.observability import logger

    phone = "+14155550100"

    def broken(event: object) -> dict[str, object]:
        raise RuntimeError(f"could not store the text from {phone}")

    monkeypatch.setattr(server.stack, "http", broken)
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        body, headers = _signed_sms(
            server, {"MessageSid": twilio_sid("SM", "broken"), "From": phone, "Body": "hi"}
        )
        answer = _exchange(server, _post("/twilio/sms", body, headers))
    finally:
        handler.setStream(previous)
    assert _status(answer) == 502
    logged = buffer.getvalue()
    assert "a webhook failed" in logged
    assert "RuntimeError" in logged
    assert phone not in logged
    assert phone[-4:] in logged  # masked to its last digits, not dropped
    out, err = capsys.readouterr()
    assert phone not in out + err
