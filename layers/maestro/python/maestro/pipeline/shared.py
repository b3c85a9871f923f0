"""What the package pipeline's steps share: their dependencies, the pipeline they run on (reading
the package, the sender's open contexts, the lease's snapshot, the lease's renewal, the decisions
written ahead) and :class:`Step`, what the handler factory (:mod:`maestro.pipeline.entry`) runs.

Each step is its own module, named as its function (``functions/<name>/``): it takes its input
state, validated once by the handler factory against the step's declared model
(:mod:`maestro.pipeline.contract`), and returns its piece of the state. Thin Lambda handlers
call them; tests and the embedded stack call the same functions. The state machine carries the
data between steps, so every step's input and output is visible in the Step Functions console.

The order, and why:
1. ``precheck`` runs first, before the lease: an emergency never waits behind another package.
2. ``escalate`` (only for an escalating package) pages the PM and advises the tenant at once,
   with its decisions written first, whatever holds the lease.
3. ``lease`` takes the conversation's turn (flush order); its snapshot of the sender and their
   open contexts is what every later step works on. Each later step renews the lease.
4. ``brain`` → ``dispose`` (writes the decisions ahead) → ``act`` per action (records each
   outcome) → ``persist`` (state snapshots, the completion line, releases the lease).
5. ``fail_open`` on any failure: a fallback decision, the PM paged with a short reason, every
   unfinished action recorded, the lease released or the turn forfeited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from maestro.brain.stage_models import Models
from maestro.domain.common import truncate
from maestro.domain.consensus import ConsensusPolicy
from maestro.domain.dispose import Disposal, trail_of
from maestro.domain.execution_input import ExecutionInput, PackageRef
from maestro.domain.memory import DEFAULT_LIMITS, WindowLimits
from maestro.domain.models import (
    Awaiting,
    ContextKind,
    OpenContext,
    Package,
    Party,
    PartyRole,
    WorkOrder,
    context_for_work_order,
)
from maestro.domain.pending import PendingSnapshot
from maestro.domain.records import (
    ActionOutcomeRecord,
    MaestroDecision,
    OutstandingItem,
    RevalidationOutcome,
)
from maestro.domain.revalidate import FieldChange, Target, revalidate
from maestro.domain.roles import PM_CONTEXTS, manages
from maestro.domain.wait_answers import OpenWait, open_waits
from maestro.domain.wo_refs import wo_refs
from maestro.errors import LeaseLost
from maestro.pipeline.contract import ActItem, ExecutionState, LeaseSnapshot
from maestro.ports.conversations import ConversationBuffer, FlushClaim
from maestro.ports.events import EventBus
from maestro.ports.limits import DailyCaps, PageThrottle
from maestro.ports.messaging import Digest, Messenger
from maestro.ports.platform import Clock
from maestro.ports.stores import (
    AlreadyExistsError,
    DecisionLog,
    DirectoryReader,
    DispatchStore,
    PartyDirectory,
    PendingStore,
    StateStore,
    Timeline,
    WorkOrderStore,
)
from maestro.ports.workflows import GateStore, TaskTokens

__all__ = [
    "GATE_TIMEOUT_SECONDS",
    "JSON",
    "ActOnce",
    "Pipeline",
    "PipelineDeps",
    "Step",
    "lease_of",
    "tally",
]

JSON = dict[str, Any]

GATE_TIMEOUT_SECONDS = 86_400
"""A step gate's TimeoutSeconds in the ASL: while paused, its package keeps the lease this long."""

TRAIL_DECISIONS = 40
"""Recent decisions read for the conversation's guard trail (a few packages' worth)."""


@dataclass
class PipelineDeps:
    buffer: ConversationBuffer
    parties: PartyDirectory
    work_orders: WorkOrderStore
    timeline: Timeline
    pending: PendingStore
    decisions: DecisionLog
    state: StateStore
    messenger: Messenger
    bus: EventBus
    models: Models
    gates: GateStore
    clock: Clock
    on_call_pm_phone: str
    """The account's fallback number for pages ("" when none: docs/on-call.md)."""
    policy: ConsensusPolicy = field(default_factory=ConsensusPolicy)
    lease_ttl_seconds: int = 900
    window_limits: WindowLimits = DEFAULT_LIMITS
    throttle: PageThrottle | None = None
    caps: DailyCaps | None = None
    digest: Digest | None = None
    unknown_emergency_fold_seconds: int = 1800
    directory: DirectoryReader | None = None
    dispatch: DispatchStore | None = None
    """Each WO's dispatch run: the sender's open waits (lease), a wait answered or withdrawn
    (act). None: no WO execution runs (nothing waits)."""
    tokens: TaskTokens | None = None
    """Completes a WO execution's wait (SendTaskSuccess: the token alone says which)."""


ActOnce = Callable[[dict[str, Any]], dict[str, Any]]
"""The act step as deployed: :mod:`maestro.pipeline.act` behind the idempotency layer."""


@dataclass(frozen=True)
class Step:
    """A pipeline step as the handler factory runs it: its function, and the model its input
    state is validated against, once, before the function runs (None: the raw state, for
    ``fail_open``, which reads what it can of even an unreadable one)."""

    run: Callable[..., JSON]
    input: type[BaseModel] | None


class Pipeline:
    """The dependencies and what more than one step does with them."""

    def __init__(self, deps: PipelineDeps) -> None:
        self.deps = deps

    # -- reading the state ---------------------------------------------------------------------

    def load_package(self, state: ExecutionInput | ActItem) -> Package:
        """The package: inline, or read back from the buffer by its reference."""
        if state.package is not None:
            return state.package
        return _read_back(self.deps.buffer, state.package_ref)

    def open_contexts(
        self, sender: Party | None, now: datetime, text: str = ""
    ) -> list[OpenContext]:
        """The sender's open contexts: WOs in conversation (with what each awaits, re-validated
        against the WO as it is now) and the open questions and holds still in their TTL. A
        PM's work orders are their properties' open ones, bounded, and those the text names."""
        if sender is None:
            return []  # never guess a person: an unknown number has nothing open
        contexts: list[OpenContext] = []
        wos = (
            self._managed(sender, text)
            if sender.role is PartyRole.PM
            else self.deps.work_orders.open_for_party(sender.party_id)
        )
        for wo in wos:
            contexts.append(self._wo_context(wo, sender))
        questions, holds = self.deps.pending.open_items(sender.party_id)
        for question in questions:
            if question.expires_at > now:
                contexts.append(
                    OpenContext(
                        context_id=question.clarification_id,
                        kind=ContextKind.PENDING_CLARIFICATION,
                        description=truncate(f"asked: {question.question}", 200),
                        opened_at=question.asked_at,
                        awaiting="answer",
                    )
                )
        for hold in holds:
            if hold.expires_at > now:
                contexts.append(
                    OpenContext(
                        context_id=hold.confirmation_id,
                        kind=ContextKind.PENDING_CONFIRMATION,
                        description=truncate(f"held until YES: {hold.proposal}", 200),
                        opened_at=hold.held_at,
                        awaiting="confirmation",
                    )
                )
        return contexts

    def _managed(self, sender: Party, text: str) -> list[WorkOrder]:
        """A PM's work orders as contexts: those the text names (read by id, kept only if of a
        property they manage, whatever their status, so "status of WO-204" works once it is
        done) first, then their properties' open ones (each property's by id), to a fixed
        bound in all, with as many reads."""
        named: dict[str, WorkOrder] = {}
        for wo_id in wo_refs(text):
            wo = self.deps.work_orders.get(wo_id)
            if wo is not None and manages(sender, wo.property_id):
                named[wo_id] = wo
        pooled: dict[str, WorkOrder] = {}
        for property_id in sender.property_ids:
            room = PM_CONTEXTS - len(named) - len(pooled)
            if room <= 0:
                break  # bounded reads too: the properties in the directory's order
            wos, _ = self.deps.work_orders.open_for_property(property_id, room)
            pooled.update((wo.wo_id, wo) for wo in wos if wo.wo_id not in named)
        return [*named.values(), *pooled.values()][:PM_CONTEXTS]

    def _wo_context(self, wo: WorkOrder, sender: Party) -> OpenContext:
        snapshot = self.deps.state.get(wo.wo_id)
        awaiting: Awaiting = "nothing"
        asked: OutstandingItem | None = None
        if snapshot is not None and snapshot.outstanding:
            asked = snapshot.outstanding[0]
            if asked.kind == "availability" or asked.kind == "rating":
                awaiting = asked.kind
            else:
                awaiting = "answer"
        interrupted_at = snapshot.interrupted_at if snapshot is not None else None
        context = context_for_work_order(
            wo,
            awaiting,
            snapshot.updated_at if snapshot is not None else None,
            party_id=sender.party_id,
            asked_at=asked.since if asked else None,
            interrupted_at=interrupted_at,
            manager=manages(sender, wo.property_id),
        )
        if asked is None or asked.kind != "availability":
            return context
        # I6: whatever answers the availability question resumes this context; re-validate it
        # now, so dispose books a visit only when nothing changed that matters.
        check = revalidate(
            [
                Target(
                    wo_id=wo.wo_id,
                    operation="schedule",
                    asked_at=asked.since,
                    then=asked.asked_about,
                    current=wo,
                    interrupted_at=interrupted_at,
                )
            ],
            sender,
            self.judge,
        )
        return context.model_copy(
            update={"resume": check.outcome, "resume_note": truncate(check.summary(), 200)}
        )

    def snapshot(
        self, sender: Party | None, conversation_id: str, now: datetime, text: str = ""
    ) -> LeaseSnapshot:
        """What the lease holder works on: the sender, their open contexts, their open items
        (expired ones too, so their expiry is recorded) and the conversation's guard trail."""
        contexts = tuple(self.open_contexts(sender, now, text))
        pending = PendingSnapshot()
        if sender is not None:
            questions, holds = self.deps.pending.open_items(sender.party_id)
            pending = PendingSnapshot(clarifications=tuple(questions), confirmations=tuple(holds))
        trail = trail_of(self.deps.decisions.recent(conversation_id, TRAIL_DECISIONS))
        waits: tuple[OpenWait, ...] = ()
        if sender is not None and self.deps.dispatch is not None:
            waits = open_waits(self.deps.dispatch.waiting_for(sender.party_id), sender.party_id)
        return LeaseSnapshot(
            holder=None,
            sender=sender,
            contexts=contexts,
            pending=pending,
            trail=trail,
            waits=waits,
        )

    def judge(self, target: Target, changed: tuple[FieldChange, ...]) -> RevalidationOutcome:
        """What re-validation's rules cannot settle (the fields the PM edited, before → after)
        goes to ``decide()`` when a model is plugged in; without one, the default: ask."""
        return self.deps.models.judgments.revalidation(target, changed)

    def hold(self, s: ExecutionState) -> None:
        self.renew(s.conversation_id, s.package_id, self.deps.lease_ttl_seconds)

    def renew(self, conversation_id: str, package_id: str, ttl: int) -> None:
        if not self.deps.buffer.renew_lease(
            conversation_id, package_id, self.deps.clock.now(), ttl
        ):
            raise LeaseLost(f"{package_id}: the lease expired and was taken over")

    def append_decision(self, decision: MaestroDecision) -> bool:
        try:
            self.deps.decisions.append(decision)
        except AlreadyExistsError:
            return False  # a re-run: the log already has it, unchanged
        return True

    def write_ahead(self, disposal: Disposal) -> int:
        return sum(self.append_decision(d) for d in disposal.decisions)


def _read_back(buffer: ConversationBuffer, ref: PackageRef) -> Package:
    claim = FlushClaim(
        conversation_id=ref.conversation_id,
        flush_number=ref.flush_number,
        package_id=ref.package_id,
        after_seq=ref.after_seq,
        through_seq=ref.through_seq,
        trigger=ref.trigger,
        claimed_at=ref.flushed_at,
    )
    return ref.package(buffer.messages_for(claim))


def lease_of(s: ExecutionState) -> LeaseSnapshot:
    if s.lease is None:
        raise ValueError(f"{s.package_id}: this step runs only after the lease")
    return s.lease


def tally(outcomes: list[ActionOutcomeRecord]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
    return tally
