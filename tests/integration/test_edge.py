"""The edge holds (#17): a message that reached Twilio is never lost.

Each text here is sent the way a phone sends it: to the loopback Twilio (``stack.twilio.text``),
which posts the signed webhook to the number's SMS URL and, when that fails, to its fallback URL,
both set by the code `maestro twilio wire` runs. What is checked is read back from the stores and
from Twilio: the message stored once, the PM's page and the tenant's advice at Twilio.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from twilio.request_validator import RequestValidator

from maestro.adapters.twilio_sms import twilio_client
from maestro.ingest.flusher import STRANDED_GRACE
from maestro_dev.local.faults import Stages, Wire, WireCall, WireError
from maestro_dev.local.stack import LINE, ON_CALL_PM, SWEEP_EVERY_SECONDS, LocalStack
from maestro_dev.local.world import MARIA, VIC, seed

pytestmark = pytest.mark.integration

GAS = "I smell gas in the hallway"
HOUR = 3600


@pytest.fixture
def faulty() -> Iterator[tuple[LocalStack, Wire, Stages]]:
    with Wire() as wire, LocalStack() as stack:
        seed(stack)
        yield stack, wire, Stages(stack, wire)


def _dynamodb_of(stage: str) -> WireError:
    """Every DynamoDB call the stage makes fails with a 500, through all the SDK's retries."""

    def matches(call: WireCall) -> bool:
        return call.service == "dynamodb" and call.stage == stage

    return WireError("InternalServerError", 500, matches, per_call=10**6)


def _emergency_handled(stack: LocalStack, phone: str) -> tuple[list[str], list[str]]:
    """The [EMERGENCY] pages at Twilio that name ``phone``'s words, and the safety advice
    Twilio has for ``phone``."""
    pages = [m.body for m in stack.outbox(ON_CALL_PM) if m.body.startswith("[EMERGENCY]")]
    advice = [m.body for m in stack.outbox(phone) if "call 911" in m.body]
    return pages, advice


def _stored(stack: LocalStack, sid: str) -> int:
    """How many messages of the buffer carry Twilio's MessageSid ``sid`` (the dedupe key)."""
    return int(stack.buffer.get_message(sid) is not None)


def test_a_gas_report_whose_webhook_failed_is_paged_through_the_fallback(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """The inbound-loss rehearsal: DynamoDB fails the webhook's calls through the SDK's
    retries; the text is delivered once. Twilio's fallback keeps it, the drain stores it, and
    within the virtual hour the PM is paged and the tenant advised."""
    stack, wire, _ = faulty
    wire.add(_dynamodb_of("webhook"))
    delivery = stack.twilio.text(MARIA.phone, GAS)
    assert [status for _, status in delivery.attempts] == [502, 200]
    assert delivery.attempts[1][0].endswith("/fallback/twilio/sms")
    stack.advance(HOUR)
    pages, advice = _emergency_handled(stack, MARIA.phone)
    assert len(pages) == 1
    assert len(advice) == 1
    assert _stored(stack, delivery.sid) == 1
    assert wire.injected()  # the fault did hit the webhook


def test_without_a_fallback_url_the_same_failure_loses_the_report(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """The control: the number as it was before wiring (no fallback URL): Twilio drops the
    message after the 502, and nothing is ever paged. The fallback is what saves it above."""
    stack, wire, _ = faulty
    number = stack.twilio.number(LINE)
    client = twilio_client(
        stack.twilio.account_sid, stack.twilio_token, base_url=stack.twilio_server.url
    )
    client.incoming_phone_numbers(number["sid"]).update(sms_fallback_url="")
    wire.add(_dynamodb_of("webhook"))
    delivery = stack.twilio.text(MARIA.phone, GAS)
    assert [status for _, status in delivery.attempts] == [502]
    stack.advance(HOUR)
    assert _emergency_handled(stack, MARIA.phone) == ([], [])
    assert _stored(stack, delivery.sid) == 0


def test_a_gas_report_throttled_at_the_edge_is_paged_through_the_fallback() -> None:
    """The stage throttle answers 429 (its bucket emptied by another tenant's text): Twilio
    goes to the fallback API, which has a throttle of its own."""
    with LocalStack(stage_throttle=(0.0001, 1)) as stack:
        seed(stack)
        first = stack.twilio.text(VIC.phone, "on my way to 3B with the new cartridge")
        assert [status for _, status in first.attempts] == [200]
        delivery = stack.twilio.text(MARIA.phone, GAS)
        assert [status for _, status in delivery.attempts] == [429, 200]
        stack.advance(HOUR)
        pages, advice = _emergency_handled(stack, MARIA.phone)
        assert len(pages) == 1
        assert len(advice) == 1
        assert _stored(stack, delivery.sid) == 1


def test_the_drain_keeps_a_message_until_the_store_recovers(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """DynamoDB fails the primary and, for its first three tries, the drain too: the kept
    request waits on the fallback queue (SQS redelivers it) and is stored once it recovers."""
    stack, wire, stages = faulty
    wire.add(_dynamodb_of("webhook"))
    drain = wire.add(
        WireError(
            "InternalServerError",
            500,
            lambda call: (
                call.service == "dynamodb"
                and call.stage == "fallback"
                and stages.entered["fallback"] <= 3
            ),
            per_call=10**6,
        )
    )
    delivery = stack.twilio.text(MARIA.phone, "the bathroom fan rattles and stops")
    for _ in range(5):
        stack.poll_fallback()
    assert stages.failed["fallback"] == 3
    assert drain.injected
    assert _stored(stack, delivery.sid) == 1
    assert (
        stack.sqs.get_queue_attributes(
            QueueUrl=stack.fallback_dlq, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]["ApproximateNumberOfMessages"]
        == "0"
    )


def test_a_forged_request_to_the_fallback_is_kept_then_refused_and_stores_nothing(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """The fallback API cannot check a signature (it has no secret): it keeps what it gets,
    and the drain refuses a forgery for good (no retry, nothing stored, nothing in the DLQ)."""
    stack, _, stages = faulty
    url = stack.twilio.number(LINE)["sms_fallback_url"]
    form = {
        "MessageSid": "SM" + "ab" * 16,
        "AccountSid": stack.twilio.account_sid,
        "From": MARIA.phone,
        "To": LINE,
        "Body": "cancel everything and refund me",
    }
    forged = RequestValidator("a key that is not the auth token").compute_signature(url, form)
    assert stack.edge.post(url, form, forged) == 200  # kept: the edge has no secret to check
    stack.poll_fallback()
    assert stages.entered["fallback"] == 0  # refused at authentication, before the ingestor
    assert stack.buffer.get_message(form["MessageSid"]) is None
    for queue in (stack.fallback_url, stack.fallback_dlq):
        attributes = stack.sqs.get_queue_attributes(
            QueueUrl=queue,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        assert set(attributes.values()) == {"0"}


def test_a_stored_report_whose_signal_was_lost_is_flushed_at_once_by_twilios_retry(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """The webhook stored the message, then could not send its debounce signal (SQS failed):
    it answers 502 and Twilio's fallback brings the same message again. Already stored, it is
    not stored twice, and the signal it re-sends is as urgent as the words: the PM is paged
    within seconds, not after the idle window."""
    stack, _, _ = faulty
    real = stack.ingestor._signal
    lost: list[object] = []

    def lose_once(*args: object) -> None:
        if not lost:
            lost.append(args)
            raise RuntimeError("SQS SendMessage failed through the SDK's retries")
        real(*args)  # type: ignore[arg-type]

    stack.ingestor._signal = lose_once  # type: ignore[method-assign]
    delivery = stack.twilio.text(MARIA.phone, "there's a smell of gas by the boiler")
    assert [status for _, status in delivery.attempts] == [502, 200]
    stack.advance(10)
    pages, advice = _emergency_handled(stack, MARIA.phone)
    assert len(pages) == 1
    assert len(advice) == 1
    assert _stored(stack, delivery.sid) == 1


def test_a_message_left_without_a_flush_is_flushed_by_the_stranded_sweep() -> None:
    """Stored, answered 200, and every signal it had lost (the queue failed after the store):
    the scheduled sweep finds the conversation waiting past max_wait and flushes it."""
    with LocalStack() as stack:
        seed(stack)
        stack.debounce.send = lambda *_args: None  # type: ignore[method-assign]
        delivery = stack.twilio.text(MARIA.phone, "the dishwasher won't drain again")
        assert [status for _, status in delivery.attempts] == [200]
        stack.advance(stack.max_wait)
        assert stack.executions() == []  # nothing flushed it: the signals are gone
        stack.advance(STRANDED_GRACE.total_seconds() + SWEEP_EVERY_SECONDS)
        executions = stack.executions()
        assert len(executions) == 1
        assert executions[0]["status"] == "SUCCEEDED"
        flushed = stack.buffer.meta(stack.buffer.get_message(delivery.sid).conversation_id)
        assert flushed is not None
        assert not flushed.has_unflushed


def test_a_webhook_slower_than_twilio_waits_goes_to_the_fallback_too(
    faulty: tuple[LocalStack, Wire, Stages],
) -> None:
    """Twilio stops waiting (15 s; here a tenth of a second) and requests the fallback URL
    whatever the slow webhook did meanwhile: stored by the primary, the kept copy is a duplicate
    and stores nothing twice."""
    stack, _, _ = faulty
    http = stack.http

    def slow(event: dict[str, Any]) -> dict[str, Any]:
        answer = http(event)
        time.sleep(0.3)
        return answer

    stack.http = slow  # type: ignore[method-assign]
    stack.twilio.webhook_timeout_seconds = 0.1
    delivery = stack.twilio.text(MARIA.phone, "the heating is off again in 3B")
    assert [status for _, status in delivery.attempts] == [0, 200]
    stack.advance(stack.idle + 1)
    assert _stored(stack, delivery.sid) == 1
    packaged = [m for e in stack.executions() for m in _package_messages(stack, e)]
    assert packaged.count(delivery.sid) == 1


def _package_messages(stack: LocalStack, execution: dict[str, Any]) -> list[str]:
    described = stack.sfn.describe_execution(executionArn=execution["executionArn"])
    package = json.loads(described["input"]).get("package") or {}
    return [m["message_id"] for m in package.get("messages", [])]
