"""Gather (maestro.domain.gather): what a vendor still needs, what a reply gives, the question.

Wordings are this file's own: no scenario or other test uses them.
"""

from __future__ import annotations

import pytest
from builders import work_order
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro.domain.directory import Trade
from maestro.domain.dispatch import GATHER_ITEMS, GatherItem
from maestro.domain.gather import (
    MAX_QUESTION_CHARS,
    PHOTO_TRADES,
    items_in,
    job_trade,
    needs,
    question,
    skip_reason,
    trade_for,
    trade_in,
)
from maestro.domain.models import Urgency

# --- trade --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("category", "trade"),
    [
        ("plumbing", Trade.PLUMBING),
        ("electrical", Trade.ELECTRICAL),
        ("hvac", Trade.HVAC),
        ("appliance", Trade.APPLIANCE),
        ("pest", Trade.PEST),
        ("locks", Trade.LOCKSMITH),
        ("structural", Trade.GENERAL),
        ("Roofing", Trade.ROOFING),
        ("  Pest Control ", Trade.PEST),
    ],
)
def test_a_category_that_names_a_trade_gives_it(category: str, trade: Trade) -> None:
    assert trade_for(category) is trade


@pytest.mark.parametrize("category", ["general", "misc", "", "landscaping"])
def test_general_or_an_unknown_category_names_no_trade(category: str) -> None:
    assert trade_for(category) is None


@pytest.mark.parametrize(
    ("text", "trade"),
    [
        ("water keeps seeping from the pipe behind the washing machine", Trade.PLUMBING),
        ("the breaker trips whenever the microwave and kettle run", Trade.ELECTRICAL),
        ("radiator in the den stays cold", Trade.HVAC),
        ("freezer is warm and the ice maker stopped", Trade.APPLIANCE),
        ("saw droppings, think we have mice", Trade.PEST),
        ("the deadbolt key snapped off inside", Trade.LOCKSMITH),
        ("shingles blew off in the storm", Trade.ROOFING),
        ("closet door came off its hinges", Trade.GENERAL),
        ("se tapó el desagüe de la regadera", Trade.PLUMBING),
        ("hay chinches en el colchón", Trade.PEST),
        ("no enciende la secadora", Trade.APPLIANCE),
        ("la calefacción no prende", Trade.HVAC),
    ],
)
def test_the_words_of_a_problem_point_to_its_trade(text: str, trade: Trade) -> None:
    assert trade_in(text) is trade


def test_a_specific_trade_outranks_the_handymans_words() -> None:
    # "window" is general work, "outlet" and "sparks" an electrician's: the electrician goes.
    assert trade_in("outlet under the window sparks") is Trade.ELECTRICAL


def test_the_trade_with_most_words_wins_and_a_tie_goes_to_the_first_listed() -> None:
    assert trade_in("the fridge hums and the freezer ices over, the sink is fine") is (
        Trade.APPLIANCE
    )
    assert trade_in("dishwasher hose leaks") is Trade.PLUMBING  # one each: plumbing is first


def test_words_that_name_no_trade_give_none() -> None:
    assert trade_in("something is wrong, please help") is None
    assert trade_in("") is None


def test_the_job_trade_is_the_category_first_then_the_summary_then_the_notes() -> None:
    assert job_trade(work_order(summary="mice in the pantry", category="hvac")) is Trade.HVAC
    assert job_trade(work_order(summary="mice in the pantry")) is Trade.PEST
    vague = work_order(summary="strange noise at night")
    assert job_trade(vague) is None
    assert job_trade(vague, ["it comes from the furnace"]) is Trade.HVAC


# --- what a reply gives -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "given"),
    [
        # English.
        (
            "Nobody's around in the day, the doorman has a key. Thursdays from 10 works",
            {"access", "availability"},
        ),
        ("We've got a parrot and an elderly beagle", {"pets"}),
        ("no animals here. I'm home after 6:30pm", {"pets", "access", "availability"}),
        ("Can't do Fridays; anything before noon otherwise", {"availability"}),
        ("tomorrow between 1 and 3 is good, I'll buzz them up", {"availability", "access"}),
        ("it's in the guest room closet", {"location"}),
        ("behind the water heater", {"location", "trade"}),
        ("Only if I'm there please, no entry without me", {"access"}),
        ("weekend mornings, and mind the kitten", {"availability", "pets"}),
        ("6 onwards suits me", {"availability"}),
        ("7ish is best", {"availability"}),
        ("9 till 11 works", {"availability"}),
        ("after school works best", {"availability"}),
        # A door in a reply is the way in, not the job.
        ("the side door code is 2231; any weekday", {"access", "availability"}),
        # Spanish (with and without accents: people type both).
        ("Sólo estoy en casa los sábados después de las 4", {"access", "availability"}),
        ("No tenemos mascotas", {"pets"}),
        (
            "El portero tiene la llave, pueden venir cualquier dia entre semana",
            {"access", "availability"},
        ),
        ("Tenemos dos gatitos, mejor por las tardes", {"pets", "availability"}),
        ("esta en el bano de arriba", {"location"}),
        ("si no estoy, que entre con el encargado", {"access"}),
        ("el jueves a las 11 le abro yo", {"availability", "access"}),
        ("de 9 a 1 sin problema", {"availability"}),
        ("mejor el 12 de enero", {"availability"}),
        ("pasen nomás, queda abierto", {"access"}),
        ("después del trabajo", {"availability"}),
    ],
)
def test_a_reply_gives_what_it_speaks_of(reply: str, given: set[GatherItem]) -> None:
    assert set(items_in(reply)) == given


@pytest.mark.parametrize("reply", ["thanks!", "ok", "gracias", "👍", "sounds good to me"])
def test_a_reply_that_says_nothing_about_the_job_gives_nothing(reply: str) -> None:
    assert items_in(reply) == ()


def test_what_a_reply_gives_is_in_the_items_order() -> None:
    given = items_in("Sunday works, two dogs, spare key under the mat, water pools by the tub")
    assert given == tuple(item for item in GATHER_ITEMS if item in set(given))
    assert given == ("trade", "location", "access", "pets", "availability")


@pytest.mark.parametrize(
    "text",
    [
        "it's been dripping for 2 hours",  # a duration, not when to come
        "the 2nd floor hallway",  # a floor, not a date
        "las 3 tuberías del sótano",  # three pipes, not three o'clock
        "the power is out in the den",  # the power, not the tenant
        "no puedo abrir la ventana",  # a stuck window, not opening the door to a vendor
    ],
)
def test_numbers_and_words_that_only_look_like_an_answer_are_not_one(text: str) -> None:
    given = set(items_in(text))
    assert "availability" not in given
    assert "access" not in given


def test_a_reply_never_gives_a_photo() -> None:
    assert "photo" not in items_in("photo attached of the damage, see picture")


# --- what a vendor still needs ------------------------------------------------------------------


def test_a_located_plumbing_job_with_no_notes_needs_access_pets_and_times() -> None:
    wo = work_order(summary="slow drain in the laundry room", category="plumbing")
    assert needs(wo, [], photos=0) == ("access", "pets", "availability")


def test_a_vague_job_needs_everything_but_a_photo() -> None:
    wo = work_order(summary="something is off, please send someone")
    assert needs(wo, [], photos=0) == ("trade", "location", "access", "pets", "availability")


def test_notes_that_answer_everything_leave_nothing_to_ask() -> None:
    wo = work_order(summary="slow drain in the laundry room", category="plumbing")
    notes = ["The super can let you in", "no pets", "weekdays after 4pm"]
    assert needs(wo, notes, photos=0) == ()


def test_time_words_in_the_summary_describe_the_problem_not_when_to_come() -> None:
    wo = work_order(summary="kitchen tap drips every night since Monday", category="plumbing")
    assert "availability" in needs(wo, [], photos=0)


def test_a_place_in_the_notes_locates_a_job_the_summary_did_not() -> None:
    wo = work_order(summary="outlet stopped working", category="electrical")
    assert "location" in needs(wo, [], photos=0)
    assert "location" not in needs(wo, ["the one next to the bed in the small bedroom"], 0)


def test_a_trade_in_the_notes_answers_the_trade() -> None:
    wo = work_order(summary="odd smell in the hallway")
    assert "trade" in needs(wo, [], photos=0)
    assert "trade" not in needs(wo, ["I think it's a dead rat in the wall"], photos=0)


@pytest.mark.parametrize(
    ("category", "summary"),
    [
        ("appliance", "oven won't heat (kitchen)"),
        ("pest", "roaches under the kitchen sink"),
        ("general", "shingles missing above the bedroom"),  # roofing, read from the words
    ],
)
def test_the_trades_that_must_see_the_problem_need_a_photo_until_one_comes(
    category: str, summary: str
) -> None:
    wo = work_order(summary=summary, category=category)
    assert job_trade(wo) in PHOTO_TRADES
    assert "photo" in needs(wo, [], photos=0)
    assert "photo" not in needs(wo, [], photos=1)


@pytest.mark.parametrize("category", ["plumbing", "electrical", "hvac", "locks", "structural"])
def test_other_trades_never_need_a_photo(category: str) -> None:
    assert "photo" not in needs(work_order(summary="it broke", category=category), [], 0)


def test_a_lock_job_needs_no_place_in_the_unit() -> None:
    wo = work_order(summary="key won't turn", category="locks")
    assert "location" not in needs(wo, [], photos=0)


def test_urgent_and_emergency_work_skips_gather_and_routine_does_not() -> None:
    assert skip_reason(work_order(urgency=Urgency.EMERGENCY)) == "emergency: no time to ask"
    assert skip_reason(work_order(urgency=Urgency.URGENT)) == "urgent: no time to ask"
    assert skip_reason(work_order(urgency=Urgency.ROUTINE)) is None


# --- the question -------------------------------------------------------------------------------


def test_the_question_asks_every_missing_item_in_one_text_naming_the_wo() -> None:
    wo = work_order(wo_id="WO-91d0", summary="hallway light flickers")
    text = question(wo, ("location", "pets", "availability"), "en")
    assert "WO-91d0" in text
    assert "hallway light flickers" in text
    assert "1) where in your home it is" in text
    assert "2) any pets" in text
    assert "3) when they can come" in text
    assert "photo" not in text


def test_one_missing_item_is_asked_without_a_list() -> None:
    text = question(work_order(wo_id="WO-91d0"), ("availability",), "en")
    assert "1)" not in text
    assert text.endswith("please reply with: when they can come.")


def test_the_question_is_in_spanish_for_a_spanish_reader_and_english_for_others() -> None:
    wo = work_order(wo_id="WO-91d0")
    spanish = question(wo, ("access", "photo"), "es")
    assert "WO-91d0" in spanish
    assert "si pueden entrar si usted no está" in spanish
    assert "una foto del problema" in spanish
    assert question(wo, ("access",), "fr") == question(wo, ("access",), "en")


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_item_with_a_long_summary_fits_and_keeps_the_wo_id(language: str) -> None:
    wo = work_order(wo_id="WO-1b2c3d4e5f", summary="a very long description " * 20)
    text = question(wo, GATHER_ITEMS, language)
    assert len(text) <= MAX_QUESTION_CHARS
    assert "WO-1b2c3d4e5f" in text
    assert "6)" in text  # every item asked, none cut off
    assert text.endswith(".")


def test_the_question_lists_items_in_order_once_whatever_order_it_is_given() -> None:
    wo = work_order(wo_id="WO-91d0")
    assert question(wo, ("pets", "location", "pets"), "en") == question(
        wo, ("location", "pets"), "en"
    )


def test_nothing_missing_is_not_a_question() -> None:
    with pytest.raises(ValueError, match="nothing to ask"):
        question(work_order(), (), "en")


@settings(max_examples=80)
@given(
    wo_id=st.from_regex(r"WO-[0-9A-F]{4,12}", fullmatch=True),
    summary=st.text(min_size=1, max_size=400).filter(lambda s: s.strip() != ""),
    missing=st.lists(st.sampled_from(GATHER_ITEMS), min_size=1),
    language=st.sampled_from(["en", "es", "it"]),
)
def test_any_question_fits_names_the_wo_and_asks_every_item(
    wo_id: str, summary: str, missing: list[GatherItem], language: str
) -> None:
    text = question(work_order(wo_id=wo_id, summary=summary), missing, language)
    assert len(text) <= MAX_QUESTION_CHARS
    assert wo_id in text
    asked = len(set(missing))
    if asked > 1:
        assert f"{asked}) " in text  # the last item is there, not cut
