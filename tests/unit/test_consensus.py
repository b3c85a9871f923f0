from __future__ import annotations

import pytest
from builders import act, consensus, failed, sample, samples_of

from maestro.domain.consensus import ConsensusPolicy, ConsensusStatus, aggregate

RELAY_204 = [act("relay_to_open_wo", "WO-204", confidence=0.95)]
NEW_LEAK = [act("create_wo", confidence=0.95, summary="second leak, bathroom")]


def test_overconfidence_trap_abstains() -> None:
    """Seed 000's trap: 3 × resolves @0.95 vs 2 × pivots @0.95 → abstain.

    The naive rule "take the majority if the model is confident" binds to WO-204 here.
    """
    result = consensus(RELAY_204, RELAY_204, RELAY_204, NEW_LEAK, NEW_LEAK)
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert "split" in result.reason
    assert set(result.candidates) == {"WO-204", "new"}


def test_the_split_abstains_even_when_the_threshold_would_pass() -> None:
    policy = ConsensusPolicy(k=5, thresholds={**ConsensusPolicy().thresholds, "writes": 0.5})
    result = aggregate(samples_of(RELAY_204, RELAY_204, RELAY_204, NEW_LEAK, NEW_LEAK), policy)
    assert result.status is ConsensusStatus.AMBIGUOUS


def test_unanimous_mutation_is_decided_with_share_as_confidence() -> None:
    result = consensus(*[RELAY_204] * 5)
    assert result.status is ConsensusStatus.DECIDED
    (verdict,) = result.passed
    assert verdict.share == 1.0
    assert verdict.support == 5
    assert result.entropy_bits == 0.0
    assert result.reason == "5 of 5 samples agreed on relay_to_open_wo:WO-204"


def test_a_decision_says_how_many_of_the_samples_drawn_agreed_on_what() -> None:
    """Not "1 reading(s) agreed" after three samples: the support, the draw and the reading."""
    result = aggregate(samples_of(RELAY_204, RELAY_204, RELAY_204), ConsensusPolicy(k=5))
    assert result.reason == "3 of 3 samples agreed on relay_to_open_wo:WO-204"
    alone = aggregate(samples_of(RELAY_204), ConsensusPolicy(k=1))
    assert alone.reason == "1 of 1 sample agreed on relay_to_open_wo:WO-204"


def test_failures_dilute_agreement() -> None:
    """3 agreeing samples and 2 transport errors: 3/5 = 0.6, below the 0.8 for a mutation."""
    result = consensus(RELAY_204, RELAY_204, RELAY_204, "transport_error", "non_json")
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert result.valid_samples == 3
    assert result.verdicts[0].share == pytest.approx(0.6)


def test_the_share_is_over_the_samples_drawn() -> None:
    """Adaptive sampling stopped early because the samples agreed: 3 agreeing of a planned 5 are
    3/3, not 3/5 (the plan asked no more); a failure among them still dilutes."""
    result = aggregate(samples_of(RELAY_204, RELAY_204, RELAY_204), ConsensusPolicy(k=5))
    assert result.verdicts[0].share == pytest.approx(1.0)
    assert (result.k, result.planned_k) == (3, 5)
    assert result.status is ConsensusStatus.DECIDED
    diluted = aggregate(samples_of(RELAY_204, RELAY_204, "timeout"), ConsensusPolicy(k=5))
    assert diluted.verdicts[0].share == pytest.approx(2 / 3)
    assert diluted.status is ConsensusStatus.AMBIGUOUS


def test_the_executed_params_are_the_majoritys() -> None:
    """Naive: votes on lane + target with the first sample's params, so stars 2,5,5,5,5
    executed stars = 2."""
    two, five = act("record_rating", "WO-198", stars=2), act("record_rating", "WO-198", stars=5)
    result = consensus([two], [five], [five], [five], [five])
    (passed,) = result.passed
    assert passed.action.params.stars == 5  # type: ignore[union-attr]


def test_a_held_cancel_goes_to_the_majoritys_work_order() -> None:
    """Naive: cancel WO-1 (1 sample) vs WO-2 (4) held a cancel of WO-1."""
    one = act("manage_existing", operation="cancel", wo_ids=("WO-1",))
    two = act("manage_existing", operation="cancel", wo_ids=("WO-2",))
    result = consensus([one], [two], [two], [two], [two])
    (passed,) = result.passed
    assert passed.action.params.wo_ids == ("WO-2",)  # type: ignore[union-attr]


def test_a_split_on_a_held_mutation_abstains() -> None:
    """Naive: a cancel-vs-reschedule split decided instead of abstaining."""
    cancel = act("manage_existing", operation="cancel", wo_ids=("WO-1",))
    move = act("manage_existing", operation="reschedule", wo_ids=("WO-1",), request="friday")
    result = consensus([cancel], [cancel], [cancel], [move], [move])
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert result.candidates == ("WO-1",)
    two, five = act("record_rating", "WO-198", stars=2), act("record_rating", "WO-198", stars=5)
    assert consensus([two], [two], [five], [five], [five]).status is ConsensusStatus.AMBIGUOUS


def test_four_of_five_passes_and_one_stray_vote_is_noise() -> None:
    result = consensus(*[RELAY_204] * 4, NEW_LEAK)
    assert result.status is ConsensusStatus.DECIDED
    assert [v.key for v in result.passed] == ["relay_to_open_wo:WO-204"]


def test_escalation_is_recall_first() -> None:
    """One sample in five that sees an emergency escalates the package."""
    escalate = [act("escalate", hazard="smell of gas")]
    result = consensus(escalate, *[[act("schedule_visit", "WO-204")]] * 4)
    assert result.status is ConsensusStatus.ESCALATE


def test_same_lane_different_targets_is_a_split_naming_both() -> None:
    """I4: "the leak is back" with two open leaks; never the most recent."""
    a = [act("relay_to_open_wo", "WO-204")]
    b = [act("relay_to_open_wo", "WO-211")]
    result = consensus(a, a, a, b, b)
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert result.candidates == ("WO-204", "WO-211")


def test_explicit_ambiguous_votes_abstain() -> None:
    ask = [act("clarify", question="which leak?", candidate_ids=["WO-204", "WO-211"])]
    result = consensus(ask, ask, ask, RELAY_204, RELAY_204)
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert result.candidates[:2] == ("WO-204", "WO-211")


def test_explicit_ambiguity_abstains_even_under_a_lenient_threshold() -> None:
    ask = [act("clarify", question="which leak?", candidate_ids=["WO-204", "WO-211"])]
    policy = ConsensusPolicy(k=5, thresholds={**ConsensusPolicy().thresholds, "writes": 0.6})
    result = aggregate(samples_of(RELAY_204, RELAY_204, RELAY_204, ask, ask), policy)
    assert result.status is ConsensusStatus.AMBIGUOUS


def test_low_self_reported_confidence_is_a_secondary_gate() -> None:
    unsure = [act("relay_to_open_wo", "WO-204", confidence=0.2)]
    result = consensus(*[unsure] * 5)
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert "self-reported" in result.reason


def test_new_refs_agree_whatever_each_sample_calls_them() -> None:
    one = [act("create_wo", ref="new:leak"), act("schedule_visit", "new:leak")]
    two = [act("create_wo", ref="new:a"), act("schedule_visit", "new:a")]
    result = consensus(one, two, one, two, one)
    assert result.status is ConsensusStatus.DECIDED
    assert {v.key for v in result.passed} == {"create_wo:new:1", "schedule_visit:new:1"}


def test_no_valid_sample_is_a_fallback() -> None:
    result = consensus("transport_error", "timeout", "non_json", "schema_failure", "refused")
    assert result.fallback
    assert result.status is ConsensusStatus.AMBIGUOUS
    assert result.entropy_bits == 0.0


def test_entropy_grows_with_disagreement() -> None:
    split = consensus(RELAY_204, RELAY_204, RELAY_204, NEW_LEAK, NEW_LEAK)
    assert split.entropy_bits == pytest.approx(0.971, abs=1e-3)


def test_a_sample_votes_once_per_reading() -> None:
    twice = [act("relay_to_open_wo", "WO-204"), act("relay_to_open_wo", "WO-204", note="again")]
    result = aggregate([sample(0, *twice), failed(1)], ConsensusPolicy(k=2))
    assert result.votes == {"relay_to_open_wo:WO-204": 1}


def test_more_samples_than_k_is_refused() -> None:
    with pytest.raises(ValueError, match="more than the plan's most, 5"):
        aggregate(samples_of(*[RELAY_204] * 6), ConsensusPolicy(k=5))
    with pytest.raises(ValueError, match="more than the plan's most, 7"):
        aggregate(
            samples_of(*[RELAY_204] * 8),
            ConsensusPolicy(k=5, contested_support=7),
            contested=True,
        )


def test_consensus_is_deterministic() -> None:
    plans = (RELAY_204, NEW_LEAK, RELAY_204, "timeout", RELAY_204)
    assert consensus(*plans) == consensus(*plans)
