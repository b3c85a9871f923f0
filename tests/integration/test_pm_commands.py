"""PMs by text (issue #18, deliverable 5), on the embedded stack with the offline brain.

A PM acts on the work orders of the properties they manage: where one stands, what is open, a
held cancel, a note on the record. Each test sends signed SMS through the real webhook, lets the
idle window flush them through the real ASL, and reads the WO store, the timeline, the pending
holds and the texts Twilio (the loopback) recorded. The wordings are a PM's own, not the
issue's. Naive behaviour each was written against: a PM has no contexts, every sample is thrown
out, and the on-call PM is paged an ``[INFO] fallback`` about the PM's own text.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from embedded import flush, outcomes, sent_by, sms, to_phone

from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.directory import Directory, Person, PersonRole, Property, Unit
from maestro.domain.models import Party, PartyRole, WorkOrder, WorkOrderStatus
from maestro.domain.records import PendingConfirmation
from maestro.domain.timeline import NoteEntry
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import MARIA, VIC, seed, seed_directory

pytestmark = pytest.mark.integration

ELM, OAK = "prop-elm", "prop-oak"
# The directory as an import leaves it: Maria lives at Elm, Otto at Oak; Pat manages Elm, Olive
# Oak.
DIRECTORY = Directory(
    properties=(Property(property_id=ELM, name="Elm"), Property(property_id=OAK, name="Oak")),
    units=(
        Unit(unit_id="elm-3B", property_id=ELM, label="3B"),
        Unit(unit_id="oak-9", property_id=OAK, label="9"),
    ),
    people=(
        Person(
            person_id=MARIA.party_id,
            role=PersonRole.TENANT,
            name=MARIA.name,
            phones=(MARIA.phone,),
            unit_id="elm-3B",
        ),
        Person(
            person_id="pm-pat",
            role=PersonRole.PM,
            name="Pat",
            phones=("+14155550171",),
            property_ids=(ELM,),
        ),
        Person(
            person_id="pm-olive",
            role=PersonRole.PM,
            name="Olive",
            phones=("+14155550172",),
            property_ids=(OAK,),
        ),
        Person(
            person_id="tenant-otto",
            role=PersonRole.TENANT,
            name="Otto",
            phones=("+14155550173",),
            unit_id="oak-9",
        ),
    ),
)
PAT, OLIVE, OTTO = (
    next(p for p in DIRECTORY.parties() if p.party_id == person_id)
    for person_id in ("pm-pat", "pm-olive", "tenant-otto")
)


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        seed_directory(local, DIRECTORY)
        yield local


def store(stack: LocalStack) -> DynamoWorkOrderStore:
    return DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])


def put_wo(
    stack: LocalStack,
    wo_id: str,
    summary: str,
    property_id: str,
    tenant: Party = MARIA,
    vendor: Party | None = VIC,
) -> WorkOrder:
    now = stack.clock.now()
    wo = WorkOrder(
        wo_id=wo_id,
        tenant_id=tenant.party_id,
        vendor_id=vendor.party_id if vendor else None,
        unit=tenant.unit,
        property_id=property_id,
        summary=summary,
        category="plumbing",
        created_at=now - timedelta(hours=5),
        updated_at=now - timedelta(hours=1),
    )
    store(stack).create(wo)
    return wo


def wo(stack: LocalStack, wo_id: str) -> WorkOrder:
    found = store(stack).get(wo_id)
    assert found is not None
    return found


def notes(stack: LocalStack, wo_id: str) -> list[NoteEntry]:
    timeline = DynamoTimeline(stack.ddb, stack.tables["timeline"])
    return [e for e in timeline.for_wo(wo_id) if isinstance(e, NoteEntry)]


def holds(stack: LocalStack, party: Party) -> list[PendingConfirmation]:
    pending = DynamoPendingStore(stack.ddb, stack.tables["pending"])
    return pending.confirmations_for(party.party_id, stack.clock.now())


def info_pages(stack: LocalStack) -> list[str]:
    """Every info or fallback page, to whoever the on-call order chose (with the directory
    imported, an Elm page goes to Pat, Elm's default PM, not the account's fallback number)."""
    return [m.body for m in stack.outbox() if "[INFO]" in m.body or "fallback" in m.body.lower()]


def test_a_pm_asks_where_a_work_order_stands_and_gets_the_store_s_answer(
    stack: LocalStack,
) -> None:
    put_wo(stack, "WO-204", "leak under the kitchen sink", ELM)
    sms(stack, "hey whats up with wo 204", PAT.phone)
    done = flush(stack)
    (reply,) = sent_by(stack, done, PAT.phone)
    assert "WO-204" in reply
    assert "is open; no visit is booked yet" in reply  # the stored status, not a promise
    assert VIC.name in reply
    assert "unit 3B" in reply
    # Nobody else heard of it, and the on-call PM was not paged about the PM's own text.
    assert sent_by(stack, done) == [reply]
    assert info_pages(stack) == []


def test_a_pm_asks_what_is_open_and_gets_a_few_with_how_many_more(stack: LocalStack) -> None:
    for n in range(7):
        put_wo(stack, f"WO-30{n}", f"job number {n} at elm", ELM)
    put_wo(stack, "WO-990", "oak's boiler", OAK, tenant=OTTO)
    sms(stack, "any open jobs rn?", PAT.phone)
    done = flush(stack)
    (reply,) = sent_by(stack, done, PAT.phone)
    assert "(7)" in reply
    assert [f"WO-30{n}" in reply for n in range(7)] == [True] * 5 + [False] * 2
    assert "and 2 more" in reply
    assert "WO-990" not in reply  # another property's
    assert info_pages(stack) == []


def test_a_pm_cancel_is_held_until_yes_then_the_tenant_and_vendor_are_told(
    stack: LocalStack,
) -> None:
    put_wo(stack, "WO-204", "leak under the kitchen sink", ELM)
    put_wo(stack, "WO-205", "bedroom heater rattles", ELM)
    sms(stack, "pls cancel 204", PAT.phone)
    asked = flush(stack)
    (hold,) = holds(stack, PAT)
    assert hold.call is not None
    assert hold.call.wo_ids == ("WO-204",)
    assert wo(stack, "WO-204").status is WorkOrderStatus.OPEN  # held, not done
    assert any("Reply YES" in body for body in sent_by(stack, asked, PAT.phone))
    assert sent_by(stack, asked, MARIA.phone) == []

    sms(stack, "yes", PAT.phone)
    released = flush(stack)
    assert wo(stack, "WO-204").status is WorkOrderStatus.CANCELLED
    assert wo(stack, "WO-205").status is WorkOrderStatus.OPEN
    assert [o.status for o in outcomes(stack, released)] == ["done"]
    assert any("cancelled" in body for body in sent_by(stack, released, PAT.phone))
    (tenant,) = sent_by(stack, released, MARIA.phone)
    assert tenant.endswith("was cancelled by the property manager.")  # fixed words, not Pat's
    assert any("cancelled by the property manager" in b for b in to_phone(stack, VIC.phone))


def test_a_pm_note_goes_on_the_timeline_and_reaches_neither_tenant_nor_vendor(
    stack: LocalStack,
) -> None:
    put_wo(stack, "WO-204", "leak under the kitchen sink", ELM)
    sms(stack, "add a note to WO-204 - spare key is under the mat", PAT.phone)
    done = flush(stack)
    (note,) = notes(stack, "WO-204")
    assert (note.note, note.who, note.who_role) == (
        "spare key is under the mat",
        PAT.party_id,
        PartyRole.PM,
    )
    (ack,) = sent_by(stack, done, PAT.phone)
    assert ack.startswith("Noted on WO-204")
    assert sent_by(stack, done, MARIA.phone) == []
    assert sent_by(stack, done, VIC.phone) == []
    assert [b for b in to_phone(stack, MARIA.phone) if "spare key" in b] == []


@pytest.mark.parametrize(
    "words",
    [
        "where are we on WO-204?",
        "cancel wo 204 please",
        "note WO-204: the spare key is at the front desk",
    ],
)
def test_a_pm_cannot_act_on_another_propertys_work_order(stack: LocalStack, words: str) -> None:
    put_wo(stack, "WO-204", "leak under the kitchen sink", ELM)
    before = wo(stack, "WO-204")
    sms(stack, words, OLIVE.phone)  # Olive manages Oak, not Elm
    done = flush(stack)
    (reply,) = sent_by(stack, done, OLIVE.phone)
    assert reply.startswith("WO-204 is not an open work order of a property you manage")
    assert "leak" not in reply  # nothing about the WO itself
    assert wo(stack, "WO-204") == before
    assert notes(stack, "WO-204") == []
    assert holds(stack, OLIVE) == []
    assert sent_by(stack, done, MARIA.phone) == []
    assert sent_by(stack, done, VIC.phone) == []


def test_a_tenants_new_work_order_carries_their_property(stack: LocalStack) -> None:
    sms(stack, "hi, the toilet upstairs keeps clogging", MARIA.phone)
    flush(stack)
    created = [w for w in store_items(stack) if w.tenant_id == MARIA.party_id and w.is_open]
    assert [w.property_id for w in created] == [ELM]


def store_items(stack: LocalStack) -> list[WorkOrder]:
    items = stack.ddb.scan(TableName=stack.tables["work_orders"], ConsistentRead=True)["Items"]
    return [wo(stack, item["wo_id"]["S"]) for item in items]


def test_a_pms_emergency_pages_and_puts_no_job_of_their_property_on_hold(
    stack: LocalStack,
) -> None:
    """A PM's contexts are their properties' WOs, not ones they are a party to: an emergency
    they report keeps the tenants' WOs as they were (nothing marked interrupted, so no tenant's
    next answer is held for re-confirmation)."""
    put_wo(stack, "WO-204", "leak under the kitchen sink", ELM)
    sms(stack, "strong gas smell in the basement at elm, sending people out", PAT.phone)
    stack.advance(stack.idle + 1)
    stack.wait_for_executions()
    # Paged by the on-call order, which passes over the one reporting: Elm has no shift and Pat
    # is its only PM, so the account's fallback number is paged, never Pat about his own text.
    assert not any("[EMERGENCY]" in page for page in to_phone(stack, PAT.phone))
    assert any(
        "gas" in page.lower() for page in to_phone(stack, ON_CALL_PM) if "[EMERGENCY]" in page
    )
    state = DynamoStateStore(stack.ddb, stack.tables["state"]).get("WO-204")
    assert state is None or state.interrupted_at is None


def test_a_pms_shorthand_cancel_and_move_are_held_like_the_plain_words(
    stack: LocalStack,
) -> None:
    """Review of #20: "nix 521, dup ticket" got the PM help text, "bump 522 to next week" the
    status of 522 (a move read as a question), and the command was lost both times."""
    put_wo(stack, "WO-521", "hall carpet seam lifting", ELM)
    put_wo(stack, "WO-522", "tub caulk moldy", ELM)

    sms(stack, "nix 521, dup ticket", PAT.phone)
    flush(stack)
    assert "Reply YES to cancel WO-521" in to_phone(stack, PAT.phone)[-1]
    sms(stack, "YES", PAT.phone)
    flush(stack)
    assert wo(stack, "WO-521").status is WorkOrderStatus.CANCELLED

    sms(stack, "bump 522 to next week", PAT.phone)
    flush(stack)
    held = to_phone(stack, PAT.phone)[-1]
    assert "Reply YES to ask to move the visit for WO-522" in held, held
    assert wo(stack, "WO-522").status is WorkOrderStatus.OPEN
