"""The package pipeline's side of a WO execution's waits, on in-memory fakes: the lease snapshot
carries the sender's open waits (never a token), resolve answers an open offer or approval first,
the answer_wait lane completes the token and says what it did, a tenant's words during gather
complete that wait, and a WO closed while its run waits withdraws the wait."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from maestro.brain.stage_models import models_for
from maestro.domain.actions import (
    AnswerWait,
    AnswerWaitParams,
    RelayToOpenWo,
    RelayToOpenWoParams,
    ScheduleVisit,
    ScheduleVisitParams,
)
from maestro.domain.dispatch import DispatchRun, Wait, WaitAnswer, WaitKind
from maestro.domain.dispose import QueuedAction
from maestro.domain.execution_input import PackageRef
from maestro.domain.models import (
    FlushTrigger,
    MediaRef,
    Message,
    Package,
    Party,
    PartyRole,
    WorkOrder,
    WorkOrderStatus,
)
from maestro.domain.records import PendingClarification
from maestro.domain.timeline import NoteEntry
from maestro.lanes.dispatch_waits import gather_items
from maestro.pipeline.contract import ActItem
from maestro.pipeline.entry import run_step
from maestro.pipeline.shared import Pipeline, PipelineDeps
from maestro.ports.messaging import SendFailedError, SentMessage
from maestro_dev.fakes import (
    FixedClock,
    InMemoryBus,
    InMemoryDecisionLog,
    InMemoryDispatchStore,
    InMemoryGates,
    InMemoryLeases,
    InMemoryPartyDirectory,
    InMemoryPendingStore,
    InMemoryStateStore,
    InMemoryTimeline,
    InMemoryWorkOrderStore,
    RecordingMessenger,
    RecordingTaskTokens,
)

T0 = datetime(2026, 9, 8, 15, 0, tzinfo=UTC)
TENANT = Party(party_id="tenant-lena", role=PartyRole.TENANT, phone="+14155550131", unit="7A")
ROSA = Party(party_id="vendor-rosa", role=PartyRole.VENDOR, phone="+14155550181", name="Rosa")
OMAR = Party(party_id="vendor-omar", role=PartyRole.VENDOR, phone="+14155550183", name="Omar")
PM = Party(
    party_id="pm-ana",
    role=PartyRole.PM,
    phone="+14155550182",
    name="Ana",
    property_ids=("prop-birch",),
)
PM_FALLBACK = "+14155550199"


def _wo(wo_id: str, **changes: Any) -> WorkOrder:
    data: dict[str, Any] = {
        "wo_id": wo_id,
        "tenant_id": TENANT.party_id,
        "unit": "7A",
        "property_id": "prop-birch",
        "summary": "water heater pilot keeps going out",
        "category": "plumbing",
        "created_at": T0 - timedelta(hours=1),
        "updated_at": T0 - timedelta(hours=1),
    }
    return WorkOrder.model_validate({**data, **changes})


def _run(wo_id: str, kind: WaitKind, party: Party, index: int | None = None) -> DispatchRun:
    step = {"gather": "gathering", "approval": "awaiting_approval", "offer": "offering"}[kind]
    return DispatchRun(
        wo_id=wo_id,
        execution_arn=f"arn:aws:states:us-east-1:000000000000:execution:wo:{wo_id}",
        step=step,  # type: ignore[arg-type]
        started_at=T0 - timedelta(minutes=30),
        updated_at=T0 - timedelta(minutes=10),
        waiting=Wait(
            kind=kind,
            token=f"token-{wo_id}-{kind}-{index or 0}",
            party_id=party.party_id,
            started_at=T0 - timedelta(minutes=10),
            deadline=T0 + timedelta(hours=2),
            offer_index=index,
            vendor_id=party.party_id if kind == "offer" else None,
        ),
    )


@dataclass
class World:
    wos: list[WorkOrder] = field(default_factory=lambda: [_wo("WO-410")])
    runs: list[DispatchRun] = field(default_factory=list)
    clock: FixedClock = field(default_factory=lambda: FixedClock(T0))
    flushes: dict[str, int] = field(default_factory=dict)
    seq: int = 0

    def __post_init__(self) -> None:
        self.work_orders = InMemoryWorkOrderStore(self.wos)
        self.dispatch = InMemoryDispatchStore()
        self.dispatch.runs.update((run.wo_id, run) for run in self.runs)
        self.tokens = RecordingTaskTokens()
        self.messenger = RecordingMessenger()
        self.pending = InMemoryPendingStore()
        self.timeline = InMemoryTimeline()
        self.leases = InMemoryLeases()
        self.pipeline = Pipeline(
            PipelineDeps(
                buffer=self.leases,  # type: ignore[arg-type]
                parties=InMemoryPartyDirectory([TENANT, ROSA, OMAR, PM]),
                work_orders=self.work_orders,
                timeline=self.timeline,
                pending=self.pending,
                decisions=InMemoryDecisionLog(),
                state=InMemoryStateStore(),
                messenger=self.messenger,
                bus=InMemoryBus(),
                models=models_for(None),
                gates=InMemoryGates(),
                clock=self.clock,
                on_call_pm_phone=PM_FALLBACK,
                dispatch=self.dispatch,
                tokens=self.tokens,
            )
        )

    def package(self, who: Party, text: str) -> Package:
        conversation = f"conv-{who.party_id}"
        self.flushes[conversation] = self.flushes.get(conversation, 0) + 1
        self.seq += 1
        message = Message(
            message_id=f"SM{self.seq:05d}",
            conversation_id=conversation,
            from_phone=who.phone,
            body=text,
            received_at=self.clock.now(),
            seq=self.seq,
        )
        self.leases.messages[(conversation, self.seq)] = message
        return Package(
            package_id=f"pkg-{conversation}-{self.flushes[conversation]}",
            conversation_id=conversation,
            flush_number=self.flushes[conversation],
            trigger=FlushTrigger.IDLE_TIMEOUT,
            sender_phone=who.phone,
            messages=(message,),
            flushed_at=self.clock.now(),
        )

    def state(self, package: Package) -> dict[str, Any]:
        return json.loads(
            json.dumps(
                {
                    "package_id": package.package_id,
                    "conversation_id": package.conversation_id,
                    "flush_number": package.flush_number,
                    "step": False,
                    "package": package.model_dump(mode="json"),
                    "package_ref": PackageRef.of(package).model_dump(mode="json"),
                }
            )
        )

    def send(self, who: Party, text: str) -> dict[str, Any]:
        """The ASL's order for a reasoning package: pre-check, lease, resolve, [brain], dispose,
        act…, persist; JSON between the steps."""
        state = self.until_dispose(who, text)
        state["effects"] = [self.act(state, queued) for queued in state["disposal"]["actions"]]
        state["persisted"] = run_step(self.pipeline, "persist", state)
        return state

    def until_dispose(self, who: Party, text: str) -> dict[str, Any]:
        p = self.pipeline
        state = self.state(self.package(who, text))
        state["precheck"] = run_step(p, "precheck", state)
        state["lease"] = run_step(p, "lease", state)
        state["resolution"] = run_step(p, "resolve", state)
        if state["resolution"]["route"] == "brain":
            state["brain"] = run_step(p, "brain", state)
        state["disposal"] = run_step(p, "dispose", state)
        return state

    def act(self, state: dict[str, Any], queued: dict[str, Any]) -> dict[str, Any]:
        return run_step(
            self.pipeline,
            "act",
            {
                "queued": queued,
                **{k: state[k] for k in ("package_id", "conversation_id", "flush_number")},
                **{k: state[k] for k in ("package", "package_ref", "lease", "step")},
            },
        )

    def bodies(self, who: Party) -> list[str]:
        return [m.body for m in self.messenger.to(who.phone)]


def _lanes(state: dict[str, Any]) -> list[str]:
    return [e["lane"] for e in state["effects"]]


def _answer(world: World, token: str) -> WaitAnswer:
    (output,) = world.tokens.outputs(token)
    return WaitAnswer.model_validate(output)


# -- the lease snapshot ------------------------------------------------------------------------


def test_the_lease_snapshot_names_the_senders_open_waits_but_never_the_token() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 2)])
    state = world.state(world.package(ROSA, "hello"))
    state["precheck"] = run_step(world.pipeline, "precheck", state)
    lease = run_step(world.pipeline, "lease", state)
    assert [(w["wo_id"], w["kind"], w["offer_index"]) for w in lease["waits"]] == [
        ("WO-410", "offer", 2)
    ]
    assert "token-WO-410" not in json.dumps(lease)  # the console shows the state: no token in it
    # Another party's package sees none of Rosa's waits.
    other = world.state(world.package(OMAR, "hello"))
    other["precheck"] = run_step(world.pipeline, "precheck", other)
    assert run_step(world.pipeline, "lease", other)["waits"] == []


# -- a vendor's answer to their offer ----------------------------------------------------------


def test_a_vendors_yes_goes_to_the_offer_while_a_rating_request_and_a_question_are_out() -> None:
    """Naive: the open question of theirs (and the brain, reading a WO with a rating request
    out) got the "yes": the offer was never answered and timed out."""
    done = _wo(
        "WO-377",
        vendor_id=ROSA.party_id,
        status=WorkOrderStatus.COMPLETED,
        rating_requested=True,
        summary="stuck bedroom window",
    )
    world = World(wos=[_wo("WO-410"), done], runs=[_run("WO-410", "offer", ROSA, 1)])
    world.pending.put_clarification(
        PendingClarification(
            clarification_id="clar-rosa-1",
            package_id="pkg-earlier",
            conversation_id=f"conv-{ROSA.party_id}",
            party_id=ROSA.party_id,
            question="Which one do you mean? 1) WO-377 2) WO-390",
            candidate_ids=("WO-377", "WO-390"),
            asked_at=T0 - timedelta(minutes=3),
            expires_at=T0 + timedelta(hours=1),
        )
    )
    state = world.until_dispose(ROSA, "yeah I'll take it")
    (queued,) = state["disposal"]["actions"]
    state["effects"] = [world.act(state, queued)]

    assert state["resolution"]["kind"] == "wait"
    assert _lanes(state) == ["answer_wait"]
    answer = _answer(world, "token-WO-410-offer-1")
    assert (answer.kind, answer.answer, answer.party_id) == ("offer", "accept", ROSA.party_id)
    assert answer.package_id == state["package_id"]
    assert world.bodies(ROSA) == [
        "Noted: you've accepted WO-410. The job details follow in a separate text."
    ]
    # Nothing else took it: no rating, and the question is still open.
    assert world.work_orders.get("WO-377").rating is None  # type: ignore[union-attr]
    # A retry of the act step: the token is gone by then, and nothing is texted again.
    world.act(state, queued)
    assert len(world.tokens.succeeded) == 1
    assert len(world.bodies(ROSA)) == 1
    questions, _ = world.pending.open_items(ROSA.party_id)
    assert [q.clarification_id for q in questions] == ["clar-rosa-1"]


def test_a_decline_in_spanish_is_said_back_in_spanish() -> None:
    rosa = ROSA.model_copy(update={"language": "es"})
    world = World(runs=[_run("WO-410", "offer", rosa, 1)])
    world.pipeline.deps.parties = InMemoryPartyDirectory([TENANT, rosa, PM])
    world.send(rosa, "no puedo, tengo otro trabajo")
    assert _answer(world, "token-WO-410-offer-1").answer == "decline"
    assert world.bodies(rosa) == ["Anotado: ha rechazado WO-410. Gracias por avisarnos."]


def test_an_unclear_reply_is_asked_again_and_completes_nothing() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    state = world.send(ROSA, "maybe")
    assert _lanes(state) == ["answer_wait"]
    assert world.tokens.succeeded == []
    assert world.bodies(ROSA) == ["Reply 1 to accept WO-410, 2 to decline."]


def test_a_vendors_other_news_goes_to_the_brain_and_the_offer_stays_open() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    state = world.send(ROSA, "finished the sink at 9C this morning, all good")
    assert state["resolution"]["route"] == "brain"
    assert "answer_wait" not in _lanes(state)
    assert world.tokens.succeeded == []


def test_an_offer_that_moved_on_is_no_longer_open() -> None:
    """The offer timed out and went to the next vendor between the lease and the act: the late
    "1" completes nothing, and the vendor hears so."""
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    state = world.until_dispose(ROSA, "1")
    moved = _run("WO-410", "offer", OMAR, 2)
    current = world.dispatch.runs["WO-410"]
    world.dispatch.put(moved.model_copy(update={"version": current.version + 1}), current.version)
    (queued,) = state["disposal"]["actions"]
    world.act(state, queued)
    assert world.tokens.succeeded == []
    assert world.bodies(ROSA) == ["That offer for WO-410 is no longer open."]


def test_a_token_that_waits_no_more_is_said_plainly_and_a_rerun_texts_nothing_new() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    world.tokens.gone.add("token-WO-410-offer-1")  # the execution timed it out already
    state = world.until_dispose(ROSA, "sure")
    (queued,) = state["disposal"]["actions"]
    world.act(state, queued)
    assert world.bodies(ROSA) == ["That offer for WO-410 is no longer open."]
    world.act(state, queued)  # a retry of the act step: the one key, the one text
    assert len(world.bodies(ROSA)) == 1


# -- a PM's answer to an approval --------------------------------------------------------------


def test_a_pms_yes_and_no_answer_their_approvals() -> None:
    world = World(
        wos=[_wo("WO-410"), _wo("WO-412", summary="ceiling fan wobbles")],
        runs=[_run("WO-410", "approval", PM), _run("WO-412", "approval", PM)],
    )
    world.send(PM, "YES")  # two open, none named: asked which, nothing approved
    assert world.tokens.succeeded == []
    assert "WO-410 and WO-412" in world.bodies(PM)[-1]

    world.send(PM, "ok go ahead with WO-412")
    assert _answer(world, "token-WO-412-approval-0").answer == "approve"
    assert world.bodies(PM)[-1].startswith("Noted: you've approved WO-412.")

    world.dispatch.runs["WO-412"] = world.dispatch.runs["WO-412"].model_copy(
        update={"waiting": None, "step": "offering"}
    )
    world.send(PM, "too expensive, no")  # one left open: this is its answer
    assert _answer(world, "token-WO-410-approval-0").answer == "refuse"
    assert world.bodies(PM)[-1] == "Noted: you've refused WO-410, so no vendor will be offered it."


# -- gather, and a WO closed while its run waits -----------------------------------------------


def _act(world: World, who: Party, text: str, action: Any) -> dict[str, Any]:
    package = world.package(who, text)
    state = world.state(package)
    state["precheck"] = run_step(world.pipeline, "precheck", state)
    lease = run_step(world.pipeline, "lease", state)
    queued = QueuedAction(
        index=0,
        idempotency_key=f"{package.package_id}#0",
        action=action,
        decision_id=f"{package.package_id}#dispose#0",
    )
    item = ActItem(
        queued=queued,
        package_id=package.package_id,
        conversation_id=package.conversation_id,
        flush_number=package.flush_number,
        package=package,
        package_ref=PackageRef.of(package),
        lease=lease,  # type: ignore[arg-type]
    )
    return run_step(world.pipeline, "act", json.loads(item.model_dump_json()))


def test_the_tenants_details_during_gather_complete_the_wait_and_she_hears_the_truth() -> None:
    """Naive: the relay answered "no vendor assigned yet" (and relayed nothing) while the WO's
    execution waited on these very details until its deadline."""
    world = World(runs=[_run("WO-410", "gather", TENANT)])
    words = "the super has a key so you can let yourselves in, and we have a shy cat"
    outcome = _act(
        world,
        TENANT,
        words,
        RelayToOpenWo(target_wo_id="WO-410", params=RelayToOpenWoParams(note=words)),
    )
    answer = _answer(world, "token-WO-410-gather-0")
    assert (answer.kind, answer.answer, answer.items) == ("gather", "details", ("access", "pets"))
    assert answer.party_id == TENANT.party_id
    (told,) = world.bodies(TENANT)
    assert told.startswith("Thanks, I've added that to WO-410")
    assert "finding a vendor" in told
    assert "no vendor assigned yet" not in outcome["note"]
    assert "gather wait answered" in outcome["note"]
    # The words are on the WO's timeline (an erase reaches them), not in the execution.
    assert words in json.dumps([e.model_dump(mode="json") for e in world.timeline.for_wo("WO-410")])
    assert words not in json.dumps(world.tokens.succeeded)


def test_someone_elses_words_or_another_kind_of_wait_complete_no_gather() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    _act(
        world,
        TENANT,
        "it's the left tap",
        RelayToOpenWo(target_wo_id="WO-410", params=RelayToOpenWoParams(note="it's the left tap")),
    )
    assert world.tokens.succeeded == []


def test_a_wo_cancelled_while_its_offer_is_open_withdraws_the_wait() -> None:
    """Naive: the cancel changed the WO only; the execution went on waiting for the vendor's
    answer and, after its timeout, offered the cancelled job to the next vendor."""
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    world.send(TENANT, "please cancel WO-410, my landlord's cousin fixed it")
    assert world.tokens.succeeded == []  # held until YES: nothing changed yet
    world.send(TENANT, "YES")
    assert world.work_orders.get("WO-410").status is WorkOrderStatus.CANCELLED  # type: ignore[union-attr]
    answer = _answer(world, "token-WO-410-offer-1")
    assert (answer.kind, answer.answer, answer.party_id) == ("offer", "withdrawn", None)
    assert "cancelled" in answer.reason
    # The vendor is told by the run's own step (wo_record), not by the tenant's package.
    assert world.bodies(ROSA) == []


def test_an_answer_wait_never_reaches_the_brain_or_its_schema() -> None:
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    state = world.send(ROSA, "tell me more about the heater job?")
    assert state["resolution"]["route"] == "brain"
    for sample in state["brain"]["samples"]:
        assert all(a["lane"] != "answer_wait" for a in sample.get("actions") or [])


def test_the_lane_asks_which_with_each_open_wait_named() -> None:
    world = World(
        wos=[_wo("WO-410"), _wo("WO-412")],
        runs=[_run("WO-410", "offer", ROSA, 1), _run("WO-412", "offer", ROSA, 1)],
    )
    _act(
        world,
        ROSA,
        "1",
        AnswerWait(
            params=AnswerWaitParams(kind="offer", answer="unclear", candidates=("WO-410", "WO-412"))
        ),
    )
    assert world.bodies(ROSA) == [
        "You have offers open for WO-410 and WO-412. Reply 1 to accept or 2 to decline with "
        'the work order, e.g. "1 WO-410".'
    ]


def test_a_tenants_photo_counts_as_a_photo_given() -> None:
    world = World()
    package = world.package(TENANT, "here it is, no pets here")

    def sent_with(*refs: MediaRef) -> Package:
        message = package.messages[0].model_copy(update={"media": refs})
        return package.model_copy(update={"messages": (message,)})

    photo = MediaRef(url="https://api.twilio.com/media/ME1", content_type="image/jpeg")
    video = MediaRef(url="https://api.twilio.com/media/ME2", content_type="video/mp4")
    assert gather_items(sent_with(photo)) == ("pets", "photo")
    assert gather_items(sent_with(video)) == ("pets",)  # a video shows no part or label
    assert gather_items(package) == ("pets",)


def test_an_offer_asked_again_and_again_brings_the_pm_in_instead() -> None:
    """Naive: every unclear reply got the same "Reply 1 to accept…" again, forever."""
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    world.send(ROSA, "hmm")
    world.clock.at += timedelta(minutes=2)
    world.send(ROSA, "umm what")
    world.clock.at += timedelta(minutes=2)
    third = world.send(ROSA, "eh")
    assert _lanes(third) == ["escalate"]  # the guard broke in: the PM gets the trail
    assert world.bodies(ROSA)[:2] == ["Reply 1 to accept WO-410, 2 to decline."] * 2
    assert world.tokens.succeeded == []


def test_the_tenants_availability_during_gather_completes_the_wait_too() -> None:
    world = World(runs=[_run("WO-410", "gather", TENANT)])
    outcome = _act(
        world,
        TENANT,
        "any weekday after 5",
        ScheduleVisit(
            target_wo_id="WO-410", params=ScheduleVisitParams(availability="weekdays after 5")
        ),
    )
    assert _answer(world, "token-WO-410-gather-0").answer == "details"
    assert "gather wait answered" in outcome["note"]
    (told,) = world.bodies(TENANT)
    assert told.endswith("I'm finding a vendor for it now and will text you when one accepts.")


def test_the_tenants_whole_answer_to_gather_is_kept_when_it_is_read_as_availability() -> None:
    """Naive: the answer read as availability kept only the time it gave (a visit entry), so the
    lockbox code and the dog never reached the timeline and the vendor who accepted was told "The
    tenant gave no access details" (the assign step reads the notes)."""
    world = World(runs=[_run("WO-410", "gather", TENANT)])
    words = "the lockbox on the shed holds a key, code 3391; one old dog; fridays after noon"
    _act(
        world,
        TENANT,
        words,
        ScheduleVisit(
            target_wo_id="WO-410", params=ScheduleVisitParams(availability="fridays after noon")
        ),
    )
    notes = [e for e in world.timeline.for_wo("WO-410") if isinstance(e, NoteEntry)]
    assert [n.note for n in notes] == [words]
    assert words not in json.dumps(world.tokens.succeeded)
    # Not while nothing waits on the tenant's details: a plain availability stays a visit only.
    quiet = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    _act(
        quiet,
        TENANT,
        words,
        ScheduleVisit(
            target_wo_id="WO-410", params=ScheduleVisitParams(availability="fridays after noon")
        ),
    )
    assert not [e for e in quiet.timeline.for_wo("WO-410") if isinstance(e, NoteEntry)]


def test_a_pms_bare_yes_answers_the_hold_asked_since_not_an_older_approval() -> None:
    """Naive: the approval came first in resolve, so the PM's YES to "Reply YES to cancel
    WO-412" approved spending on WO-410 and left WO-412 as it was."""
    world = World(
        wos=[_wo("WO-410"), _wo("WO-412", summary="ceiling fan wobbles")],
        runs=[_run("WO-410", "approval", PM)],
    )
    world.send(PM, "cancel WO-412 please, the tenant moved out")
    assert world.tokens.succeeded == []
    assert "YES" in world.bodies(PM)[-1]
    world.clock.at += timedelta(minutes=1)
    world.send(PM, "YES")
    assert world.work_orders.get("WO-412").status is WorkOrderStatus.CANCELLED  # type: ignore[union-attr]
    assert world.tokens.succeeded == []  # the approval is still open
    world.clock.at += timedelta(minutes=1)
    world.send(PM, "yes WO-410")  # named: the approval's
    assert _answer(world, "token-WO-410-approval-0").answer == "approve"


class _FailsTheTenantsReceipt(RecordingMessenger):
    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        if body.startswith("Done: I've cancelled"):
            raise SendFailedError(
                idempotency_key, "the provider kept failing", transient=True, attempts=3
            )
        return super().send(to, body, idempotency_key=idempotency_key)


def test_a_cancel_whose_receipt_text_fails_still_withdraws_the_wait() -> None:
    """Naive: the withdrawal came after the lane's last text, so a text that failed (the
    package then fails open) left the cancelled WO's offer open, and the next vendor was
    offered a cancelled job after the timeout."""
    world = World(runs=[_run("WO-410", "offer", ROSA, 1)])
    world.send(TENANT, "please cancel WO-410, the landlord sorted it")
    world.pipeline.deps.messenger = _FailsTheTenantsReceipt()
    with pytest.raises(SendFailedError):
        world.send(TENANT, "YES")
    assert world.work_orders.get("WO-410").status is WorkOrderStatus.CANCELLED  # type: ignore[union-attr]
    assert _answer(world, "token-WO-410-offer-1").answer == "withdrawn"


def test_asked_which_when_none_is_open_any_more_says_so() -> None:
    world = World(wos=[_wo("WO-410"), _wo("WO-412")])  # both offers ended since the lease
    _act(
        world,
        ROSA,
        "2",
        AnswerWait(
            params=AnswerWaitParams(kind="offer", answer="unclear", candidates=("WO-410", "WO-412"))
        ),
    )
    assert world.bodies(ROSA) == ["The offers for WO-410 and WO-412 are no longer open."]
