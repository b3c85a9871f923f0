"""After a work order opens: the records of its dispatch run (gather → judge → dispatch).

One Step Functions execution per work order (``statemachines/work_order.asl.json``, named by
the WO id) moves a WO from "opened" to "a vendor accepted" or "the on-call PM was paged". Its
steps keep one record per WO, :class:`DispatchRun`: what was gathered from the tenant, the
judgment (priority, trade, budget, approval, the ranked vendors), each offer and its outcome,
and the wait it is in now, if any (:class:`Wait`: whose answer it waits for, with the task token
the package pipeline completes when that answer comes).

An open wait is a pending item of the party it waits for, as a clarification is: a vendor's "1"
or "can't" answers their open offer, a PM's YES their approval, deterministically (resolve),
never a new problem, a rating or a note. What completes a wait travels as :class:`WaitAnswer`
(the task's output): ids and item names only, never what someone wrote, since an execution's
history cannot be erased.

Pure: no I/O.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from maestro.domain.common import AwareDatetime, Frozen
from maestro.domain.directory import Trade
from maestro.domain.models import Urgency

__all__ = [
    "DISPATCH_EVENT_PREFIX",
    "GATHER_ITEMS",
    "MAX_OFFERS",
    "DispatchRun",
    "DispatchStep",
    "GatherItem",
    "Gathered",
    "Judgment",
    "Offer",
    "OfferOutcome",
    "RankedVendor",
    "Wait",
    "WaitAnswer",
    "WaitKind",
    "run_package_id",
]

MAX_OFFERS = 3
"""Vendors offered the job, one after another, before the on-call PM is paged (the ASL has one
state per offer, "Dispatch: offer to vendor N of 3", so the console shows which one)."""

DISPATCH_EVENT_PREFIX = "dispatch:"

GatherItem = Literal["trade", "location", "access", "pets", "availability", "photo"]
GATHER_ITEMS: tuple[GatherItem, ...] = (
    "trade",
    "location",
    "access",
    "pets",
    "availability",
    "photo",
)

WaitKind = Literal["gather", "approval", "offer"]
OfferOutcome = Literal["open", "accepted", "declined", "timed_out", "withdrawn"]
DispatchStep = Literal[
    "gathering",
    "judging",
    "awaiting_approval",
    "offering",
    "assigned",
    "refused_by_pm",
    "no_vendor",
    "closed",
]
"""Where the run is: the last three and ``assigned`` are final."""


def run_package_id(wo_id: str) -> str:
    """What a dispatch run's events and ledger rows carry as their package id: the run is not a
    package, and its rows are read by WO (the ledger's by_wo index) or by this id."""
    return f"{DISPATCH_EVENT_PREFIX}{wo_id}"


class Wait(Frozen):
    """The task token an execution waits on, and whose answer completes it."""

    kind: WaitKind
    token: str = Field(min_length=1, description="The task token (SendTaskSuccess with it)")
    party_id: str = Field(min_length=1, description="Whose answer completes it")
    started_at: AwareDatetime
    deadline: AwareDatetime = Field(description="When the state times out (States.Timeout)")
    offer_index: int | None = Field(default=None, ge=1, le=MAX_OFFERS)
    vendor_id: str | None = None
    question_sid: str | None = Field(default=None, description="The text that asked")


class WaitAnswer(Frozen):
    """A wait's task output (SendTaskSuccess): what answered it, never the words themselves."""

    kind: WaitKind
    answer: Literal["accept", "decline", "approve", "refuse", "details", "withdrawn"]
    party_id: str | None = Field(default=None, description="Who answered (None: maestro)")
    package_id: str | None = Field(default=None, description="The package that answered")
    items: tuple[GatherItem, ...] = Field(
        default=(), description="For a gather answer: the items it gave"
    )
    reason: str = Field(default="", max_length=200, description="Why, for a withdrawal")


class Gathered(Frozen):
    """What the tenant told about the job before a vendor is asked (references, not bodies: the
    words are on the WO's timeline, which an erase reaches)."""

    asked: tuple[GatherItem, ...] = Field(default=(), description="What the one question asked")
    have: tuple[GatherItem, ...] = Field(default=(), description="What is known now")
    answered_by: tuple[str, ...] = Field(default=(), description="Packages that answered")
    photos: tuple[str, ...] = Field(default=(), description="Timeline entry ids of media")
    by_deadline: bool = Field(default=False, description="Went on at the deadline unanswered")
    skipped: str | None = Field(default=None, description="Why gather was skipped, if it was")


class RankedVendor(Frozen):
    vendor_id: str
    name: str
    rank: int = Field(ge=1)
    after_hours: bool = False
    open_jobs: int = Field(default=0, ge=0)
    rating: float | None = Field(default=None, description="Mean of recent ratings, if any")
    why: str = Field(default="", max_length=200)


class Judgment(Frozen):
    """Judge's decision, with its reasons (also recorded as a decision in the log)."""

    priority: Urgency
    trade: Trade
    nte_usd: int = Field(ge=0, description="Not to exceed, in US dollars")
    approval_needed: bool
    after_hours: bool = Field(description="Outside the property's business hours now")
    vendors: tuple[RankedVendor, ...] = Field(max_length=MAX_OFFERS)
    reasons: tuple[str, ...] = ()
    offer_timeout_seconds: int = Field(ge=1, description="Each offer's wait, by priority")


class Offer(Frozen):
    index: int = Field(ge=1, le=MAX_OFFERS)
    vendor_id: str
    sent_at: AwareDatetime
    sid: str | None = Field(default=None, description="The offer text's SID")
    outcome: OfferOutcome = "open"
    answered_at: AwareDatetime | None = None
    by_package: str | None = None


class DispatchRun(Frozen):
    """One WO's dispatch: written by its execution's steps, read by the package pipeline (the
    open wait), the watcher and `maestro wo show`. Versioned: every write is conditional."""

    wo_id: str = Field(min_length=1)
    execution_arn: str = Field(default="", description="The WO's execution, for the console")
    step: DispatchStep = "gathering"
    started_at: AwareDatetime
    updated_at: AwareDatetime
    version: int = Field(default=1, ge=1)
    gathered: Gathered | None = None
    judgment: Judgment | None = None
    approval: Literal["pending", "approved", "refused", "timed_out"] | None = None
    approver_id: str | None = None
    offers: tuple[Offer, ...] = ()
    waiting: Wait | None = None
    outcome: str = Field(default="", max_length=300, description="How it ended, in words")

    @property
    def final(self) -> bool:
        return self.step in ("assigned", "refused_by_pm", "no_vendor", "closed")

    def changed(self, at: datetime, **changes: object) -> DispatchRun:
        return self.model_validate(
            {**self.model_dump(), **changes, "version": self.version + 1, "updated_at": at}
        )
