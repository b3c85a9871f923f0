"""The pipeline's steps: each takes the execution's JSON state and returns its piece of it.

Thin Lambda handlers call these; tests and the embedded stack call the same functions. The
state machine carries the data between steps (typed by :mod:`maestro.pipeline.contract`), so
every step's input and output is visible in the Step Functions console.

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

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from maestro.brain.models import Models
from maestro.brain.precheck import package_safety_hit
from maestro.brain.precheck import precheck as run_precheck
from maestro.brain.sampling import consult
from maestro.domain.actions import Lane
from maestro.domain.common import truncate
from maestro.domain.consensus import ConsensusPolicy
from maestro.domain.dispose import Disposal, QueuedAction, dispose, trail_of
from maestro.domain.events import DomainEvent, Effect, body_digest, claim_dict, sent_claim
from maestro.domain.execution_input import ExecutionInput, PackageRef
from maestro.domain.fixed_texts import (
    ALERTED,
    FAIL_OPEN_PAGE,
    FAIL_OPEN_UNKNOWN_SENDER,
    FAIL_OPEN_WHY,
    FAIL_OPEN_WHY_OTHER,
    PAGE_WHO,
    UNIT_SUFFIX,
    say,
)
from maestro.domain.language import in_language
from maestro.domain.memory import (
    DEFAULT_LIMITS,
    BrainInput,
    BrainRequest,
    SenderRole,
    WindowLimits,
    build_window,
)
from maestro.domain.models import (
    Awaiting,
    ContextKind,
    OpenContext,
    Package,
    Party,
    PartyRole,
    Urgency,
    WorkOrder,
    WoSnapshot,
    context_for_work_order,
)
from maestro.domain.on_call import WHY_CHARS, PageRecipient, page_property
from maestro.domain.pending import PendingSnapshot, resolve_pending
from maestro.domain.privacy import mask_text
from maestro.domain.records import (
    ActionOutcomeRecord,
    Disposition,
    MaestroDecision,
    MaestroState,
    OutcomeStatus,
    OutstandingItem,
    PackageCompletion,
    RevalidationOutcome,
    Route,
    completion_record_id,
    fallback_decision_id,
    outcome_record_id,
)
from maestro.domain.revalidate import FieldChange, Target, revalidate
from maestro.domain.roles import PM_CONTEXTS, manages
from maestro.domain.wait_answers import OpenWait, open_waits, resolve_waits
from maestro.domain.wo_refs import wo_refs
from maestro.errors import LeaseBusy, LeaseLost, TransientError
from maestro.lanes import execute
from maestro.lanes.base import LaneContext, LaneOutcome
from maestro.lanes.dispatch_waits import settle
from maestro.lanes.escalate import (
    UNREACHED_TEXTS,
    advice_language,
    safety_advice_key,
    safety_instructions,
)
from maestro.lanes.on_call import page_recipient, undeliverable
from maestro.observability import count, logger
from maestro.pipeline.contract import (
    ActItem,
    BrainOutput,
    EarlyEscalation,
    ExecutionState,
    FailOpenResult,
    GatePayload,
    LeaseSnapshot,
    PersistResult,
    StepError,
    dump,
)
from maestro.ports.conversations import ConversationBuffer, FlushClaim
from maestro.ports.events import EventBus
from maestro.ports.limits import CapName, DailyCaps, PageThrottle
from maestro.ports.messaging import (
    Digest,
    Messenger,
    NotTextableError,
    SendFailedError,
    SentMessage,
)
from maestro.ports.platform import Clock
from maestro.ports.stores import (
    AlreadyExistsError,
    DecisionLog,
    DirectoryReader,
    DispatchStore,
    PartyDirectory,
    PendingStore,
    StaleVersionError,
    StateStore,
    Timeline,
    WorkOrderStore,
)
from maestro.ports.workflows import Gate, GateStore, TaskTokens

__all__ = ["GATE_TIMEOUT_SECONDS", "LeaseBusy", "Pipeline", "PipelineDeps", "TransientError"]

JSON = dict[str, Any]

GATE_TIMEOUT_SECONDS = 86_400
"""A step gate's TimeoutSeconds in the ASL: while paused, its package keeps the lease this long."""

STATE_UPDATE_ATTEMPTS = 3
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
"""The act step as deployed: ``Pipeline.act`` behind the idempotency layer."""


class Pipeline:
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
            self._judge,
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

    def _known(self, phone: str) -> bool | None:
        """Whether the directory has ``phone``; None when it cannot be read (an outage through
        every retry): the pre-check then goes on with the floor alone, recorded as a fallback,
        as when the model's budget cannot be read. Safety first never waits on the directory."""
        try:
            known = self.deps.parties.by_phone(phone) is not None
        except Exception as error:  # any failure of the read: the floor still decides
            count("DirectoryUnread", stage="precheck")
            logger.warning(
                "pre-check: the directory could not be read", extra={"error": str(error)[:200]}
            )
            return None
        if not known:
            count("UnknownSenderPackages")
        return known

    def _judge(self, target: Target, changed: tuple[FieldChange, ...]) -> RevalidationOutcome:
        """What re-validation's rules cannot settle (the fields the PM edited, before → after)
        goes to ``decide()`` when a model is plugged in; without one, the default: ask."""
        return self.deps.models.judgments.revalidation(target, changed)

    # -- steps ---------------------------------------------------------------------------------

    def precheck(self, state: Mapping[str, Any]) -> JSON:
        """Safety first, before the lease: the floor, then (when plugged in) the cheap model.
        A one-message package that the severity probe already read takes the probe's answer:
        the same question is not asked twice."""
        package = self.load_package(ExecutionState.model_validate(state))
        probed = package.messages[0].probe if len(package.messages) == 1 else None
        triage = self.deps.models.triage
        known = self._known(package.sender_phone) if triage is not None else True
        if not known:
            # A number nobody knows costs no model call: the deterministic floor alone decides
            # (an emergency still escalates at once); anything else goes to the hour's digest.
            triage = None
        if probed is not None and package_safety_hit(package) is None:
            result = probed
        else:
            result = run_precheck(package, triage.precheck if triage is not None else None)
            if triage is not None and package_safety_hit(package) is None:
                count("ModelCalls", 1, stage="precheck")
        if known is None and result.source != "safety_floor":
            # The directory could not be read: the default stands in for the model, recorded.
            result = result.model_copy(update={"fallback": True})
        count("PackagesByRoute", route=result.route.value)
        return dump(result)

    def escalate(self, state: Mapping[str, Any], act: ActOnce) -> JSON:
        """An emergency does not wait for the lease: decide, record and act on it now.

        The queue is the one dispose gives an escalating package (the page first), written to
        the decision log before anything is sent; each action then runs through the same
        idempotent act step as the action queue, so a retry sends nothing twice.
        """
        s = ExecutionState.model_validate(state)
        package = self.load_package(s)
        now = self.deps.clock.now()
        sender = self.deps.parties.by_phone(package.sender_phone)
        contexts = tuple(self.open_contexts(sender, now, package.text))
        disposal = dispose(package, sender, contexts, None, precheck=s.precheck)
        self._write_ahead(disposal)
        snapshot = LeaseSnapshot(holder=None, sender=sender, contexts=contexts)
        effects = [
            LaneOutcome.model_validate(
                act(
                    dump(
                        ActItem(
                            queued=queued,
                            package_id=s.package_id,
                            conversation_id=s.conversation_id,
                            flush_number=s.flush_number,
                            package=s.package,
                            package_ref=s.package_ref,
                            lease=snapshot,
                        )
                    )
                )
            )
            for queued in disposal.actions
        ]
        count("EarlyEscalations")
        return dump(EarlyEscalation(disposal=disposal, effects=tuple(effects)))

    def lease(self, state: Mapping[str, Any]) -> JSON:
        s = ExecutionState.model_validate(state)
        now = self.deps.clock.now()
        held = self.deps.buffer.acquire_lease(
            s.conversation_id, s.package_id, s.flush_number, now, self.deps.lease_ttl_seconds
        )
        if not held:
            raise LeaseBusy(f"{s.conversation_id}: another package holds the lease")
        package = self.load_package(s)
        sender = self.deps.parties.by_phone(package.sender_phone)
        snapshot = self.snapshot(sender, s.conversation_id, now, package.text)
        return dump(snapshot.model_copy(update={"holder": s.package_id}))

    def resolve(self, state: Mapping[str, Any]) -> JSON:
        """Match the package against what the party has open (a WO execution's offer or
        approval, a held confirmation, a question) before any brain reads it: an answer is
        handled here, deterministically. An open offer or approval comes first: a vendor's
        "yes" to their offer is that, whatever else of theirs is open."""
        s = ExecutionState.model_validate(state)
        self._hold(s)
        package = self.load_package(s)
        lease = _lease(s)
        now = self.deps.clock.now()
        live_holds = [h.held_at for h in lease.pending.confirmations if h.expires_at > now]
        waited = resolve_waits(package, lease.sender, lease.waits, live_holds)
        if waited is not None:
            count("PendingAnswers", outcome="wait")
            return dump(waited)
        named = {
            *(i for q in lease.pending.clarifications for i in q.candidate_ids),
            *(i for h in lease.pending.confirmations for i in h.wo_ids),
        }
        work_orders = {i: wo for i in sorted(named) if (wo := self.deps.work_orders.get(i))}
        interrupted = {
            i: at
            for i in work_orders
            if (snapshot := self.deps.state.get(i)) and (at := snapshot.interrupted_at)
        }
        resolution = resolve_pending(
            package,
            lease.sender,
            lease.pending,
            work_orders,
            interrupted,
            self.deps.clock.now(),
            handback=s.precheck is not None and s.precheck.route is Route.HANDBACK,
            judge=self._judge,
            answers_question=self.deps.models.judgments.answers_the_question,
        )
        count("PendingAnswers", outcome=resolution.route)
        return dump(resolution)

    def brain(self, state: Mapping[str, Any]) -> JSON:
        """Samples drawn adaptively on the bounded memory window, then consensus."""
        s = ExecutionState.model_validate(state)
        self._hold(s)
        package = self.load_package(s)
        lease = _lease(s)
        if lease.sender is None:
            # Never guess a person, and spend nothing finding out: dispose hands an unknown
            # number to the PM (a digest line) whatever a model would say, so none is asked.
            return dump(
                BrainOutput(
                    brain=self.deps.models.describe(),
                    samples=(),
                    consensus=None,
                    skipped="unknown sender: no model is asked; the PM identifies the number "
                    "(a line in the hour's digest)",
                )
            )
        role: SenderRole = lease.sender.role.value
        request = BrainRequest(
            package=package,
            sender_role=role,
            contexts=lease.contexts,
            window=self.window(package, role, lease.contexts),
        )
        samples, consensus = consult(self.deps.models.brain, request, self.deps.policy)
        count("ModelCalls", len(samples), stage="reasoning")
        count("ModelInputTokens", consensus.input_tokens)
        count("ModelOutputTokens", consensus.output_tokens)
        return dump(
            BrainOutput(
                brain=self.deps.models.describe(), samples=tuple(samples), consensus=consensus
            )
        )

    def window(
        self, package: Package, role: SenderRole, contexts: tuple[OpenContext, ...]
    ) -> BrainInput:
        """The brain's bounded input: two bounded reads (the newest messages, the newest
        decisions), so it costs the same at 100 and at 10,000 prior messages."""
        limits = self.deps.window_limits
        history = self.deps.buffer.recent_messages(
            package.conversation_id, limits.max_messages + len(package.messages)
        )
        decisions = self.deps.decisions.recent(package.conversation_id, limits.max_decisions)
        return build_window(package, history, decisions, contexts, role, limits)

    def dispose(self, state: Mapping[str, Any]) -> JSON:
        """Decide the queue and write every decision before any action runs."""
        s = ExecutionState.model_validate(state)
        self._hold(s)
        package = self.load_package(s)
        lease = _lease(s)
        consensus = s.brain.consensus if s.brain is not None else None
        disposal = dispose(
            package,
            lease.sender,
            lease.contexts,
            consensus,
            precheck=s.precheck,
            resolution=s.resolution,
            trail=lease.trail,
            # decide()'s break-in judgment only for a known sender: an unknown number's package
            # is a digest line, never a question, and costs no model call.
            break_in=self.deps.models.judgments.break_in if lease.sender is not None else None,
        )
        self._write_ahead(disposal)
        # The items this package closes move on with its decisions recorded (write-ahead): a
        # question answered or dropped, a hold discarded, anything past its TTL expired.
        for transition in disposal.transitions:
            with contextlib.suppress(StaleVersionError):  # moved on already: a re-run
                self.deps.pending.set_status(
                    transition.kind,
                    transition.pending_id,
                    transition.expected,
                    transition.to,
                    closed_by=s.package_id,
                )
        if disposal.abstained:
            count("Abstentions")
        if any(d.fallback for d in disposal.decisions):
            count("Fallbacks")
        return dump(disposal)

    def act(self, item: Mapping[str, Any]) -> JSON:
        """Run one queued action's lane and record its outcome. The act handler wraps this in
        Powertools idempotency (key: package id + action index)."""
        it = ActItem.model_validate(item)
        if it.lease is not None and it.lease.holder == it.package_id:
            self._renew(it.conversation_id, it.package_id, self.deps.lease_ttl_seconds)
        queued = it.queued
        package = self.load_package(it)
        now = self.deps.clock.now()
        ctx = LaneContext(
            package=package,
            sender=it.lease.sender if it.lease else None,
            open_contexts=it.lease.contexts if it.lease else (),
            action_index=queued.index,
            idempotency_key=queued.idempotency_key,
            work_orders=self.deps.work_orders,
            pending=self.deps.pending,
            parties=self.deps.parties,
            messenger=self.deps.messenger,
            on_call_pm_phone=self.deps.on_call_pm_phone,
            now=now,
            timeline=self.deps.timeline,
            throttle=self.deps.throttle,
            queued=queued,
            agent=self.deps.models.agent,
            caps=self.deps.caps,
            digest=self.deps.digest,
            fold_seconds=self.deps.unknown_emergency_fold_seconds,
            directory=self.deps.directory,
            dispatch=self.deps.dispatch,
            tokens=self.deps.tokens,
            composer=self.deps.models.composer,
            decisions=self.deps.decisions,
        )
        try:
            outcome = execute(queued.action, ctx)
            # A WO the lane closed stops its execution's wait; a tenant's words on a WO answer
            # its gather wait (one place for every lane: maestro.lanes.dispatch_waits).
            outcome = settle(ctx, outcome)
        except SendFailedError as failed:
            # A text could not be sent (refused, or failing through every retry). What the lane
            # did before that is real: record the action as failed with the reason and what it
            # wrote (the decision log says it), claim it, and fail the step: the package fails
            # open and the PM is paged. Never a silent drop.
            count("SendFailures")
            partial = LaneOutcome(
                idempotency_key=queued.idempotency_key,
                lane=queued.lane.value,
                target_wo_id=ctx.target_wo_id,
                message_sids=tuple(dict.fromkeys(m.sid for m in ctx.sent)),
                events=tuple({e.event_id: e for e in ctx.events}.values()),
                effects=tuple(ctx.effects),
                note=truncate(f"a text could not be sent: {failed.reason}", 500),
                unsent=tuple(ctx.unsent),
            )
            # A WO it closed before the text failed still stops its execution's wait.
            partial = settle(ctx, partial)
            self.deps.decisions.record_outcome(
                _outcome_record(package, queued, partial, now, status="failed")
            )
            self.deps.bus.publish(tuple({e.event_id: e for e in ctx.events}.values()))
            raise
        # What the action wrote is on the record before its events go: if they never reach the
        # bus (a retry republishes them, same ids), the sweeper finds the effects without their
        # events (missing_event). Always emit, in every environment: the watcher reads back what
        # each event claims.
        self.deps.decisions.record_outcome(_outcome_record(package, queued, outcome, now))
        self.deps.bus.publish(outcome.events)
        count("ActionsByLane", lane=queued.lane.value)
        if queued.action.lane == Lane.ESCALATE:
            count("Escalations")
        return dump(outcome)

    def persist(self, state: Mapping[str, Any]) -> JSON:
        """Complete the record, update the WO-keyed state, release the lease."""
        s = ExecutionState.model_validate(state)
        package = self.load_package(s)
        disposal = s.final_disposal
        if disposal is None:
            raise ValueError(f"{s.package_id}: nothing was disposed")
        appended = self._write_ahead(disposal)  # normally 0: dispose wrote them first
        now = self.deps.clock.now()
        for outcome in s.final_effects:
            self._update_state(outcome, package, disposal.decisions, now)
        if disposal.route is Route.ESCALATE and s.lease is not None:
            # I1: the emergency keeps every open context, marked interrupted, so whatever
            # resumes one later is re-validated first (I6).
            for context in s.lease.contexts:
                # A PM's contexts are their properties' WOs, not ones they are a party to: their
                # emergency does not put every job at the property on hold.
                if context.kind is ContextKind.WORK_ORDER and context.relation != "pm":
                    self._interrupt(context.context_id, package, now)
        outcomes = self.deps.decisions.outcomes_for(s.package_id)
        self.deps.decisions.complete(
            PackageCompletion(
                record_id=completion_record_id(s.package_id),
                package_id=s.package_id,
                conversation_id=s.conversation_id,
                route=disposal.route.value,
                completed_by="persist",
                decisions=len(disposal.decisions),
                outcomes=_tally(outcomes),
                recorded_at=now,
            )
        )
        released = self.deps.buffer.release_lease(s.conversation_id, s.package_id, s.flush_number)
        if not released:
            logger.warning("persist found the lease taken over", extra={"package_id": s.package_id})
        event = DomainEvent(
            event_id=f"{s.package_id}#decision.recorded",
            type="decision.recorded",
            package_id=s.package_id,
            subject_id=s.package_id,
            claim=claim_dict(
                "decision.recorded",
                {
                    "decisions": len(disposal.decisions),
                    "appended": appended,
                    "route": disposal.route.value,
                },
            ),
            occurred_at=now,
        )
        return dump(
            PersistResult(
                decisions=len(disposal.decisions), appended=appended, released=released, event=event
            )
        )

    def fail_open(self, state: Mapping[str, Any]) -> JSON:
        """Record a fallback decision, close every unfinished action, page the on-call PM with a
        short reason, complete the record and release the lease (or forfeit the turn), and only
        then publish its events, using the execution's own ids: this is the last line, so it
        works even when the rest of the state is unreadable or the bus is down."""
        now = self.deps.clock.now()
        raw = dict(state)
        package_id = str(raw.get("package_id") or "unknown")
        conversation_id = str(raw.get("conversation_id") or "unknown")
        flush_number = _int(raw.get("flush_number"))
        s = _lenient_state(raw)
        failure = (
            s.failure if s and s.failure else StepError.model_validate(raw.get("failure") or {})
        )
        why = short_failure_reason(failure)
        disposal = s.final_disposal if s else None
        lease = s.lease if s else None
        decision = MaestroDecision(
            decision_id=fallback_decision_id(package_id),
            package_id=package_id,
            conversation_id=conversation_id,
            stage="fallback",
            index=0,
            disposition=Disposition.QUEUED,
            lane=Lane.ESCALATE,
            open_context_count=len(lease.contexts) if lease else 0,
            fallback=True,
            confidence=0.0,
            reason=f"failed open: {why} [{_failure_detail(failure)}]",
            idempotency_key=f"{package_id}#failopen",
            recorded_at=now,
        )
        self._append(decision)
        if disposal is not None:
            self._close_unfinished(disposal, conversation_id, now)

        emergency = bool(s and s.precheck and s.precheck.route is Route.ESCALATE)
        sender_phone = s.package_ref.sender_phone if s else None
        events: list[DomainEvent] = []
        unsent: list[str] = []
        recipient = self._fail_open_recipient(lease.sender if lease else None, now)
        if emergency and sender_phone and not (s and s.escalated):
            # The early escalation did not finish: the tenant still gets the safety advice, and
            # once. It may have texted the advice before it failed, so the advice goes under the
            # escalation's own key (the messenger then returns that text, not a second one).
            evidence = s.precheck.evidence if s and s.precheck else ""
            language = advice_language(self._preferred_language(lease, sender_phone), evidence)
            _, advice = safety_instructions(evidence, language=language)
            key = self._advice_key(package_id)
            advised = self._send_or_note(
                sender_phone,
                f"{advice} "
                + in_language(ALERTED if recipient.phone else UNREACHED_TEXTS, language),
                key,
                unsent,
                "texts",
            )
            if advised is not None:
                events.append(_sent_event(key, advised, decision, now))
        who = _who(lease.sender if lease else None, sender_phone)
        severity = "EMERGENCY" if emergency else "FALLBACK"
        key = f"{package_id}#failopen"
        sent = None
        if recipient.phone is None:
            unsent.append(undeliverable(recipient, "the page", package_id=package_id))
        else:
            # A short reason and who, never their words (#11: the failure may carry
            # them); and no text to the sender: what the package did before it failed is not
            # known here, so nothing true could be said about it.
            sent = self._send_or_note(
                recipient.phone,
                say(
                    FAIL_OPEN_PAGE, "en", severity=severity, who=who, why=why, package_id=package_id
                ),
                key,
                unsent,
                "pages",
            )
        if sent is not None:
            events.append(_sent_event(key, sent, decision, now))
            events.append(
                DomainEvent(
                    event_id=f"{key}#escalation.paged",
                    type="escalation.paged",
                    package_id=package_id,
                    decision_id=decision.decision_id,
                    subject_id=sent.sid,
                    claim=claim_dict(
                        "escalation.paged",
                        {
                            "to_sha256": body_digest(sent.to),
                            "reason": "fallback",
                            "severity": severity.lower(),
                            "why": recipient.why,
                            "person_id": recipient.person_id,
                        },
                    ),
                    occurred_at=now,
                )
            )
        if unsent:
            # The texts could not go either (the provider is down): the completion line and the
            # SendFailures alarm (not an SMS) are how the PM learns of it.
            why = truncate(f"{why}; not sent: {'; '.join(unsent)}", 500)
        # The record is complete and the lease free before any event goes: a bus that stays
        # down through this step's retries costs the events (the sweeper finds each effect
        # without its event: missing_event), never the package's last line or its turn.
        completed = self.deps.decisions.complete(
            PackageCompletion(
                record_id=completion_record_id(package_id),
                package_id=package_id,
                conversation_id=conversation_id,
                route=disposal.route.value if disposal else "unknown",
                completed_by="fail_open",
                decisions=(len(disposal.decisions) if disposal else 0) + 1,
                outcomes=_tally(self.deps.decisions.outcomes_for(package_id)),
                effects=tuple(Effect(event=e.type, subject_id=e.subject_id) for e in events),
                reason=why,
                recorded_at=now,
            )
        )
        released = forfeited = False
        if flush_number is not None and conversation_id != "unknown":
            released = self.deps.buffer.release_lease(conversation_id, package_id, flush_number)
            if not released:
                # It never held the lease (or lost it): give up its turn too, or every later
                # package of the conversation would wait for it forever.
                self.deps.buffer.forfeit_turn(conversation_id, flush_number)
                forfeited = True
        if completed:  # once per package, however often the step runs
            count("Fallbacks")
            logger.error(
                "package failed open",
                extra={"package_id": package_id, "error": failure.Error, "reason": why},
            )
        # Always emit: the watcher reads each of these messages back from the messenger's surface.
        self.deps.bus.publish(events)
        return dump(
            FailOpenResult(
                decision_id=decision.decision_id,
                paged=sent.sid if sent is not None else None,
                unsent=tuple(unsent),
                released=released,
                forfeited=forfeited,
            )
        )

    def step_gate(self, payload: Mapping[str, Any]) -> JSON:
        """Store the gate's task token; while it waits, the package keeps its lease."""
        p = GatePayload.model_validate(payload)
        now = self.deps.clock.now()
        if not self.deps.buffer.renew_lease(
            p.conversation_id,
            p.package_id,
            now,
            GATE_TIMEOUT_SECONDS + self.deps.lease_ttl_seconds,
        ):
            raise LeaseLost(f"{p.package_id}: the lease was taken over before the gate")
        self.deps.gates.put(
            Gate(
                execution_id=p.execution,
                gate=p.gate,
                token=p.token,
                package_id=p.package_id,
                index=p.index,
                paused_at=now,
            )
        )
        return {"paused": p.gate}

    # -- helpers -------------------------------------------------------------------------------

    def _send_or_note(
        self, to: str, body: str, key: str, unsent: list[str], cap: CapName
    ) -> SentMessage | None:
        """Fail-open's own texts: a failure to send is noted (and counted), never raised, so the
        package still completes its record and releases its lease. They count against the daily
        caps but a cap never holds them back: the PM must hear that a package failed, and an
        emergency's advice always goes."""
        if self.deps.caps is not None:
            try:
                self.deps.caps.charge(cap, key, self.deps.clock.now(), force=True)
            except Exception as error:  # the last line never fails on its own bookkeeping
                logger.warning("fail-open could not count a send", extra={"error": str(error)})
        try:
            return self.deps.messenger.send(to, body, idempotency_key=key)
        except NotTextableError as refused:  # no consent: a decision, not a failure
            unsent.append(truncate(f"to {to}: {refused.reason}", 200))
            return None
        except SendFailedError as failed:
            count("SendFailures")
            unsent.append(truncate(f"to {to}: {failed.reason}", 200))
            logger.error("fail-open could not send", extra={"to": to, "reason": failed.reason})
            return None

    def _fail_open_recipient(self, sender: Party | None, now: datetime) -> PageRecipient:
        """Fail-open's page goes where any page goes (docs/on-call.md), by the sender's one
        property. The last line never fails on the directory: unreadable, it pages the
        account's fallback number (or records the page as undeliverable), saying so."""
        about = page_property(None, sender)
        try:
            return page_recipient(
                self.deps.directory, self.deps.on_call_pm_phone, about, now, sender
            )
        except Exception as error:
            logger.warning("fail-open could not read the directory", extra={"error": str(error)})
            chosen = page_recipient(None, self.deps.on_call_pm_phone, about, now, sender)
            return chosen.model_copy(
                update={
                    "why": truncate(f"{chosen.why}; the directory could not be read", WHY_CHARS)
                }
            )

    def _preferred_language(self, lease: LeaseSnapshot | None, phone: str) -> str | None:
        """The sender's directory language: from the lease's snapshot, else the directory (the
        early escalation fails before any lease). None when unknown or unreadable: fail-open
        never fails on its own bookkeeping, and the words then choose."""
        if lease is not None and lease.sender is not None:
            return lease.sender.language
        try:
            party = self.deps.parties.by_phone(phone)
        except Exception as error:
            logger.warning("fail-open could not read the sender", extra={"error": str(error)})
            return None
        return party.language if party is not None else None

    def _advice_key(self, package_id: str) -> str:
        """The early escalation's safety-advice key when it decided one (written ahead, before
        it texted), else fail-open's own."""
        for decided in self.deps.decisions.for_package(package_id):
            if (
                decided.lane is Lane.ESCALATE
                and decided.disposition is Disposition.QUEUED
                and not decided.fallback
                and decided.idempotency_key
            ):
                return safety_advice_key(decided.idempotency_key)
        return f"{package_id}#failopen#safety"

    def _hold(self, s: ExecutionState) -> None:
        self._renew(s.conversation_id, s.package_id, self.deps.lease_ttl_seconds)

    def _renew(self, conversation_id: str, package_id: str, ttl: int) -> None:
        if not self.deps.buffer.renew_lease(
            conversation_id, package_id, self.deps.clock.now(), ttl
        ):
            raise LeaseLost(f"{package_id}: the lease expired and was taken over")

    def _append(self, decision: MaestroDecision) -> bool:
        try:
            self.deps.decisions.append(decision)
        except AlreadyExistsError:
            return False  # a re-run: the log already has it, unchanged
        return True

    def _write_ahead(self, disposal: Disposal) -> int:
        return sum(self._append(d) for d in disposal.decisions)

    def _close_unfinished(self, disposal: Disposal, conversation_id: str, now: datetime) -> None:
        """Every queued action without an outcome gets one: the first failed (it was running, or
        its effect is unknown), the rest were never run."""
        done = {o.index for o in self.deps.decisions.outcomes_for(disposal.package_id)}
        first = True
        for queued in disposal.actions:
            if queued.index in done:
                continue
            status: OutcomeStatus = "failed" if first else "skipped"
            note = (
                "the package failed open while this action ran; its effect is unknown"
                if first
                else "not run: the package failed open before it"
            )
            first = False
            self.deps.decisions.record_outcome(
                ActionOutcomeRecord(
                    record_id=outcome_record_id(disposal.package_id, queued.index),
                    package_id=disposal.package_id,
                    conversation_id=conversation_id,
                    index=queued.index,
                    decision_id=queued.decision_id,
                    lane=queued.lane,
                    status=status,
                    target_wo_id=queued.action.target_wo_id,
                    note=note,
                    recorded_at=now,
                )
            )

    def _update_state(
        self,
        outcome: LaneOutcome,
        package: Package,
        decisions: tuple[MaestroDecision, ...],
        now: datetime,
    ) -> None:
        if outcome.status != "done":
            return
        if outcome.lane == Lane.MANAGE_EXISTING.value and outcome.target_wo_id is None:
            # A released hold changes each WO it held: their events name them.
            for held in dict.fromkeys(
                e.subject_id for e in outcome.events if e.type == "wo.updated"
            ):
                self._update_state(
                    outcome.model_copy(update={"target_wo_id": held}), package, decisions, now
                )
            return
        wo_id = outcome.created_wo_id or outcome.target_wo_id
        if wo_id is None:
            return
        decision_id = next(
            (d.decision_id for d in decisions if d.idempotency_key == outcome.idempotency_key),
            None,
        )
        created = self.deps.work_orders.get(wo_id) if outcome.created_wo_id else None

        def change(current: MaestroState | None) -> dict[str, Any] | None:
            if (
                current is not None
                and current.last_package_id == package.package_id
                and current.last_decision_id == decision_id
            ):
                return None  # this outcome is already reflected: persist is re-running
            outstanding = list(current.outstanding) if current else []
            update: dict[str, Any] = {}
            if outcome.created_wo_id:
                about = WoSnapshot.of(created) if created is not None else None
                outstanding = [OutstandingItem(kind="availability", since=now, asked_about=about)]
            elif outcome.lane in (Lane.SCHEDULE_VISIT.value, Lane.MANAGE_EXISTING.value):
                # A visit booked (re-validated) or a held change released: the thread resumed.
                outstanding = [o for o in outstanding if o.kind != "availability"]
                update.update(interrupted_by=None, interrupted_at=None)
            elif outcome.lane == Lane.RECORD_RATING.value:
                outstanding = [o for o in outstanding if o.kind != "rating"]
            elif outcome.lane == Lane.ESCALATE.value:
                update["urgency"] = Urgency.EMERGENCY
            return {
                **update,
                "outstanding": tuple(outstanding),
                "last_package_id": package.package_id,
                "last_decision_id": decision_id,
            }

        self._change_state(wo_id, now, change)

    def _interrupt(self, wo_id: str, package: Package, now: datetime) -> None:
        def change(current: MaestroState | None) -> dict[str, Any] | None:
            if current is not None and current.interrupted_by == package.package_id:
                return None
            return {"interrupted_by": package.package_id, "interrupted_at": package.flushed_at}

        self._change_state(wo_id, now, change)

    def _change_state(
        self,
        wo_id: str,
        now: datetime,
        change: Callable[[MaestroState | None], dict[str, Any] | None],
    ) -> None:
        """Read, change, write with optimistic concurrency; a lost race re-reads. Never dropped
        silently: after every attempt is lost, persist fails and the state machine retries."""
        for _ in range(STATE_UPDATE_ATTEMPTS):
            current = self.deps.state.get(wo_id)
            update = change(current)
            if update is None:
                return
            base = current.model_dump() if current else {"wo_id": wo_id}
            snapshot = MaestroState.model_validate(
                {
                    **base,
                    **update,
                    "version": (current.version + 1) if current else 1,
                    "updated_at": now,
                }
            )
            try:
                self.deps.state.put(snapshot, current.version if current else None)
                return
            except StaleVersionError:
                continue
        raise TransientError(
            f"{wo_id}: the state update lost {STATE_UPDATE_ATTEMPTS} races in a row"
        )


# -- module helpers ---------------------------------------------------------------------------


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


def _lease(s: ExecutionState) -> LeaseSnapshot:
    if s.lease is None:
        raise ValueError(f"{s.package_id}: this step runs only after the lease")
    return s.lease


def _outcome_record(
    package: Package,
    queued: QueuedAction,
    outcome: LaneOutcome,
    now: datetime,
    status: OutcomeStatus | None = None,
) -> ActionOutcomeRecord:
    return ActionOutcomeRecord(
        record_id=outcome_record_id(package.package_id, queued.index),
        package_id=package.package_id,
        conversation_id=package.conversation_id,
        index=queued.index,
        decision_id=queued.decision_id,
        lane=queued.lane,
        status=status or outcome.status,
        target_wo_id=outcome.target_wo_id,
        created_wo_id=outcome.created_wo_id,
        message_sids=outcome.message_sids,
        effects=outcome.effects,
        note=outcome.note,
        unsent=outcome.unsent,
        folded_into=outcome.folded_into,
        folded_at=outcome.folded_at,
        recorded_at=now,
    )


def _sent_event(
    key: str, sent: SentMessage, decision: MaestroDecision, now: datetime
) -> DomainEvent:
    """The ``message.sent`` claim of a message a step sent itself (not through a lane)."""
    return DomainEvent(
        event_id=f"{key}#message.sent",
        type="message.sent",
        package_id=decision.package_id,
        decision_id=decision.decision_id,
        subject_id=sent.sid,
        claim=sent_claim(sent.to, sent.body, sent.via),
        occurred_at=now,
    )


def _tally(outcomes: list[ActionOutcomeRecord]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
    return tally


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return None


def _lenient_state(raw: dict[str, Any]) -> ExecutionState | None:
    try:
        return ExecutionState.model_validate(raw)
    except ValidationError:
        return None


def short_failure_reason(failure: StepError) -> str:
    """What a PM reads: a short reason, never the raw exception or the tenant's words."""
    plain = FAIL_OPEN_WHY.get(failure.Error)
    if plain is not None:
        return say(plain, "en")
    return say(FAIL_OPEN_WHY_OTHER, "en", error=truncate(mask_text(failure.Error), 60))


def _failure_detail(failure: StepError) -> str:
    """For the decision log: the error name and the first line of its message, without the
    input values pydantic quotes (they may hold the tenant's words) or phone numbers."""
    message = failure.Cause
    try:
        cause = json.loads(failure.Cause)
        if isinstance(cause, dict):
            message = str(cause.get("errorMessage", ""))
    except ValueError:
        pass
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = first.split("input_value=")[0].strip()
    return truncate(mask_text(f"{failure.Error}: {first}" if first else failure.Error), 300)


def _who(sender: Party | None, phone: str | None) -> str:
    if sender is not None:
        unit = say(UNIT_SUFFIX, "en", unit=truncate(sender.unit, 20)) if sender.unit else ""
        name = truncate(sender.name or sender.party_id, 40)
        return say(PAGE_WHO, "en", name=name, role=sender.role.value, unit=unit)
    return phone or say(FAIL_OPEN_UNKNOWN_SENDER, "en")
