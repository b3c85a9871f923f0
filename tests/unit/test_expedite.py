"""Urgency from memory (maestro.domain.expedite) and the flusher's early idle check."""

from __future__ import annotations

from datetime import timedelta

import pytest

from maestro.domain.expedite import ESCALATION_RECENT, VISIT_DUE_WITHIN, urgent_outstanding
from maestro.domain.models import (
    FlushTrigger,
    Urgency,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.records import MaestroState
from maestro.ingest.flusher import flush_trigger
from maestro.ports.conversations import ConversationMeta
from maestro.ports.workflows import DebounceSignal
from tests.builders import T0, work_order


def _state(wo_id: str, urgency: Urgency) -> MaestroState:
    return MaestroState(wo_id=wo_id, urgency=urgency, updated_at=T0)


def _visiting(wo_id: str, starts_in: timedelta, hours: int = 2) -> WorkOrder:
    start = T0 + starts_in
    return work_order(
        wo_id,
        vendor_id="vendor-olu",
        status=WorkOrderStatus.SCHEDULED,
        visit=VisitWindow(start=start, end=start + timedelta(hours=hours)),
    )


@pytest.mark.parametrize("urgency", [Urgency.URGENT, Urgency.EMERGENCY])
def test_an_urgent_state_on_an_open_work_order_is_outstanding(urgency: Urgency) -> None:
    wo = work_order("WO-a1")
    reason = urgent_outstanding([wo], {"WO-a1": _state("WO-a1", urgency)}, T0)
    assert reason == f"WO-a1: {urgency.value} in memory"


def test_a_routine_state_or_none_is_not() -> None:
    wos = [work_order("WO-a1"), work_order("WO-a2", urgency=Urgency.EMERGENCY)]
    # WO-a2's own field is not memory: only the state's urgency counts.
    assert urgent_outstanding(wos, {"WO-a1": _state("WO-a1", Urgency.ROUTINE)}, T0) is None


@pytest.mark.parametrize(
    ("ago", "urgent"),
    [
        (timedelta(minutes=3), True),
        (ESCALATION_RECENT, True),
        (ESCALATION_RECENT + timedelta(minutes=1), False),
        (timedelta(days=9), False),
    ],
)
def test_a_recent_escalation_on_the_thread_is_outstanding(ago: timedelta, urgent: bool) -> None:
    state = MaestroState(
        wo_id="WO-a1", interrupted_by="pkg-9", interrupted_at=T0 - ago, updated_at=T0
    )
    reason = urgent_outstanding([work_order("WO-a1")], {"WO-a1": state}, T0)
    assert reason == ("WO-a1: an escalation (pkg-9) being handled" if urgent else None)


def test_a_closed_work_order_counts_for_nothing() -> None:
    done = work_order("WO-a1", status=WorkOrderStatus.CANCELLED)
    assert urgent_outstanding([done], {"WO-a1": _state("WO-a1", Urgency.EMERGENCY)}, T0) is None


@pytest.mark.parametrize(
    "starts_in",
    [timedelta(minutes=30), timedelta(hours=11), timedelta(hours=-1), VISIT_DUE_WITHIN],
)
def test_a_visit_due_soon_or_underway_is_outstanding(starts_in: timedelta) -> None:
    wo = _visiting("WO-b1", starts_in)
    assert (
        urgent_outstanding([wo], {}, T0) == f"WO-b1: a visit due at {(T0 + starts_in).isoformat()}"
    )


@pytest.mark.parametrize("starts_in", [timedelta(hours=13), timedelta(days=3), timedelta(hours=-5)])
def test_a_visit_later_or_over_is_not(starts_in: timedelta) -> None:
    assert urgent_outstanding([_visiting("WO-b1", starts_in)], {}, T0) is None


def test_the_first_reason_by_work_order_id() -> None:
    later = _visiting("WO-c2", timedelta(hours=1))
    first = work_order("WO-c1")
    states = {"WO-c1": _state("WO-c1", Urgency.URGENT)}
    assert urgent_outstanding([later, first], states, T0) == "WO-c1: urgent in memory"


def test_an_early_check_never_flushes_as_an_idle_timeout() -> None:
    meta = ConversationMeta(
        conversation_id="c",
        seq=2,
        flush_number=0,
        flushed_through=0,
        first_unflushed_at=T0,
        last_inbound_at=T0,
    )
    early = DebounceSignal(conversation_id="c", seq=2, urgent_for="tenant-ines", sent_at=T0)
    assert flush_trigger(meta, early, T0, timedelta(minutes=15)) is None
    expedited = early.model_copy(
        update={"trigger": FlushTrigger.URGENCY_EXPEDITE, "urgent_for": None}
    )
    assert (
        flush_trigger(meta, expedited, T0, timedelta(minutes=15)) is FlushTrigger.URGENCY_EXPEDITE
    )
