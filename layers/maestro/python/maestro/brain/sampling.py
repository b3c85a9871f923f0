"""Drawing the brain's samples adaptively: a first batch, more only while the outcome is open.

The stopping rule is the domain's (``maestro.domain.votes.SamplingPlan``, applied by
``maestro.domain.consensus.enough``; docs/sampling.md): a clear package costs ``plan.first``
reasoning calls; one the samples disagree on, fail on or are unsure about costs up to
``plan.k``; a mutation among several candidate work orders is acted on only after
``plan.confirm`` unanimous samples, and the draw stops at the first dissent (asking is settled
then). The shares consensus computes are over the samples drawn.
"""

from __future__ import annotations

from typing import Protocol

from maestro.domain.consensus import enough
from maestro.domain.memory import BrainRequest
from maestro.domain.records import BrainSample
from maestro.domain.votes import SamplingPlan

__all__ = ["BrainRequest", "SampleSource", "draw"]


class SampleSource(Protocol):
    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...


def draw(source: SampleSource, request: BrainRequest, plan: SamplingPlan) -> list[BrainSample]:
    """Samples one at a time until the plan has enough (never more than ``plan.most``)."""
    samples: list[BrainSample] = []
    while not enough(samples, plan):
        samples.append(source.sample(request, len(samples)))
    return samples
