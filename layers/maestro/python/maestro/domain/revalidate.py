"""Re-validation before resuming (I6): does what was asked still hold?

Before a held confirmation is released, an answer to a clarification acts, or an interrupted
context is resumed, every work order involved is checked against what it was when the question
was asked: still there, still the sender's, still in a state the operation allows, not
interrupted by an emergency since, and unchanged (version) since, or changed only in ways that
cannot matter (maestro's own activity touches). The deterministic rules settle almost everything;
what they cannot (the PM edited the summary, the urgency, the category) goes to a judge, which
the pipeline backs with ``decide()`` and whose default is "stale": ask, never act blindly. The
judge is shown each edited field before → after (:func:`changed_fields`), bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field

from maestro.domain.common import ELLIPSIS, Frozen
from maestro.domain.models import (
    SCHEDULABLE,
    Party,
    WoContent,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
)
from maestro.domain.records import RevalidationOutcome
from maestro.domain.roles import part_of

__all__ = [
    "Check",
    "ContentField",
    "FieldChange",
    "Judge",
    "Revalidation",
    "Target",
    "changed_fields",
    "revalidate",
    "stale_by_default",
]

Operation = Literal["cancel", "reschedule", "schedule", "relay", "rate", "complete"]

_NOT_FINISHED = frozenset(
    {
        WorkOrderStatus.OPEN,
        WorkOrderStatus.ASSIGNED,
        WorkOrderStatus.SCHEDULED,
        WorkOrderStatus.IN_PROGRESS,
        WorkOrderStatus.COMPLETION_REPORTED,
    }
)

_ALLOWED: dict[Operation, frozenset[WorkOrderStatus]] = {
    "cancel": _NOT_FINISHED,
    "reschedule": SCHEDULABLE,
    "schedule": SCHEDULABLE,
    "relay": _NOT_FINISHED,
    "rate": frozenset({WorkOrderStatus.COMPLETED}),
    # An open one too: a PM may close a request no vendor took (WorkOrder.close_unworked).
    "complete": _NOT_FINISHED,
}


class Target(Frozen):
    """One work order an answer would act on, and what it was when the question was asked."""

    wo_id: str
    operation: Operation
    asked_at: datetime
    then: WoSnapshot | None = Field(default=None, description="None: not known, not compared")
    current: WorkOrder | None = Field(description="As stored now; None if it no longer exists")
    interrupted_at: datetime | None = None


class Check(Frozen):
    wo_id: str
    outcome: RevalidationOutcome
    why: str
    settled_by: Literal["rules", "judge"] = "rules"


class Revalidation(Frozen):
    """The outcome over every target: valid only when all are; superseded beats stale."""

    outcome: RevalidationOutcome
    checks: tuple[Check, ...]

    @property
    def valid_ids(self) -> tuple[str, ...]:
        return tuple(c.wo_id for c in self.checks if c.outcome == "valid")

    @property
    def invalid(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.outcome != "valid")

    def summary(self) -> str:
        """What changed, in words the party can read (empty when all is valid)."""
        return "; ".join(f"{c.wo_id} {c.why}" for c in self.invalid)


ContentField = Literal["summary", "category", "urgency", "unit"]
_CONTENT_FIELDS: tuple[ContentField, ...] = ("summary", "category", "urgency", "unit")


class FieldChange(Frozen):
    """One content field an edit changed, before → after, each cut to
    :data:`maestro.domain.models.SNAPSHOT_VALUE_CHARS` (a cut value ends in "…"); no unit is
    "". ``before`` is None only when the question's snapshot predates the stored content."""

    field: ContentField
    before: str | None
    after: str


def _values(content: WoContent) -> dict[ContentField, str]:
    return {
        "summary": content.summary,
        "category": content.category,
        "urgency": content.urgency.value,
        "unit": content.unit or "",
    }


def changed_fields(then: WoSnapshot, now: WorkOrder) -> tuple[FieldChange, ...]:
    """The content fields that differ between the snapshot and the work order as it is now.

    Compared on the bounded values the snapshot keeps: an edit past the bound (the same first
    300 characters) shows the field whose value was cut, before and after alike. A snapshot
    without its content (stored before it kept one) shows every field, before unknown."""
    after = _values(WoContent.of(now))
    if then.fields is None:
        return tuple(FieldChange(field=f, before=None, after=after[f]) for f in _CONTENT_FIELDS)
    before = _values(then.fields)
    changes = tuple(
        FieldChange(field=f, before=before[f], after=after[f])
        for f in _CONTENT_FIELDS
        if before[f] != after[f]
    )
    if changes or not then.content_changed(now):
        return changes
    # The digest (of the whole text) differs but the bounded values do not: the edit lies past
    # the bound, in a field that was cut (every field, should none have been).
    cut = tuple(f for f in _CONTENT_FIELDS if before[f].endswith(ELLIPSIS))
    return tuple(
        FieldChange(field=f, before=before[f], after=after[f]) for f in cut or _CONTENT_FIELDS
    )


Judge = Callable[[Target, tuple[FieldChange, ...]], RevalidationOutcome]
"""For what the rules cannot settle: the target and the fields that changed, before → after."""


def stale_by_default(_target: Target, _changed: tuple[FieldChange, ...]) -> RevalidationOutcome:
    """The judge when no model is plugged in: ask rather than act."""
    return "stale"


def revalidate(
    targets: Sequence[Target], sender: Party | None, judge: Judge = stale_by_default
) -> Revalidation:
    checks = tuple(_check(target, sender, judge) for target in targets)
    outcomes = {c.outcome for c in checks}
    outcome: RevalidationOutcome = (
        "superseded" if "superseded" in outcomes else "stale" if "stale" in outcomes else "valid"
    )
    return Revalidation(outcome=outcome, checks=checks)


def _check(target: Target, sender: Party | None, judge: Judge) -> Check:
    wo = target.current
    if wo is None:
        return Check(wo_id=target.wo_id, outcome="stale", why="no longer exists")
    if part_of(sender, wo) is None:
        return Check(wo_id=wo.wo_id, outcome="stale", why="is no longer yours")
    if target.interrupted_at is not None and target.interrupted_at > target.asked_at:
        return Check(
            wo_id=wo.wo_id,
            outcome="superseded",
            why="was interrupted by the emergency you reported since",
        )
    if wo.status not in _ALLOWED[target.operation]:
        state = wo.status.value.replace("_", " ")
        return Check(wo_id=wo.wo_id, outcome="stale", why=f"is {state} now")
    then = target.then
    if then is None or wo.version == then.version:
        return Check(wo_id=wo.wo_id, outcome="valid", why="unchanged since I asked")
    decisive = then.decisive_changes(wo)
    if decisive:
        return Check(wo_id=wo.wo_id, outcome="stale", why=" and ".join(decisive) + " since I asked")
    if not then.content_changed(wo):
        # Only activity (a note relayed, a proposal passed on): nothing the answer rests on.
        return Check(wo_id=wo.wo_id, outcome="valid", why="only touched since I asked")
    outcome = judge(target, changed_fields(then, wo))
    return Check(
        wo_id=wo.wo_id,
        outcome=outcome,
        why="was edited since I asked"
        if outcome != "valid"
        else "edited, not in a way that matters",
        settled_by="judge",
    )
