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

from dataclasses import dataclass
from typing import Any

__all__ = ["Change", "WebhookTargets", "WireError", "wire_number"]


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
