"""`maestro twilio wire --env ENV` (#17): a deployed stack's Twilio number gets its SMS URL, its
SMS fallback URL and its status callback, set through the twilio SDK against a Twilio API (the
loopback here), with the auth token from the stack's own secret (moto's Secrets Manager) and the
URLs from its outputs (moto's CloudFormation). What changed is printed; a second run changes
nothing; a number an SMS application handles is refused, not overwritten."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from maestro_dev.cli import main
from maestro_dev.local.twilio_loopback import TwilioLoopback, TwilioLoopbackServer

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

NUMBER = "+14155550000"
TOKEN = "an auth token only the stack's secret holds"
API = "https://abc123.execute-api.us-east-1.amazonaws.com/v1/"
FALLBACK = "https://def456.execute-api.us-east-1.amazonaws.com/v1/twilio/sms"


@pytest.fixture
def twilio() -> Iterator[tuple[TwilioLoopback, str]]:
    loopback = TwilioLoopback(TOKEN, lambda: datetime(2026, 12, 1, tzinfo=UTC), numbers=(NUMBER,))
    server = TwilioLoopbackServer(loopback).start()
    try:
        yield loopback, server.url
    finally:
        server.stop()


@pytest.fixture
def deployed(aws: AwsEnv) -> None:
    secret = aws.client("secretsmanager").create_secret(Name="twilio-token", SecretString=TOKEN)
    outputs = {
        "TwilioSmsWebhookUrl": API + "twilio/sms",
        "TwilioSmsFallbackUrl": FALLBACK,
        "WebhookBaseUrl": API,
        "TwilioAuthTokenSecretArn": secret["ARN"],
    }
    aws.client("cloudformation").create_stack(
        StackName="maestro-staging",
        TemplateBody=json.dumps(
            {
                "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {name: {"Value": value} for name, value in outputs.items()},
            }
        ),
    )


def _wire(
    loopback: TwilioLoopback, api_url: str, *more: str, number: str = NUMBER
) -> tuple[int, str]:
    out = io.StringIO()
    code = main(
        [
            "twilio",
            "wire",
            "--env",
            "staging",
            "--number",
            number,
            "--account-sid",
            loopback.account_sid,
            "--api-url",
            api_url,
            *more,
        ],
        out,
    )
    return code, out.getvalue()


def test_wire_sets_the_three_webhooks_and_says_what_changed(
    deployed: None, twilio: tuple[TwilioLoopback, str]
) -> None:
    loopback, api_url = twilio
    code, printed = _wire(loopback, api_url)
    assert code == 0, printed
    number = loopback.number(NUMBER)
    assert number["sms_url"] == API + "twilio/sms"
    assert number["sms_fallback_url"] == FALLBACK
    assert number["status_callback"] == API + "twilio/status"
    assert number["sms_method"] == number["sms_fallback_method"] == "POST"
    assert f"sms_fallback_url: (not set) -> {FALLBACK}" in printed
    assert TOKEN not in printed
    # Wired already: nothing to change, and nothing is sent but the read.
    updates = sum(1 for method, path in loopback.requests if method == "POST")
    code, printed = _wire(loopback, api_url)
    assert code == 0
    assert "already wired" in printed
    assert sum(1 for method, path in loopback.requests if method == "POST") == updates


def test_a_dry_run_changes_nothing(deployed: None, twilio: tuple[TwilioLoopback, str]) -> None:
    loopback, api_url = twilio
    code, printed = _wire(loopback, api_url, "--dry-run")
    assert code == 0
    assert "would change sms_url" in printed
    assert loopback.number(NUMBER)["sms_url"] == ""


def test_a_number_handled_by_an_sms_application_is_refused(
    deployed: None, twilio: tuple[TwilioLoopback, str]
) -> None:
    loopback, api_url = twilio
    loopback._numbers[NUMBER]["sms_application_sid"] = "AP" + "0" * 32
    code, printed = _wire(loopback, api_url)
    assert code == 1
    assert "SMS application" in printed
    assert loopback.number(NUMBER)["sms_url"] == ""


def test_a_number_not_in_the_account_is_refused(
    deployed: None, twilio: tuple[TwilioLoopback, str]
) -> None:
    loopback, api_url = twilio
    code, printed = _wire(loopback, api_url, number="+14155559999")
    assert code == 1
    assert "is not a phone number of Twilio account" in printed
