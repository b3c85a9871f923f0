"""The conversation buffer (inbound messages, per-conversation counters, flush claims, the
lease) and the outbound messages' delivery statuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import Field

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.models import (
    MAX_MEDIA,
    Attestation,
    Channel,
    FlushTrigger,
    MediaRef,
    Message,
    PreCheckResult,
)

if TYPE_CHECKING:
    from datetime import datetime

    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.


class InboundDraft(Frozen):
    """An inbound message as received, before the buffer gives it its place (seq)."""

    message_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    channel: Channel
    from_phone: E164
    to_phone: E164 | None = None
    body: str = ""
    media: tuple[MediaRef, ...] = Field(default=(), max_length=MAX_MEDIA)
    received_at: AwareDatetime
    sender_party_id: str | None = None
    unknown_sender: bool = Field(description="No party has this number: stored, never bound")
    attestation: Attestation | None = Field(
        default=None, description="A call's verified STIR/SHAKEN attestation, if any"
    )


class ConversationMeta(Frozen):
    conversation_id: str
    seq: int = Field(ge=0, description="The latest message's seq (0: none yet)")
    flush_number: int = Field(ge=0, description="Flushes claimed so far")
    flushed_through: int = Field(ge=0, description="Every seq up to this is in a package")
    first_unflushed_at: AwareDatetime | None = None
    last_inbound_at: AwareDatetime | None = None
    sender_phone: E164 | None = None

    @property
    def has_unflushed(self) -> bool:
        return self.seq > self.flushed_through


class AppendResult(Frozen):
    message: Message
    duplicate: bool = Field(description="The provider id was already stored: nothing new")
    opened_batch: bool = Field(
        default=False, description="This message started a new run of unflushed messages"
    )
    meta: ConversationMeta


class FlushClaim(Frozen):
    """The messages one package holds: seqs in (after_seq, through_seq] of one conversation."""

    conversation_id: str
    flush_number: int = Field(ge=1)
    package_id: str
    after_seq: int = Field(ge=0)
    through_seq: int = Field(ge=1)
    trigger: FlushTrigger
    claimed_at: AwareDatetime
    started: bool = False


class ConversationBuffer(Protocol):
    def append(self, draft: InboundDraft) -> AppendResult:
        """Store a message and give it the conversation's next seq, atomically.

        A message id seen before returns ``duplicate=True`` and changes nothing.
        """

    def get_message(self, message_id: str) -> Message | None: ...

    def meta(self, conversation_id: str) -> ConversationMeta | None: ...

    def unflushed(self, seen: ConversationMeta, limit: int) -> list[Message]:
        """The first ``limit`` messages after ``seen.flushed_through``, in seq order."""

    def claim_flush(
        self,
        seen: ConversationMeta,
        trigger: FlushTrigger,
        at: AwareDatetime,
        through: Message | None = None,
        next_unflushed: Message | None = None,
    ) -> FlushClaim | None:
        """Claim the unflushed messages up to ``through`` (default: up to ``seen.seq``) as the
        next package; a partial claim names ``next_unflushed``, the first message it leaves.

        Conditional on the conversation being exactly as ``seen``: if another flusher claimed
        first or a newer message arrived, nothing is claimed and None is returned.
        """

    def unstarted_claims(self, conversation_id: str) -> list[FlushClaim]: ...

    def stranded(self, waiting_since: datetime, days: int) -> list[str]:
        """The conversations whose oldest unflushed message arrived before ``waiting_since``
        (and within ``days`` days of it): a flush that should have come did not."""

    def messages_for(self, claim: FlushClaim) -> list[Message]: ...

    def claim_probe(self, message_id: str) -> bool:
        """Claim the one severity probe a message gets; False when it was claimed already."""

    def store_probe(self, message: Message, result: PreCheckResult) -> None:
        """Keep the probe's answer with the message (and its buffered copy)."""

    def recent_messages(self, conversation_id: str, limit: int) -> list[Message]:
        """The conversation's newest ``limit`` messages, oldest first: one bounded read
        (Query, newest first, ``Limit``), whatever the conversation's length."""

    def mark_started(self, claim: FlushClaim) -> None: ...

    def acquire_lease(
        self,
        conversation_id: str,
        package_id: str,
        flush_number: int,
        at: AwareDatetime,
        ttl_seconds: int,
    ) -> bool:
        """Take the conversation's lease for one package, only in flush order.

        The holder taking it again renews it. A holder whose lease expired is overtaken: its
        turn counts as over and the next flush in order may take the lease.
        """

    def renew_lease(
        self, conversation_id: str, package_id: str, at: AwareDatetime, ttl_seconds: int
    ) -> bool:
        """Extend the holder's lease to ``at + ttl``; False when it no longer holds it."""

    def release_lease(self, conversation_id: str, package_id: str, flush_number: int) -> bool: ...

    def forfeit_turn(self, conversation_id: str, flush_number: int) -> None:
        """A package that never held the lease gives up its turn (it failed open waiting)."""


DeliveryStatus = str
"""A message status as Twilio reports it: one of the SDK's own ``MessageInstance.Status`` values
(``maestro.adapters.twilio_status.message_statuses()``), never a hand-kept list."""


StatusRecorded = Literal["applied", "stale", "unknown"]
"""What a status callback did: changed an outbound message's status; changed nothing (the
stored status is as new or newer); or named no message maestro sent (nothing stored)."""


class OutboundStatusStore(Protocol):
    def record_status(
        self, message_sid: str, status: DeliveryStatus, at: AwareDatetime, error_code: str | None
    ) -> StatusRecorded:
        """Store a delivery status on a message maestro sent, unless it would regress (delivered
        never goes back to sent). A SID of no outbound message is ``unknown``: nothing is
        written (a callback is never the first record of a message)."""
