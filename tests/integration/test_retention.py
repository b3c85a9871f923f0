"""Retention (#18, docs/erase-and-retention.md): each write of what a person wrote or was sent
carries its table's TTL attribute, from the per-table setting; 0 keeps it until erased."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from embedded import flush, sms

from maestro.tables import RETENTION_DAYS, TTL_ATTRIBUTE
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

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
