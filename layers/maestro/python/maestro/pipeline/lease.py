"""The conversation's turn (flush order), and the snapshot every later step works on.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.errors import LeaseBusy
from maestro.pipeline.contract import ExecutionState, dump
from maestro.pipeline.shared import JSON, Pipeline, Step


def lease(pipeline: Pipeline, s: ExecutionState) -> JSON:
    now = pipeline.deps.clock.now()
    held = pipeline.deps.buffer.acquire_lease(
        s.conversation_id, s.package_id, s.flush_number, now, pipeline.deps.lease_ttl_seconds
    )
    if not held:
        raise LeaseBusy(f"{s.conversation_id}: another package holds the lease")
    package = pipeline.load_package(s)
    sender = pipeline.deps.parties.by_phone(package.sender_phone)
    snapshot = pipeline.snapshot(sender, s.conversation_id, now, package.text)
    return dump(snapshot.model_copy(update={"holder": s.package_id}))


STEP = Step(lease, ExecutionState)
"""The lease step; its input validated as :class:`ExecutionState` by the handler factory."""
