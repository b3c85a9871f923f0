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
7. Order: creates before anything that refers to them; one clarify at most, last.
8. Every queued action carries an idempotency key: package id + index.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Literal, TypeVar

from pydantic import Field

from maestro.domain.actions import (
    LANE_SPECS,
    Action,
    ActionBase,
    Clarify,
    ClarifyParams,
    ContinueWithAssistant,
    ContinueWithAssistantParams,
    CreateWo,
    Escalate,
    EscalateParams,
    Lane,
    ManageExisting,
    RecordRating,
    is_new_ref,
)
from maestro.domain.common import Frozen, truncate
from maestro.domain.consensus import ConsensusResult, ConsensusStatus, Verdict
from maestro.domain.models import DEFAULT_CONTEXT_TTL, OpenContext, Package, Party
from maestro.domain.records import (
    ContextRelation,
    Disposition,
    MaestroDecision,
    PreCheckResult,
    Route,
)

ClarifyReason = Literal[
    "ambiguous_relation",
    "multi_context",
    "low_agreement",
    "stale_context",
    "not_owned",
    "unresolved_reference",
]


_A = TypeVar("_A", bound=ActionBase)


class DisposePolicy(Frozen):
    context_ttl: timedelta = DEFAULT_CONTEXT_TTL


class QueuedAction(Frozen):
    index: int = Field(ge=0)
    idempotency_key: str = Field(description="package id + action index: retries create nothing")
    action: Action
    decision_id: str


class Disposal(Frozen):
    package_id: str
    route: Route
    actions: tuple[QueuedAction, ...]
    decisions: tuple[MaestroDecision, ...]

    @property
    def lanes(self) -> tuple[Lane, ...]:
        return tuple(Lane(q.action.lane) for q in self.actions)

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


class _Builder:
    """Accumulates the queue and the decision records for one package."""

    def __init__(
        self,
        package: Package,
        contexts: Sequence[OpenContext],
        consensus: ConsensusResult | None,
    ) -> None:
        self.package = package
        self.contexts = contexts
        self.consensus = consensus
        self.queue: list[QueuedAction] = []
        self.decisions: list[MaestroDecision] = []

    def _decision(
        self,
        *,
        stage: Literal["precheck", "dispose", "fallback"],
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
    ) -> MaestroDecision:
        index = len(self.decisions)
        consensus = self.consensus
        bound = target if target is not None and disposition is Disposition.QUEUED else None
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
            bound_context_id=bound if not is_new_ref(bound) else None,
            interrupted=interrupted,
            abstained=abstained,
            fallback=fallback,
            confidence=confidence,
            threshold=threshold,
            votes=dict(consensus.votes) if consensus else {},
            samples=consensus.k if consensus else 0,
            valid_samples=consensus.valid_samples if consensus else 0,
            entropy_bits=consensus.entropy_bits if consensus else 0.0,
            model=consensus.model if consensus else "",
            input_tokens=consensus.input_tokens if consensus and index == 0 else 0,
            output_tokens=consensus.output_tokens if consensus and index == 0 else 0,
            reason=reason[:500],
            idempotency_key=key,
            recorded_at=self.package.flushed_at,
        )
        self.decisions.append(decision)
        return decision

    def enqueue(
        self,
        action: Action,
        *,
        stage: Literal["precheck", "dispose", "fallback"],
        confidence: float,
        reason: str,
        relation: ContextRelation = "none",
        threshold: float | None = None,
        interrupted: bool = False,
        abstained: bool = False,
        fallback: bool = False,
    ) -> None:
        index = len(self.queue)
        key = idempotency_key(self.package.package_id, index)
        decision = self._decision(
            stage=stage,
            disposition=Disposition.QUEUED,
            lane=Lane(action.lane),
            target=action.target_wo_id,
            command=action,
            confidence=confidence,
            reason=reason,
            relation=relation,
            threshold=threshold,
            interrupted=interrupted,
            abstained=abstained,
            fallback=fallback,
            key=key,
        )
        self.queue.append(
            QueuedAction(
                index=index, idempotency_key=key, action=action, decision_id=decision.decision_id
            )
        )

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


_MAX_QUESTION = 400  # ClarifyParams.question's limit


def _clarify_question(candidates: Sequence[str], contexts: Sequence[OpenContext]) -> str:
    """One question naming the candidates, numbered. Each description is cut to its share of
    the question's limit here, where the line is built: stored descriptions may be long."""
    lines = {c.context_id: c.description for c in contexts}
    if len(candidates) == 1 and candidates[0] != "new":
        only = candidates[0]
        about = truncate(lines.get(only, "your request"), 200)
        return truncate(f"Is this about {only} ({about})? Reply 1 for yes.", _MAX_QUESTION)
    if not candidates:
        return "Sorry, I want to get this right: could you tell me a bit more about what you need?"
    lead = "Just to be sure I get this right, which one do you mean? "
    share = max(12, (_MAX_QUESTION - len(lead)) // len(candidates) - 8)
    options = []
    for number, candidate in enumerate(candidates, start=1):
        if candidate == "new":
            options.append(f"{number}) something new")
        else:
            described = truncate(f"{candidate}: {lines.get(candidate, 'your request')}", share)
            options.append(f"{number}) {described}")
    return truncate(lead + "; ".join(options), _MAX_QUESTION)


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
) -> Disposal:
    """Turn the brain's verdicts into the final ordered action queue and its decision records.

    ``open_contexts`` are the *sender's* open contexts: ownership is checked against them.
    ``consensus`` may be None when the pre-check routed the package away from the brain.
    """
    policy = policy or DisposePolicy()
    route = precheck.route if precheck is not None else Route.REASONING
    if sender is None:
        open_contexts = ()  # an unknown number owns nothing, whatever the caller passed
    contexts = tuple(sorted(open_contexts, key=lambda c: c.context_id))
    build = _Builder(package, contexts, consensus)
    verdicts = consensus.verdicts if consensus is not None else ()

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
                why="the brain gave no usable answer; a person looks at it",
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
        for verdict in verdicts:
            build.record(
                verdict,
                Disposition.BELOW_THRESHOLD,
                f"abstained: {consensus.reason}",
                abstained=True,
            )
        candidates = _owned_candidates(consensus.candidates, contexts)
        build.enqueue(
            Clarify(
                confidence=max((v.share for v in verdicts), default=0.0),
                why=consensus.reason[:400],
                params=ClarifyParams(
                    question=_clarify_question(candidates, contexts),
                    candidate_ids=candidates,
                    reason="multi_context" if len(candidates) > 1 else "low_agreement",
                ),
            ),
            stage="dispose",
            confidence=max((v.share for v in verdicts), default=0.0),
            reason=f"no guess on mutation: {consensus.reason}",
            relation="ambiguous",
            abstained=True,
        )
        return _finish(build, route)

    _dispose_decided(build, verdicts, contexts, package, policy)
    return _finish(build, route)


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


def _dispose_decided(
    build: _Builder,
    verdicts: Sequence[Verdict],
    contexts: Sequence[OpenContext],
    package: Package,
    policy: DisposePolicy,
) -> None:
    by_id = {c.context_id: c for c in contexts}
    passed = [
        v.model_copy(update={"action": _unbind_foreign(v.action, set(by_id))})
        if not v.mutating
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
        rejection = _check(verdict, by_id, created_refs, package, policy)
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

    # Creates first (later actions may refer to them), then the rest in the samples' order.
    ordered = sorted(still, key=lambda v: (v.lane is not Lane.CREATE_WO, v.position, v.key))
    replied = False
    for verdict in ordered:
        if verdict.lane is Lane.CONTINUE_WITH_ASSISTANT:
            if replied:
                continue
            replied = True
        context = by_id.get(verdict.target_wo_id or "")
        build.enqueue(
            verdict.action,
            stage="dispose",
            confidence=verdict.share,
            threshold=verdict.threshold,
            reason=f"{verdict.support}/{build.consensus.k if build.consensus else 0} samples agree",
            relation=_relation(verdict.action, context, contexts),
        )

    for rejection in rejections:
        build.record(rejection.verdict, Disposition.REJECTED, rejection.why)
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
                    question=_clarify_question(candidates, contexts),
                    candidate_ids=candidates,
                    reason=reason,
                ),
            ),
            stage="dispose",
            confidence=0.0,
            reason="asked instead of acting: " + "; ".join(r.why for r in asking),
            relation="ambiguous",
            abstained=True,
        )
    if not build.queue:
        build.enqueue(
            ContinueWithAssistant(
                confidence=0.0,
                why="nothing actionable survived disposal",
                params=ContinueWithAssistantParams(),
            ),
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
) -> _Rejection | None:
    """Why a passed verdict may not run as proposed, or None if it may."""
    action = verdict.action
    spec = LANE_SPECS[verdict.lane]
    target = action.target_wo_id
    if isinstance(action, ManageExisting):
        foreign = [w for w in action.params.wo_ids if w not in by_id]
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
    if isinstance(action, RecordRating) and not context.rating_requested:
        # The words were an answer to something else (I7): not a rating, and nothing to ask.
        return _Rejection(
            verdict=verdict, why=f"{target} has no rating request outstanding", clarify_reason=None
        )
    return None


def _finish(build: _Builder, route: Route) -> Disposal:
    return Disposal(
        package_id=build.package.package_id,
        route=route,
        actions=tuple(build.queue),
        decisions=tuple(build.decisions),
    )
