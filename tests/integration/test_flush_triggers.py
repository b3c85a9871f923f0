"""Flush triggers on the embedded stack, driven by signed SMS (docs/flush-triggers.md): a text
that closes the conversation flushes at once; one that merely thanks on the way to a new
problem waits out the idle window like any other."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed
from tests.integration.embedded import new_executions, sms

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
