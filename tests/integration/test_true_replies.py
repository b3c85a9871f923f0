"""Replies that are true (#20, item 5 and the fixed texts of item 4) on the embedded stack,
through signed SMS, with the offline brain (and a model that is down).

Each case was a hollow reply before: a pleasantry, a YES to a hold that had expired and a
vendor's refused command each got "Thanks for your message. I'm on it…" with nothing behind
it; a fallback paged the PM "[INFO] fallback." and told the sender nothing; a re-ask about
one work order ended "Please reply with the number:" and listed nothing. Every assertion reads
what Twilio (the loopback) holds and the WO store. The wordings are this file's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from embedded import new_executions, open_wo, sms, to_phone, work_orders

from maestro.domain.actions import ManageExistingParams
from maestro.domain.directory import Person, PersonRole
from maestro.domain.models import WorkOrderStatus, WoSnapshot
from maestro.domain.records import DEFAULT_PENDING_TTL, PendingClarification, PendingConfirmation
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import VIC, housed, seed, seed_directory

pytestmark = pytest.mark.integration

ON_IT = "I'm on it"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    """One offline stack for the file: each test has its own tenant, number and work orders."""
    with LocalStack() as local:
        seed(local)
        yield local


def _tenant(
    stack: LocalStack, phone: str, name: str, unit: str, language: str | None = None
) -> str:
    """A tenant imported through the directory; their party id."""
    person = Person(
        person_id=f"tenant-{name.lower()}",
        role=PersonRole.TENANT,
        phones=(phone,),
        name=name,
        unit_id=unit,
        language=language,
    )
    seed_directory(stack, housed(person))
    party = stack.parties.by_phone(phone)
    assert party is not None
    return party.party_id


def _say(stack: LocalStack, text: str, sender: str) -> list[str]:
    """Text ``text`` from ``sender`` and let its package run; what the sender got back."""
    before = len(to_phone(stack, sender))
    sms(stack, text, sender=sender)
    new_executions(stack, stack.idle + 1)
    return to_phone(stack, sender)[before:]


def _status(stack: LocalStack, wo_id: str) -> WorkOrderStatus:
    (wo,) = [w for w in work_orders(stack) if w.wo_id == wo_id]
    return wo.status


def test_a_thanks_is_answered_in_kind_and_an_ack_or_goodbye_gets_no_text(
    stack: LocalStack,
) -> None:
    phone = "+14155557301"
    _tenant(stack, phone, "Dana", "6A")
    (reply,) = _say(stack, "cheers, much appreciated", phone)
    assert "welcome" in reply.lower()
    assert ON_IT not in reply
    # An acknowledgement and a goodbye: nothing to answer, and nothing is sent.
    assert _say(stack, "sounds good 👌", phone) == []
    assert _say(stack, "alright, bye for now", phone) == []


def test_a_yes_after_the_hold_expired_says_so_and_changes_nothing(stack: LocalStack) -> None:
    phone = "+14155557302"
    tenant = _tenant(stack, phone, "Omar", "6B")
    open_wo(stack, "WO-7721", "bathroom exhaust fan rattles", tenant_id=tenant)
    lock = open_wo(stack, "WO-7722", "balcony door lock sticks", tenant_id=tenant)
    # A hold for a YES as the manage lane stores it, run out an hour ago (a world to start
    # from: its TTL is days of virtual time).
    now = stack.clock.now()
    stack.pipeline.deps.pending.put_confirmation(
        PendingConfirmation(
            confirmation_id="seeded-hold#0",
            package_id="seeded-hold",
            conversation_id=phone,
            party_id=tenant,
            call=ManageExistingParams(operation="cancel", wo_ids=("WO-7722",)),
            proposal="Reply YES to cancel WO-7722 (balcony door lock sticks, unit 6B).",
            options=("WO-7722",),
            wo_snapshots=(WoSnapshot.of(lock),),
            held_at=now - DEFAULT_PENDING_TTL - timedelta(hours=1),
            expires_at=now - timedelta(hours=1),
        )
    )

    (reply,) = _say(stack, "yep go ahead", phone)
    assert "expired" in reply
    assert "haven't changed anything" in reply
    assert ON_IT not in reply
    assert _status(stack, "WO-7722") is WorkOrderStatus.OPEN

    # A yes with nothing open at all: said so too, nothing changed.
    (again,) = _say(stack, "yes please", phone)
    assert "nothing waiting for your yes" in again
    assert _status(stack, "WO-7722") is WorkOrderStatus.OPEN


def test_a_re_ask_about_one_work_order_names_it(stack: LocalStack) -> None:
    phone = "+14155557303"
    tenant = _tenant(stack, phone, "Priya", "6C")
    wo = open_wo(stack, "WO-7731", "garbage disposal hums but won't spin", tenant_id=tenant)
    now = stack.clock.now()
    # A question about one work order, as a lane stores it (a world to start from).
    stack.pipeline.deps.pending.put_clarification(
        PendingClarification(
            clarification_id="seeded-question#0",
            package_id="seeded-question",
            conversation_id=phone,
            party_id=tenant,
            question="Did you mean WO-7731 (garbage disposal hums but won't spin)?",
            candidate_ids=("WO-7731",),
            candidate_lines=("WO-7731: garbage disposal hums but won't spin",),
            candidate_snapshots=(WoSnapshot.of(wo),),
            deferred_text="it's doing it again",
            asked_at=now,
            expires_at=now + DEFAULT_PENDING_TTL,
        )
    )
    (again,) = _say(stack, "hmm which one", phone)
    assert "WO-7731" in again
    assert "garbage disposal" in again
    assert "YES" in again
    assert not again.rstrip().endswith(":")


def test_a_vendors_refused_command_says_what_was_not_done(stack: LocalStack) -> None:
    phone = "+14155557304"
    tenant = _tenant(stack, phone, "Lena", "6D")
    open_wo(stack, "WO-7741", "oven door hinge snapped", tenant_id=tenant)
    (reply,) = _say(stack, "pls cancel WO-7741, tenant sorted it herself", VIC.phone)
    assert ON_IT not in reply
    assert "WO-7741" in reply
    assert "nothing was changed" in reply
    assert _status(stack, "WO-7741") is WorkOrderStatus.OPEN


def test_a_fixed_reply_is_in_spanish_by_the_directory_and_by_the_message(
    stack: LocalStack,
) -> None:
    by_directory = "+14155557305"
    _tenant(stack, by_directory, "Lucia", "6E", language="es")
    (reply,) = _say(stack, "thank you so much", by_directory)  # English words, Spanish reader
    assert reply == "¡De nada!"

    by_words = "+14155557306"
    _tenant(stack, by_words, "Marta", "6F")  # no language in the directory
    (reply,) = _say(stack, "muchísimas gracias", by_words)
    assert reply == "¡De nada!"
    # A message nothing acted on, in Spanish by its words: said so, not "me ocupo de ello".
    (recorded,) = _say(stack, "oigan, lo de ayer fue raro", by_words)
    assert "no he hecho nada" in recorded
    assert "Me ocupo" not in recorded
