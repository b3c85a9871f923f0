"""Messages out: the messenger, what it hands back and how a send fails, each phone's consent,
and the hourly digest told to the PM in one page.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import Field

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.digest import DigestEntry, DigestLine

if TYPE_CHECKING:
    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.
    from maestro.domain.consent import ConsentChange, ConsentState


class SentMessage(Frozen):
    sid: str
    to: E164
    body: str
    status: str = "queued"
    via: Literal["twilio", "recording"] = Field(
        default="recording",
        description="Which messenger: Twilio sent it; the recording messenger only recorded it",
    )


RECORDED_SID_PREFIX = "SMrec"
"""Every SID a recording messenger hands out starts with this, so nobody mistakes a recorded
message for one Twilio accepted."""


def recorded_sid(idempotency_key: str) -> str:
    """The deterministic SID a recording messenger gives a key (34 characters, like Twilio's)."""
    return RECORDED_SID_PREFIX + hashlib.sha256(idempotency_key.encode()).hexdigest()[:29]


class Messenger(Protocol):
    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        """Send one SMS. The same idempotency key never sends twice; it returns the first.

        Raises SendFailedError when the message could not be sent (after retries, or refused).
        """


class SendFailedError(Exception):
    """A message could not be sent: the provider refused it (``transient=False``) or kept
    failing through every retry. The failure is recorded (the send record) before this is
    raised; the step fails, the package fails open and the PM is told: never a silent drop."""

    def __init__(
        self,
        idempotency_key: str,
        reason: str,
        *,
        transient: bool,
        attempts: int,
        code: str | None = None,
    ):
        super().__init__(f"{idempotency_key}: {reason} (after {attempts} attempt(s))")
        self.idempotency_key = idempotency_key
        self.reason = reason
        self.transient = transient
        self.attempts = attempts
        self.code = code
        """The provider's error code when it refused the message (Twilio's, e.g. "21610")."""


class NotTextableError(SendFailedError):
    """The recipient may not be texted (they opted out, Twilio says they did, or the directory
    records no SMS consent): nothing was sent and nothing was tried. A lane records the text as
    not sent and goes on; a page that cannot reach its PM fails the step like any failed send."""

    def __init__(self, idempotency_key: str, to: str, reason: str) -> None:
        super().__init__(idempotency_key, reason, transient=False, attempts=0)
        self.to = to


class ConsentStore(Protocol):
    """Each phone's SMS consent, as its own texts (STOP, START) and Twilio (error 21610) set it.
    Written by the inbound webhook at once; read before every text (the messenger's guard)."""

    def record(self, phone: str, change: ConsentChange, at: AwareDatetime) -> bool:
        """Apply ``change`` as of ``at`` unless a later change is stored (a late redelivery of
        an old STOP does not undo a START), or it applies only while opted out and the phone is
        not: False then, nothing written. A re-run of the same change writes the same state."""

    def state(self, phone: str) -> ConsentState | None:
        """The phone's consent as stored; None when nothing was ever recorded (it may be
        texted, unless the directory says otherwise)."""


class Digest(Protocol):
    """The hourly digest of what is told to the PM in one page instead of many: lines by UTC
    hour; an hour's page goes once the hour is over (:mod:`maestro.pipeline.digest`)."""

    def add(self, entry: DigestEntry) -> AwareDatetime:
        """Add ``entry`` to its hour's line for its subject (a re-run adds nothing more); when
        that hour's digest has already closed, to the next open hour. Returns the hour."""

    def due(self, now: AwareDatetime, lookback_hours: int) -> list[AwareDatetime]:
        """Hours over before ``now`` (within the lookback) with lines and no page sent yet."""

    def close(self, hour: AwareDatetime, at: AwareDatetime) -> list[DigestLine]:
        """Close ``hour`` (a later entry goes to the next hour) and read all its lines."""

    def record_sent(self, hour: AwareDatetime, sid: str, at: AwareDatetime) -> None:
        """The hour's page went: it is no longer due."""
