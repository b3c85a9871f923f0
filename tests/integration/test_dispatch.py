"""After a work order opens (issue 19), on the embedded stack: a tenant's signed SMS opens a WO,
its ``wo.created`` starts the WO's execution (rule → wo-start queue → wo_start), which gathers,
judges and offers the job to vendors by text, waiting on task tokens whose timeouts count
virtual seconds.

The vendors' and the PM's replies are read by the package pipeline's resolve (another part of
the issue, not merged yet): until it is, each test completes the wait's task token itself with
``StepFunctionsTaskTokens``, with the :class:`WaitAnswer` resolve would send, and says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.adapters.stepfunctions import StepFunctionsTaskTokens
from maestro.brain.model_port import ModelRequest
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
from maestro.domain.dispatch import DispatchRun, WaitAnswer
from maestro.domain.events import DomainEvent
from maestro.domain.models import WorkOrderStatus
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed_directory
from maestro_dev.scripted import Scripted, ScriptedModel
from tests.integration.embedded import flush, sms, to_phone, work_orders

pytestmark = pytest.mark.integration

HOUR = 3600
DAY_START = datetime(2027, 3, 9, 15, 0, tzinfo=UTC)  # 09:00 in Chicago: business hours
NIGHT_START = datetime(2027, 3, 10, 8, 0, tzinfo=UTC)  # 02:00 in Chicago
MAPLE = Property(
    property_id="maple", name="Maple Yard", address="40 Maple St", timezone="America/Chicago"
)
TENANT = Person(
    person_id="t-sol",
    role=PersonRole.TENANT,
    name="Sol",
    phones=("+13125550610",),
    unit_id="maple-4c",
)
PM = Person(
    person_id="pm-rhea",
    role=PersonRole.PM,
    name="Rhea",
    phones=("+13125550611",),
    property_ids=("maple",),
)
FLOW = Vendor(
    vendor_id="v-flow",
    name="Flowright Plumbing",
    phone="+13125550601",
    trades=(Trade.PLUMBING,),
    rank=1,
)
SEAL = Vendor(
    vendor_id="v-seal",
    name="Sealtight",
    phone="+13125550602",
    trades=(Trade.PLUMBING,),
    property_ids=("maple",),
    rank=2,
)
NIGHT = Vendor(
    vendor_id="v-night",
    name="Night Owl Pipes",
    phone="+13125550603",
    trades=(Trade.PLUMBING,),
    rank=3,
    after_hours=True,
)
SPARKY = Vendor(
    vendor_id="v-sparky", name="Sparky", phone="+13125550604", trades=(Trade.ELECTRICAL,)
)


def _directory(start: datetime) -> Directory:
    return Directory(
        properties=(MAPLE,),
        units=(Unit(unit_id="maple-4c", property_id="maple", label="4C"),),
        people=(TENANT, PM),
        vendors=(FLOW, SEAL, NIGHT, SPARKY),
        on_call=(
            OnCall(
                property_id="maple",
                person_id="pm-rhea",
                starts_at=start - timedelta(days=1),
                ends_at=start + timedelta(days=7),
            ),
        ),
    )


def _stack(start: datetime, **kwargs: Any) -> Iterator[LocalStack]:
    with LocalStack(start=start, **kwargs) as local:
        seed_directory(local, _directory(start))
        yield local


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    yield from _stack(DAY_START)


def _open(stack: LocalStack, text: str) -> str:
    """The tenant texts; the package opens a WO, whose execution runs to its first wait."""
    sms(stack, text, sender=TENANT.phones[0])
    flush(stack)
    (wo,) = work_orders(stack)
    return wo.wo_id


def _run(stack: LocalStack, wo_id: str) -> DispatchRun:
    run = stack.dispatch.deps.runs.get(wo_id)
    assert run is not None
    return run


def _answer(stack: LocalStack, wo_id: str, answer: str, **more: Any) -> None:
    """What resolve will send when the waited-for party replies (not merged yet: see above)."""
    waiting = _run(stack, wo_id).waiting
    assert waiting is not None, f"{wo_id} waits for nobody"
    said = WaitAnswer(kind=waiting.kind, answer=answer, party_id=waiting.party_id, **more)  # type: ignore[arg-type]
    StepFunctionsTaskTokens(stack.sfn).succeed(waiting.token, said.model_dump(mode="json"))
    stack.wait_for_executions(allow_paused=True)


def _wo(stack: LocalStack, wo_id: str) -> Any:
    wo = stack.dispatch.deps.work_orders.get(wo_id)
    assert wo is not None
    return wo


def _events(stack: LocalStack, wo_id: str) -> list[DomainEvent]:
    out = []
    for envelope in stack.domain_events():
        detail = envelope["detail"]
        event = DomainEvent.model_validate(
            json.loads(detail) if isinstance(detail, str) else detail
        )
        if event.wo_id == wo_id:
            out.append(event)
    return out


def test_a_tenants_text_opens_a_wo_asks_what_is_missing_and_the_first_vendor_takes_it(
    stack: LocalStack,
) -> None:
    wo_id = _open(stack, "the shower drain in my bathroom is backed up and won't empty")
    texts = to_phone(stack, TENANT.phones[0])
    assert len(texts) == 2  # the WO's reference, then the one question of gather
    assert wo_id in texts[1]
    run = _run(stack, wo_id)
    assert run.waiting is not None
    assert run.waiting.party_id == TENANT.person_id
    assert run.execution_arn == stack.wo_execution(wo_id)["executionArn"]
    assert stack.wo_states(wo_id)[-1] == "Gather: ask the tenant and wait"
    assert to_phone(stack, FLOW.phone) == []  # nobody offered anything while gather waits

    _answer(stack, wo_id, "details", items=("access", "availability"), package_id="pkg-sol-2")
    (offer,) = to_phone(stack, FLOW.phone)
    assert wo_id in offer
    assert "1" in offer
    assert stack.wo_states(wo_id)[-1] == "Dispatch: offer to vendor 1 of 3"

    _answer(stack, wo_id, "accept")
    wo = _wo(stack, wo_id)
    assert (wo.status, wo.vendor_id) == (WorkOrderStatus.ASSIGNED, FLOW.vendor_id)
    assert len(to_phone(stack, FLOW.phone)) == 2  # the offer, then the job's access details
    told = to_phone(stack, TENANT.phones[0])[-1]
    assert wo_id in told
    assert FLOW.name in told
    assert stack.wo_execution(wo_id)["status"] == "SUCCEEDED"
    assert stack.wo_states(wo_id)[-3:] == [
        "Dispatch: did vendor 1 accept?",
        "Dispatch: assign vendor 1",
        "Assigned: a vendor accepted",
    ]
    assert _run(stack, wo_id).step == "assigned"
    stack.advance(5)
    types = [e.type for e in _events(stack, wo_id)]
    for claimed in ("wo.created", "wo.gathered", "wo.offered", "wo.dispatched"):
        assert claimed in types
    assert to_phone(stack, SEAL.phone) == []


def test_the_first_vendor_declines_and_the_second_accepts(stack: LocalStack) -> None:
    wo_id = _open(stack, "kitchen tap keeps dripping all night, washer must be gone")
    _answer(stack, wo_id, "details", items=("access",))
    _answer(stack, wo_id, "decline")
    (offer,) = to_phone(stack, SEAL.phone)
    assert wo_id in offer
    _answer(stack, wo_id, "accept")
    assert _wo(stack, wo_id).vendor_id == SEAL.vendor_id
    assert len(to_phone(stack, FLOW.phone)) == 1  # the offer only: a decline needs no more
    assert [o.outcome for o in _run(stack, wo_id).offers] == ["declined", "accepted"]


def test_nobody_answers_each_offer_times_out_in_virtual_time_and_the_on_call_pm_is_paged(
    stack: LocalStack,
) -> None:
    wo_id = _open(stack, "the toilet is leaking at its base every time it flushes")
    stack.advance(2 * HOUR)  # the gather deadline: it goes on with what it has
    assert _run(stack, wo_id).gathered is not None
    assert _run(stack, wo_id).gathered.by_deadline  # type: ignore[union-attr]
    assert len(to_phone(stack, FLOW.phone)) == 1
    stack.advance(4 * HOUR - 60)
    assert to_phone(stack, SEAL.phone) == []  # a minute before the routine offer's timeout
    stack.advance(60)
    assert len(to_phone(stack, SEAL.phone)) == 1
    assert "lapsed" in to_phone(stack, FLOW.phone)[-1] or len(to_phone(stack, FLOW.phone)) == 2
    assert to_phone(stack, PM.phones[0]) == []
    stack.advance(8 * HOUR)  # one advance runs through both remaining offers' deadlines
    (page,) = to_phone(stack, PM.phones[0])
    assert wo_id in page
    assert len(to_phone(stack, NIGHT.phone)) == 2  # its offer, then that it lapsed
    run = _run(stack, wo_id)
    assert run.step == "no_vendor"
    assert [o.outcome for o in run.offers] == ["timed_out"] * 3
    assert stack.wo_execution(wo_id)["status"] == "SUCCEEDED"
    assert stack.wo_states(wo_id)[-2:] == [
        "Dispatch: page the on-call PM",
        "Ended: the on-call PM was paged",
    ]
    assert _wo(stack, wo_id).status is WorkOrderStatus.OPEN


def test_a_wo_closed_while_an_offer_waits_gets_no_further_offer(stack: LocalStack) -> None:
    wo_id = _open(stack, "the pipe under the bathroom sink is leaking into the cabinet")
    _answer(stack, wo_id, "details", items=("access",))
    assert len(to_phone(stack, FLOW.phone)) == 1
    wo = _wo(stack, wo_id)
    store = stack.dispatch.deps.work_orders
    store.update(wo.transition(WorkOrderStatus.CANCELLED, stack.clock.now()), wo.version)
    stack.advance(4 * HOUR)  # vendor 1's offer times out; vendor 2's is re-validated first (I6)
    assert to_phone(stack, SEAL.phone) == []
    assert stack.wo_states(wo_id)[-1] == "Stopped: the work order closed"
    assert _run(stack, wo_id).step == "closed"


def _emergency_model(summary: str) -> ScriptedModel:
    """A model that reads the tenant's text as an emergency plumbing job (no safety phrase: the
    pipeline does not escalate it, the WO is opened as an emergency)."""

    def respond(request: ModelRequest) -> Scripted | None:
        if request.purpose in ("probe", "precheck"):
            return {"route": "reasoning", "severity": "low", "confidence": 0.9, "evidence": ""}
        if request.purpose == "reasoning":
            return {
                "actions": [
                    {
                        "lane": "create_wo",
                        "confidence": 0.95,
                        "params": {
                            "summary": summary,
                            "category": "plumbing",
                            "urgency": "emergency",
                        },
                    }
                ]
            }
        return None

    return ScriptedModel(responder=respond)


def test_an_emergency_at_night_skips_gather_and_goes_to_an_after_hours_vendor() -> None:
    summary = "the water heater quit: no hot water"
    # No approval to wait for (its limit is above the job's): this test is about who is asked.
    settings = {"approval_over_usd": 5000}
    for stack in _stack(NIGHT_START, model=_emergency_model(summary), settings=settings):
        wo_id = _open(stack, "the water heater quit and there is no hot water at all tonight")
        assert len(to_phone(stack, TENANT.phones[0])) == 1  # its reference: no question
        states = stack.wo_states(wo_id)
        assert "Gather: ask the tenant and wait" not in states
        assert states[-1] == "Dispatch: offer to vendor 1 of 3"
        (offer,) = to_phone(stack, NIGHT.phone)
        assert wo_id in offer
        assert to_phone(stack, FLOW.phone) == to_phone(stack, SEAL.phone) == []
        judgment = _run(stack, wo_id).judgment
        assert judgment is not None
        assert judgment.after_hours
        stack.advance(10 * 60)  # an emergency offer waits 10 minutes, not hours
        assert stack.wo_states(wo_id)[-1] in (
            "Dispatch: offer to vendor 2 of 3",
            "Ended: the on-call PM was paged",
        )


@pytest.mark.parametrize(("reply", "assigned"), [("approve", True), ("refuse", False)])
def test_a_job_over_the_approval_limit_waits_for_the_pm(reply: str, assigned: bool) -> None:
    for stack in _stack(DAY_START, settings={"approval_over_usd": 100}):
        wo_id = _open(stack, "the bathtub faucet is dripping nonstop and the handle snapped off")
        _answer(stack, wo_id, "details", items=("access",))
        (ask,) = to_phone(stack, PM.phones[0])  # the property's on-call PM
        assert wo_id in ask
        assert "YES" in ask
        assert to_phone(stack, FLOW.phone) == []
        run = _run(stack, wo_id)
        assert run.step == "awaiting_approval"
        assert run.waiting is not None
        assert run.waiting.party_id == PM.person_id
        _answer(stack, wo_id, reply)
        offered = to_phone(stack, FLOW.phone)
        assert bool(offered) is assigned
        run = _run(stack, wo_id)
        assert run.approval == ("approved" if assigned else "refused")
        if not assigned:
            assert run.step == "refused_by_pm"
            assert stack.wo_execution(wo_id)["status"] == "SUCCEEDED"
            assert len(to_phone(stack, PM.phones[0])) == 1  # the PM said no: no page to them


def test_a_redelivered_wo_created_starts_nothing_twice(stack: LocalStack) -> None:
    wo_id = _open(stack, "the shower head is leaking from the joint whenever it runs")
    created = [
        envelope for envelope in stack.domain_events() if envelope["detail-type"] == "wo.created"
    ]
    assert len(created) == 1
    for _ in range(2):  # the rule delivered it again (at-least-once), twice
        stack.sqs.send_message(QueueUrl=stack.wo_start_url, MessageBody=json.dumps(created[0]))
    stack.advance(5)
    assert [e["name"] for e in stack.wo_executions()] == [wo_id]
    assert len(to_phone(stack, TENANT.phones[0])) == 2  # one reference, one question
    assert stack.sqs.receive_message(QueueUrl=stack.wo_start_dlq).get("Messages", []) == []


def test_closing_the_stack_ends_every_wait_no_thread_is_left_behind() -> None:
    """moto runs each execution, each Task's timeout and each task-token wait on a thread of its
    own: a wait on virtual time that nobody ends would outlive the test."""
    from moto.stepfunctions.parser import utils

    before = set(threading.enumerate())
    for stack in _stack(DAY_START):
        wo_id = _open(stack, "the basin tap drips even when it's turned off hard")
        assert list(stack.waiting_work_orders()) == [stack.wo_execution(wo_id)["executionArn"]]
        waiting = [t for t in utils.TMP_THREADS if t.is_alive() and t not in before]
        assert waiting  # the execution's, its wait's
    for thread in waiting:
        thread.join(timeout=5)
    assert [t.name for t in waiting if t.is_alive()] == []
