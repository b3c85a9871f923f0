"""Pre-check: the safety floor first, a cheap model second, and when unsure, reasoning."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from builders import MARIA, package, wo_context

from maestro.brain.precheck import (
    HANDBACK_CONFIDENCE,
    PreCheckModel,
    is_soft_handback,
    package_safety_hit,
    precheck,
)
from maestro.domain.actions import Escalate, Lane
from maestro.domain.dispose import dispose
from maestro.domain.models import Message, Package
from maestro.domain.records import PreCheckResult, Route

Answer = PreCheckResult | Mapping[str, Any] | str


def _model(answer: Answer) -> PreCheckModel:
    def model(_: Package) -> Answer:
        return answer

    return model


def _raising(_: Package) -> Answer:
    raise TimeoutError("the model took too long")


def test_gas_escalates_with_the_phrase_as_evidence() -> None:
    result = precheck(package("hi, I smell gas in the kitchen"))
    assert result.route is Route.ESCALATE
    assert result.severity == "emergency"
    assert result.confidence == 1.0
    assert result.evidence == "smell gas"
    assert result.source == "safety_floor"
    assert not result.fallback


def test_my_gas_bill_is_not_an_emergency() -> None:
    """I5, naive rule "the word gas escalates": the floor must not fire on a bill."""
    result = precheck(package("can I pay my gas bill through the portal?"))
    assert result.route is Route.REASONING
    assert result.confidence == 0.5
    assert result.source == "default"


def test_an_urgent_hit_escalates_too() -> None:
    """Escalation is recall-first: an "urgent" floor hit is not left to the brain."""
    result = precheck(package("the smoke alarm is going off"))
    assert result.route is Route.ESCALATE
    assert result.severity == "urgent"


def test_the_floor_reads_every_message_not_only_the_last() -> None:
    result = precheck(package("I smell gas", "anyway, thanks!"))
    assert result.route is Route.ESCALATE
    assert result.evidence == "smell gas"


def test_a_phrase_split_over_two_texts_is_caught() -> None:
    hit = package_safety_hit(package("i smell", "gas"))
    assert hit is not None
    assert hit.category == "gas"


@pytest.mark.parametrize(
    "text",
    ["thanks!", "ok", "Great, thank you", "👍", "👍🏽", "sounds good", "bye", "Thanks so much!!"],
)
def test_soft_no_action_packages_hand_back(text: str) -> None:
    result = precheck(package(text))
    assert result.route is Route.HANDBACK
    assert result.confidence == pytest.approx(HANDBACK_CONFIDENCE)
    assert result.source == "default"


@pytest.mark.parametrize(
    "text",
    [
        "thanks, and the sink is leaking again",  # a maintenance noun
        "ok?",  # a question
        "ok 2",  # a number
        "thanks, see you monday",  # a day
        "yes",  # answers a question: the brain must see it
        "thank you so much thank you so much",  # more than six words
        "",
    ],
)
def test_anything_more_than_a_pleasantry_goes_to_reasoning(text: str) -> None:
    result = precheck(package(text))
    assert result.route is Route.REASONING
    assert result.confidence == 0.5


def test_a_photo_with_thanks_is_not_a_handback() -> None:
    base = package("thanks!")
    with_photo = base.model_copy(
        update={
            "messages": (
                Message.model_validate(
                    {**base.messages[0].model_dump(), "media_urls": ("https://x/1.jpg",)}
                ),
            )
        }
    )
    assert is_soft_handback(base)
    assert not is_soft_handback(with_photo)


def test_a_model_that_raises_gives_the_deterministic_result_marked_fallback() -> None:
    result = precheck(package("thanks!"), model=_raising)
    assert result.route is Route.HANDBACK
    assert result.source == "default"
    assert result.fallback

    result = precheck(package("the door sticks a bit"), model=_raising)
    assert result.route is Route.REASONING
    assert result.fallback


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        '{"route": "delete_everything", "confidence": 0.9}',
        {"route": "handback"},  # no confidence
        {"route": "handback", "confidence": 3.0},
        {"route": "handback", "confidence": 0.9, "extra": "field"},
        '["handback"]',
    ],
)
def test_an_invalid_model_answer_falls_back(answer: Answer) -> None:
    result = precheck(package("the door sticks a bit"), model=_model(answer))
    assert result == PreCheckResult(
        route=Route.REASONING, confidence=0.5, source="default", fallback=True
    )


def test_the_floor_beats_the_model_and_the_model_is_not_even_asked() -> None:
    calls: list[Package] = []

    def model(pkg: Package) -> Answer:
        calls.append(pkg)
        return {"route": "handback", "confidence": 1.0}

    result = precheck(package("I smell gas"), model=model)
    assert result.route is Route.ESCALATE
    assert result.source == "safety_floor"
    assert calls == []


def test_the_model_can_raise_an_emergency_the_floor_missed() -> None:
    """I5: no keyword, yet an emergency; the cheap model is the one that sees it."""
    # (The floor's second model reads "...and the kids are scared" itself since #20.)
    text = "something is very wrong in 2b, it is getting worse every hour"
    assert package_safety_hit(package(text)) is None
    answer = {"route": "escalate", "severity": "emergency", "confidence": 0.8, "evidence": text}
    result = precheck(package(text), model=_model(answer))
    assert result.route is Route.ESCALATE
    assert result.source == "model"
    assert not result.fallback


def test_model_answers_are_kept_honest() -> None:
    text = "the door sticks a bit"
    # It cannot claim to be the floor.
    claimed = precheck(
        package(text),
        model=_model(PreCheckResult(route=Route.REASONING, confidence=0.7, source="safety_floor")),
    )
    assert claimed.source == "model"
    # An unsure handback is reasoning.
    unsure = precheck(package(text), model=_model({"route": "handback", "confidence": 0.6}))
    assert unsure.route is Route.REASONING
    # Seeing an emergency but routing elsewhere still escalates (recall first).
    seen = precheck(
        package(text),
        model=_model({"route": "reasoning", "severity": "emergency", "confidence": 0.7}),
    )
    assert seen.route is Route.ESCALATE
    # A JSON answer is as good as a mapping.
    as_json = precheck(
        package("thanks!"), model=_model('{"route": "handback", "confidence": 0.95}')
    )
    assert (as_json.route, as_json.source, as_json.fallback) == (Route.HANDBACK, "model", False)


def test_dispose_takes_the_escalation_and_keeps_the_contexts() -> None:
    """I1: the pre-check's escalation pre-empts the package; open contexts stay open."""
    pkg = package("fine to come in, 2 onward", "wait, I smell gas")
    result = precheck(pkg)
    disposal = dispose(pkg, MARIA, [wo_context("WO-204")], None, precheck=result)
    assert disposal.lanes == (Lane.ESCALATE,)
    action = disposal.actions[0].action
    assert isinstance(action, Escalate)
    assert action.params.hazard == "smell gas"
    assert disposal.decisions[0].interrupted
