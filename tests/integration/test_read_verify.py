"""Read-verify on the embedded stack: every claim an honest run makes is read back as Evidence
(no Shame), and each injected fake is caught.

The claims are the domain events the rule delivered (the tap's copy); the verdicts are the
ledger rows the watcher wrote after reading the surfaces itself (the loopback Twilio by SID, the
WO store and timelines, the pending store, the decision log).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from embedded import flush, open_wo, sms

from maestro.domain.events import DomainEvent
from maestro.domain.ledger import LedgerRow
from maestro.domain.models import WorkOrder
from maestro.lanes.context import LaneContext
from maestro.ports.messaging import SentMessage
from maestro_dev.local.stack import SWEEP_WINDOW_SECONDS, LocalStack
from maestro_dev.local.stack_demo import STORY
from maestro_dev.local.twilio_loopback import Fault
from maestro_dev.local.world import MARIA, VIC, seed

pytestmark = pytest.mark.integration

STRANGER = "+14155550666"


def claims(stack: LocalStack) -> list[DomainEvent]:
    """Every domain event the rule delivered since the last call (the tap's copy)."""
    found = []
    for envelope in stack.domain_events():
        detail = envelope["detail"]
        found.append(
            DomainEvent.model_validate(json.loads(detail) if isinstance(detail, str) else detail)
        )
    return found


def verdicts(stack: LocalStack) -> tuple[list[DomainEvent], dict[str, LedgerRow]]:
    """Let Twilio and the watcher catch up, then the sweeper past its window; the claims, and
    every ledger row (the watcher's, one per claim, and the sweeper's)."""
    stack.advance(10)
    events = claims(stack)
    stack.advance(SWEEP_WINDOW_SECONDS + 60)
    stack.sweep()
    rows = {row.row_id: row for row in stack.ledger_rows()}
    return events, rows


def assert_honest(stack: LocalStack) -> tuple[list[DomainEvent], dict[str, LedgerRow]]:
    events, rows = verdicts(stack)
    assert events, "the scenario made claims"
    for event in events:
        row = rows.get(event.event_id)
        assert row is not None, f"no verdict for {event.type} {event.event_id}"
        assert row.verdict == "evidence", (event.type, row.kind, row.detail)
    shame = [r for r in rows.values() if r.verdict == "shame"]
    assert shame == [], [(r.kind, r.event_type, r.detail) for r in shame]
    assert len(rows) == len({e.event_id for e in events})  # one row per claim, nothing twice
    return events, rows


# -- honest runs ---------------------------------------------------------------------------------


def leak_204(stack: LocalStack) -> None:
    for _title, sender, body in STORY:
        sms(stack, body, sender.phone)
        stack.advance(stack.idle + 1)


def held_cancel_then_yes(stack: LocalStack) -> None:
    open_wo(stack, "WO-204", "leak under the kitchen sink")
    open_wo(stack, "WO-211", "leak from the bathroom ceiling")
    sms(stack, "cancel all of them")
    flush(stack)
    sms(stack, "YES")
    flush(stack)


def a_question_and_its_answer(stack: LocalStack) -> None:
    open_wo(stack, "WO-204", "leak under the kitchen sink")
    open_wo(stack, "WO-211", "leak from the bathroom ceiling")
    sms(stack, "the leak is back")
    flush(stack)
    sms(stack, "1")
    flush(stack)


def a_note_for_an_open_wo_and_a_new_one(stack: LocalStack) -> None:
    open_wo(stack, "WO-204", "leak under the kitchen sink")
    sms(stack, "the kitchen leak is back, and now the hallway light is out")
    flush(stack)


def a_new_problem_and_availability(stack: LocalStack) -> None:
    sms(stack, "my fridge stopped working, I'm home tomorrow after 3")
    flush(stack)


def an_unknown_number(stack: LocalStack) -> None:
    sms(stack, "hello, is this the building? the heater in 5A is out", sender=STRANGER)
    flush(stack)


def a_text_twilio_keeps_refusing(stack: LocalStack) -> None:
    """Honest about a failure: the WO it made and the PM's page are claimed and read back;
    the text that never went is claimed by nobody."""
    stack.twilio.fault(Fault(to=MARIA.phone, status=503, times=99))
    sms(stack, "hi, water is leaking under my kitchen sink")
    flush(stack)


SCENARIOS: dict[str, Callable[[LocalStack], None]] = {
    "leak-204 (the demo)": leak_204,
    "held cancel, then YES": held_cancel_then_yes,
    "a question and its answer": a_question_and_its_answer,
    "a note for an open WO and a new WO": a_note_for_an_open_wo_and_a_new_one,
    "a new problem and availability": a_new_problem_and_availability,
    "an unknown number": an_unknown_number,
    "a text Twilio keeps refusing": a_text_twilio_keeps_refusing,
}


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack(twilio_timeout_seconds=0.5) as local:
        seed(local)
        yield local


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_an_honest_run_has_evidence_for_every_claim_and_no_shame(
    stack: LocalStack, scenario: str
) -> None:
    SCENARIOS[scenario](stack)
    events, rows = assert_honest(stack)
    for event in events:
        row = rows[event.event_id]
        if event.type in ("message.sent", "escalation.paged"):
            assert row.provenance == "twilio-read"
            message = stack.twilio.message(event.subject_id)
            assert message is not None  # it is Twilio's: the loopback has it
        elif event.type in ("wo.offered", "wo.approval_requested"):
            assert row.provenance == "twilio-read"  # the text, by SID, then the run
        elif event.type in ("wo.gathered", "wo.dispatch_failed"):
            assert row.provenance == "ddb-read"  # the dispatch run
        elif event.type.startswith("wo.") or event.type == "rating.recorded":
            assert row.provenance == "wo-read"
        else:
            assert row.provenance == "ddb-read"


def test_with_the_recording_messenger_the_evidence_says_nothing_was_sent() -> None:
    with LocalStack(messenger="recording") as stack:
        seed(stack)
        leak_204(stack)
        events, rows = assert_honest(stack)
        texts = [rows[e.event_id] for e in events if e.type == "message.sent"]
        assert texts
        for row in texts:
            assert row.provenance == "ddb-read"  # read from the messages table, not Twilio
            assert "not sent" in row.detail
            assert row.subject_id.startswith("SMrec")
        assert stack.twilio.messages() == []  # and indeed nothing reached Twilio


# -- injected fakes ------------------------------------------------------------------------------


class LyingMessenger:
    """Claims a send it never made: a made-up SID, and Twilio is never called."""

    def __init__(self, real: Any, lie_to: str) -> None:
        self.real = real
        self.lie_to = lie_to
        self.lies: list[str] = []

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        if to != self.lie_to:
            return self.real.send(to, body, idempotency_key=idempotency_key)  # type: ignore[no-any-return]
        sid = "SM" + f"{len(self.lies):032x}"
        self.lies.append(sid)
        return SentMessage(sid=sid, to=to, body=body, status="queued", via="twilio")


class SilentlyDroppingStore:
    """A WO store that acknowledges updates and keeps none of them."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        return None


def test_a_send_claimed_but_never_made_is_an_unverified_claim(stack: LocalStack) -> None:
    liar = LyingMessenger(stack.pipeline.deps.messenger, lie_to=VIC.phone)
    stack.pipeline.deps.messenger = liar
    open_wo(stack, "WO-204", "leak under the kitchen sink")
    sms(stack, "the kitchen leak is back, and it's worse at night")
    flush(stack)
    events, rows = verdicts(stack)
    assert liar.lies, "the fake claimed a text to the vendor"
    shame = {r.subject_id: r for r in rows.values() if r.verdict == "shame"}
    for sid in liar.lies:
        assert (shame[sid].kind, shame[sid].provenance) == ("unverified_claim", "twilio-read")
    # Detection without false shame: everything else in the run is evidence.
    assert set(shame) == set(liar.lies)
    assert all(rows[e.event_id].verdict == "evidence" for e in events if e.subject_id not in shame)


def test_a_wo_whose_stored_value_differs_from_the_claim_is_a_mismatch(stack: LocalStack) -> None:
    sms(stack, "my fridge stopped working")
    flush(stack)
    verdicts(stack)
    stack.pipeline.deps.work_orders = SilentlyDroppingStore(stack.pipeline.deps.work_orders)  # type: ignore[assignment]
    sms(stack, "I'm home tomorrow after 3 for the fridge")
    flush(stack)
    events, rows = verdicts(stack)
    updates = [e for e in events if e.type == "wo.updated"]
    assert updates, "the schedule claims a WO update"
    for event in updates:
        row = rows[event.event_id]
        assert (row.verdict, row.kind, row.provenance) == ("shame", "mismatch", "wo-read")
        assert "version" in row.detail
    shame = [r for r in rows.values() if r.verdict == "shame"]
    assert {r.row_id for r in shame} == {e.event_id for e in updates}


class DroppingBus:
    """Publishes every event but those of one type: an effect whose claim never reaches the
    bus."""

    def __init__(self, real: Any, drop: str) -> None:
        self.real = real
        self.drop = drop

    def publish(self, events: Any) -> None:
        self.real.publish([e for e in events if e.type != self.drop])


@pytest.mark.parametrize("where", ["dropped at publish", "skipped by the lane"])
def test_an_effect_that_skips_its_event_is_a_missing_event(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    if where == "dropped at publish":
        stack.pipeline.deps.bus = DroppingBus(stack.pipeline.deps.bus, "wo.updated")
    else:
        real = LaneContext.event

        def forgetful(self: LaneContext, type_: Any, *args: Any, **kwargs: Any) -> DomainEvent:
            event = real(self, type_, *args, **kwargs)
            if type_ == "wo.updated":
                self.events.remove(event)  # the lane "forgets" to claim its timeline write
            return event

        monkeypatch.setattr(LaneContext, "event", forgetful)
    open_wo(stack, "WO-204", "leak under the kitchen sink")
    sms(stack, "the kitchen leak is back, and it's worse at night")
    flush(stack)
    events, rows = verdicts(stack)
    assert "wo.updated" not in {e.type for e in events}
    shame = [r for r in rows.values() if r.verdict == "shame"]
    assert [(r.kind, r.event_type, r.subject_id, r.wo_id) for r in shame] == [
        ("missing_event", "wo.updated", "WO-204", "WO-204")
    ]
    # Every claim that did come is evidence: detection without false shame.
    assert all(rows[e.event_id].verdict == "evidence" for e in events)
