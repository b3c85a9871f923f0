"""Every domain event maestro publishes, one pydantic schema per type: the claims.

An effect publishes its event in every environment (no eval flag): the event says *when* and
*what is claimed*; the watcher reads the surface the claim names and says what is real
(Evidence) or not (Shame). So each claim carries what was written and where (``subject_id`` on
its surface, the ids), never a judgement of its own.

Each type, its ``subject_id`` and the surface the watcher reads:

- ``message.sent`` (the message SID): the messenger's surface, Twilio's Messages API (or the
  messages table for the recording messenger); claims the recipient's and the body's SHA-256
  and which messenger.
- ``escalation.paged`` (the page's SID): the same surface; the recipient's SHA-256, reason,
  severity (and who was paged and why: docs/on-call.md).
- ``wo.created`` (the WO id): the WO store; the summary's SHA-256, status, tenant, version.
- ``wo.updated`` (the WO id): the WO store and its timeline; version, status, what changed
  (a note as its SHA-256).
- ``rating.recorded`` (the WO id): the WO store and its timeline; stars, version.
- ``confirm.held`` / ``confirm.released`` (the confirmation id): the pending store;
  operation, WO ids, status.
- ``clarification.asked`` (the clarification id): the pending store; the question's hash and
  the candidates.
- ``decision.recorded`` (the package id): the decision log; decisions, route.
- A work order's dispatch run (docs/dispatch.md; package id ``dispatch:<WO id>``, subject the
  WO id): ``wo.gathered`` (the run record: what was asked and what is known),
  ``wo.approval_requested`` (the PM's text by SID, and the run awaiting approval),
  ``wo.offered`` (the offer text by SID, and the offer on the run), ``wo.dispatched`` (the WO
  read back: its vendor and ``assigned`` status) and ``wo.dispatch_failed`` (the run's outcome,
  and the PM's page by SID when one was sent).

Events carry ids and digests, never a phone number or anything someone wrote: the bus's
archive cannot be edited, so a person's erasure (docs/erase-and-retention.md) could not reach
a body quoted there. The watcher reads the surface and compares digests, which is as strict.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from maestro.domain.common import AwareDatetime, Frozen

__all__ = [
    "CLAIMS",
    "ClaimValue",
    "DomainEvent",
    "Effect",
    "EventType",
    "body_digest",
    "sent_claim",
]

EventType = Literal[
    "message.sent",
    "wo.created",
    "wo.updated",
    "rating.recorded",
    "confirm.held",
    "confirm.released",
    "clarification.asked",
    "escalation.paged",
    "decision.recorded",
    "wo.gathered",
    "wo.approval_requested",
    "wo.offered",
    "wo.dispatched",
    "wo.dispatch_failed",
]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)

ClaimValue = str | int | bool | None


def body_digest(text: str) -> str:
    """The SHA-256 of a text (a body, a note, a phone number): what a claim carries instead of
    the text, so the watcher can compare it whole and the event quotes nobody."""
    return hashlib.sha256(text.encode()).hexdigest()


def sent_claim(to: str, body: str, via: str) -> dict[str, ClaimValue]:
    """A ``message.sent`` claim: digests of the recipient and the body, and the messenger."""
    return claim_dict(
        "message.sent",
        {"to_sha256": body_digest(to), "body_sha256": body_digest(body), "via": via},
    )


class Claim(BaseModel):
    """What an event says was written. Closed: an unknown field is a schema failure."""

    model_config = ConfigDict(frozen=True, extra="forbid")


_SHA256 = r"^[0-9a-f]{64}$"


class MessageSent(Claim):
    to_sha256: str = Field(pattern=_SHA256, description="Of the recipient's E.164 number")
    body_sha256: str = Field(pattern=_SHA256, description="Of the whole text")
    via: Literal["twilio", "recording"] = Field(
        description="Which messenger: Twilio sends; the recording messenger only records"
    )


class EscalationPaged(Claim):
    to_sha256: str = Field(pattern=_SHA256, description="Of the paged E.164 number")
    reason: str
    severity: str
    why: str | None = Field(
        default=None, description="Why this number: whose it is (docs/on-call.md)"
    )
    person_id: str | None = Field(default=None, description="The PM paged, when the directory's")


class WoCreated(Claim):
    summary_sha256: str = Field(pattern=_SHA256, description="Of the WO's summary")
    status: str
    tenant_id: str
    version: int = Field(ge=1)


class WoUpdated(Claim):
    entry_id: str = Field(description="The timeline entry the write appended")
    entry: Literal["note", "visit", "status"]
    version: int = Field(ge=1, description="The WO's version the write left")
    status: str = Field(description="The WO's status the write left")
    note_sha256: str | None = Field(default=None, pattern=_SHA256, description="Of the note")
    window: str | None = None
    mode: str | None = None
    operation: str | None = None


class RatingRecorded(Claim):
    entry_id: str = Field(description="The timeline entry the rating appended")
    stars: int = Field(ge=1, le=5)
    version: int = Field(ge=1)


class ConfirmHeld(Claim):
    operation: str
    wo_ids: str = Field(description="Comma-separated, in the hold's order")
    status: Literal["held"] = "held"


class ConfirmReleased(Claim):
    operation: str
    wo_ids: str
    status: Literal["released"] = "released"


class ClarificationAsked(Claim):
    question_sha256: str = Field(pattern=_SHA256)
    candidates: str = Field(description="Comma-separated candidate ids, in the asked order")


class DecisionRecorded(Claim):
    decisions: int = Field(ge=0)
    appended: int = Field(ge=0)
    route: str


class WoGathered(Claim):
    asked: str = Field(description="Comma-separated items the one question asked ('' if none)")
    have: str = Field(description="Comma-separated items known now")
    by: Literal["tenant", "deadline", "skipped", "nothing_missing"]
    run_version: int = Field(ge=1, description="The dispatch run's version the step left")


class WoApprovalRequested(Claim):
    sid: str = Field(description="The text asking the PM")
    to_sha256: str = Field(pattern=_SHA256)
    body_sha256: str = Field(pattern=_SHA256)
    nte_usd: int = Field(ge=0)
    person_id: str | None = None
    run_version: int = Field(ge=1)


class WoOffered(Claim):
    offer_index: int = Field(ge=1)
    vendor_id: str
    sid: str = Field(description="The offer text")
    to_sha256: str = Field(pattern=_SHA256)
    body_sha256: str = Field(pattern=_SHA256)
    run_version: int = Field(ge=1)


class WoDispatched(Claim):
    vendor_id: str
    status: Literal["assigned"] = "assigned"
    version: int = Field(ge=1, description="The WO's version the assignment left")


class WoDispatchFailed(Claim):
    reason: Literal["no_vendor", "refused_by_pm", "approval_timed_out", "closed"]
    offers: int = Field(ge=0, description="How many vendors were offered the job")
    paged_sid: str | None = Field(default=None, description="The PM's page, when one was sent")
    run_version: int = Field(ge=1)


CLAIMS: dict[EventType, type[Claim]] = {
    "message.sent": MessageSent,
    "escalation.paged": EscalationPaged,
    "wo.created": WoCreated,
    "wo.updated": WoUpdated,
    "rating.recorded": RatingRecorded,
    "confirm.held": ConfirmHeld,
    "confirm.released": ConfirmReleased,
    "clarification.asked": ClarificationAsked,
    "decision.recorded": DecisionRecorded,
    "wo.gathered": WoGathered,
    "wo.approval_requested": WoApprovalRequested,
    "wo.offered": WoOffered,
    "wo.dispatched": WoDispatched,
    "wo.dispatch_failed": WoDispatchFailed,
}
if set(CLAIMS) != set(EVENT_TYPES):  # pragma: no cover - holds by construction
    raise AssertionError(f"event types without a schema: {set(EVENT_TYPES) - set(CLAIMS)}")


def claim_dict(type_: EventType, claim: dict[str, Any]) -> dict[str, ClaimValue]:
    """``claim`` validated against its type's schema, as the event carries it (unset optional
    fields left out)."""
    validated = CLAIMS[type_].model_validate(claim)
    return validated.model_dump(mode="json", exclude_none=True)


class DomainEvent(Frozen):
    """What an effect claims happened. Always published, in every environment: the watcher
    reads the real surface and confirms it (Evidence) or not (Shame)."""

    event_id: str = Field(description="Deterministic: a re-run publishes the same id")
    type: EventType
    package_id: str
    decision_id: str | None = Field(
        default=None, description="The decision whose action made the effect"
    )
    action_index: int | None = None
    subject_id: str = Field(description="What to read back: a WO id, a message SID, a decision")
    wo_id: str | None = Field(default=None, description="The work order the effect concerns")
    claim: dict[str, ClaimValue] = Field(default_factory=dict)
    occurred_at: AwareDatetime

    @model_validator(mode="after")
    def _claim_fits_its_schema(self) -> DomainEvent:
        CLAIMS[self.type].model_validate(self.claim)
        return self

    def typed_claim(self) -> Claim:
        return CLAIMS[self.type].model_validate(self.claim)


class Effect(Frozen):
    """What an action wrote, recorded by the code that wrote it, apart from the event that
    claims it: the sweeper expects one event per effect (``missing_event`` otherwise)."""

    event: EventType = Field(description="The event that must claim this effect")
    subject_id: str
