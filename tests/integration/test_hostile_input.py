"""Hostile input, every endpoint, through the real inbound resolver on moto's DynamoDB.

Every answer is a clear 4xx or a 200 with the message stored exactly as sent: never a 500 and
never an exception out of the handler (behind API Gateway, an exception is a 502 and the
caller's message is gone). A refused request stores nothing. The transport-level cases a
resolver never sees (a Content-Length that is not a number, a body that is not text) are in
``test_serve_transport.py``, through the real HTTP server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from harness import (
    ACCOUNT,
    APP_SECRET,
    MAESTRO_LINE,
    MARIA,
    Rig,
    app_event,
    form_body,
    make_rig,
    rest_event,
    twilio_event,
    twilio_sid,
)

from maestro.adapters.webhook_auth import app_signature
from maestro.ingest.service import app_message_id
from maestro.ingest.webhooks import (
    MAX_APP_CHARS,
    MAX_REQUEST_BYTES,
    MAX_SMS_CHARS,
    MAX_TRANSCRIPT_CHARS,
)

pytestmark = pytest.mark.integration

ROUTES = (
    "/twilio/sms",
    "/twilio/status",
    "/twilio/transcript",
    "/app/messages",
    "/assistant/kickoff",
)
TWILIO_ROUTES = ROUTES[:3]
APP_ROUTES = ROUTES[3:]
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


@pytest.fixture(scope="module")
def rig(aws_module: Any) -> Rig:
    """One rig for the whole corpus (each case uses its own ids): its tables cost 0.6 s."""
    rig = make_rig(aws_module)
    _texted.append(rig.text("Got it: WO-7 is open."))
    return rig


_ids = iter(range(10**6))
_texted: list[str] = []
"""The SID of the one text maestro sent (the ``rig`` fixture sent it): the status route's
requests are about it."""


def _sid(prefix: str = "SM") -> str:
    """A SID in Twilio's format, new each time."""
    return twilio_sid(prefix, f"hostile {next(_ids)}")


def _app_id() -> str:
    return f"h{next(_ids):06d}"


def _valid_params(path: str) -> list[tuple[str, str]]:
    """A request each Twilio route accepts, as pairs (so a case can repeat or drop one)."""
    if path == "/twilio/sms":
        return [
            ("MessageSid", _sid()),
            ("AccountSid", ACCOUNT),
            ("From", MARIA.phone),
            ("To", MAESTRO_LINE),
            ("Body", "the tap drips"),
            ("NumMedia", "0"),
        ]
    if path == "/twilio/status":
        return [("MessageSid", _texted[0]), ("MessageStatus", "delivered"), ("AccountSid", ACCOUNT)]
    return [
        ("TranscriptionSid", _sid("TR")),
        ("CallSid", _sid("CA")),
        ("AccountSid", ACCOUNT),
        ("From", MARIA.phone),
        ("To", MAESTRO_LINE),
        ("TranscriptionStatus", "completed"),
        ("TranscriptionText", "the boiler is off again"),
    ]


def _valid_json(path: str) -> dict[str, Any]:
    if path == "/app/messages":
        return {"message_id": _app_id(), "from_phone": MARIA.phone, "body": "the AC is loud"}
    return {"from_phone": MARIA.phone}


def _stamped(path: str, timestamp: str) -> dict[str, Any]:
    """A valid app request signed (correctly) over a hostile timestamp."""
    event = app_event(path, _valid_json(path))
    signature = app_signature(APP_SECRET, timestamp, event["body"])
    headers = {"X-Maestro-Timestamp": timestamp, "X-Maestro-Signature": signature}
    return event | {"headers": event["headers"] | headers}


def _replace(pairs: list[tuple[str, str]], name: str, value: str | None) -> list[tuple[str, str]]:
    """``pairs`` with ``name`` set to ``value`` (None: without it)."""
    kept = [(k, v) for k, v in pairs if k != name]
    return kept if value is None else [*kept, (name, value)]


def _with_body(event: dict[str, Any], raw: bytes, *, base64_encoded: bool) -> dict[str, Any]:
    body = base64.b64encode(raw).decode() if base64_encoded else raw.decode()
    return event | {"body": body, "isBase64Encoded": base64_encoded}


def _with_content_type(event: dict[str, Any], content_type: str | None) -> dict[str, Any]:
    headers = {k: v for k, v in event["headers"].items() if k.lower() != "content-type"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return event | {"headers": headers}


def _valid_event(path: str) -> dict[str, Any]:
    if path in TWILIO_ROUTES:
        return twilio_event(path, _valid_params(path))
    return app_event(path, _valid_json(path))


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], dict[str, Any]]
    status: int
    says: str = ""  # what the refusal's message must say, when the status alone is ambiguous


def _every_route() -> list[Case]:
    """What every endpoint must refuse the same way."""
    cases: list[Case] = []
    megabyte = b"x" * 1_000_000
    for path in ROUTES:
        kind = "twilio" if path in TWILIO_ROUTES else "app"
        right = FORM if kind == "twilio" else JSON
        wrong = JSON if kind == "twilio" else FORM

        def event(path: str = path) -> dict[str, Any]:
            return _valid_event(path)

        cases += [
            Case(f"{path} 1 MB body", lambda e=event: e() | {"body": "x" * 1_000_000}, 413),
            Case(
                f"{path} 1 MB body, base64",
                lambda e=event: _with_body(e(), megabyte, base64_encoded=True),
                413,
            ),
            Case(
                f"{path} just over the request limit",
                lambda e=event: e() | {"body": "é" * (MAX_REQUEST_BYTES // 2 + 1)},
                413,
            ),
            Case(
                f"{path} invalid UTF-8",
                lambda e=event: _with_body(e(), b"Body=\xff\xfe\xc3(", base64_encoded=True),
                400,
                "UTF-8",
            ),
            Case(
                f"{path} a lone surrogate's bytes",
                lambda e=event: _with_body(e(), b"Body=\xed\xa0\x80", base64_encoded=True),
                400,
                "UTF-8",
            ),
            Case(
                f"{path} invalid base64",
                lambda e=event: e() | {"isBase64Encoded": True},
                400,
                "base64",
            ),
            Case(
                f"{path} wrong content type",
                lambda e=event, w=wrong: _with_content_type(e(), w),
                415,
            ),
            Case(
                f"{path} text/plain",
                lambda e=event: _with_content_type(e(), "text/plain"),
                415,
            ),
            Case(f"{path} no content type", lambda e=event: _with_content_type(e(), None), 415),
            Case(
                f"{path} a charset other than UTF-8",
                lambda e=event, r=right: _with_content_type(e(), f"{r}; charset=ISO-8859-1"),
                415,
            ),
            Case(f"{path} no body", lambda e=event: e() | {"body": None}, 403),
            Case(
                f"{path} not signed",
                lambda e=event, r=right: e() | {"headers": {"Content-Type": r}},
                403,
            ),
            Case(
                f"{path} a signature with non-ASCII characters",
                lambda e=event: (
                    e()
                    | {
                        "headers": e()["headers"]
                        | {"X-Twilio-Signature": "sïgnätüre", "X-Maestro-Signature": "v1=ünïcode"}
                    }
                ),
                403,
            ),
            Case(f"{path} GET", lambda e=event: e() | {"httpMethod": "GET"}, 404),
        ]
    return cases


def _twilio_fields() -> list[Case]:
    sms, status, call = TWILIO_ROUTES

    def case(
        name: str,
        path: str,
        change: Callable[[list[tuple[str, str]]], list[tuple[str, str]]],
        expected: int,
        says: str = "",
    ) -> Case:
        # A repeated field is refused as such; other refusals name the field they are about.
        if name.endswith("twice") and expected == 400:
            says = "repeated"
        return Case(
            f"{path} {name}",
            lambda: twilio_event(path, change(_valid_params(path))),
            expected,
            says,
        )

    cases = [
        case("no MessageSid", sms, lambda p: _replace(p, "MessageSid", None), 400),
        case("no From", sms, lambda p: _replace(p, "From", None), 400),
        case("a blank From", sms, lambda p: _replace(p, "From", ""), 400),
        case("From twice", sms, lambda p: [*p, ("From", "+14155550199")], 400),
        case("Body twice", sms, lambda p: [*p, ("Body", "and a second body")], 400),
        case("MessageSid twice", sms, lambda p: [*p, ("MessageSid", _sid())], 400),
        case(
            "SmsMessageSid alone",
            sms,
            lambda p: [("SmsMessageSid", _sid()), *_replace(p, "MessageSid", None)],
            200,
        ),
        case("an unknown field twice (ignored)", sms, lambda p: [*p, ("X", "1"), ("X", "2")], 200),
        case(
            "a MessageSid with quotes", sms, lambda p: _replace(p, "MessageSid", "SM' OR 1=1"), 400
        ),
        case(
            "a 3,000-character MessageSid",
            sms,
            lambda p: _replace(p, "MessageSid", "S" * 3000),
            400,
        ),
        case(
            "a MessageSid with a path", sms, lambda p: _replace(p, "MessageSid", "../../etc"), 400
        ),
        case("NumMedia not a number", sms, lambda p: _replace(p, "NumMedia", "two"), 400),
        case("NumMedia negative", sms, lambda p: _replace(p, "NumMedia", "-1"), 400),
        case("NumMedia 11", sms, lambda p: _replace(p, "NumMedia", "11"), 400),
        case("NumMedia 10**30", sms, lambda p: _replace(p, "NumMedia", "1" + "0" * 30), 400),
        case(
            "a javascript: media URL",
            sms,
            lambda p: [*_replace(p, "NumMedia", "1"), ("MediaUrl0", "javascript:alert(1)")],
            400,
        ),
        case(
            "a 3,000-character media URL",
            sms,
            lambda p: [*_replace(p, "NumMedia", "1"), ("MediaUrl0", "https://x/" + "a" * 3000)],
            400,
        ),
        case(
            f"a {MAX_SMS_CHARS + 1}-character Body",
            sms,
            lambda p: _replace(p, "Body", "x" * (MAX_SMS_CHARS + 1)),
            413,
        ),
        case("a 10,000-character Body", sms, lambda p: _replace(p, "Body", "y" * 10_000), 413),
        case("a short-code sender", sms, lambda p: _replace(p, "From", "72345"), 422),
        case("an alphanumeric sender", sms, lambda p: _replace(p, "From", "AMAZON"), 422),
        case(
            "a whatsapp: sender", sms, lambda p: _replace(p, "From", "whatsapp:+14155550100"), 422
        ),
        case("a sender with spaces", sms, lambda p: _replace(p, "From", "+1 415 555 0100"), 422),
        case("a sender with a leading 0", sms, lambda p: _replace(p, "From", "+0155501000"), 422),
        case("a 300-character sender", sms, lambda p: _replace(p, "From", "+1" * 150), 400),
        case("a short-code line", sms, lambda p: _replace(p, "To", "54321"), 422),
        case("a whatsapp: line", sms, lambda p: _replace(p, "To", "whatsapp:+14155550000"), 422),
        case("no To (optional)", sms, lambda p: _replace(p, "To", None), 200),
        # Twilio's ids, in Twilio's formats: a stand-in, another kind's or a recut one is not.
        case("a stand-in MessageSid", sms, lambda p: _replace(p, "MessageSid", "SMgood1"), 400),
        case(
            "a MessageSid of 33 hex digits",
            sms,
            lambda p: _replace(p, "MessageSid", _sid() + "a"),
            400,
            "MessageSid",
        ),
        case(
            "a call's SID as a MessageSid",
            sms,
            lambda p: _replace(p, "MessageSid", _sid("CA")),
            400,
        ),
        case(
            "MessageSid=<sid>NumMedia0, NumMedia dropped",
            sms,
            lambda p: _replace(_replace(p, "NumMedia", None), "MessageSid", _sid() + "NumMedia0"),
            400,
            "MessageSid",
        ),
        case("an MMS's MessageSid", sms, lambda p: _replace(p, "MessageSid", _sid("MM")), 200),
        case(
            "MessageSid, SmsMessageSid and SmsSid, as Twilio sends them",
            sms,
            lambda p: [*p, ("SmsMessageSid", p[0][1]), ("SmsSid", p[0][1])],
            200,
        ),
        case(
            "an SmsSid naming another message",
            sms,
            lambda p: [*p, ("SmsSid", _sid())],
            400,
            "different SIDs",
        ),
        case(
            "SmsSid alone",
            sms,
            lambda p: [("SmsSid", _sid()), *_replace(p, "MessageSid", None)],
            200,
        ),
        case("SmsSid twice", sms, lambda p: [*p, ("SmsSid", p[0][1]), ("SmsSid", _sid())], 400),
        case(
            "a text that holds a second form",
            sms,
            lambda p: _replace(p, "Body", f"hi From+14155550100MessageSid{_sid()}Zz"),
            400,
            "not as Twilio sent it",
        ),
        # The account: present, an account's SID, and this deployment's.
        case("no AccountSid", sms, lambda p: _replace(p, "AccountSid", None), 400, "AccountSid"),
        case(
            "a stand-in AccountSid",
            sms,
            lambda p: _replace(p, "AccountSid", "AClocal"),
            400,
            "AccountSid",
        ),
        case(
            "another account's AccountSid",
            sms,
            lambda p: _replace(p, "AccountSid", _sid("AC")),
            403,
            "AccountSid",
        ),
        case("AccountSid twice", sms, lambda p: [*p, ("AccountSid", ACCOUNT)], 400),
        case("no MessageStatus", status, lambda p: _replace(p, "MessageStatus", None), 400),
        case(
            "a message maestro never sent",
            status,
            lambda p: _replace(p, "MessageSid", _sid()),
            404,
            "not a message maestro sent",
        ),
        case(
            "a stand-in MessageSid", status, lambda p: _replace(p, "MessageSid", "SMt000001"), 400
        ),
        case(
            "an SmsSid naming another message",
            status,
            lambda p: [*p, ("SmsSid", _sid())],
            400,
            "different SIDs",
        ),
        case(
            "another account's AccountSid",
            status,
            lambda p: _replace(p, "AccountSid", _sid("AC")),
            403,
            "AccountSid",
        ),
        case(
            "an unknown MessageStatus",
            status,
            lambda p: _replace(p, "MessageStatus", "teleported"),
            400,
        ),
        case("MessageStatus twice", status, lambda p: [*p, ("MessageStatus", "failed")], 400),
        case(
            "a 40-character MessageStatus",
            status,
            lambda p: _replace(p, "MessageStatus", "s" * 40),
            400,
        ),
        case("a 1,000-character ErrorCode", status, lambda p: [*p, ("ErrorCode", "9" * 1000)], 400),
        case(
            "SmsStatus alone",
            status,
            lambda p: [("SmsStatus", "sent"), *_replace(p, "MessageStatus", None)],
            200,
        ),
        case("no From", call, lambda p: _replace(p, "From", None), 400),
        case(
            "no TranscriptionSid or CallSid",
            call,
            lambda p: _replace(_replace(p, "TranscriptionSid", None), "CallSid", None),
            400,
        ),
        case("CallSid alone", call, lambda p: _replace(p, "TranscriptionSid", None), 200),
        case(
            "a stand-in TranscriptionSid",
            call,
            lambda p: _replace(p, "TranscriptionSid", "TRbig0001"),
            400,
            "TranscriptionSid",
        ),
        case(
            "a call's SID as a TranscriptionSid",
            call,
            lambda p: _replace(p, "TranscriptionSid", _sid("CA")),
            400,
            "TranscriptionSid",
        ),
        case(
            "a stand-in CallSid alone",
            call,
            lambda p: _replace(_replace(p, "TranscriptionSid", None), "CallSid", "CAre0001"),
            400,
            "CallSid",
        ),
        case("TranscriptionSid twice", call, lambda p: [*p, ("TranscriptionSid", _sid("TR"))], 400),
        case("no AccountSid", call, lambda p: _replace(p, "AccountSid", None), 400, "AccountSid"),
        case(
            "another account's AccountSid",
            call,
            lambda p: _replace(p, "AccountSid", _sid("AC")),
            403,
            "AccountSid",
        ),
        case("TranscriptionText twice", call, lambda p: [*p, ("TranscriptionText", "more")], 400),
        case("an alphanumeric caller", call, lambda p: _replace(p, "From", "Anonymous"), 422),
        case(
            f"a {MAX_TRANSCRIPT_CHARS + 1}-character transcript",
            call,
            lambda p: _replace(p, "TranscriptionText", "z" * (MAX_TRANSCRIPT_CHARS + 1)),
            413,
        ),
        case(
            "a failed transcription",
            call,
            lambda p: _replace(p, "TranscriptionStatus", "failed"),
            200,
        ),
    ]
    # Percent-encoding that is not UTF-8 cannot be signed as Twilio signs text: refused unread.
    cases.append(
        Case(
            f"{sms} a %FF in a field",
            lambda: (
                twilio_event(sms, _valid_params(sms))
                | {"body": form_body([*_replace(_valid_params(sms), "Body", None)]) + "&Body=%FF"}
            ),
            400,
            "UTF-8",
        )
    )
    cases.append(
        Case(
            f"{sms} 300 form fields",
            lambda: twilio_event(sms, [*_valid_params(sms), *((f"F{n}", "x") for n in range(300))]),
            400,
            "fields",
        )
    )
    cases.append(
        Case(
            f"{sms} a Host with no port number",
            lambda: (
                twilio_event(sms, _valid_params(sms))
                | {
                    "headers": twilio_event(sms, _valid_params(sms))["headers"] | {"Host": "a:b"},
                }
            ),
            403,
        )
    )
    return cases


def _app_fields() -> list[Case]:
    messages, kickoff = APP_ROUTES

    def body(path: str, name: str, text: str, expected: int) -> Case:
        says = "repeated" if name.endswith("twice") else ""
        return Case(f"{path} {name}", lambda: app_event(path, text), expected, says)

    def fields(
        path: str, name: str, change: dict[str, Any], drop: str | None, expected: int
    ) -> Case:
        def build() -> dict[str, Any]:
            payload = {k: v for k, v in (_valid_json(path) | change).items() if k != drop}
            return app_event(path, json.dumps(payload))

        return Case(f"{path} {name}", build, expected)

    sid = _app_id()
    return [
        body(messages, "not JSON", "{not json", 400),
        body(messages, "empty", "", 400),
        body(messages, "null", "null", 400),
        body(messages, "an array", "[1, 2]", 400),
        body(messages, "a string", '"hello"', 400),
        body(messages, "nested 10,000 deep", "[" * 10_000 + "]" * 10_000, 400),
        body(
            messages,
            "a lone surrogate escape",
            r'{"message_id":"a1","from_phone":"+14155550100","body":"\ud800"}',
            400,
        ),
        body(
            messages,
            "a field twice",
            f'{{"message_id":"{sid}","from_phone":"{MARIA.phone}","body":"a","body":"b"}}',
            400,
        ),
        body(
            messages,
            "NaN for the body",
            '{"message_id":"a2","from_phone":"+14155550100","body":NaN}',
            400,
        ),
        fields(messages, "no message_id", {}, "message_id", 400),
        fields(messages, "no from_phone", {}, "from_phone", 400),
        fields(messages, "no body", {}, "body", 400),
        fields(messages, "an unknown field", {"lane": "escalate"}, None, 400),
        fields(messages, "a number for a body", {"body": 42}, None, 400),
        fields(messages, "null for a body", {"body": None}, None, 400),
        fields(messages, "an object for a body", {"body": {"text": "hi"}}, None, 400),
        fields(messages, "a whatsapp: sender", {"from_phone": "whatsapp:+14155550100"}, None, 400),
        fields(messages, "a short-code sender", {"from_phone": "72345"}, None, 400),
        fields(messages, "a message_id with spaces", {"message_id": "a b"}, None, 400),
        fields(messages, "a 200-character message_id", {"message_id": "m" * 200}, None, 400),
        fields(
            messages,
            f"a {MAX_APP_CHARS + 1}-character body",
            {"body": "x" * (MAX_APP_CHARS + 1)},
            None,
            413,
        ),
        fields(messages, "a 10,000-character body", {"body": "q" * 10_000}, None, 413),
        fields(messages, "11 media URLs", {"media_urls": ["https://x/1"] * 11}, None, 400),
        fields(messages, "a file: media URL", {"media_urls": ["file:///etc/passwd"]}, None, 400),
        body(kickoff, "not JSON", "from_phone=+14155550100", 400),
        fields(kickoff, "no from_phone", {}, "from_phone", 400),
        fields(kickoff, "an unknown trigger", {"trigger": "now"}, None, 400),
        fields(
            kickoff, "a trigger the assistant may not use", {"trigger": "idle_timeout"}, None, 400
        ),
        fields(kickoff, "an alphanumeric sender", {"from_phone": "AMAZON"}, None, 400),
        body(
            kickoff,
            "from_phone twice",
            '{"from_phone":"+14155550100","from_phone":"+14155550199"}',
            400,
        ),
        Case(
            f"{messages} a timestamp of 5,000 digits", lambda: _stamped(messages, "9" * 5000), 403
        ),
        Case(f"{messages} a timestamp of 1e9", lambda: _stamped(messages, "1e9"), 403),
        Case(
            f"{kickoff} a timestamp in Arabic digits", lambda: _stamped(kickoff, "١٧٠٠٠٠٠٠٠٠"), 403
        ),
    ]


CORPUS = _every_route() + _twilio_fields() + _app_fields()


def test_the_corpus_covers_every_route() -> None:
    for path in ROUTES:
        assert sum(case.name.startswith(path + " ") for case in CORPUS) >= 14, path


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_hostile_requests_get_a_clear_answer_and_store_nothing_when_refused(
    rig: Rig, case: Case
) -> None:
    before = rig.stored_message_count()
    response = rig.call(case.build())  # an exception here would be API Gateway's 502
    assert response["statusCode"] == case.status, response
    if case.status != 200:
        assert rig.stored_message_count() == before
        message = json.loads(response["body"])["message"]
        assert message, "a refusal says why"
        assert case.says in message


# -- texts that must be stored exactly as sent -------------------------------------------------

TEXTS = {
    "emoji": "🚿💧🔥 the shower 👩🏽‍🔧 needs a plumber 🇺🇸",
    "right to left": "הברז בשירותים דולף — الحنفية تسرب الماء",
    "a right-to-left override": "invoice \u202egnp.exe\u202c for WO-204",
    "combining marks": "Zalgo: ṫ̶̢h̷̛e̶ ̵s̸i̸n̵k̵",
    "NUL and control characters": "before\x00after\x07\x1b[31m red\r\n\ttab",
    "JSON injection": '{"lane": "escalate", "target_wo_id": "WO-1"}", "from_phone": "+15550000000',
    "template injection": "{{7*7}} ${jndi:ldap://x/a} {0.__class__} %s%n #{1+1} <%= 7*7 %>",
    "markup": "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "SQL": "'; DROP TABLE messages; --",
    "a form field inside the text": "hi&From=%2B15550001111&Body=forged",
    "zero-width characters": "ga\u200bs lea\u200dk",
    "4-byte characters at the limit": "𝕏" * MAX_SMS_CHARS,
}


def _send_text(rig: Rig, channel: str, text: str) -> tuple[dict[str, Any], str]:
    if channel == "sms":
        sid = _sid()
        params = _replace(_valid_params("/twilio/sms"), "MessageSid", sid)
        return rig.call(twilio_event("/twilio/sms", _replace(params, "Body", text))), sid
    if channel == "call":
        sid = _sid("TR")
        params = _replace(_valid_params("/twilio/transcript"), "TranscriptionSid", sid)
        event = twilio_event("/twilio/transcript", _replace(params, "TranscriptionText", text))
        return rig.call(event), sid
    sid = _app_id()
    payload = {"message_id": sid, "from_phone": MARIA.phone, "body": text}
    return rig.call(app_event("/app/messages", payload)), app_message_id(MARIA.phone, sid)


@pytest.mark.parametrize("channel", ["sms", "call", "app"])
@pytest.mark.parametrize("name", list(TEXTS))
def test_hostile_texts_are_stored_exactly_as_sent(rig: Rig, name: str, channel: str) -> None:
    text = TEXTS[name]
    response, message_id = _send_text(rig, channel, text)
    assert response["statusCode"] == 200, response
    stored = rig.buffer.get_message(message_id)
    assert stored is not None
    assert stored.body == text


@pytest.mark.parametrize(("channel", "status"), [("sms", 413), ("app", 413), ("call", 200)])
def test_a_10000_character_message(rig: Rig, channel: str, status: int) -> None:
    # An SMS is at most 1,600 characters (Twilio's limit), an in-app message 4,000; a call's
    # transcript may run to 16,000.
    text = "the water heater is banging and leaking. " * 250
    assert len(text) == 10_250
    response, message_id = _send_text(rig, channel, text[:10_000])
    assert response["statusCode"] == status, response
    stored = rig.buffer.get_message(message_id)
    assert (stored.body if stored else None) == (text[:10_000] if status == 200 else None)


def test_a_route_added_without_its_spec_cannot_be_reached(rig: Rig) -> None:
    # Authentication and parsing are global middlewares keyed by each route's declaration: a
    # route added any other way answers 404, never its handler.
    reached: list[bool] = []
    rig.resolver.post("/twilio/new")(lambda: reached.append(True) or {"ok": True})
    event = twilio_event("/twilio/new", _valid_params("/twilio/sms"))
    assert rig.call(event)["statusCode"] == 404
    assert reached == []
    unsigned = rest_event("/twilio/new", "a=1", {})
    assert rig.call(unsigned)["statusCode"] == 404


def test_the_largest_messages_accepted_fit_under_the_request_limit(rig: Rig) -> None:
    # The edge (WAF) and the handler refuse a body over MAX_REQUEST_BYTES: the longest message
    # each route accepts, in 4-byte characters and form-encoded, must still fit under it.
    call = _replace(
        _valid_params("/twilio/transcript"), "TranscriptionText", "𝕏" * MAX_TRANSCRIPT_CHARS
    )
    urls = [(f"MediaUrl{n}", "https://api.twilio.com/" + "m" * 2_000) for n in range(10)]
    urls += [(f"MediaContentType{n}", "image/" + "x" * 57) for n in range(10)]
    sms = [
        *_replace(
            _replace(_valid_params("/twilio/sms"), "Body", "𝕏" * MAX_SMS_CHARS), "NumMedia", "10"
        ),
        *urls,
    ]
    app = _valid_json("/app/messages") | {"body": "𝕏" * MAX_APP_CHARS}
    for event in (
        twilio_event("/twilio/transcript", call),
        twilio_event("/twilio/sms", sms),
        app_event("/app/messages", app),
    ):
        assert len(event["body"].encode()) <= MAX_REQUEST_BYTES
        assert rig.call(event)["statusCode"] == 200
