"""Texts on the embedded stack go through the real Twilio adapter and SDK to the loopback
Twilio: sent once per action even across a crash, retried on 5xx / 429 / timeouts, and a
failure that outlasts the retries is recorded and reaches the PM (never a silent drop).

What was texted is read from the loopback Twilio's own messages, never from a return value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from embedded import completion, decisions, described, flush, outcomes, sms, work_orders

from maestro.adapters.ddb import from_item
from maestro.adapters.twilio_sms import TwilioMessenger, twilio_client
from maestro_dev.local.events import LOCAL_BASE_URL
from maestro_dev.local.stack import LINE, ON_CALL_PM, LambdaFunctionError, LocalStack
from maestro_dev.local.twilio_loopback import Fault
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration

LEAK = "hi, water is leaking under my kitchen sink"


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack(twilio_timeout_seconds=0.4) as local:
        seed(local)
        yield local


def _send_records(stack: LocalStack) -> list[dict[str, Any]]:
    items = stack.ddb.scan(TableName=stack.tables["sends"], ConsistentRead=True)["Items"]
    return [from_item(item) for item in items]


def test_a_text_goes_through_the_sdk_to_twilio_and_its_callbacks_come_back(
    stack: LocalStack,
) -> None:
    sms(stack, LEAK)
    execution = described(stack, flush(stack))
    assert execution["status"] == "SUCCEEDED"
    (outcome,) = outcomes(stack, execution)
    (sid,) = outcome.message_sids
    message = stack.twilio.message(sid)
    assert message is not None
    assert (message["to"], message["from"], message["direction"]) == (
        MARIA.phone,
        LINE,
        "outbound-api",
    )
    assert message["body"].startswith("Got it: I've opened WO-")
    # Twilio moved it on and posted signed callbacks to the webhook, which recorded them.
    stack.advance(5)
    assert stack.twilio.message(sid)["status"] == "delivered"  # type: ignore[index]
    # Its own callbacks (the WO's execution texts Maria its gather question too).
    statuses = [
        form["MessageStatus"] for _, form in stack.twilio.callbacks if form["MessageSid"] == sid
    ]
    assert statuses == ["sent", "delivered"]
    item = stack.ddb.get_item(
        TableName=stack.tables["messages"], Key={"message_id": {"S": sid}}, ConsistentRead=True
    )["Item"]
    assert from_item(item)["status"] == "delivered"


def test_callbacks_for_a_text_maestro_has_no_record_of_are_refused_and_stored_nowhere(
    stack: LocalStack,
) -> None:
    # A text in the account that maestro's messenger never recorded (a callback that beat the
    # record, a record a crash lost, or a text someone else sent): its signed callbacks come to
    # the webhook, which refuses them (404) and writes nothing; the stack keeps them, as
    # Twilio's debugger does, and goes on.
    client = twilio_client(
        stack.twilio.account_sid, stack.twilio_token, base_url=stack.twilio_server.url
    )
    other = client.messages.create(
        to=MARIA.phone,
        from_=LINE,
        body="a text from the account's console",
        status_callback=f"{LOCAL_BASE_URL}/twilio/status",
    )
    stack.advance(5)
    assert [form["MessageStatus"] for _, form in stack.refused_callbacks] == ["sent", "delivered"]
    assert {form["MessageSid"] for _, form in stack.refused_callbacks} == {other.sid}
    assert "Item" not in stack.ddb.get_item(
        TableName=stack.tables["messages"], Key={"message_id": {"S": other.sid}}
    )
    # A text maestro sent has its callbacks applied, as ever.
    sms(stack, LEAK)
    (outcome,) = outcomes(stack, described(stack, flush(stack)))
    stack.advance(5)
    (sid,) = outcome.message_sids
    item = stack.ddb.get_item(TableName=stack.tables["messages"], Key={"message_id": {"S": sid}})
    assert from_item(item["Item"])["status"] == "delivered"
    assert len(stack.refused_callbacks) == 2


def test_a_crash_after_twilio_accepted_and_before_the_sid_was_recorded_texts_once(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = TwilioMessenger._record_sid
    crashes: list[str] = []

    def crash_once(self: TwilioMessenger, key: str, message: Any) -> Any:
        if not crashes:
            crashes.append(key)
            # The Lambda dies between Twilio's answer and the record: the service reports it,
            # and the state machine retries the act step.
            raise LambdaFunctionError("Lambda.ServiceException", "the container died")
        return real(self, key, message)

    monkeypatch.setattr(TwilioMessenger, "_record_sid", crash_once)
    sms(stack, LEAK)
    execution = described(stack, flush(stack))
    assert execution["status"] == "SUCCEEDED"
    assert crashes
    acts = [i for i in stack.invocations if i[0] == "act"]
    assert [outcome for _, _, outcome in acts] == ["Lambda.ServiceException", "ok"]
    (outcome,) = outcomes(stack, execution)
    # The act's text to Maria, once, not twice (her WO's execution then asks its gather
    # question: a text of its own, under its own key).
    (message,) = [m for m in stack.twilio.messages(MARIA.phone) if "opened WO-" in m["body"]]
    assert outcome.message_sids == (message["sid"],)
    acts_records = [
        r for r in _send_records(stack) if r["idempotency_key"].startswith(outcome.package_id)
    ]
    (record,) = acts_records
    assert (record["state"], record["sid"]) == ("sent", message["sid"])


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=503, message="Service Unavailable", times=99),
        Fault(status=429, code=20429, message="Too Many Requests", times=99),
        Fault(hang_seconds=0.6, times=99),  # longer than the client waits: a timeout each time
    ],
    ids=["5xx", "429", "timeout"],
)
def test_a_send_failing_through_every_retry_is_recorded_and_the_pm_is_paged(
    stack: LocalStack, fault: Fault
) -> None:
    fault.to = MARIA.phone  # Twilio fails for Maria's texts; the PM's page gets through
    stack.twilio.fault(fault)
    sms(stack, LEAK)
    execution = described(stack, flush(stack))
    assert execution["status"] == "FAILED"  # failed open, on the record

    assert stack.twilio.messages(MARIA.phone) == []  # nothing reached her
    (outcome,) = outcomes(stack, execution)
    # The act's text to her (her WO's execution then fails to ask its gather question: a
    # record of its own, under the WO's key).
    (record,) = [
        r
        for r in _send_records(stack)
        if r["to"] == MARIA.phone and r["idempotency_key"].startswith(outcome.package_id)
    ]
    assert (record["state"], record["attempts"]) == ("failed", 4)  # retried with backoff
    (created,) = [wo for wo in work_orders(stack) if wo.wo_id != "WO-198"]
    assert (outcome.status, outcome.created_wo_id) == ("failed", None)
    assert outcome.note.startswith("a text could not be sent:")
    assert [(e.event, e.subject_id) for e in outcome.effects] == [("wo.created", created.wo_id)]
    recorded = decisions(stack, execution)
    assert recorded[-1].fallback
    assert "SendFailedError" in recorded[-1].reason
    closed = completion(stack, execution)
    assert closed is not None
    assert closed.completed_by == "fail_open"
    (page,) = stack.twilio.messages(ON_CALL_PM)
    assert page["body"].startswith("[FALLBACK]")
    assert "a text could not be sent" in page["body"]


def test_when_even_the_page_cannot_be_sent_the_record_says_so_and_the_lease_is_freed(
    stack: LocalStack,
) -> None:
    stack.twilio.fault(Fault(status=503, times=99))  # Twilio is down for everyone
    sms(stack, LEAK)
    execution = described(stack, flush(stack))
    assert execution["status"] == "FAILED"
    assert stack.twilio.messages() == []
    closed = completion(stack, execution)
    assert closed is not None
    assert "not sent:" in closed.reason
    assert ON_CALL_PM in closed.reason  # the page itself is named as not sent
    failed_open = [i for i in stack.invocations if i[0] == "fail_open"]
    assert [outcome for _, _, outcome in failed_open] == ["ok"]  # completed, not crashed

    stack.twilio._faults.clear()  # Twilio is back: the conversation goes on
    sms(stack, "also the fridge is warm")
    assert described(stack, flush(stack))["status"] == "SUCCEEDED"
