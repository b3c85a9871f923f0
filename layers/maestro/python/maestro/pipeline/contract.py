"""The typed contract between the package pipeline's state machine and its steps.

Step Functions carries one JSON document from state to state; each step reads it and returns its
piece, which the ASL places at a ``ResultPath``. These models are that document: the execution
input, the state as it grows, the Map's item and the step gate's payload. Every step validates
what it is given against them, and ``tests/unit/test_pipeline_contract.py`` checks the ASL's
paths, selectors, payloads and error names against them, so the two cannot drift apart.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.consensus import ConsensusResult
from maestro.domain.dispose import Disposal, QueuedAction
from maestro.domain.guards import TrailEntry
from maestro.domain.models import FlushTrigger, Message, OpenContext, Package, Party
from maestro.domain.pending import PendingSnapshot, Resolution
from maestro.domain.records import BrainSample, PreCheckResult
from maestro.domain.wait_answers import OpenWait
from maestro.lanes.base import LaneOutcome
from maestro.ports import DomainEvent

MAX_INLINE_PACKAGE_BYTES = 32 * 1024
"""Above this the execution carries only the package's buffer keys and each step reads the
messages back. Every state's input and output must stay under Step Functions' 256 KiB, and the
state carries the package next to the lease snapshot, the samples, the queue and the effects."""


class PackageRef(Frozen):
    """Where a package's messages are in the conversation buffer: seqs (after_seq, through_seq]
    of one conversation. Small, so it always travels with the execution."""

    package_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    flush_number: int = Field(ge=1)
    after_seq: int = Field(ge=0)
    through_seq: int = Field(ge=1)
    trigger: FlushTrigger
    sender_phone: E164
    flushed_at: AwareDatetime

    @classmethod
    def of(cls, package: Package) -> PackageRef:
        return cls(
            package_id=package.package_id,
            conversation_id=package.conversation_id,
            flush_number=package.flush_number,
            after_seq=package.messages[0].seq - 1,
            through_seq=package.messages[-1].seq,
            trigger=package.trigger,
            sender_phone=package.sender_phone,
            flushed_at=package.flushed_at,
        )

    def package(self, messages: list[Message]) -> Package:
        """The package again, from the messages read back from the buffer."""
        expected = self.through_seq - self.after_seq
        if len(messages) != expected or any(
            m.seq != self.after_seq + i + 1 for i, m in enumerate(messages)
        ):
            raise ValueError(
                f"{self.package_id}: expected seqs {self.after_seq + 1}..{self.through_seq}"
            )
        return Package(
            package_id=self.package_id,
            conversation_id=self.conversation_id,
            flush_number=self.flush_number,
            trigger=self.trigger,
            sender_phone=self.sender_phone,
            messages=tuple(messages),
            flushed_at=self.flushed_at,
        )


class ExecutionInput(Frozen):
    """What the flusher starts an execution with (its name is the package id)."""

    package_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    flush_number: int = Field(ge=1)
    step: bool = Field(default=False, description="Pause at every step gate")
    package: Package | None = Field(default=None, description="Inline when it fits")
    package_ref: PackageRef


def execution_input(package: Package, *, step: bool = False) -> str:
    """The execution input for ``package``: inline when small enough, by reference otherwise."""
    inline = len(package.model_dump_json().encode()) <= MAX_INLINE_PACKAGE_BYTES
    return ExecutionInput(
        package_id=package.package_id,
        conversation_id=package.conversation_id,
        flush_number=package.flush_number,
        step=step,
        package=package if inline else None,
        package_ref=PackageRef.of(package),
    ).model_dump_json()


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
