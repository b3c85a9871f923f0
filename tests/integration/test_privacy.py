"""Privacy (#11): what maestro logs, and the error text it pages, hold no phone number and no
message body, over full scenarios on the embedded stack.

Every line the Powertools logger writes is captured from its own handler (at DEBUG, so nothing
is filtered out by level), and everything written to stdout and stderr besides. The scenarios
are chosen to put people's numbers and words in harm's way: a model answer that fails
validation while quoting the tenant (its error is logged), and a step that fails with the
tenant's number and words in its exception (its text reaches the fail-open page and record).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from embedded import app_message, captured_logs, decisions, flush, new_executions, pages, sms

from maestro.brain.model_port import ModelRequest
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import MARIA, VIC, seed
from maestro_dev.scripted import ScriptedModel

pytestmark = pytest.mark.integration

STRANGER = "+14155550123"  # in no directory
REPAIR = "the kitchen tap is leaking under the sink, can someone come and look at it"
GAS = "i smell gas in the hallway and my daughter says her head hurts"
STRANGER_TEXT = "hi this is the new tenant in 5C, the heater in the bedroom is broken"
FAILING = "also the bathroom fan rattles when it runs at night"
IN_APP = "sent from the app: the front door buzzer has stopped working"
PROBED = "the dishwasher door will not latch since the weekend"
PHONES = (MARIA.phone, VIC.phone, ON_CALL_PM, STRANGER)


def _variants(phone: str) -> tuple[str, ...]:
    """A number as it could appear: E.164, and its digits without the plus."""
    return (phone, phone.lstrip("+"))


def assert_private(text: str, bodies: tuple[str, ...], where: str) -> None:
    for phone in PHONES:
        for variant in _variants(phone):
            assert variant not in text, f"{where}: a phone number ({variant})"
    for body in bodies:
        assert body not in text, f"{where}: a message body ({body!r})"
        # A body cut short is still a body: its opening words must not be there either.
        assert body[:24] not in text, f"{where}: part of a message body ({body[:24]!r})"


def messages(lines: str) -> list[str]:
    return [json.loads(line)["message"] for line in lines.splitlines() if line.strip()]


def _fail_dispose(words: str) -> Callable[[str, dict[str, Any], Callable[[], Any]], Any]:
    def fault(step: str, event: dict[str, Any], call: Callable[[], Any]) -> Any:
        if step == "dispose" and FAILING in json.dumps(event):
            # An exception that quotes the tenant: its text travels to the fail-open state.
            raise ValueError(f"could not text {MARIA.phone} back about {words!r}")
        return call()

    return fault


def test_a_full_scenario_logs_and_pages_no_phone_number_and_no_body(
    capfd: pytest.CaptureFixture[str],
) -> None:
    bodies = (REPAIR, GAS, STRANGER_TEXT, IN_APP, FAILING)
    with LocalStack() as stack, captured_logs() as logs:
        seed(stack)
        sms(stack, REPAIR)
        repair = flush(stack)
        sms(stack, GAS)
        new_executions(stack, 1)  # an emergency is flushed at once
        sms(stack, STRANGER_TEXT, sender=STRANGER)
        flush(stack)
        app_message(stack, IN_APP)
        flush(stack)
        stack.fault = _fail_dispose(FAILING)
        sms(stack, FAILING)
        failed = flush(stack)
        stack.wait_for_executions(timeout=30)
        fallback = [d for d in decisions(stack, failed) if d.fallback]
        repaired = decisions(stack, repair)
        every_page = pages(stack)

    written = logs.getvalue()
    said = messages(written)
    # The scenario did what it is here for: it logged, paged, and failed open.
    assert said.count("inbound message") == 5, said
    assert said.count("package started") >= 5, said
    assert "package failed open" in said, said
    assert repaired, "the first package was decided"
    assert any("could not finish a package" in page for page in every_page), every_page
    assert fallback, "the failing package recorded its default"

    assert_private(written, bodies, "maestro's logs")
    out, err = capfd.readouterr()
    assert_private(out + err, bodies, "stdout/stderr")
    # The fail-open page names Maria (the PM knows her) but carries no exception text: neither
    # her number nor her words.
    (failure_page,) = [page for page in every_page if "could not finish a package" in page]
    assert_private(failure_page, bodies, "the fail-open page")
    # The decision record keeps the error's first line for whoever debugs it (a record, not a
    # log: free words in an exception cannot be told from others), with its numbers masked.
    for decision in fallback:
        assert f"ValueError: could not text +…{MARIA.phone[-4:]} back" in decision.reason
        assert_private(decision.reason, (), "the fallback decision's reason")


def test_a_model_answer_that_quotes_the_tenant_is_logged_masked(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The severity probe logs why a model answer failed. The answer here adds fields nobody
    asked for, quoting the tenant's text and number: pydantic's error quotes them back."""
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}

    def responder(request: ModelRequest) -> dict[str, Any] | None:
        if request.purpose == "probe":
            return {**triage, "quote": PROBED, "callback": MARIA.phone}
        return triage if request.purpose == "precheck" else None

    model = ScriptedModel(responder=responder)
    with LocalStack(model=model) as stack, captured_logs() as logs:
        seed(stack)
        sms(stack, PROBED)
        new_executions(stack, 1)
        assert model.calls_for("probe"), "the probe ran"

    written = logs.getvalue()
    assert "severity probe failed" in messages(written)
    assert "input_value" in written, "the validation error was logged, with its inputs masked"
    assert_private(written, (PROBED,), "maestro's logs")
    out, err = capfd.readouterr()
    assert_private(out + err, (PROBED,), "stdout/stderr")
