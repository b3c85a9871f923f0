"""The reasoning brain's samples on the bounded memory window, then consensus.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.brain.sample_drawing import consult
from maestro.domain.memory import BrainInput, BrainRequest, SenderRole, build_window
from maestro.domain.models import OpenContext, Package
from maestro.observability import count
from maestro.pipeline.contract import BrainOutput, ExecutionState, dump
from maestro.pipeline.shared import JSON, Pipeline, Step, lease_of


def brain(pipeline: Pipeline, s: ExecutionState) -> JSON:
    """Samples drawn adaptively on the bounded memory window, then consensus."""
    pipeline.hold(s)
    package = pipeline.load_package(s)
    lease = lease_of(s)
    if lease.sender is None:
        # Never guess a person, and spend nothing finding out: dispose hands an unknown
        # number to the PM (a digest line) whatever a model would say, so none is asked.
        return dump(
            BrainOutput(
                brain=pipeline.deps.models.describe(),
                samples=(),
                consensus=None,
                skipped="unknown sender: no model is asked; the PM identifies the number "
                "(a line in the hour's digest)",
            )
        )
    role: SenderRole = lease.sender.role.value
    request = BrainRequest(
        package=package,
        sender_role=role,
        contexts=lease.contexts,
        window=window(pipeline, package, role, lease.contexts),
    )
    samples, consensus = consult(pipeline.deps.models.brain, request, pipeline.deps.policy)
    count("ModelCalls", len(samples), stage="reasoning")
    count("ModelInputTokens", consensus.input_tokens)
    count("ModelOutputTokens", consensus.output_tokens)
    return dump(
        BrainOutput(
            brain=pipeline.deps.models.describe(), samples=tuple(samples), consensus=consensus
        )
    )


def window(
    pipeline: Pipeline, package: Package, role: SenderRole, contexts: tuple[OpenContext, ...]
) -> BrainInput:
    """The brain's bounded input: two bounded reads (the newest messages, the newest
    decisions), so it costs the same at 100 and at 10,000 prior messages."""
    limits = pipeline.deps.window_limits
    history = pipeline.deps.buffer.recent_messages(
        package.conversation_id, limits.max_messages + len(package.messages)
    )
    decisions = pipeline.deps.decisions.recent(package.conversation_id, limits.max_decisions)
    return build_window(package, history, decisions, contexts, role, limits)


STEP = Step(brain, ExecutionState)
"""The brain step; its input validated as :class:`ExecutionState` by the handler factory."""
