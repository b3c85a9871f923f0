"""Which messenger texts is chosen by settings: Twilio when an account SID and its token are
configured, else the recording messenger, which sends nothing and says so."""

from __future__ import annotations

from typing import Any

import pytest
from builders import T0
from pydantic import ValidationError
from twilio.http.http_client import TwilioHttpClient

from maestro.adapters.messaging import ConsentGuard, message_reader_for, messenger_for
from maestro.adapters.outbox import DynamoRecordingMessenger, RecordedMessageReader
from maestro.adapters.twilio_sms import (
    TwilioApiHttpClient,
    TwilioMessageReader,
    TwilioMessenger,
)
from maestro.settings import PIPELINE_TABLES, PipelineSettings
from maestro_dev.local.clock import VirtualClock

ACCOUNT = "AC" + "0123456789abcdef" * 2
TABLES = {f"{name}_table": f"t-{name}" for name in PIPELINE_TABLES}
BASE: dict[str, Any] = {**TABLES, "event_bus_name": "bus", "on_call_pm_phone": "+14155550199"}


class FakeSecrets:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def get(self, name_or_arn: str) -> str:
        self.asked.append(name_or_arn)
        return "the-auth-token"


def _settings(**values: Any) -> PipelineSettings:
    return PipelineSettings.model_validate({**BASE, **values})


def test_without_an_account_the_recording_messenger_answers() -> None:
    settings = _settings(twilio_account_sid="", twilio_auth_token_secret="")  # cdk.json blanks
    assert settings.messenger == "recording"
    made = messenger_for(
        settings,
        None,
        VirtualClock(T0),
        messages_table="m",
        sends_table="s",
        conversations_table="c",
    )
    assert isinstance(made, ConsentGuard)  # every text passes the consent guard
    assert isinstance(made.inner, DynamoRecordingMessenger)
    assert isinstance(message_reader_for(settings, None, messages_table="m"), RecordedMessageReader)


def test_an_account_and_its_token_make_it_twilio() -> None:
    settings = _settings(
        twilio_account_sid=ACCOUNT,
        twilio_auth_token_secret="arn:aws:secretsmanager:us-east-1:1:secret:twilio",
        twilio_from_number="+14155550000",
        twilio_status_callback_url="https://api.example.com/v1/twilio/status",
    )
    assert settings.messenger == "twilio"
    secrets = FakeSecrets()
    made = messenger_for(
        settings,
        None,
        VirtualClock(T0),
        messages_table="m",
        sends_table="s",
        conversations_table="c",
        secrets=secrets,
    )
    assert isinstance(made, ConsentGuard)
    twilio = made.inner
    assert isinstance(twilio, TwilioMessenger)
    assert secrets.asked == []  # read on the first text, not when the step starts
    twilio._twilio.messages  # noqa: B018 - the first use builds the client
    assert secrets.asked == ["arn:aws:secretsmanager:us-east-1:1:secret:twilio"]
    reader = message_reader_for(settings, None, messages_table="m", secrets=secrets)
    assert isinstance(reader, TwilioMessageReader)


def test_the_api_base_url_defaults_to_twilios_own() -> None:
    assert str(_settings().twilio_api_base_url).rstrip("/") == "https://api.twilio.com"


@pytest.mark.parametrize(
    "values",
    [
        {"twilio_account_sid": ACCOUNT, "twilio_auth_token_secret": "token"},  # no number
        {"twilio_account_sid": "not-an-account"},
        {"twilio_from_number": "555-0100"},
    ],
)
def test_an_incomplete_twilio_configuration_is_refused(values: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _settings(**values)


def test_the_sdks_http_client_reaches_the_configured_api_by_its_base_url_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(
        TwilioHttpClient, "request", lambda self, method, url, *a, **k: seen.append(url)
    )
    path = f"/2010-04-01/Accounts/{ACCOUNT}/Messages.json"
    TwilioApiHttpClient().request("POST", "https://api.twilio.com" + path)
    TwilioApiHttpClient("http://127.0.0.1:4010/").request("POST", "https://api.twilio.com" + path)
    assert seen == ["https://api.twilio.com" + path, "http://127.0.0.1:4010" + path]
