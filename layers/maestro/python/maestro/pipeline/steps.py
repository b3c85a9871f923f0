"""The pipeline's steps: each takes the execution's JSON state and returns its piece of it.

Thin Lambda handlers call these; tests and the embedded stack call the same functions. The
state machine carries the data between steps, so every step's input and output is visible in
the Step Functions console.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from maestro.brain.precheck import precheck as run_precheck
from maestro.domain.actions import Lane
from maestro.domain.consensus import ConsensusPolicy, ConsensusResult, aggregate
from maestro.domain.dispose import QueuedAction, dispose
from maestro.domain.memory import SenderRole
from maestro.domain.models import (
    ContextKind,
    OpenContext,
    Package,
    Party,
    Urgency,
    context_for_work_order,
)
from maestro.domain.records import (
    Disposition,
    MaestroDecision,
    MaestroState,
    OutstandingItem,
    PreCheckResult,
)
from maestro.lanes import execute
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.observability import count, logger
from maestro.ports import (
    AlreadyExistsError,
    Brain,
    Clock,
    ConversationBuffer,
    DecisionLog,
    DomainEvent,
    EventBus,
    Gate,
    GateStore,
    Messenger,
    PartyDirectory,
    PendingStore,
    StaleVersionError,
    StateStore,
    WorkOrderStore,
)

JSON = dict[str, Any]


class LeaseBusy(Exception):  # noqa: N818 - the error name the state machine retries on
    """Another package of this conversation holds the lease: retry later (bounded backoff)."""


class TransientError(Exception):
    """A failure worth retrying (the state machine retries it with backoff)."""


@dataclass
class PipelineDeps:
    buffer: ConversationBuffer
    parties: PartyDirectory
    work_orders: WorkOrderStore
    pending: PendingStore
    decisions: DecisionLog
    state: StateStore
    messenger: Messenger
    bus: EventBus
    brain: Brain
    gates: GateStore
    clock: Clock
    on_call_pm_phone: str
    policy: ConsensusPolicy = field(default_factory=ConsensusPolicy)
    lease_ttl_seconds: int = 900


def _package(state: Mapping[str, Any]) -> Package:
    if not state.get("package"):
        raise ValueError(f"{state.get('package_id')}: the execution input carries no package")
    return Package.model_validate(state["package"])


def _sender(state: Mapping[str, Any]) -> Party | None:
    data = state["lease"].get("sender")
    return Party.model_validate(data) if data else None


def _contexts(state: Mapping[str, Any]) -> tuple[OpenContext, ...]:
    return tuple(OpenContext.model_validate(c) for c in state["lease"].get("contexts", []))


class Pipeline:
    def __init__(self, deps: PipelineDeps) -> None:
        self.deps = deps

    # -- the world as the lease holder sees it ------------------------------------------------

    def open_contexts(self, sender: Party | None, now: datetime) -> list[OpenContext]:
        """The sender's open contexts: WOs in conversation and unexpired clarifications."""
        if sender is None:
            return []  # never guess a person: an unknown number has nothing open
        contexts: list[OpenContext] = []
        for wo in self.deps.work_orders.open_for_party(sender.party_id):
            snapshot = self.deps.state.get(wo.wo_id)
            awaiting = "nothing"
            if snapshot is not None and snapshot.outstanding:
                kind = snapshot.outstanding[0].kind
                awaiting = kind if kind in ("availability", "rating") else "answer"
            last = snapshot.updated_at if snapshot is not None else None
            contexts.append(context_for_work_order(wo, awaiting, last))  # type: ignore[arg-type]
        for item in self.deps.pending.clarifications_for(sender.party_id, now):
            contexts.append(
                OpenContext(
                    context_id=item.clarification_id,
                    kind=ContextKind.PENDING_CLARIFICATION,
                    description=f"asked: {item.question}"[:200],
                    opened_at=item.asked_at,
                    awaiting="answer",
                )
            )
        return contexts

    # -- steps ---------------------------------------------------------------------------------

    def lease(self, state: Mapping[str, Any]) -> JSON:
        package = _package(state)
        now = self.deps.clock.now()
        held = self.deps.buffer.acquire_lease(
            package.conversation_id,
            package.package_id,
            package.flush_number,
            now,
            self.deps.lease_ttl_seconds,
        )
        if not held:
            raise LeaseBusy(f"{package.conversation_id}: another package holds the lease")
        sender = self.deps.parties.by_phone(package.sender_phone)
        contexts = self.open_contexts(sender, now)
        return {
            "holder": package.package_id,
            "sender": sender.model_dump(mode="json") if sender else None,
            "contexts": [c.model_dump(mode="json") for c in contexts],
        }

    def precheck(self, state: Mapping[str, Any]) -> JSON:
        result = run_precheck(_package(state))
        count("PackagesByRoute", route=result.route.value)
        return result.model_dump(mode="json")

    def brain(self, state: Mapping[str, Any]) -> JSON:
        package = _package(state)
        sender = _sender(state)
        contexts = _contexts(state)
        role: SenderRole = sender.role.value if sender else "unknown"
        samples = self.deps.brain.samples(package, role, contexts, self.deps.policy.k)
        consensus = aggregate(samples, self.deps.policy)
        count("ModelInputTokens", consensus.input_tokens)
        count("ModelOutputTokens", consensus.output_tokens)
        return {
            "brain": self.deps.brain.describe(),
            "samples": [s.model_dump(mode="json") for s in samples],
            "consensus": consensus.model_dump(mode="json"),
        }

    def dispose(self, state: Mapping[str, Any]) -> JSON:
        package = _package(state)
        precheck = PreCheckResult.model_validate(state["precheck"])
        consensus = (
            ConsensusResult.model_validate(state["brain"]["consensus"])
            if state.get("brain")
            else None
        )
        disposal = dispose(package, _sender(state), _contexts(state), consensus, precheck=precheck)
        if disposal.abstained:
            count("Abstentions")
        if any(d.fallback for d in disposal.decisions):
            count("Fallbacks")
        return disposal.model_dump(mode="json")

    def act(self, item: Mapping[str, Any]) -> JSON:
        """Run one queued action's lane. The act handler wraps this in Powertools idempotency."""
        queued = QueuedAction.model_validate(item["queued"])
        package = _package(item)
        ctx = LaneContext(
            package=package,
            sender=_sender(item),
            open_contexts=_contexts(item),
            action_index=queued.index,
            idempotency_key=queued.idempotency_key,
            work_orders=self.deps.work_orders,
            pending=self.deps.pending,
            parties=self.deps.parties,
            messenger=self.deps.messenger,
            on_call_pm_phone=self.deps.on_call_pm_phone,
            now=self.deps.clock.now(),
        )
        outcome = execute(queued.action, ctx)
        # Always emit, in every environment: the watcher reads back what each event claims.
        self.deps.bus.publish(outcome.events)
        count("ActionsByLane", lane=str(queued.action.lane))
        if queued.action.lane == Lane.ESCALATE:
            count("Escalations")
        return outcome.model_dump(mode="json")

    def persist(self, state: Mapping[str, Any]) -> JSON:
        package = _package(state)
        decisions = [MaestroDecision.model_validate(d) for d in state["disposal"]["decisions"]]
        appended = sum(self._append(d) for d in decisions)
        outcomes = [LaneOutcome.model_validate(o) for o in state.get("effects") or []]
        now = self.deps.clock.now()
        for outcome in outcomes:
            self._update_state(outcome, package, decisions, now)
        self.deps.buffer.release_lease(
            package.conversation_id, package.package_id, package.flush_number
        )
        event = DomainEvent(
            event_id=f"{package.package_id}#decision.recorded",
            type="decision.recorded",
            package_id=package.package_id,
            subject_id=package.package_id,
            claim={
                "decisions": len(decisions),
                "appended": appended,
                "route": str(state["disposal"]["route"]),
            },
            occurred_at=now,
        )
        return {
            "decisions": len(decisions),
            "appended": appended,
            "event": event.model_dump(mode="json"),
        }

    def fail_open(self, state: Mapping[str, Any]) -> JSON:
        """Record a fallback decision, page the on-call PM, release the lease. Never raises on
        a missing piece of state: this is the last line."""
        now = self.deps.clock.now()
        failure = state.get("failure") or {}
        package_id = str(state.get("package_id", "unknown"))
        conversation_id = str(state.get("conversation_id", "unknown"))
        cause = f"{failure.get('Error', 'unknown')}: {str(failure.get('Cause', ''))[:300]}"
        decision = MaestroDecision(
            decision_id=f"{package_id}#fallback#0",
            package_id=package_id,
            conversation_id=conversation_id,
            stage="fallback",
            index=0,
            disposition=Disposition.QUEUED,
            lane=Lane.ESCALATE,
            open_context_count=len((state.get("lease") or {}).get("contexts", [])),
            fallback=True,
            confidence=0.0,
            reason=f"failed open: {cause}",
            idempotency_key=f"{package_id}#failopen",
            recorded_at=now,
        )
        self._append(decision)
        sent = self.deps.messenger.send(
            self.deps.on_call_pm_phone,
            f"maestro could not route package {package_id} ({cause[:120]}). "
            "Please look at the conversation.",
            idempotency_key=f"{package_id}#failopen",
        )
        self.deps.bus.publish(
            [
                DomainEvent(
                    event_id=f"{package_id}#failopen#escalation.paged",
                    type="escalation.paged",
                    package_id=package_id,
                    subject_id=sent.sid,
                    claim={"reason": "fallback", "to": sent.to},
                    occurred_at=now,
                )
            ]
        )
        released = False
        if state.get("package"):
            package = _package(state)
            released = self.deps.buffer.release_lease(
                package.conversation_id, package.package_id, package.flush_number
            )
            if not released:
                # It never held the lease (it gave up waiting): give up its turn too, or every
                # later package of the conversation would wait for it forever.
                self.deps.buffer.forfeit_turn(package.conversation_id, package.flush_number)
        count("Fallbacks")
        logger.error("package failed open", extra={"package_id": package_id, "cause": cause})
        return {"decision_id": decision.decision_id, "paged": sent.sid, "released": released}

    def step_gate(self, payload: Mapping[str, Any]) -> JSON:
        gate = Gate(
            execution_id=str(payload["execution"]),
            gate=str(payload["gate"]),
            token=str(payload["token"]),
            package_id=str(payload.get("package_id", "")),
            index=payload.get("index"),
            paused_at=self.deps.clock.now(),
        )
        self.deps.gates.put(gate)
        return {"paused": gate.gate}

    # -- helpers -------------------------------------------------------------------------------

    def _append(self, decision: MaestroDecision) -> bool:
        try:
            self.deps.decisions.append(decision)
        except AlreadyExistsError:
            return False  # a re-run of persist: the log already has it, unchanged
        return True

    def _update_state(
        self,
        outcome: LaneOutcome,
        package: Package,
        decisions: list[MaestroDecision],
        now: datetime,
    ) -> None:
        wo_id = outcome.created_wo_id or outcome.target_wo_id
        if wo_id is None or outcome.status != "done":
            return
        decision_id = next(
            (d.decision_id for d in decisions if d.idempotency_key == outcome.idempotency_key),
            None,
        )
        for _ in range(3):  # optimistic concurrency: re-read on a lost race
            current = self.deps.state.get(wo_id)
            outstanding = list(current.outstanding) if current else []
            urgency = current.urgency if current else Urgency.ROUTINE
            if outcome.created_wo_id:
                outstanding = [OutstandingItem(kind="availability", since=now)]
            elif outcome.lane == Lane.SCHEDULE_VISIT.value:
                outstanding = [o for o in outstanding if o.kind != "availability"]
            elif outcome.lane == Lane.RECORD_RATING.value:
                outstanding = [o for o in outstanding if o.kind != "rating"]
            elif outcome.lane == Lane.ESCALATE.value:
                urgency = Urgency.EMERGENCY
            snapshot = MaestroState(
                wo_id=wo_id,
                version=(current.version + 1) if current else 1,
                urgency=urgency,
                outstanding=tuple(outstanding),
                last_package_id=package.package_id,
                last_decision_id=decision_id,
                updated_at=now,
            )
            if (
                current is not None
                and current.last_package_id == package.package_id
                and (current.last_decision_id == decision_id)
            ):
                return  # this outcome is already reflected: persist is re-running
            try:
                self.deps.state.put(snapshot, current.version if current else None)
                return
            except StaleVersionError:
                continue
