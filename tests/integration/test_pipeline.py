"""The package pipeline: the real ASL on moto's Step Functions, in the embedded stack."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any

import pytest

from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.execution_input import execution_input
from maestro.domain.models import (
    FlushTrigger,
    Message,
    Package,
    conversation_id_for,
    package_id_for,
)
from maestro.errors import TransientError
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import (
    ASL_PATH,
    ON_CALL_PM,
    LambdaFunctionError,
    LocalStack,
    asl_substitutions,
)
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration

_sids = count(1)
HAPPY_PATH = [
    "Pre-check: safety first",
    "Emergency?",
    "Take the conversation lease",
    "Resolve: open questions and holds",
    "Answered?",
    "Brain: sample and vote",
    "Dispose: decide the action queue",
    "Run the action queue",
    "Step mode before this action?",
    "Act: run the lane",
    "Persist: decision log and state",
    "Announce decision.recorded",
]


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def text(stack: LocalStack, body: str, sender: str = MARIA.phone) -> None:
    response = stack.http(
        signed_sms_event(stack.twilio_token, twilio_sid("SM", f"text {next(_sids)}"), sender, body)
    )
    assert response["statusCode"] == 200


def flush(stack: LocalStack) -> dict[str, Any]:
    """Let the idle window pass; return the newest execution, finished."""
    before = {e["executionArn"] for e in stack.executions()}
    stack.advance(stack.idle + 1)
    new = [e for e in stack.executions() if e["executionArn"] not in before]
    assert len(new) == 1, f"expected one new execution, got {len(new)}"
    return stack.sfn.describe_execution(executionArn=new[0]["executionArn"])  # type: ignore[no-any-return]


def output(execution: dict[str, Any]) -> dict[str, Any]:
    return json.loads(execution["output"])  # type: ignore[no-any-return]


def lanes(execution: dict[str, Any]) -> list[tuple[str, str | None]]:
    queue = output(execution)["disposal"]["actions"]
    return [(q["action"]["lane"], q["action"].get("target_wo_id")) for q in queue]


def test_every_placeholder_has_a_substitution_and_vice_versa() -> None:
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9]+)\}", ASL_PATH.read_text()))
    assert placeholders == set(asl_substitutions("bus"))


def test_every_next_names_a_state_and_every_state_is_reachable() -> None:
    asl = json.loads(ASL_PATH.read_text())

    def check(machine: dict[str, Any]) -> None:
        states = machine["States"]
        targets = {machine["StartAt"]}
        for state in states.values():
            targets.update(t for t in _nexts(state))
            if state["Type"] == "Map":
                check(state["ItemProcessor"])
        assert targets <= set(states), targets - set(states)
        assert set(states) <= targets, set(states) - targets

    check(asl)


def _nexts(state: dict[str, Any]) -> Iterator[str]:
    if "Next" in state:
        yield state["Next"]
    if "Default" in state:
        yield state["Default"]
    for choice in state.get("Choices", []):
        yield choice["Next"]
    for catch in state.get("Catch", []):
        yield catch["Next"]


def test_create_then_schedule_runs_the_states_in_order(stack: LocalStack) -> None:
    text(stack, "hi, water is leaking under my kitchen sink")
    first = flush(stack)
    assert first["status"] == "SUCCEEDED"
    assert stack.states_entered(first["executionArn"]) == HAPPY_PATH
    ((lane, _),) = lanes(first)
    assert lane == "create_wo"
    created = output(first)["effects"][0]["created_wo_id"]
    wo = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).get(created)
    assert wo is not None
    assert wo.tenant_id == MARIA.party_id

    text(stack, "fine to come in, 2 onward")
    second = flush(stack)
    assert second["status"] == "SUCCEEDED"
    assert lanes(second) == [("schedule_visit", created)]  # not a 2-star rating of WO-198
    assert stack.states_entered(second["executionArn"]) == HAPPY_PATH


def test_the_escalate_route_skips_the_brain_and_pages_the_pm(stack: LocalStack) -> None:
    text(stack, "I smell gas in the hallway!!")
    execution = flush(stack)
    entered = stack.states_entered(execution["executionArn"])
    assert entered[:5] == [
        "Pre-check: safety first",
        "Emergency?",
        "Escalate at once: page the PM, advise the tenant",
        "Take the conversation lease (escalated: to persist)",
        "Persist: decision log and state",
    ]
    assert "Brain: sample and vote" not in entered
    escalated = output(execution)["escalated"]
    assert [q["action"]["lane"] for q in escalated["disposal"]["actions"]] == ["escalate"]
    assert escalated["disposal"]["route"] == "escalate"
    outbox = stack.outbox()
    assert any(m.to == ON_CALL_PM for m in outbox)


def test_the_handback_route_replies_without_the_brain(stack: LocalStack) -> None:
    text(stack, "thanks!")
    execution = flush(stack)
    entered = stack.states_entered(execution["executionArn"])
    assert "Hand back to the assistant" in entered
    assert "Brain: sample and vote" not in entered
    assert lanes(execution) == [("continue_with_assistant", None)]


def _fail_act(times: int, *, after_effect: bool, error: type[Exception]) -> Callable[..., Any]:
    calls = {"act": 0}

    def fault(step: str, event: dict[str, Any], call: Callable[[], dict[str, Any]]) -> Any:
        if step != "act":
            return call()
        calls["act"] += 1
        if calls["act"] <= times:
            if after_effect:
                call()  # the effect happens, then the Lambda dies before it answers
            raise error(f"act failure {calls['act']}")
        return call()

    return fault


def test_a_lambda_failing_twice_then_succeeding_creates_the_wo_once(stack: LocalStack) -> None:
    stack.fault = _fail_act(2, after_effect=True, error=TransientError)
    text(stack, "the bedroom window won't close")
    execution = flush(stack)
    assert execution["status"] == "SUCCEEDED"
    acts = [outcome for step, _, outcome in stack.invocations if step == "act"]
    assert acts == ["TransientError", "TransientError", "ok"]
    items = stack.ddb.scan(TableName=stack.tables["work_orders"])["Items"]
    assert len([i for i in items if i["wo_id"]["S"] != "WO-198"]) == 1


def test_a_lambda_failing_for_good_fails_open(stack: LocalStack) -> None:
    stack.fault = _fail_act(10**6, after_effect=False, error=RuntimeError)
    text(stack, "the dishwasher is broken")
    execution = flush(stack)
    assert execution["status"] == "FAILED"
    entered = stack.states_entered(execution["executionArn"])
    assert entered[-2:] == ["Fail open: record, page the PM, release", "Failed open (PM paged)"]
    package_id = json.loads(execution["input"])["package_id"]
    log = DynamoDecisionLog(stack.ddb, stack.tables["decisions"])
    fallback = log.get(package_id, f"{package_id}#fallback#0")
    assert fallback is not None
    assert fallback.fallback
    # The queued action was written ahead; fail-open closed it as failed (its effect unknown).
    (queued,) = [d for d in log.for_package(package_id) if d.stage == "dispose"]
    (outcome,) = log.outcomes_for(package_id)
    assert (outcome.decision_id, outcome.status) == (queued.decision_id, "failed")
    outbox = stack.outbox()
    assert any(m.to == ON_CALL_PM and package_id in m.body for m in outbox)
    # The lease was released: the conversation's next package gets it at once.
    stack.fault = lambda _step, _event, call: call()
    text(stack, "also the fridge")
    assert flush(stack)["status"] == "SUCCEEDED"


def test_a_throttled_brain_waits_out_the_burst_and_never_fails_open(stack: LocalStack) -> None:
    """The brain's reserved concurrency is full six times in a row (three retries used to be
    all it got before failing open and paging the PM): the jittered retry rides it out."""
    throttled = {"brain": 6}

    def throttle(step: str, event: dict[str, Any], call: Callable[[], dict[str, Any]]) -> Any:
        if throttled.get(step):
            throttled[step] -= 1
            raise LambdaFunctionError("Lambda.TooManyRequestsException", "Rate Exceeded.")
        return call()

    stack.fault = throttle
    text(stack, "the sliding door to the balcony jumps off its rail")
    execution = flush(stack)
    assert execution["status"] == "SUCCEEDED"
    brains = [outcome for step, _, outcome in stack.invocations if step == "brain"]
    assert brains == ["Lambda.TooManyRequestsException"] * 6 + ["ok"]
    entered = stack.states_entered(execution["executionArn"])
    assert "Fail open: record, page the PM, release" not in entered
    assert not [m for m in stack.outbox() if m.to == ON_CALL_PM]


def test_two_packages_of_one_conversation_run_in_order_and_never_overlap(
    stack: LocalStack,
) -> None:
    conversation = conversation_id_for(MARIA.phone)
    for body in ("the oven does not heat", "and the hood light is out"):
        text(stack, body)
        assert stack.ingestor.request_flush(conversation, FlushTrigger.KICKOFF, stack.clock.now())
        stack.debounce.release_due()
        stack.poll_debounce()  # starts the execution; does not wait for it
    stack.wait_for_executions()
    executions = stack.executions()
    assert len(executions) == 2
    assert {e["status"] for e in executions} == {"SUCCEEDED"}
    first, second = package_id_for(conversation, 1), package_id_for(conversation, 2)
    held = [
        (step, pkg)
        for step, pkg, outcome in stack.invocations
        if outcome == "ok" and step in ("lease", "persist")
    ]
    assert held == [("lease", first), ("persist", first), ("lease", second), ("persist", second)]


def test_step_mode_pauses_at_each_gate_and_task_success_releases_it(stack: LocalStack) -> None:
    conversation = conversation_id_for(MARIA.phone)
    message = Message(
        message_id="SMstep1",
        conversation_id=conversation,
        from_phone=MARIA.phone,
        body="the shower drain is clogged",
        received_at=stack.clock.now(),
        seq=1,
    )
    package = Package(
        package_id=package_id_for(conversation, 1),
        conversation_id=conversation,
        flush_number=1,
        trigger=FlushTrigger.KICKOFF,
        sender_phone=MARIA.phone,
        messages=(message,),
        flushed_at=stack.clock.now(),
    )
    arn = stack.sfn.start_execution(
        stateMachineArn=stack.machine_arn,
        name=package.package_id,
        input=execution_input(package, step=True),
    )["executionArn"]
    released = []
    for expected in ("before the brain", "before the action"):
        gate = _wait_for_gate(stack, arn)
        assert gate.gate == expected
        assert stack.sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
        stack.release_gate(gate)
        released.append(gate.gate)
    stack.wait_for_executions()
    assert released == ["before the brain", "before the action"]
    assert stack.sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED"
    entered = stack.states_entered(arn)
    assert entered.index("Step gate: before the brain") < entered.index("Brain: sample and vote")
    assert entered.index("Step gate: before the action") < entered.index("Act: run the lane")


def _wait_for_gate(stack: LocalStack, execution_arn: str) -> Any:
    done = threading.Event()
    for _ in range(500):
        gates = [
            g for g in stack.pipeline.deps.gates.open_gates() if g.execution_id == execution_arn
        ]
        if gates:
            return gates[0]
        done.wait(0.01)
    raise AssertionError("no gate paused")


def test_every_action_publishes_its_events_to_the_watcher_queue(stack: LocalStack) -> None:
    text(stack, "the front door lock is jammed")
    flush(stack)
    types = [
        json.loads(e["detail"])["type"] if isinstance(e.get("detail"), str) else e["detail"]["type"]
        for e in stack.domain_events()
    ]
    assert "wo.created" in types
    assert "message.sent" in types
    assert "decision.recorded" in types


def test_a_package_failing_before_it_holds_the_lease_does_not_block_the_next(
    stack: LocalStack,
) -> None:
    def lease_fails_once(step: str, event: dict[str, Any], call: Callable[[], Any]) -> Any:
        if step == "lease" and event["flush_number"] == 1:
            raise RuntimeError("lease table unreachable")
        return call()

    stack.fault = lease_fails_once
    text(stack, "the garage door is stuck")
    assert flush(stack)["status"] == "FAILED"  # failed open, never held the lease
    text(stack, "and the side gate too")
    second = flush(stack)
    assert second["status"] == "SUCCEEDED"
    assert json.loads(second["input"])["flush_number"] == 2
