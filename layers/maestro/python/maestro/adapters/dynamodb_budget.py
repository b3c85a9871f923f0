"""Model budgets on DynamoDB: atomic counters on the conversations table.

Three items per charge, updated in one transaction so a call is counted everywhere or nowhere:
the account's daily counter (``model_calls`` on a shard of :mod:`maestro.adapters.dynamodb_caps`'
items, the account-wide cap: a shard picked at random, the next one when it holds its share),
``budget#package#<id>`` (this package's calls and tokens) and ``budget#day#<date>`` (the
conversation's, per UTC day). Each reserve adds one call only while every count is under its cap
(its own shard's share, for the account's); tokens are added after the call. All expire by the
table's TTL.
The account-wide cap refusing counts ``DailyCapReached`` (``cap=model_calls``).

The bounded judgments (re-validation, answer-or-new-topic, break-in) have an allowance of their
own, ``budget#judge#<date>`` (the conversation's, per UTC day): a judgment's samples are taken
from it at once, before the first is drawn, so a judgment runs whole or takes its default. A new
day, or another conversation, starts a fresh count; a warm container's age does not matter.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from pydantic import Field

from maestro.adapters.ddb import DynamoDBClient, is_conditional_failure, to_value
from maestro.adapters.dynamodb_caps import (
    ACCOUNT_SHARDS,
    account_day_item,
    cap_reached,
    first_with_room,
    transact,
)
from maestro.domain.common import Frozen
from maestro.observability import count
from maestro.ports.limits import BudgetScope
from maestro.tables import CONVERSATIONS

__all__ = ["BudgetCaps", "DynamoModelBudget"]

_TTL = CONVERSATIONS.ttl_attribute or "expires_at_epoch"


class BudgetCaps(Frozen):
    """How much one package and one conversation-day may spend on models."""

    package_calls: int = Field(default=16, ge=1)
    package_tokens: int = Field(default=120_000, ge=1)
    day_calls: int = Field(default=150, ge=1)
    day_tokens: int = Field(default=900_000, ge=1)
    account_day_calls: int = Field(default=5000, ge=1, description="The whole account's, per day")
    account_shards: int = Field(
        default=ACCOUNT_SHARDS, ge=1, le=64, description="Partitions of the account's counters"
    )
    judgment_day_calls: int = Field(
        default=30, ge=1, description="A conversation's calls for bounded judgments, per UTC day"
    )


class DynamoModelBudget:
    """:class:`maestro.ports.limits.ModelBudget`."""

    def __init__(
        self, client: DynamoDBClient, conversations_table: str, caps: BudgetCaps | None = None
    ) -> None:
        self._ddb = client
        self._table = conversations_table
        self.caps = caps or BudgetCaps()

    def _items(self, scope: BudgetScope, at: datetime) -> list[tuple[str, int, int, datetime]]:
        items = [(f"budget#day#{at:%Y-%m-%d}", self.caps.day_calls, self.caps.day_tokens,
                  at + timedelta(days=2))]  # fmt: skip
        if scope.package_id is not None:
            items.append(
                (
                    f"budget#package#{scope.package_id}",
                    self.caps.package_calls,
                    self.caps.package_tokens,
                    at + timedelta(days=7),
                )
            )
        return items

    def _key(self, scope: BudgetScope, item: str) -> dict[str, Any]:
        return {
            CONVERSATIONS.partition.name: to_value(scope.conversation_id),
            CONVERSATIONS.sort_name: to_value(item),
        }

    def reserve(self, scope: BudgetScope, at: datetime) -> bool:
        own = self._own_updates(scope, at)
        shards = self.caps.account_shards
        codes = first_with_room(
            self.caps.account_day_calls,
            shards,
            random.randrange(shards),  # no key to hash: any shard, spread evenly
            lambda shard, share: transact(self._ddb, [self._account(at, shard, share), *own]),
        )
        if codes is None:
            cap_reached("model_calls")
        return codes == []

    def _account(self, at: datetime, shard: int, share: int) -> Any:
        """The account's ``model_calls`` on ``shard``, conditional on the shard's ``share``."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": account_day_item(at, shard),
                "UpdateExpression": "ADD model_calls :one SET #ttl = :ttl",
                "ConditionExpression": "attribute_not_exists(model_calls) OR model_calls < :cap",
                "ExpressionAttributeNames": {"#ttl": _TTL},
                "ExpressionAttributeValues": {
                    ":one": to_value(1),
                    ":cap": to_value(share),
                    ":ttl": to_value(int((at + timedelta(days=3)).timestamp())),
                },
            }
        }

    def _own_updates(self, scope: BudgetScope, at: datetime) -> list[Any]:
        """The conversation's day and the package's counts, each conditional on its caps."""
        return [
            {
                "Update": {
                    "TableName": self._table,
                    "Key": self._key(scope, item),
                    "UpdateExpression": "ADD calls :one SET #ttl = :ttl",
                    "ConditionExpression": "(attribute_not_exists(calls) OR calls < :calls) AND "
                    "(attribute_not_exists(tokens) OR tokens < :tokens)",
                    "ExpressionAttributeNames": {"#ttl": _TTL},
                    "ExpressionAttributeValues": {
                        ":one": to_value(1),
                        ":calls": to_value(max_calls),
                        ":tokens": to_value(max_tokens),
                        ":ttl": to_value(int(expires.timestamp())),
                    },
                }
            }
            for item, max_calls, max_tokens, expires in self._items(scope, at)
        ]

    def reserve_judgments(self, scope: BudgetScope, at: datetime, calls: int) -> bool:
        if calls < 1:
            return True
        if calls > self.caps.judgment_day_calls:
            return False
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(scope, f"budget#judge#{at.astimezone(UTC):%Y-%m-%d}"),
                UpdateExpression="ADD calls :n SET #ttl = :ttl",
                # Room for all of them, or none is taken.
                ConditionExpression="attribute_not_exists(calls) OR calls <= :room",
                ExpressionAttributeNames={"#ttl": _TTL},
                ExpressionAttributeValues={
                    ":n": to_value(calls),
                    ":room": to_value(self.caps.judgment_day_calls - calls),
                    ":ttl": to_value(int((at + timedelta(days=2)).timestamp())),
                },
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            count("JudgmentBudgetSpent")
            return False
        return True

    def record_tokens(self, scope: BudgetScope, at: datetime, tokens: int) -> None:
        if tokens <= 0:
            return
        for item, *_ in self._items(scope, at):
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(scope, item),
                UpdateExpression="ADD tokens :t",
                ExpressionAttributeValues={":t": to_value(tokens)},
            )
