"""Unknown senders cost little (#17): on the embedded stack, through the signed webhook.

Each count is read from a surface (Twilio's outbox on the loopback, the decision log, the
scripted model's own record of its calls, the watcher's ledger), never from a step's return.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from embedded import log, new_executions, pages, to_phone

from maestro.domain.digest import hour_of
from maestro.lanes.escalate import PAGE_EXCERPT_CHARS
from maestro.pipeline.digest import digest_package_id
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import MARIA, seed
from maestro_dev.scripted import ScriptedModel

pytestmark = pytest.mark.integration

STRANGERS = tuple(f"+1415555{n:04d}" for n in range(7301, 7311))  # ten numbers nobody knows
GAS = "I smell gas in the hallway"


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def text(stack: LocalStack, phone: str, body: str, label: str) -> str:
    sid = twilio_sid("SM", label)
    response = stack.http(signed_sms_event(stack.twilio_token, sid, phone, body))
    assert response["statusCode"] == 200, response
    return sid


def _quoted(page: str) -> str:
    return page.split('They said: "', 1)[1].removesuffix('"')


@pytest.mark.slow
def test_ten_unknown_numbers_texting_gas_three_times_cost_one_page_and_one_text_each(
    stack: LocalStack,
) -> None:
    """The repro: 10 unknown numbers × 3 "I smell gas in the hallway" made 70 SMS (30
    [EMERGENCY] pages, 10 [INFO] pages, 30 safety texts). Now: each number's first emergency
    pages at once with the safety advice to it; its repeats fold into that page; the hour's
    unknown numbers are one digest page."""
    for round_ in range(3):
        for n, phone in enumerate(STRANGERS):
            text(stack, phone, GAS, f"gas-{round_}-{n}")
        stack.advance(60)  # each expedites its own flush at once: 30 packages in all
    executions = stack.executions()
    assert len(executions) == 30
    assert {e["status"] for e in executions} == {"SUCCEEDED"}, _failures(stack)

    emergency = [p for p in pages(stack) if p.startswith("[EMERGENCY]")]
    assert len(emergency) == 10
    assert [p for p in pages(stack) if not p.startswith("[EMERGENCY]")] == []  # no [INFO] yet
    for phone in STRANGERS:
        (advice,) = to_phone(stack, phone)  # one safety text per number, not three
        assert advice.startswith("Leave now.")
        assert sum(phone in p for p in emergency) == 1

    # The repeats are on the decision log, folded into their number's page (its SID and time).
    decisions = log(stack)
    folded = []
    for execution in executions:
        package = json.loads(stack.sfn.describe_execution(**_arn(execution))["input"])
        folded += [o for o in decisions.outcomes_for(package["package_id"]) if o.folded_into]
    assert len(folded) == 20
    paged = {m.sid: m for m in stack.outbox(ON_CALL_PM)}
    assert {o.folded_into for o in folded} <= set(paged)
    assert Counter(o.folded_into for o in folded) == Counter(dict.fromkeys(paged, 2))
    assert all(o.status == "skipped" and o.folded_at is not None for o in folded)

    stack.advance(3600)  # the hour is over: its digest page goes
    (digest,) = [p for p in pages(stack) if p.startswith("[INFO]")]
    assert len(pages(stack)) == 11
    assert sum(1 for line in digest.splitlines() if line.startswith("- ")) == 8
    assert digest.endswith("and 2 more")
    assert len(stack.outbox()) == 21  # was 70


def test_a_page_quotes_at_most_a_short_excerpt(stack: LocalStack) -> None:
    """Each page relayed up to 600 attacker-chosen characters to the on-call PM."""
    essay = "I smell gas in the hallway. " + "Call this number now and wire money " * 20
    text(stack, STRANGERS[0], essay, "essay-stranger")
    text(stack, MARIA.phone, essay, "essay-maria")
    stack.advance(60)
    emergency = [p for p in pages(stack) if p.startswith("[EMERGENCY]")]
    assert len(emergency) == 2
    for page in emergency:
        assert len(_quoted(page)) <= PAGE_EXCERPT_CHARS
        assert len(page) < 400


def test_an_unknown_number_costs_no_model_call() -> None:
    """With a model plugged in (it answers anything, and counts every call), a number not in the
    directory gets no probe, no pre-check call, no brain sample and no judgment: 0 calls. The
    same texts from Maria do call it (the count is not vacuous)."""
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    # Anything else it is asked fails ("nothing scripted"): the stage's default, still a call.
    model = ScriptedModel(
        responder=lambda r: triage if r.purpose in ("probe", "precheck") else None
    )
    with LocalStack(model=model) as stack:
        seed(stack)
        stranger = STRANGERS[1]
        bodies = (
            "hello, is this the building manager?",
            "my neighbour's dog keeps barking all night " * 8,
            "the elevator is stuck between floors and I'm inside",
            GAS,
            "thanks",
        )
        for n, body in enumerate(bodies):
            text(stack, stranger, body, f"costless-{n}")
            new_executions(stack, stack.idle + 1)
        assert model.calls == []
        outputs = [
            json.loads(stack.sfn.describe_execution(**_arn(e))["output"])
            for e in stack.executions()
        ]
        assert len(outputs) == len(bodies)
        skipped = [o["brain"] for o in outputs if o.get("brain")]
        assert skipped
        assert all(b["samples"] == [] and "unknown sender" in b["skipped"] for b in skipped)
        text(stack, MARIA.phone, "the hallway light flickers", "costless-maria")
        new_executions(stack, stack.idle + 1)
        assert {c.purpose for c in model.calls} >= {"probe", "reasoning"}


def test_the_digest_page_is_read_verified(stack: LocalStack) -> None:
    start = stack.clock.now()
    text(stack, STRANGERS[2], "who do I talk to about parking?", "digest-verified")
    stack.advance(stack.idle + 1)
    assert pages(stack) == []
    stack.advance(3600)
    (digest,) = pages(stack)
    assert STRANGERS[2] in digest
    stack.settle()
    rows = stack.ledger.for_package(digest_package_id(hour_of(start)))
    assert sorted((r.event_type, r.verdict) for r in rows) == [
        ("escalation.paged", "evidence"),
        ("message.sent", "evidence"),
    ]
    stack.advance(3600)  # nothing new: no second page for the same hour, none for an empty one
    assert len(pages(stack)) == 1


def _failures(stack: LocalStack) -> list[str]:
    """What went wrong, for a failing assertion: each step that did not return, each fallback."""
    failed = [f"{step} {package}: {outcome}" for step, package, outcome in stack.invocations
              if outcome != "ok"]  # fmt: skip
    for execution in stack.executions():
        if execution["status"] != "SUCCEEDED":
            package = json.loads(stack.sfn.describe_execution(**_arn(execution))["input"])
            failed += [
                d.reason for d in log(stack).for_package(package["package_id"]) if d.fallback
            ]
    return failed


def _arn(execution: dict[str, Any]) -> dict[str, str]:
    return {"executionArn": execution["executionArn"]}
