"""Account-wide daily caps on DynamoDB: one counter item per UTC day on the conversations table.

Partition ``caps#account``, item ``day#<YYYY-MM-DD>``: one attribute per cap (``pages``,
``texts``, and ``model_calls``, which the model budget adds to in its own transaction). A send
is charged with a transaction of two writes: a marker ``charge#<day>#<cap>#<key>`` (create-once,
so a re-run of the same send counts nothing more) and the counter's ``ADD``, conditional on the
count being under the cap (unless forced). Both expire by the table's TTL.

Reaching a cap counts :data:`maestro.observability.DAILY_CAP_METRIC`, the metric the
``daily-cap`` alarm watches, for each refusal and each forced send past the cap (so the alarm
sees it either way), and the same metric with a ``cap`` dimension, saying which.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from pydantic import Field

from maestro.adapters.ddb import DynamoDBClient, cancellation_codes, from_item, to_value
from maestro.domain.common import Frozen
from maestro.observability import DAILY_CAP_METRIC, count
from maestro.ports import CapName
from maestro.tables import CONVERSATIONS

__all__ = [
    "ACCOUNT_PARTITION",
    "DailyCapLimits",
    "DynamoDailyCaps",
    "account_day_item",
    "cap_reached",
    "transact",
]

ACCOUNT_PARTITION = "caps#account"
_TTL = CONVERSATIONS.ttl_attribute or "expires_at_epoch"
_KEEP = timedelta(days=3)
_CONFLICT_ATTEMPTS = 5


class DailyCapLimits(Frozen):
    """How many of each the whole account may send per UTC day."""

    pages: int = Field(default=100, ge=1)
    texts: int = Field(default=2000, ge=1)
    model_calls: int = Field(default=5000, ge=1)

    def of(self, cap: CapName) -> int:
        limit: int = getattr(self, cap)
        return limit


def account_day_item(at: datetime) -> dict[str, Any]:
    """The key of the account's counter item for ``at``'s UTC day (wire form)."""
    return {
        CONVERSATIONS.partition.name: to_value(ACCOUNT_PARTITION),
        CONVERSATIONS.sort_name: to_value(f"day#{_day(at)}"),
    }


def cap_reached(cap: CapName) -> None:
    """Count one :data:`DAILY_CAP_METRIC`: the alarm's (no dimension of its own), and which
    cap (its ``cap`` dimension: another metric to CloudWatch, so the alarm's sum is exact)."""
    count(DAILY_CAP_METRIC)
    count(DAILY_CAP_METRIC, 1, cap=cap)


def _day(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d")


def transact(client: DynamoDBClient, items: list[Any]) -> list[str]:
    """Write ``items`` in one transaction; the per-item cancellation codes when a condition
    refused it ([] when it went through). A conflict with a concurrent transaction on the same
    item (the account's counter is shared by every send) is retried, briefly, with jitter."""
    attempt = 0
    while True:
        try:
            client.transact_write_items(TransactItems=items)
        except ClientError as error:
            codes = cancellation_codes(error)
            if "ConditionalCheckFailed" in codes:
                return codes
            attempt += 1
            if not codes or attempt >= _CONFLICT_ATTEMPTS:
                raise
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # a conflict: jittered, brief
            continue
        return []


class DynamoDailyCaps:
    """:class:`maestro.ports.DailyCaps`."""

    def __init__(
        self, client: DynamoDBClient, conversations_table: str, limits: DailyCapLimits
    ) -> None:
        self._ddb = client
        self._table = conversations_table
        self.limits = limits

    def charge(self, cap: CapName, key: str, at: datetime, *, force: bool = False) -> bool:
        if self._charge(cap, key, at, conditional=True):
            return True
        cap_reached(cap)
        if not force:
            return False
        self._charge(cap, key, at, conditional=False)
        return True

    def used(self, cap: CapName, at: datetime) -> int:
        """How many ``cap`` has counted on ``at``'s UTC day."""
        item = self._ddb.get_item(
            TableName=self._table, Key=account_day_item(at), ConsistentRead=True
        ).get("Item")
        return int(from_item(item).get(cap, 0)) if item else 0

    def _charge(self, cap: CapName, key: str, at: datetime, *, conditional: bool) -> bool:
        """True when counted now or by an earlier charge of ``key``; False when the cap
        refused it (only when ``conditional``)."""
        expires = to_value(int((at + _KEEP).timestamp()))
        counter: dict[str, Any] = {
            "TableName": self._table,
            "Key": account_day_item(at),
            "UpdateExpression": "ADD #cap :one SET #ttl = :ttl",
            "ExpressionAttributeNames": {"#cap": cap, "#ttl": _TTL},
            "ExpressionAttributeValues": {":one": to_value(1), ":ttl": expires},
        }
        if conditional:
            counter["ConditionExpression"] = "attribute_not_exists(#cap) OR #cap < :limit"
            counter["ExpressionAttributeValues"][":limit"] = to_value(self.limits.of(cap))
        marker = {
            "TableName": self._table,
            "Item": {
                CONVERSATIONS.partition.name: to_value(ACCOUNT_PARTITION),
                CONVERSATIONS.sort_name: to_value(f"charge#{_day(at)}#{cap}#{key}"),
                _TTL: expires,
            },
            "ConditionExpression": "attribute_not_exists(#sk)",
            "ExpressionAttributeNames": {"#sk": CONVERSATIONS.sort_name},
        }
        codes = transact(self._ddb, [{"Put": marker}, {"Update": counter}])
        # Counted now, or by an earlier charge of the same send (a re-run): its first answer.
        return not codes or codes[0] == "ConditionalCheckFailed"
