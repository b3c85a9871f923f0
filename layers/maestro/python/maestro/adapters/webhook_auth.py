"""Request authentication: Twilio's webhook signature and maestro's own HMAC for in-app calls.

Twilio signs the exact public URL it called plus the POST parameters. Behind API Gateway the
Lambda sees neither directly, so the URL is either configured (``public_base_url``) or rebuilt
from the event: scheme (X-Forwarded-Proto), host (Host), the stage as the caller saw it
(requestContext.path), and the query string in the order received.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal
from urllib.parse import quote, urlencode

from twilio.request_validator import RequestValidator, get_signature_algorithm

TWILIO_SIGNATURE_PATTERN = r"^([A-Za-z0-9+/]{27}|[A-Za-z0-9+/]{43})=$"
"""What an ``X-Twilio-Signature`` looks like: base64 of an HMAC-SHA1 (28 characters) or, with
Twilio's SHA-256 setting, of an HMAC-SHA256 (44). The edge (a WAF rule, `maestro serve`) and the
handler refuse anything else before any secret is read."""
APP_SIGNATURE_PATTERN = r"^v1=[0-9a-f]{64}$"
"""``X-Maestro-Signature``: ``v1=`` and a hex HMAC-SHA256 (:func:`app_signature`)."""
APP_TIMESTAMP_PATTERN = r"^[0-9]{1,12}$"
"""``X-Maestro-Timestamp``: Unix seconds."""
SIGNATURE_HEADER_PATTERNS: dict[str, dict[str, str]] = {
    "twilio": {"X-Twilio-Signature": TWILIO_SIGNATURE_PATTERN},
    "app": {
        "X-Maestro-Signature": APP_SIGNATURE_PATTERN,
        "X-Maestro-Timestamp": APP_TIMESTAMP_PATTERN,
    },
}
"""Per kind of caller, the headers a request must carry and the shape each must have."""
TWILIO_SID_PATTERNS: dict[str, str] = {
    "account": r"^AC[0-9a-fA-F]{32}$",
    "message": r"^(SM|MM)[0-9a-fA-F]{32}$",  # an SMS or an MMS
    "call": r"^CA[0-9a-fA-F]{32}$",
    "transcription": r"^TR[0-9a-fA-F]{32}$",
}
"""What Twilio's ids look like: two letters naming the kind of resource, then 32 hex digits."""
_SID_AFTER_ITS_NAME = re.compile(r"Sid([A-Z]{2}[0-9a-fA-F]{32})")
_ANY_SID = re.compile(r"[A-Z]{2}[0-9a-fA-F]{32}")
_COMPILED = {
    auth: {name: re.compile(pattern) for name, pattern in headers.items()}
    for auth, headers in SIGNATURE_HEADER_PATTERNS.items()
}


def signature_headers_well_formed(
    auth: Literal["twilio", "app"], headers: Mapping[str, str] | None
) -> bool:
    """Whether a request carries its signature headers in their shapes: a cheap check that
    refuses junk before a secret is fetched or a signature computed (not an authentication)."""
    for name, pattern in _COMPILED[auth].items():
        value = _header(headers, name)
        if value is None or not pattern.fullmatch(value):
            return False
    return True


class FormParams:
    """Form parameters with repeated keys, in the shape twilio's validator reads (getlist)."""

    def __init__(self, values: Mapping[str, Sequence[str]]) -> None:
        self._values = {k: list(v) for k, v in values.items()}

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._values)

    def getlist(self, name: str) -> list[str]:
        return self._values.get(name, [])

    def first(self, name: str, default: str = "") -> str:
        values = self._values.get(name)
        return values[0] if values else default

    def keys(self) -> list[str]:
        return list(self._values)


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def request_url(event: Mapping[str, object], public_base_url: str | None) -> str:
    """The URL the caller used, as Twilio signed it."""
    headers = event.get("headers") or {}
    assert isinstance(headers, Mapping)
    context = event.get("requestContext") or {}
    assert isinstance(context, Mapping)
    path = str(event.get("path") or "/")
    if public_base_url:
        url = public_base_url.rstrip("/") + path
    else:
        scheme = _header(headers, "X-Forwarded-Proto") or "https"
        host = _header(headers, "Host") or str(context.get("domainName") or "localhost")
        # requestContext.path is the path the client requested: with the stage on an
        # execute-api host, with the base path on a custom domain.
        url = f"{scheme}://{host}{context.get('path') or path}"
    query = event.get("multiValueQueryStringParameters") or {}
    assert isinstance(query, Mapping)
    if query:
        pairs = [(k, v) for k, values in query.items() for v in values]
        url += "?" + urlencode(pairs, quote_via=quote, safe="")
    return url


def twilio_signature_valid(
    token: str,
    url: str,
    params: FormParams,
    signature: str | None,
    signature_settings: str | None = None,
) -> bool:
    """Twilio's own validator (HMAC-SHA1, or SHA-256 when the settings header says so)."""
    if not signature:
        return False
    validator = RequestValidator(token)
    try:
        return bool(
            validator.validate(url, params, signature, get_signature_algorithm(signature_settings))
        )
    except ValueError:
        return False  # a URL it cannot parse (a Host of "a:b" has no port number): not Twilio's


def sids_read_as_signed(params: FormParams) -> bool:
    """Whether every SID that Twilio's signature covers is read where Twilio put it: as the
    whole value of a parameter whose name ends in ``Sid``.

    Twilio signs the URL and then each parameter's name and value run together, sorted by name,
    so one signature fits every way of cutting that text into names and values
    (``MessageSid=SM…&NumMedia=0`` signs as ``MessageSid=SM…NumMedia0`` does). A cut that moves
    a SID into another parameter's name or value, to drop it or to put another SID (smuggled in
    a message's text) in its place, leaves a ``…Sid`` followed by a SID in the signed text that
    no parameter holds."""
    names = sorted(set(params))
    # As twilio's RequestValidator joins them: names sorted, each name's distinct values sorted.
    signed = "".join(name + value for name in names for value in sorted(set(params.getlist(name))))
    held = Counter(
        value
        for name in names
        if name.endswith("Sid")
        for value in set(params.getlist(name))
        if _ANY_SID.fullmatch(value)
    )
    return Counter(_SID_AFTER_ITS_NAME.findall(signed)) == held


def app_signature(secret: str, timestamp: str, body: str) -> str:
    """maestro's HMAC for in-app and assistant calls: ``v1=hex(HMAC-SHA256(ts + "." + body))``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.{body}".encode(), hashlib.sha256)
    return "v1=" + mac.hexdigest()


def app_signature_valid(
    secret: str,
    timestamp: str | None,
    body: str,
    signature: str | None,
    now_epoch: float,
    tolerance_seconds: int,
) -> bool:
    if not timestamp or not signature:
        return False
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(now_epoch - sent) > tolerance_seconds:
        return False  # a replay of an old request, or a clock far off
    # As bytes: compare_digest refuses str with non-ASCII characters (a hostile header).
    expected = app_signature(secret, timestamp, body).encode()
    return hmac.compare_digest(expected, signature.encode("utf-8", "surrogateescape"))


def twilio_signature(
    token: str, url: str, params: Mapping[str, str] | Sequence[tuple[str, str]]
) -> str:
    """Sign a request as Twilio would (for the local stack's `maestro send` and tests); ``params``
    as pairs may name a parameter more than once."""
    if isinstance(params, Mapping):
        return str(RequestValidator(token).compute_signature(url, dict(params)))
    grouped: dict[str, list[str]] = {}
    for name, value in params:
        grouped.setdefault(name, []).append(value)
    return str(RequestValidator(token).compute_signature(url, FormParams(grouped)))
