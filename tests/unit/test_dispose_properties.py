"""Property tests: whatever the samples and contexts, dispose keeps its promises."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from builders import MARIA, T0, act, failed, package, sample, wo_context
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maestro.domain.actions import (
    LANE_SPECS,
    PROPOSABLE_LANES,
    Action,
    CreateWo,
    Lane,
    is_new_ref,
)
from maestro.domain.consensus import ConsensusPolicy, aggregate, reading_key
from maestro.domain.dispose import Disposal, dispose
from maestro.domain.models import OpenContext
from maestro.domain.records import BrainSample

OWNED_POOL = ("WO-1", "WO-2", "WO-3")
FOREIGN = ("WO-9", "WO-77")
POLICY = ConsensusPolicy(k=5)


@st.composite
def contexts(draw: st.DrawFn) -> list[OpenContext]:
    ids = draw(st.lists(st.sampled_from(OWNED_POOL), unique=True, max_size=3))
    return [
        wo_context(
            wo_id,
            age=timedelta(hours=draw(st.sampled_from([1, 48, 71, 73, 200]))),
            rating_requested=draw(st.booleans()),
            awaiting=draw(st.sampled_from(["nothing", "availability"])),
        )
        for wo_id in ids
    ]


TARGETS = st.sampled_from((*OWNED_POOL, *FOREIGN, "new:1", "new:2"))


@st.composite
def actions(draw: st.DrawFn) -> Action:
    lane = draw(st.sampled_from(sorted(PROPOSABLE_LANES)))  # what a brain sample can carry
    confidence = draw(st.sampled_from([0.2, 0.6, 0.95]))
    spec = LANE_SPECS[lane]
    target = None
    if spec.target == "required" or (spec.target == "optional" and draw(st.booleans())):
        target = draw(TARGETS)
    params: dict[str, Any] = {}
    if lane is Lane.CREATE_WO:
        params["ref"] = draw(st.sampled_from(["new:1", "new:2"]))
    if lane is Lane.RECORD_RATING:
        params["stars"] = draw(st.integers(1, 5))
    if lane is Lane.MANAGE_EXISTING:
        params["operation"] = draw(st.sampled_from(["list", "cancel"]))
        params["wo_ids"] = draw(st.lists(st.sampled_from((*OWNED_POOL, *FOREIGN)), max_size=2))
    if lane is Lane.CLARIFY:
        params["candidate_ids"] = draw(st.lists(TARGETS, max_size=3, unique=True))
    return act(lane.value, target, confidence=confidence, **params)


@st.composite
def brain_samples(draw: st.DrawFn) -> list[BrainSample]:
    # A few distinct plans, repeated: real samples agree often, so votes are not all 1/5.
    plans = draw(st.lists(st.lists(actions(), min_size=1, max_size=4), min_size=1, max_size=3))
    out: list[BrainSample] = []
    for index in range(draw(st.integers(0, POLICY.k))):
        choice = draw(st.integers(-1, len(plans) - 1))
        out.append(failed(index) if choice < 0 else sample(index, *plans[choice]))
    return out


def _run(ctxs: list[OpenContext], samples: list[BrainSample], known: bool) -> Disposal:
    return dispose(
        package("whatever they said", at=T0),
        MARIA if known else None,
        ctxs,
        aggregate(samples, POLICY),
    )


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(contexts(), brain_samples(), st.booleans())
def test_no_mutation_below_its_threshold(
    ctxs: list[OpenContext], samples: list[BrainSample], known: bool
) -> None:
    verdicts = {v.key: v for v in aggregate(samples, POLICY).verdicts}
    for queued in _run(ctxs, samples, known).actions:
        lane = Lane(queued.action.lane)
        if LANE_SPECS[lane].mutating:
            verdict = verdicts[reading_key(queued.action)]
            assert verdict.share >= POLICY.threshold(lane)
            assert verdict.mean_self_confidence >= POLICY.min_self_confidence


@SETTINGS
@given(contexts(), brain_samples(), st.booleans())
def test_targets_stay_inside_the_senders_open_contexts(
    ctxs: list[OpenContext], samples: list[BrainSample], known: bool
) -> None:
    owned = {c.context_id for c in ctxs} if known else set()
    created: set[str] = set()
    for queued in _run(ctxs, samples, known).actions:
        action = queued.action
        if isinstance(action, CreateWo):
            created.add(action.params.ref)
        target = action.target_wo_id
        if target is not None:
            assert target in owned or (is_new_ref(target) and target in created)
        for wo_id in getattr(action.params, "wo_ids", ()):
            assert wo_id in owned
        for candidate in getattr(action.params, "candidate_ids", ()):
            assert candidate in owned or candidate == "new"


@SETTINGS
@given(contexts(), brain_samples(), st.booleans())
def test_queue_shape(ctxs: list[OpenContext], samples: list[BrainSample], known: bool) -> None:
    disposal = _run(ctxs, samples, known)
    lanes = disposal.lanes
    assert lanes, "every package ends with at least one action"
    assert all(lane in PROPOSABLE_LANES for lane in lanes)  # never an internal lane from samples
    assert lanes.count(Lane.CLARIFY) <= 1
    if Lane.ESCALATE in lanes:
        assert lanes[0] is Lane.ESCALATE
    if Lane.CLARIFY in lanes:
        assert not any(LANE_SPECS[lane].mutating for lane in lanes) or lanes[-1] is Lane.CLARIFY
    keys = [q.idempotency_key for q in disposal.actions]
    assert keys == [f"{disposal.package_id}#{i}" for i in range(len(keys))]
    queued_ids = {q.decision_id for q in disposal.actions}
    assert queued_ids <= {d.decision_id for d in disposal.decisions}
    if not known:
        assert all(q.action.target_wo_id is None for q in disposal.actions)


@SETTINGS
@given(contexts(), brain_samples(), st.booleans())
def test_ambiguity_never_mutates(
    ctxs: list[OpenContext], samples: list[BrainSample], known: bool
) -> None:
    result = aggregate(samples, POLICY)
    disposal = _run(ctxs, samples, known)
    if result.status.value == "ambiguous":
        assert not any(LANE_SPECS[lane].mutating for lane in disposal.lanes)


@SETTINGS
@given(contexts(), brain_samples(), st.booleans())
def test_same_input_same_output(
    ctxs: list[OpenContext], samples: list[BrainSample], known: bool
) -> None:
    first = _run(ctxs, samples, known)
    again = _run(list(reversed(ctxs)), [s.model_copy() for s in samples], known)
    assert first.model_dump() == again.model_dump()
