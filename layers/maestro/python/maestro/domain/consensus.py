"""Self-consistency consensus: k brain samples → verdicts.

Vote share is the confidence; a sample's self-reported confidence is a secondary gate. Votes
are counted on the whole normalized action (``reading_key``) by the one vote engine
(``maestro.domain.votes``, also under ``decide()``): failed samples count in the denominator (the
samples drawn), so they dilute agreement. Thresholds are asymmetric: mutating lanes need high
agreement, non-mutating ones less, and escalation is recall-first. A split between two mutating
or held readings (stars 2 vs 5, a cancel vs a reschedule) abstains whatever each sample claims
about its own confidence (seed ADR-0059, I3): the result is then ``ambiguous`` with the
competing candidates, and dispose asks one question instead of guessing.

A *contested* package (the sender has several candidate work orders, ``several_candidates``) is
where a wrong mutation is likeliest and dearest. There a held reading passes only when two
independent signals agree: ``contested_support`` samples (3), all drawn, propose it (unanimity,
failures counting against), **and** the sender's words alone bind the same work orders
(``corroborated``: what the deterministic rules of the offline brain bind, computed by the
caller; nothing is corroborated unless the caller says so). Samples alone cannot tell a model
that splits 60/40 from a sure one in fewer than 7 draws (0.6^n + 0.4^n); the words can. An
uncorroborated unanimous reading is asked about by name ("Did you mean WO-…? Reply YES"), and a
YES runs exactly it. The sampling plan (``ConsensusPolicy.plan``, ``SamplingPlan``) stops at the
first dissent, when asking is settled. See docs/sampling.md.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from maestro.domain.actions import (
    LANE_SPECS,
    NEW_WO_PREFIX,
    Action,
    Clarify,
    CreateWo,
    Lane,
    ManageExisting,
    Mutation,
    RecordRating,
    ScheduleVisit,
    parse_action,
)
from maestro.domain.common import Frozen
from maestro.domain.models import ContextKind, OpenContext
from maestro.domain.records import BrainSample
from maestro.domain.votes import Ballot, Reading, SamplingPlan, tally

DEFAULT_THRESHOLDS: dict[Mutation, float] = {
    Mutation.WRITES: 0.8,
    Mutation.MESSAGES: 0.8,
    Mutation.VIA_CONFIRM: 0.6,
    Mutation.NONE: 0.4,
    Mutation.PAGES: 0.2,  # recall-first: one sample in five that sees an emergency is enough
}


class ConsensusPolicy(Frozen):
    k: int = Field(default=5, ge=1, le=20, description="The most samples a package may draw")
    first_samples: int = Field(
        default=2, ge=1, le=20, description="Drawn first; more only on disagreement or doubt"
    )
    thresholds: dict[Mutation, float] = Field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    lane_thresholds: dict[Lane, float] = Field(
        default_factory=dict, description="Per-lane overrides of the class thresholds"
    )
    split_share: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="A competing reading with at least this share is real disagreement, not noise",
    )
    min_self_confidence: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Secondary gate on mutating lanes"
    )
    route_new_alone: bool = Field(
        default=True,
        description="Outside a contested package, one valid, sure sample that only opens a new "
        "request, replies or asks settles it (seed 000: looser on route_new)",
    )
    contested_support: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Among several candidate work orders, the unanimous samples a held reading "
        "needs, beside the words binding the same work orders (the samples alone would need 7: "
        "the smallest n with 0.6^n + 0.4^n <= 0.05)",
    )

    @model_validator(mode="after")
    def _thresholds_in_range(self) -> ConsensusPolicy:
        values = [*self.thresholds.values(), *self.lane_thresholds.values()]
        if any(not 0.0 < t <= 1.0 for t in values):
            raise ValueError("thresholds must be in (0, 1]")
        missing = set(Mutation) - set(self.thresholds)
        if missing:
            raise ValueError(f"thresholds missing for {sorted(missing)}")
        return self

    def threshold(self, lane: Lane) -> float:
        return self.lane_thresholds.get(lane, self.thresholds[LANE_SPECS[lane].mutation])

    def plan(self, contested: bool = False) -> SamplingPlan:
        """How many samples to draw; ``contested``: the sender has several candidate work
        orders (``several_candidates``), so a held reading needs ``contested_support``."""
        return SamplingPlan(
            first=min(self.first_samples, self.k),
            k=self.k,
            confirm=self.contested_support if contested else 0,
            alone=self.route_new_alone and not contested,
        )


def several_candidates(contexts: Sequence[OpenContext]) -> bool:
    """Whether a mutation could land on more than one work order: the sender has two or more
    open. One (or none) leaves a single candidate, and two agreeing samples may settle it."""
    return len({c.wo_id or c.context_id for c in contexts if c.kind is ContextKind.WORK_ORDER}) > 1


def guarded(key: str) -> bool:
    """Whether a reading key (``reading_key``) is what a contested package guards: a held
    reading that changes something (listing one's requests changes nothing)."""
    lane = Lane(key.split(":", 1)[0])
    return _held(lane) and not key.startswith(f"{Lane.MANAGE_EXISTING.value}:list:")


ALONE_LANES: frozenset[Lane] = frozenset(
    {Lane.CREATE_WO, Lane.CONTINUE_WITH_ASSISTANT, Lane.CLARIFY}
)
"""Readings one sure sample may settle outside a contested package: a new request (route_new),
a reply, a question. None of them changes an existing work order; every other lane does, or
holds a change for a YES, or pages (an escalation keeps its own rule)."""


def settles_alone(key: str) -> bool:
    """Whether a reading key (``reading_key``) is one a single sure sample may settle."""
    return Lane(key.split(":", 1)[0]) in ALONE_LANES


def enough(samples: Sequence[BrainSample], plan: SamplingPlan) -> bool:
    """Whether ``samples`` settle the package under ``plan`` (the brain's draw stops there).

    An escalation among them is settled the unguarded way, never by one sample: it passes at
    one sample in five and pre-empts every other reading, so waiting for the contested bar on a
    mutation beside it buys nothing.
    """
    ballots, _ = ballots_of(samples)
    if any(r.key == Lane.ESCALATE.value for b in ballots for r in b.readings):
        return plan.model_copy(update={"confirm": 0}).enough(ballots)
    return plan.enough(ballots, guarded, settles_alone)


class ConsensusStatus(StrEnum):
    DECIDED = "decided"
    AMBIGUOUS = "ambiguous"
    ESCALATE = "escalate"


class Verdict(Frozen):
    """One reading (lane + target) and how much the samples agreed on it."""

    key: str
    lane: Lane
    target_wo_id: str | None
    action: Action = Field(description="The reading as first proposed, new refs normalised")
    support: int = Field(ge=0)
    share: float = Field(ge=0.0, le=1.0)
    threshold: float
    mean_self_confidence: float = Field(ge=0.0, le=1.0)
    position: float = Field(description="Mean index in the samples that proposed it")
    passed: bool

    @property
    def mutating(self) -> bool:
        return LANE_SPECS[self.lane].mutating


class ConsensusResult(Frozen):
    status: ConsensusStatus
    reason: str
    verdicts: tuple[Verdict, ...]
    candidates: tuple[str, ...] = Field(
        default=(), description="Competing targets when ambiguous; 'new' means a new request"
    )
    k: int = Field(description="Samples drawn: the denominator of every share")
    planned_k: int = Field(default=0, ge=0, description="The most the plan would have drawn")
    contested: bool = Field(
        default=False,
        description="Several candidate work orders: held readings needed unanimous samples and "
        "the words' binding",
    )
    corroborated: tuple[str, ...] = Field(
        default=(),
        description="When contested: the work orders the sender's words alone bind (the "
        "deterministic rules), the second signal a held reading needs",
    )
    valid_samples: int
    entropy_bits: float
    votes: dict[str, int]
    fallback: bool = Field(default=False, description="No quorum: nothing valid to stand on")
    failures: dict[str, int] = Field(
        default_factory=dict,
        description="Failed samples by kind (a sample's failure, or budget_exhausted): what a "
        "fallback's page says went wrong",
    )
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def passed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.passed)


def _normalise_new_refs(actions: Sequence[Action]) -> tuple[Action, ...]:
    """Rename a sample's new-WO refs to new:1, new:2… in order of creation.

    Samples name their refs freely; agreement must not depend on the spelling.
    """
    renames: dict[str, str] = {}
    for action in actions:
        if isinstance(action, CreateWo):
            renames.setdefault(action.params.ref, f"{NEW_WO_PREFIX}{len(renames) + 1}")
    if not renames:
        return tuple(actions)
    out: list[Action] = []
    for action in actions:
        data: dict[str, Any] = action.model_dump()
        if isinstance(action, CreateWo):
            data["params"]["ref"] = renames[action.params.ref]
        target = data.get("target_wo_id")
        if target is not None and target.startswith(NEW_WO_PREFIX):
            # A ref to a create the sample never made stays unresolved; dispose rejects it.
            data["target_wo_id"] = renames.get(target, target)
        out.append(parse_action(data))
    return tuple(out)


def reading_key(action: Action) -> str:
    """What two samples must share to count as agreeing on an action: the whole normalized
    action, i.e. its lane, its target and the params that change its effect (a rating's stars,
    a held call's operation and ids, a confirmed visit's window). Free text (a note, a summary,
    the availability in the sender's words) is not part of it. Escalation, clarification and
    the assistant's reply are one reading each whatever they say.
    """
    lane = Lane(action.lane)
    if lane in {Lane.ESCALATE, Lane.CLARIFY, Lane.CONTINUE_WITH_ASSISTANT}:
        return lane.value
    if isinstance(action, ManageExisting):
        params = action.params
        return f"{lane.value}:{params.operation}:" + ",".join(sorted(params.wo_ids))
    if isinstance(action, CreateWo):
        return f"{lane.value}:{action.params.ref}"
    if isinstance(action, RecordRating):
        return f"{lane.value}:{action.target_wo_id}:stars={action.params.stars}"
    if isinstance(action, ScheduleVisit) and action.params.window_start is not None:
        window = f"{action.params.window_start.isoformat()}/{action.params.window_end}"
        return f"{lane.value}:{action.target_wo_id}:slot={window}"
    return f"{lane.value}:{action.target_wo_id}"


def _candidates_of(verdict: Verdict) -> tuple[str, ...]:
    if verdict.lane is Lane.CREATE_WO:
        return ("new",)
    if isinstance(verdict.action, ManageExisting):
        return verdict.action.params.wo_ids
    return (verdict.target_wo_id or verdict.lane.value,)


def _held(lane: Lane) -> bool:
    """Lanes whose readings must not be settled by picking one: mutating ones, and those that
    hold a mutation for a YES (a cancel against a reschedule is a real disagreement)."""
    spec = LANE_SPECS[lane]
    return spec.mutating or spec.mutation is Mutation.VIA_CONFIRM


def ballots_of(samples: Sequence[BrainSample]) -> tuple[list[Ballot], dict[str, Action]]:
    """The samples as ballots (new refs normalised), and the first action seen per reading."""
    ballots: list[Ballot] = []
    first: dict[str, Action] = {}
    for sample in samples:
        if sample.actions is None:
            ballots.append(Ballot(index=sample.index, failure=sample.failure or "failed"))
            continue
        readings: list[Reading] = []
        asks: tuple[str, ...] | None = None
        for position, action in enumerate(_normalise_new_refs(sample.actions)):
            key = reading_key(action)
            first.setdefault(key, action)
            readings.append(Reading(key=key, confidence=action.confidence, position=position))
            if isinstance(action, Clarify):
                asks = (asks or ()) + action.params.candidate_ids
        ballots.append(Ballot(index=sample.index, readings=tuple(readings), ambiguous=asks))
    return ballots, first


def aggregate(
    samples: Sequence[BrainSample],
    policy: ConsensusPolicy,
    *,
    contested: bool = False,
    corroborated: Collection[str] = frozenset(),
) -> ConsensusResult:
    """Aggregate the samples into verdicts and a tri-state result.

    Every share is over the samples drawn (``maestro.domain.votes``): a failure dilutes it, and
    two agreeing samples of an adaptive plan that stopped early are 2/2, not 2/5. ``contested``
    (``several_candidates`` of the sender's contexts): a held reading passes only when
    ``policy.contested_support`` samples, all drawn, propose it and every work order it touches
    is in ``corroborated`` (the ones the sender's words alone bind).
    Deterministic: the same samples in the same order give the same result.
    """
    bound = frozenset(corroborated)
    most = policy.plan(contested).most
    if len(samples) > most:
        raise ValueError(f"{len(samples)} samples given, more than the plan's most, {most}")
    drawn = len(samples)
    ballots, first = ballots_of(samples)
    counted = tally(ballots)
    model = next((s.model for s in samples), "")

    verdicts: list[Verdict] = []
    for count in counted.counts:
        action = first[count.key]
        lane = Lane(action.lane)
        threshold = policy.threshold(lane)
        passed = count.share >= threshold and lane is not Lane.CLARIFY
        if LANE_SPECS[lane].mutating and count.mean_confidence < policy.min_self_confidence:
            passed = False
        if (
            contested
            and guarded(count.key)
            and not _confirmed(count.support, drawn, policy, _targets(action), bound)
        ):
            passed = False
        verdicts.append(
            Verdict(
                key=count.key,
                lane=lane,
                target_wo_id=action.target_wo_id,
                action=action,
                support=count.support,
                share=count.share,
                threshold=threshold,
                mean_self_confidence=count.mean_confidence,
                position=count.position,
                passed=passed,
            )
        )
    votes = {v.key: v.support for v in verdicts}
    common: dict[str, Any] = {
        "verdicts": tuple(verdicts),
        "k": drawn,
        "planned_k": policy.plan(contested).most,
        "contested": contested,
        "corroborated": tuple(sorted(bound)) if contested else (),
        "valid_samples": counted.valid,
        "entropy_bits": counted.entropy_bits,
        "votes": votes,
        "model": model,
        "input_tokens": sum(s.input_tokens for s in samples),
        "output_tokens": sum(s.output_tokens for s in samples),
        "failures": _failures(samples),
    }

    by_key = {v.key: v for v in verdicts}
    escalate = by_key.get(Lane.ESCALATE.value)
    if escalate is not None and escalate.passed:
        return ConsensusResult(
            status=ConsensusStatus.ESCALATE,
            reason=f"{escalate.support}/{drawn} samples escalate (recall-first)",
            **common,
        )
    if counted.valid == 0:
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason=f"no valid sample of {drawn}: no quorum",
            fallback=True,
            **common,
        )

    split_keys = {
        c.key for c in counted.splits(lambda c: _held(by_key[c.key].lane), policy.split_share)
    }
    if split_keys:
        competing = [
            v for v in sorted(verdicts, key=lambda v: (-v.support, v.key)) if v.key in split_keys
        ]
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason="split between held or mutating readings: "
            + " vs ".join(f"{v.key} {v.support}/{drawn}" for v in competing),
            candidates=_dedupe([c for v in competing for c in _candidates_of(v)]),
            **common,
        )

    contenders = sorted(
        (v for v in verdicts if _held(v.lane) and v.share >= policy.split_share),
        key=lambda v: (-v.support, v.key),
    )
    weak = [v for v in contenders if not v.passed]
    if weak:
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason="low agreement on a mutation: "
            + ", ".join(
                f"{v.key} {v.support}/{drawn} < {v.threshold:.2f}"
                if v.share < v.threshold
                else _uncorroborated(v, drawn, policy)
                if contested and not _confirmed(v.support, drawn, policy, _targets(v.action), bound)
                else f"{v.key} self-reported {v.mean_self_confidence:.2f}"
                for v in weak
            ),
            candidates=_dedupe(
                [c for v in weak for c in _candidates_of(v)] + list(counted.ambiguity_candidates)
            ),
            **common,
        )

    clarify = by_key.get(Lane.CLARIFY.value)
    strongest = max((v.support for v in verdicts if v.lane is not Lane.CLARIFY), default=0)
    if clarify is not None and (
        clarify.support >= strongest
        or (clarify.share >= policy.split_share and any(v.passed for v in contenders))
    ):
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason=f"{clarify.support}/{drawn} samples say the package is ambiguous",
            candidates=_dedupe(
                list(counted.ambiguity_candidates)
                + [c for v in contenders if v.passed for c in _candidates_of(v)]
            ),
            **common,
        )

    if not any(v.passed for v in verdicts):
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason="no reading reached its threshold: no quorum",
            fallback=True,
            **common,
        )
    return ConsensusResult(
        status=ConsensusStatus.DECIDED,
        reason="; ".join(
            f"{v.support} of {drawn} sample{'' if drawn == 1 else 's'} agreed on {v.key}"
            for v in verdicts
            if v.passed
        ),
        **common,
    )


def _confirmed(
    support: int,
    drawn: int,
    policy: ConsensusPolicy,
    targets: frozenset[str],
    bound: frozenset[str],
) -> bool:
    """A contested held reading's bar: every drawn sample proposed it, enough were drawn, and the
    sender's words alone bind every work order it touches."""
    return support == drawn >= policy.contested_support and bool(targets) and targets <= bound


def _uncorroborated(v: Verdict, drawn: int, policy: ConsensusPolicy) -> str:
    need = policy.contested_support
    if v.support < drawn or drawn < need:
        return f"{v.key} {v.support}/{drawn}, several candidates: {need} of {need} needed"
    return f"{v.key} {v.support}/{drawn}, several candidates: the words alone do not say which"


def _targets(action: Action) -> frozenset[str]:
    """The work orders a reading touches: existing ones by id, a new one as ``"new"``."""
    if isinstance(action, ManageExisting):
        return frozenset(action.params.wo_ids)
    if isinstance(action, CreateWo):
        return frozenset({"new"})
    return frozenset({action.target_wo_id}) if action.target_wo_id else frozenset()


def _failures(samples: Sequence[BrainSample]) -> dict[str, int]:
    """Failed samples by kind; a model call the budget refused is its own kind (it comes back
    as a transport error whose detail names it)."""
    kinds: dict[str, int] = {}
    for sample in samples:
        if sample.failure is None:
            continue
        kind = "budget_exhausted" if "budget_exhausted" in sample.detail else sample.failure
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def _dedupe(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
