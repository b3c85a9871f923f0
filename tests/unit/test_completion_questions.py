"""The seams between a question about a command and completion (issue #20): a vendor's
unnamed "done" is a stored question carrying a ``complete`` call, a PM's close asked about keeps
its call, a PM may close an open request no vendor took, and a held reschedule says what a YES
does in words maestro composes (docs/completion.md, docs/clarified-commands.md).

Naive (before): the question kept no call (a bare "2" changed nothing), a PM's close of an open
WO was held and then refused after the YES, and the hold read "Reply YES to move the visit for
both to <the tenant's whole sentence>".
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import T0, package, wo_context, work_order

from maestro.brain.offline import OfflineBrain
from maestro.domain.actions import (
    Clarify,
    ContinueWithAssistant,
    DeferredCall,
    ManageExisting,
    ManageExistingParams,
    RelayToOpenWo,
)
from maestro.domain.commands import call_question, new_time, nothing_done
from maestro.domain.completion import which_done
from maestro.domain.models import (
    InvalidTransitionError,
    Party,
    PartyRole,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
)
from maestro.domain.pending import PendingSnapshot, Resolution, resolve_pending
from maestro.domain.records import PendingClarification
from maestro.domain.revalidate import Target, revalidate
from maestro.lanes.manage_existing import _proposal

KIM = Party(party_id="vendor-kim", role=PartyRole.VENDOR, phone="+14155550171")
LOU = Party(party_id="pm-lou", role=PartyRole.PM, phone="+14155550173", property_ids=("larch",))
JOBS = {
    "WO-91": "porch step tread split",
    "WO-92": "laundry dryer vent clogged",
    "WO-93": "attic hatch won't latch",
}
IDS = tuple(JOBS)
LINES = tuple(f"{i}: {s}" for i, s in JOBS.items())


def _held_by_kim(wo_id: str) -> WorkOrder:
    return work_order(wo_id, JOBS[wo_id], vendor_id=KIM.party_id, status=WorkOrderStatus.ASSIGNED)


def _asked(call: DeferredCall, party: Party) -> PendingClarification:
    return PendingClarification(
        clarification_id="pkg-7#0",
        package_id="pkg-7",
        conversation_id="conv-1",
        party_id=party.party_id,
        question="Which of these jobs is finished?",
        candidate_ids=IDS,
        candidate_lines=LINES,
        candidate_snapshots=tuple(WoSnapshot.of(_held_by_kim(i)) for i in IDS),
        deferred_text=call.request,
        call=call,
        asked_at=T0 - timedelta(minutes=5),
        expires_at=T0 + timedelta(hours=70),
    )


REPORT = DeferredCall(operation="complete", request="everything's squared away, heading out")


def _answer(text: str, party: Party = KIM, call: DeferredCall = REPORT) -> Resolution:
    return resolve_pending(
        package(text, at=T0, phone=party.phone),
        party,
        PendingSnapshot(clarifications=(_asked(call, party),)),
        {i: _held_by_kim(i) for i in IDS},
        {},
        T0,
    )


# -- the answer to "which of these jobs is finished?" -------------------------------------------


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [
        ("3", ("WO-93",)),
        ("the dryer vent one is sorted", ("WO-92",)),
        ("wo-91 finished", ("WO-91",)),
        ("1 & 3 are done", ("WO-91", "WO-93")),
        ("all done", IDS),
        ("la 2 ya quedó", ("WO-92",)),
    ],
)
def test_a_vendors_pick_reports_exactly_those_jobs(reply: str, chosen: tuple[str, ...]) -> None:
    result = _answer(reply)
    (report,) = result.actions
    assert isinstance(report.action, ManageExisting)
    assert (report.action.params.operation, report.action.params.wo_ids) == ("complete", chosen)
    assert [t.to for t in result.transitions] == ["resolved"]


@pytest.mark.parametrize("reply", ["1 is done, 3 still needs a coat of paint", "done"])
def test_an_answer_that_says_work_is_left_or_names_none_reports_nothing(reply: str) -> None:
    result = _answer(reply)
    assert not [a for a in result.actions if isinstance(a.action, ManageExisting | RelayToOpenWo)]


def test_none_of_them_marks_nothing_and_a_pm_hears_nothing_was_closed() -> None:
    (said,) = _answer("none of them").actions
    assert isinstance(said.action, ContinueWithAssistant)
    assert said.action.params.reply_hint == "OK, I haven't marked anything finished."
    close = DeferredCall(operation="complete", request="close that ticket out")
    assert nothing_done(close, "es", manager=True) == "De acuerdo, no he cerrado nada."


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("2 is done", "2"),
        ("both are finished", "both"),
        ("all done", "all"),
        ("la 1 ya está lista", "la 1"),
        ("the attic one is good to go", "the attic one"),
        ("1 is done, 2 isn't yet", "1 is done, 2 isn't yet"),  # work left: read as it is
        ("done", "done"),  # names none
    ],
)
def test_which_done_leaves_only_the_pick(text: str, kept: str) -> None:
    assert which_done(text) == kept


def test_the_question_asks_a_vendor_what_is_finished_and_a_pm_what_to_close() -> None:
    asked = call_question(REPORT, LINES[:2], "en")
    assert asked.startswith("Which of these jobs is finished? 1) WO-91: porch step tread split;")
    close = DeferredCall(operation="complete", request="close one of those out")
    assert call_question(close, LINES[:2], "es", manager=True).startswith(
        "¿Cuáles de estas quiere que cierre? 1) WO-91"
    )


# -- the offline brain keeps the call ------------------------------------------------------------


def _contexts(relation: str) -> list:  # type: ignore[type-arg]
    return [
        wo_context(i, s).model_copy(
            update={"wo_status": WorkOrderStatus.ASSIGNED, "relation": relation}
        )
        for i, s in JOBS.items()
    ]


def test_a_pms_close_that_names_none_asks_and_keeps_the_close() -> None:
    text = "pls close one of those out for me"
    (plan,) = {s.actions for s in OfflineBrain().samples(package(text), "pm", _contexts("pm"))}
    assert plan is not None
    (action,) = plan
    assert isinstance(action, Clarify)
    assert action.params.call is not None
    assert action.params.call.operation == "complete"


def test_a_vendor_naming_two_jobs_reports_both() -> None:
    text = "WO-91 and WO-93 both wrapped up"
    samples = OfflineBrain().samples(package(text), "vendor", _contexts("vendor"))
    (plan,) = {s.actions for s in samples}
    assert plan is not None
    (action,) = plan
    assert isinstance(action, ManageExisting)
    assert (action.params.operation, action.params.wo_ids) == ("complete", ("WO-91", "WO-93"))


# -- a PM closes an open request no vendor took ---------------------------------------------------


def test_only_an_open_request_with_no_vendor_closes_unworked() -> None:
    closed = work_order("WO-95", "fence gate squeaks").close_unworked(T0)
    assert (closed.status, closed.rating_requested) == (WorkOrderStatus.COMPLETED, False)
    with pytest.raises(InvalidTransitionError):
        _held_by_kim("WO-91").close_unworked(T0)  # a vendor has it: the usual close
    with pytest.raises(InvalidTransitionError):
        work_order("WO-96", "fence gate squeaks", vendor_id=KIM.party_id).close_unworked(T0)
    with pytest.raises(InvalidTransitionError):
        work_order("WO-97").transition(WorkOrderStatus.COMPLETED, T0)  # never on its own


def test_a_pms_held_close_of_an_open_request_still_holds_at_the_yes() -> None:
    gate = work_order("WO-95", "fence gate squeaks")
    target = Target(
        wo_id="WO-95",
        operation="complete",
        asked_at=T0 - timedelta(minutes=3),
        then=WoSnapshot.of(gate),
        current=gate,
    )
    assert revalidate([target], LOU).outcome == "valid"


# -- a held reschedule says what a YES does ------------------------------------------------------


@pytest.mark.parametrize(
    ("request_words", "when"),
    [
        ("ugh, gotta push them back, my sister is in town", ""),
        ("need to push them back to thursday after 4pm, sorry", "thursday after 4pm"),
        ("cancel monday and reschedule for the weekend", "weekend"),
        ("reprogramar para el viernes por la mañana", "viernes por la manana"),
    ],
)
def test_the_new_time_is_the_time_words_only(request_words: str, when: str) -> None:
    assert new_time(request_words) == when


@pytest.mark.parametrize(
    ("request_words", "when"),
    [
        ("can the plumber come another time? evenings are no good for us", ""),
        ("change the visit, thursday won't work, wednesday after 4pm is ok", "wednesday after 4pm"),
        ("push it back please, not saturday, sunday morning", "sunday morning"),
        ("mover la cita, los viernes no me sirven, el lunes por la tarde", "lunes por la tarde"),
    ],
)
def test_a_time_the_request_rules_out_is_not_the_new_time(request_words: str, when: str) -> None:
    # The hold repeats the new time to the sender: "to evenings" for "evenings are no good"
    # would say the opposite of what they asked.
    assert new_time(request_words) == when


def test_the_reschedule_hold_never_repeats_the_sentence() -> None:
    wos = {i: work_order(i, s) for i, s in JOBS.items()}
    chosen = ("WO-91", "WO-92")
    vague = ManageExistingParams(
        operation="reschedule", wo_ids=chosen, request="ugh, gotta push them back, family stuff"
    )
    held = _proposal(vague, chosen, chosen, wos, "")
    assert held.startswith("Reply YES to ask for a new time for the visit for both: 1) WO-91")
    assert "family stuff" not in held
    assert "gotta" not in held
    timed = vague.model_copy(update={"request": "gotta push them back to thursday after 4pm"})
    held = _proposal(timed, chosen, chosen, wos, "")
    assert held.startswith("Reply YES to ask to move the visit for both to thursday after 4pm:")
    assert "gotta" not in held
    es = _proposal(timed, chosen[:1], chosen[:1], wos, "", language="es")
    assert es.startswith("Responda SÍ o YES para pedir que la visita de WO-91")
    assert "gotta" not in es
