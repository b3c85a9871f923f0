"""Voice identity, the pure rules (issue #17): a call's caller ID is not who is speaking.

A YES counts on the channel the question was asked on, or from a call STIR/SHAKEN attestation A
vouches for; what a call nothing vouches for asks to change in the party's name is held for a YES
by text. Here: the attestation read from Twilio's verdict, resolving a package against a hold,
dispose's holding, and the hold record itself.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import MARIA, T0, act, consensus, package, wo_context
from pydantic import ValidationError

from maestro.domain.actions import Action, ManageExisting, ManageExistingParams
from maestro.domain.dispose import dispose
from maestro.domain.models import (
    Attestation,
    Channel,
    Package,
    Party,
    PartyRole,
    PreCheckResult,
    Route,
    WorkOrder,
    WorkOrderStatus,
    WoSnapshot,
    attestation_of,
)
from maestro.domain.pending import PendingSnapshot, Resolution, ResolvedAction, resolve_pending
from maestro.domain.records import Disposition, PendingConfirmation

VIC = Party(party_id="vendor-vic", role=PartyRole.VENDOR, phone="+14155550142")


def wo(wo_id: str, summary: str = "leak under the kitchen sink", **extra: object) -> WorkOrder:
    data: dict[str, object] = {
        "wo_id": wo_id,
        "tenant_id": MARIA.party_id,
        "vendor_id": VIC.party_id,
        "summary": summary,
        "created_at": T0 - timedelta(hours=5),
        "updated_at": T0 - timedelta(hours=1),
        **extra,
    }
    return WorkOrder.model_validate(data)


WOS = {"WO-204": wo("WO-204"), "WO-211": wo("WO-211", "leak from the bathroom ceiling")}


def texted(*bodies: str) -> Package:
    return package(*bodies, at=T0, flush=2)


def called(*bodies: str, attestation: Attestation | None = None) -> Package:
    return package(*bodies, at=T0, flush=2, channel=Channel.VOICE, attestation=attestation)


def cancel_hold(*ids: str, by_call: bool = False) -> PendingConfirmation:
    """A cancel the manage lane held and asked about by text."""
    return PendingConfirmation(
        confirmation_id="pkg-1#0",
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=MARIA.party_id,
        call=ManageExistingParams(operation="cancel", wo_ids=ids),
        proposal="Reply YES to cancel",
        wo_snapshots=tuple(WoSnapshot.of(WOS[i]) for i in ids),
        by_unverified_call=by_call,
        held_at=T0 - timedelta(minutes=30),
        expires_at=T0 + timedelta(hours=70),
    )


CREATE = act("create_wo", summary="the bathroom fan stopped working")
VISIT = act("schedule_visit", "new:1", availability="friday afternoon")
RELAY = act("relay_to_open_wo", "WO-204", note="it drips faster at night")


def actions_hold(*held: Action) -> PendingConfirmation:
    """What a call asked for, held by dispose as the exact actions, asked about by text."""
    return PendingConfirmation(
        confirmation_id="pkg-1#0",
        package_id="pkg-1",
        conversation_id="conv-1",
        party_id=MARIA.party_id,
        held=held,
        proposal="We got a call from this number asking to …",
        wo_snapshots=(WoSnapshot.of(WOS["WO-204"]),),
        by_unverified_call=True,
        held_at=T0 - timedelta(minutes=30),
        expires_at=T0 + timedelta(hours=70),
    )


def resolve(
    pkg: Package, hold: PendingConfirmation, wos: dict[str, WorkOrder] | None = None
) -> Resolution:
    items = PendingSnapshot(confirmations=(hold,))
    return resolve_pending(pkg, MARIA, items, WOS if wos is None else wos, {}, T0)


# -- the attestation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verstat", "expected"),
    [
        ("TN-Validation-Passed-A", "A"),
        ("TN-Validation-Passed-B", "B"),
        ("TN-Validation-Passed-C", "C"),
        ("TN-Validation-Failed-A", None),  # the signature did not verify: it vouches for nothing
        ("TN-Validation-Failed-B", None),
        ("TN-Validation-Failed", None),
        ("No-TN-Validation", None),
        ("TN-Validation-Passed", None),  # not Twilio's spelling of A: never guessed
        ("tn-validation-passed-a", None),
        ("", None),
        (None, None),
    ],
)
def test_only_a_passed_verdict_gives_an_attestation(verstat: str | None, expected: str) -> None:
    assert attestation_of(verstat) == expected


def test_only_attestation_a_makes_a_call_the_numbers_owner() -> None:
    cases: tuple[tuple[Attestation | None, bool], ...] = (
        ("A", False),
        ("B", True),
        ("C", True),
        (None, True),
    )
    for attestation, unverified in cases:
        (message,) = called("yes", attestation=attestation).messages
        assert message.unverified_call is unverified
        assert message.answers_on(Channel.SMS) is not unverified
    (sms,) = texted("yes").messages
    assert not sms.unverified_call
    assert sms.answers_on(Channel.SMS)
    assert not sms.answers_on(Channel.IN_APP)


# -- a YES counts where it was asked ------------------------------------------------------------


def test_a_called_yes_releases_nothing_and_asks_again_by_text() -> None:
    """The issue's repro, pure: "yeah go ahead do it" on a call with Maria's caller ID."""
    result = resolve(called("yeah go ahead do it"), cancel_hold("WO-211"))
    (again,) = result.actions
    assert not again.release
    assert isinstance(again.action, ManageExisting)
    assert again.action.params.wo_ids == ("WO-211",)  # the same call, asked again
    assert again.say.startswith("A call from this number said yes")
    assert result.transitions == ()  # the hold stays until the new one supersedes it
    assert "not on the sms channel" in result.reason


@pytest.mark.parametrize("attestation", ["B", "C"])
def test_a_call_vouched_for_below_a_releases_nothing(attestation: Attestation) -> None:
    result = resolve(called("yes", attestation=attestation), cancel_hold("WO-211"))
    assert not any(a.release for a in result.actions)


def test_a_texted_yes_or_an_attested_call_releases_exactly_the_held_call() -> None:
    for pkg in (texted("YES"), called("yes, go ahead", attestation="A")):
        (release,) = resolve(pkg, cancel_hold("WO-211")).actions
        assert release.release
        assert isinstance(release.action, ManageExisting)
        assert release.action.params.wo_ids == ("WO-211",)


def test_a_yes_in_the_app_to_a_texted_question_is_asked_again_by_text() -> None:
    in_app = package("yes", at=T0, flush=2, channel=Channel.IN_APP)
    (again,) = resolve(in_app, cancel_hold("WO-211")).actions
    assert not again.release
    assert again.say.startswith("That yes came in the app, but I asked by text")


def test_a_package_with_a_texted_yes_and_an_unattested_call_releases_nothing() -> None:
    text, call = texted("yes"), called("yes")
    later = call.messages[0].model_copy(update={"seq": 300, "message_id": "CA1"})
    mixed = text.model_copy(update={"messages": (*text.messages, later)})
    assert not any(a.release for a in resolve(mixed, cancel_hold("WO-211")).actions)


def test_a_called_no_or_new_topic_still_closes_the_hold_it_changes_nothing() -> None:
    # Discarding is the safe direction: nothing is changed, and the text says so.
    (said,) = resolve(called("no, leave it"), cancel_hold("WO-211")).actions
    assert "left WO-211" in (said.action.params.reply_hint or "")  # type: ignore[union-attr]


# -- a hold of actions ----------------------------------------------------------------------------


def test_a_texted_yes_releases_the_held_actions_in_order_exactly_as_held() -> None:
    result = resolve(texted("yes please"), actions_hold(CREATE, VISIT, RELAY))
    assert [a.action for a in result.actions] == [CREATE, VISIT, RELAY]
    assert all(a.release and a.revalidation == "valid" for a in result.actions)
    assert {a.pending_id for a in result.actions} == {"pkg-1#0"}


def test_a_called_yes_to_held_actions_holds_them_again() -> None:
    (again,) = resolve(called("yeah go ahead do it"), actions_hold(CREATE, RELAY)).actions
    assert (again.release, again.held, again.by_unverified_call) == (False, (CREATE, RELAY), True)


def test_a_number_picks_nothing_among_held_actions_and_no_discards_them() -> None:
    (again,) = resolve(texted("1"), actions_hold(CREATE, RELAY)).actions
    assert again.held == (CREATE, RELAY)
    assert not again.release
    no = resolve(texted("nope"), actions_hold(CREATE, RELAY))
    assert [t.to for t in no.transitions] == ["discarded"]


def test_a_yes_after_the_work_order_changed_keeps_only_what_still_stands() -> None:
    done = (
        WOS["WO-204"]
        .transition(WorkOrderStatus.IN_PROGRESS, T0)
        .transition(WorkOrderStatus.COMPLETED, T0)
    )
    result = resolve(texted("yes"), actions_hold(CREATE, RELAY), {**WOS, "WO-204": done})
    (again,) = result.actions
    assert not again.release
    assert again.held == (CREATE,)  # the note for a finished job is dropped, said why
    assert "WO-204 is completed now" in again.say
    only_relay = resolve(texted("yes"), actions_hold(RELAY), {**WOS, "WO-204": done})
    assert [t.to for t in only_relay.transitions] == ["discarded"]


# -- dispose holds what a call asks ---------------------------------------------------------------

CONTEXTS = [wo_context("WO-204"), wo_context("WO-211", "leak from the bathroom ceiling")]


def test_a_calls_create_and_note_are_held_as_one_confirmation() -> None:
    plan = [CREATE, RELAY]
    disposal = dispose(called("the fan stopped, and the sink drips faster"), MARIA, CONTEXTS,
                       consensus(*[plan] * 5))  # fmt: skip
    (hold,) = disposal.actions
    assert hold.held == (CREATE, RELAY)
    assert hold.lane.value == "manage_existing"
    assert hold.by_unverified_call
    held = [d for d in disposal.decisions if d.disposition is Disposition.HELD]
    assert [(d.lane.value, d.target_wo_id) for d in held] == [
        ("create_wo", None),
        ("relay_to_open_wo", "WO-204"),
    ]
    assert all(d.bound_context_id == hold.idempotency_key for d in held)
    (queued,) = [d for d in disposal.decisions if d.disposition is Disposition.QUEUED]
    assert (queued.lane.value, queued.command, queued.asks) == (
        "manage_existing",
        None,
        "hold:create_wo+relay_to_open_wo:WO-204",
    )


def test_a_calls_cancel_alone_goes_to_the_manage_lane_marked_as_a_call() -> None:
    cancel = act("manage_existing", operation="cancel", wo_ids=["WO-211"])
    disposal = dispose(called("call off the ceiling one"), MARIA, CONTEXTS,
                       consensus(*[[cancel]] * 5))  # fmt: skip
    (queued,) = disposal.actions
    assert (queued.action, queued.held, queued.by_unverified_call) == (cancel, (), True)


def test_an_attested_call_or_a_text_acts_as_today() -> None:
    for pkg in (called("the fan stopped", attestation="A"), texted("the fan stopped")):
        disposal = dispose(pkg, MARIA, CONTEXTS, consensus(*[[CREATE]] * 5))
        (queued,) = disposal.actions
        assert (queued.action, queued.held) == (CREATE, ())


def test_an_emergency_call_escalates_at_once_and_holds_nothing() -> None:
    precheck = PreCheckResult(route=Route.ESCALATE, severity="emergency", confidence=1.0,
                              evidence="smoke", source="safety_floor")  # fmt: skip
    disposal = dispose(called("smoke from the outlet, also the fan stopped"), MARIA, CONTEXTS,
                       consensus(*[[CREATE]] * 5), precheck=precheck)  # fmt: skip
    assert [q.lane.value for q in disposal.actions] == ["escalate"]
    assert all(not q.held for q in disposal.actions)


def test_a_calls_reply_only_is_not_held() -> None:
    reply = act("continue_with_assistant")
    disposal = dispose(called("thanks, bye"), MARIA, CONTEXTS, consensus(*[[reply]] * 5))
    (queued,) = disposal.actions
    assert queued.held == ()


def test_words_a_question_deferred_from_a_call_are_held_whoever_picks() -> None:
    """A clarification asked about a call's words, answered "2" by text: the replayed note is
    held for a YES by text, never relayed on the pick alone."""
    resolution = Resolution(
        route="answered",
        kind="clarification",
        pending_id="pkg-1#0",
        answer="pick",
        actions=(ResolvedAction(action=RELAY, pending_id="pkg-1#0", revalidation="valid"),),
        by_unverified_call=True,
    )
    disposal = dispose(texted("2"), MARIA, CONTEXTS, None, resolution=resolution)
    (hold,) = disposal.actions
    assert hold.held == (RELAY,)


# -- the hold record ------------------------------------------------------------------------------


def test_a_hold_holds_a_call_or_actions_that_change_something() -> None:
    both = cancel_hold("WO-204").model_dump() | {"held": (CREATE,)}
    with pytest.raises(ValidationError, match="either a manage call or actions"):
        PendingConfirmation.model_validate(both)
    with pytest.raises(ValidationError, match="change something"):
        actions_hold(act("continue_with_assistant"))
    hold = actions_hold(CREATE, VISIT, RELAY)
    assert hold.operation == "create_wo+schedule_visit+relay_to_open_wo"
    assert hold.wo_ids == ("WO-204",)  # the new one has no id yet
    assert hold.choices == ()
    assert cancel_hold("WO-204").asked_on is Channel.SMS
