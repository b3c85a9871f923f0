"""The Twilio messenger on the real twilio SDK, against a Twilio-compatible loopback answered
in-process (no sockets), with its send records and message items in moto's DynamoDB.

Every assertion about what was texted reads the loopback's own messages (what "Twilio" has),
never the messenger's return value alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from builders import T0
from twilio.rest import Client

from maestro.adapters.ddb import from_item, to_value
from maestro.adapters.twilio_sms import TwilioMessageReader, TwilioMessenger
from maestro.ports.messaging import SendFailedError
from maestro_dev.local.clock import VirtualClock
from maestro_dev.local.twilio_loopback import (
    LOCAL_ACCOUNT_SID,
    Answer,
    Fault,
    LoopbackHttpClient,
    TwilioLoopback,
)

if TYPE_CHECKING:
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

TOKEN = "loopback-auth-token"
LINE = "+14155550000"
TENANT = "+14155550100"
VENDOR = "+14155550142"
CALLBACK = "https://abc.execute-api.us-east-1.amazonaws.com/v1/twilio/status"


@dataclass
class Rig:
    aws: Any
    clock: VirtualClock
    loopback: TwilioLoopback
    client: Client
    sleeps: list[float] = field(default_factory=list)

    def messenger(self, **overrides: Any) -> TwilioMessenger:
        options: dict[str, Any] = {
            "sends_table": self.aws.table_names["sends"],
            "messages_table": self.aws.table_names["messages"],
            "from_number": LINE,
            "status_callback": CALLBACK,
            "clock": self.clock,
            "attempts": 4,
            "backoff_seconds": 0.5,
            "sleep": self.sleeps.append,
            **overrides,
        }
        return TwilioMessenger(self.client, self.aws.dynamodb, **options)

    def record(self, key: str) -> dict[str, Any]:
        item = self.aws.dynamodb.get_item(
            TableName=self.aws.table_names["sends"], Key={"idempotency_key": to_value(key)}
        )["Item"]
        return from_item(item)

    def item(self, sid: str) -> dict[str, Any]:
        item = self.aws.dynamodb.get_item(
            TableName=self.aws.table_names["messages"], Key={"message_id": to_value(sid)}
        )["Item"]
        return from_item(item)

    def creates(self) -> int:
        return sum(1 for method, path in self.loopback.requests if method == "POST")


def _rig(aws: AwsEnv, token: str = TOKEN, timeout: float = 5.0) -> Rig:
    clock = VirtualClock(T0)
    loopback = TwilioLoopback(TOKEN, clock.now, numbers=(LINE,))
    client = Client(LOCAL_ACCOUNT_SID, token, http_client=LoopbackHttpClient(loopback, timeout))
    return Rig(aws=aws, clock=clock, loopback=loopback, client=client)


@pytest.fixture
def rig(aws: AwsEnv) -> Rig:
    return _rig(aws)


def test_a_send_is_one_twilio_message_with_its_sid_recorded(rig: Rig) -> None:
    sent = rig.messenger().send(TENANT, "Got it: WO-1 is open.", idempotency_key="pkg#0#tenant")
    (message,) = rig.loopback.messages()
    assert (message["sid"], message["to"], message["from"], message["body"]) == (
        sent.sid,
        TENANT,
        LINE,
        "Got it: WO-1 is open.",
    )
    assert re.fullmatch(r"SM[0-9a-f]{32}", sent.sid)
    assert (sent.status, sent.via) == ("queued", "twilio")
    record = rig.record("pkg#0#tenant")
    assert (record["state"], record["sid"], record["attempts"]) == ("sent", sent.sid, 1)
    item = rig.item(sent.sid)
    assert (item["direction"], item["idempotency_key"], item["status"]) == (
        "outbound",
        "pkg#0#tenant",
        "queued",
    )
    # Twilio posts its status callbacks to the URL the message was created with.
    rig.clock.advance(5)
    rig.loopback.progress()
    assert {url for url, _ in rig.loopback.callbacks} == {CALLBACK}
    assert [form["MessageStatus"] for _, form in rig.loopback.callbacks] == ["sent", "delivered"]


def test_the_same_key_twice_texts_once(rig: Rig) -> None:
    messenger = rig.messenger()
    first = messenger.send(TENANT, "hello", idempotency_key="pkg#1")
    again = messenger.send(TENANT, "hello again?", idempotency_key="pkg#1")
    assert again.sid == first.sid
    assert again.body == "hello"  # the message as it was sent, not the new words
    assert len(rig.loopback.messages()) == 1
    assert rig.creates() == 1


def test_a_crash_after_twilio_accepted_and_before_the_sid_was_recorded_texts_once(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashing = rig.messenger()

    def crash(self: TwilioMessenger, key: str, message: Any) -> None:
        raise SystemExit("the Lambda died here")  # after create() returned, before recording

    monkeypatch.setattr(TwilioMessenger, "_record_sid", crash)
    with pytest.raises(SystemExit):
        crashing.send(VENDOR, "Update on WO-204: it drips", idempotency_key="pkg#2#vendor")
    assert rig.record("pkg#2#vendor")["state"] == "sending"  # claimed, no SID
    assert len(rig.loopback.messages(VENDOR)) == 1  # Twilio has it
    monkeypatch.undo()

    retried = rig.messenger().send(
        VENDOR, "Update on WO-204: it drips", idempotency_key="pkg#2#vendor"
    )
    (message,) = rig.loopback.messages(VENDOR)  # still one: looked up, not sent again
    assert retried.sid == message["sid"]
    assert rig.creates() == 1
    assert ("GET", f"/2010-04-01/Accounts/{LOCAL_ACCOUNT_SID}/Messages.json") in (
        rig.loopback.requests
    )
    assert rig.record("pkg#2#vendor")["sid"] == message["sid"]


def test_a_look_up_never_takes_another_actions_message_with_the_same_words(rig: Rig) -> None:
    messenger = rig.messenger()
    other = messenger.send(TENANT, "Thanks, I'm on it.", idempotency_key="pkg-a#0")
    # Another action's claim with no SID (its run crashed before Twilio was called).
    rig.aws.dynamodb.put_item(
        TableName=rig.aws.table_names["sends"],
        Item={
            "idempotency_key": to_value("pkg-b#0"),
            "to": to_value(TENANT),
            "body": to_value("Thanks, I'm on it."),
            "state": to_value("sending"),
            "claimed_at": to_value(T0.isoformat()),
        },
    )
    mine = messenger.send(TENANT, "Thanks, I'm on it.", idempotency_key="pkg-b#0")
    assert mine.sid != other.sid
    assert len(rig.loopback.messages(TENANT)) == 2


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=503, times=2),
        Fault(status=500, code=20500, message="Internal Server Error", times=1),
        Fault(status=429, code=20429, message="Too Many Requests", times=3),
        Fault(hang_seconds=6, times=1),  # the client gives up after 5 s: a timeout
    ],
    ids=["503 twice", "500", "429 thrice", "timeout, not accepted"],
)
def test_transient_failures_are_retried_with_backoff_and_text_once(rig: Rig, fault: Fault) -> None:
    times = fault.times
    rig.loopback.fault(fault)
    sent = rig.messenger().send(TENANT, "hello", idempotency_key="pkg#3")
    (message,) = rig.loopback.messages()
    assert message["sid"] == sent.sid
    assert rig.record("pkg#3")["attempts"] == times + 1
    assert len(rig.sleeps) == times
    # Exponential backoff with jitter: each wait within [half, all] of 0.5 s × 2^n.
    for n, slept in enumerate(rig.sleeps):
        assert 0.25 * 2**n <= slept <= 0.5 * 2**n


def test_a_timeout_after_twilio_accepted_is_looked_up_not_sent_again(rig: Rig) -> None:
    rig.loopback.fault(Fault(hang_seconds=6, accept=True))
    sent = rig.messenger().send(TENANT, "the code is 1234", idempotency_key="pkg#4")
    (message,) = rig.loopback.messages()
    assert sent.sid == message["sid"]
    assert rig.creates() == 1


def test_failing_through_every_retry_is_a_recorded_failure(rig: Rig) -> None:
    rig.loopback.fault(Fault(status=503, times=99))
    with pytest.raises(SendFailedError) as raised:
        rig.messenger().send(TENANT, "hello", idempotency_key="pkg#5")
    assert (raised.value.transient, raised.value.attempts) == (True, 4)
    record = rig.record("pkg#5")
    assert record["state"] == "failed"
    assert "503" in record["error"]
    assert rig.loopback.messages() == []
    assert len(rig.sleeps) == 3

    # Twilio is back: the retried action sends, once.
    rig.loopback._faults.clear()
    sent = rig.messenger().send(TENANT, "hello", idempotency_key="pkg#5")
    assert [m["sid"] for m in rig.loopback.messages()] == [sent.sid]
    assert rig.record("pkg#5")["state"] == "sent"


def test_a_refusal_is_not_retried(rig: Rig) -> None:
    with pytest.raises(SendFailedError) as raised:
        rig.messenger().send("+1555", "hello", idempotency_key="pkg#6")
    assert (raised.value.transient, raised.value.attempts) == (False, 1)
    assert "21211" in rig.record("pkg#6")["error"]
    assert rig.sleeps == []


def test_wrong_credentials_are_a_refusal(aws: AwsEnv) -> None:
    rig = _rig(aws, token="not-the-token")
    with pytest.raises(SendFailedError, match="401"):
        rig.messenger().send(TENANT, "hello", idempotency_key="pkg#7")
    assert rig.loopback.messages() == []


def test_the_reader_fetches_by_sid(rig: Rig) -> None:
    sent = rig.messenger().send(TENANT, "hello", idempotency_key="pkg#8")
    sleeps: list[float] = []
    reader = TwilioMessageReader(rig.client, sleep=sleeps.append)
    read = reader.read(sent.sid)
    assert read is not None
    assert (read.sid, read.to, read.from_number, read.body, read.status, read.provenance) == (
        sent.sid,
        TENANT,
        LINE,
        "hello",
        "queued",
        "twilio-read",
    )
    assert read.created_at == T0
    assert reader.read("SM" + "0" * 32) is None


def test_the_reader_retries_a_transient_failure(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = rig.messenger().send(TENANT, "hello", idempotency_key="pkg#9")
    real: Callable[..., Answer] = rig.loopback.handle
    answers: list[int] = []

    def flaky(*args: Any) -> Answer:
        answer = real(*args) if answers else Answer(503, {"code": 20503, "status": 503})
        answers.append(answer.status)
        return answer

    monkeypatch.setattr(rig.loopback, "handle", flaky)
    read = TwilioMessageReader(rig.client, sleep=lambda _s: None).read(sent.sid)
    assert read is not None
    assert answers == [503, 200]


@pytest.mark.parametrize(("messages_days", "record_days"), [(20, 20), (90, 30), (0, 30)])
def test_a_send_record_keeps_the_text_no_longer_than_the_messages(
    rig: Rig, messages_days: int, record_days: int
) -> None:
    """The record holds the number and the text: it expires with the messages when they are
    kept less than its own window (30 days), and after that window otherwise."""
    rig.clock.advance(600)
    claimed = rig.clock.now()
    rig.messenger(retention_days=messages_days).send(TENANT, "Fan fixed?", idempotency_key="k")
    record = rig.record("k")
    assert record["expires_at_epoch"] == int((claimed + timedelta(days=record_days)).timestamp())
