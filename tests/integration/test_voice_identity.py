"""Voice identity (issue #17, deliverable 5) on the embedded stack: a call's caller ID is not who
is speaking. Anyone can make a call show Maria's number; only Twilio's STIR/SHAKEN verdict
``TN-Validation-Passed-A`` says the number's owner placed it.

Signed transcripts and texts go through the real webhooks (SIDs in Twilio's format), each
package runs through the real ASL, and the WO store, the pending store, the decision log and the
texts at the loopback Twilio are read back. Each test names the naive behaviour it fails on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from embedded import decisions, flush, new_executions, open_wo, outcomes, pages, to_phone

from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.brain.model_port import ModelAnswer, ModelRequest, ToolUse
from maestro.domain.models import Channel, WorkOrder, WorkOrderStatus
from maestro.domain.records import Disposition, MaestroDecision, PendingConfirmation
from maestro_dev.eval_harness.model import new_messages
from maestro_dev.local.events import signed_sms_event, signed_transcript_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, VIC, seed
from maestro_dev.scripted import Scripted, ScriptedModel

pytestmark = pytest.mark.integration

KITCHEN = "leak under the kitchen sink"
CEILING = "leak from the bathroom ceiling"
ASKED_BY_CALL = "We got a call from this number asking to"
NOT_YOU = "if it wasn't you, ignore this text"


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def call(stack: LocalStack, label: str, text: str, verstat: str | None = None) -> dict[str, Any]:
    """One signed call transcript from Maria's number; the call ends: its package runs now."""
    sid = twilio_sid("TR", label)
    event = signed_transcript_event(stack.twilio_token, sid, MARIA.phone, text, verstat=verstat)
    assert stack.http(event)["statusCode"] == 200
    (execution,) = new_executions(stack, 1)
    return execution


def text(stack: LocalStack, label: str, body: str) -> dict[str, Any]:
    """One signed text from Maria's number; the idle window lets its package go."""
    event = signed_sms_event(stack.twilio_token, twilio_sid("SM", label), MARIA.phone, body)
    assert stack.http(event)["statusCode"] == 200
    return flush(stack)


def wo(stack: LocalStack, wo_id: str) -> WorkOrder:
    found = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).get(wo_id)
    assert found is not None
    return found


def new_work_orders(stack: LocalStack) -> list[WorkOrder]:
    items = stack.ddb.scan(TableName=stack.tables["work_orders"], ConsistentRead=True)["Items"]
    found = [wo(stack, item["wo_id"]["S"]) for item in items]
    return [w for w in found if w.wo_id not in {"WO-198", "WO-204", "WO-211"}]


def queued(stack: LocalStack, execution: dict[str, Any]) -> list[MaestroDecision]:
    return [d for d in decisions(stack, execution) if d.disposition is Disposition.QUEUED]


def hold_of(stack: LocalStack, execution: dict[str, Any]) -> PendingConfirmation:
    """The hold a package's queued manage_existing item wrote, read from the pending store."""
    (held,) = [d for d in queued(stack, execution) if d.lane == "manage_existing" and d.asks]
    found = DynamoPendingStore(stack.ddb, stack.tables["pending"]).get(
        "confirmation", held.idempotency_key or ""
    )
    assert isinstance(found, PendingConfirmation)
    return found


def status_of(stack: LocalStack, hold: PendingConfirmation) -> str:
    found = DynamoPendingStore(stack.ddb, stack.tables["pending"]).get(
        "confirmation", hold.confirmation_id
    )
    assert found is not None
    return found.status


def last_text(stack: LocalStack) -> str:
    return to_phone(stack, MARIA.phone)[-1]


# -- the repro ------------------------------------------------------------------------------------


def test_the_repro_a_call_then_a_called_yes_cancels_nothing(stack: LocalStack) -> None:
    """Naive: a signed transcript "cancel WO-211" from Maria's number, then a transcript "yes"
    from it, cancelled WO-211: caller ID was taken for Maria."""
    open_wo(stack, "WO-211", CEILING)
    call(stack, "repro-1", "cancel WO-211")
    call(stack, "repro-2", "yes")
    assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN
    assert not any("I've cancelled" in body for body in to_phone(stack, MARIA.phone))


def test_the_call_was_maria_she_confirms_by_text_and_exactly_the_held_call_runs(
    stack: LocalStack,
) -> None:
    """The other half of the repro: the number's owner reads the text and says YES there."""
    open_wo(stack, "WO-204", KITCHEN)
    open_wo(stack, "WO-211", CEILING)
    asked = call(
        stack, "owner-1", "hi it's maria, I want to cancel the bathroom ceiling job please"
    )
    said = last_text(stack)  # the text says what the call asked, and who may ignore it
    assert said.startswith(f"{ASKED_BY_CALL} cancel WO-211")
    assert NOT_YOU in said
    assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN
    hold = hold_of(stack, asked)
    assert hold.call is not None
    assert (hold.call.operation, hold.call.wo_ids) == ("cancel", ("WO-211",))
    assert (hold.asked_on, hold.by_unverified_call) == (Channel.SMS, True)

    released = text(stack, "owner-2", "yes")
    (release,) = queued(stack, released)
    assert (release.lane, release.bound_context_id) == ("manage_existing", hold.confirmation_id)
    assert (release.resume_revalidated, release.revalidation) == (True, "valid")
    assert wo(stack, "WO-211").status is WorkOrderStatus.CANCELLED
    assert wo(stack, "WO-204").status is WorkOrderStatus.OPEN  # never held: untouched
    assert status_of(stack, hold) == "released"


# -- a YES counts on the channel the question was asked on ---------------------------------------


def test_a_called_yes_to_a_texted_question_releases_nothing_a_texted_yes_releases_it(
    stack: LocalStack,
) -> None:
    """Naive: Maria texts a cancel and is asked "Reply YES"; a call from her number (anyone's,
    really) says "yeah go ahead do it", and the cancel runs on the caller ID."""
    open_wo(stack, "WO-204", KITCHEN)
    open_wo(stack, "WO-211", CEILING)
    first = hold_of(stack, text(stack, "texted-1", "I'd like to cancel the kitchen sink one"))
    assert first.call is not None
    assert first.call.wo_ids == ("WO-204",)

    again = call(stack, "texted-2", "yeah go ahead do it")
    assert wo(stack, "WO-204").status is WorkOrderStatus.OPEN
    assert not first.by_unverified_call  # it was texted: asked with the usual words
    (decision,) = queued(stack, again)
    assert decision.stage == "resolve"
    assert decision.bound_context_id == first.confirmation_id
    assert "not on the sms channel" in decision.reason
    assert all(o.note.startswith("held") for o in outcomes(stack, again))
    second = hold_of(stack, again)  # the same call, asked again by text
    assert second.call == first.call
    assert status_of(stack, first) == "superseded"
    assert last_text(stack).startswith("A call from this number said yes, but a call can't")

    texted = text(stack, "texted-3", "YES")
    (release,) = queued(stack, texted)
    assert release.bound_context_id == second.confirmation_id
    assert wo(stack, "WO-204").status is WorkOrderStatus.CANCELLED
    assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN
    assert status_of(stack, second) == "released"


def test_an_attestation_a_call_is_the_number_speaking(stack: LocalStack) -> None:
    """Naive the other way: every call distrusted, even one the carrier vouches for. With
    ``StirVerstat=TN-Validation-Passed-A`` the call is Maria's: asked as a text would be, and
    her called "yep, do it" releases it."""
    open_wo(stack, "WO-211", CEILING)
    attested = "TN-Validation-Passed-A"
    hold = hold_of(stack, call(stack, "a-1", "cancel the bathroom ceiling job", attested))
    stored = stack.buffer.get_message(twilio_sid("TR", "a-1"))
    assert stored is not None
    assert (stored.channel, stored.attestation) == (Channel.VOICE, "A")
    assert not hold.by_unverified_call
    assert last_text(stack).startswith("Reply YES to cancel WO-211")

    call(stack, "a-2", "yep, do it", attested)
    assert wo(stack, "WO-211").status is WorkOrderStatus.CANCELLED
    assert status_of(stack, hold) == "released"


@pytest.mark.parametrize("verstat", ["TN-Validation-Passed-B", "TN-Validation-Failed-A"])
def test_a_call_vouched_for_below_a_releases_nothing(stack: LocalStack, verstat: str) -> None:
    """B (the carrier knows the customer, not that the number is theirs), C, and any failed
    verification are not the number's owner speaking."""
    open_wo(stack, "WO-211", CEILING)
    hold = hold_of(stack, text(stack, f"below-{verstat}-1", "cancel the bathroom ceiling one"))
    call(stack, f"below-{verstat}-2", "yes, confirmed", verstat)
    assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN
    stored = stack.buffer.get_message(twilio_sid("TR", f"below-{verstat}-2"))
    assert stored is not None
    assert stored.attestation == ("B" if verstat.endswith("Passed-B") else None)
    assert status_of(stack, hold) == "superseded"  # asked again, by text


# -- what a call asks to change is held for a YES by text ---------------------------------------


def test_a_call_that_opens_a_request_is_held_then_opened_by_a_texted_yes(
    stack: LocalStack,
) -> None:
    """Naive: a call from Maria's number opened a work order (and passed on a visit time) on
    the caller ID alone: a prank call dispatches a vendor to her flat."""
    asked = call(
        stack, "create-1", "hi the washing machine won't spin anymore, I'm home thursday morning"
    )
    assert new_work_orders(stack) == []
    held = [d for d in decisions(stack, asked) if d.disposition is Disposition.HELD]
    assert [d.lane for d in held] == ["create_wo", "schedule_visit"]
    hold = hold_of(stack, asked)
    assert [a.lane for a in hold.held] == ["create_wo", "schedule_visit"]
    assert hold.by_unverified_call
    said = last_text(stack)
    assert said.startswith(f"{ASKED_BY_CALL} open a new request: the washing machine")
    assert "thursday morning" in said
    assert NOT_YOU in said

    released = text(stack, "create-2", "yes please")
    assert [d.lane for d in queued(stack, released)] == ["create_wo", "schedule_visit"]
    (opened,) = new_work_orders(stack)
    assert "washing machine" in opened.summary
    assert opened.tenant_id == MARIA.party_id
    done = outcomes(stack, released)
    assert [o.status for o in done] == ["done", "done"]
    assert done[1].target_wo_id == opened.wo_id  # the visit is for the work order just opened
    assert status_of(stack, hold) == "released"
    assert any(f"I've opened {opened.wo_id}" in body for body in to_phone(stack, MARIA.phone))


def test_a_calls_note_for_the_vendor_reaches_vic_only_after_a_texted_yes(
    stack: LocalStack,
) -> None:
    """Naive: a caller with Maria's ID put words in her mouth to Vic ("the leak is back")."""
    open_wo(stack, "WO-204", KITCHEN)
    open_wo(stack, "WO-211", CEILING)
    asked = call(stack, "note-1", "the leak is back")  # two leaks: which one? (asked by text)
    assert [d.lane for d in queued(stack, asked)] == ["clarify"]
    picked = text(stack, "note-2", "2")
    assert to_phone(stack, VIC.phone) == []
    hold = hold_of(stack, picked)  # the pick chose WO-211; the call's words wait for a YES
    assert [(a.lane, a.target_wo_id) for a in hold.held] == [("relay_to_open_wo", "WO-211")]
    assert '"the leak is back"' in last_text(stack)

    text(stack, "note-3", "yes")
    assert to_phone(stack, VIC.phone) == [
        "Update on WO-211 (leak from the bathroom ceiling, unit 3B): the leak is back"
    ]


def test_a_calls_rating_is_held(stack: LocalStack) -> None:
    """Naive: a call from Maria's number rated Vic's work on WO-198 in her name."""
    asked = call(stack, "rate-1", "I'd give Vic a 4 out of 5 for that job")
    assert wo(stack, "WO-198").rating is None
    assert wo(stack, "WO-198").rating_requested
    hold = hold_of(stack, asked)
    assert [(a.lane, a.target_wo_id) for a in hold.held] == [("record_rating", "WO-198")]
    text(stack, "rate-2", "yes")
    assert wo(stack, "WO-198").rating == 4


def test_a_create_and_a_cancel_in_one_call_are_one_hold_and_one_yes(stack: LocalStack) -> None:
    """Two holds would supersede each other, leaving a text whose YES does only half of it."""
    open_wo(stack, "WO-211", CEILING)
    asked = call(
        stack,
        "both-1",
        "the dishwasher won't drain anymore, and also cancel the bathroom ceiling one",
    )
    assert new_work_orders(stack) == []
    hold = hold_of(stack, asked)
    assert hold.operation == "create_wo+cancel"
    assert hold.wo_ids == ("WO-211",)
    text(stack, "both-2", "yes")
    assert wo(stack, "WO-211").status is WorkOrderStatus.CANCELLED
    assert [w.summary for w in new_work_orders(stack)] == ["the dishwasher won't drain anymore"]


def test_a_held_call_whose_work_order_changed_is_not_released(stack: LocalStack) -> None:
    """Re-validated on YES, as every hold: Vic finished WO-204 meanwhile."""
    open_wo(stack, "WO-204", KITCHEN)
    asked = call(stack, "stale-1", "the kitchen sink is dripping faster now")
    assert to_phone(stack, VIC.phone) == []
    hold = hold_of(stack, asked)
    assert [a.lane for a in hold.held] == ["relay_to_open_wo"]
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    current = wo(stack, "WO-204")
    working = current.transition(WorkOrderStatus.IN_PROGRESS, stack.clock.now())
    store.update(working, current.version)
    store.update(working.transition(WorkOrderStatus.COMPLETED, stack.clock.now()), working.version)

    text(stack, "stale-2", "yes")
    assert to_phone(stack, VIC.phone) == []
    assert "WO-204 is completed now" in last_text(stack)
    assert status_of(stack, hold) == "discarded"


def test_the_same_called_yes_again_and_again_brings_the_pm_in_and_releases_nothing(
    stack: LocalStack,
) -> None:
    open_wo(stack, "WO-211", CEILING)
    call(stack, "again-0", "cancel WO-211")
    for n in range(1, 4):
        call(stack, f"again-{n}", "yes")
    assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN
    assert [p for p in pages(stack) if "circles" in p]


# -- what a call may still do at once -------------------------------------------------------------


def test_an_emergency_call_escalates_at_once(stack: LocalStack) -> None:
    """Safety first: paging the PM and the safety advice are not work-order mutations."""
    escalated = call(stack, "fire-1", "there is smoke coming out of the outlet by my bed")
    assert decisions(stack, escalated)[0].lane == "escalate"
    assert any(p.startswith("[EMERGENCY]") for p in pages(stack))
    assert any("911" in body for body in to_phone(stack, MARIA.phone))
    assert DynamoPendingStore(stack.ddb, stack.tables["pending"]).open_items(MARIA.party_id) == (
        [],
        [],
    )


def test_a_call_asking_what_is_open_is_answered_by_text(stack: LocalStack) -> None:
    open_wo(stack, "WO-204", KITCHEN)
    call(stack, "list-1", "what do I have open right now")
    assert last_text(stack).startswith("Your open requests: ")
    assert "WO-204" in last_text(stack)


# -- with a model: the manage agent resolves the call's words, the hold is the same -------------


def _call_off_the_plumber(request: ModelRequest) -> Scripted | None:
    """A model that reads "call off the plumber for two-oh-four" as a cancel of WO-204 (the
    offline rules do not: it is the model's reading), and "the blind" as a new request."""
    words = new_messages(request)  # the package's own words
    if request.purpose in ("probe", "precheck"):
        return {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    if request.purpose == "reasoning" and "call off the plumber" in words:
        cancel = {"operation": "cancel", "wo_ids": ["WO-204"], "request": "call off the plumber"}
        return {"actions": [{"lane": "manage_existing", "confidence": 0.95, "params": cancel}]}
    if request.purpose == "reasoning" and "blind" in words:
        create = {"summary": "bedroom blind came off its bracket", "category": "general"}
        return {"actions": [{"lane": "create_wo", "confidence": 0.95, "params": create}]}
    if request.purpose == "reasoning":
        return {"actions": [{"lane": "continue_with_assistant", "confidence": 0.9}]}
    if request.purpose == "manage":
        use = ToolUse(id="toolu_1", name="cancel_work_orders", input={"wo_ids": ["WO-204"]})
        return ModelAnswer(model="scripted", tool_uses=(use,), input_tokens=50, output_tokens=9)
    return None  # decide(): nothing scripted, its default


def test_with_a_model_a_called_cancel_is_held_and_only_a_text_releases_it() -> None:
    model = ScriptedModel(responder=_call_off_the_plumber)
    with LocalStack(model=model) as stack:
        seed(stack)
        open_wo(stack, "WO-204", KITCHEN)
        open_wo(stack, "WO-211", CEILING)
        asked = call(stack, "model-1", "please call off the plumber for two-oh-four")
        assert model.calls_for("manage")  # the agent resolved the words, as for a text
        assert last_text(stack).startswith(f"{ASKED_BY_CALL} cancel WO-204")
        hold = hold_of(stack, asked)
        assert (hold.wo_ids, hold.by_unverified_call) == (("WO-204",), True)

        call(stack, "model-2", "yeah go ahead do it")
        assert wo(stack, "WO-204").status is WorkOrderStatus.OPEN
        text(stack, "model-3", "yes")
        assert wo(stack, "WO-204").status is WorkOrderStatus.CANCELLED
        assert wo(stack, "WO-211").status is WorkOrderStatus.OPEN


def test_with_a_model_a_calls_new_request_is_held_until_a_texted_yes() -> None:
    model = ScriptedModel(responder=_call_off_the_plumber)
    with LocalStack(model=model) as stack:
        seed(stack)
        asked = call(stack, "model-4", "the blind in the bedroom came off its bracket")
        assert new_work_orders(stack) == []
        hold = hold_of(stack, asked)
        assert [a.lane for a in hold.held] == ["create_wo"]
        text(stack, "model-5", "yes")
        (opened,) = new_work_orders(stack)
        assert opened.summary == "bedroom blind came off its bracket"
