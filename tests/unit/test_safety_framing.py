"""The safety floor reads how a text frames a hazard (safety_framing, #20 eighth round).

Each kind of frame, both ways: the look-alike that names a hazard in the past, as fixed, as a
question about "if", as a detector's upkeep, as steady, as elsewhere or as a figure of speech
stays quiet; the real emergency with the same words and a sign that it is happening now still
raises. Wordings written for these tests, in no labeled set. The phrase rules alone are asked
(``rules_floor``): the frames are theirs, and every look-alike here raised before them.
"""

from __future__ import annotations

import pytest

from maestro.domain import safety, safety_framing
from maestro.domain.safety import rules_floor
from maestro.domain.safety_rules import Rule

QUIET = [
    # past: weeks or more ago
    ("past", "two summers ago the basement flooded during the hurricane, are the new drains ok?"),
    ("past", "back in january a pipe burst in the laundry room, will the drywall ever be closed"),
    ("past", "someone broke into the bike room years back, do we still need the code to get in"),
    # resolved: dealt with after the hit
    (
        "resolved",
        "heads up, smoke was pouring out of the dryer vent earlier, maintenance emptied the lint "
        "and its all good",
    ),
    (
        "resolved",
        "the breaker panel was buzzing on sunday, the electrician came and replaced a breaker, "
        "works fine",
    ),
    # hypothetical: inside a conditional
    (
        "hypothetical",
        "if the carbon monoxide alarm ever goes off at night, do we call you or the fire "
        "department first?",
    ),
    ("hypothetical", "in the event of a gas leak, where is the shutoff for our unit"),
    (
        "hypothetical",
        "what do we do if the sewage backs up into the tub while the plumber is on vacation",
    ),
    # upkeep: a detector looked after
    (
        "upkeep",
        "the carbon monoxide alarm in the nursery says end of life on its little screen, who "
        "replaces those",
    ),
    (
        "upkeep",
        "when can someone re-mount the carbon monoxide sensor that dropped off the wall during "
        "the paint job",
    ),
    # steady: said not to be getting worse
    (
        "steady",
        "there is a slow drip from the kitchen ceiling into a pot, it is not getting worse, can "
        "someone look friday",
    ),
    # elsewhere: the responders are for another place
    (
        "elsewhere",
        "fire trucks outside with their lights going, they're going to the warehouse down the "
        "block",
    ),
    # a figure of speech
    (
        "figure_of_speech",
        "our group chat is on fire about the new parking rules, can you send the notice",
    ),
]

LIVE = [
    # the same words, and the hazard is happening now
    "two summers ago the basement flooded and now its flooding again, water up to my ankles",
    "a pipe burst back in january and its spraying again right now, the laundry room is soaked",
    "someone broke into the bike room years back and someone just kicked in my door",
    "smoke was pouring out of the dryer vent earlier and maintenance said its all good, but its "
    "smoking again and the hall is hazy",
    "the electrician replaced a breaker on sunday but the panel is buzzing and smells like "
    "burning plastic",
    "if anyone is reading this, there is a gas leak in the boiler room, i can hear it hissing",
    "not sure what to do if this counts, the carbon monoxide alarm is going off and my wife "
    "feels dizzy",
    "changed the batteries in the carbon monoxide detector and it is still shrieking, my "
    "husband has a pounding headache",
    "the ceiling above the tub is dripping nonstop and the puddle is getting bigger",
    "the fire trucks outside are for our building, theres smoke in the hall",
    "the trash chute is on fire, smoke on every floor",
    "the gas smell from last week was faint but now its really strong in the kitchen",
    "the roof was patched last fall. water is pouring in through the bedroom ceiling",
    # a past story beside a present one: it happened again, it is going on, it is wider
    "my neighbor had a fire last year and now their unit is on fire again",
    "the pipe that burst last winter burst again, water pouring into the electrical panel",
    "the ceiling crack from last spring is way wider and chunks are falling on the bed",
    # a condition that tells what is going on is no hypothetical
    "what do i do if the carbon monoxide alarm in the hall is blaring",
    "what should we do if theres smoke seeping out from under the door of 6C",
]


@pytest.mark.parametrize(("kind", "text"), QUIET)
def test_a_hazard_framed_as_not_happening_now_stays_quiet(kind: str, text: str) -> None:
    assert rules_floor(text) is None, rules_floor(text)


@pytest.mark.parametrize("text", LIVE)
def test_the_same_words_with_the_hazard_happening_now_still_raise(text: str) -> None:
    assert rules_floor(text) is not None


@pytest.mark.parametrize(("kind", "text"), QUIET)
def test_each_look_alike_is_quieted_by_its_own_kind_of_frame(kind: str, text: str) -> None:
    # The frame of the first phrase a rule would have raised: the kind the text is about.
    frames = set()
    for rule in _rules():
        match = rule.pattern.search(text)
        if match is not None:
            frames.add(safety_framing.frame(text, *match.span()))
    assert kind in frames, frames


@pytest.mark.parametrize(
    "text",
    [
        "yesterday it was faint, now the smell is strong",
        "it's sparking again",
        "the leak is getting worse",
        "still smells like gas in here",
        "my daughter is dizzy",
        "someone just broke the window",
        "this is not a drill",
    ],
)
def test_live_signs(text: str) -> None:
    assert safety_framing.live(text)


@pytest.mark.parametrize(
    "text",
    [
        "all fine now",
        "the floor is dry now, thanks",
        "it isn't spreading",
        "nobody is dizzy",
        "i just wanted to let you know",
        "the heat is working again",
    ],
)
def test_an_all_clear_is_no_live_sign(text: str) -> None:
    assert not safety_framing.live(text)


def test_the_hits_own_words_are_no_live_sign() -> None:
    text = "last month's flooding in the laundry room left a stain, can it be painted"
    start = text.index("flooding")
    assert safety_framing.live(text)
    assert not safety_framing.live(text, (start, start + len("flooding")))
    assert rules_floor(text) is None


def _rules() -> tuple[Rule, ...]:
    return safety._RULES


def test_the_learned_half_reads_the_texts_frames() -> None:
    """Features version 5: each frame the text holds is a whole-text feature of the model."""
    from maestro.domain.safety_model import bucket, features

    past = features("the basement flooded two winters ago, can the drain be checked")
    live_now = features("the basement is flooding right now")
    assert bucket("f:past") in past
    assert bucket("f:past") not in live_now
    assert bucket("f:live") in live_now
    assert bucket("f:live") not in past
    assert safety_framing.text_frames("if the heat ever goes out, who do i call") == (
        "hypothetical",
    )
