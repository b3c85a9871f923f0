"""The queue decided, and every decision written before any action runs.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

import contextlib

from maestro.domain.dispose import dispose as dispose_package
from maestro.observability import count
from maestro.pipeline.contract import ExecutionState, dump
from maestro.pipeline.shared import JSON, Pipeline, Step, lease_of
from maestro.ports.stores import StaleVersionError


def dispose(pipeline: Pipeline, s: ExecutionState) -> JSON:
    """Decide the queue and write every decision before any action runs."""
    pipeline.hold(s)
    package = pipeline.load_package(s)
    lease = lease_of(s)
    consensus = s.brain.consensus if s.brain is not None else None
    disposal = dispose_package(
        package,
        lease.sender,
        lease.contexts,
        consensus,
        precheck=s.precheck,
        resolution=s.resolution,
        trail=lease.trail,
        # decide()'s break-in judgment only for a known sender: an unknown number's package
        # is a digest line, never a question, and costs no model call.
        break_in=pipeline.deps.models.judgments.break_in if lease.sender is not None else None,
    )
    pipeline.write_ahead(disposal)
    # The items this package closes move on with its decisions recorded (write-ahead): a
    # question answered or dropped, a hold discarded, anything past its TTL expired.
    for transition in disposal.transitions:
        with contextlib.suppress(StaleVersionError):  # moved on already: a re-run
            pipeline.deps.pending.set_status(
                transition.kind,
                transition.pending_id,
                transition.expected,
                transition.to,
                closed_by=s.package_id,
            )
    if disposal.abstained:
        count("Abstentions")
    if any(d.fallback for d in disposal.decisions):
        count("Fallbacks")
    return dump(disposal)


STEP = Step(dispose, ExecutionState)
"""The dispose step; its input validated as :class:`ExecutionState` by the handler factory."""
