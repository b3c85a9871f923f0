"""The package pipeline answers a work order execution's waits (issue 19), on the embedded stack,
driven by signed SMS only: the tenant's details complete gather, a vendor's reply answers their
open offer (before a rating request of theirs), a decline moves to the next vendor, a cancel
withdraws the open offer, and a PM's YES or NO answers an approval. Nobody here completes a task
token by hand: resolve and the act step do."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.domain.directory import (
    Directory,
    OnCall,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
)
from maestro.domain.dispatch import DispatchRun
from maestro.domain.models import WorkOrder, WorkOrderStatus
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed_directory
from tests.integration.embedded import flush, sms, to_phone, work_orders

pytestmark = pytest.mark.integration

START = datetime(2027, 4, 13, 14, 30, tzinfo=UTC)  # 10:30 in New York: business hours
BIRCH = Property(
    property_id="birch", name="Birch Court", address="9 Birch Ave", timezone="America/New_York"
)
TENANT = Person(
    person_id="t-ines",
    role=PersonRole.TENANT,
    name="Ines",
    phones=("+12125550710",),
    unit_id="birch-2b",
)
PM = Person(
    person_id="pm-otto",
    role=PersonRole.PM,
    name="Otto",
    phones=("+12125550711",),
    property_ids=("birch",),
)
PIPEWORKS = Vendor(
    vendor_id="v-pipeworks",
    name="Pipeworks",
    phone="+12125550701",
    trades=(Trade.PLUMBING,),
    rank=1,
)
DRIPLESS = Vendor(
    vendor_id="v-dripless",
    name="Dripless Co",
    phone="+12125550702",
    trades=(Trade.PLUMBING,),
    property_ids=("birch",),
    rank=2,
)


def _directory() -> Directory:
    return Directory(
        properties=(BIRCH,),
        units=(Unit(unit_id="birch-2b", property_id="birch", label="2B"),),
        people=(TENANT, PM),
        vendors=(PIPEWORKS, DRIPLESS),
        on_call=(
            OnCall(
                property_id="birch",
                person_id=PM.person_id,
                starts_at=START - timedelta(days=1),
                ends_at=START + timedelta(days=7),
            ),
        ),
    )


def _stack(**kwargs: Any) -> Iterator[LocalStack]:
    with LocalStack(start=START, **kwargs) as local:
        seed_directory(local, _directory())
        yield local


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    yield from _stack()


def _text(stack: LocalStack, who: str, body: str) -> None:
    """One signed SMS from ``who``, and its package run to the end (with what it set going)."""
    sms(stack, body, sender=who)
    flush(stack)


def _run(stack: LocalStack, wo_id: str) -> DispatchRun:
    run = stack.dispatch.deps.runs.get(wo_id)
    assert run is not None
    return run


def _wo(stack: LocalStack, wo_id: str) -> WorkOrder:
    wo = stack.dispatch.deps.work_orders.get(wo_id)
    assert wo is not None
    return wo


def _opened_and_offered(stack: LocalStack) -> str:
    """The tenant reports a leak; the WO's execution asks what it lacks; the tenant's reply by
    SMS completes that wait, and the first vendor is offered the job."""
    _text(stack, TENANT.phones[0], "water is dripping from the pipe under my kitchen sink")
    (wo,) = [w for w in work_orders(stack) if w.is_open]
    wo_id = wo.wo_id
    run = _run(stack, wo_id)
    assert run.waiting is not None
    assert (run.waiting.kind, run.waiting.party_id) == ("gather", TENANT.person_id)
    assert to_phone(stack, PIPEWORKS.phone) == []

    _text(
        stack,
        TENANT.phones[0],
        f"for {wo_id}: the spare key is with the doorman, come in anytime, no pets",
    )
    run = _run(stack, wo_id)
    assert run.gathered is not None
    assert not run.gathered.by_deadline  # answered, not timed out
    assert run.waiting is not None
    assert (run.waiting.kind, run.waiting.party_id) == ("offer", PIPEWORKS.vendor_id)
    (offer,) = to_phone(stack, PIPEWORKS.phone)
    assert wo_id in offer
    told = to_phone(stack, TENANT.phones[0])[-1]
    assert wo_id in told
    assert "finding a vendor for it now" in told  # the truth while dispatch runs
    return wo_id


def test_a_vendors_yes_goes_to_their_offer_while_a_rating_request_of_theirs_is_out(
    stack: LocalStack,
) -> None:
    earlier = WorkOrder(
        wo_id="WO-7001",
        tenant_id=TENANT.person_id,
        vendor_id=PIPEWORKS.vendor_id,
        unit="2B",
        property_id="birch",
        summary="radiator valve replaced",
        category="plumbing",
        status=WorkOrderStatus.COMPLETED,
        rating_requested=True,
        created_at=START - timedelta(days=9),
        updated_at=START - timedelta(days=1),
    )
    stack.dispatch.deps.work_orders.create(earlier)
    wo_id = _opened_and_offered(stack)

    _text(stack, PIPEWORKS.phone, "yep, I'll take it")
    wo = _wo(stack, wo_id)
    assert (wo.status, wo.vendor_id) == (WorkOrderStatus.ASSIGNED, PIPEWORKS.vendor_id)
    assert [o.outcome for o in _run(stack, wo_id).offers] == ["accepted"]
    texts = to_phone(stack, PIPEWORKS.phone)
    assert f"Noted: you've accepted {wo_id}." in " ".join(texts)
    assert stack.wo_execution(wo_id)["status"] == "SUCCEEDED"
    # Not a rating, not a note: the earlier job is as it was.
    assert _wo(stack, "WO-7001").rating is None
    assert _wo(stack, "WO-7001").rating_requested


def test_a_decline_moves_the_job_to_the_second_vendor(stack: LocalStack) -> None:
    wo_id = _opened_and_offered(stack)
    _text(stack, PIPEWORKS.phone, "sorry, booked solid today")
    assert to_phone(stack, PIPEWORKS.phone)[-1] == (
        f"Noted: you've declined {wo_id}. Thanks for letting us know."
    )
    (offer,) = to_phone(stack, DRIPLESS.phone)
    assert wo_id in offer
    _text(stack, DRIPLESS.phone, "1")
    assert _wo(stack, wo_id).vendor_id == DRIPLESS.vendor_id
    assert [o.outcome for o in _run(stack, wo_id).offers] == ["declined", "accepted"]


def test_a_wo_cancelled_during_an_offer_withdraws_it_and_offers_no_more(
    stack: LocalStack,
) -> None:
    wo_id = _opened_and_offered(stack)
    _text(stack, TENANT.phones[0], f"please cancel {wo_id}, my neighbour fixed it")
    assert _wo(stack, wo_id).status is not WorkOrderStatus.CANCELLED  # held until YES
    _text(stack, TENANT.phones[0], "YES")
    assert _wo(stack, wo_id).status is WorkOrderStatus.CANCELLED
    run = _run(stack, wo_id)
    assert run.step == "closed"
    assert [o.outcome for o in run.offers] == ["withdrawn"]
    assert stack.wo_states(wo_id)[-1] == "Stopped: the work order closed"
    withdrawn = to_phone(stack, PIPEWORKS.phone)[-1]
    assert wo_id in withdrawn
    assert "withdrawn" in withdrawn
    stack.advance(8 * 3600)  # past every offer's timeout: nothing more goes anywhere
    assert to_phone(stack, DRIPLESS.phone) == []
    # The vendor's late "1" changes nothing, and they hear so.
    _text(stack, PIPEWORKS.phone, "1")
    assert _wo(stack, wo_id).status is WorkOrderStatus.CANCELLED
    assert _wo(stack, wo_id).vendor_id is None


def test_a_wo_cancelled_during_gather_stops_its_execution_before_the_judge(
    stack: LocalStack,
) -> None:
    _text(stack, TENANT.phones[0], "the bathroom tap won't stop running")
    (wo,) = [w for w in work_orders(stack) if w.is_open]
    run = _run(stack, wo.wo_id)
    assert run.waiting is not None
    assert run.waiting.kind == "gather"
    _text(stack, TENANT.phones[0], f"actually cancel {wo.wo_id}, it stopped on its own")
    _text(stack, TENANT.phones[0], "yes")
    assert _wo(stack, wo.wo_id).status is WorkOrderStatus.CANCELLED
    states = stack.wo_states(wo.wo_id)
    assert states[-2:] == ["Judge: priority, budget and vendors", "Stopped: the work order closed"]
    assert _run(stack, wo.wo_id).step == "closed"
    stack.advance(8 * 3600)
    assert to_phone(stack, PIPEWORKS.phone) == []  # no vendor is ever offered it
    assert to_phone(stack, DRIPLESS.phone) == []


@pytest.mark.parametrize(("reply", "offered"), [("YES", True), ("too pricey for that, no", False)])
def test_a_pms_yes_or_no_answers_the_approval(reply: str, offered: bool) -> None:
    for stack in _stack(settings={"approval_over_usd": 100}):
        _text(stack, TENANT.phones[0], "the bathtub drain is clogged and the tub won't empty")
        (wo,) = work_orders(stack)
        wo_id = wo.wo_id
        _text(stack, TENANT.phones[0], f"{wo_id}: key under the mat, home after 4pm, a small dog")
        run = _run(stack, wo_id)
        assert run.waiting is not None
        assert (run.waiting.kind, run.waiting.party_id) == ("approval", PM.person_id)
        _text(stack, PM.phones[0], reply)
        run = _run(stack, wo_id)
        assert run.approval == ("approved" if offered else "refused")
        assert bool(to_phone(stack, PIPEWORKS.phone)) is offered
        said = to_phone(stack, PM.phones[0])[-1]
        assert said.startswith(f"Noted: you've {'approved' if offered else 'refused'} {wo_id}")
