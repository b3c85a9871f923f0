"""Drawing the brain's samples adaptively: a first batch, more only while the outcome is open.

The stopping rule is the domain's (``maestro.domain.votes.SamplingPlan``, applied by
``maestro.domain.consensus.enough``; docs/sampling.md): a clear package costs ``plan.first``
reasoning calls; one the samples disagree on, fail on or are unsure about costs up to
``plan.k``; a mutation among several candidate work orders is acted on only after
``plan.confirm`` unanimous samples, and the draw stops at the first dissent (asking is settled
then). The shares consensus computes are over the samples drawn.

The first batch is drawn concurrently when the source says it may be
(``concurrent_samples``: a model whose calls are independent, e.g. the Anthropic API), one
thread per sample: the package waits for one model call instead of two. Each thread runs in a
copy of the caller's context, so the model budget (``maestro.brain.budgeted``) charges every
call to the package's scope; indexes are fixed before the calls start and the samples are
returned in index order, whichever answers first. A source whose answers depend on call order
(the scripted model replays its script) is drawn one at a time.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from maestro.domain.consensus import enough
from maestro.domain.memory import BrainRequest
from maestro.domain.records import BrainSample
from maestro.domain.votes import SamplingPlan

__all__ = ["BrainRequest", "SampleSource", "draw"]


class SampleSource(Protocol):
    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...


def draw(source: SampleSource, request: BrainRequest, plan: SamplingPlan) -> list[BrainSample]:
    """Samples until the plan has enough (never more than ``plan.most``); the first batch at
    once when ``source`` allows it, then one at a time."""
    first = min(plan.first, plan.most)
    samples: list[BrainSample] = []
    if first > 1 and getattr(source, "concurrent_samples", False):
        samples = _at_once(source, request, range(first))
    while not enough(samples, plan):
        samples.append(source.sample(request, len(samples)))
    return samples


def _at_once(source: SampleSource, request: BrainRequest, indexes: range) -> list[BrainSample]:
    with ThreadPoolExecutor(max_workers=len(indexes), thread_name_prefix="sample") as pool:
        # One context copy per call: a context cannot be entered by two threads at once.
        futures = [
            pool.submit(contextvars.copy_context().run, source.sample, request, index)
            for index in indexes
        ]
        return [future.result() for future in futures]
