"""The watcher reads each claimed surface itself and compares: Evidence with its provenance, or
Shame (unverified_claim, mismatch). Lanes run on in-memory fakes; their events are the claims."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from builders import MARIA, T0, act, package

from maestro.domain.actions import Action, Lane
from maestro.domain.dispose import QueuedAction
from maestro.domain.events import DomainEvent, body_digest
from maestro.domain.models import Party, PartyRole, WorkOrder, WorkOrderStatus
from maestro.domain.records import ActionOutcomeRecord, MaestroDecision, PackageCompletion
from maestro.lanes import execute
from maestro.lanes.context import LaneContext, LaneOutcome
from maestro.verify.sweeper import Sweeper, SweeperDeps
from maestro.verify.watcher import Watcher, WatcherDeps
from maestro_dev.fakes import (
    InMemoryDecisionLog,
    InMemoryDispatchStore,
    InMemoryLedger,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemorySweepWatermark,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
    RecordingReader,
)
from maestro_dev.local.clock import VirtualClock

MARIA_3B = MARIA.model_copy(update={"unit": "3B"})
VENDOR = Party(party_id="vendor-joe", role=PartyRole.VENDOR, phone="+14155550177", name="Joe")
PM_PHONE = "+14155550199"


def _wo(wo_id: str, summary: str, **changes: Any) -> WorkOrder:
    data: dict[str, Any] = {
        "wo_id": wo_id,
        "tenant_id": MARIA.party_id,
        "vendor_id": VENDOR.party_id,
        "unit": "3B",
        "summary": summary,
        "created_at": T0 - timedelta(days=2),
        "updated_at": T0 - timedelta(hours=2),
    }
    return WorkOrder.model_validate({**data, **changes})


@dataclass
class World:
    work_orders: InMemoryWorkOrderStore = field(
        default_factory=lambda: InMemoryWorkOrderStore(
            [
                _wo("WO-204", "leak under the kitchen sink"),
                _wo(
                    "WO-198",
                    "dripping tap",
                    status=WorkOrderStatus.COMPLETED,
                    rating_requested=True,
                ),
            ]
        )
    )
    timeline: InMemoryTimeline = field(default_factory=InMemoryTimeline)
    pending: InMemoryPendingStore = field(default_factory=InMemoryPendingStore)
    messenger: RecordingMessenger = field(default_factory=RecordingMessenger)
    decisions: InMemoryDecisionLog = field(default_factory=InMemoryDecisionLog)
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    clock: VirtualClock = field(default_factory=lambda: VirtualClock(T0))
    runs: int = 0

    def run(self, action: Action, text: str = "hello") -> LaneOutcome:
        self.runs += 1
        pkg = package(text, flush=self.runs)
        key = f"{pkg.package_id}#0"
        ctx = LaneContext(
            package=pkg,
            sender=MARIA_3B,
            open_contexts=(),
            action_index=0,
            idempotency_key=key,
            work_orders=self.work_orders,
            pending=self.pending,
            parties=InMemoryPartyDirectory([MARIA_3B, VENDOR]),
            messenger=self.messenger,
            on_call_pm_phone=PM_PHONE,
            now=self.clock.now(),
            timeline=self.timeline,
            queued=QueuedAction(
                index=0, action=action, idempotency_key=key, decision_id=f"{pkg.package_id}#d#0"
            ),
        )
        return execute(action, ctx)

    @property
    def watcher(self) -> Watcher:
        return Watcher(
            WatcherDeps(
                messages=RecordingReader(self.messenger),
                work_orders=self.work_orders,
                timeline=self.timeline,
                pending=self.pending,
                decisions=self.decisions,
                dispatch=InMemoryDispatchStore(),
                ledger=self.ledger,
                clock=self.clock,
            )
        )


@pytest.fixture
def world() -> World:
    return World()


HONEST: dict[str, Action] = {
    "create_wo": act("create_wo", summary="fridge is not cooling", category="appliance"),
    "relay_to_open_wo": act("relay_to_open_wo", "WO-204", note="it drips faster at night"),
    "schedule_visit": act(
        "schedule_visit",
        "WO-204",
        mode="confirm",
        window_start=T0 + timedelta(days=1),
        window_end=T0 + timedelta(days=1, hours=2),
    ),
    "record_rating": act("record_rating", "WO-198", stars=5),
    "relay_to_vendor": act("relay_to_vendor", "WO-204", message="the code is 1234"),
    "manage_existing": act("manage_existing", operation="cancel", wo_ids=["WO-204"]),
    "clarify": act("clarify", question="which one?", candidate_ids=["WO-204", "WO-198"]),
    "escalate": act("escalate", reason="emergency", hazard="gas smell"),
}


@pytest.mark.parametrize("lane", list(HONEST))
def test_every_honest_claim_is_read_back_as_evidence(world: World, lane: str) -> None:
    outcome = world.run(HONEST[lane])
    assert outcome.status == "done", outcome.note
    rows = [world.watcher.watch(e) for e in outcome.events]
    assert [r.verdict for r in rows] == ["evidence"] * len(outcome.events), [r.detail for r in rows]
    expected = {
        "message.sent": "ddb-read",  # the recording messenger: its records, never "Twilio"
        "escalation.paged": "ddb-read",
        "wo.created": "wo-read",
        "wo.updated": "wo-read",
        "rating.recorded": "wo-read",
        "confirm.held": "ddb-read",
        "clarification.asked": "ddb-read",
    }
    for event, row in zip(outcome.events, rows, strict=True):
        assert row.provenance == expected[event.type]
        assert (row.row_id, row.decision_id, row.package_id) == (
            event.event_id,
            event.decision_id,
            event.package_id,
        )
        assert row.read, "evidence says what was read"
    assert all("not sent" in r.detail for r in rows if r.event_type == "message.sent")


def test_a_redelivered_event_writes_nothing_twice(world: World) -> None:
    (event, *_) = world.run(HONEST["relay_to_open_wo"]).events
    first = world.watcher.watch(event)
    again = world.watcher.watch(event)
    assert again == first
    assert world.ledger.writes == 1


@pytest.mark.parametrize("lane", ["create_wo", "relay_to_open_wo", "relay_to_vendor", "escalate"])
def test_a_row_quotes_no_number_and_no_text(world: World, lane: str) -> None:
    """An erase cannot rely on finding every copy: rows hold digests, and numbers masked."""
    outcome = world.run(HONEST[lane], text="my neighbour in 4C has the spare key")
    rows = [world.watcher.watch(e) for e in outcome.events]
    assert rows
    params = HONEST[lane].params.model_dump().values()
    words = [w for w in params if isinstance(w, str) and " " in w]
    words += [m.body for m in world.messenger.sent]
    assert words
    for row in rows:
        stored = row.model_dump_json()
        for number in (MARIA_3B.phone, VENDOR.phone, PM_PHONE):
            assert number not in stored, (number, stored)
        for text in words:
            assert text not in stored, (text, stored)


def test_a_message_never_sent_is_an_unverified_claim(world: World) -> None:
    outcome = world.run(HONEST["relay_to_vendor"])
    (sent,) = outcome.events
    forged = sent.model_copy(update={"subject_id": "SM" + "f" * 32, "event_id": "forged"})
    row = world.watcher.watch(forged)
    assert (row.verdict, row.kind, row.provenance) == ("shame", "unverified_claim", "ddb-read")
    assert "has no message" in row.detail


def test_the_claim_is_never_taken_for_the_value(world: World) -> None:
    """A claim naming a real message with other words: the read's words decide."""
    (sent,) = world.run(HONEST["relay_to_vendor"]).events
    other = "the code is 9999"
    claim = {**sent.claim, "body_sha256": body_digest(other)}
    row = world.watcher.check(sent.model_copy(update={"claim": claim}))
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    assert row.read["body_sha256"] == body_digest(world.messenger.sent[0].body)
    assert "body_sha256" in row.detail


def test_a_wo_whose_stored_value_differs_from_the_claim_is_a_mismatch(world: World) -> None:
    outcome = world.run(HONEST["schedule_visit"])
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    # Someone puts the WO back as it was (same version): the claim's status is not there.
    wo = world.work_orders.get("WO-204")
    assert wo is not None
    world.work_orders._items["WO-204"] = wo.model_copy(update={"status": WorkOrderStatus.OPEN})
    row = world.watcher.check(updated)
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    assert "status: claimed 'scheduled', read 'open'" in row.detail


def test_a_wo_update_with_no_timeline_entry_is_an_unverified_claim(world: World) -> None:
    outcome = world.run(HONEST["relay_to_open_wo"])
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    world.timeline.entries.clear()  # "note added to WO-204": no read can confirm it
    row = world.watcher.check(updated)
    assert (row.verdict, row.kind, row.provenance) == ("shame", "unverified_claim", "wo-read")


def test_a_later_change_to_the_wo_is_not_shame(world: World) -> None:
    """The claim wrote v2 'scheduled'; a later package cancelled it (v3). The claim's own entry
    is still there: evidence, not a mismatch."""
    outcome = world.run(HONEST["schedule_visit"])
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    wo = world.work_orders.get("WO-204")
    assert wo is not None
    world.work_orders.update(wo.transition(WorkOrderStatus.CANCELLED, T0), wo.version)
    assert world.watcher.check(updated).verdict == "evidence"


def test_a_claimed_write_the_wo_never_reached_is_a_mismatch(world: World) -> None:
    outcome = world.run(HONEST["relay_to_open_wo"])
    (updated,) = [e for e in outcome.events if e.type == "wo.updated"]
    claim = {**updated.claim, "version": 9}
    row = world.watcher.check(updated.model_copy(update={"claim": claim}))
    assert (row.kind, row.detail) == ("mismatch", "version: claimed 9, read 2")


def test_a_rating_that_is_not_stored_is_shame(world: World) -> None:
    outcome = world.run(HONEST["record_rating"])
    (rated,) = [e for e in outcome.events if e.type == "rating.recorded"]
    claim = {**rated.claim, "stars": 2}
    row = world.watcher.check(rated.model_copy(update={"claim": claim}))
    assert (row.verdict, row.kind) == ("shame", "mismatch")


def test_a_hold_that_is_not_in_the_pending_store_is_an_unverified_claim(world: World) -> None:
    outcome = world.run(HONEST["manage_existing"])
    (held,) = [e for e in outcome.events if e.type == "confirm.held"]
    row = world.watcher.check(held.model_copy(update={"subject_id": "pkg-x#0"}))
    assert (row.kind, row.provenance) == ("unverified_claim", "ddb-read")


def _decision_recorded(package_id: str, decisions: int) -> DomainEvent:
    return DomainEvent(
        event_id=f"{package_id}#decision.recorded",
        type="decision.recorded",
        package_id=package_id,
        subject_id=package_id,
        claim={"decisions": decisions, "appended": 0, "route": "reasoning"},
        occurred_at=T0,
    )


def test_decision_recorded_is_read_back_from_the_decision_log(world: World) -> None:
    world.decisions.append(
        MaestroDecision.model_validate(
            {
                "decision_id": "pkg-1#dispose#0",
                "package_id": "pkg-1",
                "conversation_id": "conv-1",
                "stage": "dispose",
                "index": 0,
                "disposition": "queued",
                "lane": "continue_with_assistant",
                "open_context_count": 0,
                "confidence": 1.0,
                "recorded_at": T0,
            }
        )
    )
    missing = world.watcher.check(_decision_recorded("pkg-1", 1))
    assert missing.kind == "unverified_claim"  # no completion line: not recorded yet
    world.decisions.complete(
        PackageCompletion(
            record_id="pkg-1#completion",
            package_id="pkg-1",
            conversation_id="conv-1",
            route="reasoning",
            completed_by="persist",
            decisions=1,
            recorded_at=T0,
        )
    )
    assert world.watcher.check(_decision_recorded("pkg-1", 1)).verdict == "evidence"
    assert world.watcher.check(_decision_recorded("pkg-1", 3)).kind == "mismatch"


# -- an event that comes after the sweeper gave it up ----------------------------------------


def _record_and_sweep(world: World, outcome: LaneOutcome) -> list[str]:
    """The lane's outcome on the record and its package completed; the sweeper, past its
    window, before any event was read (they waited in the watcher's DLQ): its missing rows."""
    (event, *_) = outcome.events
    world.decisions.record_outcome(
        ActionOutcomeRecord(
            record_id=f"{event.package_id}#outcome#000",
            package_id=event.package_id,
            conversation_id="conv-1",
            index=0,
            decision_id=str(event.decision_id),
            lane=Lane(outcome.lane),
            status=outcome.status,
            effects=outcome.effects,
            recorded_at=T0,
        )
    )
    world.decisions.complete(
        PackageCompletion(
            record_id=f"{event.package_id}#completed",
            package_id=event.package_id,
            conversation_id="conv-1",
            route="reasoning",
            completed_by="fail_open",  # no decision.recorded: the lane's effects alone
            decisions=1,
            recorded_at=T0,
        )
    )
    world.clock.advance(11 * 60)
    sweeper = Sweeper(
        SweeperDeps(
            decisions=world.decisions,
            ledger=world.ledger,
            watermark=InMemorySweepWatermark(),
            clock=world.clock,
        )
    )
    return [row.row_id for row in sweeper.sweep().missing]


def test_an_event_read_after_the_sweep_resolves_its_missing_event_row(world: World) -> None:
    outcome = world.run(HONEST["relay_to_open_wo"])
    missing = _record_and_sweep(world, outcome)
    assert len(missing) == len(outcome.effects) == 3  # the note, its two texts (tenant, vendor)
    assert all(row.standing_shame for row in world.ledger.rows.values())

    world.clock.advance(30 * 60)  # the DLQ is redriven: the events are read at last
    rows = [world.watcher.watch(event) for event in outcome.events]
    assert [r.verdict for r in rows] == ["evidence"] * len(rows)
    package_id = outcome.events[0].package_id
    for row_id in missing:  # the rows stay (history), resolved by the evidence
        stored = world.ledger.get(package_id, row_id)
        assert stored is not None
        assert stored.kind == "missing_event"
        assert not stored.standing_shame
        assert stored.resolution is not None
        evidence = world.ledger.get(package_id, stored.resolution.row_id)
        assert evidence is not None
        assert evidence.verdict == "evidence"
        assert (evidence.event_type, evidence.subject_id) == (stored.event_type, stored.subject_id)
        assert stored.mark.startswith("missing_event resolved by")
    assert not [r for r in world.ledger.rows.values() if r.standing_shame]
    # Read again (a redelivery): nothing changes.
    before = dict(world.ledger.rows)
    for event in outcome.events:
        world.watcher.watch(event)
    assert world.ledger.rows == before


def test_a_late_event_read_as_shame_resolves_the_missing_row_and_its_own_shame_stands(
    world: World,
) -> None:
    outcome = world.run(HONEST["relay_to_vendor"])
    (missing,) = _record_and_sweep(world, outcome)
    (sent,) = outcome.events
    forged = sent.model_copy(
        update={"claim": {**sent.claim, "to_sha256": body_digest("+14155550100")}}
    )
    row = world.watcher.watch(forged)
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    resolved = world.ledger.get(sent.package_id, missing)
    assert resolved is not None
    assert resolved.resolution is not None
    assert resolved.resolution.verdict == "shame"
    standing = [r.kind for r in world.ledger.rows.values() if r.standing_shame]
    assert standing == ["mismatch"]  # the claim is judged by its own row, as if in time


def test_an_event_of_another_decision_resolves_nothing(world: World) -> None:
    outcome = world.run(HONEST["relay_to_vendor"])
    (missing,) = _record_and_sweep(world, outcome)
    (sent,) = outcome.events
    other = sent.model_copy(update={"decision_id": "pkg-other#d#0", "event_id": "other-event"})
    assert world.watcher.watch(other).verdict == "evidence"
    stored = world.ledger.get(sent.package_id, missing)
    assert stored is not None
    assert stored.standing_shame
