"""Lanes: each effect, its events, and what a re-run must not do twice (in-memory fakes)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from builders import MARIA, T0, TENANT_PHONE, act, package, wo_context

from maestro.domain.actions import (
    LANE_SPECS,
    Action,
    AnswerWait,
    AnswerWaitParams,
    Lane,
    ManageExistingParams,
)
from maestro.domain.dispose import QueuedAction
from maestro.domain.events import body_digest
from maestro.domain.fixed_texts import FOLLOW_UP
from maestro.domain.models import (
    Channel,
    MediaRef,
    OpenContext,
    Package,
    Party,
    PartyRole,
    VisitWindow,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.records import PendingConfirmation
from maestro.domain.timeline import NoteEntry, RatingEntry, StatusEntry, VisitEntry
from maestro.errors import TransientError
from maestro.lanes import LANES, execute
from maestro.lanes.context import LaneContext, LaneOutcome, wo_id_for
from maestro.lanes.escalate import HELD_BACK, PAGE_EXCERPT_CHARS, safety_instructions
from maestro.lanes.helpers import touch, update_work_order
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro_dev.fakes import (
    InMemoryDailyCaps,
    InMemoryDigest,
    InMemoryPageThrottle,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

MARIA_3B = MARIA.model_copy(update={"unit": "3B"})
VENDOR = Party(party_id="vendor-joe", role=PartyRole.VENDOR, phone="+14155550177", name="Joe")
PM_PHONE = "+14155550199"
STRANGER_PHONE = "+14155550666"
WINDOW: dict[str, Any] = {
    "window_start": T0 + timedelta(days=1),
    "window_end": T0 + timedelta(days=1, hours=2),
}


def _wo(wo_id: str, summary: str, **changes: Any) -> WorkOrder:
    data: dict[str, Any] = {
        "wo_id": wo_id,
        "tenant_id": MARIA.party_id,
        "unit": "3B",
        "summary": summary,
        "created_at": T0 - timedelta(days=2),
        "updated_at": T0 - timedelta(hours=2),
    }
    return WorkOrder.model_validate({**data, **changes})


LEAK_204 = _wo("WO-204", "leak under the kitchen sink", vendor_id=VENDOR.party_id)
TAP_198 = _wo(
    "WO-198",
    "dripping bathroom tap",
    vendor_id=VENDOR.party_id,
    status=WorkOrderStatus.COMPLETED,
    rating_requested=True,
)
CONTEXTS = (
    wo_context("WO-204", "leak under the kitchen sink, unit 3B", awaiting="availability"),
    wo_context("WO-198", "dripping bathroom tap, fixed", rating_requested=True),
)


@dataclass
class World:
    work_orders: InMemoryWorkOrderStore = field(
        default_factory=lambda: InMemoryWorkOrderStore([LEAK_204, TAP_198])
    )
    pending: InMemoryPendingStore = field(default_factory=InMemoryPendingStore)
    parties: Any = field(default_factory=lambda: InMemoryPartyDirectory([MARIA_3B, VENDOR]))
    messenger: RecordingMessenger = field(default_factory=RecordingMessenger)
    timeline: InMemoryTimeline = field(default_factory=InMemoryTimeline)
    throttle: InMemoryPageThrottle = field(default_factory=InMemoryPageThrottle)
    digest: InMemoryDigest = field(default_factory=InMemoryDigest)
    caps: InMemoryDailyCaps = field(default_factory=InMemoryDailyCaps)

    def ctx(
        self,
        *,
        index: int = 0,
        sender: Party | None = MARIA_3B,
        contexts: tuple[OpenContext, ...] = CONTEXTS,
        pkg: Package | None = None,
        now: datetime = T0,
    ) -> LaneContext:
        pkg = pkg or package("hello")
        return LaneContext(
            package=pkg,
            sender=sender,
            open_contexts=contexts,
            action_index=index,
            idempotency_key=f"{pkg.package_id}#{index}",
            work_orders=self.work_orders,
            pending=self.pending,
            parties=self.parties,
            messenger=self.messenger,
            on_call_pm_phone=PM_PHONE,
            now=now,
            timeline=self.timeline,
            throttle=self.throttle,
            caps=self.caps,
            digest=self.digest,
        )

    def run(self, action: Action, **ctx: Any) -> LaneOutcome:
        return execute(action, self.ctx(**ctx))

    def bodies_to(self, phone: str) -> list[str]:
        return [m.body for m in self.messenger.to(phone)]


@pytest.fixture
def world() -> World:
    return World()


def _types(outcome: LaneOutcome) -> list[str]:
    return [e.type for e in outcome.events]


# A minimal valid action per lane, each able to take effect in the default world.
MINIMAL: dict[Lane, Action] = {
    Lane.CREATE_WO: act("create_wo", summary="fridge is not cooling", category="appliance"),
    Lane.RELAY_TO_OPEN_WO: act("relay_to_open_wo", "WO-204", note="it drips faster at night"),
    Lane.SCHEDULE_VISIT: act("schedule_visit", "WO-204", availability="tomorrow after 2pm"),
    Lane.RECORD_RATING: act("record_rating", "WO-198", stars=5),
    Lane.RELAY_TO_VENDOR: act("relay_to_vendor", "WO-204", message="the code is 1234"),
    Lane.MANAGE_EXISTING: act("manage_existing", operation="cancel", wo_ids=["WO-204"]),
    Lane.CONTINUE_WITH_ASSISTANT: act("continue_with_assistant"),
    Lane.CLARIFY: act("clarify", question="which one?", candidate_ids=["WO-204", "WO-198"]),
    Lane.ESCALATE: act("escalate", reason="emergency", hazard="gas smell"),
    # Internal (resolve queues it; no model proposes it): with no run waiting in this world, it
    # says the offer is no longer open (tests/unit/test_answer_wait.py has the rest).
    Lane.ANSWER_WAIT: AnswerWait(
        target_wo_id="WO-204",
        params=AnswerWaitParams(kind="offer", answer="accept", offer_index=1),
    ),
}
# Re-runs also cover the effects the minimal set does not reach.
RERUNS = {
    **{lane.value: action for lane, action in MINIMAL.items()},
    "schedule_visit:confirm": act("schedule_visit", "WO-204", mode="confirm", **WINDOW),
    "manage_existing:list": act("manage_existing", operation="list"),
}


# ---------------------------------------------------------------------------------------------
# Every lane: the table, its event, its re-run.
# ---------------------------------------------------------------------------------------------


def test_lanes_cover_the_closed_vocabulary() -> None:
    assert set(LANES) == set(Lane)
    assert set(MINIMAL) == set(Lane), "the event test below must exercise every lane"


@pytest.mark.parametrize("lane", list(Lane), ids=str)
def test_every_lane_publishes_the_event_its_spec_names(world: World, lane: Lane) -> None:
    outcome = world.run(MINIMAL[lane])
    assert outcome.status == "done", outcome.note
    assert outcome.lane == lane.value
    assert LANE_SPECS[lane].event in _types(outcome)
    # Each event is this action's, with a deterministic id built from its key.
    assert all(e.event_id.startswith(outcome.idempotency_key + "#") for e in outcome.events)
    assert set(outcome.message_sids) == {
        e.subject_id for e in outcome.events if e.type == "message.sent"
    }
    _every_effect_is_claimed(outcome)


def _every_effect_is_claimed(outcome: LaneOutcome) -> None:
    """What the lane wrote and what its events claim are the same set: no effect without its
    event (the sweeper's missing_event), no event without an effect."""
    assert outcome.effects, "a lane that did something records what it wrote"
    claimed = {(e.type, e.subject_id) for e in outcome.events}
    assert {(f.event, f.subject_id) for f in outcome.effects} == claimed
    for event in outcome.events:
        assert event.package_id == outcome.idempotency_key.split("#")[0]
        event.typed_claim()  # each claim fits its type's schema


@pytest.mark.parametrize("name", list(RERUNS))
def test_every_effect_has_its_event_and_names_its_decision(world: World, name: str) -> None:
    action = RERUNS[name]
    ctx = world.ctx()
    ctx.queued = QueuedAction(
        index=0,
        action=action,
        idempotency_key=ctx.idempotency_key,
        decision_id="decision-0",
    )
    outcome = execute(action, ctx)
    assert outcome.status == "done", outcome.note
    _every_effect_is_claimed(outcome)
    assert {e.decision_id for e in outcome.events} == {"decision-0"}


@pytest.mark.parametrize("name", list(RERUNS))
def test_a_lane_run_twice_with_the_same_key_does_nothing_twice(world: World, name: str) -> None:
    first = world.run(RERUNS[name])
    snapshot = (
        list(world.work_orders.writes),
        world.work_orders.all(),
        list(world.messenger.sent),
        world.pending.clarifications_for(MARIA.party_id, T0),
        world.pending.confirmations_for(MARIA.party_id, T0),
    )
    second = world.run(RERUNS[name])  # a fresh context, the same idempotency key
    assert (
        world.work_orders.writes,
        world.work_orders.all(),
        world.messenger.sent,
        world.pending.clarifications_for(MARIA.party_id, T0),
        world.pending.confirmations_for(MARIA.party_id, T0),
    ) == snapshot
    assert [e.event_id for e in second.events] == [e.event_id for e in first.events]
    assert second.message_sids == first.message_sids


def test_execute_dispatches_by_the_actions_own_lane(world: World) -> None:
    outcome = execute(MINIMAL[Lane.CONTINUE_WITH_ASSISTANT], world.ctx())
    assert outcome.lane == "continue_with_assistant"
    assert _types(outcome) == ["message.sent"]


# ---------------------------------------------------------------------------------------------
# create_wo, and a later action naming it by ref.
# ---------------------------------------------------------------------------------------------


def test_create_wo_opens_the_tenants_wo_and_texts_its_reference(world: World) -> None:
    pkg = package("my fridge stopped cooling")
    action = act(
        "create_wo", summary="fridge not cooling", category="appliance", location="kitchen"
    )
    outcome = world.run(action, pkg=pkg)

    wo_id = wo_id_for(pkg.package_id, "new:1")
    wo = world.work_orders.get(wo_id)
    assert wo is not None
    assert (wo.tenant_id, wo.unit, wo.category, wo.status) == (
        "tenant-maria",
        "3B",
        "appliance",
        "open",
    )
    assert wo.summary == "fridge not cooling (kitchen)"
    assert outcome.created_wo_id == wo_id
    (created,) = [e for e in outcome.events if e.type == "wo.created"]
    assert created.subject_id == wo_id
    assert created.claim == {
        "summary_sha256": body_digest(wo.summary),
        "status": "open",
        "tenant_id": "tenant-maria",
        "version": 1,
    }
    (text,) = world.bodies_to(TENANT_PHONE)
    assert text.startswith(f"Got it: I've opened {wo_id} for fridge not cooling (kitchen).")


def _with_media(pkg: Package, *media: MediaRef) -> Package:
    """``pkg`` with its first message carrying ``media`` (an MMS's files)."""
    first = pkg.messages[0].model_copy(update={"media": media})
    return pkg.model_copy(update={"messages": (first, *pkg.messages[1:])})


BOILER_PHOTO = MediaRef(url="https://api.twilio.com/m/MEboiler", content_type="image/png")
BOILER_CLIP = MediaRef(url="https://api.twilio.com/m/MEclip", content_type="video/3gpp")


def test_create_wo_keeps_the_files_sent_with_the_report_on_its_first_entry(world: World) -> None:
    pkg = _with_media(package("boiler display shows E119, pic attached"), BOILER_PHOTO, BOILER_CLIP)
    outcome = world.run(act("create_wo", summary="boiler error E119", category="hvac"), pkg=pkg)
    wo_id = wo_id_for(pkg.package_id, "new:1")
    (entry,) = world.timeline.for_wo(wo_id)
    assert isinstance(entry, NoteEntry)
    assert entry.media == (BOILER_PHOTO, BOILER_CLIP)
    assert entry.photos == 1
    assert "(1 photo, 1 file)" in entry.what
    # The timeline write is claimed, as every write is (the watcher reads the entry back).
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    assert updated.subject_id == wo_id
    assert updated.claim["entry_id"] == entry.entry_id
    assert updated.claim["note_sha256"] == body_digest(entry.note)
    # A re-run appends nothing twice.
    world.run(act("create_wo", summary="boiler error E119", category="hvac"), pkg=pkg)
    assert len(world.timeline.for_wo(wo_id)) == 1


def test_create_wo_without_files_writes_no_timeline_entry(world: World) -> None:
    pkg = package("boiler display shows E119")
    outcome = world.run(act("create_wo", summary="boiler error E119", category="hvac"), pkg=pkg)
    assert world.timeline.for_wo(wo_id_for(pkg.package_id, "new:1")) == []
    assert "wo.updated" not in _types(outcome)


def test_a_relayed_note_keeps_the_photos_sent_with_it(world: World) -> None:
    pkg = _with_media(package("here's the cabinet floor now", "all warped"), BOILER_PHOTO)
    world.run(act("relay_to_open_wo", "WO-204", note="cabinet floor warped"), pkg=pkg)
    (entry,) = world.timeline.for_wo("WO-204")
    assert isinstance(entry, NoteEntry)
    assert (entry.note, entry.media, entry.photos) == ("cabinet floor warped", (BOILER_PHOTO,), 1)


def test_create_then_schedule_new_ref_in_the_same_package_targets_the_created_wo(
    world: World,
) -> None:
    pkg = package("the heater is broken, I'm free tomorrow 2-4")
    world.run(act("create_wo", summary="heater broken", category="hvac"), pkg=pkg, index=0)
    outcome = world.run(
        act("schedule_visit", "new:1", mode="confirm", availability="tomorrow 2-4", **WINDOW),
        pkg=pkg,
        index=1,
    )
    created = wo_id_for(pkg.package_id, "new:1")
    assert outcome.target_wo_id == created
    wo = world.work_orders.get(created)
    assert wo is not None
    assert wo.status is WorkOrderStatus.SCHEDULED
    assert wo.visit is not None
    assert wo.visit.start == WINDOW["window_start"]
    assert world.work_orders.get("WO-204") == LEAK_204  # nothing else was touched


def test_create_wo_refuses_an_unknown_sender(world: World) -> None:
    outcome = world.run(
        MINIMAL[Lane.CREATE_WO], sender=None, pkg=package("hi", phone=STRANGER_PHONE)
    )
    assert outcome.status == "skipped"
    assert world.work_orders.writes == []
    assert world.messenger.sent == []


# ---------------------------------------------------------------------------------------------
# relay_to_open_wo, relay_to_vendor.
# ---------------------------------------------------------------------------------------------


def test_relay_to_open_wo_records_the_update_and_tells_the_vendor(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.RELAY_TO_OPEN_WO])
    wo = world.work_orders.get("WO-204")
    assert wo is not None
    assert (wo.version, wo.updated_at) == (LEAK_204.version + 1, T0)
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    assert updated.claim == {
        "entry_id": f"{outcome.idempotency_key}#note",
        "entry": "note",
        "version": LEAK_204.version + 1,
        "status": "open",
        "note_sha256": body_digest("it drips faster at night"),
    }
    # "note added to WO-204" is a claim a read confirms: the WO's timeline returns the note.
    (entry,) = world.timeline.for_wo("WO-204")
    assert isinstance(entry, NoteEntry)
    assert (entry.entry_id, entry.note, entry.who, entry.who_role) == (
        updated.claim["entry_id"],
        "it drips faster at night",
        MARIA.party_id,
        PartyRole.TENANT,
    )
    assert (entry.package_id, entry.at) == (updated.package_id, T0)
    (relay,) = world.bodies_to(VENDOR.phone)
    assert "WO-204" in relay
    assert relay.endswith("it drips faster at night")
    # The tenant hears where the words went, and who has them.
    (ack,) = world.bodies_to(MARIA.phone)
    assert ack == (
        f"Thanks, I've added that to WO-204 ({LEAK_204.summary}) and passed it on to {VENDOR.name}."
    )


def test_a_vendors_note_is_relayed_to_the_tenant(world: World) -> None:
    """The vendor proposes a time: the tenant reads it, with who said it."""
    action = act("relay_to_open_wo", "WO-204", note="I can come monday at 10")
    outcome = world.run(action, sender=VENDOR)
    assert outcome.status == "done"
    assert world.bodies_to(TENANT_PHONE) == [
        "Update on WO-204 (leak under the kitchen sink, unit 3B) from Joe: I can come monday at 10"
    ]
    assert world.bodies_to(VENDOR.phone) == [
        f"Thanks, I've added that to WO-204 (leak under the kitchen sink) and passed it on to "
        f"{MARIA_3B.name}."
    ]


def test_relay_without_a_vendor_phone_updates_the_wo_and_says_it_did_not_relay() -> None:
    """The WO names a vendor the directory does not know: the note is kept, nothing is sent to
    a guessed number."""
    world = World(parties=InMemoryPartyDirectory([MARIA_3B]))
    outcome = world.run(MINIMAL[Lane.RELAY_TO_OPEN_WO])
    assert outcome.status == "done"
    assert "not relayed" in outcome.note
    # Only the sender's acknowledgement, which claims no relay: nothing to a guessed number.
    (ack,) = world.messenger.sent
    assert ack.to == MARIA_3B.phone
    assert "passed it on" not in ack.body
    assert _types(outcome) == ["wo.updated", "message.sent"]


def test_relay_to_vendor_messages_the_vendor_and_skips_a_wo_without_one(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.RELAY_TO_VENDOR])
    assert world.bodies_to(VENDOR.phone) == [
        "Message from the tenant about WO-204 (leak under the kitchen sink, unit 3B): "
        "the code is 1234"
    ]
    assert _types(outcome) == ["message.sent"]

    world.work_orders.create(_wo("WO-300", "loose door handle"))
    skipped = world.run(act("relay_to_vendor", "WO-300", message="hi"), index=1)
    assert skipped.status == "skipped"
    assert skipped.events == ()


def test_a_lane_refuses_a_wo_the_sender_is_not_on(world: World) -> None:
    world.work_orders.create(_wo("WO-999", "someone else's boiler", tenant_id="tenant-other"))
    outcome = world.run(act("relay_to_open_wo", "WO-999", note="hello"))
    assert outcome.status == "skipped"
    assert world.work_orders.get("WO-999") is not None
    assert [w for w in world.work_orders.writes if w[0] == "update"] == []


# ---------------------------------------------------------------------------------------------
# schedule_visit.
# ---------------------------------------------------------------------------------------------


def test_schedule_propose_tells_tenant_and_vendor_and_leaves_the_wo_open(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.SCHEDULE_VISIT])
    wo = world.work_orders.get("WO-204")
    assert wo is not None
    assert (wo.status, wo.visit) == (WorkOrderStatus.OPEN, None)
    assert "tomorrow after 2pm" in world.bodies_to(TENANT_PHONE)[0]
    assert "tomorrow after 2pm" in world.bodies_to(VENDOR.phone)[0]
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    assert updated.claim["status"] == "open"
    assert "window" not in updated.claim  # no window set: the claim says none


def test_schedule_confirm_sets_the_window(world: World) -> None:
    outcome = world.run(RERUNS["schedule_visit:confirm"])
    wo = world.work_orders.get("WO-204")
    assert wo is not None
    assert wo.status is WorkOrderStatus.SCHEDULED
    assert wo.visit is not None
    assert wo.visit.end == WINDOW["window_end"]
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    assert updated.claim["status"] == "scheduled"
    assert all("Visit confirmed" in body for body in world.bodies_to(VENDOR.phone))
    (entry,) = world.timeline.for_wo("WO-204")
    assert isinstance(entry, VisitEntry)
    assert (entry.mode, entry.window_end, entry.status) == (
        "confirm",
        WINDOW["window_end"],
        WorkOrderStatus.SCHEDULED,
    )
    assert entry.entry_id == updated.claim["entry_id"]


def test_a_released_cancel_appends_a_status_entry_per_wo(world: World) -> None:
    cancel = MINIMAL[Lane.MANAGE_EXISTING]
    held = world.run(cancel, pkg=package("cancel the leak one"))
    (hold_event,) = [e for e in held.events if e.type == "confirm.held"]
    pkg = package("YES")
    ctx = world.ctx(pkg=pkg)
    ctx.queued = QueuedAction(
        index=0,
        action=cancel,
        idempotency_key=ctx.idempotency_key,
        decision_id=f"{pkg.package_id}#resolve#0",
        pending_id=hold_event.subject_id,
        release=True,
    )
    released = execute(cancel, ctx)
    assert released.status == "done", released.note
    (entry,) = world.timeline.for_wo("WO-204")
    assert isinstance(entry, StatusEntry)
    assert (entry.from_status, entry.to_status, entry.operation) == (
        WorkOrderStatus.OPEN,
        WorkOrderStatus.CANCELLED,
        "cancel",
    )
    assert entry.decision_id == f"{pkg.package_id}#resolve#0"
    (updated,) = [e for e in released.events if e.type == "wo.updated"]
    assert (updated.claim["entry_id"], updated.claim["status"]) == (entry.entry_id, "cancelled")
    _every_effect_is_claimed(released)


def test_a_calls_held_actions_run_only_once_released_and_exactly_as_held(world: World) -> None:
    """What a call nothing vouches for asked (#17): the hold item runs none of its actions; a
    release runs only an action the hold holds, the first one releasing it (once), the rest
    only after it."""
    create, relay = MINIMAL[Lane.CREATE_WO], MINIMAL[Lane.RELAY_TO_OPEN_WO]
    call = package("the fridge stopped cooling, and the sink drips faster", channel=Channel.VOICE)
    ctx = world.ctx(pkg=call)
    ctx.queued = QueuedAction(
        index=0,
        action=create,
        idempotency_key=ctx.idempotency_key,
        decision_id=f"{call.package_id}#dispose#2",
        held=(create, relay),
        by_unverified_call=True,
    )
    held = execute(create, ctx)
    assert (held.lane, held.status, held.created_wo_id) == ("manage_existing", "done", None)
    _every_effect_is_claimed(held)
    hold = world.pending.get("confirmation", ctx.idempotency_key)
    assert isinstance(hold, PendingConfirmation)
    assert (hold.held, hold.asked_on, hold.wo_ids) == ((create, relay), Channel.SMS, ("WO-204",))
    assert sorted(wo.wo_id for wo in world.work_orders.all()) == ["WO-198", "WO-204"]
    assert world.bodies_to(VENDOR.phone) == []
    (asked,) = world.bodies_to(TENANT_PHONE)
    assert asked.startswith("We got a call from this number asking to open a new request")

    yes = package("yes", flush=2)

    def release(action: Action, index: int) -> LaneOutcome:
        ctx = world.ctx(pkg=yes, index=index)
        ctx.queued = QueuedAction(
            index=index,
            action=action,
            idempotency_key=ctx.idempotency_key,
            decision_id=f"{yes.package_id}#resolve#{index}",
            pending_id=hold.confirmation_id,
            release=True,
        )
        return execute(action, ctx)

    other = act("relay_to_open_wo", "WO-204", note="words the hold never held")
    assert release(other, 1).status == "skipped"
    assert release(relay, 1).status == "skipped"  # not before the first released the hold
    first = release(create, 0)
    assert first.status == "done"
    assert first.created_wo_id is not None
    assert "confirm.released" in _types(first)
    assert release(relay, 1).status == "done"
    assert world.bodies_to(VENDOR.phone) == [
        "Update on WO-204 (leak under the kitchen sink, unit 3B): it drips faster at night"
    ]
    again = release(create, 0)  # a re-run of the same package: nothing twice
    assert again.created_wo_id == first.created_wo_id
    assert len(world.work_orders.all()) == 3
    assert world.pending.get("confirmation", hold.confirmation_id).status == "released"  # type: ignore[union-attr]


def test_a_vendors_called_visit_is_held_in_a_vendors_words(world: World) -> None:
    visit = MINIMAL[Lane.SCHEDULE_VISIT]
    call = package("I can come thursday at 9", channel=Channel.VOICE, phone=VENDOR.phone)
    ctx = world.ctx(pkg=call, sender=VENDOR)
    ctx.queued = QueuedAction(
        index=0,
        action=visit,
        idempotency_key=ctx.idempotency_key,
        decision_id=f"{call.package_id}#dispose#1",
        held=(visit,),
        by_unverified_call=True,
    )
    assert execute(visit, ctx).status == "done"
    (asked,) = world.bodies_to(VENDOR.phone)
    assert asked.startswith("We got a call from this number asking to propose a visit for WO-204")
    assert world.bodies_to(TENANT_PHONE) == []  # nothing reaches the tenant before a YES


def test_schedule_never_schedules_a_finished_wo(world: World) -> None:
    outcome = world.run(act("schedule_visit", "WO-198", mode="confirm", availability="x", **WINDOW))
    assert outcome.status == "skipped"
    assert "completed" in outcome.note
    assert outcome.events == ()
    assert world.work_orders.get("WO-198") == TAP_198


# ---------------------------------------------------------------------------------------------
# record_rating (I7).
# ---------------------------------------------------------------------------------------------


def test_rating_is_refused_without_an_outstanding_request(world: World) -> None:
    """I7, naive rule "a digit is a rating": WO-204 has no rating request, so nothing is stored,
    nothing is claimed and the tenant is not thanked for a rating they never gave."""
    outcome = world.run(act("record_rating", "WO-204", stars=2))
    assert outcome.status == "skipped"
    assert outcome.events == ()
    assert world.work_orders.get("WO-204") == LEAK_204
    assert world.messenger.sent == []


def test_rating_is_recorded_while_requested_and_the_tenant_is_thanked(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.RECORD_RATING])
    wo = world.work_orders.get("WO-198")
    assert wo is not None
    assert (wo.rating, wo.rating_requested) == (5, False)
    (recorded,) = [e for e in outcome.events if e.type == "rating.recorded"]
    assert (recorded.subject_id, recorded.claim) == (
        "WO-198",
        {"entry_id": f"{outcome.idempotency_key}#rating", "stars": 5, "version": 2},
    )
    (entry,) = world.timeline.for_wo("WO-198")
    assert isinstance(entry, RatingEntry)
    assert (entry.stars, entry.who) == (5, MARIA.party_id)
    assert "5/5" in world.bodies_to(TENANT_PHONE)[0]


# ---------------------------------------------------------------------------------------------
# continue_with_assistant, clarify.
# ---------------------------------------------------------------------------------------------


def test_assistant_replies_to_an_unknown_sender_on_the_package_number(world: World) -> None:
    action = act("continue_with_assistant", reply_hint="Hi! Who am I speaking with?")
    outcome = world.run(action, sender=None, pkg=package("hello?", phone=STRANGER_PHONE))
    assert world.bodies_to(STRANGER_PHONE) == ["Hi! Who am I speaking with?"]
    assert _types(outcome) == ["message.sent"]


def test_a_question_about_a_work_order_is_answered_from_the_stored_record(world: World) -> None:
    """No reply written ("any news on the leak?"): the status comes from the WO store."""
    action = act("continue_with_assistant", "WO-204")
    world.run(action)
    assert world.bodies_to(TENANT_PHONE) == [
        "WO-204 (leak under the kitchen sink) is open; no visit is booked yet. "
        "We'll text you when one is."
    ]
    booked = LEAK_204.schedule(
        VisitWindow(start=WINDOW["window_start"], end=WINDOW["window_end"]), T0
    )
    world.work_orders.update(booked, expected_version=LEAK_204.version)
    world.run(action, index=1)
    assert world.bodies_to(TENANT_PHONE)[1] == (
        "WO-204 (leak under the kitchen sink) is scheduled: the visit is "
        "Thu 18 Jun 14:00 UTC to Thu 18 Jun 16:00 UTC."
    )


def test_a_work_order_that_is_not_the_senders_is_never_described_to_them(world: World) -> None:
    stranger = Party(party_id="tenant-zed", role=PartyRole.TENANT, phone=STRANGER_PHONE, name="Zed")
    world.run(act("continue_with_assistant", "WO-204"), sender=stranger)
    (reply,) = world.bodies_to(STRANGER_PHONE)
    assert "WO-204" not in reply
    assert "kitchen" not in reply


def test_clarify_asks_with_numbered_candidates_and_stores_them(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.CLARIFY])
    (question,) = world.bodies_to(TENANT_PHONE)
    assert "1) WO-204: leak under the kitchen sink" in question
    assert "2) WO-198: dripping bathroom tap" in question
    (stored,) = world.pending.clarifications_for(MARIA.party_id, T0)
    assert stored.clarification_id == outcome.idempotency_key
    assert stored.candidate_ids == ("WO-204", "WO-198")
    assert stored.expires_at == T0 + timedelta(hours=72)
    assert world.pending.clarifications_for(MARIA.party_id, T0 + timedelta(hours=73)) == []
    assert stored.deferred_text  # the words it put on hold, replayed on the answer


# ---------------------------------------------------------------------------------------------
# escalate (I1): page, safety for emergencies only, contexts kept.
# ---------------------------------------------------------------------------------------------


def test_escalate_pages_sends_safety_and_keeps_every_open_context(world: World) -> None:
    world.run(MINIMAL[Lane.CLARIFY], index=5)  # a pending question the emergency must not close
    world.run(MINIMAL[Lane.MANAGE_EXISTING], index=6)  # and a held confirmation
    before = (
        world.work_orders.all(),
        world.pending.clarifications_for(MARIA.party_id, T0),
        world.pending.confirmations_for(MARIA.party_id, T0),
    )
    pkg = package("I smell gas in the kitchen")
    outcome = world.run(MINIMAL[Lane.ESCALATE], pkg=pkg)

    assert (
        world.work_orders.all(),
        world.pending.clarifications_for(MARIA.party_id, T0),
        world.pending.confirmations_for(MARIA.party_id, T0),
    ) == before
    safety = world.messenger.to(TENANT_PHONE)[-1].body
    assert safety.startswith("Leave now. Don't use light switches")
    (page,) = world.bodies_to(PM_PHONE)
    assert "gas smell" in page
    assert "I smell gas in the kitchen" in page
    (paged,) = [e for e in outcome.events if e.type == "escalation.paged"]
    assert paged.claim == {
        "to_sha256": body_digest(PM_PHONE),
        "reason": "emergency",
        "severity": "emergency",
        "why": "account fallback number (no on-call or default PM for world)",
    }
    assert paged.subject_id == world.messenger.to(PM_PHONE)[0].sid


def test_identity_escalation_is_a_digest_line_not_a_page_and_sends_nothing(
    world: World,
) -> None:
    """It used to page the PM at once (one page per number per hour) with 160 characters of the
    text: now it is a line of the hour's digest, the one page an hour that lists them."""
    pkg = package("hi this is the guy from 4C, my sink is leaking", phone=STRANGER_PHONE)
    outcome = world.run(act("escalate", reason="identity", severity="info"), sender=None, pkg=pkg)
    assert world.bodies_to(PM_PHONE) == []
    assert world.bodies_to(STRANGER_PHONE) == []
    assert _types(outcome) == []
    (line,) = world.digest.close(T0, T0)
    assert (line.subject, line.kind, line.who) == (
        f"unknown#{STRANGER_PHONE}",
        "unknown_number",
        STRANGER_PHONE,
    )
    assert line.excerpt.startswith("hi this is the guy from 4C")
    assert "digest of 14:00 UTC" in outcome.note


def test_a_fallback_escalation_sends_no_safety_advice(world: World) -> None:
    world.run(act("escalate", reason="fallback", severity="info"), pkg=package("gas smell"))
    # No advice: they hear only that a person will follow up (the page went).
    assert world.bodies_to(TENANT_PHONE) == [FOLLOW_UP["en"]]
    assert len(world.bodies_to(PM_PHONE)) == 1


@pytest.mark.parametrize(
    ("hazard", "text", "kind"),
    [
        ("gas smell", "", "gas"),
        ("smoke from the outlet", "", "fire"),
        ("CO alarm going off", "", "carbon_monoxide"),
        ("carbon monoxide detector beeping", "", "carbon_monoxide"),
        ("water pouring through the ceiling", "", "water"),
        ("", "the basement is flooding", "water"),
        ("ceiling sagging", "it looks like it could come down", "generic"),
    ],
)
def test_safety_instructions_follow_the_hazard(hazard: str, text: str, kind: str) -> None:
    chosen, advice = safety_instructions(hazard, text)
    assert chosen == kind
    assert "911" in advice or kind == "water"


# ---------------------------------------------------------------------------------------------
# manage_existing: read-only list; cancel and reschedule held until YES.
# ---------------------------------------------------------------------------------------------


def test_manage_list_is_a_read_only_listing(world: World) -> None:
    outcome = world.run(act("manage_existing", operation="list"))
    (listing,) = world.bodies_to(TENANT_PHONE)
    assert "WO-204 (leak under the kitchen sink, unit 3B) [open]" in listing
    assert outcome.note == "listed 2 open WO(s)"
    assert world.work_orders.writes == []
    assert world.pending.confirmations_for(MARIA.party_id, T0) == []


def test_manage_cancel_holds_the_exact_call_and_mutates_nothing(world: World) -> None:
    outcome = world.run(MINIMAL[Lane.MANAGE_EXISTING])
    assert world.work_orders.get("WO-204") == LEAK_204
    (held,) = world.pending.confirmations_for(MARIA.party_id, T0)
    assert (held.call.operation, held.call.wo_ids, held.status) == ("cancel", ("WO-204",), "held")
    assert held.proposal.startswith("Reply YES to cancel WO-204 (leak under the kitchen sink")
    assert world.bodies_to(TENANT_PHONE) == [held.proposal]
    (event,) = [e for e in outcome.events if e.type == "confirm.held"]
    assert event.subject_id == held.confirmation_id == outcome.idempotency_key


def test_manage_cancel_holds_nothing_for_a_wo_that_is_not_the_senders(world: World) -> None:
    world.work_orders.create(_wo("WO-999", "someone else's boiler", tenant_id="tenant-other"))
    outcome = world.run(act("manage_existing", operation="cancel", wo_ids=["WO-999"]))
    assert outcome.status == "skipped"
    assert "confirm.held" not in _types(outcome)
    assert world.pending.confirmations_for(MARIA.party_id, T0) == []
    assert world.pending.confirmations_for("tenant-other", T0) == []


# ---------------------------------------------------------------------------------------------
# The fakes keep the port contracts.
# ---------------------------------------------------------------------------------------------


def test_recording_messenger_is_idempotent_by_key_with_deterministic_sids() -> None:
    messenger = RecordingMessenger()
    first = messenger.send(TENANT_PHONE, "hello", idempotency_key="pkg#0")
    again = messenger.send(VENDOR.phone, "something else", idempotency_key="pkg#0")
    assert again == first
    assert messenger.sent == [first]
    assert first.sid == "SMrec" + hashlib.sha256(b"pkg#0").hexdigest()[:29]
    assert len(first.sid) == 34  # as long as a Twilio SID
    assert re.fullmatch(r"SMrec[0-9a-f]{29}", first.sid)
    assert messenger.get(first.sid) == first


def test_work_order_store_fake_enforces_create_once_and_versions() -> None:
    store = InMemoryWorkOrderStore([LEAK_204])
    with pytest.raises(AlreadyExistsError):
        store.create(LEAK_204)
    bumped = LEAK_204.model_copy(update={"version": 2})
    with pytest.raises(StaleVersionError):
        store.update(bumped.model_copy(update={"version": 3}), expected_version=2)
    with pytest.raises(ValueError, match="version must be 2"):
        store.update(bumped.model_copy(update={"version": 5}), expected_version=1)
    store.update(bumped, expected_version=1)
    with pytest.raises(StaleVersionError):
        store.update(bumped, expected_version=1)  # someone else already wrote version 2
    with pytest.raises(StaleVersionError):
        store.update(_wo("WO-404", "x", version=2), expected_version=1)  # update never creates


def test_pending_store_fake_filters_expired_and_released_items() -> None:
    pending = InMemoryPendingStore()
    confirmation = PendingConfirmation(
        confirmation_id="c1",
        package_id="p",
        party_id=MARIA.party_id,
        call=ManageExistingParams(operation="cancel", wo_ids=("WO-204",)),
        proposal="Reply YES to cancel WO-204",
        held_at=T0,
        expires_at=T0 + timedelta(hours=1),
    )
    pending.put_confirmation(confirmation)
    assert pending.confirmations_for(MARIA.party_id, T0) == [confirmation]
    assert pending.confirmations_for(MARIA.party_id, T0 + timedelta(hours=1)) == []
    with pytest.raises(StaleVersionError):
        pending.set_confirmation_status("c1", "released", "discarded")
    pending.set_confirmation_status("c1", "held", "released")
    assert pending.confirmations_for(MARIA.party_id, T0) == []


def test_update_retries_once_after_a_lost_race(world: World) -> None:
    """Between our read and our write someone else bumps the WO: the helper re-reads and wins on
    the second try, on top of the other writer's version."""
    store = world.work_orders
    raced = False

    class RacingStore(InMemoryWorkOrderStore):
        def update(self, wo: WorkOrder, expected_version: int) -> None:
            nonlocal raced
            if not raced:
                raced = True
                current = store.get(wo.wo_id)
                assert current is not None
                store.update(
                    current.model_copy(update={"version": current.version + 1}), current.version
                )
            store.update(wo, expected_version)

        def get(self, wo_id: str) -> WorkOrder | None:
            return store.get(wo_id)

    ctx = world.ctx()
    result = update_work_order(RacingStore(), "WO-204", touch(ctx))
    assert result is not None
    assert (result.version, result.updated_at) == (LEAK_204.version + 2, T0)
    assert store.get("WO-204") == result


# -- what an unknown number costs; the daily caps; what a page quotes ---------------------------

ESSAY = "I smell gas in the hallway. " + "Forward this to everyone you know: " + "x" * 560


def test_a_page_quotes_at_most_a_short_excerpt_of_what_was_said(world: World) -> None:
    """Naive: the page relayed up to 600 of the sender's characters to the on-call PM."""
    world.run(act("escalate", reason="emergency", hazard="gas " * 50), pkg=package(ESSAY))
    (page,) = world.bodies_to(PM_PHONE)
    quoted = page.split('They said: "', 1)[1]
    assert len(quoted.rstrip('"')) <= PAGE_EXCERPT_CHARS
    assert "Maria" in page  # who,
    assert "gas" in page  # and why
    assert len(page) < 360


def _gas_from(world: World, flush: int, minutes: float) -> LaneOutcome:
    at = T0 + timedelta(minutes=minutes)
    pkg = package("there is a strong smell of propane by the boiler", phone=STRANGER_PHONE,
                  flush=flush, at=at)  # fmt: skip
    return world.run(act("escalate", reason="emergency", hazard="propane"), sender=None, pkg=pkg,
                     now=at)  # fmt: skip


def test_an_unknown_numbers_repeat_emergencies_fold_into_its_first_page(world: World) -> None:
    first = _gas_from(world, 1, 0)
    (page,) = world.messenger.to(PM_PHONE)
    assert len(world.bodies_to(STRANGER_PHONE)) == 1  # the safety advice
    assert first.folded_into is None
    for flush, minutes in ((2, 4), (3, 29)):
        repeat = _gas_from(world, flush, minutes)
        assert (repeat.status, repeat.folded_into, repeat.folded_at) == ("skipped", page.sid, T0)
        assert f"folded into the emergency page {page.sid} sent 14:00:00 UTC" in repeat.note
        assert repeat.events == ()
    assert len(world.bodies_to(PM_PHONE)) == 1
    assert len(world.bodies_to(STRANGER_PHONE)) == 1
    # Past the window (30 minutes from the first page), the next one pages again.
    later = _gas_from(world, 4, 31)
    assert later.folded_into is None
    assert len(world.bodies_to(PM_PHONE)) == 2
    assert len(world.bodies_to(STRANGER_PHONE)) == 2


def test_a_known_senders_emergencies_each_page(world: World) -> None:
    for flush in (1, 2, 3):
        at = T0 + timedelta(minutes=flush)
        pkg = package("smoke is coming out of the dryer vent", flush=flush, at=at)
        world.run(act("escalate", reason="emergency", hazard="smoke"), pkg=pkg, now=at)
    assert len(world.bodies_to(PM_PHONE)) == 3
    assert len(world.bodies_to(TENANT_PHONE)) == 3


def test_past_the_page_cap_a_known_emergency_still_pages_and_an_unknown_one_is_a_digest_line(
    world: World,
) -> None:
    world.caps = InMemoryDailyCaps(pages=1)
    for flush in (1, 2):
        pkg = package("the carbon monoxide alarm keeps going off", flush=flush)
        world.run(act("escalate", reason="emergency", hazard="CO alarm"), pkg=pkg)
    assert len(world.bodies_to(PM_PHONE)) == 2  # never dropped by a cap
    assert world.caps.reached == ["pages"]
    degraded = _gas_from(world, 3, 2)
    assert len(world.bodies_to(PM_PHONE)) == 2
    (advice,) = world.bodies_to(STRANGER_PHONE)  # safety advice always goes, and says the truth
    assert advice.endswith(HELD_BACK)
    assert "alerted" not in advice
    assert "daily page cap reached" in degraded.note
    (line,) = world.digest.close(T0, T0)
    assert (line.kind, line.subject) == ("emergency", f"emergency#{STRANGER_PHONE}")
    # A repeat folds into that digest line, not into a page.
    repeat = _gas_from(world, 4, 5)
    assert "folded into the digest line of 14:00 UTC" in repeat.note
    assert len(world.bodies_to(STRANGER_PHONE)) == 1


def test_past_the_text_cap_a_text_is_recorded_as_not_sent_and_claimed_by_no_event(
    world: World,
) -> None:
    world.caps = InMemoryDailyCaps(texts=1)
    world.run(act("continue_with_assistant"), pkg=package("hello there", flush=1))
    held = world.run(act("continue_with_assistant"), pkg=package("hello again", flush=2))
    assert len(world.bodies_to(TENANT_PHONE)) == 1
    (unsent,) = held.unsent
    assert unsent == f"reply to {TENANT_PHONE}: not sent, the daily texts cap is reached"
    assert unsent in held.note
    assert (held.events, held.message_sids, held.effects) == ((), (), ())
    assert world.caps.reached == ["texts"]
    # Safety advice is never held back.
    world.run(act("escalate", reason="emergency", hazard="gas"), pkg=package("gas!", flush=3))
    assert world.bodies_to(TENANT_PHONE)[-1].startswith("Leave now")


def test_a_re_run_is_charged_once(world: World) -> None:
    world.caps = InMemoryDailyCaps(texts=1)
    pkg = package("hello there")
    for _ in range(3):
        outcome = world.run(act("continue_with_assistant"), pkg=pkg)
        assert outcome.unsent == ()
    assert world.caps.reached == []


def test_past_the_page_cap_a_break_in_is_a_digest_line(world: World) -> None:
    world.caps = InMemoryDailyCaps(pages=1)
    world.caps.charge("pages", "someone-else", T0)
    ctx = world.ctx(pkg=package("the same thing again"))
    action = act("escalate", reason="guard_tripped", severity="info", hazard="asked twice")
    ctx.queued = QueuedAction(
        index=0, action=action, idempotency_key=ctx.idempotency_key, decision_id="d-0"
    )
    outcome = execute(action, ctx)
    assert world.bodies_to(PM_PHONE) == []
    assert world.bodies_to(TENANT_PHONE) == [
        "I've asked the property manager to help with this; they'll be in touch with you."
    ]
    (line,) = world.digest.close(T0, T0)
    assert line.kind == "break_in"
    assert "a line in the digest of 14:00 UTC instead of a page" in outcome.note


def test_a_repeat_while_the_first_page_is_still_going_is_retried_not_folded_blind(
    world: World,
) -> None:
    window = f"emergency-page#{STRANGER_PHONE}"
    assert world.throttle.claim(window, "pkg-conv-1-1#0", T0, 1800) is None  # paging, no SID yet
    with pytest.raises(TransientError, match="still going"):
        _gas_from(world, 2, 1)
    assert world.bodies_to(PM_PHONE) == world.bodies_to(STRANGER_PHONE) == []
    world.throttle.record(window, "pkg-conv-1-1#0", page_sid="SMfirst", paged_at=T0)
    retried = _gas_from(world, 2, 1)  # the state machine's retry
    assert (retried.folded_into, retried.folded_at) == ("SMfirst", T0)


# ---------------------------------------------------------------------------------------------
# A PM of the WO's property (issue #18): their words reach a tenant only as the lane says.
# ---------------------------------------------------------------------------------------------

PM_ELM = Party(
    party_id="pm-pat", role=PartyRole.PM, phone="+14155550171", property_ids=("prop-elm",)
)
PM_OAK = Party(
    party_id="pm-olive", role=PartyRole.PM, phone="+14155550172", property_ids=("prop-oak",)
)


@pytest.fixture
def elm() -> World:
    """The world with WO-204 at Elm, Pat's property."""
    return World(
        work_orders=InMemoryWorkOrderStore(
            [LEAK_204.model_copy(update={"property_id": "prop-elm"}), TAP_198]
        )
    )


def test_a_pms_note_is_on_the_record_and_sent_to_nobody_else(elm: World) -> None:
    outcome = elm.run(MINIMAL[Lane.RELAY_TO_OPEN_WO], sender=PM_ELM)
    assert outcome.status == "done"
    (entry,) = elm.timeline.for_wo("WO-204")
    assert isinstance(entry, NoteEntry)
    assert (entry.note, entry.who) == ("it drips faster at night", PM_ELM.party_id)
    assert elm.bodies_to(TENANT_PHONE) == []
    assert elm.bodies_to(VENDOR.phone) == []
    (ack,) = elm.bodies_to(PM_ELM.phone)
    assert "the tenant and the vendor were not sent it" in ack


def test_a_pms_proposed_visit_goes_to_the_vendor_not_the_tenant(elm: World) -> None:
    """Naive: the tenant is thanked for "your availability", in the PM's words."""
    elm.run(MINIMAL[Lane.SCHEDULE_VISIT], sender=PM_ELM)
    assert elm.bodies_to(TENANT_PHONE) == []
    (to_vendor,) = elm.bodies_to(VENDOR.phone)
    assert to_vendor.startswith("The property manager suggests a visit for WO-204")
    (ack,) = elm.bodies_to(PM_ELM.phone)
    assert ack.startswith("Passed to the vendor for WO-204")


def test_a_pms_confirmed_visit_tells_everyone_in_maestros_words(elm: World) -> None:
    elm.run(RERUNS["schedule_visit:confirm"], sender=PM_ELM)
    (to_tenant,) = elm.bodies_to(TENANT_PHONE)
    assert to_tenant.startswith("Visit confirmed for WO-204")
    (ack,) = elm.bodies_to(PM_ELM.phone)
    assert ack.endswith("told the tenant and the vendor.")


def test_a_pm_asking_after_a_wo_is_answered_from_the_store_not_the_written_reply(
    elm: World,
) -> None:
    written = act("continue_with_assistant", "WO-204", reply_hint="All done, fixed yesterday!")
    elm.run(written, sender=PM_ELM)
    (reply,) = elm.bodies_to(PM_ELM.phone)
    assert reply.startswith("WO-204 (leak under the kitchen sink) is open; no visit is booked")
    assert "vendor Joe" in reply
    assert "fixed yesterday" not in reply


def test_another_propertys_pm_is_refused_at_the_effect(elm: World) -> None:
    """Dispose would not queue these; the lanes re-check against the WO as stored anyway."""
    for action in (MINIMAL[Lane.RELAY_TO_OPEN_WO], MINIMAL[Lane.SCHEDULE_VISIT]):
        outcome = elm.run(action, sender=PM_OAK)
        assert outcome.status == "skipped"
    elm.run(act("continue_with_assistant", "WO-204"), sender=PM_OAK)
    assert all("kitchen" not in body for body in elm.bodies_to(PM_OAK.phone))
    assert elm.timeline.for_wo("WO-204") == []
    assert elm.bodies_to(TENANT_PHONE) == []


def test_a_pms_open_lists_a_few_and_says_how_many_more() -> None:
    wos = [
        _wo(f"WO-3{n:02d}", f"job {n}", property_id="prop-elm", vendor_id=VENDOR.party_id)
        for n in range(8)
    ]
    world = World(work_orders=InMemoryWorkOrderStore(wos))
    world.run(RERUNS["manage_existing:list"], sender=PM_ELM)
    (listing,) = world.bodies_to(PM_ELM.phone)
    assert listing.startswith("Open work orders at your properties (8): WO-300")
    assert "WO-304" in listing
    assert "WO-305" not in listing
    assert "and 3 more not listed here" in listing
