"""The recording messenger: outbound messages are written to the messages table, none is sent.

It answers when no Twilio account is configured (``maestro.adapters.messaging``). It is named
for what it does, so nobody mistakes a recorded message for a delivered one: its SIDs start
with "SMrec", its status is "recorded", and the watcher reads it back from the messages table
(``ddb-read``), never as if Twilio had it.
"""

from __future__ import annotations

from typing import Literal

from botocore.exceptions import ClientError

from maestro.adapters.ddb import (
    DynamoDBClient,
    from_item,
    is_conditional_failure,
    scan_all,
    to_item,
    to_value,
)
from maestro.ports.evidence import MessageRead
from maestro.ports.messaging import SentMessage, recorded_sid
from maestro.ports.platform import Clock
from maestro.tables import MESSAGES, RETENTION_DAYS, TTL_ATTRIBUTE, expires_at_epoch


class DynamoRecordingMessenger:
    """:class:`maestro.ports.messaging.Messenger` that records instead of sending (idempotent by
    key). A record holds a body and a number, so it expires with the messages (from when it was
    recorded; ``retention_days`` 0: kept until erased), as a sent one does."""

    def __init__(
        self,
        client: DynamoDBClient,
        messages_table: str,
        clock: Clock,
        *,
        retention_days: int = RETENTION_DAYS["messages"],
    ) -> None:
        self._ddb = client
        self._table = messages_table
        self._clock = clock
        self._retention_days = retention_days

    def send(self, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        message = SentMessage(
            sid=recorded_sid(idempotency_key), to=to, body=body, status="recorded"
        )
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item=to_item(
                    {
                        MESSAGES.partition.name: message.sid,
                        "direction": "outbound",
                        "to": to,
                        "body": body,
                        "status": "recorded",
                        "idempotency_key": idempotency_key,
                        TTL_ATTRIBUTE: expires_at_epoch(self._clock.now(), self._retention_days),
                    }
                ),
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": MESSAGES.partition.name},
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            stored = self._ddb.get_item(
                TableName=self._table,
                Key={MESSAGES.partition.name: to_value(message.sid)},
                ConsistentRead=True,
            )["Item"]
            data = from_item(stored)
            return SentMessage(
                sid=message.sid,
                to=data["to"],
                body=data["body"],
                status=data.get("status", "recorded"),
            )
        return message

    def outbox(self) -> list[SentMessage]:
        """Every recorded message (for the local demo and tests)."""
        items = scan_all(self._ddb, TableName=self._table, ConsistentRead=True)
        out = []
        for item in items:
            data = from_item(item)
            if data.get("direction") == "outbound" and data.get("status") == "recorded":
                out.append(
                    SentMessage(
                        sid=data[MESSAGES.partition.name],
                        to=data["to"],
                        body=data["body"],
                        status="recorded",
                    )
                )
        return out


class RecordedMessageReader:
    """:class:`maestro.ports.evidence.MessageReader` for the recording messenger: its only surface
    is the messages table (``ddb-read``). A recorded message was never sent, and the read says
    so."""

    provenance: Literal["twilio-read", "ddb-read"] = "ddb-read"
    surface = "the messages table (recording messenger: nothing is sent)"

    def __init__(self, client: DynamoDBClient, messages_table: str) -> None:
        self._ddb = client
        self._table = messages_table

    def read(self, sid: str) -> MessageRead | None:
        item = self._ddb.get_item(
            TableName=self._table,
            Key={MESSAGES.partition.name: to_value(sid)},
            ConsistentRead=True,
        ).get("Item")
        if not item:
            return None
        data = from_item(item)
        if data.get("direction") != "outbound" or "to" not in data:
            return None
        return MessageRead(
            sid=sid,
            to=str(data["to"]),
            body=str(data.get("body", "")),
            status=str(data.get("status", "recorded")),
            provenance="ddb-read",
            surface=f"messages table item {sid} (recording messenger: recorded, not sent)",
        )
