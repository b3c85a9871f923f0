"""Model budgets on DynamoDB, and the severity probe's once-per-message claim."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from embedded import new_executions, sms

from maestro.adapters.dynamodb_budget import BudgetCaps, DynamoModelBudget
from maestro.brain.scripted import ScriptedModel
from maestro.ports import BudgetScope
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

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
        assert stack.flusher._prober is not None
        assert stack.flusher._prober.probe(sid) is None  # a redelivered signal: no second call
        assert len(model.calls_for("probe")) == 1
        message = stack.buffer.get_message(sid)
        assert message is not None
        assert message.probe is not None
        assert message.probe.source == "model"
