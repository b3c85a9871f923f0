"""Twilio's fallback path: an SMS webhook the primary route could not take is kept by the edge.

When the primary SMS webhook fails (its function raised, DynamoDB was down, the stage throttle
answered 429, it timed out), Twilio requests the number's SMS fallback URL with the same signed
parameters plus ``ErrorCode`` and ``ErrorUrl``. That URL is a second API whose only integration
is SQS ``SendMessage``: no Lambda, no DynamoDB, no secret, nothing the primary route shares. It
keeps the raw request on the fallback queue (the body as sent; the signature headers and the
URL Twilio called as message attributes) and answers empty TwiML, so Twilio's 2xx still means
"stored durably".

This module drains that queue: each kept request goes to the same inbound resolver the primary
route runs, in the event API Gateway would have built, so it is authenticated against the URL
Twilio called, parsed, deduplicated by its MessageSid and buffered exactly as the primary would
have done it, with the time the edge received it. A refusal (a forged signature, a malformed
form: a 4xx) is final: it is logged, counted and dropped. Anything else (a 5xx, an exception: the
store is still failing) leaves the record on the queue, so SQS tries it again and, after its
receive count, moves it to the dead-letter queue, which is alarmed.

The attribute names are shared with the edges that write them: the CDK's request template
(``infra``) and the embedded stack's fallback route.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import AwareDatetime, Field

from maestro.domain.common import Frozen
from maestro.observability import (
    FALLBACK_DRAINED_METRIC,
    FALLBACK_REFUSED_METRIC,
    count,
    logger,
)

__all__ = [
    "FALLBACK_ATTRIBUTES",
    "FALLBACK_ROUTE",
    "FallbackDrain",
    "FallbackRequest",
    "FallbackRetryError",
    "ReceivedClock",
]

FALLBACK_ROUTE = "/twilio/sms"
"""The one route with a fallback: Twilio has a fallback URL for incoming SMS (status and
transcription callbacks have none)."""

FALLBACK_ATTRIBUTES: dict[str, str] = {
    "signature": "x-twilio-signature",
    "signature_settings": "x-twilio-webhooks-signature-settings",
    "content_type": "content-type",
    "proto": "proto",
    "host": "host",
    "path": "path",
    "request_id": "request-id",
    "received_ms": "received-ms",
}
"""Field → SQS message attribute name. ``path`` is the path the client requested (with the
stage on an execute-api host), ``host`` the host it called: with ``proto`` they rebuild the URL
Twilio signed. ``received_ms`` is when the edge received it (epoch milliseconds)."""

REQUIRED = ("signature", "content_type", "proto", "host", "path", "received_ms")


class FallbackRequest(Frozen):
    """A webhook the fallback edge kept, as it was received."""

    body: str = Field(min_length=1)
    signature: str = Field(min_length=1)
    signature_settings: str | None = None
    content_type: str = Field(min_length=1)
    proto: str = Field(pattern=r"^https?$")
    host: str = Field(min_length=1, max_length=512)
    path: str = Field(pattern=r"^/\S*$", max_length=2048)
    request_id: str = ""
    received_at: AwareDatetime

    @classmethod
    def from_sqs(cls, body: str, attributes: Mapping[str, Any]) -> FallbackRequest:
        """From an SQS record's body and ``messageAttributes`` (Lambda's shape: each value a
        mapping with ``stringValue``)."""
        values: dict[str, str] = {}
        for field, name in FALLBACK_ATTRIBUTES.items():
            attribute = attributes.get(name)
            if isinstance(attribute, Mapping):
                value = attribute.get("stringValue") or attribute.get("StringValue")
                if isinstance(value, str) and value:
                    values[field] = value
        missing = [f for f in REQUIRED if f not in values]
        if missing:
            raise ValueError(f"the kept request has no {', '.join(missing)}")
        received_ms = int(values.pop("received_ms"))
        return cls(
            body=body,
            received_at=datetime.fromtimestamp(received_ms / 1000, UTC),
            **values,
        )

    def attributes(self) -> dict[str, dict[str, str]]:
        """As SQS ``MessageAttributes`` (what an edge sends)."""
        values: dict[str, str | None] = {
            **self.model_dump(include=set(FALLBACK_ATTRIBUTES) - {"received_ms"}),
            "received_ms": str(int(self.received_at.timestamp() * 1000)),
        }
        return {
            FALLBACK_ATTRIBUTES[field]: {"DataType": "String", "StringValue": value}
            for field, value in values.items()
            if value
        }

    def rest_event(self) -> dict[str, Any]:
        """The API Gateway REST event the primary route's function would have received."""
        headers = {
            "Host": self.host,
            "X-Forwarded-Proto": self.proto,
            "Content-Type": self.content_type,
            "X-Twilio-Signature": self.signature,
        }
        if self.signature_settings:
            headers["X-Twilio-Webhooks-Signature-Settings"] = self.signature_settings
        return {
            "resource": FALLBACK_ROUTE,
            "path": FALLBACK_ROUTE,
            "httpMethod": "POST",
            "headers": headers,
            "multiValueHeaders": {k: [v] for k, v in headers.items()},
            "queryStringParameters": None,
            "multiValueQueryStringParameters": None,
            "pathParameters": None,
            "stageVariables": None,
            "requestContext": {
                "resourcePath": FALLBACK_ROUTE,
                "httpMethod": "POST",
                "path": self.path,  # as Twilio requested it: the URL it signed
                "domainName": self.host,
                "requestId": self.request_id or "fallback",
                "stage": "fallback",
            },
            "body": self.body,
            "isBase64Encoded": False,
        }


class FallbackRetryError(RuntimeError):
    """The inbound route could not store the kept request yet (a 5xx): SQS tries it again."""


class ReceivedClock:
    """The drain's clock for the inbound resolver: a kept message was received when the edge
    took it, not when the queue is drained."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def now(self) -> datetime:
        return self.at


Resolve = Callable[[dict[str, Any]], dict[str, Any]]


class FallbackDrain:
    """Hands each kept request to the inbound resolver (``resolve``) at its received time."""

    def __init__(self, resolve: Resolve, received: ReceivedClock) -> None:
        self._resolve = resolve
        self._received = received

    def drain(self, request: FallbackRequest) -> bool:
        """True: stored (or already stored: a duplicate); False: refused for good (a 4xx).
        Raises :class:`FallbackRetryError` (or what the route raised) to be tried again."""
        self._received.at = request.received_at
        response = self._resolve(request.rest_event())
        status = int(response.get("statusCode", 500))
        if 200 <= status < 300:
            count(FALLBACK_DRAINED_METRIC)
            return True
        if 400 <= status < 500 and status not in (408, 429):
            count(FALLBACK_REFUSED_METRIC)
            logger.warning(
                "a request kept by the fallback edge was refused",
                extra={"status": status, "request_id": request.request_id},
            )
            return False
        raise FallbackRetryError(f"the inbound route answered {status}: try again")
