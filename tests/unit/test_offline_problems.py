"""The offline brain splits a package into its problems, whatever the thing (issue #20, item 3).

One work order per new problem, even when the lexicon does not know the thing (its category is
then ``general``, never the neighbour's); a detail naming a part of an open work order's thing
(``maestro.domain.parts``) joins that work order. Wordings of our own, used by no labeled set or
scenario. Each case is what reaches the queue after consensus and dispose.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from builders import MARIA, package, wo_context

from maestro.brain.offline import OfflineBrain
from maestro.domain.actions import CreateWo, Lane
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.models import OpenContext
from maestro.domain.parts import PARTS_OF, parts_of

SLOW_SINK = wo_context("WO-510", "kitchen sink drains slowly, unit 7C")
RUNNING_TOILET = wo_context("WO-511", "toilet keeps running, unit 7C")
UNLOCKING_DOOR = wo_context("WO-512", "front door won't lock, unit 7C")
LEAKY_WASHER = wo_context("WO-513", "washing machine leaks during the spin cycle, unit 7C")
UNDRAINED_DISHWASHER = wo_context("WO-514", "dishwasher won't drain, unit 7C")
WARM_FRIDGE = wo_context("WO-515", "refrigerator not cooling, unit 7C")


def _queued(text: str, contexts: Sequence[OpenContext] = ()) -> list[object]:
    """What is queued: (lane, target) for a relay or a clarify, (summary, category) for a
    create."""
    pkg = package(text)
    samples = OfflineBrain().samples(pkg, "tenant", contexts)
    disposal = dispose(pkg, MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))
    queued: list[object] = []
    for item in disposal.actions:
        action = item.action
        if isinstance(action, CreateWo):
            queued.append((action.params.summary, action.params.category))
        else:
            queued.append((Lane(action.lane), action.target_wo_id))
    return queued


# --- several problems, one of a thing the lexicon does not know: one WO each --------------------


@pytest.mark.parametrize(
    ("text", "created"),
    [
        (
            "the dishwasher won't start, and the hallway mirror is cracked",
            [
                ("the dishwasher won't start", "appliance"),
                ("the hallway mirror is cracked", "general"),
            ],
        ),
        (
            "my garage opener quit working and there's a leak under the bathroom sink",
            [
                ("my garage opener quit working", "general"),
                ("there's a leak under the bathroom sink", "plumbing"),
            ],
        ),
        (
            # a leak of an unknown thing: the thing's category (general), not the leak's
            "the skylight is leaking and the heater makes a rattling noise",
            [("the skylight is leaking", "general"), ("the heater makes a rattling noise", "hvac")],
        ),
        (
            "the doorbell doesn't work, the blinds are jammed and the toilet won't flush",
            [
                ("the doorbell doesn't work", "general"),
                ("the blinds are jammed", "general"),
                ("the toilet won't flush", "plumbing"),
            ],
        ),
    ],
)
def test_each_problem_opens_its_own_work_order_whatever_the_thing(
    text: str, created: list[tuple[str, str]]
) -> None:
    assert _queued(text) == created


def test_a_problem_with_an_unknown_thing_opens_a_general_work_order_beside_an_open_one() -> None:
    assert _queued("my garage opener quit working", (SLOW_SINK,)) == [
        ("my garage opener quit working", "general")
    ]


def test_the_tenants_own_belongings_are_no_problem_with_the_home() -> None:
    assert _queued("my phone isn't charging, text me later") == [
        (Lane.CONTINUE_WITH_ASSISTANT, None)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "the bathroom faucet is loose and drips down the vanity",
        "the fridge is leaking onto the baseboard",
        "my dryer vent is clogged and lint blows across the laundry shelf",
        "the radiator is leaking and the water runs toward the bookcase",
        "the closet door is busted, it slid off the rail",
        "my patio screen door is broken and it's hanging off the frame",
    ],
)
def test_where_the_trouble_goes_is_no_thing_of_its_own(text: str) -> None:
    """ "drips down the vanity": the vanity is where the water goes, not a second problem; "it
    slid off the rail": the pronoun is the thing before it."""
    ((summary, _),) = _queued(text)  # type: ignore[misc]
    assert summary == text


# --- a part of a problem's thing: more of that problem -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the toilet keeps running and the flapper looks worn",
        "the bathroom sink is clogged and its stopper is stuck",
    ],
)
def test_a_part_of_the_thing_in_the_same_text_is_the_same_problem(text: str) -> None:
    ((summary, _),) = _queued(text)  # type: ignore[misc]
    assert summary == text


@pytest.mark.parametrize(
    ("text", "contexts", "joined"),
    [
        ("the flapper doesn't seem to seal", (RUNNING_TOILET, SLOW_SINK), "WO-511"),
        ("the deadbolt on it barely turns", (UNLOCKING_DOOR,), "WO-512"),
        ("the strainer basket is full of gunk", (SLOW_SINK, RUNNING_TOILET), "WO-510"),
        ("the drain hose behind it is split", (LEAKY_WASHER,), "WO-513"),
        ("the filter at the bottom is full of gunk", (UNDRAINED_DISHWASHER, WARM_FRIDGE), "WO-514"),
    ],
)
def test_a_detail_naming_a_part_of_an_open_things_joins_its_work_order(
    text: str, contexts: tuple[OpenContext, ...], joined: str
) -> None:
    assert _queued(text, contexts) == [(Lane.RELAY_TO_OPEN_WO, joined)]


def test_a_part_detail_and_a_new_unknown_problem_in_one_text_go_their_own_ways() -> None:
    queued = _queued(
        "the flapper won't seal right, also the patio gate is busted", (RUNNING_TOILET,)
    )
    assert len(queued) == 2
    assert set(queued) == {
        (Lane.RELAY_TO_OPEN_WO, "WO-511"),
        ("the patio gate is busted", "general"),
    }


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # a fridge has a door and a light, but so has every room: said alone, they are new
        ("the bedroom door is stuck", "locks"),
        ("the closet light flickers", "electrical"),
    ],
)
def test_a_part_that_is_a_thing_of_its_own_is_no_detail_unless_said_as_its(
    text: str, category: str
) -> None:
    assert _queued(text, (WARM_FRIDGE,)) == [(text, category)]


def test_a_part_of_another_thing_named_in_the_words_is_no_name_for_the_open_one() -> None:
    """ "The microwave door" is the microwave's door: it does not name the fridge's door."""
    fridge_door = wo_context("WO-516", "fridge door won't seal shut, unit 7C")
    queued = _queued("the microwave door won't shut", (fridge_door,))
    assert (Lane.RELAY_TO_OPEN_WO, "WO-516") not in queued


def test_the_part_of_table_is_one_word_per_part_and_knows_the_common_fixtures() -> None:
    for thing in ("sink", "toilet", "door", "window", "refrigerator", "dishwasher"):
        assert parts_of(thing), thing
    assert parts_of("spaceship") == frozenset()
    for parts in PARTS_OF.values():
        assert all(part == part.lower() and " " not in part for part in parts)


# --- review of #20: plain symptoms of a thing coming apart or acting up -----------------------


@pytest.mark.parametrize(
    ("text", "created"),
    [
        (
            "the coat hook fell down. also the tub faucet drips",
            [("the coat hook fell down", "general"), ("the tub faucet drips", "plumbing")],
        ),
        (
            "the stair banister is shaky and the hall closet light keeps flashing",
            [
                ("the stair banister is shaky", "general"),
                ("the hall closet light keeps flashing", "electrical"),
            ],
        ),
        (
            "my vanity mirror shattered, plus the bathroom vent keeps whistling",
            [
                ("my vanity mirror shattered", "general"),
                ("the bathroom vent keeps whistling", "hvac"),
            ],
        ),
    ],
)
def test_a_thing_coming_apart_or_acting_up_is_a_problem_of_its_own(
    text: str, created: list[tuple[str, str]]
) -> None:
    """Before: "fell down", "shaky", "shattered", "keeps flashing/whistling" were no symptom, so
    the clause joined its neighbour's work order or the whole text opened none."""
    assert _queued(text) == created


@pytest.mark.parametrize(
    "text",
    [
        "my daughter keeps asking when the electrician comes",
        "the kids keep playing with the thermostat",
        "my nephew fell down the stairs at school",
    ],
)
def test_what_people_keep_doing_is_no_problem_with_the_home(text: str) -> None:
    assert not [q for q in _queued(text) if isinstance(q, tuple) and isinstance(q[1], str)]


@pytest.mark.parametrize(
    ("text", "contexts", "queued"),
    [
        (
            "the dishwasher is still wet inside. also the hallway carpet is torn",
            (UNDRAINED_DISHWASHER, WARM_FRIDGE),
            [
                ("the hallway carpet is torn", "general"),
                (Lane.RELAY_TO_OPEN_WO, "WO-514"),
            ],
        ),
        (
            "the kitchen sink is still slow; the garage light went dead",
            (SLOW_SINK, WARM_FRIDGE),
            [
                ("the garage light went dead", "electrical"),
                (Lane.RELAY_TO_OPEN_WO, "WO-510"),
            ],
        ),
    ],
)
def test_news_that_an_open_problem_persists_and_a_new_problem_go_their_own_ways(
    text: str, contexts: tuple[OpenContext, ...], queued: list[object]
) -> None:
    """Review of #20: "the fridge is still warm" was no problem clause, so it was glued to the
    next one as its lead: one work order opened for both, in the fridge's category, and the
    open fridge job never heard of it."""
    assert _queued(text, contexts) == queued
