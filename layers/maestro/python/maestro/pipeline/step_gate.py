"""A step gate's task token stored; while it waits, the package keeps its lease.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.errors import LeaseLost
from maestro.pipeline.contract import GatePayload
from maestro.pipeline.shared import GATE_TIMEOUT_SECONDS, JSON, Pipeline, Step
from maestro.ports.workflows import Gate


def step_gate(pipeline: Pipeline, p: GatePayload) -> JSON:
    """Store the gate's task token; while it waits, the package keeps its lease."""
    now = pipeline.deps.clock.now()
    if not pipeline.deps.buffer.renew_lease(
        p.conversation_id,
        p.package_id,
        now,
        GATE_TIMEOUT_SECONDS + pipeline.deps.lease_ttl_seconds,
    ):
        raise LeaseLost(f"{p.package_id}: the lease was taken over before the gate")
    pipeline.deps.gates.put(
        Gate(
            execution_id=p.execution,
            gate=p.gate,
            token=p.token,
            package_id=p.package_id,
            index=p.index,
            paused_at=now,
        )
    )
    return {"paused": p.gate}


STEP = Step(step_gate, GatePayload)
"""The step_gate step; its input validated as :class:`GatePayload` by the handler factory."""
