"""Reading a reply to a WO execution's wait (maestro.domain.wait_answers): a vendor's to their open
offer, a PM's to an approval, in English and Spanish; which wait it answers; and the resolution
resolve makes of it. The wordings here are this file's own."""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders import T0, package

from maestro.domain.actions import AnswerWait, Lane
from maestro.domain.dispatch import DispatchRun, Wait
from maestro.domain.models import Channel, Party, PartyRole
from maestro.domain.wait_answers import OpenWait, open_waits, read_wait_reply, resolve_waits

VENDOR = Party(party_id="vendor-rosa", role=PartyRole.VENDOR, phone="+14155550181", name="Rosa")
PM = Party(party_id="pm-ana", role=PartyRole.PM, phone="+14155550182", name="Ana")


def _wait(wo_id: str, kind: str = "offer", index: int | None = 1) -> OpenWait:
    return OpenWait(
        wo_id=wo_id,
        kind=kind,  # type: ignore[arg-type]
        offer_index=index if kind == "offer" else None,
        started_at=T0 - timedelta(minutes=5),
        deadline=T0 + timedelta(hours=4),
    )


@pytest.mark.parametrize(
    "text",
    [
        "1",
        "1.",
        "1 please",
        "Yes",
        "yeah sure",
        "Yep, I'll grab that one",
        "taking it",
        "on my way now",
        "I can be there by 5",
        "no problem, count me in",
        "omw",
        "Sí",
        "si claro",
        "voy para allá",
        "acepto, gracias",
        "puedo ir mañana temprano",
    ],
)
def test_an_offer_accepted(text: str) -> None:
    assert read_wait_reply(text, "offer", ["WO-301"]).answer == "accept", text


@pytest.mark.parametrize(
    "text",
    [
        "2",
        "2 sorry",
        "No",
        "nope, slammed all week",
        "can't",
        "cannot take it today",
        "sorry I'm not available",
        "I'll pass on this one",
        "won't be able to make it",
        "no, out of town",
        "no puedo",
        "no puedo, estoy ocupado",
        "lo siento, no estoy disponible",
    ],
)
def test_an_offer_declined(text: str) -> None:
    assert read_wait_reply(text, "offer", ["WO-301"]).answer == "decline", text


@pytest.mark.parametrize(
    "text",
    [
        "hmm",
        "ok",
        "maybe",
        "3",
        "yes but I can't till friday",
        "let me check",
    ],
)
def test_an_unclear_answer_to_an_offer_is_asked_again(text: str) -> None:
    assert read_wait_reply(text, "offer", ["WO-301"]).answer == "unclear", text


@pytest.mark.parametrize(
    "text",
    [
        "finished the dishwasher in 4C, all good",
        "done at 12B",
        "what's the gate code for the Pine St building?",
        "is WO-288 still on for tomorrow?",
        "the tenant on the 2nd floor never answered the door yesterday afternoon",
        "ya terminé el trabajo del baño",
    ],
)
def test_something_else_is_not_an_answer(text: str) -> None:
    assert read_wait_reply(text, "offer", ["WO-301"]).answer == "other", text


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("YES", "approve"),
        ("approved", "approve"),
        ("ok go ahead", "approve"),
        ("fine, send someone", "approve"),
        ("Sí, adelante", "approve"),
        ("NO", "refuse"),
        ("too expensive, no", "refuse"),
        ("don't approve that", "refuse"),
        ("hold off for now", "refuse"),
        ("no, muy caro", "refuse"),
        ("hmm", "unclear"),
        ("who is the vendor on the roof job?", "other"),
    ],
)
def test_a_pms_reply_to_one_approval(text: str, answer: str) -> None:
    assert read_wait_reply(text, "approval", ["WO-301"]).answer == answer, text


def test_the_number_answers_only_an_offer() -> None:
    # The offer text asks for 1 or 2; the approval text asks for YES or NO.
    assert read_wait_reply("1", "approval", ["WO-301"]).answer == "unclear"


def test_with_several_approvals_open_the_reply_names_which_or_is_asked() -> None:
    both = ["WO-301", "WO-305"]
    named = read_wait_reply("yes WO-305", "approval", both)
    assert (named.answer, named.wo_ids) == ("approve", ("WO-305",))
    bare = read_wait_reply("yes 301", "approval", both)  # a bare number that is one of them
    assert (bare.answer, bare.wo_ids) == ("approve", ("WO-301",))
    unnamed = read_wait_reply("YES", "approval", both)
    assert (unnamed.answer, unnamed.which, unnamed.wo_ids) == ("unclear", True, ())
    every = read_wait_reply("approve both", "approval", both)
    assert (every.answer, every.wo_ids) == ("approve", ("WO-301", "WO-305"))
    other = read_wait_reply("yes WO-999", "approval", both)  # a hold's YES, not an approval
    assert other.answer == "other"


def test_open_waits_carry_no_token_and_only_the_partys() -> None:
    def run(wo_id: str, party: str) -> DispatchRun:
        return DispatchRun(
            wo_id=wo_id,
            started_at=T0,
            updated_at=T0,
            step="offering",
            waiting=Wait(
                kind="offer",
                token=f"secret-token-{wo_id}",
                party_id=party,
                started_at=T0,
                deadline=T0 + timedelta(hours=4),
                offer_index=2,
                vendor_id=party,
            ),
        )

    waits = open_waits([run("WO-9", VENDOR.party_id), run("WO-8", "vendor-else")], VENDOR.party_id)
    assert [(w.wo_id, w.kind, w.offer_index) for w in waits] == [("WO-9", "offer", 2)]
    assert "secret-token" not in waits[0].model_dump_json()


def test_an_answer_to_an_offer_is_resolved_into_answer_wait() -> None:
    resolution = resolve_waits(package("yep on it", phone=VENDOR.phone), VENDOR, [_wait("WO-301")])
    assert resolution is not None
    assert (resolution.route, resolution.kind, resolution.answer) == ("answered", "wait", "yes")
    (only,) = resolution.actions
    assert isinstance(only.action, AnswerWait)
    assert only.action.lane is Lane.ANSWER_WAIT
    assert (only.action.target_wo_id, only.action.params.answer) == ("WO-301", "accept")
    assert only.action.params.offer_index == 1


def test_something_else_or_nothing_open_leaves_it_to_the_rest() -> None:
    assert resolve_waits(package("done at 12B", phone=VENDOR.phone), VENDOR, [_wait("W")]) is None
    assert resolve_waits(package("yes", phone=VENDOR.phone), VENDOR, []) is None
    assert resolve_waits(package("yes", phone=VENDOR.phone), None, [_wait("WO-301")]) is None
    # A gather wait is answered by the lane that binds the tenant's words, not here.
    gather = _wait("WO-301", "gather")
    assert resolve_waits(package("yes"), VENDOR, [gather]) is None


def test_a_pm_asked_which_names_every_open_approval() -> None:
    waits = [_wait("WO-305", "approval"), _wait("WO-301", "approval")]
    resolution = resolve_waits(package("approved", phone=PM.phone), PM, waits)
    assert resolution is not None
    (ask,) = resolution.actions
    assert isinstance(ask.action, AnswerWait)
    assert ask.action.target_wo_id is None
    assert (ask.action.params.answer, ask.action.params.candidates) == (
        "unclear",
        ("WO-301", "WO-305"),
    )


def test_a_calls_yes_accepts_nothing_and_is_asked_again_by_text() -> None:
    """Naive: a call's transcript "yes" accepted the job; caller ID proves nothing."""
    call = package("yes I'll take it", phone=VENDOR.phone, channel=Channel.VOICE)
    resolution = resolve_waits(call, VENDOR, [_wait("WO-301")])
    assert resolution is not None
    (ask,) = resolution.actions
    assert isinstance(ask.action, AnswerWait)
    assert ask.action.params.answer == "unclear"
    assert "text" in ask.say
    vouched = package("yes", phone=VENDOR.phone, channel=Channel.VOICE, attestation="A")
    accepted = resolve_waits(vouched, VENDOR, [_wait("WO-301")])
    assert accepted is not None
    assert isinstance(accepted.actions[0].action, AnswerWait)
    assert accepted.actions[0].action.params.answer == "accept"
