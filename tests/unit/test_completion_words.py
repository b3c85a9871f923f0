"""Completion from the field, read without a model (maestro.domain.completion): the words
vendors use for a finished job, in English and Spanish, and the look-alikes that are not one;
and the tenant's answer to "… is fixed — all good?", a yes or a complaint."""

from __future__ import annotations

import pytest

from maestro.domain.completion import confirms_done, disputes_done, reports_done

DONE = [
    # Whatever it does, it does it right now (review of #20).
    "rehung the cabinet door, it shuts properly now",
    "bled the radiator, heats great now",
    "finished",
    "Finished up at 4C, the disposal spins freely now",
    "fixed",
    "fixed the shutoff under the vanity",
    "Job complete.",
    "job completed, tenant was home",
    "wrapped up over here",
    "All set in 12A",
    "done ✅",
    "✅",
    "replaced the cartridge, good to go",
    "swapped the flapper, toilet flushes fine",
    "new breaker installed and tested",
    "all done, left the old part by the bins",
    "we're done at the Oak St unit",
    "That's taken care of",
    "unclogged, drains great",
    "Ya quedó",
    "ya quedó la llave del baño",
    "terminado",
    "Listo, ya está",
    "quedó arreglado el calentador",
    "trabajo terminado 👍",
    "terminé con la estufa",
    "done and dusted, heading out",
]

NOT_DONE = [
    "ok now what",
    "working on it right now",
    "not done yet",
    "Will finish tomorrow",
    "done for today, back at 9",
    "done for the day",
    "almost done",
    "nearly finished, 20 more min",
    "Finishing it up tomorrow morning",
    "I'll be done by 5",
    "should be finished by friday",
    "couldn't finish, need a part",
    "need to order a new cartridge",
    "still need to come back for the trim",
    "waiting on the replacement valve",
    "patched it for now, needs to be replaced",
    "done with the first part, back tomorrow",
    "are you done?",
    "on my way",
    "running 15 min late",
    "I'll text when I'm done",
    "todavía no termino",
    "mañana termino",
    "casi listo",
    "por hoy terminé, regreso mañana",
    "no quedó, falta una pieza",
    "yes I'll take it",
    "can you send me the gate code",
    "fixed the leak but the cabinet floor is rotten",
    "replaced the trap, subfloor needs replacing though",
    "listo para ir mañana temprano",
    "listo, mañana paso con la pieza",
    "arreglé la fuga pero falta pintar",
]


@pytest.mark.parametrize("text", DONE)
def test_a_vendors_finished_job_reads_as_done(text: str) -> None:
    assert reports_done(text)


@pytest.mark.parametrize("text", NOT_DONE)
def test_work_left_or_a_question_is_no_completion(text: str) -> None:
    assert not reports_done(text)


YES = [
    # Asked "All good? Reply YES, or tell us what's still wrong", an ok or a thanks with
    # nothing else said is a yes (review of #20: these were left to the pre-check's chit-chat).
    "thanks!",
    "ok",
    "👍",
    "YES",
    "yes",
    "Yes!",
    "yep all good",
    "yes, all good, thank you",
    "Yeah it works great now",
    "works perfectly now",
    "looks good, thanks",
    "sí",
    "Sí, todo bien",
    "si funciona gracias",
    "all good 👍",
]

COMPLAINTS = [
    "still dripping",
    "no it's not fixed",
    "No",
    "nope, same problem",
    "it's leaking again under the cabinet",
    "yes but the cabinet door is still wet",
    "the water's barely warm",
    "it stopped again an hour later",
    "sigue goteando",
    "no, todavía está mal",
    "doesn't drain",
]

NEITHER = ["who is Vic?", "when did he come?", "hmm", "is it?"]


@pytest.mark.parametrize("text", YES)
def test_a_plain_yes_confirms(text: str) -> None:
    assert confirms_done(text)
    assert not disputes_done(text)


@pytest.mark.parametrize("text", COMPLAINTS)
def test_something_still_wrong_is_a_complaint_never_a_yes(text: str) -> None:
    assert disputes_done(text)
    assert not confirms_done(text)


@pytest.mark.parametrize("text", NEITHER)
def test_chit_chat_is_neither(text: str) -> None:
    assert not confirms_done(text)
    assert not disputes_done(text)
