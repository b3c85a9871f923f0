"""Several candidates picked in one answer (issue #20, item 1: ``maestro.domain.answers``).

Naive (before): an answer could pick several only as bare numbers or ids ("1 and 3") or "all";
"the fridge one and the door lock", "the last two" and "all but the fan" were asked again or
misread, and "both" of three picked all three.
"""

from __future__ import annotations

import pytest

from maestro.domain.answers import read_answer, read_confirmation

IDS = ("WO-301", "WO-302", "WO-303")
LINES = (
    "WO-301: fridge not cooling in the kitchen, unit 3B [open]",
    "WO-302: bathroom fan rattles loudly, unit 3B [open]",
    "WO-303: front door lock sticks, unit 3B [open]",
)
FRIDGE, FAN, LOCK = IDS


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("1 and 3", (FRIDGE, LOCK)),
        ("1, 3", (FRIDGE, LOCK)),
        ("#1 & #3", (FRIDGE, LOCK)),
        ("1 y 3", (FRIDGE, LOCK)),
        ("first and third", (FRIDGE, LOCK)),
        ("the second and the last", (FAN, LOCK)),
        ("only 2 and 3", (FAN, LOCK)),
        ("the first two", (FRIDGE, FAN)),
        ("last 2", (FAN, LOCK)),
        ("the last two", (FAN, LOCK)),
        ("las primeras dos", (FRIDGE, FAN)),
        ("the fridge one and the door lock", (FRIDGE, LOCK)),
        ("fridge + fan", (FRIDGE, FAN)),
        ("cancel the fridge and the lock please", (FRIDGE, LOCK)),
        ("WO-302 and the lock", (FAN, LOCK)),
        ("the bathroom fan, and wo-301", (FAN, FRIDGE)),
        ("all of them", IDS),
        ("everything", IDS),
        ("todas", IDS),
        ("all but the fan one", (FRIDGE, LOCK)),
        ("everything except 2", (FRIDGE, LOCK)),
        ("all of them except the bathroom one", (FRIDGE, LOCK)),
        ("all apart from WO-301", (FAN, LOCK)),
        ("cancel all but the lock", (FRIDGE, FAN)),
        ("todas menos la 2", (FRIDGE, LOCK)),
        ("all except the fridge and the fan", (LOCK,)),
    ],
)
def test_an_answer_picks_several_it_names(reply: str, picked: tuple[str, ...]) -> None:
    assert (read_answer(reply, IDS, LINES).kind, read_answer(reply, IDS, LINES).ids) == (
        "pick",
        picked,
    )


@pytest.mark.parametrize(
    "reply",
    [
        "both",  # of three: which two?
        "ambas",
        "both the fridge and the fan and the lock",
        "1 or 3",
        "the fridge or the lock",
        "the fridge and the garage",  # one part names no candidate: asked again
        "1 and 4",
        "the first five",
        "all but",
        "all but the garage",
        "all except 1, 2 and 3",  # nothing left
        "not all of them",
        "hmm the usual ones",
        "fine to come in, 2 onward",
        "the two of them",  # of three: which two? never the option numbered two
        "las dos",
    ],
)
def test_an_answer_that_is_not_a_clear_choice_picks_nothing(reply: str) -> None:
    answer = read_answer(reply, IDS, LINES)
    assert answer.kind != "pick", answer


def test_all_good_but_is_no_all_but() -> None:
    """ "all good but the fan still rattles" tells about the fan: never the other two."""
    assert read_answer("all good but the fan still rattles", IDS, LINES).ids != (FRIDGE, LOCK)


def test_both_picks_both_of_two() -> None:
    ids, lines = IDS[:2], LINES[:2]
    assert read_answer("both", ids, lines).ids == ids
    assert read_answer("ambos", ids, lines).ids == ids
    assert read_answer("both of them please", ids, lines).ids == ids


@pytest.mark.parametrize("reply", ["the two of them", "those two please", "las dos", "los dos, sí"])
def test_the_two_of_two_is_both_not_the_second(reply: str) -> None:
    ids, lines = IDS[:2], LINES[:2]
    assert read_answer(reply, ids, lines).ids == ids


def test_a_pick_of_several_narrows_a_hold_over_several() -> None:
    assert read_confirmation("all but the fan one", IDS, LINES).ids == (FRIDGE, LOCK)
    assert read_confirmation("the fridge and the lock", IDS, LINES).ids == (FRIDGE, LOCK)
    assert read_confirmation("yes", IDS, LINES).kind == "yes"
    assert read_confirmation("both", IDS, LINES).kind != "pick"


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("not the fridge", (FAN, LOCK)),
        ("just not the bathroom one please", (FRIDGE, LOCK)),
        ("anything but the lock", (FRIDGE, FAN)),
        ("except #1", (FAN, LOCK)),
        ("not WO-302, the other two", (FRIDGE, LOCK)),
        ("menos el ventilador... no, menos la 3", None),
        ("excepto la 1", (FAN, LOCK)),
    ],
)
def test_an_answer_that_opens_by_leaving_some_out_picks_the_others(
    reply: str, picked: tuple[str, ...] | None
) -> None:
    """Review of #20: "not the sink one" picked the sink one (the "not" was a stopword), and a
    cancel was held for exactly the job the party said to keep."""
    answer = read_answer(reply, IDS, LINES)
    if picked is None:
        assert answer.kind == "unclear"
    else:
        assert (answer.kind, answer.ids) == ("pick", picked)


@pytest.mark.parametrize(
    "reply",
    [
        "the fridge, not the fan",
        "WO-301 but not WO-303",
        "not the fan, just the one",  # one kept of two left: which one?
        "not the fan, the lock",  # and then it names one: unclear, never a guess
        "2 not 3",
    ],
)
def test_a_negation_inside_a_choice_is_never_read_as_naming_what_it_leaves_out(
    reply: str,
) -> None:
    answer = read_answer(reply, IDS, LINES)
    assert answer.kind == "unclear", answer
