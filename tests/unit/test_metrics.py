"""The eval metrics against hand-computed values and independent references.

References: scikit-learn's ``brier_score_loss`` (random inputs, Hypothesis, derandomized by the
``ci`` profile of tests/conftest.py), torch-uncertainty's AURC test vector and normalisation,
and AURC with ties against the mean over every order of the tied items of the plain
(no-ties) computation, written out again here.
"""

from __future__ import annotations

import math
import random
from itertools import permutations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss

from maestro_dev.eval_harness.metrics import (
    Rate,
    aurc,
    binding_precision,
    binding_recall,
    brier_score,
    escalation_recall,
    expected_calibration_error,
    false_raise_rate,
    is_binding,
    reliability_bins,
    risk_coverage_curve,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --- ECE ---------------------------------------------------------------------------------------


def test_ece_matches_a_hand_computed_example() -> None:
    # Five bins of width 0.2, right-closed (the first also holds 0):
    #   [0, .2]: 0.0, 0.1 → mean .05, accuracy 1/2 → |.5 − .05| = .45, weight 2/8
    #   (.2, .4]: 0.3, 0.4 → mean .35, accuracy 1/2 → .15, weight 2/8 (0.4 is in this bin)
    #   (.4, .6]: empty, skipped
    #   (.6, .8]: 0.8 → accuracy 1 → .2, weight 1/8
    #   (.8, 1]: 0.9, 1.0, 1.0 → mean .9667, accuracy 2/3 → .3, weight 3/8
    confidences = [0.0, 0.1, 0.3, 0.4, 0.8, 0.9, 1.0, 1.0]
    correct = [0, 1, 1, 0, 1, 1, 1, 0]
    bins = reliability_bins(confidences, correct, n_bins=5)
    assert [b.count for b in bins] == [2, 2, 0, 1, 3]
    assert bins[2].accuracy is None
    assert bins[2].mean_confidence is None
    expected = (2 * 0.45 + 2 * 0.15 + 1 * 0.2 + 3 * 0.3) / 8
    assert expected_calibration_error(confidences, correct, n_bins=5) == pytest.approx(expected)
    assert expected == pytest.approx(0.2875)


def test_ece_bins_are_right_closed_at_the_decimal_edges() -> None:
    bins = reliability_bins([0.0, 0.1, 0.3, 0.30000001, 0.7, 1.0], [1] * 6, n_bins=10)
    by_count = {i: b.count for i, b in enumerate(bins) if b.count}
    # 0 and 0.1 in [0, .1]; 0.3 in (.2, .3] (not (.3, .4], as 0.3 * 10 rounds up); 1.0 last.
    assert by_count == {0: 2, 2: 1, 3: 1, 6: 1, 9: 1}


@pytest.mark.parametrize(
    ("confidences", "correct", "ece"),
    [
        ([1.0, 1.0, 1.0], [1, 1, 1], 0.0),  # all correct, sure: calibrated
        ([0.7, 0.7, 0.7, 0.7], [1, 1, 1, 1], 0.3),  # all correct, under-confident
        ([0.7, 0.7, 0.7], [0, 0, 0], 0.7),  # all wrong, over-confident
        ([0.0, 0.0], [0, 0], 0.0),  # all wrong at confidence 0: calibrated
        ([0.6] * 5, [1, 1, 1, 0, 0], 0.0),  # ties: one bin, accuracy 0.6
        ([0.6] * 4, [1, 1, 1, 1], 0.4),
        ([0.5, 0.5], [True, False], 0.0),  # booleans are 0/1
    ],
)
def test_ece_edge_cases(confidences: list[float], correct: list[int], ece: float) -> None:
    assert expected_calibration_error(confidences, correct) == pytest.approx(ece)


@pytest.mark.parametrize(
    ("confidences", "correct", "message"),
    [
        ([], [], "empty"),
        ([0.5], [1, 0], "1 items"),
        ([1.2], [1], "not in \\[0, 1\\]"),
        ([math.nan], [1], "not in \\[0, 1\\]"),
        ([0.5], [2], "not 0/1"),
    ],
)
def test_ece_refuses_what_it_cannot_measure(
    confidences: list[float], correct: list[int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(confidences, correct)


def test_ece_needs_a_bin() -> None:
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error([0.5], [1], n_bins=0)


@given(st.lists(st.tuples(unit, st.booleans()), min_size=1, max_size=40), st.randoms())
def test_ece_is_in_range_and_ignores_order(
    pairs: list[tuple[float, bool]], rnd: random.Random
) -> None:
    confidences, correct = [p for p, _ in pairs], [c for _, c in pairs]
    ece = expected_calibration_error(confidences, correct)
    assert 0.0 <= ece <= 1.0
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    again = expected_calibration_error([p for p, _ in shuffled], [c for _, c in shuffled])
    assert again == pytest.approx(ece)


# --- Brier -------------------------------------------------------------------------------------


@given(st.lists(st.tuples(unit, st.booleans()), min_size=1, max_size=60))
def test_brier_matches_scikit_learn(pairs: list[tuple[float, bool]]) -> None:
    probabilities, outcomes = [p for p, _ in pairs], [int(y) for _, y in pairs]
    reference = brier_score_loss(outcomes, probabilities, pos_label=1)
    assert brier_score(probabilities, outcomes) == pytest.approx(reference, abs=1e-12)


def test_brier_by_hand_and_refusals() -> None:
    assert brier_score([1.0, 0.0], [1, 0]) == 0.0
    assert brier_score([0.8, 0.3], [1, 0]) == pytest.approx((0.04 + 0.09) / 2)
    with pytest.raises(ValueError, match="empty"):
        brier_score([], [])
    with pytest.raises(ValueError, match="not 0/1"):
        brier_score([0.5], [0.5])  # type: ignore[list-item]


# --- risk-coverage and AURC --------------------------------------------------------------------


def test_aurc_matches_torch_uncertainty_on_its_test_vector() -> None:
    # torch-uncertainty's AURC test: probabilities [.1, .2, .3, .4, .2] of the positive class,
    # targets [0, 0, 1, 1, 0]: top-label confidences and errors as below, and
    # (0 * 0.4 + 0.25 * 0.2 / 2 + 0.25 * 0.2 + 0.15 * 0.2 / 2) / 0.8 = 0.1125.
    confidences = [0.9, 0.8, 0.7, 0.6, 0.8]
    errors = [0, 0, 1, 1, 0]
    assert aurc(confidences, errors) == pytest.approx(0.1125)
    assert aurc(confidences, [0] * 5) == 0.0
    assert aurc(confidences, [1] * 5) == pytest.approx(1.0)


def test_the_risk_coverage_curve_averages_ties_and_marks_the_thresholds() -> None:
    curve = risk_coverage_curve([0.9, 0.5, 0.5, 0.5], [0, 1, 0, 0])
    assert [p.coverage for p in curve] == [0.25, 0.5, 0.75, 1.0]
    # Within the tie at 0.5 the one error is spread evenly: 1/3 per item.
    assert [p.risk for p in curve] == pytest.approx([0.0, 1 / 6, 2 / 9, 0.25])
    assert [p.selectable for p in curve] == [True, False, False, True]
    assert [p.threshold for p in curve] == [0.9, 0.5, 0.5, 0.5]


def _aurc_in_one_order(confidences: list[float], errors: list[int]) -> float:
    """torch-uncertainty's computation written out: sort by confidence (this order within
    ties), cumulative error rate at coverage i/n, trapezoids, divided by 1 − 1/n."""
    order = sorted(range(len(confidences)), key=lambda i: -confidences[i])
    n = len(order)
    risks, wrong = [], 0
    for i, index in enumerate(order, start=1):
        wrong += errors[index]
        risks.append(wrong / i)
    area = sum((risks[i] + risks[i + 1]) / 2 / n for i in range(n - 1))
    return area / (1 - 1 / n)


@given(
    st.lists(
        st.tuples(st.sampled_from([0.2, 0.5, 0.8, 1.0]), st.integers(0, 1)),
        min_size=2,
        max_size=6,
    )
)
def test_aurc_with_ties_is_the_mean_over_every_order_of_the_ties(
    pairs: list[tuple[float, int]],
) -> None:
    values = [
        _aurc_in_one_order([pairs[i][0] for i in order], [pairs[i][1] for i in order])
        for order in permutations(range(len(pairs)))
    ]
    confidences, errors = [c for c, _ in pairs], [e for _, e in pairs]
    assert aurc(confidences, errors) == pytest.approx(sum(values) / len(values))


@given(st.lists(st.tuples(unit, st.integers(0, 1)), min_size=2, max_size=40))
def test_aurc_is_in_range(pairs: list[tuple[float, int]]) -> None:
    value = aurc([c for c, _ in pairs], [e for _, e in pairs])
    assert 0.0 <= value <= 1.0 + 1e-12


def test_aurc_refuses_what_it_cannot_measure() -> None:
    with pytest.raises(ValueError, match="empty"):
        aurc([], [])
    with pytest.raises(ValueError, match="at least two"):
        aurc([0.5], [1])
    with pytest.raises(ValueError, match="errors"):
        aurc([0.5, 0.5], [1, 2])


# --- escalation and binding --------------------------------------------------------------------


def test_escalation_recall_and_false_raise_rate() -> None:
    raised = [True, False, True, True, False]
    emergency = [True, True, True, False, False]
    assert escalation_recall(raised, emergency) == Rate(2, 3)
    assert false_raise_rate(raised, emergency) == Rate(1, 2)
    assert str(Rate(2, 3)) == "2/3 = 66.7 %"
    only_emergencies = false_raise_rate([True], [True])
    assert only_emergencies.value is None
    assert str(only_emergencies) == "0/0 (undefined)"


def test_binding_precision_and_recall() -> None:
    gold = ["WO-1", "WO-1", "new", "ambiguous", "WO-2", "WO-2"]
    predicted = ["WO-1", "WO-2", "new", "WO-1", "ambiguous", "none"]
    # Bindings made: WO-1 ✓, WO-2 ✗, new ✓, WO-1 ✗ (gold asked for a question): 2/4.
    assert binding_precision(predicted, gold) == Rate(2, 4)
    # Gold bindings: WO-1 ✓, WO-1 ✗, new ✓, WO-2 (asked), WO-2 (replied): 2/5.
    assert binding_recall(predicted, gold) == Rate(2, 5)
    assert [is_binding(x) for x in ("ambiguous", "none", None, "new", "WO-1")] == [
        False,
        False,
        False,
        True,
        True,
    ]


def test_rates_refuse_impossible_counts() -> None:
    with pytest.raises(ValueError, match="a rate"):
        Rate(3, 2)
