"""Which messenger texts, from settings: Twilio when an account SID and its auth token are
configured, else the recording messenger (which sends nothing, and says so). The watcher's
reader follows the same choice: it reads back from the surface the messenger wrote to."""

from __future__ import annotations

from typing import Any, cast

from twilio.rest import Client

from maestro.adapters.ddb import DynamoDBClient
from maestro.adapters.outbox import DynamoRecordingMessenger, RecordedMessageReader
from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.adapters.twilio_sms import TwilioMessageReader, TwilioMessenger, twilio_client
from maestro.ports import Clock, MessageReader, Messenger, Secrets
from maestro.settings import TwilioSettings

__all__ = ["message_reader_for", "messenger_for"]


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
    secrets: Secrets | None = None,
) -> Messenger:
    if settings.messenger == "recording":
        return DynamoRecordingMessenger(ddb, messages_table)
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
