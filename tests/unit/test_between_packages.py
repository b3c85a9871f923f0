"""The pure rules between packages: re-validation (I6), the conversation's guards, resolving a
package against open items, and dispose's role and resume rules."""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import MARIA, T0, consensus, package, wo_context

from maestro.domain.actions import (
    ContinueWithAssistant,
    CreateWo,
    CreateWoParams,
    ManageExisting,
    ManageExistingParams,
    RecordRating,
    RecordRatingParams,
    ScheduleVisit,
    ScheduleVisitParams,
)
from maestro.domain.dispose import dispose
from maestro.domain.fixed_texts import HOLD_EXPIRED
from maestro.domain.guards import ConversationGuards, TrailEntry, guard_before_asking
from maestro.domain.models import Party, PartyRole, WorkOrder, WorkOrderStatus, WoSnapshot
from maestro.domain.pending import PendingSnapshot, resolve_pending
from maestro.domain.records import PendingClarification, PendingConfirmation
from maestro.domain.revalidate import Target, revalidate

VIC = Party(party_id="vendor-vic", role=PartyRole.VENDOR, phone="+14155550142")


def wo(wo_id: str = "WO-204", **extra: object) -> WorkOrder:
    data: dict[str, object] = {
        "wo_id": wo_id,
        "tenant_id": MARIA.party_id,
        "vendor_id": VIC.party_id,
        "summary": "leak under the kitchen sink",
        "created_at": T0 - timedelta(hours=5),
        "updated_at": T0 - timedelta(hours=1),
        **extra,
    }
    return WorkOrder.model_validate(data)


def target(current: WorkOrder | None, then: WorkOrder | None = None, **extra: object) -> Target:
    return Target.model_validate(
        {
            "wo_id": "WO-204",
            "operation": "cancel",
            "asked_at": T0 - timedelta(minutes=30),
            "then": WoSnapshot.of(then) if then else None,
            "current": current,
            **extra,
        }
    )


# -- re-validation ------------------------------------------------------------------------------


def test_revalidation_rules() -> None:
    held = wo()
    touched = held.model_copy(update={"version": 2, "updated_at": T0})
    edited = held.model_copy(update={"version": 2, "summary": "a bigger leak"})
    done = held.transition(WorkOrderStatus.IN_PROGRESS, T0).transition(
        WorkOrderStatus.COMPLETED, T0
    )
    moved = held.model_copy(update={"version": 2, "vendor_id": "vendor-other"})
    cases = {
        "unchanged": (target(held, held), "valid"),
        "only touched": (target(touched, held), "valid"),
        "completed": (target(done, held), "stale"),
        "changed hands": (target(moved, held), "stale"),
        "gone": (target(None, held), "stale"),
        "edited (judge's default)": (target(edited, held), "stale"),
        "interrupted since": (
            target(held, held, interrupted_at=T0 - timedelta(minutes=5)),
            "superseded",
        ),
        "interrupted before it was asked": (
            target(held, held, interrupted_at=T0 - timedelta(hours=2)),
            "valid",
        ),
    }
    for name, (t, expected) in cases.items():
        assert revalidate([t], MARIA).outcome == expected, name
    assert revalidate([target(held, held)], VIC.model_copy(update={"party_id": "x"})).outcome == (
        "stale"
    )
    assert "completed" in revalidate([target(done, held)], MARIA).summary()
    # What the rules cannot settle goes to the judge.
    assert revalidate([target(edited, held)], MARIA, lambda _t, _c: "valid").outcome == "valid"


# -- guards ---------------------------------------------------------------------------------------


def trail(*signals: str) -> list[TrailEntry]:
    return [
        TrailEntry(package_id=f"p{i}", at=T0 - timedelta(minutes=10 * (len(signals) - i)), signal=s)
        for i, s in enumerate(signals)
    ]


@pytest.mark.parametrize(
    ("history", "asking", "tripped"),
    [
        (["ask:A"], "ask:A", None),  # asked once more: allowed
        (["ask:A", "ask:A"], "ask:A", "repeat"),  # a third time: the PM
        (["ask:A", "ask:B", "ask:A"], "ask:B", "flip"),
        (["reply"] * 5, "ask:A", "no_progress"),
        (["ask:A", "ask:A", "progress"], "ask:A", None),  # progress resets
        (["hold:cancel:1,2,3", "hold:cancel:1", "hold:cancel:2", "hold:cancel:3"],
         "hold:cancel:1,2,3", None),  # the seed-004 narrowing is not a loop
        (["ask:A", "soft", "ask:A"], "ask:A", "repeat"),  # a "thanks" in between changes nothing
    ],
)  # fmt: skip
def test_guards(history: list[str], asking: str, tripped: str | None) -> None:
    verdict = guard_before_asking(trail(*history), asking, T0, ConversationGuards())
    assert verdict.tripped == tripped


def test_guards_know_when_the_pm_was_already_brought_in() -> None:
    verdict = guard_before_asking(
        trail("ask:A", "ask:A", "break_in", "ask:A"), "ask:A", T0, ConversationGuards()
    )
    assert verdict.tripped is not None
    assert verdict.already_broken_in


def test_an_old_loop_outside_the_window_trips_nothing() -> None:
    old = [
        TrailEntry(package_id=f"p{i}", at=T0 - timedelta(days=2), signal="ask:A") for i in range(3)
    ]
    assert guard_before_asking(old, "ask:A", T0, ConversationGuards()).tripped is None


# -- resolving a package against open items ------------------------------------------------------


def hold(*ids: str, options: tuple[str, ...] = ()) -> PendingConfirmation:
    return PendingConfirmation(
        confirmation_id="pkg-1#0",
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=MARIA.party_id,
        call=ManageExistingParams(operation="cancel", wo_ids=ids),
        proposal="Reply YES to cancel",
        options=options,
        wo_snapshots=tuple(WoSnapshot.of(wo(i)) for i in ids),
        held_at=T0 - timedelta(minutes=30),
        expires_at=T0 + timedelta(hours=70),
    )


def resolve(text: str, items: PendingSnapshot, wos: dict[str, WorkOrder] | None = None):  # type: ignore[no-untyped-def]
    current = wos if wos is not None else {i: wo(i) for i in ("WO-204", "WO-211", "WO-215")}
    return resolve_pending(package(text, at=T0), MARIA, items, current, {}, T0)


def test_yes_releases_exactly_the_held_call() -> None:
    result = resolve("YES", PendingSnapshot(confirmations=(hold("WO-204", "WO-211"),)))
    (action,) = result.actions
    assert action.release
    assert isinstance(action.action, ManageExisting)
    assert action.action.params.wo_ids == ("WO-204", "WO-211")
    assert (result.route, action.revalidation) == ("answered", "valid")


def test_yes_after_a_change_holds_what_still_stands_and_says_why() -> None:
    done = wo().transition(WorkOrderStatus.CANCELLED, T0)
    result = resolve(
        "yes",
        PendingSnapshot(confirmations=(hold("WO-204", "WO-211"),)),
        {"WO-204": done, "WO-211": wo("WO-211")},
    )
    (action,) = result.actions
    assert not action.release
    assert action.revalidation == "stale"
    assert isinstance(action.action, ManageExisting)
    assert action.action.params.wo_ids == ("WO-211",)
    assert "WO-204 is cancelled now" in action.say


def test_a_number_narrows_and_no_or_a_new_topic_discards() -> None:
    items = PendingSnapshot(confirmations=(hold("WO-204", "WO-211", "WO-215"),))
    (narrowed,) = resolve("2", items).actions
    assert narrowed.action.params.wo_ids == ("WO-211",)  # type: ignore[union-attr]
    assert [t.to for t in resolve("no", items).transitions] == ["discarded"]
    new_topic = resolve("the hallway light stopped working today", items)
    assert (new_topic.route, [t.to for t in new_topic.transitions]) == ("brain", ["discarded"])


def test_an_expired_item_is_closed_as_expired() -> None:
    late = hold("WO-204").model_copy(update={"expires_at": T0 - timedelta(seconds=1)})
    result = resolve("yes", PendingSnapshot(confirmations=(late,)))
    assert [t.to for t in result.transitions] == ["expired"]
    # Nothing is released, and the yes is not left to a reading that would promise something:
    # the party is told the hold expired and what to do.
    assert result.route == "answered"
    (reply,) = [r.action for r in result.actions]
    assert isinstance(reply, ContinueWithAssistant)
    assert reply.params.reply_hint == HOLD_EXPIRED["en"]


def test_a_new_topic_after_an_expired_hold_still_goes_to_the_brain() -> None:
    late = hold("WO-204").model_copy(update={"expires_at": T0 - timedelta(seconds=1)})
    result = resolve("the hallway light flickers now", PendingSnapshot(confirmations=(late,)))
    assert [t.to for t in result.transitions] == ["expired"]
    assert result.route == "brain"


def test_a_clarification_answer_replays_the_deferred_reading_for_that_target() -> None:
    question = PendingClarification(
        clarification_id="pkg-1#0",
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=MARIA.party_id,
        question="which one?",
        candidate_ids=("WO-204", "WO-211", "new"),
        candidate_lines=("WO-204: kitchen sink leak", "WO-211: bathroom ceiling", "something new"),
        candidate_snapshots=(WoSnapshot.of(wo("WO-204")), WoSnapshot.of(wo("WO-211"))),
        deferred_text="cancel the leak one",
        deferred=(
            ManageExisting(
                params=ManageExistingParams(operation="cancel", wo_ids=("WO-204", "WO-211"))
            ),
            CreateWo(params=CreateWoParams(summary="a new leak")),
        ),
        asked_at=T0 - timedelta(minutes=10),
        expires_at=T0 + timedelta(hours=70),
    )
    (replayed,) = resolve("the kitchen one", PendingSnapshot(clarifications=(question,))).actions
    assert isinstance(replayed.action, ManageExisting)
    assert replayed.action.params.wo_ids == ("WO-204",)  # narrowed to the chosen one
    (created,) = resolve("something new", PendingSnapshot(clarifications=(question,))).actions
    assert isinstance(created.action, CreateWo)


# -- dispose: roles and resumes ------------------------------------------------------------------


def test_a_vendor_never_rates_and_never_opens_a_work_order() -> None:
    rated = wo_context("WO-198", "dripping tap", rating_requested=True)
    plan = [
        RecordRating(target_wo_id="WO-198", params=RecordRatingParams(stars=4)),
        CreateWo(params=CreateWoParams(summary="the outlet is dead")),
    ]
    verdicts = consensus(*[plan] * 5)
    disposal = dispose(package("4/5, and the outlet is dead"), VIC, [rated], verdicts)
    assert all(q.action.lane not in ("record_rating", "create_wo") for q in disposal.actions)
    rejected = [d for d in disposal.decisions if d.disposition == "rejected"]
    assert {d.lane for d in rejected} == {"record_rating", "create_wo"}


@pytest.mark.parametrize(
    ("resume", "lane", "revalidation"),
    [
        ("valid", "schedule_visit", "valid"),
        ("superseded", "manage_existing", "superseded"),
        ("stale", "manage_existing", "stale"),
    ],
)
def test_an_availability_answer_is_revalidated_before_it_books(
    resume: str, lane: str, revalidation: str
) -> None:
    context = wo_context("WO-204", awaiting="availability").model_copy(update={"resume": resume})
    plan = [
        ScheduleVisit(target_wo_id="WO-204", params=ScheduleVisitParams(availability="tue 2pm"))
    ]
    verdicts = consensus(*[plan] * 5)
    disposal = dispose(package("tue 2pm works"), MARIA, [context], verdicts)
    (queued,) = disposal.actions
    assert queued.action.lane == lane
    decision = next(d for d in disposal.decisions if d.decision_id == queued.decision_id)
    assert (decision.resume_revalidated, decision.revalidation) == (True, revalidation)
