"""Completion from the field (issue 20, item 2), on the embedded stack with the offline brain,
driven by signed SMS only: a vendor's "it's done" in their own words moves their job to
``completion_reported`` and asks the tenant; the tenant's yes completes it with the rating
request out, a complaint reopens it to the vendor; a vendor with two jobs is asked which one; a
PM closes one by text (held until YES). Every check reads a surface: the WO store, the texts the
loopback Twilio recorded, the watcher's ledger.

Naive behaviour each was written against: a vendor's report that does not repeat the job's words
gets "Thanks for your message. I'm on it…", the tenant hears nothing, the WO stays open.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.directory import Directory, Person, PersonRole, Property, Trade, Unit, Vendor
from maestro.domain.models import WorkOrder, WorkOrderStatus
from maestro.domain.timeline import NoteEntry, StatusEntry
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed_directory
from tests.integration.embedded import flush, sms, to_phone, work_orders

pytestmark = pytest.mark.integration

START = datetime(2027, 5, 4, 15, 0, tzinfo=UTC)
LINDEN = "prop-linden"
ROSA = Person(
    person_id="t-rosa",
    role=PersonRole.TENANT,
    name="Rosa",
    phones=("+13125550401",),
    unit_id="linden-4a",
)
LUPE = Person(
    person_id="t-lupe",
    role=PersonRole.TENANT,
    name="Lupe",
    phones=("+13125550402",),
    unit_id="linden-2c",
    language="es",
)
HAL = Person(
    person_id="pm-hal",
    role=PersonRole.PM,
    name="Hal",
    phones=("+13125550403",),
    property_ids=(LINDEN,),
)
DEE = Vendor(
    vendor_id="v-dee",
    name="Dee",
    phone="+13125550404",
    trades=(Trade.PLUMBING, Trade.APPLIANCE),
)
VIC = Vendor(
    vendor_id="v-vic",
    name="Vic",
    phone="+13125550405",
    trades=(Trade.ELECTRICAL,),
)
DIRECTORY = Directory(
    properties=(Property(property_id=LINDEN, name="Linden Flats"),),
    units=(
        Unit(unit_id="linden-4a", property_id=LINDEN, label="4A"),
        Unit(unit_id="linden-2c", property_id=LINDEN, label="2C"),
    ),
    people=(ROSA, LUPE, HAL),
    vendors=(DEE, VIC),
)


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack(start=START) as local:
        seed_directory(local, DIRECTORY)
        yield local


def _store(stack: LocalStack) -> DynamoWorkOrderStore:
    return DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])


def _assigned(
    stack: LocalStack,
    wo_id: str,
    summary: str,
    tenant: Person = ROSA,
    unit: str = "4A",
    vendor: Vendor | None = DEE,
) -> None:
    """A job the dispatch run gave ``vendor`` (assigned; open when no vendor took it), written
    straight to the WO store: the world to start from, not an effect under test."""
    now = stack.clock.now()
    _store(stack).create(
        WorkOrder(
            wo_id=wo_id,
            tenant_id=tenant.person_id,
            vendor_id=vendor.vendor_id if vendor is not None else None,
            unit=unit,
            property_id=LINDEN,
            summary=summary,
            category="plumbing",
            status=WorkOrderStatus.ASSIGNED if vendor is not None else WorkOrderStatus.OPEN,
            created_at=now - timedelta(days=1),
            updated_at=now - timedelta(hours=2),
        )
    )


def _wo(stack: LocalStack, wo_id: str) -> WorkOrder:
    found = _store(stack).get(wo_id)
    assert found is not None
    return found


def _text(stack: LocalStack, phone: str, body: str) -> None:
    sms(stack, body, sender=phone)
    flush(stack)


def _no_shame(stack: LocalStack, wo_id: str) -> list[str]:
    """The watcher's reads of the WO's status claims (after its queue is polled), and no shame
    anywhere."""
    stack.advance(5)
    assert [(r.event_type, r.detail) for r in stack.ledger.scan() if r.verdict == "shame"] == []
    return [
        str(r.read.get("to_status"))
        for r in stack.ledger.for_wo(wo_id)
        if r.event_type == "wo.updated" and r.read.get("to_status")
    ]


def test_a_vendors_done_on_their_one_job_asks_the_tenant_and_her_yes_completes_it(
    stack: LocalStack,
) -> None:
    _assigned(stack, "WO-501", "bathroom hot tap won't shut off")
    rosa = ROSA.phones[0]

    # Work left is no completion: the job stays as it is, and the tenant hears the vendor's
    # news as an update on it (review of #20), never a question whether it is finished.
    _text(stack, DEE.phone, "got the old stem out, done for today, back tmrw with the part")
    assert _wo(stack, "WO-501").status is WorkOrderStatus.ASSIGNED
    (update,) = to_phone(stack, rosa)
    assert update.startswith("Update on WO-501")
    assert "finished" not in update

    _text(stack, DEE.phone, "swapped the stem + washer, all sorted 👌")
    assert _wo(stack, "WO-501").status is WorkOrderStatus.COMPLETION_REPORTED
    asked = to_phone(stack, rosa)[-1]
    assert asked.startswith("Dee says WO-501 (bathroom hot tap won't shut off) is finished.")
    assert "Reply YES" in asked
    assert "asked the tenant to confirm" in to_phone(stack, DEE.phone)[-1]
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    (reported,) = [e for e in timeline.for_wo("WO-501") if isinstance(e, StatusEntry)]
    assert (reported.to_status, reported.operation) == (
        WorkOrderStatus.COMPLETION_REPORTED,
        "report_completion",
    )
    assert "all sorted" in reported.what  # the vendor's words are on the record

    _text(stack, rosa, "Yep! works perfectly now")
    wo = _wo(stack, "WO-501")
    assert (wo.status, wo.rating_requested) == (WorkOrderStatus.COMPLETED, True)
    request = to_phone(stack, rosa)[-1]
    assert "How did Dee do? Reply with 1 to 5 stars." in request
    assert to_phone(stack, DEE.phone)[-1].startswith("The tenant confirmed WO-501 (")

    # The rating request is the real one: the existing rating flow records her stars.
    _text(stack, rosa, "4 stars, quick and tidy")
    assert _wo(stack, "WO-501").rating == 4
    assert _no_shame(stack, "WO-501") == ["completion_reported", "completed"]


def test_a_spanish_tenants_complaint_reopens_the_job_to_its_vendor(stack: LocalStack) -> None:
    _assigned(stack, "WO-502", "kitchen drain backs up", tenant=LUPE, unit="2C")
    lupe = LUPE.phones[0]

    _text(stack, DEE.phone, "ya quedó el desagüe, todo listo")
    assert _wo(stack, "WO-502").status is WorkOrderStatus.COMPLETION_REPORTED
    (asked,) = to_phone(stack, lupe)
    assert asked.startswith("Dee dice que WO-502 (kitchen drain backs up) está terminada.")
    assert "Responda SÍ" in asked

    _text(stack, lupe, "no, sigue tapado y huele feo")
    wo = _wo(stack, "WO-502")
    assert (wo.status, wo.vendor_id) == (WorkOrderStatus.ASSIGNED, DEE.vendor_id)
    told = to_phone(stack, DEE.phone)[-1]
    assert told.startswith("The tenant says WO-502 (kitchen drain backs up) isn't finished:")
    assert "sigue tapado y huele feo" in told
    assert to_phone(stack, lupe)[-1].startswith("Gracias, reabrí WO-502")
    assert _no_shame(stack, "WO-502") == ["completion_reported", "assigned"]


def test_a_vendor_with_two_jobs_is_asked_which_one_and_naming_it_reports_it(
    stack: LocalStack,
) -> None:
    _assigned(stack, "WO-601", "dishwasher won't drain")
    _assigned(stack, "WO-602", "toilet runs all night", tenant=LUPE, unit="2C")

    _text(stack, DEE.phone, "Job complete, heading to the next one")
    assert {_wo(stack, i).status for i in ("WO-601", "WO-602")} == {WorkOrderStatus.ASSIGNED}
    question = to_phone(stack, DEE.phone)[-1]
    assert question.startswith("Which of these jobs is finished?")
    assert "1) WO-601: dishwasher won't drain" in question
    assert "2) WO-602: toilet runs all night" in question
    assert to_phone(stack, ROSA.phones[0]) == to_phone(stack, LUPE.phones[0]) == []

    _text(stack, DEE.phone, "the toilet one is finished")
    assert _wo(stack, "WO-602").status is WorkOrderStatus.COMPLETION_REPORTED
    assert _wo(stack, "WO-601").status is WorkOrderStatus.ASSIGNED
    (asked,) = to_phone(stack, LUPE.phones[0])
    assert "WO-602" in asked
    assert to_phone(stack, ROSA.phones[0]) == []


def test_a_pm_closes_a_job_by_text_once_they_say_yes(stack: LocalStack) -> None:
    _assigned(stack, "WO-701", "laundry room washer leaks")
    hal = HAL.phones[0]

    _text(stack, hal, "mark 701 as done please, Dee sent photos")
    assert _wo(stack, "WO-701").status is WorkOrderStatus.ASSIGNED  # held, not done
    assert "Reply YES to close WO-701" in to_phone(stack, hal)[-1]

    _text(stack, hal, "YES")
    wo = _wo(stack, "WO-701")
    assert (wo.status, wo.rating_requested) == (WorkOrderStatus.COMPLETED, True)
    assert to_phone(stack, hal)[-1].startswith("Done: I've closed WO-701")
    (tenant,) = to_phone(stack, ROSA.phones[0])
    assert tenant.startswith("WO-701 (laundry room washer leaks) was closed by the property")
    assert "Reply with 1 to 5 stars." in tenant
    assert to_phone(stack, DEE.phone)[-1].endswith("was closed by the property manager.")
    assert _no_shame(stack, "WO-701") == ["completed"]


def test_a_vendors_bare_number_or_both_answers_which_job_is_finished(stack: LocalStack) -> None:
    """#20: the question a vendor's unnamed "done" gets is stored with the report, so a bare
    number (or "both") reports exactly those jobs, as a named report would; their words are
    never passed on as a note. Naive: nothing stored, "2" is read afresh and changes nothing."""
    rosa, lupe = ROSA.phones[0], LUPE.phones[0]
    _assigned(stack, "WO-611", "radiator valve hisses")
    _assigned(stack, "WO-612", "shower mixer stuck on cold", tenant=LUPE, unit="2C")
    _assigned(stack, "WO-613", "garbage disposal jammed")
    _assigned(stack, "WO-621", "hall sconce flickers", vendor=VIC)
    _assigned(stack, "WO-622", "bathroom fan dead", tenant=LUPE, unit="2C", vendor=VIC)

    _text(stack, DEE.phone, "that one's fixed, tools packed up")
    question = to_phone(stack, DEE.phone)[-1]
    assert question.startswith("Which of these jobs is finished? 1) WO-611: radiator valve")
    assert "3) WO-613: garbage disposal jammed" in question
    assert to_phone(stack, rosa) == to_phone(stack, lupe) == []

    _text(stack, DEE.phone, "2")
    assert _wo(stack, "WO-612").status is WorkOrderStatus.COMPLETION_REPORTED
    assert {_wo(stack, i).status for i in ("WO-611", "WO-613")} == {WorkOrderStatus.ASSIGNED}
    (asked,) = to_phone(stack, lupe)
    assert asked.startswith("Dee dice que WO-612 (shower mixer stuck on cold) está terminada.")
    assert to_phone(stack, rosa) == []
    assert "asked the tenant to confirm" in to_phone(stack, DEE.phone)[-1]

    _text(stack, VIC.phone, "Linden work is finished ✅")
    assert to_phone(stack, VIC.phone)[-1].startswith("Which of these jobs is finished?")
    _text(stack, VIC.phone, "both are done")
    assert {_wo(stack, i).status for i in ("WO-621", "WO-622")} == {
        WorkOrderStatus.COMPLETION_REPORTED
    }
    assert to_phone(stack, rosa)[-1].startswith("Vic says WO-621 (hall sconce flickers)")
    assert to_phone(stack, lupe)[-1].startswith("Vic dice que WO-622 (bathroom fan dead)")
    told = to_phone(stack, VIC.phone)[-1]
    assert told.startswith("Thanks, these are marked finished")
    assert "WO-621" in told
    assert "WO-622" in told
    # Nobody heard the vendors' words as a note: each tenant got the fixed question only.
    assert not any("tools packed" in t or "both are done" in t for t in to_phone(stack, rosa))
    assert _no_shame(stack, "WO-622") == ["completion_reported"]


def test_a_pms_close_asked_about_holds_the_pick_for_their_yes(stack: LocalStack) -> None:
    """#20: a PM's close with no one work order named asks which, keeping the close: the
    answer is held ("Reply YES to close …"), and YES closes exactly that. Naive: the question
    kept no call, and "the second one" only noted the PM's words on the job."""
    hal = HAL.phones[0]
    _assigned(stack, "WO-711", "oven door hinge loose")
    _assigned(stack, "WO-712", "sink sprayer cracked", tenant=LUPE, unit="2C")

    _text(stack, hal, "go ahead and close that ticket out, Dee sent the invoice")
    question = to_phone(stack, hal)[-1]
    assert question.startswith("Which of these do you want me to close?")
    assert "WO-711" in question
    assert "WO-712" in question

    _text(stack, hal, "the second one")
    assert _wo(stack, "WO-712").status is WorkOrderStatus.ASSIGNED  # held, not done
    assert "Reply YES to close WO-712" in to_phone(stack, hal)[-1]
    assert to_phone(stack, DEE.phone) == []  # nothing relayed

    _text(stack, hal, "yes")
    wo = _wo(stack, "WO-712")
    assert (wo.status, wo.rating_requested) == (WorkOrderStatus.COMPLETED, True)
    assert _wo(stack, "WO-711").status is WorkOrderStatus.ASSIGNED
    assert to_phone(stack, hal)[-1].startswith("Done: I've closed WO-712")
    assert to_phone(stack, DEE.phone)[-1].endswith("was closed by the property manager.")
    assert _no_shame(stack, "WO-712") == ["completed"]


def test_a_pm_closes_a_request_no_vendor_took(stack: LocalStack) -> None:
    """#20: an open request nobody was dispatched to (the tenant sorted it) can be closed by
    its PM: the hold says up front what that does, YES completes it with no rating asked, and
    the tenant is told. Naive: held, then refused after the YES ("is open now")."""
    hal, rosa = HAL.phones[0], ROSA.phones[0]
    _assigned(stack, "WO-731", "closet door off its track", vendor=None)

    _text(stack, hal, "close WO-731 please, the tenant put the door back herself")
    held = to_phone(stack, hal)[-1]
    assert held.startswith("No vendor has taken WO-731: closing tells the tenant")
    assert "Reply YES to close WO-731 (closet door off its track" in held
    assert _wo(stack, "WO-731").status is WorkOrderStatus.OPEN

    _text(stack, hal, "YES")
    wo = _wo(stack, "WO-731")
    assert (wo.status, wo.rating_requested, wo.vendor_id) == (
        WorkOrderStatus.COMPLETED,
        False,
        None,
    )
    assert to_phone(stack, hal)[-1].startswith("Done: I've closed WO-731")
    (told,) = to_phone(stack, rosa)
    assert told.startswith("WO-731 (closet door off its track) was closed by the property manager")
    assert "stars" not in told
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    (closed,) = [e for e in timeline.for_wo("WO-731") if isinstance(e, StatusEntry)]
    assert (closed.from_status, closed.to_status) == (
        WorkOrderStatus.OPEN,
        WorkOrderStatus.COMPLETED,
    )
    assert "no vendor" in closed.what
    assert _no_shame(stack, "WO-731") == ["completed"]


@pytest.mark.parametrize("answer", ["Yes.", "thanks so much", "👌", "okay"])
def test_the_tenants_bare_yes_or_thanks_to_the_completion_question_confirms_it(
    stack: LocalStack, answer: str
) -> None:
    """Review of #20: the question says "Reply YES", but no pending item stores it, so a bare
    YES met "There's nothing waiting for your yes right now" (untrue) and a thanks or an ok was
    taken by the pre-check as chit-chat ("You're welcome!", or silence): the job stayed
    ``completion_reported`` for good. Either answers the question as a yes."""
    _assigned(stack, "WO-541", "balcony door sticks")
    rosa = ROSA.phones[0]
    _text(stack, DEE.phone, "new rollers in, job complete")
    assert _wo(stack, "WO-541").status is WorkOrderStatus.COMPLETION_REPORTED

    _text(stack, rosa, answer)
    wo = _wo(stack, "WO-541")
    assert (wo.status, wo.rating_requested) == (WorkOrderStatus.COMPLETED, True)
    told = to_phone(stack, rosa)[-1]
    assert told.startswith("Thanks for confirming: WO-541")
    assert "nothing waiting" not in " ".join(to_phone(stack, rosa))
    assert _no_shame(stack, "WO-541") == ["completion_reported", "completed"]


def test_with_no_completion_question_out_a_yes_or_thanks_is_still_what_it_was(
    stack: LocalStack,
) -> None:
    """The other side of the above: a tenant whose job is only assigned (nothing asked) still
    hears that no yes was waiting, and a thanks is answered in kind; nothing changes."""
    _assigned(stack, "WO-542", "balcony door sticks")
    rosa = ROSA.phones[0]
    _text(stack, rosa, "yes")
    assert "nothing waiting for your yes" in to_phone(stack, rosa)[-1]
    _text(stack, rosa, "thanks so much")
    assert to_phone(stack, rosa)[-1] == "You're welcome!"
    assert _wo(stack, "WO-542").status is WorkOrderStatus.ASSIGNED


def test_a_vendors_progress_news_on_their_one_job_reaches_its_tenant_and_record(
    stack: LocalStack,
) -> None:
    """Review of #20: a vendor's news that is not a completion ("valve's on backorder, back
    next tuesday") was saved and acted on by nothing ("I couldn't tell what you need"): the
    job's record and its tenant never heard. A question stays the assistant's."""
    _assigned(stack, "WO-551", "tub spout leaks behind the wall")
    rosa = ROSA.phones[0]

    _text(stack, DEE.phone, "valve's on backorder, I'll be back next tuesday to finish")
    assert _wo(stack, "WO-551").status is WorkOrderStatus.ASSIGNED
    (told,) = to_phone(stack, rosa)
    assert "WO-551" in told
    assert "valve's on backorder" in told
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    assert any(
        isinstance(e, NoteEntry) and "backorder" in e.note for e in timeline.for_wo("WO-551")
    )

    _text(stack, DEE.phone, "does she have a dog?")
    assert len(to_phone(stack, rosa)) == 1  # a question is not relayed


def test_a_yes_said_beside_a_new_problem_completes_the_job_and_opens_the_problem(
    stack: LocalStack,
) -> None:
    """Review of #20: "yes thanks! btw the bedroom blinds are broken" opened the blinds' work
    order and lost the yes: the reported job stayed ``completion_reported``."""
    _assigned(stack, "WO-561", "shower valve drips")
    rosa = ROSA.phones[0]
    _text(stack, DEE.phone, "new cartridge in, job complete")
    assert _wo(stack, "WO-561").status is WorkOrderStatus.COMPLETION_REPORTED

    _text(stack, rosa, "looks good, thank you. unrelated but the coat closet light is out")
    assert _wo(stack, "WO-561").status is WorkOrderStatus.COMPLETED
    opened = [wo for wo in work_orders(stack) if wo.wo_id != "WO-561"]
    assert [(wo.category, "closet light" in wo.summary) for wo in opened] == [("electrical", True)]
    said = " ".join(to_phone(stack, rosa))
    assert "Thanks for confirming: WO-561" in said
    assert f"I've opened {opened[0].wo_id}" in said
