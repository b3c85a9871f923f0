"""The deterministic safety floor (I1, I5): recall on emergencies, precision on everyday text."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import pytest
from pydantic import ValidationError

from maestro.domain import safety, safety_lexicon, safety_model
from maestro.domain.safety import CATEGORIES, SafetyHit, safety_floor

REPO = Path(__file__).resolve().parents[2]
CLINC = REPO / ".." / "shared" / "data" / "clinc150" / "clinc150_train_val.json"
LABELED = REPO / "evals" / "labeled"


@cache
def _clinc_texts() -> tuple[str, ...]:
    if not CLINC.exists():
        pytest.fail(
            f"CLINC150 data not found at {CLINC.resolve()}: the false-raise gate needs "
            "shared/data/clinc150/clinc150_train_val.json beside the repo clone"
        )
    data: dict[str, list[list[str]]] = json.loads(CLINC.read_text(encoding="utf-8"))
    splits = ("train", "val", "oos_train", "oos_val")
    return tuple(row[0] for split in splits for row in data[split])


@cache
def _clinc_hits() -> tuple[tuple[str, SafetyHit | None], ...]:
    """The floor's reading of every CLINC150 text, computed once for the tests that gate on it
    (the floor is pure: the same text always gives the same hit)."""
    return tuple((text, safety_floor(text)) for text in _clinc_texts())


def _jsonl(name: str) -> list[dict[str, str]]:
    lines = (LABELED / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# --- the three measured gates --------------------------------------------------------------------


@pytest.mark.slow
def test_clinc150_false_raise_rate_is_at_most_a_tenth_of_a_percent() -> None:
    hits = _clinc_hits()
    assert len(hits) == 18_200
    raised = [(text, hit.phrase) for text, hit in hits if hit is not None]
    assert len(raised) / len(hits) <= 0.001, raised[:50]  # issue #20's bar (was 0.5 %)


def test_the_spanish_rules_raise_nothing_on_english_texts() -> None:
    """CLINC150 (18,200 everyday English requests) and the English labeled sets, emergencies
    included: what fires on English text is an English rule's doing, never a Spanish one's."""
    texts = [*_clinc_texts()]
    for name in ("emergencies.jsonl", "non_emergencies.jsonl", "tuning_emergencies.jsonl"):
        texts += [row["text"] for row in _jsonl(name)]
    assert [text for text in texts if safety._spanish(text, None) is not None] == []


def test_recall_on_labeled_emergencies_is_at_least_95_percent() -> None:
    rows = _jsonl("emergencies.jsonl")
    assert len(rows) >= 60
    missed = [row["text"] for row in rows if safety_floor(row["text"]) is None]
    assert (len(rows) - len(missed)) / len(rows) >= 0.95, missed


def test_labeled_emergencies_cover_every_category() -> None:
    labels = {row["category"] for row in _jsonl("emergencies.jsonl")}
    assert labels == set(CATEGORIES)


def test_hard_negatives_raise_at_most_10_percent() -> None:
    rows = _jsonl("non_emergencies.jsonl")
    assert len(rows) >= 25
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) / len(rows) <= 0.10, raised


# --- explicit cases ------------------------------------------------------------------------------

MUST_FIRE: list[tuple[str, str]] = [
    # gas
    ("i smell gas in the kitchen", "gas"),
    ("smel gas near the stove", "gas"),
    ("gass leak in the basement", "gas"),
    ("Smells like gas in here!!", "gas"),
    ("smells lik gas", "gas"),
    ("is that gas i smell", "gas"),
    ("the whole hallway reeks of gas", "gas"),
    ("hissing behind the stove and it smells like rotten eggs", "gas"),
    ("GAS LEAK!!!!", "gas"),
    # smoke / fire
    ("theres smoke coming out of the oven", "smoke_fire"),
    ("there ' s smoke in the hall", "smoke_fire"),
    ("theres smoak", "smoke_fire"),
    ("FIRE in the kitchen", "smoke_fire"),
    ("the kitchen is on fire!!!1", "smoke_fire"),
    ("house on fyre", "smoke_fire"),
    ("my dryer caught fire", "smoke_fire"),
    ("grease fire on the stove", "smoke_fire"),
    ("the outlet burst into flames", "smoke_fire"),
    ("my smoke alarm is going off", "smoke_fire"),
    # carbon monoxide
    ("carbon monoxide alarm is going off", "carbon_monoxide"),
    ("carbon monoxcide detector going off in the bedroom", "carbon_monoxide"),
    ("CO alarm beeping and we all have headaches", "carbon_monoxide"),
    ("co alarm goin off", "carbon_monoxide"),
    ("C.O. alarm going off", "carbon_monoxide"),
    # electrical
    ("sparks coming out of the outlet", "electrical"),
    ("light switch is sparking", "electrical"),
    ("burning smell from the breaker panel", "electrical"),
    ("smells like somethings burning in the walls", "electrical"),
    ("the plug in the kitchen is melting", "electrical"),
    ("exposed live wires hanging from the ceiling", "electrical"),
    # flooding
    ("water coming thru the celing in the bathroom", "flooding"),
    ("water's through the ceiling now", "flooding"),
    ("it's coming through the light fixture now", "flooding"),
    ("the kitchen is flodding", "flooding"),
    ("burst pipe under the sink, water everywhere", "flooding"),
    ("celing is leeking", "flooding"),
    ("the basement is under water", "flooding"),
    # sewage
    ("sewage backing up into the tub", "sewage"),
    ("sewege all over the bathroom floor", "sewage"),
    ("the toilet is backing up into the bathtub", "sewage"),
    # no heat in freezing weather
    ("no heat and it's freezing in here", "no_heat_freezing"),
    ("no heet and its freezin", "no_heat_freezing"),
    ("furnace stopped working, kids are freezing", "no_heat_freezing"),
    ("the radiators are cold and its 30 degrees out", "no_heat_freezing"),
    ("pipes froze", "no_heat_freezing"),
    # break-in
    ("someone broke into my apartment", "break_in"),
    ("somebody broke in while i was at work", "break_in"),
    ("sum1 broke in", "break_in"),
    ("my apartment was broken into", "break_in"),
    ("there was a break-in last night in the garage", "break_in"),
    ("we came home and the door was kicked in", "break_in"),
    # structural, including keyword-light phrasings (I5)
    ("the ceiling is sagging", "structural"),
    ("the celing is bowing down and dripping", "structural"),
    ("part of the ceiling collapsed", "structural"),
    ("huge crack in the ceiling and it's sagging", "structural"),
    ("it's sagging more every hour", "structural"),
    ("the balcony is pulling away from the wall", "structural"),
    ("chunks of plaster falling from the ceiling", "structural"),
    # other
    ("im stuck in the elevator", "other"),
]

MUST_NOT_FIRE: list[str] = [
    # the brief's everyday texts
    "pay my gas bill",
    "how much gas is in my car",
    "fire up the playlist",
    "set a smoke break reminder",
    "you're fired",
    "the gas station",
    "i'm flooded with work",
    "heat up dinner",
    "break in my new shoes",
    "smoke detector battery chirping, need a new battery",
    # negations and all-clears
    "no smoke, false alarm",
    "i don't smell gas anymore",
    "there is no gas smell",
    "the gas smell is gone now",
    "i burnt my toast and the smoke alarm went off, all good now",
    "no heat issues so far this winter",
    # maintenance-flavoured routine requests
    "gas stove wont light, no smell",
    "smoke detector needs a new battery",
    "co detector is chirping",
    "the carbon monoxide detector needs a new battery",
    "the ceiling fan is wobbly",
    "water heater is lukewarm",
    "the light is burnt out in the kitchen",
    "where is the fire extinguisher",
    "the fire escape is blocked by bikes",
    "can you light a fire in the fireplace for the open house",
    "the sink is backed up",
    "is there a sewer fee on my bill",
    "water stain on the ceiling from last month, its dry now",
    "the heat is off for the summer right?",
    # words that only look like emergencies
    "people smoke in the stairwell and it comes into my unit",
    "loud music coming through the ceiling every night",
    "cold air coming through the window",
    "spark plugs for my car",
    "what is the weather like in sparks right now",
    "the flood lights in the parking lot are out",
    "my card broke in half",
    "someone tried to get in touch with me about the lease",
    "there's a break in the fence",
    "take a break in an hour",
    "it's going to be freezing tonight, any tips for the pipes",
    "",
    "   ",
]


# Danger to people, and symptoms (#20): wordings that are in no labeled set.
DANGER_NOW_FIRES: list[tuple[str, str]] = [
    ("my grandpa just collapsed in the kitchen", "other"),
    ("the lady in 3a is unresponsive on the stairs", "other"),
    ("my boyfriend overdosed, hes barely breathing", "other"),
    ("i think my wife is having a heart attack", "other"),
    ("theres a man waving a knife around in the lobby", "other"),
    ("shots fired outside building c", "other"),
    ("my neighbour just got stabbed", "other"),
    ("the upstairs guy keeps saying he will kill us", "other"),
    ("we cant get out, the elevator is stuck between floors", "other"),
    ("my 3 year old locked himself in the bathroom", "other"),
    ("everybody here is dizzy and nauseous since the generator started", "carbon_monoxide"),
    ("the tub faucet zapped me when i touched it", "electrical"),
    ("the washer hose is spraying like a fire hose", "flooding"),
    ("the laundry room is like a swimming pool", "flooding"),
    ("been without heating all week and its 12 degrees out", "no_heat_freezing"),
    ("i smell sumthing like gas in the laundry", "gas"),
    ("the pilot is out on the water heater and it smells funny", "gas"),
    ("stinks like skunk by the furnace", "gas"),
    ("the deck boards are rotten, someone could fall right through", "structural"),
    ("the basement drain is pushing up poop", "sewage"),
]

DANGER_NOW_DOES_NOT_FIRE: list[str] = [
    "my mom is gonna kill me when she sees the carpet",
    "he shot me an email about the lease",
    "the kids had a nerf gun fight and knocked the blinds down",
    "we all feel sick, it's the flu going around, can the inspection wait",
    "the app is not responding when i pay rent",
    "the dog is bleeding a little from a scratch, unrelated but the gate is broken",
    "the smell of the new carpet is so strong i cant breathe lol",
    "my chest pain from the flu is better now, you can come in",
    "can i borrow a caulk gun",
    "i got zapped by static from the carpet again",
    "the contractor said the job might fall through",
    "our toddler has a cold so please knock quietly",
    "the odd knocking in the pipes is back",
    "the neighbours are shooting a music video in the courtyard",
]

# What a person sees, hears, smells and feels (#20, the third tuning set's rules): wordings that
# are in no labeled set; each fired on none of the rules before them.
SIGNS_FIRE: list[tuple[str, str]] = [
    ("grandpa passed out on the bathroom floor", "other"),
    ("my son swallowed a bunch of my pills", "other"),
    ("my neighbor said hes going to kill me when i get home", "other"),
    ("he punched me and took my phone", "other"),
    ("the elevator stopped between the 4th and 5th floor and were inside", "other"),
    ("my kid is stuck on the balcony and the door locked", "other"),
    ("the garage door fell on my dad", "other"),
    ("my daughter got stung by a wasp and shes allergic", "other"),
    ("my wife and i are both dizzy and the heater smells like exhaust", "carbon_monoxide"),
    ("the back burner has been on for hours with no flame", "gas"),
    ("the couch is charred and still smoking", "smoke_fire"),
    ("the wire behind the fridge is hanging out and its live", "electrical"),
    ("water is up to the bottom step of the basement stairs", "flooding"),
    ("the water is over the baseboards in the den", "flooding"),
    ("my slippers are floating in the hall", "flooding"),
    ("i cant get the valve to shut off and its spraying everywhere", "flooding"),
    ("the septic tank is overflowing into the yard", "sewage"),
    ("its 48 degrees in my apartment and i have a newborn", "no_heat_freezing"),
    ("a crack opened up across the living room ceiling overnight", "structural"),
    ("a tree fell through our roof in the storm", "structural"),
    ("someone is kicking my door trying to get in", "break_in"),
    ("our deadbolt was drilled and the tv is gone", "break_in"),
]

SIGNS_DO_NOT_FIRE: list[str] = [
    "my brother fell asleep on the couch lol",
    "my son takes pills for his allergies, can you check the air filter",
    "my neighbor said hes going to kill me if i park in his spot again lol",
    "the front door lock is sticky, hard to open",
    "its 68 degrees in here, can you turn the heat up a little",
    "the ceiling paint is peeling in the bathroom from the steam",
    "theres a crack in the bathroom mirror",
    "the elevator is out of service again, please fix",
    "a bird hit the window and cracked it",
    "the stove knob came off",
    "the kids were playing and knocked over a lamp",
    "there is water in the bottom of the fridge",
    "the pipes bang when the heat comes on",
    "the floating shelves in the kitchen are loose",
    "we have 45 people coming to the party inside, can the lobby be open",
]


# The fourth tuning set's rules (#20): wordings that are in no labeled set; each fired on none of
# the rules before them.
SIGNS4_FIRE: list[tuple[str, str]] = [
    ("my nephew swallowed one of those little round batteries", "other"),
    ("the toddler got into the drain cleaner under the sink", "other"),
    ("my 4 year old is standing on the window sill and the screen is out", "other"),
    ("my baby was left in the car and its hot out", "other"),
    ("a girl is stuck inside the dryer in the laundry room", "other"),
    ("the lift door slid open and theres an empty shaft", "other"),
    ("the old lady fell in the parking garage near the ramp and isnt moving", "other"),
    ("her wrist is bent the wrong way after she slipped on the ice", "other"),
    ("we heard three shots and a car speeding off", "other"),
    ("the guy downstairs keeps yelling he will kill everybody", "other"),
    ("someone is screaming help over and over in the courtyard", "other"),
    ("my neighbor is swinging a knife at his brother", "other"),
    ("there is blood all over the elevator floor", "other"),
    ("the basement smells like burnt matches", "gas"),
    ("the furnace flue pipe fell off and my head is pounding", "carbon_monoxide"),
    ("the alarm in the hall is wailing and both of us feel sick", "carbon_monoxide"),
    ("theres popping and crackling behind the bedroom wall", "electrical"),
    ("the hallway is filled up with smoke", "smoke_fire"),
    ("its raining in the kitchen, right on the stove", "flooding"),
    ("the broken hose bib is gushing water onto the basement wall", "flooding"),
    ("the shutoff valve wont budge and the pipe is leaking", "flooding"),
    ("the carpet is soaked and its still rising", "flooding"),
    ("when the guy above me flushes it bubbles into my tub", "sewage"),
    ("heater hasnt been warm for days and theres frost inside the windows", "no_heat_freezing"),
    ("the toilet bowl has a thin layer of ice", "no_heat_freezing"),
    ("only cold air from the furnace and its snowing", "no_heat_freezing"),
    ("we found boot prints all over the kitchen floor and the laptop is missing", "break_in"),
]

SIGNS4_DO_NOT_FIRE: list[str] = [
    "my kid swallowed a grape seed, hes fine, just wanted to ask about the pool hours",
    "the batteries in the remote died, can you bring some",
    "the bleach smell from the laundry room is strong, can you open the window",
    "the window sill in my son's room is rotting",
    "i left my keys in the car, can the office open the gate",
    "the dryer is stuck on the cool cycle",
    "the elevator shaft light is out, the tech said",
    "we heard a shot of espresso machine noise all day lol",
    "can someone help me move a couch tomorrow, i'll be yelling help if it falls lol",
    "the stream behind the building is running high after the rain",
    "rain is coming down hard but everything inside is dry",
    "the valve under the sink wont turn, its stiff but nothing is leaking",
    "its 68 in the kitchen, can you check the thermostat",
    "theres frost on the windows outside in the morning",
    "the flue cap on the roof looks rusty",
    "the movers left footprints in the hallway",
    "a small fire in the fireplace last week left soot on the mantle",
    "the smoke from the neighbors grill is outside but comes in the window",
]


@pytest.mark.parametrize(
    ("text", "category"), [*MUST_FIRE, *DANGER_NOW_FIRES, *SIGNS_FIRE, *SIGNS4_FIRE]
)
def test_must_fire(text: str, category: str) -> None:
    hit = safety_floor(text)
    assert hit is not None, text
    assert hit.category == category, hit


@pytest.mark.parametrize(
    "text", [*MUST_NOT_FIRE, *DANGER_NOW_DOES_NOT_FIRE, *SIGNS_DO_NOT_FIRE, *SIGNS4_DO_NOT_FIRE]
)
def test_must_not_fire(text: str) -> None:
    assert safety_floor(text) is None


# --- the hit itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("hi, i smell gas in here", "smell gas"),
        ("Water coming THRU the celing!!", "Water coming THRU the celing"),
        ("pls help, theres smoke", "theres smoke"),
        ("someone broke in", "someone broke in"),
    ],
)
def test_hit_span_is_the_matched_text(text: str, phrase: str) -> None:
    hit = safety_floor(text)
    assert hit is not None
    assert hit.phrase == phrase
    assert text[hit.start : hit.end] == phrase
    assert hit.start == text.index(phrase)


def test_every_labeled_hit_span_indexes_the_original_text() -> None:
    for row in _jsonl("emergencies.jsonl"):
        hit = safety_floor(row["text"])
        assert hit is not None
        assert row["text"][hit.start : hit.end] == hit.phrase


def test_emergency_outranks_an_earlier_urgent_hit() -> None:
    # The alarm sounding is "urgent"; the gas smell after it is the emergency to report.
    hit = safety_floor("smoke alarm going off and a gas smell in the hall")
    assert hit is not None
    assert (hit.category, hit.severity, hit.phrase) == ("gas", "emergency", "gas smell")


def test_earliest_hit_wins_between_equal_severities() -> None:
    hit = safety_floor("pipe burst in the kitchen and now theres smoke from the outlet")
    assert hit is not None
    assert hit.category == "flooding"


def test_routine_alarm_is_urgent_not_emergency() -> None:
    hit = safety_floor("the smoke detector keeps going off")
    assert hit is not None
    assert hit.severity == "urgent"


def test_safety_hit_is_frozen_and_rejects_a_span_that_disagrees_with_its_phrase() -> None:
    hit = SafetyHit(category="gas", severity="emergency", phrase="gas leak", start=3, end=11)
    with pytest.raises(ValidationError):
        hit.start = 0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        SafetyHit(category="gas", severity="emergency", phrase="gas leak", start=3, end=9)
    with pytest.raises(ValidationError):
        SafetyHit(category="flood", severity="emergency", phrase="x", start=0, end=1)  # type: ignore[arg-type]


def test_categories_are_the_literal_values() -> None:
    assert CATEGORIES[0] == "gas"
    assert len(set(CATEGORIES)) == len(CATEGORIES) == 10


@pytest.mark.slow
def test_rule_triggers_never_skip_a_match() -> None:
    # A trigger is a speed shortcut: every raw match of the rule must contain it, or the shortcut
    # would silently drop an emergency.
    texts = [
        *_clinc_texts(),
        *(row["text"] for row in _jsonl("emergencies.jsonl")),
        *(row["text"] for row in _jsonl("non_emergencies.jsonl")),
        *(row["text"] for row in _jsonl("tuning_emergencies.jsonl")),
        *(text for text, _ in MUST_FIRE),
        *MUST_NOT_FIRE,
        *(text for text, _ in SYMPTOMS_FIRE),
        *SYMPTOMS_DO_NOT_FIRE,
        *(row["text"] for row in _jsonl("tuning2_emergencies.jsonl")),
        *(row["text"] for row in _jsonl("tuning2_non_emergencies.jsonl")),
        *(row["text"] for row in _jsonl("tuning3_emergencies.jsonl")),
        *(row["text"] for row in _jsonl("tuning3_non_emergencies.jsonl")),
        *(text for text, _ in DANGER_NOW_FIRES),
        *DANGER_NOW_DOES_NOT_FIRE,
        *(text for text, _ in SIGNS_FIRE),
        *SIGNS_DO_NOT_FIRE,
        *(row["text"] for row in _jsonl("tuning4_emergencies.jsonl")),
        *(row["text"] for row in _jsonl("tuning4_non_emergencies.jsonl")),
        *(text for text, _ in SIGNS4_FIRE),
        *SIGNS4_DO_NOT_FIRE,
    ]
    # The rules read the typo-corrected text, so that is the one to check.
    texts = [corrected.text if (corrected := safety._correct_typos(t)) else t for t in texts]
    checked = 0
    for rule in safety._RULES:
        if rule.trigger is None and not rule.stems:
            continue
        for text in texts:
            for match in rule.pattern.finditer(text):
                checked += 1
                if rule.trigger is not None:
                    assert rule.trigger.search(match.group()), (rule.category, match.group(), text)
                # The stems are a cheaper shortcut still, checked before the trigger.
                if rule.stems:
                    phrase = match.group().lower()
                    assert any(stem in phrase for stem in rule.stems), (rule.stems, phrase, text)
    assert checked > 50


# --- the tuning set (misspelled keywords, hazards named by their symptoms) -----------------------
# A development set like emergencies.jsonl: the rules were tuned on it, so full recall on it says
# little about new phrasings. The holdout (evals/labeled/holdout_*.jsonl) is measured by the
# benchmark, never asserted here: a test that demanded recall on it would force tuning on it.


def test_recall_on_the_tuning_set_is_at_least_95_percent_for_each_kind() -> None:
    rows = _jsonl("tuning_emergencies.jsonl")
    assert len(rows) >= 60
    for kind in ("misspelled", "symptoms"):
        of_kind = [row for row in rows if row["kind"] == kind]
        missed = [row["text"] for row in of_kind if safety_floor(row["text"]) is None]
        assert len(of_kind) >= 30, kind
        assert (len(of_kind) - len(missed)) / len(of_kind) >= 0.95, (kind, missed)


def test_tuning_rows_are_well_formed() -> None:
    for row in _jsonl("tuning_emergencies.jsonl"):
        assert set(row) == {"text", "category", "kind"}, row
        assert row["category"] in CATEGORIES, row
        assert row["kind"] in {"misspelled", "symptoms"}, row


def test_every_tuning_hit_span_indexes_the_original_text() -> None:
    for row in _jsonl("tuning_emergencies.jsonl"):
        hit = safety_floor(row["text"])
        assert hit is not None, row
        assert row["text"][hit.start : hit.end] == hit.phrase


# --- the second tuning set (#20): medical, violence, and symptoms without the hazard's name -------
# Also a development set: written before the rules changed for it (44/86 fired then), tuned on
# since. The holdout is still measured by the benchmark only.

# The kinds of danger the floor reports as "other" (its advice is to call 911).
_OTHER_LABELS = {"medical", "violence"}


def test_recall_on_the_second_tuning_set_is_at_least_95_percent_for_each_kind() -> None:
    rows = _jsonl("tuning2_emergencies.jsonl")
    assert len(rows) >= 80
    for kind in ("misspelled", "symptoms", "keyword_free"):
        of_kind = [row for row in rows if row["kind"] == kind]
        missed = [row["text"] for row in of_kind if safety_floor(row["text"]) is None]
        assert len(of_kind) >= 20, kind
        assert (len(of_kind) - len(missed)) / len(of_kind) >= 0.95, (kind, missed)


def test_medical_and_violent_emergencies_are_reported_as_other() -> None:
    rows = [r for r in _jsonl("tuning2_emergencies.jsonl") if r["category"] in _OTHER_LABELS]
    assert len(rows) >= 20
    for row in rows:
        hit = safety_floor(row["text"])
        assert hit is not None, row
        assert (hit.category, hit.severity) == ("other", "emergency"), (row, hit)
        assert row["text"][hit.start : hit.end] == hit.phrase


def test_the_second_tuning_sets_hard_negatives_raise_at_most_5_percent() -> None:
    rows = _jsonl("tuning2_non_emergencies.jsonl")
    assert len(rows) >= 40
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) / len(rows) <= 0.05, raised


def test_second_tuning_rows_are_well_formed() -> None:
    for row in _jsonl("tuning2_emergencies.jsonl"):
        assert set(row) == {"text", "category", "kind"}, row
        assert row["category"] in {*CATEGORIES, *_OTHER_LABELS}, row
        assert row["kind"] in {"misspelled", "symptoms", "keyword_free"}, row
    for row in _jsonl("tuning2_non_emergencies.jsonl"):
        assert row["category"] == "none", row


# --- the third tuning set (#20): what a person sees, hears, smells and feels -------------------
# A development set too: written before the rules changed for it (74/113 fired then), tuned on
# since. Keyword-free rows are most of it; the holdout is still measured by the benchmark only.


def test_recall_on_the_third_tuning_set_is_at_least_95_percent_for_each_kind() -> None:
    rows = _jsonl("tuning3_emergencies.jsonl")
    assert len(rows) >= 100
    for kind in ("misspelled", "symptoms", "keyword_free"):
        of_kind = [row for row in rows if row["kind"] == kind]
        missed = [row["text"] for row in of_kind if safety_floor(row["text"]) is None]
        assert len(of_kind) >= 20, kind
        assert (len(of_kind) - len(missed)) / len(of_kind) >= 0.95, (kind, missed)


def test_every_third_tuning_hit_span_indexes_the_original_text() -> None:
    for row in _jsonl("tuning3_emergencies.jsonl"):
        hit = safety_floor(row["text"])
        if hit is not None:
            assert row["text"][hit.start : hit.end] == hit.phrase


def test_the_third_tuning_sets_hard_negatives_raise_at_most_5_percent() -> None:
    rows = _jsonl("tuning3_non_emergencies.jsonl")
    assert len(rows) >= 50
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) / len(rows) <= 0.05, raised


def test_third_tuning_rows_are_well_formed() -> None:
    for row in _jsonl("tuning3_emergencies.jsonl"):
        assert set(row) == {"text", "category", "kind"}, row
        assert row["category"] in {*CATEGORIES, *_OTHER_LABELS}, row
        assert row["kind"] in {"misspelled", "symptoms", "keyword_free"}, row
    for row in _jsonl("tuning3_non_emergencies.jsonl"):
        assert row["category"] == "none", row


def test_recall_on_the_fourth_tuning_set_is_at_least_95_percent_for_each_kind() -> None:
    rows = _jsonl("tuning4_emergencies.jsonl")
    assert len(rows) >= 80
    for kind in ("misspelled", "symptoms", "keyword_free"):
        of_kind = [row for row in rows if row["kind"] == kind]
        missed = [row["text"] for row in of_kind if safety_floor(row["text"]) is None]
        assert len(of_kind) >= 15, kind
        assert (len(of_kind) - len(missed)) / len(of_kind) >= 0.95, (kind, missed)


def test_every_fourth_tuning_hit_span_indexes_the_original_text() -> None:
    for row in _jsonl("tuning4_emergencies.jsonl"):
        hit = safety_floor(row["text"])
        if hit is not None:
            assert row["text"][hit.start : hit.end] == hit.phrase


def test_the_fourth_tuning_sets_hard_negatives_raise_at_most_5_percent() -> None:
    rows = _jsonl("tuning4_non_emergencies.jsonl")
    assert len(rows) >= 40
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) / len(rows) <= 0.05, raised


def test_fourth_tuning_rows_are_well_formed() -> None:
    for row in _jsonl("tuning4_emergencies.jsonl"):
        assert set(row) == {"text", "category", "kind"}, row
        assert row["category"] in {*CATEGORIES, *_OTHER_LABELS}, row
        assert row["kind"] in {"misspelled", "symptoms", "keyword_free"}, row
    for row in _jsonl("tuning4_non_emergencies.jsonl"):
        assert row["category"] == "none", row


# --- typo tolerance ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("smoek in the hallway", "smoke_fire"),
        ("the garage is on fir", "smoke_fire"),
        ("flmaes coming out of the dryer", "smoke_fire"),
        ("carbon monoxyde detector going off", "carbon_monoxide"),
        ("C0 detector is beeping", "carbon_monoxide"),
        ("the outlett is sparkng", "electrical"),
        ("wall socket is sparkling", "electrical"),
        ("watter comming thru the cieling", "flooding"),
        ("the laundry room is floding", "flooding"),
        ("sewagge coming up the floor drain", "sewage"),
        ("furnance is brokn and its freezng", "no_heat_freezing"),
        ("somone kiked in the door", "break_in"),
        ("there was a brake in at the garage", "break_in"),
        ("the ceilling is colapsing", "structural"),
        ("my son is traped in the elevater", "other"),
        ("it smels like gaz", "gas"),
    ],
)
def test_misspelled_hazard_words_fire(text: str, category: str) -> None:
    hit = safety_floor(text)
    assert hit is not None, text
    assert hit.category == category, hit


@pytest.mark.parametrize(
    "text",
    [
        # real words one typo from a keyword are never "corrected"
        "the waiter spilled a glass of water on me",
        "walter from the leasing office called",
        "can you recycle this carton",
        "the bathroom is sparkling clean",
        "sparkling water in the fridge",
        "the bagging area at the store",
        "a fir tree fell in the yard last year, is it gone",
        "the brake in my car squeaks",
        "the pip of the orange",
        "has the gas bill come yet",
    ],
)
def test_real_words_near_hazard_words_do_not_fire(text: str) -> None:
    assert safety_floor(text) is None, safety_floor(text)


@pytest.mark.parametrize(
    ("token", "keyword"),
    [
        ("smkoe", "smoke"),
        ("furnance", "furnace"),
        ("watter", "water"),
        ("brokn", "broken"),  # a dropped letter is preferred: "broken" before "broke"
        ("heta", "heat"),  # four letters: swapped neighbours
        ("heatt", "heat"),  # four letters: a doubled letter
        ("gaz", "gas"),  # a known variant
    ],
)
def test_typo_fix(token: str, keyword: str) -> None:
    assert safety._typo_fix(token) == keyword


@pytest.mark.parametrize(
    "token",
    [
        "waiter",  # an English word
        "sparkling",
        "carton",
        "hest",  # four letters: a substituted letter is not enough
        "has",  # three letters: never
        "gap",
        "smoke",  # already a keyword
        "zzzzzz",
    ],
)
def test_typo_fix_leaves_words_alone(token: str) -> None:
    assert safety._typo_fix(token) is None


def test_typo_variants_follow_the_length_rule() -> None:
    assert safety_lexicon.typo_variants("gas") == set()
    assert safety_lexicon.typo_variants("heat") == {
        "ehat", "haet", "heta", "hheat", "heeat", "heaat", "heatt",
    }  # fmt: skip
    smoke = safety_lexicon.typo_variants("smoke")
    assert {"smoe", "smkoe", "smooke", "smoxe", "smokre"} <= smoke
    assert all(len(token) >= 4 for token in smoke)


def test_a_corrected_hit_indexes_the_text_as_sent() -> None:
    text = "HELP thers SMKOE comming from the outlet"
    hit = safety_floor(text)
    assert hit is not None
    assert hit.category == "smoke_fire"
    assert text[hit.start : hit.end] == hit.phrase
    assert hit.phrase == "thers SMKOE"  # the typo, as sent, not the corrected "smoke"


def test_real_word_list_is_current() -> None:
    # The list is generated from Debian's word lists; where they are not installed the check is
    # skipped (the committed list is still used, and the tests above still hold).
    regen = pytest.importorskip("regen_safety_lexicon")
    if not all(path.exists() for path in regen.WORD_LISTS):
        pytest.skip("apt-get install wamerican-large wbritish-large to check the generated list")
    assert regen.real_word_neighbours(regen.dictionary_words()) == sorted(
        safety_lexicon.REAL_WORD_NEIGHBOURS
    )


# --- hazards named by their symptoms -------------------------------------------------------------

SYMPTOMS_FIRE: list[tuple[str, str]] = [
    # carbon monoxide: a sounding alarm and a body that reacts
    ("the detector in the basement is going off and my wife feels faint", "carbon_monoxide"),
    ("alarm keeps sounding and the kids have headaches", "carbon_monoxide"),
    ("something is beeping in the hall and we are all dizzy", "carbon_monoxide"),
    ("the sensor by the water heater went off, my head is throbbing", "carbon_monoxide"),
    # gas: a hiss at a gas appliance, a sulfur or rotten-egg smell
    ("the oven is hissing and it is off", "gas"),
    ("hear a hiss near the gas meter outside", "gas"),
    ("sulfur smell in the laundry room by the dryer", "gas"),
    ("it stinks like rotten eggs in the hall", "gas"),
    # smoke / fire: smoky or hazy air, a glow, soot
    ("the bedroom smells smoky and i dont know why", "smoke_fire"),
    ("the hall is hazy and smells like burning", "smoke_fire"),
    ("orange glow coming from the attic vent", "smoke_fire"),
    ("soot coming out of the heating vents", "smoke_fire"),
    # electrical: burning smell, black or melting parts, crackling, fishy smell
    ("the outlet by the bed turned black", "electrical"),
    ("black marks around the light switch", "electrical"),
    ("the plug is warm and crackling", "electrical"),
    ("buzzing sound behind the breaker panel", "electrical"),
    ("fishy smell near the outlet and the lights keep flickering", "electrical"),
    ("smells like burning plastic in the bedroom", "electrical"),
    # structural: a wet ceiling that bulges, bubbles or cracks
    ("the ceiling has a bubble and its dripping", "structural"),
    ("bulge in the kitchen ceiling, water leaking from it", "structural"),
    ("the ceiling is cracking and its wet", "structural"),
    # flooding, sewage, no heat, break-in
    ("the water is spreading across the living room", "flooding"),
    ("the shower is filling up with brown water", "sewage"),
    ("thermostat reads 45 and the heat wont come on", "no_heat_freezing"),
    ("no heat, the kids are shivering", "no_heat_freezing"),
    ("the back door was open and the whole place was ransacked", "break_in"),
]

SYMPTOMS_DO_NOT_FIRE: list[str] = [
    "the radiator hisses when the heat comes on",
    "the burner hisses a second before it lights",
    "smoke alarm went off when i cooked bacon, gave me a headache, all good now",
    "co detector chirping, my head hurts from the noise",
    "my car alarm went off and woke me up",
    "the hot water smells like sulfur",
    "paint is bubbling on the ceiling from the shower steam",
    "hairline crack in the ceiling from an old leak, it's dry",
    "fishy smell from the trash can",
    "the living room is a little hazy from candles",
    "the thermostat is set at 55 while we travel",
    "the outlet cover is sparkling clean",
    "the water stain is the same size as last month",
]


@pytest.mark.parametrize(("text", "category"), SYMPTOMS_FIRE)
def test_hazards_named_by_their_symptoms_fire(text: str, category: str) -> None:
    hit = safety_floor(text)
    assert hit is not None, text
    assert hit.category == category, hit


@pytest.mark.parametrize("text", SYMPTOMS_DO_NOT_FIRE)
def test_routine_texts_with_symptom_words_do_not_fire(text: str) -> None:
    assert safety_floor(text) is None, safety_floor(text)


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        # an all-clear may name what cleared after the hit: "sewer smell gone"
        ("sewer smell gone after the plumber came, thanks", False),
        ("the sewer backup is fixed now", False),
        ("sewer smell is not gone, its worse", True),
        ("sewer smell everywhere in the basement", True),
    ],
)
def test_an_all_clear_may_name_what_cleared(text: str, fires: bool) -> None:
    assert (safety_floor(text) is not None) is fires, safety_floor(text)


# --- the learned half (safety_model, #20) ------------------------------------------------------
# Rules OR a linear model over hashed n-grams, trained by benchmarks/train_safety_model.py on the
# development sets above and CLINC150; its threshold was chosen by cross-validation on them.


def test_the_models_weights_were_trained_on_the_current_development_sets() -> None:
    """A changed training file makes the weights stale: retrain (the digest says which data)."""
    from train_safety_model import HOLDOUTS, TRAINING_FILES, is_holdout, training_digest

    assert safety_model.weights().digest == training_digest(), (
        "a training set changed: run .venv/bin/python benchmarks/train_safety_model.py"
    )
    assert HOLDOUTS.isdisjoint(TRAINING_FILES)
    # The second, third and fourth holdouts are spent (development sets since 2026-12-02); the
    # first, the Spanish one and every later numbered one (written blind: "holdout5…") are never
    # trained on, whatever follows the number.
    assert not any(is_holdout(name) for name in TRAINING_FILES)
    unread = ("holdout_", "holdout5", "spanish_holdout")
    assert not any(name.startswith(unread) for name in TRAINING_FILES)
    for name in (
        "holdout_emergencies.jsonl",
        "holdout5_emergencies.jsonl",
        "holdout5.jsonl",
        "holdout5_non_emergencies.jsonl",
        "holdout12_emergencies.jsonl",
        "holdout-4.jsonl",
        "spanish_holdout.jsonl",
    ):
        assert is_holdout(name), name
    for name in (
        "holdout2_emergencies.jsonl",
        "holdout3_non_emergencies.jsonl",
        "holdout4_emergencies.jsonl",
    ):
        assert not is_holdout(name), name


def test_the_weights_file_is_small() -> None:
    assert safety_model.WEIGHTS_PATH.stat().st_size < 1_000_000


# What the phrase rules alone found on each development set when the model came (#20): the
# combined floor may find more, never fewer.
_RULES_RECALL = {
    "emergencies.jsonl": 160,
    "tuning_emergencies.jsonl": 99,
    "tuning2_emergencies.jsonl": 86,
    "tuning3_emergencies.jsonl": 112,
    "tuning4_emergencies.jsonl": 84,
}


@pytest.mark.parametrize("name", sorted(_RULES_RECALL))
def test_the_model_loses_no_emergency_the_rules_found(name: str) -> None:
    rows = _jsonl(name)
    found = [row for row in rows if safety_floor(row["text"]) is not None]
    assert len(found) >= _RULES_RECALL[name]


@pytest.mark.parametrize(
    ("name", "bound"),
    [
        ("non_emergencies.jsonl", 0.10),
        ("tuning2_non_emergencies.jsonl", 0.05),
        ("tuning3_non_emergencies.jsonl", 0.05),
        ("tuning4_non_emergencies.jsonl", 0.05),
        ("keyword_free_non_emergencies.jsonl", 0.05),
    ],
)
def test_the_combined_floor_keeps_the_false_raise_bounds(name: str, bound: float) -> None:
    rows = _jsonl(name)
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) / len(rows) <= bound, raised


@pytest.mark.slow
def test_the_model_raises_at_most_a_few_clinc150_texts_itself() -> None:
    """The combined gate is above; the model's own share of it is kept small too."""
    # A model hit is one no rule made: safety_floor asks the model only when the rules are silent.
    raised = [text for text, hit in _clinc_hits() if hit is not None and hit.source == "model"]
    assert len(raised) <= 9, raised  # half the 0.1 % gate


def test_the_spanish_look_alikes_stay_quiet() -> None:
    rows = [r for r in _jsonl("spanish_emergencies.jsonl") if r["kind"] == "look_alike"]
    raised = [row["text"] for row in rows if safety_floor(row["text"]) is not None]
    assert len(raised) <= 1, raised  # the one the English CO rule raised before the model


# Written for this test, after the model was trained; of 52 such wordings the rules missed 14,
# and the model caught 3 of those (the third, "the kitchen is filling with grey haze and i can't
# see the ceiling", with the wrong category: structural, for the ceiling).
@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("there's a man in the stairwell waving a bat at people", "other"),
        ("my toddler got out the front door and i cant find her anywhere near the pool", "other"),
    ],
)
def test_the_model_reads_what_no_rule_lists(text: str, category: str) -> None:
    assert safety.rules_floor(text) is None  # no phrase rule knows these words
    hit = safety_floor(text)
    assert hit is not None
    assert (hit.source, hit.category, hit.severity) == ("model", category, "emergency")
    assert text[hit.start : hit.end] == hit.phrase
    assert hit.evidence.startswith("safety model ")
    assert hit.explained.endswith(hit.phrase)


# Written for this test after the second model was trained (ideas, #20): of three emergencies
# no rule raises, it caught these two and missed a third (a toddler leaning on a loose walkway
# rail, 0.46).
@pytest.mark.parametrize(
    ("text", "category"),
    [
        (
            "my mother and i both feel queasy and foggy every evening once the furnace kicks on,"
            " she could barely stand up tonight",
            "carbon_monoxide",
        ),
        (
            "somebody is walking around in our basement storage, i can hear them, me and the kids"
            " are hiding upstairs",
            "break_in",
        ),
    ],
)
def test_the_model_reads_an_emergency_told_in_words_no_rule_lists(text: str, category: str) -> None:
    assert safety.rules_floor(text) is None
    hit = safety_floor(text)
    assert hit is not None
    assert (hit.source, hit.category) == ("model", category)


def test_words_stand_for_ideas_and_ideas_pair_up() -> None:
    """A word the training texts never used still carries its idea ("woozy" is "dizzy"), and
    two ideas in one text are one more feature (unwell with combustion)."""
    from maestro.domain import safety_concepts

    assert "unwell" in safety_concepts.ideas_of_word("woozy")
    assert safety_concepts.ideas_of_word("woozy") == safety_concepts.ideas_of_word("dizzy")
    assert "unwell" in safety_concepts.ideas_of_word("nauseated")  # a stem: nause*
    assert "cold" in safety_concepts.ideas_of_word("shivering")
    assert "combustion" in safety_concepts.ideas_of_word("furnaces")
    # Stems never reach the everyday words they begin.
    for word in ("sparkling", "wireless", "cordless", "wallet", "postcard", "locksmith"):
        assert safety_concepts.ideas_of_word(word) == frozenset(), word
    assert "unwell" in safety_concepts.ideas(["cant", "wake", "him"])  # a pair of words
    vector = safety_model.features("we feel woozy since the furnace came on")
    assert safety_model.bucket("ii:combustion+unwell") in vector
    assert safety_model.bucket("i:unwell") in vector
    assert safety_model.bucket("ii:combustion+unwell") not in safety_model.features(
        "the furnace came on"
    )


def test_a_rules_hit_keeps_its_own_category_and_says_so() -> None:
    hit = safety_floor("i smell gas in the hallway")
    assert hit is not None
    assert (hit.source, hit.category, hit.evidence) == ("rules", "gas", "")
    assert hit.explained == hit.phrase


def test_the_model_scores_the_same_in_every_process() -> None:
    """CRC-32 buckets, not hash(): a fresh interpreter with another hash seed gives the same
    score; importing the floor imports no model and reads no weights (both wait for first use)."""
    import subprocess
    import sys

    text = "everyone here feels woozy and the baby keeps crying"
    program = (
        "import sys\n"
        "from maestro.domain import safety\n"
        "assert 'maestro.domain.safety_model' not in sys.modules\n"
        "from maestro.domain import safety_model\n"
        "assert safety_model.weights.cache_info().currsize == 0\n"
        f"print(repr(safety_model.score({text!r})))\n"
    )
    scores = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert scores == {repr(safety_model.score(text))}


def test_a_weights_file_for_other_features_is_refused() -> None:
    raw = json.loads(safety_model.WEIGHTS_PATH.read_text(encoding="utf-8"))
    assert safety_model.parse_weights(raw).threshold == safety_model.weights().threshold
    with pytest.raises(ValueError, match="retrain"):
        safety_model.parse_weights({**raw, "features_version": raw["features_version"] + 1})
    with pytest.raises(ValueError, match="retrain"):
        safety_model.parse_weights({**raw, "categories": raw["categories"][::-1]})
    with pytest.raises(ValueError, match="retrain"):
        safety_model.parse_weights({**raw, "ideas": "0" * 8})


def test_features_read_a_typo_as_mostly_the_same_word() -> None:
    """Most of a word's letter pieces survive one typo: why the model reads "smkoe" near
    "smoke" when no rule lists it."""
    right = set(safety_model.features("thick smoke in the stairwell"))
    typo = set(safety_model.features("thick smoek in the stairwell"))
    assert len(right & typo) / len(right | typo) > 0.5
    assert safety_model.features("") == {}
    assert safety_model.tokens("Don’t  go\u00a0in!")[0].word == "dont"


def test_words_after_a_negator_are_read_as_denied() -> None:
    """ "no smoke" is not "smoke": the words just after a negator get an ``n:`` feature of their
    own (within three words), so a look-alike that names a hazard to deny it reads apart."""
    denied = safety_model.features("theres no smoke anywhere in the hall")
    assert safety_model.bucket("n:smoke") in denied
    assert safety_model.bucket("w:smoke") in denied  # the word itself is still read
    assert safety_model.bucket("n:smoke") not in safety_model.features("smoke in the hall, no")
    far = safety_model.features("no idea why but the hall is full of smoke")
    assert safety_model.bucket("n:smoke") not in far  # too far from the negator
    assert safety_model.bucket("n:spreading") in safety_model.features("it isnt spreading")


def test_a_text_has_one_length_band() -> None:
    """A long, calm report dilutes each n-gram's value (unit length): its length band is a
    feature of its own, one per text, owned by no word (so it is never named as evidence)."""
    bands = ("1-4", "5-9", "10-19", "20-39", "40+")

    def present(text: str) -> list[str]:
        vector = safety_model.features(text)
        return [band for band in bands if safety_model.bucket(f"l:{band}") in vector]

    assert present("water everywhere") == ["1-4"]
    assert present("the water is coming in under the door") == ["5-9"]
    assert present(" ".join(["word"] * 45)) == ["40+"]
    assert present("") == []


def test_responders_sounds_and_alarms_are_ideas() -> None:
    from maestro.domain import safety_concepts

    assert "responder" in safety_concepts.ideas(["the", "firemen", "are", "here"])
    assert "responder" in safety_concepts.ideas(["they", "red", "tagged", "the", "stove"])
    assert "evacuated" in safety_concepts.ideas(["they", "told", "us", "to", "leave"])
    assert "noise" in safety_concepts.ideas_of_word("whooshing")
    assert "alarm" in safety_concepts.ideas_of_word("beeping")
    assert "hot" in safety_concepts.ideas_of_word("charred")


def test_the_fast_path_reads_the_same_n_grams_as_token_features() -> None:
    """The runtime looks each word's own n-grams up once (cached); it must give exactly the
    buckets, and first words, that ``token_features`` defines."""
    for text in (
        "theres no smoke but the outlet isnt cool, it crackles",
        "Utility guy red-tagged the stove!! we r outside",
        "no no never without fire",
        "",
    ):
        words = safety_model.tokens(text)
        expected: dict[int, int] = {}
        for gram, index in safety_model.token_features(words):
            expected.setdefault(safety_model.bucket(gram), index)
        assert safety_model._gram_buckets(words) == expected, text


# Written for this test after the third model was trained (seventh round, #20), in kinds of
# wording the third holdout showed weak (someone else's action on the scene, a sound, a child
# at a height); no rule fires on them. Of four such wordings written then, the model raised all
# three emergencies and left the one look-alike quiet (0.968, close to the 0.975 threshold: not
# asserted here).
@pytest.mark.parametrize(
    "text",
    [
        "the fire marshal just walked the building with some gadget and now everyone on floors 1"
        " to 3 has to wait across the street",
        "theres a whistling roar coming from the meter closet and the hall smells off, we took"
        " the kids down to the lobby",
        "my son climbed out onto the ledge of the 5th floor window and wont come back in",
    ],
)
def test_the_model_reads_wordings_written_after_its_third_training(text: str) -> None:
    assert safety.rules_floor(text) is None
    hit = safety_floor(text)
    assert hit is not None
    assert hit.source == "model"
