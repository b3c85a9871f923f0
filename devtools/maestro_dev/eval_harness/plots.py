"""The eval plots as PNG: a reliability diagram and a risk-coverage curve.

matplotlib is a dev dependency: this module lives in the dev package, which the runtime layer
never imports (the import contract in pyproject.toml). Figures are drawn without pyplot (no
global state, no backend to choose, no window): ``Figure.savefig`` renders with Agg.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from maestro_dev.eval_harness.metrics import ReliabilityBin, RiskCoveragePoint

__all__ = ["reliability_diagram", "risk_coverage_plot"]


def reliability_diagram(
    bins: Sequence[ReliabilityBin],
    path: Path,
    *,
    title: str,
    ece: float,
    confidence: str = "consensus share",
) -> Path:
    """Accuracy per confidence bin against the diagonal of perfect calibration; the count of
    each bin written over it. Empty bins are left blank."""
    fig = Figure(figsize=(5.5, 5.5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="calibrated")
    filled = [
        (b, b.accuracy, b.mean_confidence)
        for b in bins
        if b.accuracy is not None and b.mean_confidence is not None
    ]
    ax.bar(
        [b.lower for b, _, _ in filled],
        [accuracy for _, accuracy, _ in filled],
        width=[b.upper - b.lower for b, _, _ in filled],
        align="edge",
        edgecolor="black",
        color="#4c72b0",
        alpha=0.8,
        label="accuracy",
    )
    ax.scatter(
        [confidence for _, _, confidence in filled],
        [accuracy for _, accuracy, _ in filled],
        color="#dd8452",
        zorder=3,
        label="mean confidence",
    )
    for b, accuracy, _ in filled:
        ax.annotate(
            f"n={b.count}",
            ((b.lower + b.upper) / 2, min(0.97, accuracy + 0.02)),
            ha="center",
            fontsize=7,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"confidence ({confidence})")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title}\nECE {ece:.3f} ({len(bins)} equal-width bins)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_aspect("equal")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def risk_coverage_plot(
    curve: Sequence[RiskCoveragePoint], path: Path, *, title: str, aurc: float | None
) -> Path:
    """Risk against coverage, the selectable operating points (a threshold "accept confidence
    ≥ t") marked and labelled with t."""
    fig = Figure(figsize=(5.5, 5.5))
    ax = fig.subplots()
    ax.plot([p.coverage for p in curve], [p.risk for p in curve], color="#4c72b0")
    points = [p for p in curve if p.selectable]
    ax.scatter(
        [p.coverage for p in points],
        [p.risk for p in points],
        color="#c44e52",
        zorder=3,
        label="operating points (accept confidence ≥ t)",
    )
    for p in points:
        ax.annotate(f"t={p.threshold:.2f}", (p.coverage, p.risk), fontsize=7,
                    xytext=(3, 4), textcoords="offset points")  # fmt: skip
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("coverage (share of items acted on)")
    ax.set_ylabel("risk (error rate among them)")
    shown = "n/a" if aurc is None else f"{aurc:.3f}"
    ax.set_title(f"{title}\nAURC {shown} (normalised by 1 - 1/n)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_aspect("equal")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
