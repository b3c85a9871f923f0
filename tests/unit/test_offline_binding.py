"""The offline binder binds a message to an open work order only when one is clearly named
(I3: asking is cheap, a wrong mutation is not; I4: bind or ask, never the most recent by guess).

Wordings of our own, used by no labeled set or scenario. Each case is what reaches the queue
after consensus and dispose: a relay (bound), a clarify (asked) or a create (new)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from builders import MARIA, package, wo_context

from maestro.brain.offline import OfflineBrain
from maestro.domain.actions import Clarify, Lane
from maestro.domain.consensus import ConsensusPolicy, aggregate
from maestro.domain.dispose import dispose
from maestro.domain.models import OpenContext, WorkOrderStatus

FRIDGE_ICE = wo_context("WO-310", "refrigerator building ice on the back wall, unit 7C")
EXHAUST_VENT = wo_context("WO-311", "bathroom exhaust vent rattles, unit 7C")
TUB_FAUCET = wo_context("WO-330", "bathtub faucet drips, unit 7C")
RADIATOR_VALVE = wo_context("WO-331", "radiator valve leaks in the bedroom, unit 7C")
UPSTAIRS_TOILET = wo_context("WO-350", "upstairs toilet keeps running, unit 7C")
DISHWASHER_LEAK = wo_context("WO-360", "dishwasher leaks onto the floor, unit 7C")
STUCK_WINDOW = wo_context("WO-370", "bedroom window won't open, unit 7C")
FRONT_DEADBOLT = wo_context("WO-380", "front door deadbolt sticks, unit 7C")
WASHER_DRAIN = wo_context("WO-390", "washing machine won't drain, unit 7C")
AC_WARM = wo_context("WO-395", "air conditioner not cooling, unit 7C")
GARAGE_LIGHT = wo_context("WO-401", "garage light flickers, unit 7C")
PLUMBER_MONDAY = wo_context("WO-320", "clogged kitchen drain, plumber booked Monday, unit 7C")
FIXED_TUB_DRAIN = wo_context(
    "WO-410", "slow tub drain, fixed, unit 7C", rating_requested=True
).model_copy(update={"wo_status": WorkOrderStatus.COMPLETED})
RATED_TUB_DRAIN = wo_context("WO-410", "slow tub drain, fixed, unit 7C", rating_requested=True)


def _queued(text: str, contexts: Sequence[OpenContext]) -> list[tuple[Lane, str | None]]:
    pkg = package(text)
    samples = OfflineBrain().samples(pkg, "tenant", contexts)
    disposal = dispose(pkg, MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))
    return [(Lane(q.action.lane), q.action.target_wo_id) for q in disposal.actions]


def _asked_about(text: str, contexts: Sequence[OpenContext]) -> set[str]:
    """The candidates of the one clarify queued (fails when anything else is queued)."""
    pkg = package(text)
    samples = OfflineBrain().samples(pkg, "tenant", contexts)
    disposal = dispose(pkg, MARIA, contexts, aggregate(samples, ConsensusPolicy(k=5)))
    assert disposal.lanes == (Lane.CLARIFY,), disposal.actions
    action = disposal.actions[0].action
    assert isinstance(action, Clarify)
    return set(action.params.candidate_ids)


# --- clearly named: binds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "contexts", "bound"),
    [
        # its thing, by another name of it
        ("fridge is icing up worse today", (FRIDGE_ICE, EXHAUST_VENT), "WO-310"),
        # its thing, with a part of it named as well
        ("that vent cover in the bathroom is rattling loose", (FRIDGE_ICE, EXHAUST_VENT), "WO-311"),
        # its thing and its place, its kind of symptom
        ("the tub faucet drips twice as fast tonight", (TUB_FAUCET, RADIATOR_VALVE), "WO-330"),
        # its place chosen among the open ones
        ("the garage one got worse", (TUB_FAUCET, GARAGE_LIGHT), "WO-401"),
        # one open, a detail that names no thing and no other symptom kind
        ("it's dripping a little underneath now", (WASHER_DRAIN,), "WO-390"),
        # one open; what is fine now names nothing, the rest is a detail of the open one
        (
            "the bedroom vent is fine, the one in the living room still won't cool",
            (AC_WARM,),
            "WO-395",
        ),
    ],
)
def test_a_clearly_named_work_order_is_bound(
    text: str, contexts: tuple[OpenContext, ...], bound: str
) -> None:
    assert _queued(text, contexts) == [(Lane.RELAY_TO_OPEN_WO, bound)]


def test_a_question_naming_its_vendor_and_day_is_about_that_one() -> None:
    queued = _queued("did the plumber say what time monday?", (PLUMBER_MONDAY, GARAGE_LIGHT))
    assert queued == [(Lane.CONTINUE_WITH_ASSISTANT, "WO-320")]


# --- vague: asks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "contexts", "asked"),
    [
        # a symptom two of them may have, no thing named
        ("it's dripping worse than yesterday", (TUB_FAUCET, RADIATOR_VALVE), {"WO-330", "WO-331"}),
        # its thing, but on the other floor, and "too": one more of them
        ("the downstairs toilet keeps running too", (UPSTAIRS_TOILET,), {"WO-350"}),
        # its thing, but a symptom of another kind: maybe a second problem with it
        ("the bedroom window glass is cracked", (STUCK_WINDOW,), {"WO-370"}),
        # its thing and symptom, but the other side of the flat
        ("the back door deadbolt is stuck", (FRONT_DEADBOLT,), {"WO-380"}),
        # its room only, and a thing of its own
        ("the bedroom outlets went dead overnight", (STUCK_WINDOW, TUB_FAUCET), {"WO-370"}),
    ],
)
def test_a_vague_or_contradicted_reference_asks(
    text: str, contexts: tuple[OpenContext, ...], asked: set[str]
) -> None:
    assert _asked_about(text, contexts) == asked


# --- new: opens a work order -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "contexts"),
    [
        # the open one is said to be fine; the problem is a thing of its own
        ("dishwasher is sorted now, but the microwave door is broken", (DISHWASHER_LEAK,)),
        # a thing of its own, and nothing of an open one
        ("the garage door opener is broken", (TUB_FAUCET, RADIATOR_VALVE)),
        # "too" on a thing no open one is about
        ("the hallway closet door is broken too", (UPSTAIRS_TOILET,)),
    ],
)
def test_a_problem_of_its_own_opens_a_work_order(
    text: str, contexts: tuple[OpenContext, ...]
) -> None:
    assert _queued(text, contexts) == [(Lane.CREATE_WO, None)]


OVEN_BROKEN = wo_context("WO-420", "the oven is broken, unit 7C")
MICROWAVE_STOPPED = wo_context("WO-421", "microwave stopped working, unit 7C")
DRYER_NOT_WORKING = wo_context("WO-422", "the dryer is not working, unit 7C")
WASHER_BROKEN = wo_context("WO-423", "washing machine is broken, unit 7C")
DISHWASHER_DEAD = wo_context("WO-424", "dishwasher doesn't work at all, unit 7C")
DRYER_WONT_START = wo_context("WO-425", "dryer won't start, unit 7C")
CEILING_WATER = wo_context("WO-426", "water leaking through the living room ceiling, unit 7C")


@pytest.mark.parametrize(
    ("text", "contexts"),
    [
        # each names a thing of its own, with a symptom the open one's words give no kind to:
        # "stuck", "rattling", "clogged", "flickering", "a smell" are no hint at "broken"
        ("the garage door is stuck halfway up", (OVEN_BROKEN,)),
        ("the hallway radiator is rattling all night", (MICROWAVE_STOPPED,)),
        ("the shower drain is clogged", (DRYER_NOT_WORKING,)),
        ("the closet light keeps flickering", (WASHER_BROKEN,)),
        ("there's a weird smell coming out of the garbage disposal", (DISHWASHER_DEAD,)),
        ("the thermostat is stuck on 85", (OVEN_BROKEN, DRYER_WONT_START)),
    ],
)
def test_a_thing_of_its_own_opens_a_work_order_despite_a_generic_symptom(
    text: str, contexts: tuple[OpenContext, ...]
) -> None:
    """Something being wrong is no reference: a text naming its own thing, and none of an open
    work order's things, rooms or words, is a new problem, not a question about the open one."""
    assert _queued(text, contexts) == [(Lane.CREATE_WO, None)]


def test_a_thing_of_its_own_with_the_open_ones_kind_of_symptom_still_asks() -> None:
    """A leak behind the toilet may be what comes through the ceiling below: the same kind of
    symptom is a hint, so it asks."""
    assert _asked_about("the pipe behind the toilet is leaking", (CEILING_WATER, OVEN_BROKEN)) == {
        "WO-426"
    }


@pytest.mark.parametrize("rated", [FIXED_TUB_DRAIN, RATED_TUB_DRAIN])
def test_a_finished_work_order_awaiting_its_rating_takes_no_note(rated: OpenContext) -> None:
    """With or without its status given, a work order whose rating request is out is done: the
    same trouble again is a new work order, not a note to a vendor who has left."""
    assert _queued("the tub drain is clogged once more", (rated,)) == [(Lane.CREATE_WO, None)]
