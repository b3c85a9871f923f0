"""Parties, messages, packages, work orders and open contexts."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, model_validator

from maestro.domain.common import E164, AwareDatetime, Frozen, truncate


def conversation_id_for(party_phone: str) -> str:
    """One conversation per outside phone number, across channels.

    Everything one person says is then packaged, leased and routed in one order.
    """
    return "conv-" + hashlib.sha256(party_phone.encode()).hexdigest()[:24]


class PartyRole(StrEnum):
    TENANT = "tenant"
    VENDOR = "vendor"
    PM = "pm"


class Party(Frozen):
    """A person known by phone number. An unknown number is never bound to a Party by guess."""

    party_id: str = Field(min_length=1)
    role: PartyRole
    phone: E164
    name: str = ""
    unit: str | None = None
    # From the directory (docs/directory.md): the properties this party belongs to (a tenant's
    # unit's property, a PM's managed properties, a vendor's served ones or ``*``), the language
    # they read (None: taken from their message), and whether they agreed to texts at all.
    property_ids: tuple[str, ...] = ()
    language: str | None = None
    sms_consent: bool = True


class Route(StrEnum):
    ESCALATE = "escalate"
    REASONING = "reasoning"
    HANDBACK = "handback"


class PreCheckResult(Frozen):
    """The cheap triage before any mutation (I1). When unsure, it says ``reasoning``."""

    route: Route
    severity: Literal["none", "low", "urgent", "emergency"] = "none"
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str = Field(default="", max_length=400)
    source: Literal["safety_floor", "model", "default"] = "default"
    fallback: bool = False


class Channel(StrEnum):
    SMS = "sms"
    VOICE = "voice"
    IN_APP = "in_app"


Attestation = Literal["A", "B", "C"]
"""A STIR/SHAKEN attestation that passed verification: A, the carrier vouches that the caller
may use the number; B and C vouch for less (the customer, the gateway)."""

VERSTAT_ATTESTATION: dict[str, Attestation] = {
    "TN-Validation-Passed-A": "A",
    "TN-Validation-Passed-B": "B",
    "TN-Validation-Passed-C": "C",
}
"""Twilio's ``StirVerstat`` values whose signature verified, by their attestation. Every other
value (``TN-Validation-Failed-*``, ``No-TN-Validation``, absent, unknown) vouches for nothing."""


def attestation_of(verstat: str | None) -> Attestation | None:
    """The attestation a ``StirVerstat`` value proves, or None: only an exact passed verdict."""
    return VERSTAT_ATTESTATION.get(verstat or "")


MAX_MEDIA = 10
"""Files one message may carry: Twilio sends at most 10 (``MediaUrl0`` … ``MediaUrl9``)."""
MAX_MEDIA_URL_CHARS = 2_048
MAX_MEDIA_TYPE_CHARS = 127
MEDIA_URL_PATTERN = r"^https?://\S+$"
MEDIA_TYPE_PATTERN = r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$"
"""A MIME type without parameters, as Twilio's ``MediaContentType{N}`` gives it ("image/jpeg")."""


class MediaRef(Frozen):
    """A file someone sent with a message (an MMS photo): a reference, never the bytes. The URL
    is where the provider keeps it (Twilio's media URL, behind the account's credentials)."""

    url: str = Field(max_length=MAX_MEDIA_URL_CHARS, pattern=MEDIA_URL_PATTERN)
    content_type: str | None = Field(
        default=None,
        max_length=MAX_MEDIA_TYPE_CHARS,
        pattern=MEDIA_TYPE_PATTERN,
        description="Its MIME type as the provider gave it (None: not given)",
    )

    @property
    def is_photo(self) -> bool:
        return (self.content_type or "").startswith("image/")


def media_of(messages: Sequence[Message], limit: int = 2 * MAX_MEDIA) -> tuple[MediaRef, ...]:
    """The files a run of messages carried, in order, each URL once, at most ``limit``."""
    seen: dict[str, MediaRef] = {}
    for message in messages:
        for ref in message.media:
            seen.setdefault(ref.url, ref)
    return tuple(seen.values())[:limit]


class Message(Frozen):
    """One inbound SMS, call transcript or in-app message, keyed by the provider's id."""

    message_id: str = Field(min_length=1, description="Provider id, e.g. Twilio MessageSid")
    conversation_id: str = Field(min_length=1)
    channel: Channel = Channel.SMS
    from_phone: E164
    to_phone: E164 | None = None
    body: str = ""
    media: tuple[MediaRef, ...] = Field(default=(), max_length=MAX_MEDIA)
    received_at: AwareDatetime
    seq: int = Field(ge=0, description="Position in the conversation, assigned at ingestion")
    probe: PreCheckResult | None = Field(
        default=None, description="The severity probe's answer, once the cheap model read it"
    )
    attestation: Attestation | None = Field(
        default=None,
        description="A call's verified STIR/SHAKEN attestation (Twilio's StirVerstat), if any",
    )

    @model_validator(mode="before")
    @classmethod
    def _stored_before_content_types(cls, data: Any) -> Any:
        """A message stored before media kept their content type held ``media_urls`` only."""
        if isinstance(data, dict) and "media_urls" in data:
            data = dict(data)
            urls = data.pop("media_urls") or ()
            if urls and not data.get("media"):
                data["media"] = [{"url": url} for url in urls]
        return data

    @property
    def media_urls(self) -> tuple[str, ...]:
        return tuple(ref.url for ref in self.media)

    @property
    def unverified_call(self) -> bool:
        """A call whose caller ID nothing vouches for: anyone can set the number a call shows,
        so only attestation A says the number's owner is speaking."""
        return self.channel is Channel.VOICE and self.attestation != "A"

    def answers_on(self, channel: Channel) -> bool:
        """Whether this message may answer a question asked on ``channel``: it came on that
        channel, or it is a call whose caller ID attestation A vouches for."""
        return self.channel is channel or (
            self.channel is Channel.VOICE and self.attestation == "A"
        )


class FlushTrigger(StrEnum):
    KICKOFF = "kickoff"
    CONVERSATION_ENDED = "conversation_ended"
    IDLE_TIMEOUT = "idle_timeout"
    URGENCY_EXPEDITE = "urgency_expedite"
    MAX_WAIT = "max_wait"


def package_id_for(conversation_id: str, flush_number: int) -> str:
    """The deterministic package id for a conversation's n-th flush.

    Deterministic so that a redelivered flush starts the same (idempotently named) execution.
    """
    digest = hashlib.sha256(f"{conversation_id}#{flush_number}".encode()).hexdigest()[:16]
    return f"pkg-{digest}-{flush_number}"


class Package(Frozen):
    """The unit of routing: the messages one flush hands over, in order."""

    package_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    flush_number: int = Field(ge=0)
    trigger: FlushTrigger
    sender_phone: E164
    messages: tuple[Message, ...] = Field(min_length=1)
    flushed_at: AwareDatetime

    @model_validator(mode="after")
    def _messages_belong_and_are_ordered(self) -> Package:
        seqs = [m.seq for m in self.messages]
        if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
            raise ValueError("package messages must be in strictly increasing seq order")
        if any(m.conversation_id != self.conversation_id for m in self.messages):
            raise ValueError("every message of a package must belong to its conversation")
        return self

    @property
    def text(self) -> str:
        """The package's text, one message per line."""
        return "\n".join(m.body for m in self.messages if m.body)

    @property
    def by_unverified_call(self) -> bool:
        """Some of its words came by a call whose caller ID nothing vouches for: what they ask
        to change is held until the number's owner confirms it by text."""
        return any(m.unverified_call for m in self.messages)

    @property
    def media(self) -> tuple[MediaRef, ...]:
        """The files its messages carried (references), each once, bounded."""
        return media_of(self.messages)

    def answers_on(self, channel: Channel) -> bool:
        """Whether the package may answer a question asked on ``channel``: every message did."""
        return all(m.answers_on(channel) for m in self.messages)


class WorkOrderStatus(StrEnum):
    OPEN = "open"
    ASSIGNED = "assigned"
    SCHEDULED = "scheduled"
    IN_PROGRESS = "in_progress"
    COMPLETION_REPORTED = "completion_reported"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


TERMINAL_STATUSES = frozenset({WorkOrderStatus.COMPLETED, WorkOrderStatus.CANCELLED})

# The lifecycle: open → assigned (a vendor accepted the dispatch offer) → scheduled →
# in_progress → completion_reported (the vendor says it is done; the tenant is asked) →
# completed | cancelled. A visit can be booked before dispatch (open → scheduled) or start
# unscheduled (open | assigned → in_progress); a vendor may report any job they hold done;
# the tenant's complaint reopens a reported job to its vendor (→ assigned); a PM may close a
# job that has a vendor (→ completed), and anything not finished can be cancelled.
# open → completed is not in the table: nothing goes from open to done on its own. Only a PM's
# close does it, through :meth:`WorkOrder.close_unworked` (a request no vendor took, finished
# without one: the tenant fixed it, it is no longer needed), and it asks for no rating.
_WORKING = frozenset(
    {WorkOrderStatus.ASSIGNED, WorkOrderStatus.SCHEDULED, WorkOrderStatus.IN_PROGRESS}
)
ALLOWED_TRANSITIONS: dict[WorkOrderStatus, frozenset[WorkOrderStatus]] = {
    WorkOrderStatus.OPEN: frozenset(
        {
            WorkOrderStatus.ASSIGNED,
            WorkOrderStatus.SCHEDULED,
            WorkOrderStatus.IN_PROGRESS,
            WorkOrderStatus.CANCELLED,
        }
    ),
    WorkOrderStatus.ASSIGNED: frozenset(
        {
            WorkOrderStatus.SCHEDULED,
            WorkOrderStatus.IN_PROGRESS,
            WorkOrderStatus.COMPLETION_REPORTED,
            WorkOrderStatus.COMPLETED,
            WorkOrderStatus.CANCELLED,
        }
    ),
    WorkOrderStatus.SCHEDULED: frozenset(
        {
            WorkOrderStatus.IN_PROGRESS,
            WorkOrderStatus.COMPLETION_REPORTED,
            WorkOrderStatus.COMPLETED,
            WorkOrderStatus.CANCELLED,
        }
    ),
    WorkOrderStatus.IN_PROGRESS: frozenset(
        {
            WorkOrderStatus.COMPLETION_REPORTED,
            WorkOrderStatus.COMPLETED,
            WorkOrderStatus.CANCELLED,
        }
    ),
    WorkOrderStatus.COMPLETION_REPORTED: frozenset(
        {WorkOrderStatus.COMPLETED, WorkOrderStatus.ASSIGNED, WorkOrderStatus.CANCELLED}
    ),
    WorkOrderStatus.COMPLETED: frozenset(),
    WorkOrderStatus.CANCELLED: frozenset(),
}

REPORTABLE = _WORKING
"""Where a vendor's "it's done" applies: a job they hold, not yet reported or finished."""


SCHEDULABLE = frozenset({WorkOrderStatus.OPEN, WorkOrderStatus.ASSIGNED, WorkOrderStatus.SCHEDULED})
"""Where a visit can be booked or moved."""


class Urgency(StrEnum):
    ROUTINE = "routine"
    URGENT = "urgent"
    EMERGENCY = "emergency"


class InvalidTransitionError(ValueError):
    """A work-order change the lifecycle does not allow."""


class VisitWindow(Frozen):
    start: AwareDatetime
    end: AwareDatetime

    @model_validator(mode="after")
    def _ordered(self) -> VisitWindow:
        if self.end <= self.start:
            raise ValueError("a visit window must end after it starts")
        return self


class WorkOrder(Frozen):
    """The real record of a job. Every change returns a new WorkOrder with ``version + 1``."""

    wo_id: str = Field(min_length=1)
    tenant_id: str = Field(min_length=1)
    vendor_id: str | None = None
    unit: str | None = None
    property_id: str | None = Field(
        default=None, description="The property of the tenant's unit, from the directory"
    )
    summary: str = Field(min_length=1)
    category: str = "general"
    urgency: Urgency = Urgency.ROUTINE
    status: WorkOrderStatus = WorkOrderStatus.OPEN
    visit: VisitWindow | None = None
    rating_requested: bool = False
    rating: int | None = Field(default=None, ge=1, le=5)
    language: str | None = Field(
        default=None,
        description="The language the tenant wrote in when it was opened (the directory's, else "
        "the message's): what the work order's own texts to them use when the directory names "
        "none",
    )
    version: int = Field(default=1, ge=1)
    created_at: AwareDatetime
    updated_at: AwareDatetime

    @model_validator(mode="after")
    def _rating_rules(self) -> WorkOrder:
        if self.rating_requested and self.status is not WorkOrderStatus.COMPLETED:
            raise ValueError("a rating can only be requested for a completed work order")
        if self.rating_requested and self.rating is not None:
            raise ValueError("a rated work order has no rating request outstanding")
        return self

    @property
    def is_open(self) -> bool:
        return self.status not in TERMINAL_STATUSES

    @property
    def in_conversation(self) -> bool:
        """Open, or finished with a rating request out: something its parties may still answer."""
        return self.is_open or self.rating_requested

    def _changed(self, at: AwareDatetime, **changes: object) -> WorkOrder:
        return self.model_validate(
            {**self.model_dump(), **changes, "version": self.version + 1, "updated_at": at}
        )

    def transition(self, to: WorkOrderStatus, at: AwareDatetime) -> WorkOrder:
        if to not in ALLOWED_TRANSITIONS[self.status]:
            raise InvalidTransitionError(f"{self.wo_id}: {self.status} → {to} is not allowed")
        return self._changed(at, status=to)

    def assign(self, vendor_id: str, at: AwareDatetime) -> WorkOrder:
        """The vendor who accepted the dispatch offer; an open WO becomes assigned."""
        if WorkOrderStatus.ASSIGNED not in ALLOWED_TRANSITIONS[self.status]:
            raise InvalidTransitionError(f"{self.wo_id}: cannot assign a {self.status} work order")
        return self._changed(at, status=WorkOrderStatus.ASSIGNED, vendor_id=vendor_id)

    def schedule(self, window: VisitWindow, at: AwareDatetime) -> WorkOrder:
        """Set (or move) the visit window; an open WO becomes scheduled."""
        if self.status not in SCHEDULABLE:
            raise InvalidTransitionError(
                f"{self.wo_id}: cannot schedule a {self.status} work order"
            )
        return self._changed(at, status=WorkOrderStatus.SCHEDULED, visit=window.model_dump())

    def report_completion(self, at: AwareDatetime) -> WorkOrder:
        """The vendor says the job is done: the tenant is asked before it completes."""
        if self.status not in REPORTABLE or self.vendor_id is None:
            raise InvalidTransitionError(
                f"{self.wo_id}: a {self.status} work order cannot be reported done"
            )
        return self._changed(at, status=WorkOrderStatus.COMPLETION_REPORTED)

    def complete(self, at: AwareDatetime) -> WorkOrder:
        """Completed (the tenant confirmed the report, or a PM closed it), with the rating
        request out in the same write: a finished job is rated by its tenant."""
        if WorkOrderStatus.COMPLETED not in ALLOWED_TRANSITIONS[self.status]:
            raise InvalidTransitionError(f"{self.wo_id}: cannot complete a {self.status} one")
        return self._changed(at, status=WorkOrderStatus.COMPLETED, rating_requested=True)

    def close_unworked(self, at: AwareDatetime) -> WorkOrder:
        """A PM closes an open request no vendor took (the tenant sorted it, or it is no longer
        needed): completed, with no rating request (there is no vendor's work to rate). The
        lane allows it to a property manager only."""
        if self.status is not WorkOrderStatus.OPEN or self.vendor_id is not None:
            raise InvalidTransitionError(
                f"{self.wo_id}: only an open work order with no vendor is closed unworked"
            )
        return self._changed(at, status=WorkOrderStatus.COMPLETED)

    def reopen(self, at: AwareDatetime) -> WorkOrder:
        """The tenant says a reported job is not done: back to its vendor (assigned)."""
        if self.status is not WorkOrderStatus.COMPLETION_REPORTED:
            raise InvalidTransitionError(f"{self.wo_id}: only a reported job can be reopened")
        return self._changed(at, status=WorkOrderStatus.ASSIGNED)

    def request_rating(self, at: AwareDatetime) -> WorkOrder:
        if self.status is not WorkOrderStatus.COMPLETED:
            raise InvalidTransitionError(f"{self.wo_id}: only a completed work order can be rated")
        return self._changed(at, rating_requested=True)

    def record_rating(self, stars: int, at: AwareDatetime) -> WorkOrder:
        """Store a rating; only while a rating request is outstanding (invariant I7)."""
        if not self.rating_requested:
            raise InvalidTransitionError(f"{self.wo_id}: no rating request is outstanding")
        return self._changed(at, rating=stars, rating_requested=False)


SNAPSHOT_VALUE_CHARS = 300
"""How much of each content field a snapshot keeps (and the re-validation judge is shown): a
longer summary is cut there, ending in "…". The digest still covers the whole text."""


class WoContent(Frozen):
    """A work order's content fields as they were, each cut to :data:`SNAPSHOT_VALUE_CHARS`:
    what the re-validation judge is shown as "before" when the PM has edited them since."""

    summary: str
    category: str
    urgency: Urgency
    unit: str | None = None

    @classmethod
    def of(cls, wo: WorkOrder) -> WoContent:
        return cls(
            summary=truncate(wo.summary, SNAPSHOT_VALUE_CHARS),
            category=truncate(wo.category, SNAPSHOT_VALUE_CHARS),
            urgency=wo.urgency,
            unit=truncate(wo.unit, SNAPSHOT_VALUE_CHARS) if wo.unit else wo.unit,
        )


class WoSnapshot(Frozen):
    """What a question was asked about: a work order's version and the fields that decide
    whether an answer still applies (I6), plus a fingerprint of the rest of its content and
    that content, bounded (``fields``), so a judge can be shown what an edit changed.
    Compact on purpose: it is stored with every pending question and hold."""

    wo_id: str
    version: int = Field(ge=1)
    status: WorkOrderStatus
    tenant_id: str
    vendor_id: str | None = None
    visit_start: AwareDatetime | None = None
    rating_requested: bool = False
    content: str = Field(description="A digest of summary, category, urgency and unit")
    fields: WoContent | None = Field(
        default=None, description="The content itself, bounded; None in snapshots stored before"
    )

    @classmethod
    def of(cls, wo: WorkOrder) -> WoSnapshot:
        return cls(
            wo_id=wo.wo_id,
            version=wo.version,
            status=wo.status,
            tenant_id=wo.tenant_id,
            vendor_id=wo.vendor_id,
            visit_start=wo.visit.start if wo.visit else None,
            rating_requested=wo.rating_requested,
            content=_content_digest(wo),
            fields=WoContent.of(wo),
        )

    def decisive_changes(self, now: WorkOrder) -> tuple[str, ...]:
        """What changed that settles the matter at once, in words ("completed", "a new visit")."""
        changes: list[str] = []
        if now.status is not self.status:
            changes.append(f"is {now.status.value.replace('_', ' ')} now")
        if now.tenant_id != self.tenant_id or now.vendor_id != self.vendor_id:
            changes.append("changed hands")
        if (now.visit.start if now.visit else None) != self.visit_start:
            changes.append("has a new visit time")
        if now.rating_requested != self.rating_requested:
            changes.append("has a rating request " + ("out" if now.rating_requested else "closed"))
        return tuple(changes)

    def content_changed(self, now: WorkOrder) -> bool:
        return _content_digest(now) != self.content


def _content_digest(wo: WorkOrder) -> str:
    text = "\x1f".join((wo.summary, wo.category, wo.urgency.value, wo.unit or ""))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ContextKind(StrEnum):
    WORK_ORDER = "work_order"
    PENDING_CLARIFICATION = "pending_clarification"
    PENDING_CONFIRMATION = "pending_confirmation"


Awaiting = Literal["nothing", "availability", "rating", "answer", "confirmation"]


DEFAULT_CONTEXT_TTL = timedelta(hours=72)
MAX_CONTEXT_DESCRIPTION = 200


class OpenContext(Frozen):
    """Something the party has open, shown to the brain as one line with its id."""

    context_id: str = Field(min_length=1, description="The id an action targets, e.g. WO-204")
    kind: ContextKind
    description: str = Field(min_length=1, max_length=MAX_CONTEXT_DESCRIPTION)
    opened_at: AwareDatetime
    last_activity_at: AwareDatetime | None = None
    awaiting: Awaiting = "nothing"
    rating_requested: bool = False
    wo_id: str | None = Field(
        default=None, description="The work order this context concerns, if any"
    )
    relation: Literal["tenant", "vendor", "pm"] | None = Field(
        default=None,
        description="The sender's part in the work order (pm: a PM of its property)",
    )
    version: int | None = Field(default=None, description="The work order's version, if any")
    wo_status: WorkOrderStatus | None = Field(
        default=None,
        description="The work order's status, if any (a completed one stays open "
        "as a context while its rating request is out)",
    )
    asked_at: AwareDatetime | None = Field(
        default=None, description="When what it awaits was asked"
    )
    interrupted_at: AwareDatetime | None = Field(
        default=None, description="When an emergency last interrupted it (I1, I6)"
    )
    resume: Literal["valid", "stale", "superseded"] | None = Field(
        default=None, description="Whether what it awaits still holds, re-validated (I6)"
    )
    resume_note: str = Field(default="", max_length=200, description="What changed, if anything")

    @property
    def freshness_anchor(self) -> AwareDatetime:
        """When the context was last alive: last activity, else when it was opened."""
        return self.last_activity_at or self.opened_at

    def is_stale(self, now: AwareDatetime, ttl: timedelta = DEFAULT_CONTEXT_TTL) -> bool:
        """True when the context is past its TTL and must not be resumed blindly (I2)."""
        return now - self.freshness_anchor > ttl

    def line(self) -> str:
        """The one natural-language line the brain sees for this context."""
        waiting = "" if self.awaiting == "nothing" else f"; awaiting {self.awaiting}"
        return f"{self.context_id} ({self.kind.value}): {self.description}{waiting}"


def context_for_work_order(
    wo: WorkOrder,
    awaiting: Awaiting = "nothing",
    last_activity_at: AwareDatetime | None = None,
    *,
    party_id: str | None = None,
    asked_at: AwareDatetime | None = None,
    interrupted_at: AwareDatetime | None = None,
    manager: bool = False,
) -> OpenContext:
    """The open context a work order gives the parties on it (``manager``: the sender is a PM
    of its property, who has it as a context of theirs).

    The line is cut where it is built: a WO stores a summary and unit of any length, and a line
    too long for the context must never stop the conversation (the status is always kept).
    """
    tail = (f", unit {truncate(wo.unit, 40)}" if wo.unit else "") + f" [{wo.status}]"
    summary = truncate(wo.summary, MAX_CONTEXT_DESCRIPTION - len(tail))
    if wo.status is WorkOrderStatus.COMPLETION_REPORTED and party_id == wo.tenant_id:
        # The tenant was asked whether the job its vendor reported finished holds up.
        awaiting = "confirmation"
    return OpenContext(
        context_id=wo.wo_id,
        kind=ContextKind.WORK_ORDER,
        description=summary + tail,
        opened_at=wo.created_at,
        last_activity_at=last_activity_at or wo.updated_at,
        awaiting="rating" if wo.rating_requested else awaiting,
        rating_requested=wo.rating_requested,
        wo_id=wo.wo_id,
        relation=(
            "tenant"
            if party_id == wo.tenant_id
            else "vendor"
            if party_id is not None and party_id == wo.vendor_id
            else "pm"
            if manager
            else None
        ),
        version=wo.version,
        wo_status=wo.status,
        asked_at=asked_at,
        interrupted_at=interrupted_at,
    )
