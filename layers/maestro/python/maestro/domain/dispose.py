"""Dispose: verdicts + who is speaking + what they have open → the ordered action queue.

The model proposes; this module decides what actually runs, in what order, and records why.
It is pure and deterministic: the same input gives the same queue and the same records.

Rules, in the order they apply:
1. Never guess a person: an unknown sender's package binds to nothing; the PM gets it.
2. Safety first (I1): an escalation goes first and pre-empts everything else; open contexts are
   kept (``interrupted=True``), never closed by the emergency.
3. No guess on mutation (I3): an ambiguous consensus mutates nothing and asks exactly one
   question naming the candidates (I4).
4. Ownership (I4): a target must be one of the sender's open contexts, or a work order a
   ``create_wo`` earlier in the same package opens.
5. Fresh-shortcut TTL (I2): a context past its TTL is not resumed; the sender is asked.
6. Precise detection (I7): a rating is recorded only while its WO has a rating request out.
7. Roles: a rating only from the WO's tenant (or its PM), a new WO only from a tenant, a cancel or
   reschedule only from the tenant or a PM of the WO's property (``maestro.domain.roles``). A PM
   naming a work order that is not one of their properties' open ones is told so, plainly: no
   question among the others, nothing done.
8. Re-validate on resume (I6): answering what a context awaits (the visit's availability)
   re-checks it first; after an emergency, or when it changed, the visit is held for a YES
   instead of booked blindly.
9. An answer to an open question or hold (``maestro.domain.pending``) is the queue, ahead of
   any brain; the items it closes are recorded.
   Caller ID is not identity: a package whose words came by a call that STIR/SHAKEN attestation
   A does not vouch for changes nothing by itself. What it asks in the party's name (a new
   request and its visit, a note or words for the vendor, a rating, a cancel alongside them) is
   held as one confirmation, asked by text to the number, and released exactly as held by a YES
   there; a cancel or reschedule alone is held by its lane, asked by text too. An escalation is
   never held (rule 2).
10. Guards: a question about to be asked again, flipping, or a conversation going nowhere
    brings the PM in once instead (``maestro.domain.guards``).
11. Order: creates before anything that refers to them; one clarify at most, last.
12. Every queued action carries an idempotency key: package id + index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from pydantic import Field

from maestro.domain.actions import (
    LANE_SPECS,
    Action,
    ActionBase,
    AnswerWait,
    Clarify,
    ClarifyParams,
    ContinueWithAssistant,
    ContinueWithAssistantParams,
    CreateWo,
    DeferredCall,
    Escalate,
    EscalateParams,
    Lane,
    ManageExisting,
    ManageExistingParams,
    RecordRating,
    RelayToOpenWo,
    RelayToVendor,
    ScheduleVisit,
    is_new_ref,
    needs_the_owner,
)
from maestro.domain.commands import command_in
from maestro.domain.common import Frozen, truncate
from maestro.domain.consensus import ConsensusResult, ConsensusStatus, Verdict
from maestro.domain.fixed_texts import (
    DOING,
    EMERGENCY_SINCE,
    FALL_BACK_COUNT,
    FALL_BACK_WHY,
    NOT_FOR_PM,
    NOT_FOR_PM_MANY,
    NOT_FOR_PM_ONE,
    NOT_YOURS_TO_DO,
    OPTION,
    OPTION_SEPARATOR,
    PM_HAS_IT,
    QUESTION_LEAD,
    QUESTION_MORE,
    QUESTION_ONE,
    RESUME_NOTE,
    SOMETHING_NEW,
    YOUR_REQUEST,
    say,
)
from maestro.domain.guards import (
    BREAK_IN,
    ESCALATE,
    PROGRESS,
    REPLY,
    SOFT,
    ConversationGuards,
    TrailEntry,
    guard_before_asking,
)
from maestro.domain.language import DEFAULT_LANGUAGE, language_for
from maestro.domain.models import DEFAULT_CONTEXT_TTL, OpenContext, Package, Party, PartyRole
from maestro.domain.pending import PendingTransition, Resolution, ResolvedAction
from maestro.domain.records import (
    ContextRelation,
    Disposition,
    MaestroDecision,
    PreCheckResult,
    RevalidationOutcome,
    Route,
    Stage,
)
from maestro.domain.roles import Part, allowed, may_manage

ClarifyReason = Literal[
    "ambiguous_relation",
    "multi_context",
    "low_agreement",
    "stale_context",
    "not_owned",
    "unresolved_reference",
]


_A = TypeVar("_A", bound=ActionBase)

BreakInJudge = Callable[[str, Sequence[str], datetime], bool]
"""(why the guards tripped, the trail, when) → bring the PM in (True) or ask once more."""


class DisposePolicy(Frozen):
    context_ttl: timedelta = DEFAULT_CONTEXT_TTL
    guards: ConversationGuards = ConversationGuards()


class QueuedAction(Frozen):
    """One action of the queue, with what its lane needs beyond the action itself (set by
    dispose, never by the brain: a model cannot release a hold or defer a reading)."""

    index: int = Field(ge=0)
    idempotency_key: str = Field(description="package id + action index: retries create nothing")
    action: Action
    decision_id: str
    pending_id: str | None = Field(default=None, description="The question or hold it answers")
    release: bool = Field(default=False, description="Releases that hold exactly as held")
    revalidation: RevalidationOutcome | None = None
    say: str = Field(default="", max_length=300, description="Said first: what changed")
    deferred_text: str = Field(default="", description="For a question: the words on hold")
    deferred: tuple[Action, ...] = Field(default=(), description="For a question: the readings")
    options: tuple[str, ...] = Field(default=(), description="For a hold: the numbered options")
    trail: tuple[str, ...] = Field(default=(), description="For a break-in: what happened")
    held: tuple[Action, ...] = Field(
        default=(),
        description="For a hold of actions: the exact actions held (``action`` is the first); "
        "the manage lane holds them, asking the party by text",
    )
    by_unverified_call: bool = Field(
        default=False,
        description="The words it acts on came by a call nothing vouches for (said in the text)",
    )
    package_lanes: tuple[str, ...] = Field(
        default=(),
        description="The lanes of every action this package queued, itself included: a reply "
        "may promise only what one of them does",
    )

    @property
    def lane(self) -> Lane:
        """The lane that runs it: a hold of actions runs on the manage lane, which holds."""
        return Lane.MANAGE_EXISTING if self.held else Lane(self.action.lane)


class Disposal(Frozen):
    package_id: str
    route: Route
    actions: tuple[QueuedAction, ...]
    decisions: tuple[MaestroDecision, ...]
    transitions: tuple[PendingTransition, ...] = Field(
        default=(), description="Open questions and holds this package closes"
    )

    @property
    def lanes(self) -> tuple[Lane, ...]:
        return tuple(q.lane for q in self.actions)

    @property
    def abstained(self) -> bool:
        return any(d.abstained for d in self.decisions)


def idempotency_key(package_id: str, index: int) -> str:
    return f"{package_id}#{index}"


class _Rejection(Frozen):
    verdict: Verdict
    why: str
    clarify_reason: ClarifyReason | None
    candidates: tuple[str, ...] = ()
    refused: tuple[str, ...] = Field(
        default=(), description="Work orders a PM named that are not their properties' open ones"
    )
    told: str = Field(default="", description="What the sender is told was not done, and why")


class _Builder:
    """Accumulates the queue and the decision records for one package."""

    def __init__(
        self,
        package: Package,
        contexts: Sequence[OpenContext],
        consensus: ConsensusResult | None,
        *,
        trail: Sequence[TrailEntry] = (),
        guards: ConversationGuards | None = None,
        break_in: BreakInJudge | None = None,
    ) -> None:
        self.package = package
        self.contexts = contexts
        self.consensus = consensus
        self.trail = tuple(trail)
        self.guards = guards or ConversationGuards()
        self.break_in = break_in
        self.queue: list[QueuedAction] = []
        self.decisions: list[MaestroDecision] = []
        self.transitions: tuple[PendingTransition, ...] = ()
        # Its words (or the words a question it answers deferred) came by a call that no
        # attestation vouches for: every queued item says so (a hold's text, a question's record).
        self.unverified = package.by_unverified_call
        self.language = DEFAULT_LANGUAGE
        """The sender's: what a fixed reply queued here is written in."""

    def _decision(
        self,
        *,
        stage: Stage,
        disposition: Disposition,
        lane: Lane,
        target: str | None,
        command: Action | None,
        confidence: float,
        reason: str,
        relation: ContextRelation = "none",
        threshold: float | None = None,
        interrupted: bool = False,
        abstained: bool = False,
        fallback: bool = False,
        key: str | None = None,
        bound: str | None = None,
        revalidation: RevalidationOutcome | None = None,
        asks: str | None = None,
    ) -> MaestroDecision:
        index = len(self.decisions)
        consensus = self.consensus
        if bound is None and target is not None and disposition is Disposition.QUEUED:
            bound = None if is_new_ref(target) else target
        decision = MaestroDecision(
            decision_id=f"{self.package.package_id}#{stage}#{index}",
            package_id=self.package.package_id,
            conversation_id=self.package.conversation_id,
            stage=stage,
            index=index,
            disposition=disposition,
            lane=lane,
            target_wo_id=target,
            command=command,
            context_relation=relation,
            open_context_count=len(self.contexts),
            bound_context_id=bound,
            interrupted=interrupted,
            resume_revalidated=revalidation is not None,
            revalidation=revalidation,
            abstained=abstained,
            fallback=fallback,
            asks=asks,
            confidence=confidence,
            threshold=threshold,
            votes=dict(consensus.votes) if consensus else {},
            samples=consensus.k if consensus else 0,
            valid_samples=consensus.valid_samples if consensus else 0,
            entropy_bits=consensus.entropy_bits if consensus else 0.0,
            model=consensus.model if consensus else "",
            input_tokens=consensus.input_tokens if consensus and index == 0 else 0,
            output_tokens=consensus.output_tokens if consensus and index == 0 else 0,
            reason=truncate(reason, 500),
            idempotency_key=key,
            recorded_at=self.package.flushed_at,
        )
        self.decisions.append(decision)
        return decision

    def enqueue(
        self,
        action: Action,
        *,
        stage: Stage,
        confidence: float,
        reason: str,
        relation: ContextRelation = "none",
        threshold: float | None = None,
        interrupted: bool = False,
        abstained: bool = False,
        fallback: bool = False,
        extras: ResolvedAction | None = None,
    ) -> None:
        extras = extras or ResolvedAction(action=action)
        held = extras.held
        asks = asks_signal(action, extras.release, held)
        if asks is not None and self._break_in(action, asks, reason):
            return
        index = len(self.queue)
        key = idempotency_key(self.package.package_id, index)
        for each in held:
            # On the record as proposed, bound to the hold that keeps them (its id is the key).
            self._decision(
                stage=stage,
                disposition=Disposition.HELD,
                lane=Lane(each.lane),
                target=each.target_wo_id,
                command=each,
                confidence=confidence,
                reason=f"held for the party's YES by text: {reason}",
                relation=relation,
                threshold=threshold,
                bound=key,
            )
        decision = self._decision(
            stage=stage,
            disposition=Disposition.QUEUED,
            lane=Lane.MANAGE_EXISTING if held else Lane(action.lane),
            target=None if held else action.target_wo_id,
            command=None if held else action,
            confidence=confidence,
            reason=f"holds {len(held)} action(s) until a YES by text: {reason}" if held else reason,
            relation=relation,
            threshold=threshold,
            interrupted=interrupted,
            abstained=abstained,
            fallback=fallback,
            key=key,
            bound=extras.pending_id,
            revalidation=extras.revalidation,
            asks=asks,
        )
        self.queue.append(
            QueuedAction(
                index=index,
                idempotency_key=key,
                action=action,
                decision_id=decision.decision_id,
                pending_id=extras.pending_id,
                release=extras.release,
                revalidation=extras.revalidation,
                say=extras.say,
                deferred_text=extras.deferred_text,
                deferred=extras.deferred,
                options=extras.options,
                held=held,
                by_unverified_call=extras.by_unverified_call or self.unverified,
            )
        )

    def _break_in(self, action: Action, asks: str, reason: str) -> bool:
        """Guards (seed 003): a question about to loop becomes one page to the PM with the
        trail, and the party is told; asked again after that, the party is told the PM has it.
        Returns True when the question was replaced."""
        verdict = guard_before_asking(self.trail, asks, self.package.flushed_at, self.guards)
        if verdict.tripped is None:
            return False
        lines = tuple(e.line or e.signal for e in self.trail[-6:])
        if (
            not verdict.already_broken_in
            and self.break_in is not None
            and not self.break_in(verdict.reason, lines, self.package.flushed_at)
        ):
            return False  # the judgment (decide()) says one more question is worth asking
        self._decision(
            stage="guard",
            disposition=Disposition.REJECTED,
            lane=Lane(action.lane),
            target=action.target_wo_id,
            command=action,
            confidence=1.0,
            reason=f"guard ({verdict.tripped}): {verdict.reason}; not asked: {reason}",
            asks=asks,
        )
        index = len(self.queue)
        key = idempotency_key(self.package.package_id, index)
        replacement: Action
        if verdict.already_broken_in:
            replacement = ContinueWithAssistant(
                confidence=1.0,
                why="the PM was brought in already for this conversation",
                params=ContinueWithAssistantParams(reply_hint=say(PM_HAS_IT, self.language)),
            )
            why = "guard: the PM already has it; the party is told so, not asked again"
        else:
            replacement = Escalate(
                confidence=1.0,
                why=truncate(f"guard ({verdict.tripped}): {verdict.reason}", 400),
                params=EscalateParams(
                    reason="guard_tripped", severity="info", hazard=truncate(verdict.reason, 200)
                ),
            )
            why = f"guard ({verdict.tripped}): break-in, the PM is brought in once with the trail"
        decision = self._decision(
            stage="guard",
            disposition=Disposition.QUEUED,
            lane=Lane(replacement.lane),
            target=None,
            command=replacement,
            confidence=1.0,
            reason=why,
            key=key,
        )
        trail = tuple(
            truncate(f"{e.at:%d %b %H:%M} {e.line or e.signal}", 160) for e in self.trail[-6:]
        )
        self.queue.append(
            QueuedAction(
                index=index,
                idempotency_key=key,
                action=replacement,
                decision_id=decision.decision_id,
                trail=trail,
            )
        )
        return True

    def record(
        self,
        verdict: Verdict,
        disposition: Disposition,
        reason: str,
        *,
        interrupted: bool = False,
        abstained: bool = False,
    ) -> None:
        self._decision(
            stage="dispose",
            disposition=disposition,
            lane=verdict.lane,
            target=verdict.target_wo_id,
            command=verdict.action,
            confidence=verdict.share,
            threshold=verdict.threshold,
            reason=reason,
            interrupted=interrupted,
            abstained=abstained,
        )

    def close(self, transition: PendingTransition) -> None:
        self._decision(
            stage="resolve",
            disposition=Disposition.CLOSED,
            lane=Lane.CLARIFY if transition.kind == "clarification" else Lane.MANAGE_EXISTING,
            target=None,
            command=None,
            confidence=1.0,
            reason=f"{transition.kind} {transition.pending_id} {transition.to}"
            + (f": {transition.reason}" if transition.reason else ""),
            bound=transition.pending_id,
        )


def asks_signal(action: Action, release: bool = False, held: Sequence[Action] = ()) -> str | None:
    """The guard signal of a question this action puts to the party, if it asks one."""
    if held:
        lanes = "+".join(a.lane for a in held)
        named = (
            a.params.wo_ids if isinstance(a, ManageExisting) else (a.target_wo_id,) for a in held
        )
        targets = sorted({t for ids in named for t in ids if t and not is_new_ref(t)})
        return f"hold:{lanes}:" + ",".join(targets)
    if isinstance(action, Clarify):
        return "ask:" + ",".join(sorted(action.params.candidate_ids) or ["*"])
    if (
        isinstance(action, ManageExisting)
        # A completion report or its confirmation asks the sender nothing (a PM's close is
        # held like a cancel, but a repeated close is no loop worth breaking into).
        and action.params.operation not in ("list", "complete")
        and not release
    ):
        return f"hold:{action.params.operation}:" + ",".join(sorted(action.params.wo_ids))
    if isinstance(action, AnswerWait) and action.params.answer == "unclear":
        # An offer or approval asked again: the guards break in if it keeps coming back.
        asked = action.params.candidates or (action.target_wo_id or "*",)
        return f"ask:{action.params.kind}:" + ",".join(sorted(set(asked)))
    return None


def _signal(queued: Sequence[MaestroDecision]) -> tuple[str, str]:
    """One package's signal, strongest first: break-in, escalation, progress, a question, a
    handback, a reply."""

    def is_break_in(d: MaestroDecision) -> bool:
        return isinstance(d.command, Escalate) and d.command.params.reason == "guard_tripped"

    if any(is_break_in(d) for d in queued):
        return BREAK_IN, "brought the PM in"
    if any(
        isinstance(d.command, Escalate) and d.command.params.reason == "emergency" for d in queued
    ):
        return ESCALATE, "escalated"
    for d in queued:
        released = d.lane is Lane.MANAGE_EXISTING and d.revalidation == "valid" and not d.asks
        # A wait's answer asked again (answer_wait, unclear) is a question, not progress.
        if (LANE_SPECS[d.lane].mutating and not d.asks) or released:
            return PROGRESS, f"{d.lane.value} {d.target_wo_id or ''}".strip()
    for d in queued:
        if d.asks is not None:
            return d.asks, f"asked ({d.asks})"
    if queued and all(d.stage == "precheck" for d in queued):
        return SOFT, "handed back"
    return REPLY, "replied"


def trail_of(decisions: Sequence[MaestroDecision]) -> tuple[TrailEntry, ...]:
    """The conversation's guard trail from its recent decisions: one signal per package."""
    by_package: dict[str, list[MaestroDecision]] = {}
    for decision in sorted(decisions, key=lambda d: (d.recorded_at, d.decision_id)):
        by_package.setdefault(decision.package_id, []).append(decision)
    trail: list[TrailEntry] = []
    for package_id, made in by_package.items():
        queued = [d for d in made if d.disposition is Disposition.QUEUED]
        signal, line = _signal(queued)
        trail.append(
            TrailEntry(
                package_id=package_id, at=made[0].recorded_at, signal=signal, line=line[:200]
            )
        )
    return tuple(trail)


_MAX_QUESTION = 400  # ClarifyParams.question's limit


def _clarify_question(
    candidates: Sequence[str],
    contexts: Sequence[OpenContext],
    sender: Party | None = None,
    package: Package | None = None,
) -> str:
    """One question naming the candidates, numbered, in the sender's language (its fixed
    framing; the descriptions are as stored). Each description is cut to its share of the
    question's limit here, where the line is built: stored descriptions may be long."""
    language = language_for(
        sender.language if sender is not None else None, package.text if package else ""
    )
    lines = {c.context_id: c.description for c in contexts}
    your = say(YOUR_REQUEST, language)
    if len(candidates) == 1 and candidates[0] != "new":
        only = candidates[0]
        about = truncate(lines.get(only, your), 200)
        return truncate(say(QUESTION_ONE, language, wo_id=only, about=about), _MAX_QUESTION)
    if not candidates:
        return say(QUESTION_MORE, language)
    lead = say(QUESTION_LEAD, language) + " "
    share = max(12, (_MAX_QUESTION - len(lead)) // len(candidates) - 8)
    options = []
    for number, candidate in enumerate(candidates, start=1):
        if candidate == "new":
            line = say(SOMETHING_NEW, language)
        else:
            line = truncate(f"{candidate}: {lines.get(candidate, your)}", share)
        options.append(say(OPTION, language, number=number, line=line))
    return truncate(lead + OPTION_SEPARATOR.join(options), _MAX_QUESTION)


def _relation(
    action: Action, context: OpenContext | None, contexts: Sequence[OpenContext]
) -> ContextRelation:
    lane = Lane(action.lane)
    if lane is Lane.CREATE_WO:
        return "pivots" if contexts else "none"
    if lane is Lane.CLARIFY:
        return "ambiguous"
    if context is None:
        return "none"
    if lane is Lane.SCHEDULE_VISIT and context.awaiting == "availability":
        return "resolves"
    if lane is Lane.RECORD_RATING and context.awaiting == "rating":
        return "resolves"
    if lane in {Lane.RELAY_TO_OPEN_WO, Lane.RELAY_TO_VENDOR, Lane.SCHEDULE_VISIT}:
        return "continues"
    return "none"


def _escalation_from(
    consensus: ConsensusResult | None, precheck: PreCheckResult | None
) -> Escalate | None:
    if consensus is not None and consensus.status is ConsensusStatus.ESCALATE:
        for verdict in consensus.verdicts:
            if isinstance(verdict.action, Escalate):
                return verdict.action
    if precheck is not None and precheck.route is Route.ESCALATE:
        return Escalate(
            confidence=precheck.confidence,
            why=f"pre-check ({precheck.source}) raised {precheck.severity}",
            evidence=precheck.evidence[:400],
            params=EscalateParams(
                reason="emergency",
                severity="urgent" if precheck.severity == "urgent" else "emergency",
                hazard=precheck.evidence[:200],
            ),
        )
    return None


def dispose(
    package: Package,
    sender: Party | None,
    open_contexts: Sequence[OpenContext],
    consensus: ConsensusResult | None,
    *,
    precheck: PreCheckResult | None = None,
    policy: DisposePolicy | None = None,
    resolution: Resolution | None = None,
    trail: Sequence[TrailEntry] = (),
    break_in: BreakInJudge | None = None,
) -> Disposal:
    """Turn the brain's verdicts into the final ordered action queue and its decision records.

    ``open_contexts`` are the *sender's* open contexts: ownership is checked against them.
    ``consensus`` may be None when the pre-check routed the package away from the brain, or an
    answer to an open question or hold (``resolution``) made it unnecessary. ``trail`` is the
    conversation's recent guard signals.
    """
    policy = policy or DisposePolicy()
    route = precheck.route if precheck is not None else Route.REASONING
    if route is Route.HANDBACK and consensus is not None:
        # Resolve sent the pre-check's handback on to the brain (a "thanks" or "ok" that may
        # answer a question no pending item stores, docs/completion.md): its reading decides.
        route = Route.REASONING
    if sender is None:
        open_contexts = ()  # an unknown number owns nothing, whatever the caller passed
    contexts = tuple(sorted(open_contexts, key=lambda c: c.context_id))
    build = _Builder(
        package, contexts, consensus, trail=trail, guards=policy.guards, break_in=break_in
    )
    build.language = language_for(sender.language if sender is not None else None, package.text)
    verdicts = consensus.verdicts if consensus is not None else ()
    build.transitions = resolution.transitions if resolution is not None else ()
    for transition in build.transitions:
        build.close(transition)

    owned = {c.context_id for c in contexts}
    escalation = _escalation_from(consensus, precheck)
    if escalation is not None:
        escalation = _unbind_foreign(escalation, owned)
        route = Route.ESCALATE
        interrupted = bool(contexts)
        build.enqueue(
            escalation,
            stage="precheck" if precheck and precheck.route is Route.ESCALATE else "dispose",
            confidence=max(
                precheck.confidence if precheck and precheck.route is Route.ESCALATE else 0.0,
                next((v.share for v in verdicts if v.lane is Lane.ESCALATE), 0.0),
            ),
            reason="safety first: escalation pre-empts the package; open contexts kept",
            interrupted=interrupted,
        )
        for verdict in verdicts:
            if verdict.lane is not Lane.ESCALATE:
                build.record(
                    verdict,
                    Disposition.PREEMPTED,
                    "pre-empted by escalation; its context is kept for re-validation",
                    interrupted=interrupted,
                )
        if sender is None:
            build.enqueue(
                _identity_handoff(package),
                stage="dispose",
                confidence=1.0,
                reason="unknown sender: the PM identifies them; nothing is bound by guess",
            )
        return _finish(build, route)

    if sender is None:
        for verdict in verdicts:
            build.record(verdict, Disposition.REJECTED, "unknown sender: never bound to a person")
        build.enqueue(
            _identity_handoff(package),
            stage="dispose",
            confidence=1.0,
            reason="unknown sender: the PM identifies them; nothing is bound by guess",
        )
        return _finish(build, route)

    if resolution is not None and resolution.route == "answered":
        _dispose_answer(build, resolution)
        return _finish(build, Route.REASONING)

    if route is Route.HANDBACK:
        build.enqueue(
            ContinueWithAssistant(
                confidence=precheck.confidence if precheck else 1.0,
                why="pre-check: nothing to act on",
                evidence=precheck.evidence[:400] if precheck else "",
            ),
            stage="precheck",
            confidence=precheck.confidence if precheck else 1.0,
            reason="pre-check handed back to the assistant",
        )
        return _finish(build, route)

    if consensus is None or consensus.fallback:
        for verdict in verdicts:
            build.record(verdict, Disposition.BELOW_THRESHOLD, "no quorum among the samples")
        build.enqueue(
            Escalate(
                confidence=0.0,
                # The page quotes this: why, in words the PM reads (the failure kind).
                why=fallback_why(consensus),
                params=EscalateParams(reason="fallback", severity="info"),
            ),
            stage="fallback",
            confidence=0.0,
            reason=consensus.reason
            if consensus
            else "no consensus was given for a reasoning route",
            fallback=True,
        )
        return _finish(build, route)

    if consensus.status is ConsensusStatus.AMBIGUOUS:
        # A reading the sender could never run (a vendor's rating, a cancel of what is not
        # theirs, a rating nobody asked for) is refused as the decided path refuses it, never
        # deferred: an answer to the question would otherwise run it.
        never = _never_runnable(verdicts, contexts, package, policy, sender)
        for verdict in verdicts:
            if verdict.key in never:
                build.record(verdict, Disposition.REJECTED, never[verdict.key].why)
                continue
            build.record(
                verdict,
                Disposition.BELOW_THRESHOLD,
                f"abstained: {consensus.reason}",
                abstained=True,
            )
        verdicts = tuple(v for v in verdicts if v.key not in never)
        refused_ids = {c for r in never.values() for c in _candidates_of_verdict(r.verdict)}
        kept_ids = {c for v in verdicts for c in _candidates_of_verdict(v)}
        candidates = _owned_candidates(
            tuple(c for c in consensus.candidates if c in kept_ids or c not in refused_ids),
            contexts,
        )
        _tell_not_theirs(build, list(never.values()))
        _tell_refused(build, list(never.values()))
        if never and not any(
            v.mutating or v.lane in (Lane.MANAGE_EXISTING, Lane.CLARIFY) for v in verdicts
        ):
            _reply_if_nothing(build, "nothing the sender may run was left to ask about")
            return _finish(build, route)
        deferred = [v.action for v in verdicts if v.mutating or v.lane is Lane.MANAGE_EXISTING]
        build.enqueue(
            Clarify(
                confidence=max((v.share for v in verdicts), default=0.0),
                why=consensus.reason[:400],
                params=ClarifyParams(
                    question=_clarify_question(candidates, contexts, sender, package),
                    candidate_ids=candidates,
                    reason="multi_context" if len(candidates) > 1 else "low_agreement",
                    call=_deferred_call([v.action for v in verdicts], package),
                ),
            ),
            stage="dispose",
            confidence=max((v.share for v in verdicts), default=0.0),
            reason=f"no guess on mutation: {consensus.reason}",
            relation="ambiguous",
            abstained=True,
            extras=_deferring(package, deferred),
        )
        return _finish(build, route)

    _dispose_decided(build, verdicts, contexts, package, policy, sender)
    return _finish(build, route)


def fallback_why(consensus: ConsensusResult | None) -> str:
    """Why the brain gave no usable answer, in words, for the PM's page: the commonest failure
    kind of the samples and how many failed, else that they agreed on nothing."""
    if consensus is None:
        return say(FALL_BACK_WHY["no_reading"], "en")
    failures = consensus.failures
    if not failures:
        return say(FALL_BACK_WHY["no_quorum"], "en")
    kind = max(sorted(failures), key=lambda k: failures[k])
    words = say(FALL_BACK_WHY.get(kind, FALL_BACK_WHY["transport_error"]), "en")
    return truncate(
        say(FALL_BACK_COUNT, "en", words=words, failed=sum(failures.values()), k=consensus.k),
        400,
    )


def _deferred_call(readings: Sequence[Action], package: Package) -> DeferredCall | None:
    """The command a question about these readings defers: the one a proposed question carries,
    else a cancel, reschedule or close every held reading agrees on (its work orders are what is
    asked), else the one the words give. Never a note: command words are not relayed."""
    for action in readings:
        if isinstance(action, Clarify) and action.params.call is not None:
            return action.params.call
    words = truncate(" ".join(package.text.split()), 300)
    operations = {
        a.params.operation
        for a in readings
        if isinstance(a, ManageExisting) and a.params.operation != "list"
    }
    if len(operations) == 1 and (operation := operations.pop()) in (
        "cancel",
        "reschedule",
        "complete",
    ):
        return DeferredCall(operation=operation, request=words)
    if not operations and (command := command_in(package.text)) is not None:
        return DeferredCall(operation=command, request=words)
    return None


def _deferring(package: Package, readings: Sequence[Action]) -> ResolvedAction:
    """What a question puts on hold: the package's words and the readings it withheld, so
    "1" or "the kitchen one" replays them on the chosen work order."""
    return ResolvedAction(
        action=ContinueWithAssistant(),  # placeholder: enqueue uses only the extras
        deferred_text=package.text,
        deferred=tuple(readings)[:10],
    )


def _dispose_answer(build: _Builder, resolution: Resolution) -> None:
    """The queue an answer to an open question or hold calls for (``maestro.domain.pending``):
    recorded at the resolve stage, bound to the item it answers, re-validated where it acts.
    What it would change in the party's name on the words of a call nothing vouches for (the
    answer's, or the words a question deferred) is held for a YES by text instead."""
    build.unverified = build.unverified or resolution.by_unverified_call
    resolved = resolution.actions
    held = _held_for_text(
        build.unverified,
        [r.action for r in resolved],
        [r.release or bool(r.held) for r in resolved],
    )
    for index, item in enumerate(resolved):
        if index in held[1:]:
            continue  # held with the first
        if held and index == held[0]:
            item = item.model_copy(
                update={
                    "held": tuple(resolved[i].action for i in held),
                    "say": truncate(
                        " ".join(resolved[i].say for i in held if resolved[i].say), 300
                    ),
                }
            )
        build.enqueue(
            item.action,
            stage="resolve",
            confidence=1.0,
            reason=resolution.reason,
            relation="resolves",
            extras=item,
        )
    if not build.queue:
        build.enqueue(
            ContinueWithAssistant(confidence=1.0, why="the answer called for nothing more"),
            stage="resolve",
            confidence=1.0,
            reason=resolution.reason or "nothing to do",
            relation="resolves",
        )


def _held_for_text(
    unverified: bool, actions: Sequence[Action], exempt: Sequence[bool] = ()
) -> tuple[int, ...]:
    """Which of ``actions`` are held together for a YES by text, by index: those that would
    change something in the party's name, when the words came by a call nothing vouches for.
    ``exempt`` ones are holds or releases already. A cancel or reschedule alone is left to the
    manage lane, which holds it anyway (asking by text); alongside anything else it joins the one
    hold, so one text asks about all of it and one YES releases all of it."""
    if not unverified:
        return ()
    owner = tuple(
        i
        for i, action in enumerate(actions)
        if needs_the_owner(action) and not (exempt[i] if i < len(exempt) else False)
    )
    if all(isinstance(actions[i], ManageExisting) for i in owner):
        return ()
    return owner


def _owned_candidates(
    candidates: Sequence[str], contexts: Sequence[OpenContext]
) -> tuple[str, ...]:
    owned = {c.context_id for c in contexts}
    # Only the sender's own contexts (or "a new request") may be named back to them.
    return tuple(c for c in candidates if c in owned or c == "new")[:10]


def _unbind_foreign(action: _A, owned: set[str]) -> _A:
    """Drop a non-mutating action's target when it is not the sender's: the reply or the page
    still happens, but it is not attached to someone else's work order."""
    target = action.target_wo_id
    if target is None or target in owned:
        return action
    return action.model_copy(update={"target_wo_id": None})


def _identity_handoff(package: Package) -> Escalate:
    return Escalate(
        confidence=1.0,
        why="message from a number that is not in the party directory",
        evidence=package.sender_phone,
        params=EscalateParams(reason="identity", severity="info"),
    )


def _never_runnable(
    verdicts: Sequence[Verdict],
    contexts: Sequence[OpenContext],
    package: Package,
    policy: DisposePolicy,
    sender: Party | None,
) -> dict[str, _Rejection]:
    """The held readings that no answer could make runnable, by key: refused by the sender's
    role or part, or a rating with no request out (``_check``'s refusals that ask nothing)."""
    if sender is None:
        return {}
    by_id = {c.context_id: c for c in contexts}
    found: dict[str, _Rejection] = {}
    for verdict in verdicts:
        if not (verdict.mutating or verdict.lane is Lane.MANAGE_EXISTING):
            continue
        rejection = _check(verdict, by_id, set(), package, policy, sender)
        if rejection is not None and rejection.clarify_reason is None:
            found[verdict.key] = rejection
    return found


def _candidates_of_verdict(verdict: Verdict) -> tuple[str, ...]:
    if isinstance(verdict.action, ManageExisting):
        return verdict.action.params.wo_ids
    return (verdict.target_wo_id,) if verdict.target_wo_id else ()


def _dispose_decided(
    build: _Builder,
    verdicts: Sequence[Verdict],
    contexts: Sequence[OpenContext],
    package: Package,
    policy: DisposePolicy,
    sender: Party,
) -> None:
    by_id = {c.context_id: c for c in contexts}
    manager = sender.role is PartyRole.PM
    passed = [
        # A PM's reply about a work order stays bound to it, so one not theirs is refused below.
        v.model_copy(update={"action": _unbind_foreign(v.action, set(by_id))})
        if not v.mutating and not manager
        else v
        for v in verdicts
        if v.passed
    ]
    for verdict in verdicts:
        if not verdict.passed:
            build.record(
                verdict,
                Disposition.BELOW_THRESHOLD,
                f"{verdict.support} vote(s), share {verdict.share:.2f} < {verdict.threshold:.2f}",
            )

    created_refs = {v.action.params.ref for v in passed if isinstance(v.action, CreateWo)}
    accepted: list[Verdict] = []
    rejections: list[_Rejection] = []
    for verdict in passed:
        rejection = _check(verdict, by_id, created_refs, package, policy, sender)
        if rejection is None:
            accepted.append(verdict)
        else:
            rejections.append(rejection)
            if isinstance(verdict.action, CreateWo):
                created_refs.discard(verdict.action.params.ref)
    # A follow-up of a rejected create has nothing to attach to.
    still: list[Verdict] = []
    for verdict in accepted:
        target = verdict.target_wo_id
        if is_new_ref(target) and target not in created_refs:
            rejections.append(
                _Rejection(
                    verdict=verdict,
                    why=f"{target} is not created in this package",
                    clarify_reason="unresolved_reference",
                )
            )
        else:
            still.append(verdict)

    # Creates first (later actions may refer to them), then what the new work orders need (a
    # visit for new:1), then the rest in the samples' order: a call that opens a request, says
    # when the tenant is home and mentions an open one runs create → schedule → relay (seed 001).
    def rank(v: Verdict) -> int:
        if v.lane is Lane.CREATE_WO:
            return 0
        return 1 if is_new_ref(v.target_wo_id) else 2

    ordered = sorted(still, key=lambda v: (rank(v), v.position, v.key))
    replied = False
    planned: list[tuple[Verdict, Action, ResolvedAction | None]] = []
    for verdict in ordered:
        if verdict.lane is Lane.CONTINUE_WITH_ASSISTANT:
            if replied:
                continue
            replied = True
        context = by_id.get(verdict.target_wo_id or "")
        action, extras = _revalidated_resume(verdict.action, context, build.language)
        planned.append((verdict, action, extras))
    held = _held_for_text(package.by_unverified_call, [action for _, action, _ in planned])
    for index, (verdict, action, extras) in enumerate(planned):
        if index in held[1:]:
            continue  # held with the first
        agree = f"{verdict.support}/{build.consensus.k if build.consensus else 0} samples agree"
        context = by_id.get(verdict.target_wo_id or "")
        if held and index == held[0]:
            says = [e.say for _, _, e in (planned[i] for i in held) if e is not None and e.say]
            extras = ResolvedAction(
                action=action,
                held=tuple(planned[i][1] for i in held),
                say=truncate(" ".join(says), 300),
            )
            build.enqueue(
                action,
                stage="dispose",
                confidence=min(planned[i][0].share for i in held),
                threshold=max((planned[i][0].threshold for i in held), default=None),
                reason=f"{agree}; the words came by a call whose caller ID nothing vouches for "
                "(no STIR/SHAKEN attestation A)",
                relation=_relation(verdict.action, context, contexts),
                extras=extras,
            )
            continue
        build.enqueue(
            action,
            stage="dispose",
            confidence=verdict.share,
            threshold=verdict.threshold,
            reason=agree if extras is None else f"{agree}; {extras.say}",
            relation=_relation(verdict.action, context, contexts),
            extras=extras,
        )

    for rejection in rejections:
        build.record(rejection.verdict, Disposition.REJECTED, rejection.why)
    _tell_not_theirs(build, rejections)
    asking = [r for r in rejections if r.clarify_reason is not None]
    if asking:
        candidates = _owned_candidates(
            tuple(dict.fromkeys(c for r in asking for c in r.candidates)), contexts
        )
        reason = asking[0].clarify_reason
        assert reason is not None
        build.enqueue(
            Clarify(
                confidence=0.0,
                why="; ".join(r.why for r in asking)[:400],
                params=ClarifyParams(
                    question=_clarify_question(candidates, contexts, sender, package),
                    candidate_ids=candidates,
                    reason=reason,
                    call=_deferred_call([r.verdict.action for r in asking], package),
                ),
            ),
            stage="dispose",
            confidence=0.0,
            reason="asked instead of acting: " + "; ".join(r.why for r in asking),
            relation="ambiguous",
            abstained=True,
            extras=_deferring(package, [r.verdict.action for r in asking]),
        )
    _tell_refused(build, rejections)
    _reply_if_nothing(build, "nothing actionable survived disposal")


def _tell_not_theirs(build: _Builder, rejections: Sequence[_Rejection]) -> None:
    """A PM who named work orders not of their properties is told which."""
    refused = tuple(dict.fromkeys(w for r in rejections for w in r.refused))
    if refused:
        build.enqueue(
            ContinueWithAssistant(
                confidence=1.0,
                why=f"a PM named work orders not of their properties: {', '.join(refused)}"[:400],
                params=ContinueWithAssistantParams(reply_hint=refusal_for_pm(refused)),
            ),
            stage="dispose",
            confidence=1.0,
            reason="refused: not an open work order of a property the PM manages",
        )


def _tell_refused(build: _Builder, rejections: Sequence[_Rejection]) -> None:
    """The sender is told what their role may not have done, and why."""
    told = tuple(dict.fromkeys(r.told for r in rejections if r.told))
    if told:
        build.enqueue(
            ContinueWithAssistant(
                confidence=1.0,
                why="what the sender asked for is not theirs to ask: they are told so",
                params=ContinueWithAssistantParams(reply_hint=truncate(" ".join(told), 500)),
            ),
            stage="dispose",
            confidence=1.0,
            reason="refused by role: the sender is told what was not done and why",
        )


def _reply_if_nothing(build: _Builder, why: str) -> None:
    """An empty queue still answers the sender: the assistant replies."""
    if not build.queue:
        build.enqueue(
            ContinueWithAssistant(confidence=0.0, why=why, params=ContinueWithAssistantParams()),
            stage="dispose",
            confidence=0.0,
            reason="nothing to act on: the assistant replies",
        )


def _check(
    verdict: Verdict,
    by_id: dict[str, OpenContext],
    created_refs: set[str],
    package: Package,
    policy: DisposePolicy,
    sender: Party,
) -> _Rejection | None:
    """Why a passed verdict may not run as proposed, or None if it may."""
    action = verdict.action
    spec = LANE_SPECS[verdict.lane]
    target = action.target_wo_id
    if isinstance(action, CreateWo) and not allowed(Lane.CREATE_WO, _own_part(sender)):
        return _Rejection(
            verdict=verdict,
            why=f"a {sender.role.value} cannot open a work order (it opens in the tenant's name)",
            clarify_reason=None,
        )
    if isinstance(action, ManageExisting):
        parts = {w: _part(sender, by_id.get(w)) for w in action.params.wo_ids}
        operation = action.params.operation
        refused = [w for w, part in parts.items() if w in by_id and not may_manage(operation, part)]
        if action.params.operation != "list" and refused and sender.role is PartyRole.PM:
            return _refused(verdict, sender, tuple(refused))
        if action.params.operation != "list" and refused:
            return _Rejection(
                verdict=verdict,
                why=f"a {sender.role.value} may not {operation} {', '.join(refused)}",
                clarify_reason=None,
                told=_not_yours(action.params.operation, refused, sender, package),
            )
        foreign = [w for w in action.params.wo_ids if w not in by_id]
        if foreign and sender.role is PartyRole.PM:
            return _refused(verdict, sender, tuple(foreign))
        if foreign:
            return _Rejection(
                verdict=verdict,
                why=f"not the sender's: {', '.join(foreign)}",
                clarify_reason="not_owned",
                candidates=tuple(by_id),
            )
        return None
    if target is None:
        return None
    if is_new_ref(target):
        if target in created_refs:
            return None
        return _Rejection(
            verdict=verdict,
            why=f"{target} is not created in this package",
            clarify_reason="unresolved_reference",
        )
    context = by_id.get(target)
    if context is None and sender.role is PartyRole.PM:
        return _refused(verdict, sender, (target,))
    if context is None:
        # Never fall back to "the most recent" one: ask among the sender's own (I4).
        return _Rejection(
            verdict=verdict,
            why=f"{target} is not one of the sender's open contexts",
            clarify_reason="not_owned",
            candidates=tuple(by_id),
        )
    if spec.mutating and context.is_stale(package.flushed_at, policy.context_ttl):
        age = package.flushed_at - context.freshness_anchor
        return _Rejection(
            verdict=verdict,
            why=f"{target} was last active {age.days}d {age.seconds // 3600}h ago, past its TTL",
            clarify_reason="stale_context",
            candidates=(target,),
        )
    if not allowed(verdict.lane, _part(sender, context)) and sender.role is PartyRole.PM:
        return _refused(verdict, sender, (target,))
    if not allowed(verdict.lane, _part(sender, context)):
        # Roles: a vendor never rates, cancels or relays for the tenant, whatever it says.
        return _Rejection(
            verdict=verdict,
            why=f"a {sender.role.value} may not {verdict.lane.value} on {target}",
            clarify_reason=None,
            told=_not_yours(_DOING_BY_LANE.get(verdict.lane, "change"), (target,), sender, package),
        )
    if (
        sender.role is PartyRole.TENANT
        and isinstance(action, (RelayToOpenWo, RelayToVendor))
        and command_in(
            action.params.note if isinstance(action, RelayToOpenWo) else action.params.message
        )
        is not None
    ):
        # A tenant's command words are never a note for the vendor: asked about, as a command.
        return _Rejection(
            verdict=verdict,
            why=f"command words, not a note for {target}'s vendor",
            clarify_reason="ambiguous_relation",
            candidates=(target,),
        )
    if isinstance(action, RecordRating) and not context.rating_requested:
        # The words were an answer to something else (I7): not a rating, and nothing to ask.
        return _Rejection(
            verdict=verdict, why=f"{target} has no rating request outstanding", clarify_reason=None
        )
    return None


_DOING_BY_LANE: dict[Lane, str] = {
    Lane.RECORD_RATING: "rate",
    Lane.RELAY_TO_OPEN_WO: "relay",
    Lane.RELAY_TO_VENDOR: "relay",
    Lane.SCHEDULE_VISIT: "reschedule",
}


def _not_yours(operation: str, wo_ids: Sequence[str], sender: Party, package: Package) -> str:
    """What a party is told when their part in a work order does not allow what they asked:
    what was not done, and who can ask for it."""
    language = language_for(sender.language, package.text)
    what = say(DOING.get(operation, DOING["change"]), language)
    return truncate(say(NOT_YOURS_TO_DO, language, what=what, wo_ids=", ".join(wo_ids)), 500)


def refusal_for_pm(wo_ids: Sequence[str]) -> str:
    """What a PM is told about work orders they may not act on: true whether such a WO exists
    elsewhere, is closed, or does not exist at all (it says nothing about other properties)."""
    names = ", ".join(wo_ids[:5]) + (f" and {len(wo_ids) - 5} more" if len(wo_ids) > 5 else "")
    what = say(NOT_FOR_PM_ONE if len(wo_ids) == 1 else NOT_FOR_PM_MANY, "en")
    return truncate(say(NOT_FOR_PM, "en", wo_ids=names, what=what), 500)


def _refused(verdict: Verdict, sender: Party, wo_ids: tuple[str, ...]) -> _Rejection:
    return _Rejection(
        verdict=verdict,
        why=f"{', '.join(wo_ids)}: not an open work order of the properties {sender.party_id} "
        "manages",
        clarify_reason=None,
        refused=wo_ids,
    )


def _own_part(sender: Party) -> Part:
    return "pm" if sender.role is PartyRole.PM else sender.role.value  # type: ignore[return-value]


def _part(sender: Party, context: OpenContext | None) -> Part | None:
    """The sender's part in a context's work order: as the lease step found it, else their
    role (a party's open contexts are theirs, as tenant or as vendor)."""
    if context is None:
        return None
    if sender.role is PartyRole.PM:
        # Only a context the lease step found to be of a property they manage.
        return "pm" if context.relation == "pm" else None
    return context.relation or _own_part(sender)


def _revalidated_resume(
    action: Action, context: OpenContext | None, language: str = DEFAULT_LANGUAGE
) -> tuple[Action, ResolvedAction | None]:
    """I6 for an answer to what a context awaits (its visit's availability): re-validated as
    the lease step found it. Valid → booked as proposed, on the record; stale or interrupted by
    an emergency since the question → held for a YES, saying what changed, never booked
    blindly."""
    if not isinstance(action, ScheduleVisit) or context is None or context.resume is None:
        return action, None
    if context.resume == "valid":
        return action, ResolvedAction(action=action, revalidation="valid")
    first = (
        say(EMERGENCY_SINCE, language)
        if context.resume == "superseded"
        else truncate(
            say(RESUME_NOTE, "en", wo_id=context.context_id, note=context.resume_note), 300
        )
    )
    held = ManageExisting(
        confidence=action.confidence,
        why=truncate(f"re-validated ({context.resume}): {action.why}", 400),
        evidence=action.evidence,
        params=ManageExistingParams(
            operation="reschedule",
            wo_ids=(context.context_id,),
            request=truncate(action.params.availability, 300),
        ),
    )
    return held, ResolvedAction(action=held, revalidation=context.resume, say=first)


def _finish(build: _Builder, route: Route) -> Disposal:
    lanes = tuple(queued.lane.value for queued in build.queue)
    return Disposal(
        package_id=build.package.package_id,
        route=route,
        actions=tuple(queued.model_copy(update={"package_lanes": lanes}) for queued in build.queue),
        decisions=tuple(build.decisions),
        transitions=build.transitions,
    )
