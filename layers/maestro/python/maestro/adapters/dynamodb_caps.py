"""Account-wide daily caps on DynamoDB: counters per UTC day on the conversations table, sharded.

Every charge of every send and model call in the account writes these counters, so one partition
would take them all: at 100 packages/s about 1,140 write units a second (``make bench``'s
``scale``), past DynamoDB's 1,000 a partition. They are spread over ``shards`` partitions
``caps#account#<n>`` (item ``day#<YYYY-MM-DD>``, one attribute per cap: ``pages``, ``texts``,
and ``model_calls``, which the model budget adds to in its own transaction). Each shard holds
its share of a cap's limit (the shares sum to the limit exactly), so the account never counts
past it: a charge tries its home shard first and the next one when that is full, and is refused
only when every shard is full. :meth:`DynamoDailyCaps.used` sums the shards.

A send is charged with a transaction of two writes: a marker ``charge#<day>#<cap>#<key>`` in the
shard of a stable hash of ``key`` (create-once, so a re-run of the same send finds it and counts
nothing more, whichever shard counted it) and the counter's ``ADD``, conditional on the shard's
count being under its share (unless forced). Both expire by the table's TTL.

The shard count is the same for every writer (the default, :data:`ACCOUNT_SHARDS`): raise it,
never lower it on a day in use (a dropped shard's count goes unseen that day).

Reaching a cap counts :data:`maestro.observability.DAILY_CAP_METRIC`, the metric the
``daily-cap`` alarm watches, for each refusal and each forced send past the cap (so the alarm
sees it either way), and the same metric with a ``cap`` dimension, saying which.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from pydantic import Field

from maestro.adapters.ddb import DynamoDBClient, cancellation_codes, from_item, to_value
from maestro.domain.common import Frozen
from maestro.observability import DAILY_CAP_METRIC, count
from maestro.ports.limits import CapName
from maestro.tables import CONVERSATIONS

__all__ = [
    "ACCOUNT_PARTITION",
    "ACCOUNT_SHARDS",
    "DailyCapLimits",
    "DynamoDailyCaps",
    "account_day_item",
    "account_shard",
    "cap_reached",
    "charge_shards",
    "first_with_room",
    "shard_share",
    "transact",
]

ACCOUNT_PARTITION = "caps#account"
ACCOUNT_SHARDS = 4
"""Partitions the account's counters spread over by default: at 100 packages/s (about 11.4 write
units a package on them) about 285 write units a second each, under a third of a partition's
limit."""
_TTL = CONVERSATIONS.ttl_attribute or "expires_at_epoch"
_KEEP = timedelta(days=3)
_CONFLICT_ATTEMPTS = 5
_REFUSED = "ConditionalCheckFailed"


class DailyCapLimits(Frozen):
    """How many of each the whole account may send per UTC day, and over how many partitions
    the counts spread."""

    pages: int = Field(default=100, ge=1)
    texts: int = Field(default=2000, ge=1)
    model_calls: int = Field(default=5000, ge=1)
    shards: int = Field(default=ACCOUNT_SHARDS, ge=1, le=64)

    def of(self, cap: CapName) -> int:
        limit: int = getattr(self, cap)
        return limit


def account_day_item(at: datetime, shard: int) -> dict[str, Any]:
    """The key of shard ``shard``'s counter item for ``at``'s UTC day (wire form)."""
    return {
        CONVERSATIONS.partition.name: to_value(f"{ACCOUNT_PARTITION}#{shard}"),
        CONVERSATIONS.sort_name: to_value(f"day#{_day(at)}"),
    }


def account_shard(key: str, shards: int) -> int:
    """``key``'s home shard: a stable hash (not Python's, which is salted)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % shards


def shard_share(limit: int, shards: int, shard: int) -> int:
    """Shard ``shard``'s share of ``limit``: the shares differ by at most one and sum to it."""
    return limit // shards + (1 if shard < limit % shards else 0)


def charge_shards(limit: int, shards: int, home: int) -> Iterator[tuple[int, int]]:
    """The shards a charge tries, with their shares: ``home`` first, then the next ones around;
    a shard whose share is 0 (a limit under the shard count) is never tried."""
    for step in range(shards):
        shard = (home + step) % shards
        share = shard_share(limit, shards, shard)
        if share > 0:
            yield shard, share


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
    item (a shard's counter is shared by many sends) is retried, briefly, with jitter."""
    attempt = 0
    while True:
        try:
            client.transact_write_items(TransactItems=items)
        except ClientError as error:
            codes = cancellation_codes(error)
            if _REFUSED in codes:
                return codes
            attempt += 1
            if not codes or attempt >= _CONFLICT_ATTEMPTS:
                raise
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # a conflict: jittered, brief
            continue
        return []


def first_with_room(
    limit: int, shards: int, home: int, attempt: Callable[[int, int], list[str]]
) -> list[str] | None:
    """Try ``attempt(shard, share)`` on each shard in turn (:func:`charge_shards`) while only
    its counter (the transaction's first item) refuses it: the codes of the first attempt that
    went through, or that another item's condition refused (final, whatever the shard). None
    when every shard's counter refused: the account's cap is reached."""
    for shard, share in charge_shards(limit, shards, home):
        codes = attempt(shard, share)
        if not codes or codes[0] != _REFUSED or _REFUSED in codes[1:]:
            return codes
    return None


class DynamoDailyCaps:
    """:class:`maestro.ports.limits.DailyCaps`."""

    def __init__(
        self, client: DynamoDBClient, conversations_table: str, limits: DailyCapLimits
    ) -> None:
        self._ddb = client
        self._table = conversations_table
        self.limits = limits

    def charge(self, cap: CapName, key: str, at: datetime, *, force: bool = False) -> bool:
        shards = self.limits.shards
        home = account_shard(key, shards)
        marker = self._marker(cap, key, at, home)
        codes = first_with_room(
            self.limits.of(cap),
            shards,
            home,
            lambda shard, share: transact(
                self._ddb, [{"Update": self._counter(cap, at, shard, share)}, {"Put": marker}]
            ),
        )
        # Counted now, or by an earlier charge of the same send (a re-run: its marker refused
        # the transaction, whatever the counter said): its first answer.
        if codes is not None:
            return True
        cap_reached(cap)
        if not force:
            return False
        transact(self._ddb, [{"Update": self._counter(cap, at, home, None)}, {"Put": marker}])
        return True

    def used(self, cap: CapName, at: datetime) -> int:
        """How many ``cap`` has counted on ``at``'s UTC day: the sum of its shards."""
        keys = [account_day_item(at, shard) for shard in range(self.limits.shards)]
        found = self._ddb.batch_get_item(
            RequestItems={self._table: {"Keys": keys, "ConsistentRead": True}}
        )
        # A handful of small items: never left unprocessed but under throttling.
        while found.get("UnprocessedKeys"):
            more = self._ddb.batch_get_item(RequestItems=found["UnprocessedKeys"])
            more["Responses"].setdefault(self._table, []).extend(
                found["Responses"].get(self._table, [])
            )
            found = more
        items = found["Responses"].get(self._table, [])
        return sum(int(from_item(item).get(cap, 0)) for item in items)

    def _counter(self, cap: CapName, at: datetime, shard: int, share: int | None) -> dict[str, Any]:
        """The counter's ``ADD`` on ``shard``: conditional on its ``share`` (None: forced)."""
        counter: dict[str, Any] = {
            "TableName": self._table,
            "Key": account_day_item(at, shard),
            "UpdateExpression": "ADD #cap :one SET #ttl = :ttl",
            "ExpressionAttributeNames": {"#cap": cap, "#ttl": _TTL},
            "ExpressionAttributeValues": {":one": to_value(1), ":ttl": _expires(at)},
        }
        if share is not None:
            counter["ConditionExpression"] = "attribute_not_exists(#cap) OR #cap < :limit"
            counter["ExpressionAttributeValues"][":limit"] = to_value(share)
        return counter

    def _marker(self, cap: CapName, key: str, at: datetime, home: int) -> dict[str, Any]:
        return {
            "TableName": self._table,
            "Item": {
                CONVERSATIONS.partition.name: to_value(f"{ACCOUNT_PARTITION}#{home}"),
                CONVERSATIONS.sort_name: to_value(f"charge#{_day(at)}#{cap}#{key}"),
                _TTL: _expires(at),
            },
            "ConditionExpression": "attribute_not_exists(#sk)",
            "ExpressionAttributeNames": {"#sk": CONVERSATIONS.sort_name},
        }


def _expires(at: datetime) -> dict[str, Any]:
    return to_value(int((at + _KEEP).timestamp()))
