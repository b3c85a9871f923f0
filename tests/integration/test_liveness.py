"""Safety first under contention, and a conversation that can never wedge (issue #10).

Each test replays one way a tenant reporting gas used to get no safety advice and no page: on
the embedded stack, through the signed webhook, the buffer, the flusher and the real ASL. After
each, the gas report is escalated ([EMERGENCY] to the PM, safety advice to the tenant) and the
conversation's later ordinary packages succeed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from embedded import (
    app_message,
    completion,
    decisions,
    described,
    flush,
    new_executions,
    outcomes,
    output,
    package_id,
    pages,
    release_all_gates,
    sms,
    to_phone,
    wait_for_gate,
    work_orders,
)

from maestro.domain.actions import CreateWo
from maestro.ingest.webhooks import MAX_TRANSCRIPT_CHARS
from maestro.ports.stores import StaleVersionError
from maestro_dev.local.events import signed_transcript_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration

LONG_FIRST_TEXT = (
    "Hi, the water heater in our unit has been making a loud banging noise since last night "
    "and now there is water pooling on the floor around it, the closet floor is soaked and I'm "
    "worried it will spread into the hallway carpet by tonight"
)


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


@pytest.fixture
def stepping() -> Iterator[LocalStack]:
    with LocalStack(step_mode=True) as local:
        seed(local)
        yield local


def assert_gas_escalated(stack: LocalStack, execution: dict[str, Any]) -> None:
    """The PM was paged [EMERGENCY], the tenant told how to stay safe, the decision recorded."""
    assert any(p.startswith("[EMERGENCY]") and "gas" in p for p in pages(stack))
    assert any("Leave now" in body for body in to_phone(stack, MARIA.phone))
    recorded = decisions(stack, execution)
    assert recorded[0].lane == "escalate"
    assert not recorded[0].fallback
    assert [o.status for o in outcomes(stack, execution)][:1] == ["done"]


def assert_ok(stack: LocalStack, execution: dict[str, Any]) -> None:
    execution = described(stack, execution)
    assert execution["status"] == "SUCCEEDED", execution.get("cause")
    assert not any(d.fallback for d in decisions(stack, execution))
    done = completion(stack, execution)
    assert done is not None
    assert done.completed_by == "persist"


# -- 1. a long first text ----------------------------------------------------------------------


def test_a_long_first_text_never_wedges_the_conversation(stack: LocalStack) -> None:
    """Naive: the open-context line "summary, unit 3B [open]" outgrew its 200-character limit,
    and every later package of the tenant failed open, the gas report included."""
    assert len(LONG_FIRST_TEXT) >= 218
    sms(stack, LONG_FIRST_TEXT)
    first = flush(stack)
    assert_ok(stack, first)
    (created,) = [wo for wo in work_orders(stack) if wo.wo_id != "WO-198"]
    # The line the naive lease built ("summary, unit 3B [open]") is over the 200-character limit.
    assert len(f"{created.summary}, unit {created.unit} [{created.status}]") > 200

    sms(stack, "any update?")
    assert_ok(stack, flush(stack))

    sms(stack, "I smell gas in the hallway!!")
    gas = new_executions(stack, 1)[0]  # an urgency flush: no idle wait
    assert_ok(stack, gas)
    assert_gas_escalated(stack, gas)


# -- 2. packages over the inline limit ---------------------------------------------------------


def test_a_48_kb_transcript_goes_by_reference_and_the_conversation_goes_on(
    stack: LocalStack,
) -> None:
    """Naive: the execution started with "package": null, nothing read it back, and fail-open
    neither released the lease nor forfeited the turn: every later package failed open.

    The largest message the webhooks accept: a call's transcript at its 16,000 characters, here
    mostly in a 3-byte script (an SMS is at most 1,600 characters)."""
    said = "the fridge in the kitchen stopped working and the freezer is warm. "
    body = (said + "冰箱坏了，冷冻室也不冷了。" * 2000)[:MAX_TRANSCRIPT_CHARS]
    assert len(body.encode()) > 32 * 1024  # over the execution input's inline limit
    response = stack.http(
        signed_transcript_event(
            stack.twilio_token, twilio_sid("TR", "a long call"), MARIA.phone, body
        )
    )
    assert response["statusCode"] == 200, response
    big = new_executions(stack, 1)[0]
    given = json.loads(big["input"])
    assert given["package"] is None
    assert given["package_ref"]["through_seq"] == given["package_ref"]["after_seq"] + 1
    assert_ok(stack, big)
    # Its words were read back: the call's new request is held for Maria's YES by text (a
    # call's caller ID alone opens nothing, #17).
    _, (hold,) = stack.pipeline.deps.pending.open_items(MARIA.party_id)
    assert any(isinstance(a, CreateWo) and "fridge" in a.params.summary for a in hold.held)
    assert all(wo.wo_id == "WO-198" for wo in work_orders(stack))

    sms(stack, "I smell gas in the kitchen")
    gas = new_executions(stack, 1)[0]
    assert_ok(stack, gas)
    assert_gas_escalated(stack, gas)
    sms(stack, "any news on the fridge?")
    assert_ok(stack, flush(stack))


@pytest.mark.slow
def test_55_long_in_app_messages_become_bounded_packages_in_order(stack: LocalStack) -> None:
    """55 messages at the app's own 4,000-character limit (220 KB): split into bounded packages,
    flushed in order, every message in exactly one package."""
    sent = [
        app_message(
            stack, (f"note {n:02d}: " + "the hallway light keeps flickering. " * 120)[:4000]
        )
        for n in range(55)
    ]
    started = new_executions(stack, stack.idle + 1)
    assert len(started) > 1
    seen: list[str] = []
    for execution in started:
        assert_ok(stack, execution)
        ref = json.loads(execution["input"])["package_ref"]
        items = stack.ddb.query(
            TableName=stack.tables["conversations"],
            KeyConditionExpression="conversation_id = :c AND item BETWEEN :lo AND :hi",
            ExpressionAttributeValues={
                ":c": {"S": ref["conversation_id"]},
                ":lo": {"S": f"msg#{ref['after_seq'] + 1:010d}"},
                ":hi": {"S": f"msg#{ref['through_seq']:010d}"},
            },
        )["Items"]
        seen += [i["message"]["M"]["message_id"]["S"] for i in items]
    assert seen == sent
    flushes = [json.loads(e["input"])["flush_number"] for e in started]
    assert flushes == sorted(flushes)


# -- 3. an emergency behind a paused package ---------------------------------------------------


def test_an_emergency_never_waits_behind_a_paused_package(stepping: LocalStack) -> None:
    """Naive: the lease came before the pre-check, so "I smell gas" waited in LeaseBusy retries
    behind a package paused at a step gate, then failed open."""
    stack = stepping
    sms(stack, "the kitchen sink is leaking")
    (first,) = new_executions(stack, stack.idle + 1)
    wait_for_gate(stack, first["executionArn"])

    sms(stack, "I smell gas in the kitchen")
    (gas,) = new_executions(stack, 1)
    # Escalated at once, while the first package still holds the lease at its gate.
    assert described(stack, first)["status"] == "RUNNING"
    assert described(stack, gas)["status"] == "RUNNING"
    assert_gas_escalated(stack, gas)

    release_all_gates(stack)
    stack.wait_for_executions()
    assert_ok(stack, first)
    assert_ok(stack, gas)
    stack.starter.step = False
    sms(stack, "any update on the sink?")
    assert_ok(stack, flush(stack))


# -- 4. an expired lease -----------------------------------------------------------------------


def test_an_expired_lease_is_taken_over_by_the_next_package(stack: LocalStack) -> None:
    """Naive: only flush n-1 could overtake an expired lease, so packages after a crashed
    holder failed at the lease forever."""

    def crash_first(step: str, event: dict[str, Any], call: Callable[[], Any]) -> Any:
        # The holder dies for good, fail-open too: nothing releases its lease.
        if step in ("persist", "fail_open") and event.get("flush_number") == 1:
            raise RuntimeError("the container is gone")
        return call()

    stack.fault = crash_first
    sms(stack, "the bedroom window won't close")
    assert described(stack, flush(stack))["status"] == "FAILED"

    sms(stack, "also the fridge is broken")
    second = flush(stack)
    assert described(stack, second)["status"] == "RUNNING"  # waiting: the lease is not expired

    stack.advance(stack.pipeline.deps.lease_ttl_seconds + 1)
    stack.wait_for_executions()
    assert_ok(stack, second)
    sms(stack, "I smell gas in the hallway")
    (gas,) = new_executions(stack, 1)
    assert_ok(stack, gas)
    assert_gas_escalated(stack, gas)


# -- 5. effects without a decision -------------------------------------------------------------


def _act_dies_after_its_effect(
    step: str, event: dict[str, Any], call: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    if step == "act":
        call()  # the effect happens (the WO is created, the tenant told) ...
        raise RuntimeError("the act Lambda died before answering")  # ... then it dies, for good
    return call()


def test_an_effect_that_fails_open_still_has_its_decision_and_outcome(stack: LocalStack) -> None:
    """Naive: when act failed after its effect, persist was skipped and the log held only the
    fallback: a WO with no decision behind it."""
    stack.fault = _act_dies_after_its_effect
    sms(stack, "the dishwasher is broken and leaking")
    failed = described(stack, flush(stack))
    assert failed["status"] == "FAILED"
    (created,) = [wo for wo in work_orders(stack) if wo.wo_id != "WO-198"]
    recorded = decisions(stack, failed)
    create = next(d for d in recorded if d.lane == "create_wo")
    assert create.stage == "dispose"  # written ahead, before the action ran
    assert recorded[-1].fallback
    (outcome,) = outcomes(stack, failed)  # recorded as it happened, before the Lambda died
    assert (outcome.decision_id, outcome.status) == (create.decision_id, "done")
    assert outcome.created_wo_id == created.wo_id
    closed = completion(stack, failed)
    assert closed is not None
    assert closed.completed_by == "fail_open"
    page = pages(stack)[-1]
    assert page.startswith("[FALLBACK]")
    assert "dishwasher" not in page  # a short reason, not the tenant's words
    assert "errorMessage" not in page  # nor raw exception JSON
    assert created.tenant_id == MARIA.party_id

    stack.fault = lambda _step, _event, call: call()
    sms(stack, "I smell gas in the kitchen")
    gas = new_executions(stack, 1)[0]
    assert_ok(stack, gas)
    assert_gas_escalated(stack, gas)
    sms(stack, "any update?")
    assert_ok(stack, flush(stack))


def test_a_state_update_that_keeps_losing_races_retries_visibly(stack: LocalStack) -> None:
    """Naive: three lost StaleVersionError races dropped the state update silently."""
    state = stack.pipeline.deps.state
    real_put = state.put
    losses = {"left": 3}

    def put(snapshot: Any, expected: int | None) -> None:
        if losses["left"]:
            losses["left"] -= 1
            raise StaleVersionError("a rival wrote first")
        real_put(snapshot, expected)

    state.put = put  # type: ignore[method-assign]
    sms(stack, "the front door lock is jammed")
    execution = described(stack, flush(stack))
    assert_ok(stack, execution)
    persists = [o for step, pkg, o in stack.invocations if step == "persist"]
    assert persists == ["TransientError", "ok"]
    (created,) = [wo for wo in work_orders(stack) if wo.wo_id != "WO-198"]
    snapshot = state.get(created.wo_id)
    assert snapshot is not None
    assert snapshot.last_package_id == package_id(execution)


# -- pages a PM can read -----------------------------------------------------------------------


def test_an_unknown_number_is_one_line_of_the_hourly_digest(stack: LocalStack) -> None:
    """It paged the PM at once, once an hour per number: now no page of its own, one line of
    the hour's digest (one page an hour, however many numbers), nothing sent to the number."""
    stranger = "+14155550177"
    for text in ("hello is this the landlord", "my sink is leaking", "hello??"):
        sms(stack, text, sender=stranger)
        assert described(stack, flush(stack))["status"] == "SUCCEEDED"
    assert [p for p in pages(stack) if stranger in p] == []
    stack.advance(3600)  # the hour is over: its digest goes
    (digest,) = [p for p in pages(stack) if stranger in p]
    assert digest.startswith("[INFO] maestro digest")
    assert digest.count(stranger) == 1
    assert "(3 texts)" in digest
    sms(stack, "anyone?", sender=stranger)
    flush(stack)
    stack.advance(3600)
    assert len([p for p in pages(stack) if stranger in p]) == 2
    assert to_phone(stack, stranger) == []


def test_gas_from_an_unknown_number_is_still_escalated(stack: LocalStack) -> None:
    stranger = "+14155550178"
    sms(stack, "hi", sender=stranger)
    flush(stack)
    sms(stack, "I smell gas in the hallway", sender=stranger)
    (gas,) = new_executions(stack, 1)
    assert described(stack, gas)["status"] == "SUCCEEDED"
    assert any(p.startswith("[EMERGENCY]") for p in pages(stack))
    assert any("Leave now" in body for body in to_phone(stack, stranger))
    assert output(described(stack, gas))["escalated"]["disposal"]["route"] == "escalate"
