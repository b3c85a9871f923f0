"""The check a composed reply passes before it is sent (maestro.domain.reply_check): replies
that may go, and replies that must not, each for its own reason, in English and Spanish."""

from __future__ import annotations

import pytest

from maestro.domain.reply_check import (
    MAX_REPLY_CHARS,
    Did,
    Done,
    OtherParty,
    ReplyFacts,
    check_reply,
)

SENDER = "+14155550123"
OTHERS = (
    OtherParty(name="Rosalind Okafor", phone="+14155550177", unit="7D"),
    OtherParty(name="Tomasz Plumbing & Heating", phone="+14155550166"),
)
NOTHING = ReplyFacts(
    sender_phone=SENDER,
    sender_name="Priya Raman",
    sender_unit="12A",
    own_wo_ids=("WO-5C31",),
    others=OTHERS,
)


def facts(*done: Done) -> ReplyFacts:
    return NOTHING.model_copy(update={"done": done})


OPENED = Done(did=Did.OPENED, wo_id="WO-A1B2", what="dishwasher won't drain")
BOOKED = Done(did=Did.BOOKED, wo_id="WO-5C31", what="bathroom fan rattles")
PROPOSED = Done(did=Did.PROPOSED, wo_id="WO-5C31", what="bathroom fan rattles")
RELAYED = Done(did=Did.RELAYED, wo_id="WO-5C31", what="bathroom fan rattles")
PAGED = Done(did=Did.PAGED)


# -- replies that may go ------------------------------------------------------------------------

CLEAN: list[tuple[str, ReplyFacts]] = [
    ("You're welcome, Priya!", NOTHING),
    ("Glad to hear it. Have a lovely evening!", NOTHING),
    ("Noted, thank you.", NOTHING),
    ("Thanks for letting us know.", NOTHING),
    ("De nada, ¡que tenga buen día!", NOTHING),
    ("Gracias por avisar.", NOTHING),
    ("No visit is booked yet for WO-5C31.", NOTHING),
    ("Nothing is scheduled yet.", NOTHING),
    ("Aún no hay visita programada.", NOTHING),
    ("Thanks! I opened WO-A1B2 for the dishwasher that won't drain.", facts(OPENED)),
    ("We'll text you when there is news on WO-A1B2.", facts(OPENED)),
    ("Your visit for WO-5C31 is booked for Thursday 9-12.", facts(BOOKED)),
    ("The technician will come by tomorrow morning.", facts(BOOKED)),
    ("El técnico pasará mañana por la mañana.", facts(BOOKED)),
    ("I added your note to WO-5C31 and passed it on to the vendor.", facts(RELAYED)),
    ("I've let the vendor know about the rattling fan.", facts(RELAYED)),
    ("I paged the property manager; a person will follow up.", facts(PAGED)),
    ("I've alerted the manager, who will call you back.", facts(PAGED)),
    ("Your own number, 415-555-0123, is the one we text.", NOTHING),
    ("Unit 12A noted, thanks.", NOTHING),
    ("Si alguien está en peligro, llame al 911.", NOTHING),
    ("Thanks, that's everything for now.", NOTHING),
    ("You're welcome! Feel free to reach out if anything else comes up.", NOTHING),
    ("Let me know if there's anything else I can help with.", NOTHING),
    ("No dude en escribirnos si necesita algo más.", NOTHING),
    ("¡Con gusto! Estamos para ayudarle.", NOTHING),
]


@pytest.mark.parametrize(("reply", "known"), CLEAN, ids=[r for r, _ in CLEAN])
def test_a_reply_that_says_only_what_is_so_may_go(reply: str, known: ReplyFacts) -> None:
    assert check_reply(reply, known) is None


# -- replies that must not go -----------------------------------------------------------------

PROMISES: list[tuple[str, ReplyFacts]] = [
    ("Thanks for your message. I'm on it and will get back to you shortly.", NOTHING),
    ("A plumber is coming to take a look.", NOTHING),
    ("Someone will stop by this afternoon.", NOTHING),
    ("Your appointment is set.", NOTHING),
    ("We'll have it repaired in no time.", NOTHING),
    ("It should be sorted out by Friday.", NOTHING),
    ("Expect a call back within the hour.", NOTHING),
    ("I've forwarded this to your landlord.", NOTHING),
    ("The manager has been alerted.", NOTHING),
    ("I created a ticket for the noise.", NOTHING),
    ("You'll get a rent credit for the trouble.", NOTHING),
    ("Your request was cancelled as asked.", NOTHING),
    ("Hang tight, looking into it now!", NOTHING),
    ("Will do.", NOTHING),
    ("Someone from the office will reach out to you.", NOTHING),
    ("Our team should be in touch about it.", NOTHING),
    ("Me ocupo y le respondo en breve.", NOTHING),
    ("Un técnico irá a su casa.", NOTHING),
    ("Lo arreglaremos pronto.", NOTHING),
    ("Le avisé al administrador.", NOTHING),
    ("Le enviaremos los detalles.", NOTHING),
    ("Vamos a revisar el calentador.", NOTHING),
    ("Habrá un descuento en su renta.", NOTHING),
    # an action ran, but not the one the words need
    ("I opened WO-A1B2; a plumber will be there at 3pm.", facts(OPENED)),
    ("Your visit for WO-5C31 is booked.", facts(PROPOSED)),
    ("I passed your note to the vendor.", facts(OPENED)),
    ("The property manager will call you back.", facts(RELAYED)),
    ("I let your landlord know.", facts(RELAYED)),
    ("I told the plumber about it.", facts(PAGED)),
    ("We've booked the repair and refunded the fee.", facts(BOOKED)),
]


@pytest.mark.parametrize(("reply", "known"), PROMISES, ids=[r for r, _ in PROMISES])
def test_a_promise_no_action_backs_is_refused(reply: str, known: ReplyFacts) -> None:
    refusal = check_reply(reply, known)
    assert refusal is not None
    assert refusal.kind == "promise", refusal


DATA: list[tuple[str, str]] = [
    ("Your neighbour can be reached at (415) 555-0177.", "contact"),
    ("Call +1 415 555 0166 for the plumber.", "contact"),
    ("Text 4155550166 if it gets worse.", "contact"),
    ("Write to help@fixit.example for updates.", "contact"),
    ("Details: https://example.org/wo", "link"),
    ("See www.example.net for tips.", "link"),
    ("Rosalind in 7D reported the same thing.", "other_party"),
    ("The same leak came from apartment 9F above you.", "other_party"),
    ("Tomasz handles that building.", "other_party"),
    ("Your request is WO-77Q1.", "wo_id"),
    ("Work order 4410 covers that.", "wo_id"),
]


@pytest.mark.parametrize(("reply", "kind"), DATA, ids=[r for r, _ in DATA])
def test_another_partys_data_a_link_or_a_foreign_id_is_refused(reply: str, kind: str) -> None:
    refusal = check_reply(reply, facts(OPENED, BOOKED, RELAYED, PAGED))
    assert refusal is not None
    assert refusal.kind == kind, refusal
    # The reason names what is wrong, never the number or the address itself.
    assert "555" not in refusal.reason()
    assert "@" not in refusal.reason()


def test_a_reply_past_two_segments_or_empty_is_refused() -> None:
    long = "Thanks. " * (MAX_REPLY_CHARS // 8 + 1)
    too_long = check_reply(long, NOTHING)
    assert too_long is not None
    assert too_long.kind == "too_long"
    empty = check_reply("  \n", NOTHING)
    assert empty is not None
    assert empty.kind == "empty"
    assert check_reply("Thanks. " * (MAX_REPLY_CHARS // 8 - 1), NOTHING) is None


def test_a_negation_clears_only_its_own_clause() -> None:
    assert check_reply("No plumber is booked yet.", NOTHING) is None
    refused = check_reply("Nothing to worry about, a plumber is coming by.", NOTHING)
    assert refused is not None
    assert refused.kind == "promise"


def test_a_name_the_sender_shares_is_theirs() -> None:
    namesake = NOTHING.model_copy(update={"sender_name": "Rosalind Okafor"})
    assert check_reply("You're welcome, Rosalind!", namesake) is None
    assert check_reply("You're welcome, Rosalind!", NOTHING) is not None


def test_each_done_line_names_what_ran() -> None:
    assert OPENED.line() == "opened a request WO-A1B2 (dishwasher won't drain)"
    assert PROPOSED.line().endswith("nothing booked")
    assert PAGED.line() == "paged the property manager"
