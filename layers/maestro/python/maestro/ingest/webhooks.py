"""The inbound webhooks, on Powertools' REST resolver (API Gateway REST events).

Routes:
- ``POST /twilio/sms``         Twilio inbound SMS/MMS (X-Twilio-Signature) → empty TwiML
- ``POST /twilio/status``      Twilio outbound status callback (X-Twilio-Signature)
- ``POST /twilio/transcript``  Twilio transcription callback: a whole call is one package
- ``POST /app/messages``       in-app message, JSON, maestro HMAC (X-Maestro-Signature)
- ``POST /assistant/kickoff``  the assistant has enough: flush now (maestro HMAC)

A bad or missing signature is a 403 and nothing is stored. No model is called on this path and
the anthropic SDK is never imported by it: the webhook answers fast.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    ForbiddenError,
    ServiceError,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from maestro.adapters.twilio_status import message_statuses
from maestro.adapters.webhook_auth import (
    FormParams,
    app_signature_valid,
    request_url,
    twilio_signature_valid,
)
from maestro.domain.common import E164
from maestro.domain.models import Channel, FlushTrigger
from maestro.ingest.service import Inbound, Ingestor, conversation_id_for
from maestro.observability import logger
from maestro.ports import Clock, DeliveryStatus, OutboundStatusStore

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
MAX_MEDIA = 10  # Twilio sends at most 10 MediaUrlN per message
MAX_MESSAGE_BYTES = 256 * 1024
"""A message body above this is refused (413) before anything is stored: it is stored twice (the
message and its buffered copy) and a DynamoDB item holds at most 400 KB."""


@dataclass(frozen=True)
class WebhookDeps:
    ingestor: Ingestor
    statuses: OutboundStatusStore
    twilio_auth_token: Callable[[], str]
    app_signing_secret: Callable[[], str]
    clock: Clock
    public_base_url: str | None = None
    app_signature_tolerance_seconds: int = 300


class AppMessage(BaseModel):
    """An in-app message, forwarded and signed by the app's backend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: str = Field(min_length=1, max_length=128)
    from_phone: E164
    body: str = Field(max_length=4000)
    media_urls: tuple[str, ...] = Field(default=(), max_length=MAX_MEDIA)


class KickoffRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    from_phone: E164
    trigger: FlushTrigger = FlushTrigger.KICKOFF


def build_resolver(deps: WebhookDeps) -> APIGatewayRestResolver:
    app = APIGatewayRestResolver()

    def twilio_form() -> FormParams:
        """The verified form parameters of a Twilio request, or 403."""
        event = app.current_event
        body = event.decoded_body or ""
        params = FormParams(parse_qs(body, keep_blank_values=True))
        url = request_url(event.raw_event, deps.public_base_url)
        valid = twilio_signature_valid(
            deps.twilio_auth_token(),
            url,
            params,
            event.headers.get("X-Twilio-Signature") or event.headers.get("x-twilio-signature"),
            event.headers.get("X-Twilio-Webhooks-Signature-Settings"),
        )
        if not valid:
            logger.warning("refused a request with a bad Twilio signature", extra={"url": url})
            raise ForbiddenError("invalid Twilio signature")
        return params

    def app_json() -> dict[str, Any]:
        event = app.current_event
        body = event.decoded_body or ""
        headers = event.headers
        valid = app_signature_valid(
            deps.app_signing_secret(),
            headers.get("X-Maestro-Timestamp") or headers.get("x-maestro-timestamp"),
            body,
            headers.get("X-Maestro-Signature") or headers.get("x-maestro-signature"),
            deps.clock.now().timestamp(),
            deps.app_signature_tolerance_seconds,
        )
        if not valid:
            logger.warning("refused a request with a bad maestro signature")
            raise ForbiddenError("invalid maestro signature")
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise BadRequestError("body is not JSON") from exc
        if not isinstance(data, dict):
            raise BadRequestError("body must be a JSON object")
        return data

    @app.post("/twilio/sms")
    def twilio_sms() -> Response[str]:
        form = twilio_form()
        sid = form.first("MessageSid") or form.first("SmsMessageSid")
        sender = form.first("From")
        if not sid or not sender:
            raise BadRequestError("MessageSid and From are required")
        try:
            media_count = min(int(form.first("NumMedia", "0") or 0), MAX_MEDIA)
        except ValueError as exc:
            raise BadRequestError("NumMedia must be a number") from exc
        inbound = Inbound(
            message_id=sid,
            channel=Channel.SMS,
            from_phone=sender,
            to_phone=form.first("To") or None,
            body=form.first("Body"),
            media_urls=tuple(
                url for n in range(media_count) if (url := form.first(f"MediaUrl{n}"))
            ),
            received_at=deps.clock.now(),
        )
        _receive(deps, inbound)
        return Response(status_code=200, content_type="text/xml", body=EMPTY_TWIML)

    @app.post("/twilio/status")
    def twilio_status() -> dict[str, Any]:
        form = twilio_form()
        sid = form.first("MessageSid")
        status = form.first("MessageStatus") or form.first("SmsStatus")
        if not sid or not status:
            raise BadRequestError("MessageSid and MessageStatus are required")
        try:
            typed: DeliveryStatus = _delivery_status(status)
        except ValueError as exc:
            raise BadRequestError(str(exc)) from exc
        changed = deps.statuses.record_status(
            sid, typed, deps.clock.now(), form.first("ErrorCode") or None
        )
        return {"message_sid": sid, "status": status, "applied": changed}

    @app.post("/twilio/transcript")
    def twilio_transcript() -> dict[str, Any]:
        form = twilio_form()
        status = form.first("TranscriptionStatus", "completed")
        sid = form.first("TranscriptionSid") or form.first("CallSid")
        sender = form.first("From")
        if not sid or not sender:
            raise BadRequestError("TranscriptionSid (or CallSid) and From are required")
        if status != "completed":
            return {"stored": False, "reason": f"transcription {status}"}
        inbound = Inbound(
            message_id=sid,
            channel=Channel.VOICE,
            from_phone=sender,
            to_phone=form.first("To") or None,
            body=form.first("TranscriptionText"),
            media_urls=(),
            received_at=deps.clock.now(),
            trigger=FlushTrigger.CONVERSATION_ENDED,
        )
        result = _receive(deps, inbound)
        return {"stored": not result, "duplicate": result}

    @app.post("/app/messages")
    def app_message() -> dict[str, Any]:
        try:
            message = AppMessage.model_validate(app_json())
        except ValidationError as exc:
            raise BadRequestError(exc.errors()[0]["msg"]) from exc
        inbound = Inbound(
            message_id=f"app:{message.message_id}",
            channel=Channel.IN_APP,
            from_phone=message.from_phone,
            to_phone=None,
            body=message.body,
            media_urls=message.media_urls,
            received_at=deps.clock.now(),
        )
        duplicate = _receive(deps, inbound)
        return {"accepted": True, "duplicate": duplicate}

    @app.post("/assistant/kickoff")
    def kickoff() -> dict[str, Any]:
        try:
            request = KickoffRequest.model_validate(app_json())
        except ValidationError as exc:
            raise BadRequestError(exc.errors()[0]["msg"]) from exc
        if request.trigger not in {FlushTrigger.KICKOFF, FlushTrigger.CONVERSATION_ENDED}:
            raise BadRequestError("the assistant may only kick off or end a conversation")
        conversation = conversation_id_for(request.from_phone)
        flushed = deps.ingestor.request_flush(conversation, request.trigger, deps.clock.now())
        return {"conversation_id": conversation, "flush_requested": flushed}

    return app


def _receive(deps: WebhookDeps, inbound: Inbound) -> bool:
    """Buffer one message; True when it was a redelivery (nothing new stored)."""
    size = len(inbound.body.encode()) + sum(len(u.encode()) for u in inbound.media_urls)
    if size > MAX_MESSAGE_BYTES:
        # Refused with a clear answer and nothing stored: the sender can split it.
        raise ServiceError(413, f"message too large ({size} bytes, at most {MAX_MESSAGE_BYTES})")
    result = deps.ingestor.receive(inbound)
    logger.info(
        "inbound message",
        extra={
            "message_id": inbound.message_id,
            "conversation_id": result.message.conversation_id,
            "seq": result.message.seq,
            "duplicate": result.duplicate,
            "channel": inbound.channel.value,
        },
    )
    return result.duplicate


def _delivery_status(value: str) -> DeliveryStatus:
    """Any status the twilio SDK defines; anything else is a 400."""
    if value not in message_statuses():
        raise ValueError(f"unknown MessageStatus {value!r}")
    return value
