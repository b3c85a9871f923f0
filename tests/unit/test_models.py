from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from builders import T0, package, wo_context
from pydantic import ValidationError

from maestro.domain.models import (
    ContextKind,
    InvalidTransitionError,
    Message,
    OpenContext,
    Package,
    Party,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
    context_for_work_order,
    package_id_for,
)


def _wo(**changes: object) -> WorkOrder:
    data: dict[str, object] = {
        "wo_id": "WO-204",
        "tenant_id": "tenant-maria",
        "summary": "leak under the kitchen sink",
        "unit": "3B",
        "created_at": T0,
        "updated_at": T0,
    }
    data.update(changes)
    return WorkOrder.model_validate(data)


@pytest.mark.parametrize("phone", ["4155550100", "+0155550100", "+1 415 555 0100", "+1", ""])
def test_party_phone_must_be_e164(phone: str) -> None:
    with pytest.raises(ValidationError):
        Party(party_id="p", role=PartyRole.TENANT, phone=phone)


def test_party_accepts_e164_and_is_immutable() -> None:
    party = Party(party_id="p", role=PartyRole.VENDOR, phone="+442071838750")
    with pytest.raises(ValidationError):
        party.phone = "+14155550100"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        Message(
            message_id="SM1",
            conversation_id="c",
            from_phone="+14155550100",
            received_at=datetime(2026, 1, 1, 12, 0),
            seq=0,
        )


def test_package_messages_must_be_in_seq_order() -> None:
    good = package("one", "two")
    reordered = good.model_dump()
    reordered["messages"] = list(reversed(reordered["messages"]))
    with pytest.raises(ValidationError, match="increasing seq"):
        Package.model_validate(reordered)


def test_package_messages_must_belong_to_its_conversation() -> None:
    data = package("one").model_dump()
    data["messages"][0]["conversation_id"] = "someone-else"
    with pytest.raises(ValidationError, match="belong"):
        Package.model_validate(data)


def test_package_id_is_deterministic_and_distinct_per_flush() -> None:
    assert package_id_for("conv-1", 3) == package_id_for("conv-1", 3)
    assert package_id_for("conv-1", 3) != package_id_for("conv-1", 4)
    assert package_id_for("conv-1", 3) != package_id_for("conv-2", 3)


def test_work_order_lifecycle_happy_path_bumps_version() -> None:
    window = VisitWindow(start=T0 + timedelta(days=1), end=T0 + timedelta(days=1, hours=2))
    wo = _wo().schedule(window, T0)
    wo = wo.transition(WorkOrderStatus.IN_PROGRESS, T0).transition(WorkOrderStatus.COMPLETED, T0)
    assert wo.status is WorkOrderStatus.COMPLETED
    assert wo.version == 4


@pytest.mark.parametrize(
    ("start", "to"),
    [
        (WorkOrderStatus.OPEN, WorkOrderStatus.COMPLETED),
        (WorkOrderStatus.COMPLETED, WorkOrderStatus.OPEN),
        (WorkOrderStatus.CANCELLED, WorkOrderStatus.SCHEDULED),
        (WorkOrderStatus.COMPLETED, WorkOrderStatus.CANCELLED),
    ],
)
def test_work_order_refuses_transitions_outside_the_lifecycle(
    start: WorkOrderStatus, to: WorkOrderStatus
) -> None:
    with pytest.raises(InvalidTransitionError):
        _wo(status=start).transition(to, T0)


def test_rating_only_while_requested() -> None:
    done = _wo(status=WorkOrderStatus.COMPLETED)
    with pytest.raises(InvalidTransitionError, match="no rating request"):
        done.record_rating(5, T0)
    rated = done.request_rating(T0).record_rating(4, T0)
    assert rated.rating == 4
    assert not rated.rating_requested
    with pytest.raises(InvalidTransitionError):
        rated.record_rating(5, T0)


def test_rating_request_needs_a_completed_work_order() -> None:
    with pytest.raises(InvalidTransitionError):
        _wo().request_rating(T0)
    with pytest.raises(ValidationError):
        _wo(rating_requested=True)


def test_context_staleness_uses_last_activity() -> None:
    fresh = wo_context("WO-1", age=timedelta(hours=71))
    stale = wo_context("WO-2", age=timedelta(hours=73))
    assert not fresh.is_stale(T0)
    assert stale.is_stale(T0)
    assert stale.is_stale(T0, ttl=timedelta(hours=72))
    assert not stale.is_stale(T0, ttl=timedelta(days=7))


def test_context_line_names_id_and_what_it_waits_for() -> None:
    ctx = wo_context("WO-204", awaiting="availability")
    assert ctx.line().startswith("WO-204 (work_order): leak under the kitchen sink")
    assert ctx.line().endswith("awaiting availability")


def test_context_for_a_work_order_carries_its_rating_request() -> None:
    done = _wo(status=WorkOrderStatus.COMPLETED).request_rating(T0)
    ctx = context_for_work_order(done)
    assert ctx.rating_requested
    assert ctx.awaiting == "rating"
    assert ctx.kind is ContextKind.WORK_ORDER


def test_context_description_is_one_bounded_line() -> None:
    with pytest.raises(ValidationError):
        OpenContext(
            context_id="x", kind=ContextKind.WORK_ORDER, description="y" * 201, opened_at=T0
        )
