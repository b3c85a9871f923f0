"""Which messenger texts, from settings: Twilio when an account SID and its auth token are
configured, else the recording messenger (which sends nothing, and says so). The watcher's
reader follows the same choice: it reads back from the surface the messenger wrote to.

Either one sits behind :class:`ConsentGuard`, the one place every text passes (the lanes, fail-open
and the digest all send through the messenger this module builds): a phone that opted out, or
whose directory row records no SMS consent, is never texted (docs/consent-and-language.md).
"""

from __future__ import annotations

from typing import Any, cast

from twilio.rest import Client

from maestro.adapters.ddb import DynamoDBClient
from maestro.adapters.dynamodb_consent import DynamoConsentStore
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.outbox import DynamoRecordingMessenger, RecordedMessageReader
from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.adapters.twilio_sms import TwilioMessageReader, TwilioMessenger, twilio_client
from maestro.domain.consent import TWILIO_UNSUBSCRIBED, ConsentChange
from maestro.observability import count, logger
from maestro.ports.evidence import MessageReader
from maestro.ports.messaging import (
    ConsentStore,
    Messenger,
    NotTextableError,
    SendFailedError,
    SentMessage,
)
from maestro.ports.platform import Clock, Secrets
from maestro.ports.stores import PartyDirectory
from maestro.settings import TwilioSettings

__all__ = ["ConsentGuard", "message_reader_for", "messenger_for"]


class ConsentGuard:
    """:class:`maestro.ports.messaging.Messenger` that texts only a phone that may be texted.

    Before each send: the phone's consent (its own STOP, or Twilio's 21610) and, when a party
    directory is given, the directory's ``sms_consent``. Either says no: :class:`NotTextableError`,
    and the messenger behind is never called. Twilio refusing a send with 21610 (the number opted
    out at the carrier before maestro heard of it) is recorded as an opt-out, then refused the same
    way. Who sends decides what a refusal means (a lane records the text as not sent)."""

    def __init__(
        self,
        inner: Messenger,
        consent: ConsentStore,
        clock: Clock,
        parties: PartyDirectory | None = None,
    ) -> None:
        self.inner = inner
        self._consent = consent
        self._clock = clock
        self._parties = parties

    def refusal(self, to: str) -> str | None:
        """Why ``to`` may not be texted, or None when it may."""
        state = self._consent.state(to)
        if state is not None and state.opted_out:
            how = f"texted {state.detail}" if state.source == "keyword" else "Twilio error 21610"
            return f"the recipient opted out ({how}, {state.at:%Y-%m-%d %H:%M} UTC)"
        party = self._parties.by_phone(to) if self._parties is not None else None
        if party is not None and not party.sms_consent:
            return "the directory records no SMS consent for the recipient"
        return None

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        why = self.refusal(to)
        if why is not None:
            count("TextsRefused", reason="consent")
            logger.info("a text was not sent: no consent", extra={"key": idempotency_key})
            raise NotTextableError(idempotency_key, to, why)
        try:
            return self.inner.send(to, body, idempotency_key=idempotency_key)
        except SendFailedError as failed:
            if failed.code != TWILIO_UNSUBSCRIBED:
                raise
            self._consent.record(
                to,
                ConsentChange(opted_out=True, source="twilio_21610", detail=idempotency_key[-64:]),
                self._clock.now(),
            )
            count("TextsRefused", reason="twilio_21610")
            raise NotTextableError(
                idempotency_key, to, "the recipient opted out (Twilio refused it: error 21610)"
            ) from failed


class _LazyClient:
    """The Twilio client, built (and its auth token read) on first use: a pipeline step that
    never texts never reads the secret, and needs no permission to."""

    def __init__(self, settings: TwilioSettings, secrets: Secrets) -> None:
        self._settings = settings
        self._secrets = secrets
        self._client: Client | None = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            settings = self._settings
            sid, token = settings.twilio_account_sid, settings.twilio_auth_token_secret
            if not sid or not token:
                raise ValueError("Twilio needs an account SID and its auth token's secret")
            self._client = twilio_client(
                sid,
                self._secrets.get(token),
                base_url=str(settings.twilio_api_base_url),
                timeout=settings.twilio_timeout_seconds,
            )
        return getattr(self._client, name)


def _client(settings: TwilioSettings, secrets: Secrets) -> Client:
    return cast(Client, _LazyClient(settings, secrets))


def messenger_for(
    settings: TwilioSettings,
    ddb: DynamoDBClient,
    clock: Clock,
    *,
    messages_table: str,
    sends_table: str,
    conversations_table: str,
    parties_table: str | None = None,
    secrets: Secrets | None = None,
) -> Messenger:
    """The messenger behind its consent guard (consent in ``conversations_table``; the
    directory's ``sms_consent`` too when ``parties_table`` is given)."""
    return ConsentGuard(
        _messenger(settings, ddb, clock, messages_table, sends_table, secrets),
        DynamoConsentStore(ddb, conversations_table),
        clock,
        DynamoPartyDirectory(ddb, parties_table) if parties_table else None,
    )


def _messenger(
    settings: TwilioSettings,
    ddb: DynamoDBClient,
    clock: Clock,
    messages_table: str,
    sends_table: str,
    secrets: Secrets | None,
) -> Messenger:
    if settings.messenger == "recording":
        return DynamoRecordingMessenger(
            ddb, messages_table, clock, retention_days=settings.messages_retention_days
        )
    assert settings.twilio_from_number is not None  # the settings' validator insists
    callback = settings.twilio_status_callback_url
    return TwilioMessenger(
        _client(settings, secrets or SecretsManagerSecrets()),
        ddb,
        sends_table=sends_table,
        messages_table=messages_table,
        from_number=settings.twilio_from_number,
        status_callback=str(callback) if callback else None,
        clock=clock,
        attempts=settings.twilio_send_attempts,
        backoff_seconds=settings.twilio_retry_base_seconds,
        retention_days=settings.messages_retention_days,
    )


def message_reader_for(
    settings: TwilioSettings,
    ddb: DynamoDBClient,
    *,
    messages_table: str,
    secrets: Secrets | None = None,
) -> MessageReader:
    if settings.messenger == "recording":
        return RecordedMessageReader(ddb, messages_table)
    return TwilioMessageReader(
        _client(settings, secrets or SecretsManagerSecrets()),
        backoff_seconds=settings.twilio_retry_base_seconds,
    )
