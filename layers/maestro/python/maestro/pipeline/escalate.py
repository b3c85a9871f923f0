"""An emergency does not wait for the lease: decide, record and act on it now.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.domain.dispose import dispose
from maestro.lanes.context import LaneOutcome
from maestro.observability import count
from maestro.pipeline.contract import ActItem, EarlyEscalation, ExecutionState, LeaseSnapshot, dump
from maestro.pipeline.shared import JSON, ActOnce, Pipeline, Step


def escalate(pipeline: Pipeline, s: ExecutionState, act: ActOnce) -> JSON:
    """An emergency does not wait for the lease: decide, record and act on it now.

    The queue is the one dispose gives an escalating package (the page first), written to
    the decision log before anything is sent; each action then runs through the same
    idempotent act step as the action queue, so a retry sends nothing twice.
    """
    package = pipeline.load_package(s)
    now = pipeline.deps.clock.now()
    sender = pipeline.deps.parties.by_phone(package.sender_phone)
    contexts = tuple(pipeline.open_contexts(sender, now, package.text))
    disposal = dispose(package, sender, contexts, None, precheck=s.precheck)
    pipeline.write_ahead(disposal)
    snapshot = LeaseSnapshot(holder=None, sender=sender, contexts=contexts)
    effects = [
        LaneOutcome.model_validate(
            act(
                dump(
                    ActItem(
                        queued=queued,
                        package_id=s.package_id,
                        conversation_id=s.conversation_id,
                        flush_number=s.flush_number,
                        package=s.package,
                        package_ref=s.package_ref,
                        lease=snapshot,
                    )
                )
            )
        )
        for queued in disposal.actions
    ]
    count("EarlyEscalations")
    return dump(EarlyEscalation(disposal=disposal, effects=tuple(effects)))


STEP = Step(escalate, ExecutionState)
"""The escalate step; its input validated as :class:`ExecutionState` by the handler factory."""
