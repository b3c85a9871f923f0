"""Webhook authentication: Twilio's official vectors through the handler's own verification.

The vectors (token, URL, params, signatures) are the ones twilio-python's
tests/unit/test_request_validator.py uses. Each goes through ``request_url`` (rebuilding the
URL from an API Gateway event, as the handler does) and ``twilio_signature_valid``.
"""

from __future__ import annotations

from typing import Any

import pytest

from maestro.adapters.webhook_auth import (
    FormParams,
    app_signature,
    app_signature_valid,
    request_url,
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
