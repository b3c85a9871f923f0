"""Flush triggers on the embedded stack, driven by signed SMS (docs/flush-triggers.md): a text
that closes the conversation flushes at once; one that merely thanks on the way to a new
problem waits out the idle window like any other; with something urgent outstanding in memory
(an emergency being handled, a vendor due today) the shorter idle window applies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.domain.models import Urgency, VisitWindow, WorkOrderStatus
from maestro.domain.records import MaestroState
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import VIC, seed
from tests.integration.embedded import new_executions, open_wo, outcomes, sms

pytestmark = pytest.mark.integration

SOON = 5
"""Seconds of virtual time that count as "at once": far below any idle window."""


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _package(execution: dict[str, Any]) -> dict[str, Any]:
    """The package reference the flusher started the execution with."""
    return json.loads(execution["input"])["package_ref"]  # type: ignore[no-any-return]


def test_a_sign_off_flushes_the_package_within_seconds(stack: LocalStack) -> None:
    sms(stack, "the extractor fan in the bathroom rattles whenever it runs")
    stack.advance(40)
    sms(stack, "Alright, that's everything for now — cheers!")
    (started,) = new_executions(stack, SOON)
    package = _package(started)
    assert package["trigger"] == "conversation_ended"
    assert package["through_seq"] == 2  # the problem and the sign-off, one package


def test_a_spanish_sign_off_flushes_the_package_within_seconds(stack: LocalStack) -> None:
    sms(stack, "la puerta del balcón no cierra bien")
    stack.advance(25)
    sms(stack, "Listo, muchas gracias. Hasta mañana")
    (started,) = new_executions(stack, SOON)
    assert _package(started)["trigger"] == "conversation_ended"


def test_thanks_on_the_way_to_a_new_problem_waits_the_idle_window(stack: LocalStack) -> None:
    sms(stack, "thank you! and the porch light has been flickering since Sunday")
    assert new_executions(stack, SOON) == []
    (started,) = new_executions(stack, stack.idle)
    assert _package(started)["trigger"] == "idle_timeout"


# -- urgency in memory: the urgent idle window ---------------------------------------------------

FOLLOW_UP = "the neighbour from 2A let me wait in her flat, text me here"


def _remember(stack: LocalStack, wo_id: str, urgency: Urgency) -> None:
    """The work order's memory as the pipeline leaves it after handling an escalation on it (a
    world to start from, not an effect under test)."""
    DynamoStateStore(stack.ddb, stack.tables["state"]).put(
        MaestroState(wo_id=wo_id, urgency=urgency, updated_at=stack.clock.now()), None
    )


def test_with_an_emergency_in_memory_the_shorter_window_flushes(stack: LocalStack) -> None:
    open_wo(stack, "WO-4410", "water coming through the bathroom ceiling")
    _remember(stack, "WO-4410", Urgency.EMERGENCY)
    sms(stack, FOLLOW_UP)
    assert stack.urgent_idle < stack.idle
    assert new_executions(stack, stack.urgent_idle - SOON) == []  # not before the window
    (started,) = new_executions(stack, SOON + 1)
    assert _package(started)["trigger"] == "urgency_expedite"


def test_after_an_emergency_by_text_the_next_text_waits_the_shorter_window(
    stack: LocalStack,
) -> None:
    open_wo(stack, "WO-4415", "damp patch spreading on the hallway ceiling")
    sms(stack, "the hallway ceiling is now pouring water onto the light switch and it sparked")
    (emergency,) = new_executions(stack, SOON)
    assert _package(emergency)["trigger"] == "urgency_expedite"  # the floor, at once
    assert [o.lane for o in outcomes(stack, emergency)] == ["escalate"]
    stack.advance(120)
    sms(stack, "I switched the breaker off like you said, what now")
    assert new_executions(stack, stack.urgent_idle - SOON) == []
    (follow_up,) = new_executions(stack, SOON + 1)
    assert _package(follow_up)["trigger"] == "urgency_expedite"


def test_with_a_vendor_due_today_the_shorter_window_flushes(stack: LocalStack) -> None:
    now = stack.clock.now()
    open_wo(
        stack,
        "WO-4411",
        "dishwasher leaves standing water",
        status=WorkOrderStatus.SCHEDULED,
        visit=VisitWindow(start=now + timedelta(hours=2), end=now + timedelta(hours=4)),
    )
    sms(stack, "will he need the building's parking pass or is street ok")
    (started,) = new_executions(stack, stack.urgent_idle + 1)
    assert _package(started)["trigger"] == "urgency_expedite"


def test_the_vendor_due_today_gets_the_shorter_window_too(stack: LocalStack) -> None:
    now = stack.clock.now()
    open_wo(
        stack,
        "WO-4416",
        "kitchen tap loose at the base",
        status=WorkOrderStatus.SCHEDULED,
        visit=VisitWindow(start=now + timedelta(minutes=40), end=now + timedelta(hours=2)),
    )
    sms(stack, "stuck behind a delivery truck on Halsted, might be a bit behind", sender=VIC.phone)
    (started,) = new_executions(stack, stack.urgent_idle + 1)
    assert _package(started)["trigger"] == "urgency_expedite"


def test_with_nothing_urgent_in_memory_the_full_window_applies(stack: LocalStack) -> None:
    open_wo(stack, "WO-4412", "closet door off its track")
    _remember(stack, "WO-4412", Urgency.ROUTINE)
    open_wo(  # a visit, but next week: not due today
        stack,
        "WO-4413",
        "grout cracking around the tub",
        status=WorkOrderStatus.SCHEDULED,
        visit=VisitWindow(
            start=stack.clock.now() + timedelta(days=6),
            end=stack.clock.now() + timedelta(days=6, hours=2),
        ),
    )
    sms(stack, FOLLOW_UP)
    assert new_executions(stack, stack.urgent_idle + 1) == []
    (started,) = new_executions(stack, stack.idle)
    assert _package(started)["trigger"] == "idle_timeout"


def test_a_newer_message_restarts_the_shorter_window(stack: LocalStack) -> None:
    open_wo(stack, "WO-4414", "smoke detector chirps in the hall")
    _remember(stack, "WO-4414", Urgency.URGENT)
    sms(stack, "I'm heading out for an hour")
    stack.advance(stack.urgent_idle - 10)
    sms(stack, "spare key is with the front desk")
    assert new_executions(stack, 15) == []  # the first text's window passed, not the second's
    (started,) = new_executions(stack, stack.urgent_idle)
    assert _package(started)["trigger"] == "urgency_expedite"
    assert _package(started)["through_seq"] == 2
