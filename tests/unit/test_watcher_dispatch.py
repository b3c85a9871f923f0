"""The watcher reads a work order's dispatch claims back (docs/dispatch.md): the offer and the
PM's approval request by SID on the messenger's surface and on the run, the assignment on the
WO, what was gathered and how a run failed on the run (and the PM's page by SID). Each honest
claim is Evidence; each claim the surfaces do not bear out is Shame."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from builders import T0

from maestro.domain.directory import Trade
from maestro.domain.dispatch import (
    DispatchRun,
    Gathered,
    Judgment,
    Offer,
    RankedVendor,
    Wait,
    run_package_id,
)
from maestro.domain.events import DomainEvent, EventType, body_digest
from maestro.domain.models import Urgency, WorkOrder, WorkOrderStatus
from maestro.ports.messaging import SentMessage
from maestro.verify.watcher import Watcher, WatcherDeps
from maestro_dev.fakes import (
    InMemoryDecisionLog,
    InMemoryDispatchStore,
    InMemoryLedger,
    InMemoryPendingStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
    RecordingReader,
)
from maestro_dev.local.clock import VirtualClock

WO_ID = "WO-731"
TENANT = "tenant-odile"
PM = ("pm-ravi", "+13125550161")
VENDORS = (("vendor-hollis", "+13125550172"), ("vendor-quade", "+13125550183"))
NTE = 650


def _wo(**changes: Any) -> WorkOrder:
    data: dict[str, Any] = {
        "wo_id": WO_ID,
        "tenant_id": TENANT,
        "unit": "12",
        "summary": "the bathroom fan rattles and smells of burning dust",
        "created_at": T0,
        "updated_at": T0,
    }
    return WorkOrder.model_validate({**data, **changes})


def _judgment() -> Judgment:
    return Judgment(
        priority=Urgency.ROUTINE,
        trade=Trade.ELECTRICAL,
        nte_usd=NTE,
        approval_needed=True,
        after_hours=False,
        vendors=tuple(
            RankedVendor(vendor_id=vendor, name=vendor.removeprefix("vendor-"), rank=n)
            for n, (vendor, _) in enumerate(VENDORS, start=1)
        ),
        offer_timeout_seconds=4 * 3600,
    )


@dataclass
class Run:
    """A dispatch run played as the work order machine's steps write it: each step changes the
    run (versioned), texts through the messenger and publishes its claim."""

    clock: VirtualClock = field(default_factory=lambda: VirtualClock(T0))
    messenger: RecordingMessenger = field(default_factory=RecordingMessenger)
    runs: InMemoryDispatchStore = field(default_factory=InMemoryDispatchStore)
    work_orders: InMemoryWorkOrderStore = field(
        default_factory=lambda: InMemoryWorkOrderStore([_wo()])
    )
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    events: list[DomainEvent] = field(default_factory=list)

    @property
    def watcher(self) -> Watcher:
        return Watcher(
            WatcherDeps(
                messages=RecordingReader(self.messenger),
                work_orders=self.work_orders,
                timeline=InMemoryTimeline(),
                pending=InMemoryPendingStore(),
                decisions=InMemoryDecisionLog(),
                dispatch=self.runs,
                ledger=self.ledger,
                clock=self.clock,
            )
        )

    def run(self) -> DispatchRun:
        run = self.runs.get(WO_ID)
        assert run is not None
        return run

    def change(self, **changes: object) -> DispatchRun:
        self.clock.advance(60)
        before = self.run()
        after = before.changed(self.clock.now(), **changes)
        self.runs.put(after, before.version)
        return after

    def publish(self, type_: EventType, claim: dict[str, Any]) -> DomainEvent:
        event = DomainEvent(
            event_id=f"{WO_ID}#{type_}#{len(self.events)}",
            type=type_,
            package_id=run_package_id(WO_ID),
            subject_id=WO_ID,
            wo_id=WO_ID,
            claim=claim,
            occurred_at=self.clock.now(),
        )
        self.events.append(event)
        return event

    def text(self, to: str, body: str, key: str) -> SentMessage:
        return self.messenger.send(to, body, idempotency_key=f"{WO_ID}#{key}")

    def wait(self, kind: str, party: str, **more: Any) -> Wait:
        now = self.clock.now()
        return Wait.model_validate(
            {
                "kind": kind,
                "token": f"token-{kind}-{len(self.events)}",
                "party_id": party,
                "started_at": now,
                "deadline": now + timedelta(hours=4),
                **more,
            }
        )

    # -- the steps ---------------------------------------------------------------------------

    def gather(self) -> DomainEvent:
        self.runs.put(
            DispatchRun(wo_id=WO_ID, started_at=T0, updated_at=T0, execution_arn="arn:x"), None
        )
        self.text("+13125550150", "Where is the fan, and may the electrician let himself in?", "q")
        gathered = Gathered(asked=("location", "access"), have=("trade", "location", "access"))
        run = self.change(gathered=gathered, step="judging")
        return self.publish(
            "wo.gathered",
            {"asked": "location,access", "have": "trade,location,access", "by": "tenant"}
            | {"run_version": run.version},
        )

    def ask_approval(self) -> DomainEvent:
        body = f"Approve {WO_ID} up to ${NTE}? YES/NO"
        sent = self.text(PM[1], body, "approval#1")
        run = self.change(
            judgment=_judgment(),
            step="awaiting_approval",
            approval="pending",
            approver_id=PM[0],
            waiting=self.wait("approval", PM[0], question_sid=sent.sid),
        )
        return self.publish(
            "wo.approval_requested",
            {
                "sid": sent.sid,
                "to_sha256": body_digest(PM[1]),
                "body_sha256": body_digest(body),
                "nte_usd": NTE,
                "person_id": PM[0],
                "run_version": run.version,
            },
        )

    def approve(self) -> None:
        self.change(approval="approved", waiting=None, step="offering")

    def offer(self, index: int) -> DomainEvent:
        vendor, phone = VENDORS[index - 1]
        body = f"Fan repair at 40 Larch St unit 12 ({WO_ID}). Reply 1 to accept, 2 to decline."
        sent = self.text(phone, body, f"offer#{index}")
        offer = Offer(index=index, vendor_id=vendor, sent_at=self.clock.now(), sid=sent.sid)
        run = self.change(
            offers=(*self.run().offers, offer),
            waiting=self.wait("offer", vendor, offer_index=index, vendor_id=vendor),
        )
        return self.publish(
            "wo.offered",
            {
                "offer_index": index,
                "vendor_id": vendor,
                "sid": sent.sid,
                "to_sha256": body_digest(phone),
                "body_sha256": body_digest(body),
                "run_version": run.version,
            },
        )

    def answer(self, index: int, outcome: str) -> None:
        offers = tuple(
            o.model_copy(update={"outcome": outcome, "answered_at": self.clock.now()})
            if o.index == index
            else o
            for o in self.run().offers
        )
        self.change(offers=offers, waiting=None)

    def assign(self, index: int) -> DomainEvent:
        vendor = VENDORS[index - 1][0]
        wo = self.work_orders.get(WO_ID)
        assert wo is not None
        assigned = wo.assign(vendor, self.clock.now())
        self.work_orders.update(assigned, wo.version)
        self.change(step="assigned")
        return self.publish(
            "wo.dispatched",
            {"vendor_id": vendor, "status": "assigned", "version": assigned.version},
        )

    def page(self, reason: str, step: str, **changes: object) -> DomainEvent:
        sent = self.text(PM[1], f"{WO_ID}: nobody took the fan job; call the tenant.", "page")
        run = self.change(step=step, waiting=None, **changes)
        return self.publish(
            "wo.dispatch_failed",
            {
                "reason": reason,
                "offers": len(run.offers),
                "paged_sid": sent.sid,
                "run_version": run.version,
            },
        )


@pytest.fixture
def played() -> Run:
    """Gathered, approved, offered to the first vendor (declined) and the second (accepted)."""
    run = Run()
    run.gather()
    run.ask_approval()
    run.approve()
    run.offer(1)
    run.answer(1, "declined")
    run.offer(2)
    run.answer(2, "accepted")
    run.assign(2)
    return run


def _forged(event: DomainEvent, **claim: Any) -> DomainEvent:
    return event.model_copy(update={"claim": {**event.claim, **claim}})


def _row(run: Run, type_: str, index: int = 0) -> DomainEvent:
    return [e for e in run.events if e.type == type_][index]


def test_every_honest_dispatch_claim_is_read_back_as_evidence(played: Run) -> None:
    rows = [played.watcher.watch(e) for e in played.events]
    assert [r.verdict for r in rows] == ["evidence"] * len(played.events), [r.detail for r in rows]
    provenance = {r.event_type: r.provenance for r in rows}
    assert provenance == {
        "wo.gathered": "ddb-read",  # the run
        "wo.approval_requested": "ddb-read",  # the recording messenger's records, and the run
        "wo.offered": "ddb-read",
        "wo.dispatched": "wo-read",
    }
    offered = [r for r in rows if r.event_type == "wo.offered"]
    # Read, not claimed: each offer's vendor and its outcome now, from the run.
    assert [(r.read["vendor_id"], r.read["outcome"]) for r in offered] == [
        ("vendor-hollis", "declined"),
        ("vendor-quade", "accepted"),
    ]
    (dispatched,) = [r for r in rows if r.event_type == "wo.dispatched"]
    assert (dispatched.read["vendor_id"], dispatched.read["status"]) == ("vendor-quade", "assigned")
    for row in rows:
        stored = row.model_dump_json()
        for phone in (PM[1], *(p for _, p in VENDORS)):
            assert phone not in stored


def test_an_offer_to_another_vendor_than_the_run_made_is_a_mismatch(played: Run) -> None:
    offered = _row(played, "wo.offered", 1)
    row = played.watcher.check(_forged(offered, vendor_id="vendor-hollis"))
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    assert "vendor_id: claimed 'vendor-hollis', read 'vendor-quade'" in row.detail


def test_an_offer_whose_text_was_never_sent_is_an_unverified_claim(played: Run) -> None:
    offered = _row(played, "wo.offered")
    row = played.watcher.check(_forged(offered, sid="SM" + "0" * 32))
    assert (row.verdict, row.kind) == ("shame", "unverified_claim")
    assert "has no message" in row.detail


def test_an_offer_text_sent_to_another_number_is_a_mismatch(played: Run) -> None:
    """The text exists, but to the other vendor's phone: the read decides, not the claim."""
    offered = _row(played, "wo.offered")
    row = played.watcher.check(_forged(offered, to_sha256=body_digest(VENDORS[1][1])))
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    assert row.read["to_sha256"] == body_digest(VENDORS[0][1])


def test_an_offer_the_run_does_not_record_is_shame(played: Run) -> None:
    offered = _row(played, "wo.offered")
    row = played.watcher.check(_forged(offered, offer_index=3))
    assert (row.verdict, row.kind) == ("shame", "unverified_claim")
    assert "no offer 3" in row.detail
    # The run's offer names another text than the one claimed: not the offer that was made.
    first = played.run().offers[0]
    played.runs.runs[WO_ID] = played.run().model_copy(
        update={"offers": (first.model_copy(update={"sid": None}), *played.run().offers[1:])}
    )
    row = played.watcher.check(offered)
    assert (row.kind, "offer_sid" in row.detail) == ("mismatch", True)


def test_a_claim_of_a_run_version_never_written_is_a_mismatch(played: Run) -> None:
    stored = played.run().version
    for event in played.events:
        if event.type == "wo.dispatched":
            continue
        row = played.watcher.check(_forged(event, run_version=stored + 1))
        assert (row.kind, row.detail) == (
            "mismatch",
            f"run_version: claimed {stored + 1}, read {stored}",
        ), event.type


def test_an_approval_request_is_read_on_the_run_and_by_its_sid(played: Run) -> None:
    asked = _row(played, "wo.approval_requested")
    assert played.watcher.check(asked).read["approval"] == "approved"  # moved on: evidence
    for forged, field_ in (
        (_forged(asked, nte_usd=NTE + 100), "nte_usd"),
        (_forged(asked, person_id="pm-someone-else"), "person_id"),
        (_forged(asked, body_sha256=body_digest(f"Approve {WO_ID} up to $99? YES/NO")), "body"),
    ):
        row = played.watcher.check(forged)
        assert (row.verdict, row.kind) == ("shame", "mismatch")
        assert field_ in row.detail
    row = played.watcher.check(_forged(asked, sid="SM" + "a" * 32))
    assert (row.kind, "has no message" in row.detail) == ("unverified_claim", True)


def test_an_approval_request_the_run_is_not_waiting_on_is_a_mismatch() -> None:
    """At the version the request claims to have left, the run must wait on the PM."""
    run = Run()
    run.gather()
    asked = run.ask_approval()
    assert run.watcher.check(asked).verdict == "evidence"
    stored = run.run()
    run.runs.runs[WO_ID] = stored.model_copy(update={"waiting": None})
    row = run.watcher.check(asked)
    assert (row.kind, "waiting: claimed 'approval', read None" in row.detail) == ("mismatch", True)


def test_an_assignment_is_read_on_the_wo(played: Run) -> None:
    dispatched = _row(played, "wo.dispatched")
    row = played.watcher.check(_forged(dispatched, vendor_id="vendor-hollis"))
    assert (row.kind, row.provenance) == ("mismatch", "wo-read")
    assert "vendor_id: claimed 'vendor-hollis', read 'vendor-quade'" in row.detail
    wo = played.work_orders.get(WO_ID)
    assert wo is not None
    row = played.watcher.check(_forged(dispatched, version=wo.version + 1))
    assert row.detail == f"version: claimed {wo.version + 1}, read {wo.version}"


def test_an_assignment_that_never_reached_the_wo_is_shame() -> None:
    run = Run()
    run.gather()
    run.offer(1)
    event = run.publish("wo.dispatched", {"vendor_id": VENDORS[0][0], "version": 2})
    row = run.watcher.check(event)
    assert (row.verdict, row.kind) == ("shame", "mismatch")
    assert "vendor_id: claimed 'vendor-hollis', read None" in row.detail
    run.work_orders._items.clear()
    assert run.watcher.check(event).kind == "unverified_claim"


def test_a_later_change_to_the_assigned_wo_is_not_shame(played: Run) -> None:
    dispatched = _row(played, "wo.dispatched")
    wo = played.work_orders.get(WO_ID)
    assert wo is not None
    played.work_orders.update(wo.transition(WorkOrderStatus.CANCELLED, T0), wo.version)
    assert played.watcher.check(dispatched).verdict == "evidence"


def test_what_was_gathered_is_read_on_the_run(played: Run) -> None:
    gathered = _row(played, "wo.gathered")
    row = played.watcher.check(_forged(gathered, have="trade,location,access,pets"))
    assert (row.kind, row.provenance) == ("mismatch", "ddb-read")
    assert "have: claimed 'trade,location,access,pets'" in row.detail
    row = played.watcher.check(_forged(gathered, by="deadline"))
    assert "by: claimed 'deadline', read 'tenant'" in row.detail
    played.runs.runs.clear()
    row = played.watcher.check(gathered)
    assert (row.kind, row.detail) == ("unverified_claim", f"no dispatch run for {WO_ID}")


def test_a_skipped_gather_is_read_as_skipped() -> None:
    run = Run()
    run.runs.put(DispatchRun(wo_id=WO_ID, started_at=T0, updated_at=T0), None)
    changed = run.change(gathered=Gathered(skipped="urgent: no time to ask"))
    event = run.publish(
        "wo.gathered", {"asked": "", "have": "", "by": "skipped", "run_version": changed.version}
    )
    assert run.watcher.check(event).verdict == "evidence"
    assert run.watcher.check(_forged(event, by="nothing_missing")).kind == "mismatch"


@pytest.mark.parametrize(
    ("reason", "step", "changes"),
    [
        ("no_vendor", "no_vendor", {}),
        ("refused_by_pm", "refused_by_pm", {"approval": "refused"}),
        ("approval_timed_out", "no_vendor", {"approval": "timed_out"}),
    ],
)
def test_a_failed_dispatch_is_read_on_the_run_and_its_page_by_sid(
    reason: str, step: str, changes: dict[str, Any]
) -> None:
    run = Run()
    run.gather()
    if reason == "no_vendor":
        run.offer(1)
        run.answer(1, "timed_out")
    failed = run.page(reason, step, **changes)
    row = run.watcher.check(failed)
    assert row.verdict == "evidence", row.detail
    assert row.read["paged_sid"] == failed.claim["paged_sid"]
    other = "no_vendor" if reason != "no_vendor" else "refused_by_pm"
    assert run.watcher.check(_forged(failed, reason=other)).kind == "mismatch"
    assert run.watcher.check(_forged(failed, offers=2)).kind == "mismatch"
    row = run.watcher.check(_forged(failed, paged_sid="SM" + "b" * 32))
    assert (row.kind, "has no message" in row.detail) == ("unverified_claim", True)


def test_a_failure_claimed_while_the_run_goes_on_is_a_mismatch() -> None:
    run = Run()
    run.gather()
    run.offer(1)
    event = run.publish(
        "wo.dispatch_failed",
        {"reason": "no_vendor", "offers": 1, "run_version": run.run().version},
    )
    row = run.watcher.check(event)
    assert (row.kind, "reason: claimed 'no_vendor', read None" in row.detail) == ("mismatch", True)


def test_an_approval_asked_of_the_fallback_number_quotes_no_number() -> None:
    """No PM on call: the approval goes to the account's fallback number, which is then the
    wait's party; the row reads it back masked, never whole."""
    run = Run()
    run.gather()
    asked = run.ask_approval()
    claim = {k: v for k, v in asked.claim.items() if k != "person_id"}
    run.runs.runs[WO_ID] = run.run().model_copy(update={"approver_id": PM[1]})
    row = run.watcher.watch(asked.model_copy(update={"claim": claim}))
    assert row.verdict == "evidence", row.detail
    assert PM[1] not in row.model_dump_json()
    assert row.read["approver_id"] != PM[1]
