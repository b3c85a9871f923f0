"""The assistant's composed reply through the lane (maestro.lanes.composed_reply), on in-memory
fakes and a scripted cheap model: what the composer is told, what is sent, what is recorded."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from builders import MARIA, T0, act, package, wo_context

from maestro.brain.compose import ReplyComposer
from maestro.brain.model_port import ModelError
from maestro.brain.stage_models import models_for
from maestro.domain.actions import Lane
from maestro.domain.models import Party, PartyRole, VisitWindow, WorkOrder, WorkOrderStatus
from maestro.domain.prompt_data import read_data_blocks
from maestro.domain.records import ActionOutcomeRecord
from maestro.lanes import execute
from maestro.lanes.composed_reply import composed_or_fixed
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.lanes.continue_with_assistant import fixed_reply
from maestro.settings import ModelSettings
from maestro_dev.fakes import (
    InMemoryDecisionLog,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)
from maestro_dev.scripted import ScriptedModel

SENDER = MARIA.model_copy(update={"unit": "5F", "name": "Marisol Vega"})
VENDOR = Party(
    party_id="vendor-dara", role=PartyRole.VENDOR, phone="+14155550142", name="Dara Quist"
)
NEIGHBOUR = Party(
    party_id="tenant-ike", role=PartyRole.TENANT, phone="+14155550143", name="Ike", unit="5G"
)
SHUTTER = WorkOrder(
    wo_id="WO-3E7",
    tenant_id=SENDER.party_id,
    vendor_id=VENDOR.party_id,
    unit="5F",
    summary="balcony shutter stuck halfway",
    created_at=T0 - timedelta(days=1),
    updated_at=T0 - timedelta(hours=3),
)


def fixed(*texts: str) -> list[str]:
    """What the lane sends for ``texts`` with no model: its fixed choice (in English)."""
    chosen = fixed_reply(package(*texts), "en")
    return [chosen] if chosen is not None else []


class AssistantRun:
    """One continue_with_assistant run, as the act step would build it, with a model."""

    def __init__(self, *answers: Any, sender: Party | None = SENDER) -> None:
        self.model = ScriptedModel({"compose": list(answers)})
        self.messenger = RecordingMessenger()
        self.decisions = InMemoryDecisionLog()
        self.work_orders = InMemoryWorkOrderStore([SHUTTER])
        self.sender = sender

    def earlier(self, lane: Lane, **outcome: Any) -> None:
        self.decisions.record_outcome(
            ActionOutcomeRecord(
                record_id=f"out-{lane}",
                package_id="pkg-conv-1-1",
                conversation_id="conv-1",
                index=0,
                decision_id="d0",
                lane=lane,
                status=outcome.pop("status", "done"),
                recorded_at=T0,
                **outcome,
            )
        )

    def run(self, *texts: str, composer: bool = True) -> LaneOutcome:
        return execute(act("continue_with_assistant"), self.context(*texts, composer=composer))

    def context(self, *texts: str, composer: bool = True) -> LaneContext:
        return LaneContext(
            package=package(*texts),
            sender=self.sender,
            open_contexts=(wo_context("WO-3E7", "balcony shutter stuck halfway"),),
            action_index=1,
            idempotency_key="pkg-conv-1-1#1",
            work_orders=self.work_orders,
            pending=InMemoryPendingStore(),
            parties=InMemoryPartyDirectory([SENDER, VENDOR, NEIGHBOUR]),
            messenger=self.messenger,
            on_call_pm_phone="",
            now=T0,
            timeline=InMemoryTimeline(),
            composer=ReplyComposer(self.model) if composer else None,
            decisions=self.decisions,
        )

    def sent(self) -> list[str]:
        return [m.body for m in self.messenger.sent]

    def told(self) -> dict[str, Any]:
        (call,) = self.model.calls_for("compose")
        (document,) = read_data_blocks(call.turns[0].text)
        assert isinstance(document, dict)
        return document


def test_a_clean_composed_reply_is_sent_as_composed() -> None:
    lane = AssistantRun({"text": "You're welcome, Marisol. Enjoy the sunshine!"})
    outcome = lane.run("cheers, that's all for today")

    assert lane.sent() == ["You're welcome, Marisol. Enjoy the sunshine!"]
    assert outcome.note == "assistant replied: composed reply, checked"
    assert lane.told() == {"texts": ["cheers, that's all for today"], "done": [], "language": "en"}
    (call,) = lane.model.calls
    assert (call.purpose, call.tier, call.force_tool) == ("compose", "cheap", "reply")


def test_offline_or_turned_off_sends_the_fixed_text_and_asks_nothing() -> None:
    lane = AssistantRun({"text": "unused"})
    outcome = lane.run("cheers", composer=False)

    assert lane.sent() == fixed("cheers")
    assert outcome.note == "assistant replied"
    assert lane.model.calls == []


def test_an_unknown_number_costs_no_model_call() -> None:
    lane = AssistantRun({"text": "unused"}, sender=None)
    lane.run("who is this")

    assert lane.sent() == fixed("who is this")
    assert lane.model.calls == []


def test_a_failed_or_malformed_answer_falls_back_to_the_fixed_text() -> None:
    for answer, kind in (
        (ModelError("overloaded"), "overloaded"),
        (ModelError("budget_exhausted"), "budget_exhausted"),
        ({"text": ""}, "invalid_answer"),
        ({"words": "hi"}, "invalid_answer"),
    ):
        lane = AssistantRun(answer)
        outcome = lane.run("ta very much")
        assert lane.sent() == fixed("ta very much"), answer
        assert outcome.note == f"assistant replied: no composed reply ({kind}): the fixed text went"


def test_what_earlier_actions_did_is_told_and_backs_the_reply() -> None:
    lane = AssistantRun({"text": "I added your note to WO-3E7 for the vendor."})
    lane.earlier(Lane.RELAY_TO_OPEN_WO, target_wo_id="WO-3E7")
    lane.run("also the slats are bent")

    assert lane.told()["done"] == [
        "added their message to WO-3E7 (balcony shutter stuck halfway) for the vendor"
    ]
    assert lane.sent() == ["I added your note to WO-3E7 for the vendor."]


def test_offered_times_are_not_a_booked_visit() -> None:
    lane = AssistantRun({"text": "Your visit for WO-3E7 is booked."})
    lane.earlier(Lane.SCHEDULE_VISIT, target_wo_id="WO-3E7")
    outcome = lane.run("I'm free thursday")

    assert lane.told()["done"] == [
        "offered visit times for WO-3E7 (balcony shutter stuck halfway); nothing booked"
    ]
    assert lane.sent() == fixed("I'm free thursday")
    assert "composed reply refused, promise: promises a visit or a time" in outcome.note


def test_a_booked_visit_backs_a_visit() -> None:
    lane = AssistantRun({"text": "Your visit for WO-3E7 is booked."})
    booked = SHUTTER.model_copy(
        update={
            "status": WorkOrderStatus.SCHEDULED,
            "visit": VisitWindow(start=T0 + timedelta(days=1), end=T0 + timedelta(days=1, hours=3)),
        }
    )
    lane.work_orders = InMemoryWorkOrderStore([booked])
    lane.earlier(Lane.SCHEDULE_VISIT, target_wo_id="WO-3E7")
    lane.run("thursday morning works")

    assert lane.sent() == ["Your visit for WO-3E7 is booked."]


def test_a_skipped_action_backs_nothing() -> None:
    lane = AssistantRun({"text": "I've let the vendor know."})
    lane.earlier(Lane.RELAY_TO_OPEN_WO, target_wo_id="WO-3E7", status="skipped")
    lane.run("the slats are bent too")

    assert lane.told()["done"] == []
    assert lane.sent() == fixed("the slats are bent too")


def test_the_vendor_of_the_senders_own_work_order_is_another_party() -> None:
    lane = AssistantRun({"text": "Dara has your details and is aware."})
    outcome = lane.run("thanks a lot")

    assert lane.sent() == fixed("thanks a lot")
    assert "other_party" in outcome.note
    assert "Dara" not in outcome.note  # the note says why, not what was refused


def test_the_setting_turns_composition_off(monkeypatch: Any) -> None:
    assert ModelSettings().compose_replies is True  # on by default: it acts only with a model
    monkeypatch.setenv("MAESTRO_COMPOSE_REPLIES", "false")
    assert ModelSettings().compose_replies is False

    assert models_for(ScriptedModel()).composer is not None
    assert models_for(ScriptedModel(), compose_replies=False).composer is None
    assert models_for(None).composer is None  # offline: nothing to compose with


def test_when_the_fixed_choice_is_silence_nothing_is_composed() -> None:
    run = AssistantRun({"text": "unused"})
    ctx = run.context("ok 👍")
    choice = composed_or_fixed(ctx, None)

    assert choice.text is None
    assert run.model.calls == []
