"""The typed contract between the work order machine (``statemachines/work_order.asl.json``)
and its steps.

One execution per WO carries one JSON document from state to state, as the package pipeline's
does (:mod:`maestro.pipeline.contract`): the input (the WO id), each step's result at its
``ResultPath``, and each wait's answer, or the timeout that ended it, at ``$.answers.<wait>``.
Ids and item names only: what a person wrote never enters an execution, whose history cannot
be erased (the words are on the WO's timeline and the dispatch run). Each step validates its
payload against these models, and ``tests/unit/test_dispatch_contract.py`` checks every path,
payload and error name of the ASL against them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from maestro.domain.common import Frozen
from maestro.domain.directory import Trade
from maestro.domain.dispatch import MAX_OFFERS, GatherItem, WaitAnswer, WaitKind
from maestro.domain.models import Urgency
from maestro.pipeline.contract import StepError

__all__ = [
    "AnswerOrTimeout",
    "Answers",
    "AskPayload",
    "AssignPayload",
    "AssignResult",
    "GatherPayload",
    "GatherResult",
    "JudgeResult",
    "PagePayload",
    "PageReason",
    "PageResult",
    "RecordOutcome",
    "RecordPayload",
    "RecordResult",
    "WoExecutionInput",
    "WoExecutionState",
    "WoPayload",
]


class WoExecutionInput(Frozen):
    """What wo_start starts an execution with (its name is the WO id)."""

    wo_id: str = Field(min_length=1)


class WoPayload(Frozen):
    wo_id: str = Field(min_length=1)


class GatherPayload(WoPayload):
    execution: str = Field(min_length=1, description="$$.Execution.Id, for the run and console")


class GatherResult(Frozen):
    missing: tuple[GatherItem, ...] = Field(description="What the one question will ask for")
    skip: str | None = Field(default=None, description="Why gather asks nothing, if it skips")
    deadline_seconds: int = Field(ge=1, description="The gather wait's TimeoutSecondsPath")


class JudgeResult(Frozen):
    """The judgment as the execution needs it to choose (the whole one is on the run)."""

    priority: Urgency
    trade: Trade
    nte_usd: int = Field(ge=0)
    approval_needed: bool
    after_hours: bool
    vendors: tuple[str, ...] = Field(max_length=MAX_OFFERS, description="Vendor ids, by rank")
    offer_timeout_seconds: int = Field(ge=1, description="Each offer's TimeoutSecondsPath")
    approval_timeout_seconds: int = Field(ge=1, description="The approval's TimeoutSecondsPath")


class AskPayload(WoPayload):
    """What wo_ask receives with its task token (``lambda:invoke.waitForTaskToken``)."""

    token: str = Field(min_length=1)
    execution: str = Field(min_length=1)
    kind: WaitKind
    offer_index: int | None = Field(default=None, ge=1, le=MAX_OFFERS)
    timeout_seconds: int = Field(ge=1, description="The state's timeout: the wait's deadline")


AnswerOrTimeout = WaitAnswer | StepError
"""A wait's result: its answer (SendTaskSuccess), or the States.Timeout its Catch put there."""


class Answers(Frozen):
    """Each wait's result, one field per waiting state (the states are unrolled)."""

    gather: AnswerOrTimeout | None = None
    approval: AnswerOrTimeout | None = None
    offer_1: AnswerOrTimeout | None = None
    offer_2: AnswerOrTimeout | None = None
    offer_3: AnswerOrTimeout | None = None


class RecordPayload(WoPayload):
    kind: WaitKind
    offer_index: int | None = Field(default=None, ge=1, le=MAX_OFFERS)
    answer: AnswerOrTimeout


RecordOutcome = Literal[
    "answered", "timed_out", "withdrawn", "approved", "refused", "accepted", "declined"
]


class RecordResult(Frozen):
    outcome: RecordOutcome


class AssignPayload(WoPayload):
    offer_index: int = Field(ge=1, le=MAX_OFFERS)


class AssignResult(Frozen):
    vendor_id: str
    version: int = Field(ge=1, description="The WO's version the assignment left")


PageReason = Literal["no_vendor", "refused_by_pm", "approval_timed_out"]


class PagePayload(WoPayload):
    reason: PageReason


class PageResult(Frozen):
    paged_sid: str | None = Field(description="The page's SID; None when none was sent")


class WoExecutionState(WoExecutionInput):
    """The execution's state as it grows: each field is one state's ResultPath."""

    gather: GatherResult | None = None
    answers: Answers | None = None
    recorded: RecordResult | None = None
    judged: JudgeResult | None = None
    assigned: AssignResult | None = None
    paged: PageResult | None = None
    stopped: StepError | None = Field(default=None, description="Why it stopped (WO closed)")
    failure: StepError | None = None
