"""`make bench`'s load run through `maestro serve` (benchmarks/load_http.py): a small one end to
end, and its read-back, which must count from the stores what a broken stack would do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from load_http import Text, read_back, run_http_load, run_unknown_senders_load

from maestro.domain.models import conversation_id_for
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

pytestmark = pytest.mark.integration

PHONES = ("+14155556001", "+14155556002")


@pytest.mark.slow
def test_a_small_load_over_http_is_answered_stored_and_packaged_once() -> None:
    # 30 texts from 6 parties, 4 concurrent senders, one virtual hour in 6 s of wall time
    # (`make bench` runs 1,000 from 100).
    report = run_http_load(parties=6, messages=30, senders=4, speed=600.0, seed_value=3)
    assert report.messages == report.accepted == report.stored == 30
    assert report.connection_errors == report.refused == 0
    assert report.executions == {"SUCCEEDED": report.packages}
    # At least one package per party. How many more (bursts and pauses) depends on the machine:
    # at 600x a second of lag is ten virtual minutes, more than the idle window, so on a busy
    # machine a party's hour can be one package. The virtual-time tests count packages exactly
    # (tests/integration/test_pipeline.py, test_flush_triggers.py).
    assert report.packages >= 6
    assert (report.failed_open, report.lost, report.duplicated) == (0, 0, 0)
    assert report.order_violations == 0
    assert report.evidence > 0
    assert report.shame == 0
    # Then every WO it opened is carried to its outcome, with vendors answering by SMS.
    assert report.dispatch["wo_created"] > 0
    assert report.dispatch["vendor_replies"] > 0
    assert (report.wo_without_outcome, report.duplicate_offers) == (0, 0)
    assert report.ok


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _sent(stack: LocalStack) -> list[Text]:
    texts = [
        Text(float(k), k % 2, PHONES[k % 2], f"text {k}", twilio_sid("SM", f"read back {k}"))
        for k in range(6)
    ]
    for text in texts:
        event = signed_sms_event(stack.twilio_token, text.sid, text.phone, text.body)
        assert stack.http(event)["statusCode"] == 200
    stack.advance(stack.idle + 1)
    return texts


def _people() -> list[tuple[str, Any]]:
    return [(phone, None) for phone in PHONES]


def test_the_read_back_finds_nothing_wrong_with_a_clean_run(stack: LocalStack) -> None:
    texts = _sent(stack)
    read = read_back(stack, _people(), texts, {t.sid for t in texts})
    assert (read.stored, read.packages) == (6, 2)
    assert (read.lost, read.duplicated, read.order_violations, read.failed_open) == (0, 0, 0, 0)
    assert (read.evidence > 0, read.shame) == (True, 0)


def test_the_read_back_counts_from_the_stores_not_from_the_answers(stack: LocalStack) -> None:
    texts = _sent(stack)
    conversation = conversation_id_for(PHONES[0])
    table = stack.tables["conversations"]
    first = {"conversation_id": {"S": conversation}, "item": {"S": "msg#0000000001"}}
    buffered = stack.ddb.get_item(TableName=table, Key=first)["Item"]
    # A message buffered a second time, under a seq of its own.
    stack.ddb.put_item(TableName=table, Item={**buffered, "item": {"S": "msg#0000000009"}})
    # A stored message no package holds (never flushed).
    stack.ddb.put_item(
        TableName=stack.tables["messages"],
        Item={"message_id": {"S": "SMrbstray"}, "direction": {"S": "inbound"}},
    )
    # A claim that starts past where the one before it ended.
    stack.ddb.put_item(
        TableName=table,
        Item={
            "conversation_id": {"S": conversation},
            "item": {"S": "flush#00000002"},
            "flush_number": {"N": "2"},
            "after_seq": {"N": "5"},
            "through_seq": {"N": "6"},
        },
    )
    # A 200 whose message was never stored, and a party's texts sent in another order.
    answered = {t.sid for t in texts} | {"SMrbnever"}
    reordered = [texts[2], texts[0], *texts[1:2], *texts[3:]]
    read = read_back(stack, _people(), reordered, answered)
    assert read.lost == 2  # the stray one, the one never stored
    assert read.duplicated == 1
    assert read.claim_order_violations == 1
    assert read.message_order_violations == 1
    assert read.package_order_violations == 0


@pytest.mark.slow
def test_texts_from_unknown_numbers_cost_no_model_call_and_few_pages() -> None:
    """#17's acceptance, through `maestro serve` over HTTP with a model that counts its calls,
    at two fifths of its size (`make bench` runs the full 200 texts from 50 numbers, the
    ``unknown_senders`` key). It was a PM page per number and 450 model calls for the 200."""
    # At 150x a second of lag is 2.5 virtual minutes: the fold window (30) holds under load.
    report = run_unknown_senders_load(numbers=20, messages=80, senders=10, speed=150.0)
    assert report.numbers == 20
    assert report.messages == report.accepted == report.stored == 80
    assert report.executions == {"SUCCEEDED": report.packages}
    assert (report.failed_open, report.lost, report.duplicated, report.shame) == (0, 0, 0, 0)
    assert report.model_calls == 0
    assert report.pages <= 20 + 1
    # Which pages: each emergency number's first emergency, and the hour's one digest.
    assert report.emergency_numbers > 0
    assert report.emergency_pages == report.emergency_numbers
    assert report.digest_pages == 1
    assert report.other_pages == 0
    # Every emergency package escalated at once; each beyond a number's first folded into its
    # page (how many packages the repeats made depends on the clock's ticks, not the counts).
    assert report.emergencies == report.emergencies_escalated >= report.emergency_numbers
    assert report.folded == report.emergencies - report.emergency_numbers
    # What the unknown numbers got (docs/unknown-senders.md): the safety advice, once per
    # number per fold window, and nothing else.
    assert report.texts_to_unknown == report.emergency_numbers
    assert report.texts_to_unknown_not_advice == 0
    assert report.advice_repeats_within_fold == 0
    assert report.ok
