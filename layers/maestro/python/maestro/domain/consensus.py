"""Self-consistency consensus: k brain samples → verdicts.

Vote share is the confidence; a sample's self-reported confidence is a secondary gate. Failed or
invalid samples still count in the denominator (the configured k), so they dilute agreement.
Thresholds are asymmetric: mutating lanes need high agreement, non-mutating ones less, and
escalation is recall-first. A split between two mutating readings abstains whatever each sample
claims about its own confidence (seed ADR-0059, I3): the result is then ``ambiguous`` with the
competing candidates, and dispose asks one question instead of guessing.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from enum import StrEnum
from itertools import combinations
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
    parse_action,
)
from maestro.domain.common import Frozen
from maestro.domain.records import BrainSample

DEFAULT_THRESHOLDS: dict[Mutation, float] = {
    Mutation.WRITES: 0.8,
    Mutation.MESSAGES: 0.8,
    Mutation.VIA_CONFIRM: 0.6,
    Mutation.NONE: 0.4,
    Mutation.PAGES: 0.2,  # recall-first: one sample in five that sees an emergency is enough
}


class ConsensusPolicy(Frozen):
    k: int = Field(default=5, ge=1, le=20, description="Configured samples: the denominator")
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
    k: int
    valid_samples: int
    entropy_bits: float
    votes: dict[str, int]
    fallback: bool = Field(default=False, description="No quorum: nothing valid to stand on")
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
    """What two samples must share to count as agreeing on an action.

    Lane and target, plus the operation for manage_existing; escalation, clarification and the
    assistant's reply are one reading each whatever they target.
    """
    lane = Lane(action.lane)
    if lane in {Lane.ESCALATE, Lane.CLARIFY, Lane.CONTINUE_WITH_ASSISTANT}:
        return lane.value
    if isinstance(action, ManageExisting):
        return f"{lane.value}:{action.params.operation}"
    if isinstance(action, CreateWo):
        return f"{lane.value}:{action.params.ref}"
    return f"{lane.value}:{action.target_wo_id}"


def _entropy_bits(readings: Sequence[str]) -> float:
    counts = Counter(readings)
    total = len(readings)
    # 0.0 - … keeps a unanimous vote at +0.0 rather than -0.0.
    return 0.0 - sum((c / total) * math.log2(c / total) for c in counts.values()) if total else 0.0


def _candidate_of(verdict: Verdict) -> str:
    if verdict.lane is Lane.CREATE_WO:
        return "new"
    return verdict.target_wo_id or verdict.lane.value


def aggregate(samples: Sequence[BrainSample], policy: ConsensusPolicy) -> ConsensusResult:
    """Aggregate the samples into verdicts and a tri-state result.

    Deterministic: the same samples in the same order give the same result.
    """
    if len(samples) > policy.k:
        raise ValueError(f"{len(samples)} samples given, more than the configured k={policy.k}")
    k = policy.k
    valid = [s for s in samples if s.actions is not None]
    model = next((s.model for s in samples), "")
    tokens_in = sum(s.input_tokens for s in samples)
    tokens_out = sum(s.output_tokens for s in samples)

    support: dict[str, set[int]] = defaultdict(set)
    positions: dict[str, list[int]] = defaultdict(list)
    self_conf: dict[str, list[float]] = defaultdict(list)
    first: dict[str, Action] = {}
    readings: list[str] = []
    clarify_candidates: list[str] = []
    for sample in valid:
        assert sample.actions is not None  # narrowed by the filter above
        actions = _normalise_new_refs(sample.actions)
        keys_in_sample: list[str] = []
        for position, action in enumerate(actions):
            key = reading_key(action)
            if sample.index in support[key]:
                continue  # a sample votes once per reading
            support[key].add(sample.index)
            positions[key].append(position)
            self_conf[key].append(action.confidence)
            first.setdefault(key, action)
            keys_in_sample.append(key)
            if isinstance(action, Clarify):
                clarify_candidates.extend(action.params.candidate_ids)
        readings.append("|".join(sorted(keys_in_sample)))
    # Samples that failed, or were never taken, count as one "no reading" outcome each.
    readings.extend(["<no reading>"] * (k - len(valid)))

    verdicts: list[Verdict] = []
    for key, voters in support.items():
        action = first[key]
        lane = Lane(action.lane)
        share = len(voters) / k
        threshold = policy.threshold(lane)
        mean_conf = sum(self_conf[key]) / len(self_conf[key])
        passed = share >= threshold and lane is not Lane.CLARIFY
        if LANE_SPECS[lane].mutating and mean_conf < policy.min_self_confidence:
            passed = False
        verdicts.append(
            Verdict(
                key=key,
                lane=lane,
                target_wo_id=action.target_wo_id,
                action=action,
                support=len(voters),
                share=share,
                threshold=threshold,
                mean_self_confidence=mean_conf,
                position=sum(positions[key]) / len(positions[key]),
                passed=passed,
            )
        )
    verdicts.sort(key=lambda v: (v.position, -v.support, v.key))
    votes = {v.key: v.support for v in verdicts}
    common: dict[str, Any] = {
        "verdicts": tuple(verdicts),
        "k": k,
        "valid_samples": len(valid),
        "entropy_bits": round(_entropy_bits(readings), 6),
        "votes": votes,
        "model": model,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
    }

    by_key = {v.key: v for v in verdicts}
    escalate = by_key.get(Lane.ESCALATE.value)
    if escalate is not None and escalate.passed:
        return ConsensusResult(
            status=ConsensusStatus.ESCALATE,
            reason=f"{escalate.support}/{k} samples escalate (recall-first)",
            **common,
        )
    if not valid:
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason=f"no valid sample of {k}: no quorum",
            fallback=True,
            **common,
        )

    # Real (non-noise) mutating readings, strongest first.
    contenders = sorted(
        (v for v in verdicts if v.mutating and v.share >= policy.split_share),
        key=lambda v: (-v.support, v.key),
    )
    splits = [
        (a, b)
        for a, b in combinations(contenders, 2)
        if not (support[a.key] & support[b.key])  # never proposed together: alternatives
    ]
    if splits:
        in_split = {v.key for pair in splits for v in pair}
        competing = [v for v in contenders if v.key in in_split]
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason="split between mutating readings: "
            + " vs ".join(f"{v.key} {v.support}/{k}" for v in competing),
            candidates=_dedupe([_candidate_of(v) for v in competing]),
            **common,
        )

    weak = [v for v in contenders if not v.passed]
    if weak:
        return ConsensusResult(
            status=ConsensusStatus.AMBIGUOUS,
            reason="low agreement on a mutation: "
            + ", ".join(
                f"{v.key} {v.support}/{k} < {v.threshold:.2f}"
                if v.share < v.threshold
                else f"{v.key} self-reported {v.mean_self_confidence:.2f}"
                for v in weak
            ),
            candidates=_dedupe([_candidate_of(v) for v in weak] + clarify_candidates),
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
            reason=f"{clarify.support}/{k} samples say the package is ambiguous",
            candidates=_dedupe(
                clarify_candidates + [_candidate_of(v) for v in contenders if v.passed]
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
        reason=f"{sum(v.passed for v in verdicts)} reading(s) agreed",
        **common,
    )


def _dedupe(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
