"""Retention (#18, docs/erase-and-retention.md): each write of what a person wrote or was sent
carries its table's TTL attribute, from the per-table setting; 0 keeps it until erased."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from builders import T0
from embedded import flush, sms

from maestro.adapters.messaging import messenger_for
from maestro.settings import PIPELINE_TABLES, PipelineSettings
from maestro.tables import RETENTION_DAYS, TTL_ATTRIBUTE
from maestro_dev.local.clock import VirtualClock
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

if TYPE_CHECKING:
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

TEXT = "the extractor fan over the hob stopped working after the power cut"


def _items(stack: LocalStack, table: str) -> list[dict[str, Any]]:
    return list(stack.ddb.scan(TableName=stack.tables[table])["Items"])


def _expiry(item: dict[str, Any]) -> int | None:
    value = item.get(TTL_ATTRIBUTE)
    return int(value["N"]) if value else None


def _epoch(at: datetime, days: int) -> int:
    return int((at + timedelta(days=days)).timestamp())


def test_each_table_expires_what_people_wrote_after_its_setting() -> None:
    settings = {"messages_retention_days": 7, "decisions_retention_days": 0}
    with LocalStack(settings=settings) as stack:
        seed(stack)
        sent_at = stack.clock.now()
        sms(stack, TEXT)
        flush(stack)
        stack.wait_for_executions()
        stack.settle()

        messages = _items(stack, "messages")
        inbound = [m for m in messages if m["direction"]["S"] == "inbound"]
        outbound = [m for m in messages if m["direction"]["S"] == "outbound"]
        buffered = [c for c in _items(stack, "conversations") if c["item"]["S"].startswith("msg#")]
        assert inbound, "the text was stored"
        assert outbound, "a reply was sent"
        assert buffered, "and buffered"
        # What she wrote, both copies, from when it came: 7 days.
        for item in inbound + buffered:
            assert _expiry(item) == _epoch(sent_at, 7)
        # What she was sent, from when it was sent (after the idle window): 7 days.
        for item in outbound:
            expiry = _expiry(item)
            assert expiry is not None
            assert _epoch(sent_at, 7) < expiry <= _epoch(stack.clock.now(), 7)
        # The decision log is kept (0): no attribute on any of its rows.
        decisions = _items(stack, "decisions")
        assert decisions
        assert [d for d in decisions if TTL_ATTRIBUTE in d] == []
        # The ledger keeps its default, from when each claim was checked.
        ledger = _items(stack, "ledger")
        assert ledger
        for row in ledger:
            checked = datetime.fromisoformat(row["checked_at"]["S"])
            assert _expiry(row) == _epoch(checked, RETENTION_DAYS["ledger"])


def test_by_default_the_decision_log_outlives_the_messages() -> None:
    with LocalStack() as stack:
        seed(stack)
        sent_at = stack.clock.now()
        sms(stack, TEXT)
        flush(stack)
        stack.wait_for_executions()
        inbound = [m for m in _items(stack, "messages") if m["direction"]["S"] == "inbound"]
        decisions = _items(stack, "decisions")
    assert [_expiry(m) for m in inbound] == [_epoch(sent_at, RETENTION_DAYS["messages"])]
    assert decisions
    for row in decisions:
        expiry = _expiry(row)
        assert expiry is not None
        assert expiry >= _epoch(sent_at, RETENTION_DAYS["decisions"])


@pytest.mark.parametrize("days", [45, 0])
def test_the_recording_messengers_records_expire_with_the_messages(aws: AwsEnv, days: int) -> None:
    """No Twilio account: what would have been texted (a number, a body) is recorded in the
    messages table, and kept exactly as long as a sent one (0: until erased)."""
    settings = PipelineSettings.model_validate(
        {
            **{f"{t}_table": aws.table_names[t] for t in PIPELINE_TABLES},
            "event_bus_name": "bus",
            "messages_retention_days": days,
        }
    )
    assert settings.messenger == "recording"
    clock = VirtualClock(T0)
    messenger = messenger_for(
        settings,
        aws.dynamodb,
        clock,
        messages_table=aws.table_names["messages"],
        sends_table=aws.table_names["sends"],
        conversations_table=aws.table_names["conversations"],
    )
    clock.advance(3600)
    sent = messenger.send("+12065550173", "The plumber comes Thursday 9-11.", idempotency_key="k1")
    item = aws.dynamodb.get_item(
        TableName=aws.table_names["messages"], Key={"message_id": {"S": sent.sid}}
    )["Item"]
    assert item["status"]["S"] == "recorded"
    assert _expiry(item) == (_epoch(clock.now(), days) if days else None)
