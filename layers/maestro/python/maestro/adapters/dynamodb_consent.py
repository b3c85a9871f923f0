""":class:`maestro.ports.messaging.ConsentStore` on the conversations table: item ``state`` under
the partition ``consent#<pseudonym>`` (no TTL: an opt-out lasts until the person opts back in).

The partition names a hash of the number, never the number, and the item holds no words: an
erase (docs/erase-and-retention.md) finds nothing of the person in it and keeps it, so a STOP
outlives the erasure of whoever sent it (a number re-imported later is still not texted).

Kept apart from the directory on purpose: an import rewrites the directory's rows and must never
undo a STOP (the directory's own ``sms_consent`` is read beside this, never overwritten by it).
Every write is conditional on the time of the change, so redeliveries and out-of-order arrivals
leave the latest change in place.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.ddb import DynamoDBClient, from_item, is_conditional_failure, to_value
from maestro.domain.consent import ConsentChange, ConsentState
from maestro.tables import CONVERSATIONS

__all__ = ["DynamoConsentStore", "consent_partition"]


def consent_partition(phone: str) -> str:
    # Salted apart from conversation ids (conv-<sha256(phone)>): an erase that redacts whatever
    # names the person's conversation must not take the opt-out for one of its items.
    return "consent#" + hashlib.sha256(f"consent:{phone}".encode()).hexdigest()[:32]


class DynamoConsentStore:
    def __init__(self, client: DynamoDBClient, conversations_table: str) -> None:
        self._ddb = client
        self._table = conversations_table

    def record(self, phone: str, change: ConsentChange, at: datetime) -> bool:
        values: dict[str, Any] = {
            ":out": to_value(change.opted_out),
            ":at": to_value(_ms(at)),
            ":iso": to_value(at.astimezone(UTC).isoformat()),
            ":source": to_value(change.source),
            ":detail": to_value(change.detail),
        }
        # The latest change wins (ties: the same change again, a redelivery).
        names = {"#source": "source"}
        if change.only_if_opted_out:
            condition = "opted_out = :true AND at_ms <= :at"
            values[":true"] = to_value(True)
        else:
            condition = "attribute_not_exists(#sk) OR at_ms <= :at"
            names["#sk"] = CONVERSATIONS.sort_name
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(phone),
                UpdateExpression="SET opted_out = :out, at_ms = :at, at_iso = :iso, "
                "#source = :source, detail = :detail",
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            return False
        return True

    def state(self, phone: str) -> ConsentState | None:
        item = self._ddb.get_item(
            TableName=self._table, Key=self._key(phone), ConsistentRead=True
        ).get("Item")
        if not item:
            return None
        data = from_item(item)
        return ConsentState(
            phone=phone,
            opted_out=bool(data["opted_out"]),
            at=datetime.fromisoformat(str(data["at_iso"])),
            source=data["source"],
            detail=str(data.get("detail", "")),
        )

    @staticmethod
    def _key(phone: str) -> dict[str, Any]:
        return {
            CONVERSATIONS.partition.name: to_value(consent_partition(phone)),
            CONVERSATIONS.sort_name: to_value("state"),
        }


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)
