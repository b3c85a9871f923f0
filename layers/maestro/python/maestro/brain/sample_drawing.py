"""Drawing the brain's samples adaptively: a first batch, more only while the outcome is open.

The stopping rule is the domain's (``maestro.domain.votes.SamplingPlan``, applied by
``maestro.domain.consensus.enough``; docs/sampling.md): a clear package costs one reasoning
call when its reading is a new request, a reply or a question (and it is not contested), else
``plan.first``; one the samples disagree on, fail on or are unsure about costs up to
``plan.k``; a mutation among several candidate work orders is acted on only after
``plan.confirm`` unanimous samples whose work orders the sender's words alone bind too
(``consult``: the offline brain's rules, ``OfflineBrain.bound``), and the draw stops at the
first dissent (asking is settled then). The shares consensus computes are over the samples
drawn.

Outside a contested package one sure sample that only opens a new request, replies or asks
settles it (``SamplingPlan.alone``), so there the first sample is drawn by itself
(``plan.opening``); a second one, when needed, then reads the window the first wrote to the
prompt cache. Otherwise the first batch is drawn concurrently when the source says it may be
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

from maestro.brain.offline import OfflineBrain
from maestro.domain.consensus import ConsensusPolicy, ConsensusResult, aggregate, enough
from maestro.domain.consensus import several_candidates as contested_by
from maestro.domain.memory import BrainRequest
from maestro.domain.records import BrainSample
from maestro.domain.votes import SamplingPlan

__all__ = ["BrainRequest", "SampleSource", "consult", "draw"]


class SampleSource(Protocol):
    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...


def draw(source: SampleSource, request: BrainRequest, plan: SamplingPlan) -> list[BrainSample]:
    """Samples until the plan has enough (never more than ``plan.most``): the plan's opening
    (one sample when it may settle the package alone, else the first batch), the rest of the
    first batch, then one at a time; a batch of several at once when ``source`` allows it."""
    at_once = getattr(source, "concurrent_samples", False)
    samples: list[BrainSample] = []
    upto = plan.opening
    while not enough(samples, plan):
        batch = range(len(samples), upto)
        if len(batch) > 1 and at_once:
            samples += _at_once(source, request, batch)
        else:
            samples.append(source.sample(request, len(samples)))
        upto = plan.batch
    return samples


def _at_once(source: SampleSource, request: BrainRequest, indexes: range) -> list[BrainSample]:
    with ThreadPoolExecutor(max_workers=len(indexes), thread_name_prefix="sample") as pool:
        # One context copy per call: a context cannot be entered by two threads at once.
        futures = [
            pool.submit(contextvars.copy_context().run, source.sample, request, index)
            for index in indexes
        ]
        return [future.result() for future in futures]


_BINDER = OfflineBrain()
"""The words' binder for a model's samples: one per process, so a second look at the same
package (a redelivered step) reads its cached reading (a reading is a pure function of the
package and the contexts; the cache holds one, replaced whole)."""


def consult(
    source: SampleSource, request: BrainRequest, policy: ConsensusPolicy
) -> tuple[list[BrainSample], ConsensusResult]:
    """The brain step's reading of one package: draw by the policy's plan, then aggregate. When
    the sender has several candidate work orders, a held reading also needs the words' own
    binding (``OfflineBrain.bound``: deterministic, no model call), so a model split between
    two of them is never acted on by luck of the draw (docs/sampling.md)."""
    contested = contested_by(request.contexts)
    samples = draw(source, request, policy.plan(contested))
    # The offline brain as the source has just read these words: its cached reading binds them.
    binder = source if isinstance(source, OfflineBrain) else _BINDER
    bound = binder.bound(request) if contested else frozenset()
    return samples, aggregate(samples, policy, contested=contested, corroborated=bound)
