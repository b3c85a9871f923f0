"""The work order machine's steps over fakes: what each reads, writes, texts and claims, and that
a retried step (Step Functions retries a Lambda) writes and texts nothing twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.dispatch.entry import policy_of
from maestro.dispatch.errors import WorkOrderClosed
from maestro.dispatch.steps import Dispatch, DispatchDeps
from maestro.domain.directory import Directory, Person, PersonRole, Property, Trade, Unit, Vendor
from maestro.domain.dispatch import DispatchRun, run_package_id
from maestro.domain.models import Urgency, WorkOrder, WorkOrderStatus
from maestro.domain.timeline import NoteEntry
from maestro.ports.messaging import SendFailedError
from maestro.ports.stores import StaleVersionError
from maestro.settings import DispatchPolicySettings
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDirectory,
    InMemoryDispatchStore,
    InMemoryPartyDirectory,
    InMemoryStateStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
)

NOW = datetime(2027, 4, 6, 15, 0, tzinfo=UTC)  # a Tuesday, 15:00 UTC: business hours there
EXECUTION = "arn:aws:states:us-east-1:1:execution:maestro-work-order:WO-OAK1"
OAK = Property(property_id="oak", name="Oak Court", address="12 Oak Ct", timezone="UTC")
TENANT = Person(
    person_id="t-ines",
    role=PersonRole.TENANT,
    name="Ines",
    phones=("+13125550401",),
    unit_id="oak-2a",
)
PM = Person(
    person_id="pm-odile",
    role=PersonRole.PM,
    name="Odile",
    phones=("+13125550402",),
    property_ids=("oak",),
)
FIRST = Vendor(
    vendor_id="v-pipes",
    name="Pipes & Co",
    phone="+13125550403",
    trades=(Trade.PLUMBING,),
    rank=1,
)
SECOND = Vendor(
    vendor_id="v-drain",
    name="Drain Duo",
    phone="+13125550404",
    trades=(Trade.PLUMBING,),
    property_ids=("oak",),
    rank=2,
)
DIRECTORY = Directory(
    properties=(OAK,),
    units=(Unit(unit_id="oak-2a", property_id="oak", label="2A"),),
    people=(TENANT, PM),
    vendors=(FIRST, SECOND),
)


class Rig:
    def __init__(self, urgency: Urgency = Urgency.ROUTINE) -> None:
        self.clock = FixedClock(NOW)
        self.wos = InMemoryWorkOrderStore(
            [
                WorkOrder(
                    wo_id="WO-OAK1",
                    tenant_id="t-ines",
                    unit="oak-2a",
                    property_id="oak",
                    summary="water pooling under the bathroom basin",
                    category="plumbing",
                    urgency=urgency,
                    created_at=NOW,
                    updated_at=NOW,
                )
            ]
        )
        self.runs = InMemoryDispatchStore()
        self.timeline = InMemoryTimeline()
        self.messenger = RecordingMessenger()
        self.bus = InMemoryBus()
        self.state = InMemoryStateStore()
        settings = DispatchPolicySettings()
        self.dispatch = Dispatch(
            DispatchDeps(
                runs=self.runs,
                work_orders=self.wos,
                timeline=self.timeline,
                directory=InMemoryDirectory(DIRECTORY),
                parties=InMemoryPartyDirectory(DIRECTORY.parties()),
                state=self.state,
                messenger=self.messenger,
                bus=self.bus,
                clock=self.clock,
                policy=policy_of(settings),
                gather_deadline_seconds=settings.gather_deadline_seconds,
                approval_timeout_seconds=settings.approval_timeout_seconds,
                on_call_pm_phone="+13125550499",
            )
        )

    @property
    def run(self) -> DispatchRun:
        run = self.runs.get("WO-OAK1")
        assert run is not None
        return run

    def events(self, type_: str) -> list[Any]:
        return [e for e in self.bus.events.values() if e.type == type_]

    def gather(self) -> dict[str, Any]:
        return self.dispatch.gather({"wo_id": "WO-OAK1", "execution": EXECUTION})

    def ask(self, kind: str, index: int | None = None, token: str = "tok-1") -> dict[str, Any]:
        payload = {
            "wo_id": "WO-OAK1",
            "token": token,
            "execution": EXECUTION,
            "kind": kind,
            "timeout_seconds": 900,
        }
        if index is not None:
            payload["offer_index"] = index
        return self.dispatch.ask(payload)

    def record(self, kind: str, answer: dict[str, Any], index: int | None = None) -> str:
        payload = {"wo_id": "WO-OAK1", "kind": kind, "answer": answer}
        if index is not None:
            payload["offer_index"] = index
        return str(self.dispatch.record(payload)["outcome"])

    def judged(self) -> dict[str, Any]:
        self.gather()
        return self.dispatch.judge({"wo_id": "WO-OAK1"})


TIMEOUT = {"Error": "States.Timeout", "Cause": "no answer"}


def test_gather_makes_the_run_and_asks_nothing_of_an_urgent_job() -> None:
    rig = Rig(Urgency.URGENT)
    result = rig.gather()
    assert result["missing"] == []
    assert result["skip"]
    assert rig.run.execution_arn == EXECUTION
    assert rig.run.step == "gathering"
    (gathered,) = rig.events("wo.gathered")
    assert gathered.claim["by"] == "skipped"
    assert gathered.package_id == run_package_id("WO-OAK1")
    assert rig.messenger.sent == []


def test_asking_the_tenant_texts_once_stores_the_wait_and_marks_the_wo_awaiting() -> None:
    rig = Rig()
    result = rig.gather()
    assert result["missing"]
    assert result["deadline_seconds"] == DispatchPolicySettings().gather_deadline_seconds
    assert rig.events("wo.gathered") == []  # said when answered, or at the deadline
    rig.ask("gather")
    rig.ask("gather")  # Step Functions retried the Lambda: the same text, not a second one
    (question,) = rig.messenger.to(TENANT.phones[0])
    assert "WO-OAK1" in question.body
    wait = rig.run.waiting
    assert wait is not None
    assert (wait.kind, wait.party_id, wait.token) == ("gather", "t-ines", "tok-1")
    assert wait.deadline == NOW + timedelta(seconds=900)
    assert wait.question_sid == question.sid
    state = rig.state.get("WO-OAK1")
    assert state is not None
    assert [o.kind for o in state.outstanding] == ["answer"]
    assert rig.runs.waiting_for("t-ines") == [rig.run]


def test_an_answer_or_the_deadline_is_recorded_and_the_wo_awaits_the_tenant_no_more() -> None:
    rig = Rig()
    rig.gather()
    rig.ask("gather")
    answer = {"kind": "gather", "answer": "details", "party_id": "t-ines", "items": ["access"]}
    assert rig.record("gather", {**answer, "package_id": "pkg-9"}) == "answered"
    gathered = rig.run.gathered
    assert gathered is not None
    assert "access" in gathered.have
    assert gathered.answered_by == ("pkg-9",)
    assert rig.run.waiting is None
    state = rig.state.get("WO-OAK1")
    assert state is not None
    assert state.outstanding == ()
    (event,) = rig.events("wo.gathered")
    assert event.claim["by"] == "tenant"

    late = Rig()
    late.gather()
    late.ask("gather")
    assert late.record("gather", TIMEOUT) == "timed_out"
    assert late.run.gathered is not None
    assert late.run.gathered.by_deadline
    assert late.events("wo.gathered")[0].claim["by"] == "deadline"


def test_judge_records_the_judgment_and_hands_the_execution_ids_only() -> None:
    rig = Rig()
    judged = rig.judged()
    assert judged["vendors"] == ["v-pipes", "v-drain"]
    assert judged["trade"] == "plumbing"
    assert judged["offer_timeout_seconds"] == 14_400
    assert judged["approval_timeout_seconds"] == DispatchPolicySettings().approval_timeout_seconds
    assert "Pipes" not in str(judged)  # names stay on the run, out of the execution's history
    judgment = rig.run.judgment
    assert judgment is not None
    assert [v.name for v in judgment.vendors] == ["Pipes & Co", "Drain Duo"]


def test_an_offer_texts_the_vendor_once_and_a_timeout_tells_them_it_lapsed() -> None:
    rig = Rig()
    rig.judged()
    rig.ask("offer", 1)
    rig.ask("offer", 1)
    (offer,) = rig.messenger.to(FIRST.phone)
    assert "WO-OAK1" in offer.body
    assert rig.run.step == "offering"
    assert [(o.index, o.vendor_id, o.sid) for o in rig.run.offers] == [(1, "v-pipes", offer.sid)]
    waiting = rig.run.waiting
    assert waiting is not None
    assert (waiting.party_id, waiting.offer_index) == ("v-pipes", 1)
    (claimed,) = rig.events("wo.offered")
    assert (claimed.subject_id, claimed.claim["sid"]) == ("WO-OAK1", offer.sid)
    assert rig.record("offer", TIMEOUT, 1) == "timed_out"
    assert rig.run.offers[0].outcome == "timed_out"
    assert len(rig.messenger.to(FIRST.phone)) == 2  # the offer, then that it lapsed
    rig.ask("offer", 2, token="tok-2")
    decline = {"kind": "offer", "answer": "decline", "party_id": "v-drain"}
    assert rig.record("offer", decline, 2) == "declined"
    assert [o.outcome for o in rig.run.offers] == ["timed_out", "declined"]
    assert len(rig.messenger.to(SECOND.phone)) == 1  # a decline needs no text from here


def test_an_offer_to_a_closed_wo_is_not_made_and_the_run_ends() -> None:
    rig = Rig()
    rig.judged()
    wo = rig.wos.get("WO-OAK1")
    assert wo is not None
    rig.wos.update(wo.transition(WorkOrderStatus.CANCELLED, NOW), expected_version=wo.version)
    with pytest.raises(WorkOrderClosed):
        rig.ask("offer", 1)
    assert rig.messenger.sent == []
    assert rig.run.step == "closed"
    (failed,) = rig.events("wo.dispatch_failed")
    assert failed.claim["reason"] == "closed"


def test_a_withdrawn_offer_tells_the_vendor_and_closes_the_run() -> None:
    rig = Rig()
    rig.judged()
    rig.ask("offer", 1)
    withdrawn = {"kind": "offer", "answer": "withdrawn", "reason": "cancelled by the tenant"}
    assert rig.record("offer", withdrawn, 1) == "withdrawn"
    assert len(rig.messenger.to(FIRST.phone)) == 2
    assert rig.run.step == "closed"
    assert rig.run.offers[0].outcome == "withdrawn"


def test_assign_gives_the_wo_its_vendor_and_tells_both_once() -> None:
    rig = Rig()
    rig.judged()
    rig.timeline.append(
        NoteEntry(
            wo_id="WO-OAK1",
            entry_id="n1",
            at=NOW,
            package_id="pkg-1",
            what="note",
            note="spare key with the concierge",
        )
    )
    rig.ask("offer", 1)
    rig.record("offer", {"kind": "offer", "answer": "accept", "party_id": "v-pipes"}, 1)
    first = rig.dispatch.assign({"wo_id": "WO-OAK1", "offer_index": 1})
    again = rig.dispatch.assign({"wo_id": "WO-OAK1", "offer_index": 1})  # a retried Lambda
    assert first == again == {"vendor_id": "v-pipes", "version": 2}
    wo = rig.wos.get("WO-OAK1")
    assert wo is not None
    assert (wo.status, wo.vendor_id, wo.version) == (WorkOrderStatus.ASSIGNED, "v-pipes", 2)
    assert len(rig.messenger.to(FIRST.phone)) == 2  # the offer, then the access details
    assert "concierge" in rig.messenger.to(FIRST.phone)[1].body
    (told,) = rig.messenger.to(TENANT.phones[0])
    assert "WO-OAK1" in told.body
    statuses = [e for e in rig.timeline.for_wo("WO-OAK1") if e.kind == "status"]
    assert len(statuses) == 1
    assert rig.run.step == "assigned"
    (dispatched,) = rig.events("wo.dispatched")
    assert (dispatched.claim["vendor_id"], dispatched.claim["version"]) == ("v-pipes", 2)


def test_no_vendor_pages_the_propertys_pm_and_a_refusal_pages_nobody() -> None:
    rig = Rig()
    rig.judged()
    rig.dispatch.page({"wo_id": "WO-OAK1", "reason": "no_vendor"})
    (page,) = rig.messenger.to(PM.phones[0])  # no shift: the property's default PM
    assert "WO-OAK1" in page.body
    assert rig.run.step == "no_vendor"
    (failed,) = rig.events("wo.dispatch_failed")
    assert (failed.claim["reason"], failed.claim["paged_sid"]) == ("no_vendor", page.sid)

    refused = Rig()
    refused.judged()
    assert refused.dispatch.page({"wo_id": "WO-OAK1", "reason": "refused_by_pm"}) == {
        "paged_sid": None
    }
    assert refused.messenger.sent == []
    assert refused.run.step == "refused_by_pm"


def test_a_write_that_meets_the_pipelines_write_reads_again_and_keeps_both() -> None:
    rig = Rig()
    rig.judged()
    rig.ask("offer", 1)
    real_put = rig.runs.put
    raced = []

    def put_after_a_race(run: DispatchRun, expected_version: int | None) -> None:
        if not raced:  # the package pipeline writes the run between our read and our write
            raced.append(True)
            current = rig.run
            real_put(current.changed(NOW, outcome="touched"), expected_version=current.version)
            raise StaleVersionError(run.wo_id)
        real_put(run, expected_version)

    rig.runs.put = put_after_a_race  # type: ignore[method-assign]
    rig.record("offer", {"kind": "offer", "answer": "decline"}, 1)
    assert rig.run.outcome == "touched"
    assert rig.run.offers[0].outcome == "declined"


class _FailingMessenger(RecordingMessenger):
    """Twilio fails every text to one number through every retry."""

    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing

    def send(self, to: str, body: str, *, idempotency_key: str) -> Any:
        if to == self.failing:
            raise SendFailedError(idempotency_key, "503", transient=True, attempts=4)
        return super().send(to, body, idempotency_key=idempotency_key)


def test_an_offer_twilio_cannot_send_still_waits_and_a_page_that_cannot_go_fails() -> None:
    rig = Rig()
    rig.dispatch.deps.messenger = _FailingMessenger(FIRST.phone)
    rig.judged()
    rig.ask("offer", 1)  # the wait is entered: unanswered, it times out to the next vendor
    assert rig.run.waiting is not None
    assert rig.run.offers[0].sid is None
    assert rig.events("wo.offered") == []  # nothing was sent: nothing is claimed
    rig.dispatch.deps.messenger = _FailingMessenger(PM.phones[0])
    with pytest.raises(SendFailedError):
        rig.dispatch.page({"wo_id": "WO-OAK1", "reason": "no_vendor"})
