"""API Gateway events as the inbound Lambda receives them, signed as Twilio or the app signs.

The one place these are built: the embedded stack's loopback server, the eval executor, the
demo, the benchmarks and the tests all use it, so a change to the event shape or the signing
is made once. Signatures use the production helpers of :mod:`maestro.adapters.webhook_auth`
(checked against twilio's ``RequestValidator`` in the tests).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from maestro.adapters.webhook_auth import app_signature, twilio_signature
from maestro_dev.local.twilio_loopback import LOCAL_ACCOUNT_SID

LOCAL_HOST = "127.0.0.1:8787"
LOCAL_BASE_URL = f"http://{LOCAL_HOST}"
MAESTRO_LINE = "+14155550000"


def twilio_sid(prefix: str, label: str) -> str:
    """A SID in Twilio's format (two letters and 32 hex digits: ``SM…`` a message, ``CA…`` a
    call, ``TR…`` a transcription), the same for the same label: tests name their messages
    ("maria-1") and get a SID the webhook accepts."""
    return prefix + hashlib.md5(label.encode()).hexdigest()


def rest_event(
    path: str,
    body: str,
    headers: Mapping[str, str],
    *,
    host: str = LOCAL_HOST,
    scheme: str = "http",
    stage: str | None = None,
    query: Mapping[str, list[str]] | None = None,
    content_type: str | None = None,
) -> dict[str, Any]:
    """An API Gateway REST (v1) proxy event. ``stage`` set: as a deployed API's stage sees it."""
    all_headers = {"Host": host, "X-Forwarded-Proto": scheme}
    if content_type is not None:
        all_headers["Content-Type"] = content_type
    all_headers.update(headers)
    return {
        "resource": path,
        "path": path,
        "httpMethod": "POST",
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in (query or {}).items()} or None,
        "multiValueQueryStringParameters": dict(query) if query else None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": "POST",
            "path": f"/{stage}{path}" if stage else path,
            "stage": stage or "local",
            "domainName": host,
            "requestId": "local",
            "accountId": "123456789012",
            "apiId": "local",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": body,
        "isBase64Encoded": False,
    }


def form_body(params: Mapping[str, str] | Sequence[tuple[str, str]]) -> str:
    return urlencode(list(params.items()) if isinstance(params, Mapping) else list(params))


def twilio_event(
    path: str,
    params: Mapping[str, str] | Sequence[tuple[str, str]],
    *,
    token: str,
    base_url: str = LOCAL_BASE_URL,
    stage: str | None = None,
    signature: str | None = None,
) -> dict[str, Any]:
    """A Twilio webhook signed for ``base_url`` + (stage) + path, unless ``signature`` overrides
    it (``""``: no signature header at all). ``params`` as pairs may repeat a name."""
    scheme, host = base_url.split("://", 1)
    url = f"{base_url}/{stage}{path}" if stage else f"{base_url}{path}"
    signed = signature if signature is not None else twilio_signature(token, url, params)
    headers = {"X-Twilio-Signature": signed} if signed else {}
    return rest_event(
        path,
        form_body(params),
        headers,
        host=host,
        scheme=scheme,
        stage=stage,
        content_type="application/x-www-form-urlencoded",
    )


def sms_params(
    sid: str, sender: str, body: str, *, to: str = MAESTRO_LINE, account: str = LOCAL_ACCOUNT_SID
) -> dict[str, str]:
    """An inbound SMS's form as Twilio posts it: the message's SID under its three names, and
    the account (the embedded stack's, unless another is named)."""
    return {
        "MessageSid": sid,
        "SmsMessageSid": sid,
        "SmsSid": sid,
        "AccountSid": account,
        "From": sender,
        "To": to,
        "Body": body,
        "NumMedia": "0",
    }


def signed_sms_event(
    token: str,
    sid: str,
    sender: str,
    body: str,
    *,
    to: str = MAESTRO_LINE,
    base_url: str = LOCAL_BASE_URL,
    account: str = LOCAL_ACCOUNT_SID,
) -> dict[str, Any]:
    """An inbound SMS (``sid``: a message SID, :func:`twilio_sid`) of ``account``."""
    params = sms_params(sid, sender, body, to=to, account=account)
    return twilio_event("/twilio/sms", params, token=token, base_url=base_url)


def signed_transcript_event(
    token: str,
    sid: str,
    caller: str,
    text: str,
    *,
    to: str = MAESTRO_LINE,
    base_url: str = LOCAL_BASE_URL,
    account: str = LOCAL_ACCOUNT_SID,
    verstat: str | None = None,
) -> dict[str, Any]:
    """A call's completed transcription (it ends the conversation: the package flushes).
    ``sid``: the transcription's (``TR…``); its call's is the same digits after ``CA``.
    ``verstat``: the call's STIR/SHAKEN verdict as Twilio sends it (``StirVerstat``, e.g.
    ``TN-Validation-Passed-A``); None sends none, as for a call nothing verified."""
    params = {
        "TranscriptionSid": sid,
        "CallSid": f"CA{sid[2:]}",
        "AccountSid": account,
        "From": caller,
        "To": to,
        "TranscriptionStatus": "completed",
        "TranscriptionText": text,
    }
    if verstat is not None:
        params["StirVerstat"] = verstat
    return twilio_event("/twilio/transcript", params, token=token, base_url=base_url)


def signed_app_event(
    secret: str,
    path: str,
    body: str | Mapping[str, Any],
    at: datetime | None = None,
    *,
    host: str = LOCAL_HOST,
    scheme: str = "http",
    stage: str | None = None,
) -> dict[str, Any]:
    """A request from the app's backend (HMAC over timestamp and body), signed now unless
    ``at`` says when: its 5-minute window is checked on the real clock, never a virtual one."""
    text = body if isinstance(body, str) else json.dumps(body)
    timestamp = str(int((at or datetime.now(UTC)).timestamp()))
    return rest_event(
        path,
        text,
        {
            "X-Maestro-Timestamp": timestamp,
            "X-Maestro-Signature": app_signature(secret, timestamp, text),
        },
        host=host,
        scheme=scheme,
        stage=stage,
        content_type="application/json",
    )
