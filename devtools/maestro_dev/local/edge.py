"""The cloud's edge in front of the embedded stack's webhooks: what a request meets before the
inbound function, and what Twilio's own fallback meets when that fails.

- **WAF** (both APIs): a request whose signature headers are out of shape is refused with a 403
  before anything else runs (the web ACL's rule on the same patterns).
- **The webhook API**: each route → the inbound function. Its stage throttle answers 429 when its
  token bucket (on the virtual clock) is empty; a function that raised is answered 502, as API
  Gateway answers a failed Lambda.
- **The fallback API** (``/fallback/twilio/sms`` here; in the cloud its own API and host): the
  request validator (a form body, the signature header), then SQS ``SendMessage`` of the raw
  request, with the attributes the drain reads (:mod:`maestro.ingest.fallback`), to the fallback
  queue; 200 with empty TwiML, or 500 when SQS failed. No Lambda, no DynamoDB, no secret, and a
  throttle of its own.

The loopback Twilio calls :meth:`Edge.post` with the URL a number's webhook points at, so a
phone's text meets exactly this: the primary, and the fallback when the primary fails.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

from maestro.adapters.webhook_auth import signature_headers_well_formed
from maestro.ingest.fallback import FALLBACK_ROUTE, FallbackRequest
from maestro.ingest.webhooks import EMPTY_TWIML, FORM
from maestro.observability import logger
from maestro_dev.local.clock import VirtualClock
from maestro_dev.local.events import rest_event

__all__ = ["FALLBACK_PREFIX", "Edge", "StageThrottle"]

FALLBACK_PREFIX = "/fallback"
"""Where the fallback API's routes are on the embedded stack's one host."""
TWILIO_ROUTES = ("/twilio/sms", "/twilio/status", "/twilio/transcript")
APP_ROUTES = ("/app/messages", "/assistant/kickoff")
_SIGNED: tuple[tuple[Literal["twilio", "app"], tuple[str, ...]], ...] = (
    ("twilio", TWILIO_ROUTES),
    ("app", APP_ROUTES),
)

Response = dict[str, Any]


@dataclass
class StageThrottle:
    """API Gateway's stage throttle: a token bucket of ``burst`` tokens refilled at ``rate`` a
    second, on the virtual clock."""

    rate: float
    burst: int
    clock: VirtualClock

    def __post_init__(self) -> None:
        self._tokens = float(self.burst)
        self._at = self.clock.now()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self.clock.now()
            elapsed = (now - self._at).total_seconds()
            self._at = now
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.rate)
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True


def _answer(status: int, body: str, content_type: str = "application/json") -> Response:
    return {
        "statusCode": status,
        "body": body,
        "multiValueHeaders": {"Content-Type": [content_type]},
        "isBase64Encoded": False,
    }


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name.lower():
            return str(value)
    return None


class Edge:
    """The two APIs, in front of ``inbound`` (the webhook function) and the fallback queue."""

    def __init__(
        self,
        *,
        inbound: Callable[[dict[str, Any]], Response],
        send_fallback: Callable[[FallbackRequest], None],
        clock: VirtualClock,
        throttle: tuple[float, int] | None = None,
    ) -> None:
        self._inbound = inbound
        self._send_fallback = send_fallback
        self._clock = clock
        self.webhook_throttle = StageThrottle(*throttle, clock) if throttle else None
        self.fallback_throttle = StageThrottle(*throttle, clock) if throttle else None
        self.answers: list[tuple[str, int]] = []  # (path, status) of every request, in order
        self.refused: Counter[str] = Counter()  # by reason, before any function ran

    def route(self, event: dict[str, Any]) -> Response:
        """A request as it reaches the edge (its path decides the API)."""
        path = str(event.get("path") or "")
        if path.startswith(FALLBACK_PREFIX + "/"):
            response = self._fallback(event, path.removeprefix(FALLBACK_PREFIX))
        else:
            response = self._webhook(event, path)
        self.answers.append((path, int(response["statusCode"])))
        return response

    def post(self, url: str, form: dict[str, str], signature: str) -> int:
        """Twilio's request to ``url`` (signed): the status the edge answered."""
        parts = urlsplit(url)
        event = rest_event(
            parts.path,
            urlencode(list(form.items())),
            {"X-Twilio-Signature": signature},
            host=parts.netloc,
            scheme=parts.scheme,
            content_type=FORM,
        )
        return int(self.route(event)["statusCode"])

    # -- the two APIs ---------------------------------------------------------------------------

    def _waf(self, event: dict[str, Any], route: str) -> Response | None:
        headers = event.get("headers")
        for kind, routes in _SIGNED:
            if route in routes and not signature_headers_well_formed(kind, headers):
                self.refused[f"{kind} signature headers"] += 1
                return _answer(403, '{"message": "Forbidden"}')
        return None

    def _webhook(self, event: dict[str, Any], path: str) -> Response:
        refused = self._waf(event, path)
        if refused is not None:
            return refused
        if self.webhook_throttle is not None and not self.webhook_throttle.take():
            self.refused["throttled"] += 1
            return _answer(429, '{"message": "Too Many Requests"}')
        try:
            return self._inbound(event)
        except Exception:  # the function failed: API Gateway answers 502
            logger.exception("a webhook failed: the inbound function raised", extra={"path": path})
            return _answer(502, '{"message": "Internal server error"}')

    def _fallback(self, event: dict[str, Any], route: str) -> Response:
        if route != FALLBACK_ROUTE:
            return _answer(403, '{"message": "Missing Authentication Token"}')  # API GW's 404
        refused = self._waf(event, route)
        if refused is not None:
            return refused
        if self.fallback_throttle is not None and not self.fallback_throttle.take():
            self.refused["fallback throttled"] += 1
            return _answer(429, '{"message": "Too Many Requests"}')
        content_type = _header(event, "Content-Type") or ""
        if content_type.split(";")[0].strip().lower() != FORM:
            return _answer(415, '{"message": "Unsupported Media Type"}')  # no request template
        context = event.get("requestContext") or {}
        try:
            request = FallbackRequest(
                body=str(event.get("body") or ""),
                signature=_header(event, "X-Twilio-Signature") or "",
                signature_settings=_header(event, "X-Twilio-Webhooks-Signature-Settings"),
                content_type=content_type,
                proto=_header(event, "X-Forwarded-Proto") or "https",
                host=_header(event, "Host") or str(context.get("domainName") or ""),
                path=str(context.get("path") or event.get("path")),
                request_id=uuid.uuid4().hex,
                received_at=self._clock.now(),
            )
            self._send_fallback(request)
        except Exception:  # SQS refused it (an empty body: invalid) or failed
            logger.exception("the fallback API could not keep a request")
            return _answer(500, '{"message": "Internal server error"}')
        return _answer(200, EMPTY_TWIML, "text/xml")
