"""The safety advice an emergency sends (#20): specific to the hazard, in the reader's language.

The hazard is named by the safety floor's category first (it reads symptoms, typos and Spanish),
so a CO alarm described by its symptoms gets the CO advice, not "If anyone is in danger, call
911". Wordings are this file's own.
"""

from __future__ import annotations

import pytest

from maestro.domain.fixed_texts import SAFETY_ADVICE
from maestro.lanes.escalate import advice_language, safety_instructions


@pytest.mark.parametrize(
    ("hazard", "text", "language", "kind"),
    [
        ("alarm beeping", "the alarm keeps beeping, we all feel dizzy", "en", "carbon_monoxide"),
        ("", "suena el detector y mi mamá está mareada", "es", "carbon_monoxide"),
        ("", "the co2 detector in the hall is going off", "en", "carbon_monoxide"),
        ("", "C.O. alarm screaming", "en", "carbon_monoxide"),
        ("", "sparks shooting out of the bedroom outlet", "en", "electrical"),
        ("", "huele a quemado y el enchufe de la sala esta negro", "es", "electrical"),
        ("", "water dripping out of the light fixture onto the outlet", "en", "water_electrical"),
        ("", "se inunda el baño y el agua ya llega al enchufe", "es", "water_electrical"),
        ("", "the heat's been out since noon and it's 20 degrees in here", "en", "no_heat"),
        ("", "no hay calefacción y estamos congelándonos", "es", "no_heat"),
    ],
)  # fmt: skip
def test_the_advice_follows_the_hazard_the_floor_reads(
    hazard: str, text: str, language: str, kind: str
) -> None:
    chosen, advice = safety_instructions(hazard, text, language)
    assert chosen == kind
    assert advice == SAFETY_ADVICE[kind][language]  # type: ignore[index]


def test_a_model_hazard_the_floor_does_not_read_still_picks_by_its_words() -> None:
    assert safety_instructions("possible carbon monoxide exposure", "")[0] == "carbon_monoxide"
    assert safety_instructions("", "something weird is going on")[0] == "generic"


@pytest.mark.parametrize(
    "text",
    [
        "shots fired in the parking lot behind building b",
        "my son slipped by the pool water and now he isnt breathing",
        "a guy with a knife is kicking the laundry room door, water everywhere from the machine",
    ],
)
def test_danger_to_a_person_gets_the_call_911_advice_not_a_hazards(text: str) -> None:
    assert safety_instructions("", text)[0] == "generic"


def test_every_advice_is_written_in_english_and_spanish_and_says_something_different() -> None:
    for kind, texts in SAFETY_ADVICE.items():
        assert set(texts) == {"en", "es"}, kind
        assert texts["en"] != texts["es"], kind
    english = [texts["en"] for texts in SAFETY_ADVICE.values()]
    assert len(set(english)) == len(english)


@pytest.mark.parametrize(
    ("preferred", "text", "language"),
    [
        (None, "UELE A GAS!!", "es"),  # too little to tell the language; a Spanish rule read it
        (None, "sale umo!!", "es"),
        (None, "gas leak!!", "en"),
        ("en", "uele a gas!!", "en"),  # the directory's word wins
        (None, "hay olor a gas en la cocina", "es"),  # the message's words tell
    ],
)
def test_the_advice_is_in_the_language_of_the_rule_that_read_a_terse_message(
    preferred: str | None, text: str, language: str
) -> None:
    assert advice_language(preferred, text) == language
