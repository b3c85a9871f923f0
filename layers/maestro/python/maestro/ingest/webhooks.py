"""The inbound webhooks, on Powertools' REST resolver (API Gateway REST events).

Routes:
- ``POST /twilio/sms``         Twilio inbound SMS/MMS (X-Twilio-Signature) → empty TwiML
- ``POST /twilio/status``      Twilio outbound status callback (X-Twilio-Signature)
- ``POST /twilio/transcript``  Twilio transcription callback: a whole call is one package
- ``POST /app/messages``       in-app message, JSON, maestro HMAC (X-Maestro-Signature)
- ``POST /assistant/kickoff``  the assistant has enough: flush now (maestro HMAC)

Every route is declared with what authenticates it and the pydantic model its body must be, and
three global middlewares run for every request, in order, so no route can skip them (a route
without a declaration answers 404):

1. **read**: the body's size (413), content type (415) and encoding (base64, UTF-8: 400);
2. **authenticate**: signature headers out of shape are refused before any secret is read;
   then Twilio's signature or maestro's HMAC, whose 5-minute window is on the real clock (403);
   nothing is stored for a request that fails. With no Twilio account configured, the Twilio
   routes answer 503: they cannot tell this deployment's account from another's;
3. **parse**: the body into the route's model, JSON through ``model_validate_json`` (400; a
   message text over its length is 413). A Twilio form is read once, canonically: its SIDs in
   Twilio's formats, every name Twilio gives one SID naming the same one, every SID the
   signature covers held by its own parameter (a form cut another way than Twilio sent it is a
   400), and its ``AccountSid`` this deployment's (403). Messages are deduplicated on that SID.

The handlers then only act. A signed, well-formed Twilio message whose ``From`` or ``To`` is not
an E.164 phone number (a short code, an alphanumeric sender id, a ``whatsapp:`` address) is a
422: maestro knows people by phone number and answers by SMS, and none of those can be either.
No model is called on this path and the anthropic SDK is never imported by it: the webhook
answers fast.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, TypeVar
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    ServiceError,
)
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from maestro.adapters.twilio_status import message_statuses
from maestro.adapters.webhook_auth import (
    TWILIO_SID_PATTERNS,
    FormParams,
    app_signature_valid,
    request_url,
    sids_read_as_signed,
    signature_headers_well_formed,
    twilio_signature_valid,
)
from maestro.clock import SystemClock
from maestro.domain.common import E164, E164_PATTERN
from maestro.domain.consent import TWILIO_UNSUBSCRIBED, ConsentChange
from maestro.domain.models import (
    MAX_MEDIA,
    MAX_MEDIA_TYPE_CHARS,
    MAX_MEDIA_URL_CHARS,
    MEDIA_URL_PATTERN,
    Channel,
    FlushTrigger,
    MediaRef,
    attestation_of,
    conversation_id_for,
)
from maestro.ingest.service import Inbound, Ingestor, app_message_id
from maestro.observability import count, logger
from maestro.ports.conversations import DeliveryStatus, OutboundStatusStore
from maestro.ports.messaging import ConsentStore
from maestro.ports.platform import Clock

EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
MAX_SMS_CHARS = 1_600
"""Twilio's own limit for a message body: a longer one did not come from an SMS."""
MAX_APP_CHARS = 4_000
MAX_TRANSCRIPT_CHARS = 16_000
"""About 18 minutes of speech (Twilio's transcriptions are of recordings up to 2 minutes)."""
MAX_URL_CHARS = MAX_MEDIA_URL_CHARS
MAX_MESSAGE_BYTES = 4 * MAX_TRANSCRIPT_CHARS + MAX_MEDIA * (MAX_URL_CHARS + MAX_MEDIA_TYPE_CHARS)
"""The most UTF-8 a message the webhooks accept can hold (text, media URLs and types): far from
DynamoDB's 400 KB item, though every message is stored twice (the message, its buffered copy)."""
FORM_OVERHEAD_BYTES = 64 * 1024
MAX_REQUEST_BYTES = 3 * MAX_MESSAGE_BYTES + FORM_OVERHEAD_BYTES
"""A request body over this is refused (413) before it is read: a form-encoded message may grow
threefold (every UTF-8 byte as %XX), plus the other fields Twilio sends. The API's edge (a WAF
rule on Content-Length, ``infra/api.py``) and ``maestro serve`` refuse it first."""
MAX_FORM_FIELDS = 256
TEXT_FIELDS = frozenset({"Body", "TranscriptionText", "body"})
"""A too-long value of one of these is a message too large (413), not a malformed request."""
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


@dataclass(frozen=True)
class WebhookDeps:
    ingestor: Ingestor
    statuses: OutboundStatusStore
    twilio_auth_token: Callable[[], str]
    app_signing_secret: Callable[[], str]
    clock: Clock
    """The clock messages are received by (virtual in scenarios and on the embedded stack)."""
    twilio_account_sid: str | None = None
    """The Twilio account whose webhooks are accepted; None: none are (the Twilio routes 503)."""
    public_base_url: str | None = None
    app_signature_tolerance_seconds: int = 300
    wall_clock: Clock = field(default_factory=SystemClock)
    """The real clock: a signature's timestamp was taken on one, whatever time scenarios run on."""
    consent: ConsentStore | None = None
    """Where a status callback's error 21610 (the recipient opted out) is recorded."""


# -- request models -------------------------------------------------------------------------------

AccountSid = Annotated[str, StringConstraints(pattern=TWILIO_SID_PATTERNS["account"])]
MessageSid = Annotated[str, StringConstraints(pattern=TWILIO_SID_PATTERNS["message"])]
CallSid = Annotated[str, StringConstraints(pattern=TWILIO_SID_PATTERNS["call"])]
TranscriptionSid = Annotated[str, StringConstraints(pattern=TWILIO_SID_PATTERNS["transcription"])]
AppId = Annotated[str, StringConstraints(pattern=r"^[\x21-\x7e]{1,128}$")]
"""The app's own message id: printable ASCII, no spaces."""
Address = Annotated[str, StringConstraints(min_length=1, max_length=64)]
"""A Twilio From/To as received: E.164 for a phone, else a short code, a sender id, whatsapp:…"""
MediaUrl = Annotated[str, StringConstraints(max_length=MAX_URL_CHARS, pattern=MEDIA_URL_PATTERN)]


class TwilioForm(BaseModel):
    """Twilio's form parameters (a blank one counts as absent). Twilio adds parameters over
    time: unknown ones are ignored. Every request names its account."""

    # Built on a route's first request, not at import: a cold start pays for its route alone.
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    FALLBACKS: ClassVar[dict[str, str]] = {}
    """A parameter read when the first is absent (older names Twilio still sends)."""
    SAME_SID: ClassVar[dict[str, tuple[str, ...]]] = {}
    """The other names Twilio sends one SID under: each one given must be that SID (a form
    whose names disagree on which message it is was not sent as Twilio sent it)."""

    account_sid: AccountSid = Field(validation_alias="AccountSid")

    @model_validator(mode="before")
    @classmethod
    def _fall_back(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        missing = {k: data[v] for k, v in cls.FALLBACKS.items() if k not in data and v in data}
        for name, others in cls.SAME_SID.items():
            given = {n: data[n] for n in (name, *others) if n in data}
            if len(set(given.values())) > 1:
                raise PydanticCustomError(
                    "sid_mismatch",
                    "{names} name different SIDs: Twilio gives a message one SID",
                    {"names": ", ".join(given)},
                )
            if name not in data and given:
                missing[name] = next(iter(given.values()))
        return {**data, **missing}


class TwilioSms(TwilioForm):
    SAME_SID = {"MessageSid": ("SmsMessageSid", "SmsSid")}

    message_sid: MessageSid = Field(validation_alias="MessageSid")
    sender: Address = Field(validation_alias="From")
    to: Address | None = Field(default=None, validation_alias="To")
    body: str | None = Field(default=None, validation_alias="Body", max_length=MAX_SMS_CHARS)
    num_media: int = Field(default=0, validation_alias="NumMedia", ge=0, le=MAX_MEDIA)
    media: tuple[MediaRef, ...] = Field(default=(), max_length=MAX_MEDIA)

    @model_validator(mode="before")
    @classmethod
    def _media(cls, data: Any) -> Any:
        """An MMS's files, as Twilio numbers them: ``MediaUrl{N}`` and ``MediaContentType{N}``
        for N below ``NumMedia`` (references only: maestro never fetches them). A file the
        count declares without its URL is a 400: the form is not as Twilio sends one."""
        if not isinstance(data, dict):
            return data
        declared = str(data.get("NumMedia") or "0")
        count = min(int(declared), MAX_MEDIA) if declared.isdigit() else 0
        media: list[dict[str, Any]] = []
        for n in range(count):
            url = data.get(f"MediaUrl{n}")
            if not url:
                raise PydanticCustomError(
                    "missing_media",
                    "NumMedia is {count} and MediaUrl{n} is missing",
                    {"count": count, "n": n},
                )
            kind = data.get(f"MediaContentType{n}")
            media.append({"url": url, "content_type": kind.lower() if kind else None})
        return {**data, "media": tuple(media)}


class TwilioStatus(TwilioForm):
    FALLBACKS = {"MessageStatus": "SmsStatus"}
    SAME_SID = {"MessageSid": ("SmsSid",)}

    message_sid: MessageSid = Field(validation_alias="MessageSid")
    status: str = Field(validation_alias="MessageStatus", min_length=1, max_length=32)
    error_code: str | None = Field(default=None, validation_alias="ErrorCode", max_length=16)
    to: Address | None = Field(default=None, validation_alias="To")


class TwilioTranscript(TwilioForm):
    """A transcription callback, deduplicated on its ``TranscriptionSid``, else its call's
    ``CallSid`` (each in its own format)."""

    transcription_sid: TranscriptionSid | None = Field(
        default=None, validation_alias="TranscriptionSid"
    )
    call_sid: CallSid | None = Field(default=None, validation_alias="CallSid")
    sender: Address = Field(validation_alias="From")
    to: Address | None = Field(default=None, validation_alias="To")
    status: str = Field(default="completed", validation_alias="TranscriptionStatus", max_length=32)
    text: str | None = Field(
        default=None, validation_alias="TranscriptionText", max_length=MAX_TRANSCRIPT_CHARS
    )
    verstat: str | None = Field(default=None, validation_alias="StirVerstat", max_length=64)
    """The call's STIR/SHAKEN verification as Twilio saw it: only ``TN-Validation-Passed-A``
    says the number's owner placed the call (``maestro.domain.models.attestation_of``)."""

    @model_validator(mode="after")
    def _names_its_transcription_or_call(self) -> TwilioTranscript:
        if self.transcription_sid is None and self.call_sid is None:
            raise PydanticCustomError("missing", "a TranscriptionSid or a CallSid is required")
        return self

    @property
    def sid(self) -> str:
        """The id the transcript is deduplicated on."""
        sid = self.transcription_sid or self.call_sid
        assert sid is not None  # the validator above
        return sid


class AppMessage(BaseModel):
    """An in-app message, forwarded and signed by the app's backend."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    message_id: AppId
    from_phone: E164
    body: str = Field(max_length=MAX_APP_CHARS)
    media_urls: tuple[MediaUrl, ...] = Field(default=(), max_length=MAX_MEDIA)
    """The app sends URLs alone: their content type is not known (None)."""


class KickoffRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    from_phone: E164
    trigger: FlushTrigger = FlushTrigger.KICKOFF


RequestT = TypeVar("RequestT", bound=BaseModel)


@dataclass(frozen=True)
class RouteSpec:
    """What a route's requests must be: who signs them, in what content type, as which model."""

    auth: Literal["twilio", "app"]
    model: type[BaseModel]

    @property
    def content_type(self) -> str:
        return FORM if self.auth == "twilio" else JSON


# -- the resolver ---------------------------------------------------------------------------------


def build_resolver(deps: WebhookDeps) -> APIGatewayRestResolver:
    app = APIGatewayRestResolver()
    specs: dict[Callable[..., Any], RouteSpec] = {}

    def route(
        path: str, auth: Literal["twilio", "app"], model: type[BaseModel]
    ) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
        """The only way a route is added: with its authentication and its request model."""

        def register(handler: Callable[[], Any]) -> Callable[[], Any]:
            specs[handler] = RouteSpec(auth, model)
            app.post(path)(handler)
            return handler

        return register

    def spec_of(resolver: APIGatewayRestResolver) -> RouteSpec:
        matched = resolver.context.get("_route")
        spec = specs.get(matched.func) if matched is not None else None
        if spec is None:
            raise NotFoundError("Not found")  # not a route, or one declared without its spec
        return spec

    def read(resolver: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
        spec = spec_of(resolver)
        event = resolver.current_event
        text = _body_text(event.body, bool(event.is_base64_encoded))
        media_type, charset = _content_type(event.headers.get("Content-Type"))
        if media_type != spec.content_type or charset not in (None, "utf-8", "utf8"):
            raise ServiceError(415, f"Content-Type must be {spec.content_type} (UTF-8)")
        resolver.context.update(maestro_spec=spec, maestro_body=text)
        return next_middleware(resolver)

    def authenticate(
        resolver: APIGatewayRestResolver, next_middleware: NextMiddleware
    ) -> Response[Any]:
        spec: RouteSpec = resolver.context["maestro_spec"]
        body: str = resolver.context["maestro_body"]
        headers = resolver.current_event.headers
        who = "Twilio" if spec.auth == "twilio" else "maestro"
        if not signature_headers_well_formed(spec.auth, headers):
            # Junk is refused before a secret is fetched or a signature computed.
            logger.warning(
                "refused a request whose signature headers are out of shape",
                extra={"path": resolver.current_event.path, "auth": spec.auth},
            )
            raise ForbiddenError(f"no well-formed {who} signature")
        if spec.auth == "twilio":
            if deps.twilio_account_sid is None:
                # The deployment's fault, not the caller's: a 5xx (the API's 5XX alarm sees it,
                # and a 5xx is what sends Twilio to the number's fallback URL).
                logger.error("a Twilio webhook came, and no Twilio account is configured")
                raise ServiceError(
                    503,
                    "no Twilio account is configured (MAESTRO_TWILIO_ACCOUNT_SID): maestro "
                    "accepts the webhooks of its own account only",
                )
            form = _form(body)
            url = request_url(resolver.current_event.raw_event, deps.public_base_url)
            valid = twilio_signature_valid(
                deps.twilio_auth_token(),
                url,
                form,
                headers.get("X-Twilio-Signature"),
                headers.get("X-Twilio-Webhooks-Signature-Settings"),
            )
            resolver.context["maestro_form"] = form
        else:
            valid = app_signature_valid(
                deps.app_signing_secret(),
                headers.get("X-Maestro-Timestamp"),
                body,
                headers.get("X-Maestro-Signature"),
                deps.wall_clock.now().timestamp(),
                deps.app_signature_tolerance_seconds,
            )
        if not valid:
            logger.warning(
                "refused a request with a bad signature",
                extra={"path": resolver.current_event.path, "auth": spec.auth},
            )
            raise ForbiddenError(f"invalid {who} signature")
        return next_middleware(resolver)

    def parse(resolver: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
        spec: RouteSpec = resolver.context["maestro_spec"]
        try:
            if spec.auth == "twilio":
                form: FormParams = resolver.context["maestro_form"]
                request = spec.model.model_validate(_single_values(form, spec.model))
                _read_as_signed(form)
                assert isinstance(request, TwilioForm)  # every Twilio route's model is one
                _our_account(request, deps.twilio_account_sid)
            else:
                body: str = resolver.context["maestro_body"]
                request = spec.model.model_validate_json(body)
                _refuse_repeated_keys(body)
        except ValidationError as exc:
            raise _invalid(exc) from exc
        resolver.context["maestro_request"] = request
        return next_middleware(resolver)

    app.use(middlewares=[read, authenticate, parse])

    def parsed(model: type[RequestT]) -> RequestT:
        request = app.context["maestro_request"]
        assert isinstance(request, model)  # the route's own spec made it
        return request

    @route("/twilio/sms", "twilio", TwilioSms)
    def twilio_sms() -> Response[str]:
        sms = parsed(TwilioSms)
        inbound = Inbound(
            message_id=sms.message_sid,
            channel=Channel.SMS,
            from_phone=_served(sms.sender, "From"),
            to_phone=_served(sms.to, "To") if sms.to else None,
            body=sms.body or "",
            media=sms.media,
            received_at=deps.clock.now(),
        )
        _receive(deps, inbound)
        return Response(status_code=200, content_type="text/xml", body=EMPTY_TWIML)

    @route("/twilio/status", "twilio", TwilioStatus)
    def twilio_status() -> dict[str, Any]:
        callback = parsed(TwilioStatus)
        sid, status = callback.message_sid, callback.status
        try:
            typed: DeliveryStatus = _delivery_status(status)
        except ValueError as exc:
            raise BadRequestError(str(exc)) from exc
        # Conditional on an outbound message of that SID: one write, no read before it.
        recorded = deps.statuses.record_status(sid, typed, deps.clock.now(), callback.error_code)
        if recorded == "unknown":
            count("WebhookRefused", reason="unknown_message")
            logger.warning("refused a status callback for a message maestro did not send")
            raise NotFoundError(f"MessageSid {sid} is not a message maestro sent: nothing stored")
        opted_out = _note_unsubscribed(deps, callback)
        return {
            "message_sid": sid,
            "status": status,
            "applied": recorded == "applied",
            "opted_out": opted_out,
        }

    @route("/twilio/transcript", "twilio", TwilioTranscript)
    def twilio_transcript() -> dict[str, Any]:
        call = parsed(TwilioTranscript)
        sender = _served(call.sender, "From")
        if call.status != "completed":
            return {"stored": False, "reason": f"transcription {call.status}"}
        inbound = Inbound(
            message_id=call.sid,
            channel=Channel.VOICE,
            from_phone=sender,
            to_phone=_served(call.to, "To") if call.to else None,
            body=call.text or "",
            media=(),
            received_at=deps.clock.now(),
            trigger=FlushTrigger.CONVERSATION_ENDED,
            attestation=attestation_of(call.verstat),
        )
        result = _receive(deps, inbound)
        return {"stored": not result, "duplicate": result}

    @route("/app/messages", "app", AppMessage)
    def app_message() -> dict[str, Any]:
        message = parsed(AppMessage)
        inbound = Inbound(
            message_id=app_message_id(message.from_phone, message.message_id),
            channel=Channel.IN_APP,
            from_phone=message.from_phone,
            to_phone=None,
            body=message.body,
            media=tuple(MediaRef(url=url) for url in message.media_urls),
            received_at=deps.clock.now(),
        )
        duplicate = _receive(deps, inbound)
        return {"accepted": True, "duplicate": duplicate}

    @route("/assistant/kickoff", "app", KickoffRequest)
    def kickoff() -> dict[str, Any]:
        request = parsed(KickoffRequest)
        if request.trigger not in {FlushTrigger.KICKOFF, FlushTrigger.CONVERSATION_ENDED}:
            raise BadRequestError("the assistant may only kick off or end a conversation")
        conversation = conversation_id_for(request.from_phone)
        flushed = deps.ingestor.request_flush(conversation, request.trigger, deps.clock.now())
        return {"conversation_id": conversation, "flush_requested": flushed}

    return app


# -- reading a request ----------------------------------------------------------------------------


def _body_text(body: str | None, is_base64: bool) -> str:
    """The body as text: at most MAX_REQUEST_BYTES of UTF-8, or a 413 / 400."""
    raw = body or ""
    if is_base64:
        if len(raw) > 4 * (MAX_REQUEST_BYTES // 3 + 1):
            raise _too_large(len(raw) * 3 // 4)
        try:
            data = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise BadRequestError("the body is not valid base64") from exc
        if len(data) > MAX_REQUEST_BYTES:
            raise _too_large(len(data))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRequestError(f"the body is not valid UTF-8 (byte {exc.start})") from exc
    # Text: at most 4 UTF-8 bytes a character, so only a long one needs encoding to measure.
    if len(raw) * 4 > MAX_REQUEST_BYTES and (size := len(raw.encode())) > MAX_REQUEST_BYTES:
        raise _too_large(size)
    return raw


def _too_large(size: int) -> ServiceError:
    return ServiceError(413, f"request body too large ({size} bytes, at most {MAX_REQUEST_BYTES})")


def _content_type(header: str | None) -> tuple[str, str | None]:
    """``application/json; charset=UTF-8`` → ("application/json", "utf-8")."""
    media_type, *params = (header or "").split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    return media_type.strip().lower(), charset


def _form(body: str) -> FormParams:
    try:
        values = parse_qs(
            body,
            keep_blank_values=True,
            errors="strict",  # %FF is not text: a 400, not a silent U+FFFD
            max_num_fields=MAX_FORM_FIELDS,
        )
    except UnicodeDecodeError as exc:
        raise BadRequestError("a form field is not valid UTF-8") from exc
    except ValueError as exc:
        raise BadRequestError(f"the form has more than {MAX_FORM_FIELDS} fields") from exc
    return FormParams(values)


def _single_values(form: FormParams, model: type[BaseModel]) -> dict[str, str]:
    """The form as one value per name, blank ones left out; a field the model reads that comes
    twice is a 400 (which one would be the message?)."""
    read = _form_names(model)
    values: dict[str, str] = {}
    for name in form:
        given = form.getlist(name)
        if len(given) > 1 and name in read:
            raise BadRequestError(f"repeated field {name}")
        if given[0] != "":
            values[name] = given[0]
    return values


def _form_names(model: type[BaseModel]) -> frozenset[str]:
    """Every form parameter ``model`` reads."""
    names = {f"{name}{n}" for name in ("MediaUrl", "MediaContentType") for n in range(MAX_MEDIA)}
    if issubclass(model, TwilioForm):
        names.update(model.FALLBACKS.values())
        names.update(name for others in model.SAME_SID.values() for name in others)
    for name, info in model.model_fields.items():
        names.add(info.validation_alias if isinstance(info.validation_alias, str) else name)
    return frozenset(names)


def _read_as_signed(form: FormParams) -> None:
    """A 400 for a form whose signed text holds a SID no parameter does: Twilio's signature
    fits any cut of that text into names and values, and this one is not Twilio's."""
    if not sids_read_as_signed(form):
        count("WebhookRefused", reason="recut_form")
        logger.warning("refused a signed form cut another way than Twilio sent it")
        raise BadRequestError(
            "the form is not as Twilio sent it: the signed text holds a SID that no parameter "
            "does (the same signature fits the form cut another way)"
        )


def _our_account(request: TwilioForm, account_sid: str | None) -> None:
    """A 403 for another Twilio account's webhook (authenticate refused it with none set)."""
    if request.account_sid != account_sid:
        count("WebhookRefused", reason="foreign_account")
        logger.warning("refused a webhook naming another Twilio account")
        raise ForbiddenError("AccountSid is not the Twilio account this deployment serves")


def _refuse_repeated_keys(body: str) -> None:
    """A JSON object naming one field twice is a 400: parsers disagree on which one counts."""

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise BadRequestError(f"repeated field {key}")
            seen.add(key)
        return dict(pairs)

    # Only after the model accepted the body: it is valid JSON of the model's (shallow) shape.
    json.loads(body, object_pairs_hook=pairs_hook)


def _invalid(exc: ValidationError) -> ServiceError:
    """A validation failure as the caller should read it: which field, and why."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "body"
    if error["type"] == "json_invalid":
        return BadRequestError("the body is not valid JSON")
    if error["type"] == "string_too_long" and error["loc"] and error["loc"][0] in TEXT_FIELDS:
        limit = error.get("ctx", {}).get("max_length")
        length = len(error["input"]) if isinstance(error["input"], str) else "?"
        return ServiceError(413, f"{where} is too long ({length} characters, at most {limit})")
    return BadRequestError(f"{where}: {error['msg']}")


def _served(address: str, name: str) -> str:
    """An E.164 phone number, or a 422: maestro identifies people and answers them by phone."""
    if E164_PATTERN.fullmatch(address):
        return address
    count("WebhookRefused", reason="not_e164")
    logger.warning(
        "refused a message from an address that is not a phone number", extra={"field": name}
    )
    raise ServiceError(
        422,
        f"{name} is not an E.164 phone number: maestro serves phone numbers only (not short "
        "codes, alphanumeric sender ids or whatsapp: addresses)",
    )


def _receive(deps: WebhookDeps, inbound: Inbound) -> bool:
    """Buffer one message; True when it was a redelivery (nothing new stored)."""
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


def _note_unsubscribed(deps: WebhookDeps, callback: TwilioStatus) -> bool:
    """Twilio's 21610 on a message maestro sent: its recipient opted out at the carrier. Their
    number is marked opted out at once (nothing more is texted to it until they opt back in)."""
    if callback.error_code != TWILIO_UNSUBSCRIBED or deps.consent is None:
        return False
    if callback.to is None or not E164_PATTERN.fullmatch(callback.to):
        logger.warning("a 21610 status callback named no phone number: no opt-out recorded")
        return False
    change = ConsentChange(opted_out=True, source="twilio_21610", detail=callback.message_sid)
    deps.consent.record(callback.to, change, deps.clock.now())
    count("OptOuts", source="twilio_21610")
    return True


def _delivery_status(value: str) -> DeliveryStatus:
    """Any status the twilio SDK defines; anything else is a 400."""
    if value not in message_statuses():
        raise ValueError(f"unknown MessageStatus {value!r}")
    return value
