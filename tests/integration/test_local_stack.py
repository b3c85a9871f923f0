"""The embedded stack's event-source emulation: batches, partial failures, redrive to the DLQ."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from maestro_dev.local.events import signed_sms_event
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _count(stack: LocalStack, url: str) -> int:
    attributes = stack.sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_a_poison_signal_is_retried_then_redriven_to_the_dlq(stack: LocalStack) -> None:
    stack.sqs.send_message(QueueUrl=stack.debounce_url, MessageBody="not a signal")
    for _ in range(8):
        stack.poll_debounce()
    assert _count(stack, stack.debounce_url) == 0
    assert _count(stack, stack.debounce_dlq) == 1


def test_a_bad_record_does_not_hold_back_the_good_ones_in_its_batch(stack: LocalStack) -> None:
    stack.http(signed_sms_event(stack.twilio_token, "SMgood1", MARIA.phone, "no hot water"))
    stack.sqs.send_message(QueueUrl=stack.debounce_url, MessageBody="{}")
    stack.advance(stack.idle + 1)
    assert len(stack.executions()) == 1
    assert stack.executions()[0]["status"] == "SUCCEEDED"


def test_domain_events_reach_the_watcher_through_the_rule(stack: LocalStack) -> None:
    stack.http(signed_sms_event(stack.twilio_token, "SMev1", MARIA.phone, "the AC is broken"))
    stack.advance(stack.idle + 1)
    events = list(stack.domain_events())
    assert events, "the rule delivers every maestro event to the queues"
    assert all(e["source"] == "maestro" for e in events)
    detail = events[0]["detail"]
    body = json.loads(detail) if isinstance(detail, str) else detail
    assert {"event_id", "type", "package_id", "subject_id"} <= set(body)
    # The watcher's queue was polled and drained: one ledger row per event.
    assert _count(stack, stack.events_url) == 0
    rows = {row.row_id for row in stack.ledger_rows()}
    ids = {
        (json.loads(e["detail"]) if isinstance(e["detail"], str) else e["detail"])["event_id"]
        for e in events
    }
    assert rows == ids


def test_a_poison_event_is_retried_then_redriven_and_holds_back_nothing(stack: LocalStack) -> None:
    stack.sqs.send_message(QueueUrl=stack.events_url, MessageBody='{"detail": {"type": "x"}}')
    stack.http(signed_sms_event(stack.twilio_token, "SMev2", MARIA.phone, "the AC is broken"))
    stack.advance(stack.idle + 1)
    for _ in range(6):
        stack.poll_watcher()
    assert _count(stack, stack.events_url) == 0
    assert _count(stack, stack.events_dlq) == 1
    assert stack.ledger_rows(), "the good events in its batches were checked"
