"""Urgency from memory: whether a conversation has something urgent outstanding (seed 001's
"urgency-expedite": a time-sensitive memory entry shortens the wait before its package goes).

Read from the sender's open work orders and their ``MaestroState`` snapshots:
- the state's urgency is urgent or an emergency (an escalation was handled on it, or the work
  order was judged urgent): the person is likely still reporting on it, and should not wait;
- an escalation interrupted its thread within ``ESCALATION_RECENT`` (the pipeline records the
  escalating package on each open work order of the sender: an emergency being handled);
- a visit is due: the work order's vendor comes within ``VISIT_DUE_WITHIN`` (or is there now),
  so the tenant's "running late?" or the vendor's "at the door, no answer" is time-sensitive.

A closed work order counts for nothing, nor does one awaiting only a rating. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from maestro.domain.models import Urgency, WorkOrder
from maestro.domain.records import MaestroState

__all__ = ["ESCALATION_RECENT", "VISIT_DUE_WITHIN", "urgent_outstanding"]

VISIT_DUE_WITHIN = timedelta(hours=12)
"""A visit starting this soon is "due today", whatever the property's timezone."""
ESCALATION_RECENT = timedelta(hours=12)
"""An escalation this recent is still being handled; an older interruption says nothing."""

URGENT_STATES = frozenset({Urgency.URGENT, Urgency.EMERGENCY})


def urgent_outstanding(
    work_orders: Iterable[WorkOrder], states: Mapping[str, MaestroState], now: datetime
) -> str | None:
    """Why the conversation has something urgent outstanding (the first reason, by WO id), or
    None. ``states`` maps a WO id to its snapshot; a WO without one has no recorded urgency."""
    for wo in sorted(work_orders, key=lambda w: w.wo_id):
        if not wo.is_open:
            continue
        state = states.get(wo.wo_id)
        if state is not None and state.urgency in URGENT_STATES:
            return f"{wo.wo_id}: {state.urgency.value} in memory"
        interrupted = state.interrupted_at if state is not None else None
        if state is not None and interrupted is not None and now - interrupted <= ESCALATION_RECENT:
            return f"{wo.wo_id}: an escalation ({state.interrupted_by}) being handled"
        visit = wo.visit
        due = visit is not None and visit.end > now and visit.start <= now + VISIT_DUE_WITHIN
        if due and wo.vendor_id is not None and visit is not None:
            return f"{wo.wo_id}: a visit due at {visit.start.isoformat()}"
    return None
