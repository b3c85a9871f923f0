"""`maestro twilio wire`: point a Twilio number's webhooks at a maestro stack, through the SDK.

A message that reached Twilio is lost when the number's SMS webhook fails and nothing else is
set: Twilio logs the error and drops the message. Wiring sets the three webhooks together:

- ``sms_url``: the webhook API's ``/twilio/sms`` (the primary route: stored, then answered);
- ``sms_fallback_url``: the fallback API's ``/twilio/sms``, which Twilio requests when the
  primary answers an error or times out; it keeps the request on a queue with no dependency on
  the primary route (API Gateway → SQS), drained into the buffer;
- ``status_callback``: the webhook API's ``/twilio/status``.

Each with POST. It reads the number's current settings first and prints what it changes; a
number already wired is left alone. A number handled by an SMS application (``sms_application
_sid``) ignores its own URLs: that is refused with the reason, never overwritten silently.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from maestro.adapters.twilio_sms import TWILIO_API
from maestro.stack_outputs import (
    OUTPUT_AUTH_TOKEN_SECRET,
    OUTPUT_SMS_FALLBACK_URL,
    OUTPUT_SMS_URL,
    OUTPUT_WEBHOOK_BASE_URL,
    stack_for_env,
)

__all__ = ["Change", "WebhookTargets", "WireError", "add_parser", "wire_number"]

ROOT = Path(__file__).resolve().parents[2]


class WireError(RuntimeError):
    """The number cannot be wired as asked (not in the account, handled by an application)."""


@dataclass(frozen=True)
class WebhookTargets:
    """Where a number's webhooks should point (full URLs, as Twilio will call and sign them)."""

    sms_url: str
    sms_fallback_url: str
    status_callback: str

    def settings(self) -> dict[str, str]:
        """The number's fields as the SDK names them."""
        return {
            "sms_url": self.sms_url,
            "sms_method": "POST",
            "sms_fallback_url": self.sms_fallback_url,
            "sms_fallback_method": "POST",
            "status_callback": self.status_callback,
            "status_callback_method": "POST",
        }


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.field}: {self.before or '(not set)'} -> {self.after}"


def wire_number(
    client: Any, phone_number: str, targets: WebhookTargets, *, dry_run: bool = False
) -> list[Change]:
    """Set ``phone_number``'s webhooks to ``targets`` with the twilio SDK ``client``; the
    changes made (none: it was wired already). ``dry_run``: only say what would change."""
    found = client.incoming_phone_numbers.list(phone_number=phone_number, limit=2)
    if not found:
        raise WireError(
            f"{phone_number} is not a phone number of Twilio account {client.account_sid}"
        )
    number = found[0]
    if getattr(number, "sms_application_sid", None):
        raise WireError(
            f"{phone_number} hands its messages to SMS application {number.sms_application_sid}, "
            "which ignores the number's own webhook URLs: remove it from the application (or "
            "point the application at maestro) first"
        )
    wanted = targets.settings()
    changes = [
        Change(name, str(getattr(number, name, None) or ""), value)
        for name, value in wanted.items()
        if str(getattr(number, name, None) or "") != value
    ]
    if changes and not dry_run:
        client.incoming_phone_numbers(number.sid).update(**wanted)
    return changes


# -- `maestro twilio wire --env ENV` ------------------------------------------------------------

ENVIRONMENTS_KEY = "maestro:environments"


def targets_from_outputs(outputs: dict[str, str], stack_name: str) -> WebhookTargets:
    """The three URLs from a deployed stack's outputs."""
    missing = [
        name
        for name in (OUTPUT_SMS_URL, OUTPUT_SMS_FALLBACK_URL, OUTPUT_WEBHOOK_BASE_URL)
        if not outputs.get(name)
    ]
    if missing:
        raise WireError(
            f"stack {stack_name} has no output {', '.join(missing)}: not maestro's, or deployed "
            "before the fallback route existed (deploy it again)"
        )
    return WebhookTargets(
        sms_url=outputs[OUTPUT_SMS_URL],
        sms_fallback_url=outputs[OUTPUT_SMS_FALLBACK_URL],
        status_callback=outputs[OUTPUT_WEBHOOK_BASE_URL].rstrip("/") + "/twilio/status",
    )


def environment_settings(cdk_json: Path, env: str) -> dict[str, Any]:
    """An environment's settings in cdk.json (the account and number it texts from)."""
    if not cdk_json.exists():
        return {}
    environments = json.loads(cdk_json.read_text()).get("context", {}).get(ENVIRONMENTS_KEY, {})
    found = environments.get(env, {})
    return found if isinstance(found, dict) else {}


def cmd_wire(args: argparse.Namespace, out: TextIO) -> int:
    """Wire the environment's Twilio number to its deployed stack; 0 wired (or already), 1 not."""
    import boto3

    from maestro.adapters.twilio_sms import twilio_client

    stack_name = stack_for_env(args.env)
    settings = environment_settings(Path(args.cdk_json), args.env)
    account_sid = args.account_sid or os.environ.get("TWILIO_ACCOUNT_SID") or ""
    account_sid = account_sid or str(settings.get("twilio_account_sid") or "")
    number = args.number or str(settings.get("twilio_from_number") or "")
    if not account_sid or not number:
        print(
            f"{args.env}: no Twilio account or number: set twilio_account_sid and "
            f"twilio_from_number for {args.env} in cdk.json (or pass --account-sid, --number)",
            file=out,
        )
        return 1
    session = boto3.session.Session(region_name=args.region)
    described = session.client("cloudformation").describe_stacks(StackName=stack_name)
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Stacks"][0].get("Outputs", [])}
    try:
        targets = targets_from_outputs(outputs, stack_name)
        token = os.environ.get("TWILIO_AUTH_TOKEN") or _stack_token(session, outputs, stack_name)
        client = twilio_client(account_sid, token, base_url=args.api_url)
        changes = wire_number(client, number, targets, dry_run=args.dry_run)
    except WireError as error:
        print(f"{args.env}: {error}", file=out)
        return 1
    verb = "would change" if args.dry_run else "changed"
    if not changes:
        print(f"{number} ({stack_name}): already wired, nothing changed", file=out)
    for change in changes:
        print(f"{number} ({stack_name}) {verb} {change}", file=out)
    return 0


def _stack_token(session: Any, outputs: dict[str, str], stack_name: str) -> str:
    """The auth token from the stack's own secret (what its functions verify signatures with)."""
    arn = outputs.get(OUTPUT_AUTH_TOKEN_SECRET)
    if not arn:
        raise WireError(f"stack {stack_name} has no {OUTPUT_AUTH_TOKEN_SECRET} output")
    value = session.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]
    return str(value)


def add_parser(commands: Any) -> None:
    twilio = commands.add_parser("twilio", help="the Twilio number's side of a deployed stack")
    actions = twilio.add_subparsers(dest="twilio_command", required=True)
    wire = actions.add_parser(
        "wire",
        help="point the environment's Twilio number at its stack: SMS URL, SMS fallback URL "
        "(the fallback API: a failed webhook is kept, never lost) and status callback",
    )
    wire.add_argument("--env", required=True, help="the environment: --env dev is maestro-dev")
    wire.add_argument("--region", help="the stack's region (default: boto3's, e.g. AWS_REGION)")
    wire.add_argument("--number", help="E.164 (default: twilio_from_number in cdk.json)")
    wire.add_argument(
        "--account-sid",
        help="AC… (default: $TWILIO_ACCOUNT_SID, else twilio_account_sid in cdk.json); the auth "
        "token is $TWILIO_AUTH_TOKEN, else the stack's TwilioAuthToken secret",
    )
    wire.add_argument("--dry-run", action="store_true", help="only say what would change")
    wire.add_argument("--cdk-json", default=str(ROOT / "cdk.json"), help=argparse.SUPPRESS)
    wire.add_argument("--api-url", default=TWILIO_API, help=argparse.SUPPRESS)
    wire.set_defaults(handler=cmd_wire)
