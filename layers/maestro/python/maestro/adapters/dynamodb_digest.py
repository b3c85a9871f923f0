"""The hourly digest on DynamoDB (:class:`maestro.ports.messaging.Digest`), on the conversations
table.

One partition per UTC hour, ``digest#<YYYY-MM-DDTHH>``:
- ``line#<subject>``: one line per subject (an unknown number) per hour: the first entry's
  kind, who, excerpt and time, the last time, and the set of ``<package id>:<messages>`` that
  added to it (a set, so a re-run of the same package adds nothing; bounded, past which the line
  stops counting);
- ``closed``: written when the digest step takes the hour (then ``page_sid`` once its page went).

An entry is added in one transaction with a check that the hour is not closed, so a line either
lands before the digest step reads the hour (and is in its page) or goes to the next hour: none
is lost between the two. Everything expires by the table's TTL after a week.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.ddb import (
    DynamoDBClient,
    from_item,
    is_conditional_failure,
    query_all,
    to_value,
)
from maestro.adapters.dynamodb_caps import transact
from maestro.domain.digest import DigestEntry, DigestLine, hour_of
from maestro.tables import CONVERSATIONS

__all__ = ["MAX_PACKAGES_PER_LINE", "DynamoDigest"]

MAX_PACKAGES_PER_LINE = 200
"""A line counts at most this many packages (an item stays small whatever a number sends)."""
_TTL = CONVERSATIONS.ttl_attribute or "expires_at_epoch"
_KEEP = timedelta(days=7)
_HOURS_AHEAD = 3
_PK = CONVERSATIONS.partition.name
_SK = CONVERSATIONS.sort_name


def _partition(hour: datetime) -> str:
    return f"digest#{hour.astimezone(UTC):%Y-%m-%dT%H}"


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class DynamoDigest:
    def __init__(self, client: DynamoDBClient, conversations_table: str) -> None:
        self._ddb = client
        self._table = conversations_table

    def _key(self, hour: datetime, item: str) -> dict[str, Any]:
        return {_PK: to_value(_partition(hour)), _SK: to_value(item)}

    def add(self, entry: DigestEntry) -> datetime:
        hour = hour_of(entry.at)
        member = f"{entry.package_id}:{entry.messages}"
        for _ in range(_HOURS_AHEAD):
            expires = to_value(int((hour + _KEEP).timestamp()))
            codes = transact(
                self._ddb,
                [
                    {
                        "ConditionCheck": {
                            "TableName": self._table,
                            "Key": self._key(hour, "closed"),
                            "ConditionExpression": "attribute_not_exists(#sk)",
                            "ExpressionAttributeNames": {"#sk": _SK},
                        }
                    },
                    {
                        "Update": {
                            "TableName": self._table,
                            "Key": self._key(hour, f"line#{entry.subject}"),
                            "UpdateExpression": "SET kind = if_not_exists(kind, :kind), "
                            "who = if_not_exists(who, :who), "
                            "excerpt = if_not_exists(excerpt, :excerpt), "
                            "why = if_not_exists(why, :why), "
                            "first_ms = if_not_exists(first_ms, :at), last_ms = :at, "
                            "#ttl = :ttl ADD packages :member",
                            "ConditionExpression": "attribute_not_exists(packages) OR "
                            "size(packages) < :most OR contains(packages, :one)",
                            "ExpressionAttributeNames": {"#ttl": _TTL},
                            "ExpressionAttributeValues": {
                                ":kind": to_value(entry.kind),
                                ":who": to_value(entry.who),
                                ":excerpt": to_value(entry.excerpt),
                                ":why": to_value(entry.why),
                                ":at": to_value(_ms(entry.at)),
                                ":ttl": expires,
                                ":member": {"SS": [member]},
                                ":one": to_value(member),
                                ":most": to_value(MAX_PACKAGES_PER_LINE),
                            },
                        }
                    },
                ],
            )
            if not codes or codes[0] != "ConditionalCheckFailed":
                return hour  # added, or the line is full (it says so by its count)
            hour += timedelta(hours=1)  # that hour's digest is closed: the next one
        raise RuntimeError(f"{entry.subject}: {_HOURS_AHEAD} digest hours in a row were closed")

    def due(self, now: datetime, lookback_hours: int) -> list[datetime]:
        current = hour_of(now)
        found = []
        for back in range(lookback_hours, 0, -1):
            hour = current - timedelta(hours=back)
            closed = self._closed(hour)
            if closed is not None and "page_sid" in closed:
                continue
            lines = self._ddb.query(
                TableName=self._table,
                KeyConditionExpression="#pk = :pk AND begins_with(#sk, :line)",
                ExpressionAttributeNames={"#pk": _PK, "#sk": _SK},
                ExpressionAttributeValues={
                    ":pk": to_value(_partition(hour)),
                    ":line": to_value("line#"),
                },
                ConsistentRead=True,
                Limit=1,
            )
            if lines.get("Items"):
                found.append(hour)
        return found

    def close(self, hour: datetime, at: datetime) -> list[DigestLine]:
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item={
                    **self._key(hour, "closed"),
                    "closed_ms": to_value(_ms(at)),
                    _TTL: to_value(int((hour + _KEEP).timestamp())),
                },
                ConditionExpression="attribute_not_exists(#sk)",
                ExpressionAttributeNames={"#sk": _SK},
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            # Closed already (a retried run): its lines are read as they are.
        items = query_all(
            self._ddb,
            TableName=self._table,
            KeyConditionExpression="#pk = :pk AND begins_with(#sk, :line)",
            ExpressionAttributeNames={"#pk": _PK, "#sk": _SK},
            ExpressionAttributeValues={
                ":pk": to_value(_partition(hour)),
                ":line": to_value("line#"),
            },
            ConsistentRead=True,
        )
        return [_line(from_item(item)) for item in items]

    def record_sent(self, hour: datetime, sid: str, at: datetime) -> None:
        self._ddb.update_item(
            TableName=self._table,
            Key=self._key(hour, "closed"),
            UpdateExpression="SET page_sid = :sid, sent_ms = :at",
            ExpressionAttributeValues={":sid": to_value(sid), ":at": to_value(_ms(at))},
        )

    def _closed(self, hour: datetime) -> dict[str, Any] | None:
        item = self._ddb.get_item(
            TableName=self._table, Key=self._key(hour, "closed"), ConsistentRead=True
        ).get("Item")
        return from_item(item) if item else None


def _line(item: dict[str, Any]) -> DigestLine:
    members = [str(m) for m in item.get("packages", [])]
    return DigestLine(
        subject=str(item[_SK]).removeprefix("line#"),
        kind=item["kind"],
        who=str(item.get("who", "")),
        excerpt=str(item.get("excerpt", "")),
        why=str(item.get("why", "")),
        first_at=_at(int(item["first_ms"])),
        last_at=_at(int(item["last_ms"])),
        packages=max(1, len(members)),
        messages=max(1, sum(int(m.rsplit(":", 1)[1]) for m in members)),
    )
