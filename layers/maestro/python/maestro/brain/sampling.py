"""Drawing the brain's samples adaptively: a first batch, more only while they disagree.

A clear package costs ``plan.first`` reasoning calls; a package the samples disagree on, fail on
or are unsure about costs up to ``plan.k``. The shares consensus computes are over the samples
drawn (``maestro.domain.votes``), so stopping early on agreement reads as agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from maestro.domain.consensus import ballots_of
from maestro.domain.memory import BrainRequest
from maestro.domain.records import BrainSample
from maestro.domain.votes import SamplingPlan

__all__ = ["BrainRequest", "SampleSource", "draw"]


class SampleSource(Protocol):
    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...


def draw(source: SampleSource, request: BrainRequest, plan: SamplingPlan) -> list[BrainSample]:
    """Samples one at a time until the plan has enough (never more than ``plan.k``)."""
    samples: list[BrainSample] = []
    while not _enough(plan, samples):
        samples.append(source.sample(request, len(samples)))
    return samples


def _enough(plan: SamplingPlan, samples: Sequence[BrainSample]) -> bool:
    ballots, _ = ballots_of(samples)
    return plan.enough(ballots)
