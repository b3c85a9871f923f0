"""Reading a short answer to a question maestro asked (``maestro.domain.answers``)."""

from __future__ import annotations

import pytest

from maestro.domain.answers import read_answer, read_confirmation

IDS = ("WO-204", "WO-198")
LINES = ("WO-204: leak under the kitchen sink, unit 3B", "WO-198: dripping bathroom tap")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("1", ("WO-204",)),
        ("2", ("WO-198",)),
        ("#2", ("WO-198",)),
        ("first", ("WO-204",)),
        ("the second one", ("WO-198",)),
        ("Option 2 please", ("WO-198",)),
        ("WO-198", ("WO-198",)),
        ("it's wo-204", ("WO-204",)),
        ("the kitchen one", ("WO-204",)),
        ("the bathroom tap", ("WO-198",)),
        ("the kitchen leak", ("WO-204",)),  # "leak" tells nothing, "kitchen" does
        ("both", ("WO-204", "WO-198")),
        ("all of them", ("WO-204", "WO-198")),
        ("1 and 2", ("WO-204", "WO-198")),
        ("WO-204 and WO-198", ("WO-204", "WO-198")),
        ("last", ("WO-198",)),
        ("3", None),  # out of range
        ("0", None),
        ("third", None),
        ("fine to come in, 2 onward", None),  # I7: a number in an answer is not a choice
        ("2 onward", None),
        ("1 or 2", None),  # unsure between two: asked again, never guessed
        ("the kitchen or the bathroom", None),
        ("not all of them", None),
        ("the garage one", None),
        ("yes", None),  # two candidates: yes picks neither
        ("", None),
    ],
)
def test_an_answer_picks_only_what_it_clearly_names(
    reply: str, expected: tuple[str, ...] | None
) -> None:
    answer = read_answer(reply, IDS, LINES)
    if expected is None:
        assert answer.kind != "pick", answer
    else:
        assert (answer.kind, answer.ids) == ("pick", expected)


def test_words_shared_by_every_line_never_pick() -> None:
    lines = ("WO-204: leak under the kitchen sink", "WO-211: kitchen tap dripping")
    assert read_answer("the kitchen one", ("WO-204", "WO-211"), lines).kind == "unclear"
    assert read_answer("the tap in the kitchen", ("WO-204", "WO-211"), lines).ids == ("WO-211",)
    assert read_answer("yes", ("WO-204",), ("WO-204: leak",)).ids == ("WO-204",)


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("the leak is back", "unclear"),  # about the candidates, picks none: asked again
        ("ok", "unclear"),
        ("hmm", "unclear"),
        ("none of them", "no"),
        ("neither", "no"),
        ("the fridge stopped working and the freezer is warm", "other"),  # a new topic
        ("something new", "unclear"),  # no "new" candidate was offered
    ],
)
def test_what_is_not_a_pick(reply: str, kind: str) -> None:
    lines = ("WO-204: leak under the kitchen sink", "WO-211: leak from the bathroom ceiling")
    assert read_answer(reply, ("WO-204", "WO-211"), lines).kind == kind


def test_something_new_picks_the_new_candidate_when_offered() -> None:
    answer = read_answer("something new", ("WO-204", "new"), ("WO-204: leak", "something new"))
    assert answer.ids == ("new",)


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("YES", "yes"),
        ("yes please", "yes"),
        ("Yes, cancel them", "yes"),
        ("y", "yes"),
        ("go ahead", "yes"),
        ("confirm", "yes"),
        ("no", "no"),
        ("No thanks", "no"),
        ("don't", "no"),
        ("keep it", "no"),
        ("never mind", "no"),
        ("ok", "unclear"),  # not an unambiguous YES: asked again, never released on it
        ("sounds good", "unclear"),
        ("what?", "unclear"),
        ("the hallway light is out now too", "other"),
    ],
)
def test_a_confirmation_answer(reply: str, kind: str) -> None:
    assert read_confirmation(reply, ("WO-204",), ("WO-204: leak under the kitchen sink",)).kind == (
        kind
    )


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("sí", "yes"),
        ("SÍ", "yes"),
        ("si", "yes"),
        ("Sí, por favor", "yes"),
        ("no, gracias", "no"),
    ],
)
def test_a_spanish_prompt_accepts_a_spanish_answer(reply: str, kind: str) -> None:
    assert read_confirmation(reply, ("WO-301",), ("WO-301: fuga bajo el fregadero",)).kind == kind


def test_si_picks_the_one_candidate_and_algo_nuevo_the_new_one() -> None:
    assert read_answer("sí", ("WO-301",), ("WO-301: fuga",)).ids == ("WO-301",)
    lines = ("WO-301: fuga", "something new")
    assert read_answer("es algo nuevo", ("WO-301", "new"), lines).ids == ("new",)


def test_a_number_narrows_a_hold_over_several() -> None:
    choices = ("WO-204", "WO-211", "WO-215")
    lines = ("WO-204: kitchen sink", "WO-211: bathroom ceiling", "WO-215: hallway light")
    assert read_confirmation("1", choices, lines).ids == ("WO-204",)
    assert read_confirmation("the hallway one", choices, lines).ids == ("WO-215",)
    assert read_confirmation("all of them", choices, lines).ids == choices
    assert read_confirmation("yes", choices, lines).kind == "yes"
