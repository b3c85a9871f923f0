"""Webhook authentication: Twilio's official vectors through the handler's own verification.

The vectors (token, URL, params, signatures) are the ones twilio-python's
tests/unit/test_request_validator.py uses. Each goes through ``request_url`` (rebuilding the
URL from an API Gateway event, as the handler does) and ``twilio_signature_valid``.
"""

from __future__ import annotations

from typing import Any

import pytest
from twilio.request_validator import RequestValidator, get_signature_algorithm

from maestro.adapters.webhook_auth import (
    FormParams,
    app_signature,
    app_signature_valid,
    request_url,
    sids_read_as_signed,
    signature_headers_well_formed,
    twilio_signature,
    twilio_signature_valid,
)

TOKEN = "12345"
PARAMS = {
    "CallSid": "CA1234567890ABCDE",
    "Digits": "1234",
    "From": "+14158675309",
    "To": "+18005551212",
    "Caller": "+14158675309",
}
EXPECTED = "RSOYDt4T1cUTdK1PDd93/VVr8B8="


def _event(scheme: str, host: str, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "path": path,
        "headers": {"Host": host, "X-Forwarded-Proto": scheme},
        "multiValueQueryStringParameters": query,
        "requestContext": {"path": path, "stage": "$default"},
    }


def _form(params: dict[str, str] | list[tuple[str, str]]) -> FormParams:
    pairs = params.items() if isinstance(params, dict) else params
    values: dict[str, list[str]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    return FormParams(values)


QUERY = {"foo": ["1"], "bar": ["2"]}


def test_the_rebuilt_url_is_the_one_twilio_signed() -> None:
    event = _event("https", "mycompany.com", "/myapp.php", QUERY)
    assert request_url(event, None) == "https://mycompany.com/myapp.php?foo=1&bar=2"


@pytest.mark.parametrize(
    ("scheme", "host", "signature"),
    [
        ("https", "mycompany.com", EXPECTED),  # test_validation
        ("https", "mycompany.com:1234", EXPECTED),  # removes port on https
        ("http", "mycompany.com:1234", "Zmvh+3yNM1Phv2jhDCwEM3q5ebU="),  # removes port on http
        ("https", "mycompany.com", "kvajT1Ptam85bY51eRf/AJRuM3w="),  # adds port 443
        ("http", "mycompany.com", "0ZXoZLH/DfblKGATFgpif+LLRf4="),  # adds port 80
    ],
)
def test_twilio_official_vectors_pass(scheme: str, host: str, signature: str) -> None:
    url = request_url(_event(scheme, host, "/myapp.php", QUERY), None)
    assert twilio_signature_valid(TOKEN, url, _form(PARAMS), signature)


def test_twilio_duplicate_parameter_vector_passes() -> None:
    params = _form(
        [("Sid", "CA123"), ("SidAccount", "AC123"), ("Digits", "5678"), ("Digits", "1234")]
    )
    url = request_url(_event("https", "mycompany.com", "/myapp.php", QUERY), None)
    assert twilio_signature_valid(TOKEN, url, params, "IK+Dwps556ElfBT0I3Rgjkr1wJU=")


@pytest.mark.parametrize(
    "change",
    ["token", "param", "extra_param", "path", "query", "signature", "missing"],
)
def test_any_change_breaks_the_signature(change: str) -> None:
    token, params, path, query, signature = TOKEN, dict(PARAMS), "/myapp.php", QUERY, EXPECTED
    if change == "token":
        token = "54321"
    elif change == "param":
        params["Digits"] = "9999"
    elif change == "extra_param":
        params["Body"] = "hello"
    elif change == "path":
        path = "/other.php"
    elif change == "query":
        query = {"foo": ["1"], "bar": ["3"]}
    elif change == "signature":
        signature = EXPECTED.replace("R", "r", 1)
    else:
        signature = ""
    url = request_url(_event("https", "mycompany.com", path, query), None)
    assert not twilio_signature_valid(token, url, _form(params), signature)


def test_configured_public_url_wins_over_the_event() -> None:
    event = _event("https", "internal-alb.local", "/twilio/sms", {})
    assert request_url(event, "https://sms.example.com/") == "https://sms.example.com/twilio/sms"


def test_the_stage_is_part_of_the_url_on_an_execute_api_host() -> None:
    event = {
        "path": "/twilio/sms",
        "headers": {"Host": "abc.execute-api.us-east-1.amazonaws.com"},
        "requestContext": {"path": "/prod/twilio/sms", "stage": "prod"},
    }
    assert request_url(event, None) == (
        "https://abc.execute-api.us-east-1.amazonaws.com/prod/twilio/sms"
    )


def test_app_signature_accepts_the_right_secret_within_tolerance() -> None:
    body = '{"message_id": "m1"}'
    signature = app_signature("s3cret", "1000", body)
    assert app_signature_valid("s3cret", "1000", body, signature, 1100, 300)
    assert not app_signature_valid("s3cret", "1000", body, signature, 1400, 300)  # too old
    assert not app_signature_valid("other", "1000", body, signature, 1100, 300)
    assert not app_signature_valid("s3cret", "1000", body + " ", signature, 1100, 300)
    assert not app_signature_valid("s3cret", None, body, signature, 1100, 300)
    assert not app_signature_valid("s3cret", "soon", body, signature, 1100, 300)


# -- the cheap shape check the edge and the handler run before any secret is read --------------


def test_signatures_twilio_and_maestro_make_are_well_formed() -> None:
    url = "https://example.execute-api.us-east-1.amazonaws.com/v1/twilio/sms"
    sha1 = twilio_signature("a token of some length", url, {"Body": "the boiler clanks"})
    validator = RequestValidator("a token of some length")
    sha256 = validator.compute_signature(
        url, {"Body": "x"}, get_signature_algorithm("algorithm=HMAC_SHA256")
    )
    assert len(sha1) == 28
    assert len(sha256) == 44
    for signature in (sha1, sha256, EXPECTED):
        assert signature_headers_well_formed("twilio", {"x-twilio-signature": signature})
    signed = {
        "X-Maestro-Timestamp": "1767225600",
        "X-Maestro-Signature": app_signature("s3cret", "1767225600", '{"a": 1}'),
    }
    assert signature_headers_well_formed("app", signed)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Twilio-Signature": ""},
        {"X-Twilio-Signature": "anything"},
        {"X-Twilio-Signature": EXPECTED[:-1]},  # one character short
        {"X-Twilio-Signature": EXPECTED + "A"},
        {"X-Twilio-Signature": EXPECTED.replace("=", "A")},
        {"X-Twilio-Signature": "%" * 27 + "="},
        {"X-Twilio-Signature": EXPECTED + "\n"},
    ],
)
def test_a_twilio_signature_header_out_of_shape_is_refused(headers: dict[str, str]) -> None:
    assert not signature_headers_well_formed("twilio", headers)


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Maestro-Signature": "v1=" + "a" * 64},  # no timestamp
        {"X-Maestro-Timestamp": "1767225600", "X-Maestro-Signature": "v1=" + "A" * 64},
        {"X-Maestro-Timestamp": "1767225600", "X-Maestro-Signature": "v2=" + "a" * 64},
        {"X-Maestro-Timestamp": "-5", "X-Maestro-Signature": "v1=" + "a" * 64},
        {"X-Maestro-Timestamp": "1767225600", "X-Maestro-Signature": "v1=" + "a" * 63},
    ],
)
def test_a_maestro_signature_header_out_of_shape_is_refused(headers: dict[str, str]) -> None:
    assert not signature_headers_well_formed("app", headers)


# -- one signature, one reading: the SIDs a Twilio form's signature covers --------------------

ACCOUNT = "AC" + "5e" * 16
MESSAGE = "MM" + "0f" * 16
INBOUND_MMS = [
    ("ToCountry", "US"),
    ("MediaContentType0", "image/jpeg"),
    ("SmsMessageSid", MESSAGE),
    ("NumMedia", "1"),
    ("FromState", "CA"),  # ends in capitals, as a SID's kind does
    ("SmsSid", MESSAGE),
    ("SmsStatus", "received"),
    ("Body", "the ceiling stain again, photo attached"),
    ("To", "+14155550000"),
    ("MessagingServiceSid", "MG" + "77" * 16),
    ("NumSegments", "1"),
    ("MessageSid", MESSAGE),
    ("AccountSid", ACCOUNT),
    ("From", "+14155550100"),
    (
        "MediaUrl0",
        f"https://api.twilio.com/2010-04-01/Accounts/{ACCOUNT}/Messages/{MESSAGE}/Media/"
        "ME" + "9a" * 16,
    ),
    ("ApiVersion", "2010-04-01"),
]


@pytest.mark.parametrize(
    "params",
    [
        INBOUND_MMS,
        list(PARAMS.items()),  # Twilio's own vector: a CallSid that is not a SID's length
        [("CallSid", "CA" + "12" * 16), ("ParentCallSid", ""), ("RecordingSid", "RE" + "3" * 32)],
        [("Body", "my Sid is fine, and so is SM" + "1" * 32), ("MessageSid", MESSAGE)],
    ],
    ids=["an inbound MMS", "Twilio's vector", "a blank Sid", "a SID-like text"],
)
def test_forms_as_twilio_sends_them_read_as_signed(params: list[tuple[str, str]]) -> None:
    assert sids_read_as_signed(_form(params))


def _recut(params: list[tuple[str, str]], name: str, into: str) -> list[tuple[str, str]]:
    """``params`` with parameter ``name`` folded into the name of the one sorted after it
    (``into``): name + value + next name, then the next value. The signed text is the same."""
    value = dict(params)[name]
    kept = [(k, v) for k, v in params if k not in (name, into)]
    recut = [*kept, (name + value + into, dict(params)[into])]
    url = "https://example.com/twilio/sms"
    assert twilio_signature(TOKEN, url, recut) == twilio_signature(TOKEN, url, params)
    return recut


@pytest.mark.parametrize(
    "params",
    [
        _recut(INBOUND_MMS, "MessageSid", "MessagingServiceSid"),
        _recut(INBOUND_MMS, "SmsSid", "SmsStatus"),
        _recut(INBOUND_MMS, "AccountSid", "ApiVersion"),
        [("MessageSid", MESSAGE + "NumMedia0")],  # the value takes the next parameter in
        [("Body", f"hiMessageSid{MESSAGE}"), ("MessageSid", "SM" + "2" * 32)],
    ],
    ids=["MessageSid in a name", "SmsSid in a name", "AccountSid in a name", "in a value", "text"],
)
def test_a_sid_moved_out_of_its_parameter_does_not_read_as_signed(
    params: list[tuple[str, str]],
) -> None:
    assert not sids_read_as_signed(_form(params))
