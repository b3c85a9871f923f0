"""A command maestro had to ask about keeps its deferred call (issue #20, item 1), on the
embedded stack, driven by signed SMS with the offline brain.

Naive (main before this change): with three requests open, a cancel of "a couple of them" was
asked as "which one do you mean?" with nothing kept of the cancel; the answer naming two of them
was replayed as a note, so the vendor got the tenant's command words as "Update on WO-…", the
tenant heard that it was passed on, and nothing was cancelled or held.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from embedded import decisions, flush, open_wo, sent_by, sms, to_phone

from maestro.adapters.dynamodb_memory import DynamoPendingStore, DynamoWorkOrderStore
from maestro.domain.models import WorkOrder, WorkOrderStatus
from maestro.domain.records import PendingClarification, PendingConfirmation
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, VIC, seed

pytestmark = pytest.mark.integration

FRIDGE = ("WO-301", "fridge not cooling in the kitchen")
FAN = ("WO-302", "bathroom fan rattles loudly")
LOCK = ("WO-303", "front door lock sticks")


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        for wo_id, summary in (FRIDGE, FAN, LOCK):
            open_wo(local, wo_id, summary)
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
