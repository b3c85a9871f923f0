"""The typed contract between the package pipeline's state machine and its steps.

Step Functions carries one JSON document from state to state; each step reads it and returns its
piece, which the ASL places at a ``ResultPath``. These models are that document: the execution
input, the state as it grows, the Map's item and the step gate's payload. The handler factory
(:mod:`maestro.pipeline.entry`) validates each step's input once against the model the step
declares, and ``tests/unit/test_pipeline_contract.py`` checks the ASL's paths, selectors,
payloads and error names against them, so the two cannot drift apart.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field

from maestro.domain.common import Frozen
from maestro.domain.consensus import ConsensusResult
from maestro.domain.dispose import Disposal, QueuedAction
from maestro.domain.events import DomainEvent
from maestro.domain.execution_input import ExecutionInput, PackageRef
from maestro.domain.guards import TrailEntry
from maestro.domain.models import OpenContext, Package, Party
from maestro.domain.pending import PendingSnapshot, Resolution
from maestro.domain.records import BrainSample, PreCheckResult
from maestro.domain.wait_answers import OpenWait
from maestro.lanes.context import LaneOutcome


class LeaseSnapshot(Frozen):
    """The world as the lease holder sees it: every later step works on this snapshot."""

    holder: str | None = Field(
        description="The package holding the lease; None for an emergency acting before it"
    )
    sender: Party | None = None
    contexts: tuple[OpenContext, ...] = ()
    pending: PendingSnapshot = Field(
        default_factory=PendingSnapshot, description="Open questions and holds, expired or not"
    )
    trail: tuple[TrailEntry, ...] = Field(default=(), description="Recent guard signals")
    waits: tuple[OpenWait, ...] = Field(
        default=(),
        description="The sender's open waits of WO executions (offers, approvals, gather): "
        "which WO, kind, offer and deadline; never the task token (answer_wait re-reads it)",
    )


class BrainOutput(Frozen):
    brain: str = Field(description="What answered, named in every output")
    samples: tuple[BrainSample, ...]
    consensus: ConsensusResult | None = Field(
        description="None when no sample was drawn (see ``skipped``)"
    )
    skipped: str | None = Field(
        default=None, description="Why no model was asked (an unknown sender), when none was"
    )


class StepError(Frozen):
    """What a Catch puts at its ResultPath: the error name and its cause."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    Error: str = "unknown"
    Cause: str = ""


class EarlyEscalation(Frozen):
    """An emergency handled before the lease: the queue (escalation first) and its effects."""

    disposal: Disposal
    effects: tuple[LaneOutcome, ...]


class PersistResult(Frozen):
    decisions: int = Field(ge=0)
    appended: int = Field(ge=0)
    released: bool
    event: DomainEvent


class FailOpenResult(Frozen):
    decision_id: str
    paged: str | None = Field(description="The page's SID; None when it could not be sent")
    unsent: tuple[str, ...] = Field(default=(), description="Texts that could not be sent")
    released: bool
    forfeited: bool


class ExecutionState(ExecutionInput):
    """The execution's state as it grows: each field is one state's ResultPath."""

    precheck: PreCheckResult | None = None
    escalated: EarlyEscalation | None = None
    lease: LeaseSnapshot | None = None
    resolution: Resolution | None = None
    brain: BrainOutput | None = None
    disposal: Disposal | None = None
    effects: tuple[LaneOutcome, ...] | None = None
    persisted: PersistResult | None = None
    failure: StepError | None = None
    gate_timeout: StepError | None = None
    failed_open: FailOpenResult | None = None

    @property
    def final_disposal(self) -> Disposal | None:
        """The queue this package ran: the early escalation's, or dispose's."""
        return self.escalated.disposal if self.escalated is not None else self.disposal

    @property
    def final_effects(self) -> tuple[LaneOutcome, ...]:
        if self.escalated is not None:
            return self.escalated.effects
        return self.effects or ()


class ActItem(Frozen):
    """One item of the action queue's Map (its ItemSelector)."""

    queued: QueuedAction
    package_id: str
    conversation_id: str
    flush_number: int = Field(ge=1)
    package: Package | None = None
    package_ref: PackageRef
    lease: LeaseSnapshot | None = None
    step: bool = False
    gate_timeout: StepError | None = Field(
        default=None, description="The action's step gate timed out: it went on without release"
    )


class GatePayload(Frozen):
    """What a step gate's Lambda receives with its task token."""

    token: str = Field(min_length=1)
    execution: str = Field(min_length=1)
    gate: str = Field(min_length=1)
    package_id: str
    conversation_id: str
    index: int | None = None


def dump(model: Frozen) -> dict[str, Any]:
    """A step's output as the JSON Step Functions stores (readable in the console)."""
    data: dict[str, Any] = json.loads(model.model_dump_json())
    return data
