"""Twilio's message statuses, taken from the SDK's own enum, and the order a message moves
through them.

The set of statuses is never kept by hand: it is ``MessageInstance.Status`` of the installed
``twilio`` SDK, so a status callback with any status the SDK defines is accepted (a hand-kept
list once lacked ``partially_delivered`` and answered it with a 400). The SDK's message module
is imported on first use, not at import, so the webhook's cold start does not pay for it.
"""

from __future__ import annotations

from functools import cache

__all__ = ["STATUS_RANK", "message_statuses", "status_rank"]


@cache
def message_statuses() -> frozenset[str]:
    """Every status the SDK defines for a message (``MessageInstance.Status``)."""
    from twilio.rest.api.v2010.account.message import MessageInstance

    return frozenset(
        value
        for name, value in vars(MessageInstance.Status).items()
        if not name.startswith("_") and isinstance(value, str)
    )


# The order a message moves through; a callback may arrive late or twice, and a lower rank never
# overwrites a higher one (delivered never goes back to sent). The final outcomes share a rank:
# the first one recorded stays. A test checks that every status of the SDK has a rank here.
STATUS_RANK: dict[str, int] = {
    "scheduled": 0,
    "accepted": 1,
    "queued": 2,
    "sending": 3,
    "sent": 4,
    "receiving": 4,
    "received": 5,
    "delivered": 6,
    "undelivered": 6,
    "failed": 6,
    "canceled": 6,
    "partially_delivered": 6,
    "read": 7,
}


def status_rank(status: str) -> int:
    """The status's rank. A status the SDK defines that this table has not ranked yet ranks
    lowest (it is stored, and never overwrites anything), rather than being refused."""
    if status not in message_statuses():
        raise ValueError(f"unknown message status {status!r}")
    return STATUS_RANK.get(status, 0)
