"""A command maestro had to ask about keeps its deferred call (issue #20, item 1), on the
embedded stack, driven by signed SMS with the offline brain.

Naive (main before this change): with three requests open, a cancel of "a couple of them" was
asked as "which one do you mean?" with nothing kept of the cancel; the answer naming two of them
was replayed as a note, so the vendor got the tenant's command words as "Update on WO-…", the
tenant heard that it was passed on, and nothing was cancelled or held.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from embedded import decisions, flush, open_wo, sent_by, sms, to_phone

from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.directory import Person, PersonRole
from maestro.domain.models import WorkOrder, WorkOrderStatus
from maestro.domain.records import PendingClarification, PendingConfirmation
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, VIC, housed, seed, seed_directory

pytestmark = pytest.mark.integration

FRIDGE = ("WO-301", "fridge not cooling in the kitchen")
FAN = ("WO-302", "bathroom fan rattles loudly")
LOCK = ("WO-303", "front door lock sticks")


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def wo(stack: LocalStack, wo_id: str) -> WorkOrder:
    found = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).get(wo_id)
    assert found is not None
    return found


def pending_item(stack: LocalStack, execution: dict[str, Any], lane: str) -> Any:
    (asked,) = [
        d for d in decisions(stack, execution) if d.disposition == "queued" and d.lane == lane
    ]
    kind = "clarification" if lane == "clarify" else "confirmation"
    found = DynamoPendingStore(stack.ddb, stack.tables["pending"]).get(
        kind,  # type: ignore[arg-type]
        asked.idempotency_key or "",
    )
    assert found is not None
    return found


def said_to_tenant(stack: LocalStack, execution: dict[str, Any]) -> str:
    (said,) = sent_by(stack, execution, MARIA.phone)
    return said


def test_a_clarified_cancel_of_two_is_held_for_exactly_those_two(stack: LocalStack) -> None:
    for wo_id, summary in (FRIDGE, FAN, LOCK):
        open_wo(stack, wo_id, summary)
    command = "sorted a couple of these out myself, could you cancel two of my requests?"
    sms(stack, command)
    asked = flush(stack)
    question = pending_item(stack, asked, "clarify")
    assert isinstance(question, PendingClarification)
    assert question.call is not None
    assert question.call.operation == "cancel"
    assert set(question.candidate_ids) == {FRIDGE[0], FAN[0], LOCK[0]}
    text = said_to_tenant(stack, asked)
    assert all(wo_id in text for wo_id in question.candidate_ids), text
    assert "cancel" in text.lower()
    assert "cancelled" not in text.lower()  # nothing is done yet, and it says nothing is

    # An answer that picks none is asked again, naming the three, the cancel still kept.
    sms(stack, "the broken ones")
    again = flush(stack)
    asked_again = pending_item(stack, again, "clarify")
    assert asked_again.call == question.call
    text = said_to_tenant(stack, again)
    assert all(wo_id in text for wo_id in question.candidate_ids), text

    sms(stack, "the fridge one and the door lock")
    held = flush(stack)
    hold = pending_item(stack, held, "manage_existing")
    assert isinstance(hold, PendingConfirmation)
    assert hold.call is not None
    assert (hold.call.operation, set(hold.call.wo_ids)) == ("cancel", {FRIDGE[0], LOCK[0]})
    proposal = said_to_tenant(stack, held)
    assert "Reply YES to cancel both" in proposal
    assert FRIDGE[0] in proposal
    assert LOCK[0] in proposal
    assert FAN[0] not in proposal  # it asks to confirm exactly those two
    assert {wo(stack, i).status for i in (FRIDGE[0], FAN[0], LOCK[0])} == {WorkOrderStatus.OPEN}

    sms(stack, "YES")
    released = flush(stack)
    assert wo(stack, FRIDGE[0]).status is WorkOrderStatus.CANCELLED
    assert wo(stack, LOCK[0]).status is WorkOrderStatus.CANCELLED
    assert wo(stack, FAN[0]).status is WorkOrderStatus.OPEN  # untouched
    done = said_to_tenant(stack, released)
    assert done.startswith("Done: I've cancelled")
    assert FRIDGE[0] in done
    assert LOCK[0] in done
    assert FAN[0] not in done

    # The vendor heard of the two cancellations, never the tenant's words as a note.
    heard = to_phone(stack, VIC.phone)
    assert not [b for b in heard if b.startswith("Update on")], heard
    assert not [b for b in heard if "couple" in b or "fridge one and" in b], heard
    assert sorted(b for b in heard if "was cancelled" in b) == sorted(
        b for b in heard if FRIDGE[0] in b or LOCK[0] in b
    )
    everything = to_phone(stack, MARIA.phone)
    assert not [b for b in everything if "passed it on" in b or "added that" in b], everything


def test_a_spanish_cancel_asked_about_is_answered_all_but_one_and_held_in_spanish(
    stack: LocalStack,
) -> None:
    """Naive: "cancele" was no command to the offline brain, so the words went to the vendor
    as a note on whichever work order they matched, or to the assistant; "todas menos …" picked
    nothing. Here a tenant the directory says reads Spanish is asked in Spanish, answers "all
    but the fan", and confirms exactly the other two."""
    phone = "+14155557781"
    seed_directory(
        stack,
        housed(
            Person(
                person_id="tenant-7781",
                role=PersonRole.TENANT,
                phones=(phone,),
                name="Lucía",
                unit_id="4C",
                language="es",
            )
        ),
    )
    tenant = stack.parties.by_phone(phone)
    assert tenant is not None
    now = stack.clock.now()
    works = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    jobs = {
        "WO-401": "el refrigerador no enfría",
        "WO-402": "el ventilador del baño hace ruido",
        "WO-403": "la cerradura de la puerta se atora",
    }
    for wo_id, summary in jobs.items():
        works.create(
            WorkOrder(
                wo_id=wo_id,
                tenant_id=tenant.party_id,
                vendor_id=VIC.party_id,
                unit="4C",
                summary=summary,
                category="general",
                created_at=now - timedelta(hours=4),
                updated_at=now - timedelta(hours=2),
            )
        )

    sms(stack, "por favor cancele dos de mis solicitudes, ya lo resolví", sender=phone)
    asked = flush(stack)
    question = pending_item(stack, asked, "clarify")
    assert question.call is not None
    assert question.call.operation == "cancel"
    (said,) = sent_by(stack, asked, phone)
    assert said.startswith("¿Cuáles de estas quiere que cancele? 1) WO-401")
    assert all(wo_id in said for wo_id in jobs), said

    sms(stack, "todas menos la del ventilador", sender=phone)
    held = flush(stack)
    hold = pending_item(stack, held, "manage_existing")
    assert hold.call is not None
    assert (hold.call.operation, set(hold.call.wo_ids)) == ("cancel", {"WO-401", "WO-403"})
    (proposal,) = sent_by(stack, held, phone)
    assert proposal.startswith("Responda SÍ o YES para cancelar ambas: 1) WO-401")
    assert "WO-402" not in proposal

    sms(stack, "sí", sender=phone)
    released = flush(stack)
    statuses = {wo_id: works.get(wo_id) for wo_id in jobs}
    assert {i: w.status for i, w in statuses.items() if w is not None} == {
        "WO-401": WorkOrderStatus.CANCELLED,
        "WO-402": WorkOrderStatus.OPEN,
        "WO-403": WorkOrderStatus.CANCELLED,
    }
    (done,) = sent_by(stack, released, phone)
    assert done.startswith("Listo: he cancelado WO-401")
    assert "WO-402" not in done
    heard = to_phone(stack, VIC.phone)
    assert sorted(heard) == sorted(
        b for b in heard if b.endswith("was cancelled by the tenant.")
    ), heard  # two notices, never the tenant's words
    assert len(heard) == 2


def test_an_answer_leaving_one_out_holds_the_cancel_of_the_others(stack: LocalStack) -> None:
    """Review of #20: "not the fan one" picked the fan (its "not" was read as a stopword), and
    the cancel was held for exactly the request the tenant meant to keep."""
    for wo_id, summary in (FRIDGE, FAN, LOCK):
        open_wo(stack, wo_id, summary)
    sms(stack, "I'd like to cancel a few of these")
    flush(stack)
    sms(stack, "not the fan one")
    answered = flush(stack)
    hold = pending_item(stack, answered, "manage_existing")
    assert isinstance(hold, PendingConfirmation)
    assert set(hold.wo_ids) == {FRIDGE[0], LOCK[0]}
    text = said_to_tenant(stack, answered)
    assert FAN[0] not in text
    assert FRIDGE[0] in text
    assert LOCK[0] in text
    assert {wo(stack, i).status for i in (FRIDGE[0], FAN[0], LOCK[0])} == {WorkOrderStatus.OPEN}


def test_a_move_of_a_named_visit_is_held_never_passed_on_as_a_note(stack: LocalStack) -> None:
    """Review of #20: "move the sink appointment to friday" named its job, so it was relayed
    to the vendor as a note ("Update on WO-…: …") and the tenant told it was passed on; the
    move itself was neither held nor asked about."""
    for wo_id, summary in (FRIDGE, FAN, LOCK):
        open_wo(stack, wo_id, summary)
    sms(stack, "could we change the time of the fan visit?")
    asked = flush(stack)
    hold = pending_item(stack, asked, "manage_existing")
    assert isinstance(hold, PendingConfirmation)
    assert hold.wo_ids == (FAN[0],)
    assert hold.call is not None
    assert hold.call.operation == "reschedule"
    assert "Reply YES to ask for a new time for the visit for WO-302" in said_to_tenant(
        stack, asked
    )
    assert to_phone(stack, VIC.phone) == []  # nothing relayed
