"""Calibration and selective-prediction metrics for the evals (issue #8).

Pure Python (no numpy), deterministic, no I/O. Every function refuses what it cannot measure:
empty input, sequences of different lengths, a confidence or probability outside [0, 1] (or
NaN), an outcome that is not 0/1, raise :class:`ValueError` with the reason. Rates whose
denominator can be zero are a :class:`Rate` that says so instead of a made-up number.

Vocabulary. Each item of a labeled set gives one prediction with a **confidence** c in [0, 1]
(maestro's: the consensus share behind the answer given) and whether the prediction was
**correct** (1) or not (0); its **error** is 1 − correct.

- **ECE** (expected calibration error), top-label, equal-width bins: the confidences are put in
  ``n_bins`` bins of width 1/n_bins, right-closed, (a, b]; the first bin is closed on both
  sides, [0, 1/n_bins], so a confidence of exactly 0 is counted in it. Empty bins are skipped.
  ECE = Σ_bins (n_bin / n) · |accuracy(bin) − mean confidence(bin)|, in [0, 1]. The bin edges
  are i / n_bins, so 0.3 with ten bins falls in (0.2, 0.3], as the decimal reads.
- **Brier score**: the mean squared difference between a probability and the 0/1 outcome,
  (1/n) Σ (p − y)², in [0, 1]; the binary Brier score of scikit-learn's ``brier_score_loss``.
  Given (confidence, correct) pairs it is the top-label Brier score.
- **Risk-coverage curve** (Geifman & El-Yaniv, selective classification): accept the items in
  decreasing order of confidence; after the first i of n, the coverage is i/n and the risk is
  the error rate among those i. Items with equal confidence cannot be told apart by any
  threshold, so within a tie their errors are spread evenly (each tied item counts the tie's
  mean error): the risk at every coverage is then the mean over every order of the tied items,
  and the curve depends on the multiset of inputs only, never on their order. A point is
  ``selectable`` when a threshold "accept confidence ≥ t" gives exactly that coverage (the last
  item of a tie).
- **AURC**: the area under that curve by the trapezoidal rule over the n points (coverage 1/n
  to 1), divided by the width of that support, 1 − 1/n: torch-uncertainty's normalisation, so
  AURC is the mean risk over coverage and lies in [0, 1]. Without ties it equals
  torch-uncertainty's ``AURC``; with ties, the mean of its values over every order of the ties.
  Lower is better. It needs at least two items (one item spans no area).
- **Escalation recall**: emergencies raised / emergencies (misses are the dangerous error).
  **False-raise rate**: non-emergencies raised / non-emergencies (the paging cost).
- **Binding precision / recall** (seed ADR-0059 I4): a binding is a commitment to one target,
  an open context's id or ``"new"`` (a new request); ``"ambiguous"`` (the system asked),
  ``"none"`` (it bound nothing, e.g. only replied), ``"escalate"`` and ``"fallback"`` are not
  bindings (``NOT_BINDINGS``). Precision = correct
  bindings / bindings made (a wrong binding is the false bind that mutates the wrong work
  order); recall = correct bindings / items whose gold label is a binding (asking when the
  answer was clear costs recall, not precision). Micro-averaged over the items.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby, pairwise

__all__ = [
    "NOT_BINDINGS",
    "Rate",
    "ReliabilityBin",
    "RiskCoveragePoint",
    "aurc",
    "binding_precision",
    "binding_recall",
    "brier_score",
    "escalation_recall",
    "expected_calibration_error",
    "false_raise_rate",
    "is_binding",
    "reliability_bins",
    "risk_coverage_curve",
]

NOT_BINDINGS = frozenset({"ambiguous", "none", "escalate", "fallback"})
"""Labels that commit to no target: the system asked, only replied, escalated, or fell back
(no usable answer: a person looks at it)."""


@dataclass(frozen=True)
class Rate:
    """A proportion kept as its two counts; ``value`` is None when nothing was counted."""

    numerator: int
    denominator: int

    def __post_init__(self) -> None:
        if not 0 <= self.numerator <= self.denominator:
            raise ValueError(f"a rate needs 0 <= {self.numerator} <= {self.denominator}")

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    def __str__(self) -> str:
        if not self.denominator:
            return "0/0 (undefined)"
        percent = 100 * self.numerator / self.denominator
        return f"{self.numerator}/{self.denominator} = {percent:.1f} %"


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: confidences in (lower, upper] (the first: [0, upper])."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None

    @property
    def gap(self) -> float | None:
        """accuracy − mean confidence: negative when over-confident."""
        if self.accuracy is None or self.mean_confidence is None:
            return None
        return self.accuracy - self.mean_confidence


@dataclass(frozen=True)
class RiskCoveragePoint:
    """After accepting the ``accepted`` most confident items: coverage, risk, and the
    confidence of the last one accepted (the threshold)."""

    accepted: int
    coverage: float
    risk: float
    threshold: float
    selectable: bool


# --- input checks ------------------------------------------------------------------------------


def _same_length(name_a: str, a: Sequence[object], name_b: str, b: Sequence[object]) -> int:
    if len(a) != len(b):
        raise ValueError(f"{name_a} has {len(a)} items, {name_b} has {len(b)}")
    if not a:
        raise ValueError(f"{name_a} and {name_b} are empty: nothing to measure")
    return len(a)


def _unit(name: str, values: Sequence[float]) -> list[float]:
    out: list[float] = []
    for i, value in enumerate(values):
        v = float(value)
        if math.isnan(v) or not 0.0 <= v <= 1.0:
            raise ValueError(f"{name}[{i}] = {value!r} is not in [0, 1]")
        out.append(v)
    return out


def _binary(name: str, values: Sequence[bool | int | float]) -> list[int]:
    out: list[int] = []
    for i, value in enumerate(values):
        if value not in (0, 1):  # True == 1, False == 0, 1.0 == 1
            raise ValueError(f"{name}[{i}] = {value!r} is not 0/1")
        out.append(int(value))
    return out


# --- calibration ------------------------------------------------------------------------------


def reliability_bins(
    confidences: Sequence[float], correct: Sequence[bool | int], n_bins: int = 10
) -> tuple[ReliabilityBin, ...]:
    """The ``n_bins`` equal-width bins of a reliability diagram, empty ones included (their
    mean confidence and accuracy are None). Bin i holds the confidences in (i/n, (i+1)/n];
    the first also holds 0."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    _same_length("confidences", confidences, "correct", correct)
    conf = _unit("confidences", confidences)
    hits = _binary("correct", correct)
    uppers = [(i + 1) / n_bins for i in range(n_bins)]
    members: list[list[int]] = [[] for _ in range(n_bins)]
    for index, c in enumerate(conf):
        # The first upper edge >= c: (a, b] bins; 0 lands in the first, 1 in the last.
        members[bisect_left(uppers, c)].append(index)
    bins: list[ReliabilityBin] = []
    for i, indices in enumerate(members):
        count = len(indices)
        bins.append(
            ReliabilityBin(
                lower=i / n_bins,
                upper=uppers[i],
                count=count,
                mean_confidence=math.fsum(conf[j] for j in indices) / count if count else None,
                accuracy=sum(hits[j] for j in indices) / count if count else None,
            )
        )
    return tuple(bins)


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool | int], n_bins: int = 10
) -> float:
    """Top-label ECE over equal-width (a, b] bins, empty bins skipped (see the module doc)."""
    bins = reliability_bins(confidences, correct, n_bins)
    n = len(confidences)
    return math.fsum(
        (b.count / n) * abs(b.accuracy - b.mean_confidence)
        for b in bins
        if b.accuracy is not None and b.mean_confidence is not None
    )


def brier_score(probabilities: Sequence[float], outcomes: Sequence[bool | int]) -> float:
    """(1/n) Σ (p − y)²: the binary Brier score (scikit-learn's ``brier_score_loss``)."""
    n = _same_length("probabilities", probabilities, "outcomes", outcomes)
    p = _unit("probabilities", probabilities)
    y = _binary("outcomes", outcomes)
    return math.fsum((pi - yi) ** 2 for pi, yi in zip(p, y, strict=True)) / n


# --- selective prediction ---------------------------------------------------------------------


def risk_coverage_curve(
    confidences: Sequence[float], errors: Sequence[float]
) -> tuple[RiskCoveragePoint, ...]:
    """One point per item, by decreasing confidence: coverage i/n, risk = mean error of the
    first i, ties averaged (see the module doc). ``errors`` are 0/1 (or losses in [0, 1])."""
    n = _same_length("confidences", confidences, "errors", errors)
    conf = _unit("confidences", confidences)
    err = _unit("errors", errors)
    ranked = sorted(zip(conf, err, strict=True), key=lambda pair: -pair[0])
    points: list[RiskCoveragePoint] = []
    accepted, cumulative = 0, 0.0
    for threshold, tied in groupby(ranked, key=lambda pair: pair[0]):
        group = [e for _, e in tied]
        mean_error = math.fsum(group) / len(group)
        for j in range(1, len(group) + 1):
            expected = cumulative + mean_error * j
            points.append(
                RiskCoveragePoint(
                    accepted=accepted + j,
                    coverage=(accepted + j) / n,
                    risk=min(1.0, expected / (accepted + j)),
                    threshold=threshold,
                    selectable=j == len(group),
                )
            )
        accepted += len(group)
        cumulative += math.fsum(group)
    return tuple(points)


def aurc(confidences: Sequence[float], errors: Sequence[float]) -> float:
    """Area under the risk-coverage curve, trapezoidal, normalised by its support's width
    1 − 1/n (torch-uncertainty's normalisation): the mean risk over coverage, in [0, 1]."""
    points = risk_coverage_curve(confidences, errors)
    n = len(points)
    if n < 2:
        raise ValueError("AURC needs at least two items: one item spans no coverage")
    width = 1 / n
    area = math.fsum((a.risk + b.risk) / 2 * width for a, b in pairwise(points))
    return area / (1 - 1 / n)


# --- escalation -------------------------------------------------------------------------------


def escalation_recall(raised: Sequence[bool], emergency: Sequence[bool]) -> Rate:
    """Emergencies raised / emergencies."""
    _same_length("raised", raised, "emergency", emergency)
    up, gold = _binary("raised", raised), _binary("emergency", emergency)
    return Rate(sum(u for u, g in zip(up, gold, strict=True) if g), sum(gold))


def false_raise_rate(raised: Sequence[bool], emergency: Sequence[bool]) -> Rate:
    """Non-emergencies raised / non-emergencies."""
    _same_length("raised", raised, "emergency", emergency)
    up, gold = _binary("raised", raised), _binary("emergency", emergency)
    return Rate(sum(u for u, g in zip(up, gold, strict=True) if not g), len(gold) - sum(gold))


# --- binding ----------------------------------------------------------------------------------


def is_binding(label: str | None) -> bool:
    """A commitment to one target: a context id or "new" (not "ambiguous", "none", ...)."""
    return label is not None and label not in NOT_BINDINGS


def binding_precision(predicted: Sequence[str | None], gold: Sequence[str]) -> Rate:
    """Correct bindings / bindings made."""
    _same_length("predicted", predicted, "gold", gold)
    made = [(p, g) for p, g in zip(predicted, gold, strict=True) if is_binding(p)]
    return Rate(sum(p == g for p, g in made), len(made))


def binding_recall(predicted: Sequence[str | None], gold: Sequence[str]) -> Rate:
    """Correct bindings / items whose gold label is a binding."""
    _same_length("predicted", predicted, "gold", gold)
    due = [(p, g) for p, g in zip(predicted, gold, strict=True) if is_binding(g)]
    return Rate(sum(p == g for p, g in due), len(due))
