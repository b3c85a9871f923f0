"""Model budgets on DynamoDB, and the severity probe's once-per-message claim."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from embedded import new_executions, open_wo, sms

from maestro.adapters.ddb import from_item
from maestro.adapters.dynamodb_budget import BudgetCaps, DynamoModelBudget
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.brain.model_port import ModelRequest
from maestro.domain.models import FlushTrigger, Urgency, WoSnapshot
from maestro.domain.prompt_data import read_data_blocks
from maestro.domain.records import MaestroState, OutstandingItem
from maestro.domain.safety import safety_floor
from maestro.ports.limits import BudgetScope
from maestro.ports.workflows import DebounceSignal
from maestro.tables import CONVERSATIONS
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import seed
from maestro_dev.scripted import Scripted, ScriptedModel

pytestmark = pytest.mark.integration

T0 = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)


def test_calls_stop_at_the_package_cap_and_tokens_at_theirs(aws: Any) -> None:
    budget = DynamoModelBudget(
        aws.dynamodb,
        aws.table_names["conversations"],
        BudgetCaps(package_calls=3, package_tokens=10_000, day_calls=100, day_tokens=10**6),
    )
    package = BudgetScope(conversation_id="c", package_id="p1")
    assert [budget.reserve(package, T0) for _ in range(4)] == [True, True, True, False]
    other = BudgetScope(conversation_id="c", package_id="p2")
    assert budget.reserve(other, T0)
    budget.record_tokens(other, T0, 10_000)
    assert not budget.reserve(other, T0), "the token cap refuses the next call"


def test_the_daily_cap_spans_the_conversations_packages(aws: Any) -> None:
    budget = DynamoModelBudget(
        aws.dynamodb, aws.table_names["conversations"], BudgetCaps(day_calls=2)
    )
    assert budget.reserve(BudgetScope(conversation_id="c", package_id="a"), T0)
    assert budget.reserve(BudgetScope(conversation_id="c", package_id="b"), T0)
    assert not budget.reserve(BudgetScope(conversation_id="c", package_id="c"), T0)
    assert budget.reserve(BudgetScope(conversation_id="other"), T0)


def test_the_judgments_allowance_is_per_conversation_per_day(aws: Any) -> None:
    """Naive: the judge's budget was 60 calls per warm container, never reset. Here it is a
    conditional counter on the conversations table: a judgment's samples are taken whole."""
    budget = DynamoModelBudget(
        aws.dynamodb, aws.table_names["conversations"], BudgetCaps(judgment_day_calls=7)
    )
    conv = BudgetScope(conversation_id="c", package_id="p1")
    assert [budget.reserve_judgments(conv, T0, 3) for _ in range(3)] == [True, True, False]
    assert budget.reserve_judgments(conv, T0, 1), "the seventh call still fits"
    assert not budget.reserve_judgments(conv, T0, 1)
    assert budget.reserve_judgments(BudgetScope(conversation_id="other"), T0, 3)
    assert budget.reserve_judgments(conv, T0 + timedelta(days=1), 3), "a new UTC day"
    # The model-call caps are apart: the conversation's calls were not spent by the judgments.
    assert budget.reserve(conv, T0)


def test_a_message_is_probed_once_even_when_its_signal_comes_twice() -> None:
    triage = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    model = ScriptedModel(
        responder=lambda r: triage if r.purpose in ("probe", "precheck") else None
    )
    with LocalStack(model=model) as stack:
        seed(stack)
        sid = sms(stack, "the dishwasher is making a noise")
        new_executions(stack, 1)
        prober = stack.prober._prober
        assert prober is not None
        message = stack.buffer.get_message(sid)
        assert message is not None
        assert message.probe is not None
        assert message.probe.source == "model"
        # A redelivered signal: no second call, the first answer.
        assert prober.probe(sid) == message.probe
        assert len(model.calls_for("probe")) == 1


def test_a_probe_redelivered_after_its_expedited_flush_failed_still_expedites(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The probe reads an emergency the floor misses; the flush it expedites fails before its
    claim (a throttled write), so SQS redelivers the signal: the stored reading expedites it."""
    emergency = {"route": "escalate", "severity": "emergency", "confidence": 0.9, "evidence": ""}
    model = ScriptedModel(responder=lambda r: emergency if r.purpose == "probe" else None)
    with LocalStack(model=model) as stack:
        seed(stack)
        claim = stack.flusher._buffer.claim_flush
        failures = []

        def throttled_once(*args: Any, **kwargs: Any) -> Any:
            if not failures:
                failures.append("claim")
                raise ClientError(
                    {"Error": {"Code": "ProvisionedThroughputExceededException"}}, "UpdateItem"
                )
            return claim(*args, **kwargs)

        monkeypatch.setattr(stack.flusher._buffer, "claim_flush", throttled_once)
        sms(stack, "mom slipped in the tub, she is awake but her arm bends the wrong way")
        # The probe's signal (delay 0), and its redelivery by SQS, well inside the idle window.
        (execution,) = new_executions(stack, 1)
        assert failures == ["claim"]
        assert len(model.calls_for("probe")) == 1
        package = json.loads(execution["input"])["package"]
        assert package["trigger"] == "urgency_expedite"  # not the idle window's


_EMERGENCY = {"route": "escalate", "severity": "emergency", "confidence": 0.9, "evidence": ""}
_CALM = {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
_KEYWORD_FREE = "grandad went grey and sweaty and keeps rubbing his left arm"


def _flag_the_flusher(stack: LocalStack, inside: list[bool]) -> None:
    """``inside[0]`` is True while the flusher handles a signal."""
    handle = stack.flusher.handle

    def flagged(signal: DebounceSignal) -> list[Any]:
        inside[0] = True
        try:
            return handle(signal)
        finally:
            inside[0] = False

    stack.flusher.handle = flagged  # type: ignore[method-assign]


def test_a_keyword_free_emergency_the_prober_reads_expedites_and_the_flusher_calls_no_model() -> (
    None
):
    inside = [False]
    flusher_calls: list[str] = []

    def answer(request: ModelRequest) -> Scripted | None:
        if inside[0]:
            flusher_calls.append(request.purpose)
        return _EMERGENCY if request.purpose in ("probe", "precheck") else None

    model = ScriptedModel(responder=answer)
    with LocalStack(model=model) as stack:
        seed(stack)
        _flag_the_flusher(stack, inside)
        assert safety_floor(_KEYWORD_FREE) is None  # only the model can read this one
        sms(stack, _KEYWORD_FREE)
        (execution,) = new_executions(stack, 1)  # well inside the idle window
        package = json.loads(execution["input"])["package"]
        assert package["trigger"] == "urgency_expedite"
        assert len(model.calls_for("probe")) == 1
        assert flusher_calls == []
        assert inside == [False]


def test_the_floors_emergency_pages_at_once_without_the_prober() -> None:
    """The safety floor reads it in the webhook: an expedite at once, and no probe asked."""
    model = ScriptedModel(responder=lambda r: _CALM if r.purpose in ("probe", "precheck") else None)
    with LocalStack(model=model) as stack:
        seed(stack)
        text = "there is smoke pouring out of the fuse box"
        assert safety_floor(text) is not None
        sms(stack, text)
        (execution,) = new_executions(stack, 1)
        assert json.loads(execution["input"])["package"]["trigger"] == "urgency_expedite"
        assert model.calls_for("probe") == []
        stack.wait_for_executions()
        assert any(m.to == ON_CALL_PM for m in stack.outbox())


def test_a_probe_redelivered_after_its_expedite_failed_to_send_expedites_without_a_call() -> None:
    """The prober read an emergency, and its expedite's send to the debounce queue failed: the
    probe record is redelivered, and the stored reading sends the expedite, with no second
    model call."""
    model = ScriptedModel(responder=lambda r: _EMERGENCY if r.purpose == "probe" else None)
    with LocalStack(model=model) as stack:
        seed(stack)
        send = stack.debounce.send
        refused: list[DebounceSignal] = []

        def refuse_the_first_expedite(signal: DebounceSignal, delay_seconds: int) -> None:
            if signal.trigger is FlushTrigger.URGENCY_EXPEDITE and not refused:
                refused.append(signal)
                raise ClientError({"Error": {"Code": "InternalError"}}, "SendMessage")
            send(signal, delay_seconds)

        stack.debounce.send = refuse_the_first_expedite  # type: ignore[method-assign]
        sms(stack, _KEYWORD_FREE)
        stack.poll_probes()  # the first delivery: the model reads it, the send fails
        assert len(refused) == 1
        assert stack.executions() == []
        (execution,) = new_executions(stack, 1)  # the redelivery
        assert json.loads(execution["input"])["package"]["trigger"] == "urgency_expedite"
        assert len(model.calls_for("probe")) == 1


def test_a_probe_signal_on_the_debounce_queue_goes_on_to_the_prober() -> None:
    """Rollout: a webhook without the probe queue's setting signals the debounce queue; the
    flusher hands the signal on (no model call of its own) and the prober expedites."""
    inside = [False]
    flusher_calls: list[str] = []

    def answer(request: ModelRequest) -> Scripted | None:
        if inside[0]:
            flusher_calls.append(request.purpose)
        return _EMERGENCY if request.purpose == "probe" else None

    model = ScriptedModel(responder=answer)
    with LocalStack(model=model) as stack:
        seed(stack)
        _flag_the_flusher(stack, inside)
        stack.ingestor._probe_queue = stack.debounce  # the webhook before its setting
        sms(stack, _KEYWORD_FREE)
        (execution,) = new_executions(stack, 1)
        assert json.loads(execution["input"])["package"]["trigger"] == "urgency_expedite"
        assert len(model.calls_for("probe")) == 1
        assert flusher_calls == []


def _judge_says_valid(request: ModelRequest) -> Scripted | None:
    if request.purpose in ("probe", "precheck"):
        return {"route": "reasoning", "severity": "none", "confidence": 0.9, "evidence": ""}
    if request.purpose == "reasoning":
        return {"actions": [{"lane": "continue_with_assistant", "confidence": 0.9}]}
    if request.purpose == "decide":
        return {"status": "decided", "action": "valid", "confidence": 0.95}
    return None


def test_an_edit_since_the_question_is_judged_on_the_pipeline_and_charged_to_the_day() -> None:
    """Through the real steps: the lease re-validates the availability question, the PM's edit
    goes to the judge, shown before → after, and its calls land on the conversation's day."""
    model = ScriptedModel(responder=_judge_says_valid)
    with LocalStack(model=model) as stack:
        seed(stack)
        now = stack.clock.now()
        asked = open_wo(stack, "WO-301", "radiator knocks at night")
        DynamoStateStore(stack.ddb, stack.tables["state"]).put(
            MaestroState(
                wo_id="WO-301",
                outstanding=(
                    OutstandingItem(
                        kind="availability",
                        since=now - timedelta(minutes=30),
                        asked_about=WoSnapshot.of(asked),
                    ),
                ),
                updated_at=now - timedelta(minutes=30),
            ),
            expected_version=None,
        )
        edited = asked.model_copy(
            update={"version": 2, "summary": "radiator pipe burst", "urgency": Urgency.URGENT}
        )
        DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).update(edited, 1)

        sms(stack, "thursday after 4 suits me")
        new_executions(stack, stack.idle + 1)

        judged = model.calls_for("decide")
        assert len(judged) == 3
        (facts,) = read_data_blocks(judged[0].turns[0].text)
        assert facts["changed"] == [
            {
                "field": "summary",
                "before": "radiator knocks at night",
                "after": "radiator pipe burst",
            },
            {"field": "urgency", "before": "routine", "after": "urgent"},
        ]
        rows = [
            from_item(item)
            for item in stack.ddb.scan(TableName=stack.tables["conversations"])["Items"]
        ]
        day = [r for r in rows if str(r[CONVERSATIONS.sort_name]).startswith("budget#judge#")]
        assert [int(r["calls"]) for r in day] == [3]
