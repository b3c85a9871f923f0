"""A question asked about a command keeps the command (issue #20, item 1).

Naive (before): the offline brain asked "which one do you mean?" about "cancel both" with three
open and kept nothing of the cancel; the answer replayed the words as a note on each work order
picked, so the vendor got "cancel both please" as an update and nothing was held.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from builders import MARIA, T0, package, wo_context

from maestro.brain.offline import OfflineBrain
from maestro.domain.actions import (
    Clarify,
    ClarifyParams,
    DeferredCall,
    ManageExisting,
    RecordRating,
    RelayToOpenWo,
    RelayToOpenWoParams,
)
from maestro.domain.commands import call_question, command_in
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import Disposal, dispose
from maestro.domain.models import OpenContext, WorkOrder, WorkOrderStatus, WoSnapshot
from maestro.domain.pending import PendingSnapshot, Resolution, resolve_pending
from maestro.domain.records import BrainSample, PendingClarification

FRIDGE = wo_context("WO-301", "fridge not cooling in the kitchen, unit 3B")
FAN = wo_context("WO-302", "bathroom fan rattles loudly, unit 3B")
LOCK = wo_context("WO-303", "front door lock sticks, unit 3B")
THREE = [FRIDGE, FAN, LOCK]
IDS = ("WO-301", "WO-302", "WO-303")
LINES = tuple(f"{c.context_id}: {c.description}" for c in THREE)


def disposed(text: str, contexts: Sequence[OpenContext] = THREE) -> Disposal:
    samples = OfflineBrain().samples(package(text), "tenant", contexts)
    return dispose(package(text), MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))


def only(disposal: Disposal) -> object:
    (queued,) = disposal.actions
    return queued.action


# -- the offline brain: a command it cannot settle asks, carrying the command -------------------


@pytest.mark.parametrize(
    ("text", "operation"),
    [
        ("could you cancel two of my requests", "cancel"),
        ("please cancel the pair of them", "cancel"),
        ("cancel both, sorted them myself", "cancel"),  # "both" of three: which two?
        ("call off one of the repairs please", "cancel"),
        ("I no longer need one of these", "cancel"),
        ("reschedule a couple of the visits to next week", "reschedule"),
    ],
)
def test_a_command_that_fits_several_asks_and_keeps_the_command(text: str, operation: str) -> None:
    action = only(disposed(text))
    assert isinstance(action, Clarify), action
    assert set(action.params.candidate_ids) == set(IDS)
    assert action.params.call is not None
    assert action.params.call.operation == operation
    assert action.params.call.request == text


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("please call off the fridge and the fan visits", ("WO-301", "WO-302")),
        ("cancel the door lock and the fridge ones", ("WO-301", "WO-303")),
        ("cancel everything except the lock", ("WO-301", "WO-302")),
        ("cancel all but WO-302", ("WO-301", "WO-303")),
        ("I don't need the fan one any more", ("WO-302",)),
    ],
)
def test_a_command_naming_several_holds_them_without_asking(
    text: str, chosen: tuple[str, ...]
) -> None:
    action = only(disposed(text))
    assert isinstance(action, ManageExisting), action
    assert (action.params.operation, action.params.wo_ids) == ("cancel", chosen)


def test_a_count_in_a_command_is_no_number_of_a_list() -> None:
    """ "cancel 2 of them" counts: the sender saw no numbered list, so WO-302 is no pick."""
    action = only(disposed("cancel 2 of them"))
    assert isinstance(action, Clarify)
    assert action.params.call is not None


def test_a_rating_for_which_of_two_keeps_the_stars() -> None:
    rated = [
        wo_context("WO-198", "dripping bathroom tap, fixed", rating_requested=True),
        wo_context("WO-199", "kitchen drawer hinge, fixed", rating_requested=True),
    ]
    action = only(disposed("4 stars", rated))
    assert isinstance(action, Clarify)
    assert action.params.call == DeferredCall(operation="rate", stars=4, request="4 stars")


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("cancel both please", "cancel"),
        ("pls call off the plumber", "cancel"),
        ("cancele la de la cocina", "cancel"),
        ("can we push it back to friday", "reschedule"),
        ("I don’t need the plumber anymore", "cancel"),
        ("don't cancel it", None),
        ("the tech cancelled on me twice", None),
        ("I don't need the plumber to come in, just the balcony", None),
        ("the sink is leaking again", None),
        # Review of #20: the visit moved by what it is, a PM's shorthand, Spanish enclitics.
        ("could we shift tomorrow's visit", "reschedule"),
        ("I have to change my appointment time", "reschedule"),
        ("can the plumber stop by on a different day", "reschedule"),
        ("bump wo-88 to thursday", "reschedule"),
        ("quisiera mover la visita", "reschedule"),
        ("nix 4410. dup of the other one", "cancel"),
        ("please withdraw that request, landlord fixed it", "cancel"),
        ("anúlela por favor", "cancel"),
        ("ya no hace falta, gracias", "cancel"),
        ("the repair is not needed anymore", "cancel"),
        ("I'll drop it by the office", None),
        ("the breaker keeps tripping, should I kill the power?", None),
        ("can you change the smoke detector battery", None),
        ("what time is the appointment tomorrow?", None),
    ],
)
def test_the_words_of_a_command(text: str, command: str | None) -> None:
    assert command_in(text) == command


# -- the answer runs the command on what it picks -----------------------------------------------


def work_order(wo_id: str, status: WorkOrderStatus = WorkOrderStatus.OPEN) -> WorkOrder:
    wo = WorkOrder(
        wo_id=wo_id,
        tenant_id=MARIA.party_id,
        vendor_id="vendor-vic",
        summary="a job",
        created_at=T0 - timedelta(hours=5),
        updated_at=T0 - timedelta(hours=1),
    )
    if status is WorkOrderStatus.COMPLETED:
        wo = wo.transition(WorkOrderStatus.IN_PROGRESS, T0 - timedelta(minutes=50))
        wo = wo.transition(WorkOrderStatus.COMPLETED, T0 - timedelta(minutes=40))
    return wo


def question(
    call: DeferredCall | None,
    deferred_text: str = "could you cancel two of my requests",
    status: WorkOrderStatus = WorkOrderStatus.OPEN,
) -> PendingClarification:
    return PendingClarification(
        clarification_id="pkg-1#0",
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=MARIA.party_id,
        question="Which of these do you want me to cancel?",
        candidate_ids=IDS,
        candidate_lines=LINES,
        candidate_snapshots=tuple(WoSnapshot.of(work_order(i, status)) for i in IDS),
        deferred_text=deferred_text,
        call=call,
        asked_at=T0 - timedelta(minutes=10),
        expires_at=T0 + timedelta(hours=70),
    )


def answer(
    text: str, asked: PendingClarification, status: WorkOrderStatus = WorkOrderStatus.OPEN
) -> Resolution:
    current = {i: work_order(i, status) for i in IDS}
    return resolve_pending(
        package(text, at=T0), MARIA, PendingSnapshot(clarifications=(asked,)), current, {}, T0
    )


CANCEL = DeferredCall(operation="cancel", request="could you cancel two of my requests")


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [
        ("1 and 3", ("WO-301", "WO-303")),
        ("the fridge one and the door lock", ("WO-301", "WO-303")),
        ("all but the fan one", ("WO-301", "WO-303")),
        ("the first two", ("WO-301", "WO-302")),
        ("wo-302", ("WO-302",)),
        ("all of them", IDS),
    ],
)
def test_a_pick_holds_one_call_over_exactly_the_picked(reply: str, chosen: tuple[str, ...]) -> None:
    result = answer(reply, question(CANCEL))
    (held,) = result.actions
    assert isinstance(held.action, ManageExisting)
    assert (held.action.params.operation, held.action.params.wo_ids) == ("cancel", chosen)
    assert held.action.params.request == CANCEL.request
    assert held.options == chosen  # the hold numbers only those
    assert not held.release  # held for a YES, never run on the pick
    assert [t.to for t in result.transitions] == ["resolved"]


def test_an_answer_that_picks_none_is_asked_again_with_the_command() -> None:
    result = answer("the broken ones", question(CANCEL))
    (again,) = result.actions
    assert isinstance(again.action, Clarify)
    assert again.action.params.call == CANCEL
    assert again.action.params.candidate_ids == IDS
    assert result.transitions == ()


def test_none_of_them_says_nothing_was_cancelled() -> None:
    result = answer("none of them", question(CANCEL))
    (reply,) = result.actions
    assert reply.action.params.reply_hint == "OK, I haven't cancelled anything."  # type: ignore[union-attr]
    spanish = MARIA.model_copy(update={"language": "es"})
    said = resolve_pending(
        package("ninguna", at=T0),
        spanish,
        PendingSnapshot(clarifications=(question(CANCEL),)),
        {i: work_order(i) for i in IDS},
        {},
        T0,
    ).actions
    assert said[0].action.params.reply_hint == "De acuerdo, no he cancelado nada."  # type: ignore[union-attr]


def test_command_words_asked_about_without_a_call_are_held_never_relayed() -> None:
    """A question stored with no call (asked before, or by a model that gave none) about
    "cancel both please": the answer holds a cancel, never a note for the vendor."""
    result = answer("1 and 3", question(None, deferred_text="cancel both please"))
    assert not [a for a in result.actions if isinstance(a.action, RelayToOpenWo)]
    (held,) = result.actions
    assert isinstance(held.action, ManageExisting)
    assert held.action.params.wo_ids == ("WO-301", "WO-303")


def test_a_relay_call_of_command_words_is_held_as_the_command() -> None:
    relay = DeferredCall(operation="relay", request="pls call off the plumber")
    result = answer("2", question(relay, deferred_text="pls call off the plumber"))
    (held,) = result.actions
    assert isinstance(held.action, ManageExisting)
    assert (held.action.params.operation, held.action.params.wo_ids) == ("cancel", ("WO-302",))


def test_a_relay_call_relays_its_words() -> None:
    relay = DeferredCall(operation="relay", request="the buzzing is worse at night")
    result = answer("2", question(relay, deferred_text="the buzzing is worse at night"))
    (note,) = result.actions
    assert isinstance(note.action, RelayToOpenWo)
    assert (note.action.target_wo_id, note.action.params.note) == (
        "WO-302",
        "the buzzing is worse at night",
    )


def test_a_rating_call_records_the_stars_on_the_one_picked() -> None:
    rate = DeferredCall(operation="rate", stars=4, request="4 stars")
    asked = question(rate, deferred_text="4 stars", status=WorkOrderStatus.COMPLETED)
    result = answer("the fan", asked, WorkOrderStatus.COMPLETED)
    (rated,) = result.actions
    assert isinstance(rated.action, RecordRating)
    assert (rated.action.target_wo_id, rated.action.params.stars) == ("WO-302", 4)


def test_a_reschedule_keeps_the_words_of_when() -> None:
    move = DeferredCall(operation="reschedule", request="move the visits to next week")
    (held,) = answer("2 & 3", question(move)).actions
    assert isinstance(held.action, ManageExisting)
    assert held.action.params.operation == "reschedule"
    assert held.action.params.wo_ids == ("WO-302", "WO-303")
    assert held.action.params.request == "move the visits to next week"


def test_a_model_question_carries_its_call_through_dispose() -> None:
    """With a model, the clarify it proposes carries the call; dispose asks with it."""
    proposed = Clarify(
        confidence=0.9,
        why="which ones?",
        params=ClarifyParams(question="Which ones?", candidate_ids=IDS, call=CANCEL),
    )
    samples = [BrainSample(index=i, actions=(proposed,), model="m") for i in range(3)]
    pkg = package("could you cancel two of my requests")
    disposal = dispose(pkg, MARIA, THREE, aggregate(samples, ConsensusPolicy(k=3)))
    action = only(disposal)
    assert isinstance(action, Clarify)
    assert action.params.call == CANCEL


def test_the_question_names_the_command_and_the_candidates_in_the_party_language() -> None:
    english = call_question(CANCEL, LINES, "en")
    assert english.startswith("Which of these do you want me to cancel? 1) WO-301: fridge")
    assert "3) WO-303: front door lock sticks" in english
    spanish = call_question(CANCEL, LINES, "es", again=True)
    assert spanish.startswith("Disculpe, no entendí a cuáles se refiere. ¿Cuáles de estas")
    rate = call_question(DeferredCall(operation="rate", stars=5), LINES[:2], "en")
    assert rate.startswith("Which of these is your rating of 5 for? 1) WO-301")


def test_a_proposed_relay_of_command_words_is_asked_about_never_relayed() -> None:
    """A model that reads "please call off the fan visit" as a note for WO-302's vendor: the
    words are a command, so the tenant is asked (with the cancel kept), nothing is relayed."""
    text = "please call off the fan visit, sorted it myself"
    relay = RelayToOpenWo(
        target_wo_id="WO-302",
        confidence=0.9,
        why="about the fan",
        params=RelayToOpenWoParams(note=text),
    )
    samples = [BrainSample(index=i, actions=(relay,), model="m") for i in range(3)]
    disposal = dispose(package(text), MARIA, THREE, aggregate(samples, ConsensusPolicy(k=3)))
    action = only(disposal)
    assert isinstance(action, Clarify), action
    assert action.params.candidate_ids == ("WO-302",)
    assert action.params.call == DeferredCall(operation="cancel", request=text)
