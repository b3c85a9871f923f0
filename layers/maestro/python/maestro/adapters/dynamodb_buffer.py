"""The conversation buffer on DynamoDB: messages, per-conversation counters, flush claims, lease.

Two tables (specs in :mod:`maestro.tables`):
- ``messages``: one item per provider message id. Its conditional put is the dedupe.
- ``conversations``: per conversation, ``meta`` (counters), ``msg#<seq>`` (the buffered copy, so a
  flush reads its messages with a *consistent* query, never an eventually consistent index),
  ``flush#<n>`` (claims) and ``lease``.

Storing a message and giving it its seq is one transaction, so seqs have no gaps and a flush that
claims "everything up to seq n" can never miss a message still being written.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.ddb import (
    DynamoDBClient,
    cancellation_codes,
    from_item,
    is_conditional_failure,
    item_that_failed_the_condition,
    query_all,
    to_item,
    to_value,
)
from maestro.adapters.twilio_status import status_rank
from maestro.domain.models import FlushTrigger, Message, PreCheckResult, package_id_for
from maestro.ports.conversations import (
    AppendResult,
    ConversationMeta,
    DeliveryStatus,
    FlushClaim,
    InboundDraft,
    StatusRecorded,
)
from maestro.ports.limits import PageWindow
from maestro.tables import (
    CONVERSATIONS,
    MESSAGES,
    RETENTION_DAYS,
    TTL_ATTRIBUTE,
    expires_at_epoch,
)

CONVERSATIONS_TTL = CONVERSATIONS.ttl_attribute or "expires_at_epoch"

META = "meta"
LEASE = "lease"
RECENT_CLAIMS = 20
_EXPIRES = "expires_ms"  # epoch milliseconds: numbers compare exactly, ISO strings may not
_LEASE_NAMES = {
    "#holder": "holder",
    "#holder_flush": "holder_flush",
    "#expires": _EXPIRES,
    "#next": "next_flush",
}


def _msg_key(seq: int) -> str:
    return f"msg#{seq:010d}"


def _flush_key(number: int) -> str:
    return f"flush#{number:08d}"


_UNFLUSHED = next(i for i in CONVERSATIONS.indexes if i.name == "unflushed_by_day")
assert _UNFLUSHED.sort is not None
_UNFLUSHED_DAY, _UNFLUSHED_KEY = _UNFLUSHED.partition.name, _UNFLUSHED.sort.name


def _unflushed_day(at: datetime) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d}"


def _unflushed_key(at: datetime, conversation_id: str = "") -> str:
    """Sorts by time (a fixed-width UTC timestamp), then by conversation."""
    return f"{at.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}#{conversation_id}"


class BufferContentionError(RuntimeError):
    """Too many concurrent writers on one conversation; the caller's retry (SQS, Twilio) helps."""


class DynamoConversationBuffer:
    """:class:`maestro.ports.conversations.ConversationBuffer` on DynamoDB."""

    def __init__(
        self,
        client: DynamoDBClient,
        messages_table: str | None,
        conversations_table: str,
        *,
        max_attempts: int = 30,
        backoff: Callable[[int], None] | None = None,
        retention_days: int = RETENTION_DAYS["messages"],
    ) -> None:
        self._retention_days = retention_days
        self._ddb = client
        self._messages = messages_table
        self._conversations = conversations_table
        self._max_attempts = max_attempts
        self._backoff = backoff or _jittered_sleep

    @property
    def _messages_table(self) -> str:
        if self._messages is None:  # the flusher's: it reads the buffered copies alone
            raise RuntimeError("this buffer was built without the messages table")
        return self._messages

    # -- reads ------------------------------------------------------------------------------

    def _get(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        response = self._ddb.get_item(
            TableName=table, Key={k: to_value(v) for k, v in key.items()}, ConsistentRead=True
        )
        item = response.get("Item")
        return from_item(item) if item else None

    def _conv_key(self, conversation_id: str, item: str) -> dict[str, Any]:
        return {CONVERSATIONS.partition.name: conversation_id, CONVERSATIONS.sort_name: item}

    def meta(self, conversation_id: str) -> ConversationMeta | None:
        data = self._get(self._conversations, self._conv_key(conversation_id, META))
        if data is None:
            return None
        return ConversationMeta.model_validate(
            {k: data.get(k) for k in ConversationMeta.model_fields if k in data}
        )

    def get_message(self, message_id: str) -> Message | None:
        data = self._get(self._messages_table, {MESSAGES.partition.name: message_id})
        if data is None or data.get("direction") != "inbound":
            return None
        return Message.model_validate(data["message"])

    # -- append -----------------------------------------------------------------------------

    def append(self, draft: InboundDraft) -> AppendResult:
        cid = draft.conversation_id
        for attempt in range(self._max_attempts):
            seen = self.meta(cid) or ConversationMeta(
                conversation_id=cid, seq=0, flush_number=0, flushed_through=0
            )
            seq = seen.seq + 1
            message = Message(
                message_id=draft.message_id,
                conversation_id=cid,
                channel=draft.channel,
                from_phone=draft.from_phone,
                to_phone=draft.to_phone,
                body=draft.body,
                media=draft.media,
                received_at=draft.received_at,
                seq=seq,
                attestation=draft.attestation,
            )
            opened = not seen.has_unflushed
            first_unflushed = draft.received_at if opened else seen.first_unflushed_at
            after = seen.model_copy(
                update={
                    "seq": seq,
                    "last_inbound_at": draft.received_at,
                    "first_unflushed_at": first_unflushed,
                    "sender_phone": seen.sender_phone or draft.from_phone,
                }
            )
            message_json = message.model_dump(mode="json")
            # Both copies of what they wrote expire together (None: kept until erased).
            expires = expires_at_epoch(draft.received_at, self._retention_days)
            try:
                self._ddb.transact_write_items(
                    TransactItems=[
                        {
                            "Put": {
                                "TableName": self._messages_table,
                                "Item": to_item(
                                    {
                                        MESSAGES.partition.name: draft.message_id,
                                        "direction": "inbound",
                                        "conversation_id": cid,
                                        "seq": seq,
                                        "message": message_json,
                                        "sender_party_id": draft.sender_party_id,
                                        "unknown_sender": draft.unknown_sender,
                                        TTL_ATTRIBUTE: expires,
                                    }
                                ),
                                "ConditionExpression": "attribute_not_exists(#pk)",
                                "ExpressionAttributeNames": {"#pk": MESSAGES.partition.name},
                            }
                        },
                        {
                            "Put": {
                                "TableName": self._conversations,
                                "Item": to_item(
                                    {
                                        **self._conv_key(cid, _msg_key(seq)),
                                        "message": message_json,
                                        CONVERSATIONS_TTL: expires,
                                    }
                                ),
                                "ConditionExpression": "attribute_not_exists(#sk)",
                                "ExpressionAttributeNames": {"#sk": CONVERSATIONS.sort_name},
                            }
                        },
                        self._meta_put(after, expected=None if seen.seq == 0 else seen),
                    ]
                )
            except ClientError as error:
                codes = cancellation_codes(error)
                if not codes:
                    raise
                if codes[0] == "ConditionalCheckFailed":
                    return self._duplicate(draft.message_id, cid)
                # Another message of this conversation took the seq first: read again.
                self._backoff(attempt)
                continue
            return AppendResult(message=message, duplicate=False, opened_batch=opened, meta=after)
        raise BufferContentionError(f"{cid}: gave up after {self._max_attempts} attempts")

    def _meta_put(self, meta: ConversationMeta, expected: ConversationMeta | None) -> Any:
        """Put the counters, if they are still exactly as ``expected`` (None: not there yet).

        Both the seq and the flush count: a message stored from counters read before a flush
        claimed must not put back the flush count it read, undoing the claim."""
        values = {**self._conv_key(meta.conversation_id, META), **meta.model_dump(mode="json")}
        if meta.has_unflushed and meta.first_unflushed_at is not None:
            # The stranded sweep's index: present exactly while messages wait for a flush.
            waiting = meta.first_unflushed_at
            values[_UNFLUSHED_DAY] = _unflushed_day(waiting)
            values[_UNFLUSHED_KEY] = _unflushed_key(waiting, meta.conversation_id)
        item = to_item(values)
        if expected is None:
            return {
                "Put": {
                    "TableName": self._conversations,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(#sk)",
                    "ExpressionAttributeNames": {"#sk": CONVERSATIONS.sort_name},
                }
            }
        return {
            "Put": {
                "TableName": self._conversations,
                "Item": item,
                "ConditionExpression": "#seq = :seq AND #fn = :fn",
                "ExpressionAttributeNames": {"#seq": "seq", "#fn": "flush_number"},
                "ExpressionAttributeValues": {
                    ":seq": to_value(expected.seq),
                    ":fn": to_value(expected.flush_number),
                },
            }
        }

    def _duplicate(self, message_id: str, conversation_id: str) -> AppendResult:
        existing = self.get_message(message_id)
        if existing is None:  # the id belongs to an outbound message: not ours to overwrite
            raise ValueError(f"{message_id} is already stored as an outbound message")
        meta = self.meta(existing.conversation_id) or self.meta(conversation_id)
        assert meta is not None  # a stored inbound message always has its conversation meta
        return AppendResult(message=existing, duplicate=True, meta=meta)

    # -- flush claims -----------------------------------------------------------------------

    def unflushed(self, seen: ConversationMeta, limit: int) -> list[Message]:
        """The first ``limit`` messages not yet in a package, in seq order (consistent read)."""
        if not seen.has_unflushed or limit < 1:
            return []
        through = min(seen.seq, seen.flushed_through + limit)
        items = self._query(
            seen.conversation_id, _msg_key(seen.flushed_through + 1), _msg_key(through)
        )
        return [Message.model_validate(item["message"]) for item in items]

    def claim_flush(
        self,
        seen: ConversationMeta,
        trigger: FlushTrigger,
        at: datetime,
        through: Message | None = None,
        next_unflushed: Message | None = None,
    ) -> FlushClaim | None:
        if not seen.has_unflushed:
            raise ValueError("nothing unflushed to claim")
        through_seq = through.seq if through is not None else seen.seq
        if not seen.flushed_through < through_seq <= seen.seq:
            raise ValueError(f"cannot claim through seq {through_seq} of {seen}")
        if through_seq < seen.seq and next_unflushed is None:
            raise ValueError("a partial claim names the first message it leaves unflushed")
        number = seen.flush_number + 1
        claim = FlushClaim(
            conversation_id=seen.conversation_id,
            flush_number=number,
            package_id=package_id_for(seen.conversation_id, number),
            after_seq=seen.flushed_through,
            through_seq=through_seq,
            trigger=trigger,
            claimed_at=at,
        )
        # What is left unflushed waits from its own first message (for max_wait).
        left_since = (
            next_unflushed.received_at if through_seq < seen.seq and next_unflushed else None
        )
        after = seen.model_copy(
            update={
                "flush_number": number,
                "flushed_through": through_seq,
                "first_unflushed_at": left_since,
            }
        )
        # Exactly as seen: same seq (no newer message) and same flush count (no rival flusher).
        put_meta = self._meta_put(after, expected=seen)["Put"]
        try:
            self._ddb.transact_write_items(
                TransactItems=[
                    {"Put": put_meta},
                    {
                        "Put": {
                            "TableName": self._conversations,
                            "Item": to_item(
                                {
                                    **self._conv_key(seen.conversation_id, _flush_key(number)),
                                    **claim.model_dump(mode="json"),
                                }
                            ),
                            "ConditionExpression": "attribute_not_exists(#sk)",
                            "ExpressionAttributeNames": {"#sk": CONVERSATIONS.sort_name},
                        }
                    },
                ]
            )
        except ClientError as error:
            if cancellation_codes(error):
                return None
            raise
        return claim

    def unstarted_claims(self, conversation_id: str) -> list[FlushClaim]:
        claims = [
            FlushClaim.model_validate(
                {k: v for k, v in item.items() if k in FlushClaim.model_fields}
            )
            # A claim is started right after it is made; one left unstarted (a crash in between)
            # is among the newest, so the read stays small however long the conversation.
            for item in self._query(conversation_id, "flush#", "flush#~", newest=RECENT_CLAIMS)
        ]
        return sorted((c for c in claims if not c.started), key=lambda c: c.flush_number)

    def stranded(self, waiting_since: datetime, days: int) -> list[str]:
        found: list[str] = []
        for back in range(days, -1, -1):  # oldest day first
            day = _unflushed_day(waiting_since - timedelta(days=back))
            found += [
                str(from_item(item)[CONVERSATIONS.partition.name])
                for item in query_all(
                    self._ddb,
                    TableName=self._conversations,
                    IndexName=_UNFLUSHED.name,
                    KeyConditionExpression="#day = :day AND #key < :before",
                    ExpressionAttributeNames={"#day": _UNFLUSHED_DAY, "#key": _UNFLUSHED_KEY},
                    ExpressionAttributeValues={
                        ":day": to_value(day),
                        ":before": to_value(_unflushed_key(waiting_since)),
                    },
                )
            ]
        return found

    def messages_for(self, claim: FlushClaim) -> list[Message]:
        items = self._query(
            claim.conversation_id, _msg_key(claim.after_seq + 1), _msg_key(claim.through_seq)
        )
        messages = [Message.model_validate(item["message"]) for item in items]
        expected = claim.through_seq - claim.after_seq
        if len(messages) != expected:
            # Seqs are gapless by construction; a hole means something is badly wrong. Fail
            # loudly so the queue retries and nothing is packaged short.
            raise RuntimeError(
                f"{claim.package_id}: expected {expected} messages, found {len(messages)}"
            )
        return messages

    def claim_probe(self, message_id: str) -> bool:
        try:
            self._ddb.update_item(
                TableName=self._messages_table,
                Key={MESSAGES.partition.name: to_value(message_id)},
                UpdateExpression="SET probe_claimed = :yes",
                ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(probe_claimed)",
                ExpressionAttributeNames={"#pk": MESSAGES.partition.name},
                ExpressionAttributeValues={":yes": to_value(True)},
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def store_probe(self, message: Message, result: PreCheckResult) -> None:
        value = to_value(result.model_dump(mode="json"))
        for table, key in (
            (self._messages_table, {MESSAGES.partition.name: to_value(message.message_id)}),
            (
                self._conversations,
                {
                    k: to_value(v)
                    for k, v in self._conv_key(
                        message.conversation_id, _msg_key(message.seq)
                    ).items()
                },
            ),
        ):
            self._ddb.update_item(
                TableName=table,
                Key=key,
                UpdateExpression="SET #m.probe = :probe",
                ExpressionAttributeNames={"#m": "message"},
                ExpressionAttributeValues={":probe": value},
            )

    def recent_messages(self, conversation_id: str, limit: int) -> list[Message]:
        if limit < 1:
            return []
        items = self._query(conversation_id, "msg#", "msg#~", newest=limit)
        return [Message.model_validate(item["message"]) for item in reversed(items)]

    def mark_started(self, claim: FlushClaim) -> None:
        self._ddb.update_item(
            TableName=self._conversations,
            Key={
                k: to_value(v)
                for k, v in self._conv_key(
                    claim.conversation_id, _flush_key(claim.flush_number)
                ).items()
            },
            UpdateExpression="SET started = :yes",
            ExpressionAttributeValues={":yes": to_value(True)},
        )

    def _query(
        self, conversation_id: str, low: str, high: str, newest: int | None = None
    ) -> list[dict[str, Any]]:
        """Items with sort keys in [low, high]; all of them, or only the ``newest`` few."""
        pk, sk = CONVERSATIONS.partition.name, CONVERSATIONS.sort_name
        kwargs: dict[str, Any] = {
            "TableName": self._conversations,
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :low AND :high",
            "ExpressionAttributeNames": {"#pk": pk, "#sk": sk},
            "ExpressionAttributeValues": {
                ":pk": to_value(conversation_id),
                ":low": to_value(low),
                ":high": to_value(high),
            },
            "ConsistentRead": True,
        }
        if newest is not None:  # one page: the newest few, no more
            page = self._ddb.query(**kwargs, ScanIndexForward=False, Limit=newest)
            return [from_item(i) for i in page.get("Items", [])]
        return [from_item(i) for i in query_all(self._ddb, **kwargs)]

    # -- lease ------------------------------------------------------------------------------

    def acquire_lease(
        self,
        conversation_id: str,
        package_id: str,
        flush_number: int,
        at: datetime,
        ttl_seconds: int,
    ) -> bool:
        """Take the lease for ``package_id`` if it is this flush's turn (or renew it, for the
        holder).

        Turns go in flush order (``next_flush``). A holder whose lease expired (it crashed, or
        was stopped) is overtaken whoever it was: its turn counts as over, the turn moves to the
        flush after it (past any forfeited ones), and that flush takes the lease.
        """
        for _ in range(3):  # at most: take; clear an expired holder and take; a lost race
            if self._take(conversation_id, package_id, flush_number, at, ttl_seconds):
                return True
            if not self._clear_expired(conversation_id, at):
                return False
            self._advance_past_skipped(conversation_id)
        return False

    def renew_lease(
        self, conversation_id: str, package_id: str, at: datetime, ttl_seconds: int
    ) -> bool:
        try:
            self._ddb.update_item(
                TableName=self._conversations,
                Key=self._lease_key(conversation_id),
                UpdateExpression="SET #expires = :exp",
                ConditionExpression="#holder = :pkg",
                ExpressionAttributeNames={"#holder": "holder", "#expires": _EXPIRES},
                ExpressionAttributeValues={
                    ":pkg": to_value(package_id),
                    ":exp": to_value(_epoch_ms(at + timedelta(seconds=ttl_seconds))),
                },
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def _lease_key(self, conversation_id: str) -> dict[str, Any]:
        return {k: to_value(v) for k, v in self._conv_key(conversation_id, LEASE).items()}

    def _take(
        self,
        conversation_id: str,
        package_id: str,
        flush_number: int,
        at: datetime,
        ttl_seconds: int,
    ) -> bool:
        turn = "#next = :n" if flush_number > 1 else "(attribute_not_exists(#next) OR #next = :n)"
        try:
            self._ddb.update_item(
                TableName=self._conversations,
                Key=self._lease_key(conversation_id),
                UpdateExpression="SET #holder = :pkg, #holder_flush = :n, #expires = :exp",
                ConditionExpression=f"(attribute_not_exists(#holder) AND {turn}) OR #holder = :pkg",
                ExpressionAttributeNames=_LEASE_NAMES,
                ExpressionAttributeValues={
                    ":pkg": to_value(package_id),
                    ":n": to_value(flush_number),
                    ":exp": to_value(_epoch_ms(at + timedelta(seconds=ttl_seconds))),
                },
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def _clear_expired(self, conversation_id: str, at: datetime) -> bool:
        """End an expired holder's turn; False when the lease is free or still alive."""
        item = self._get(self._conversations, self._conv_key(conversation_id, LEASE)) or {}
        holder, expires = item.get("holder"), item.get(_EXPIRES)
        if holder is None or expires is None or int(expires) >= _epoch_ms(at):
            return False
        try:
            self._ddb.update_item(
                TableName=self._conversations,
                Key=self._lease_key(conversation_id),
                UpdateExpression="SET #next = :after, #overtaken = :old"
                " REMOVE #holder, #holder_flush, #expires",
                ConditionExpression="#holder = :old AND #expires = :exp",
                ExpressionAttributeNames={**_LEASE_NAMES, "#overtaken": "last_overtaken"},
                ExpressionAttributeValues={
                    ":old": to_value(holder),
                    ":exp": to_value(int(expires)),
                    ":after": to_value(int(item["holder_flush"]) + 1),
                },
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
        return True  # cleared here or by a rival: either way, try to take it again

    def release_lease(self, conversation_id: str, package_id: str, flush_number: int) -> bool:
        try:
            self._ddb.update_item(
                TableName=self._conversations,
                Key=self._lease_key(conversation_id),
                UpdateExpression="SET #next = :next REMOVE #holder, #holder_flush, #expires",
                ConditionExpression="#holder = :pkg",
                ExpressionAttributeNames=_LEASE_NAMES,
                ExpressionAttributeValues={
                    ":pkg": to_value(package_id),
                    ":next": to_value(flush_number + 1),
                },
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        self._advance_past_skipped(conversation_id)
        return True

    def forfeit_turn(self, conversation_id: str, flush_number: int) -> None:
        """A package that ends without ever holding the lease (it failed open while waiting)
        gives up its turn, so the packages after it are not left waiting for it forever."""
        self._ddb.update_item(
            TableName=self._conversations,
            Key=self._lease_key(conversation_id),
            UpdateExpression="ADD #skipped :n",
            ExpressionAttributeNames={"#skipped": "skipped"},
            ExpressionAttributeValues={":n": {"NS": [str(flush_number)]}},
        )
        self._advance_past_skipped(conversation_id)

    def _advance_past_skipped(self, conversation_id: str) -> None:
        """While the lease is free and the next turn belongs to a forfeited flush, move on."""
        key = self._lease_key(conversation_id)
        while True:
            item = self._get(self._conversations, self._conv_key(conversation_id, LEASE)) or {}
            turn = int(item.get("next_flush", 1))
            if "holder" in item or turn not in {int(n) for n in item.get("skipped", [])}:
                return
            on_turn = (
                "#next = :turn" if turn > 1 else "(attribute_not_exists(#next) OR #next = :turn)"
            )
            try:
                self._ddb.update_item(
                    TableName=self._conversations,
                    Key=key,
                    UpdateExpression="SET #next = :after",
                    ConditionExpression=f"attribute_not_exists(#holder) AND {on_turn}",
                    ExpressionAttributeNames={"#next": "next_flush", "#holder": "holder"},
                    ExpressionAttributeValues={
                        ":turn": to_value(turn),
                        ":after": to_value(turn + 1),
                    },
                )
            except ClientError as error:
                if not is_conditional_failure(error):
                    raise
                # Someone else moved the turn or took the lease: read again and re-decide.


class DynamoPageThrottle:
    """:class:`maestro.ports.limits.PageThrottle` on the conversations table (item ``window`` under
    the partition ``throttle#<key>``), expired by the table's TTL after its window."""

    def __init__(self, client: DynamoDBClient, conversations_table: str) -> None:
        self._ddb = client
        self._table = conversations_table

    def claim(self, key: str, claimant: str, at: datetime, window_seconds: int) -> str | None:
        pk = self._key(key)
        until = at + timedelta(seconds=window_seconds)
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item=to_item(
                    {
                        **pk,
                        "claimant": claimant,
                        "until_ms": _epoch_ms(until),
                        CONVERSATIONS_TTL: int(until.timestamp()) + 1,
                    }
                ),
                ConditionExpression="attribute_not_exists(#sk) OR #until < :now OR #who = :me",
                ExpressionAttributeNames={
                    "#sk": CONVERSATIONS.sort_name,
                    "#until": "until_ms",
                    "#who": "claimant",
                },
                ExpressionAttributeValues={
                    ":now": to_value(_epoch_ms(at)),
                    ":me": to_value(claimant),
                },
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            held = self._get_item(pk)
            return str(held["claimant"]) if held else None
        return None

    def window(self, key: str) -> PageWindow | None:
        held = self._get_item(self._key(key))
        if held is None:
            return None
        return PageWindow(
            claimant=str(held["claimant"]),
            until=_from_epoch_ms(int(held["until_ms"])),
            page_sid=held.get("page_sid"),
            paged_at=_from_epoch_ms(int(held["paged_ms"])) if "paged_ms" in held else None,
            digest_hour=_from_epoch_ms(int(held["digest_ms"])) if "digest_ms" in held else None,
        )

    def record(
        self,
        key: str,
        claimant: str,
        *,
        page_sid: str | None = None,
        paged_at: datetime | None = None,
        digest_hour: datetime | None = None,
    ) -> None:
        values = {
            "page_sid": page_sid,
            "paged_ms": _epoch_ms(paged_at) if paged_at else None,
            "digest_ms": _epoch_ms(digest_hour) if digest_hour else None,
        }
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={k: to_value(v) for k, v in self._key(key).items()},
                UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in given),
                ConditionExpression="#who = :me",
                ExpressionAttributeNames={"#who": "claimant", **{f"#{k}": k for k in given}},
                ExpressionAttributeValues={
                    ":me": to_value(claimant),
                    **{f":{k}": to_value(v) for k, v in given.items()},
                },
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            # Another holds the window now (this one expired): nothing to note on it.

    @staticmethod
    def _key(key: str) -> dict[str, Any]:
        return {CONVERSATIONS.partition.name: f"throttle#{key}", CONVERSATIONS.sort_name: "window"}

    def _get_item(self, key: dict[str, Any]) -> dict[str, Any] | None:
        response = self._ddb.get_item(
            TableName=self._table, Key={k: to_value(v) for k, v in key.items()}, ConsistentRead=True
        )
        item = response.get("Item")
        return from_item(item) if item else None


class DynamoOutboundStatusStore:
    """:class:`maestro.ports.conversations.OutboundStatusStore` on the messages table."""

    def __init__(self, client: DynamoDBClient, messages_table: str) -> None:
        self._ddb = client
        self._messages = messages_table

    def record_status(
        self, message_sid: str, status: DeliveryStatus, at: datetime, error_code: str | None
    ) -> StatusRecorded:
        rank = status_rank(status)
        names = {"#rank": "status_rank", "#status": "status", "#dir": "direction"}
        values = {
            ":rank": to_value(rank),
            ":status": to_value(status),
            ":at": to_value(at.isoformat()),
            ":out": to_value("outbound"),
        }
        update = "SET #rank = :rank, #status = :status, status_at = :at"
        if error_code:
            update += ", error_code = :err"
            values[":err"] = to_value(error_code)
        try:
            self._ddb.update_item(
                TableName=self._messages,
                Key={MESSAGES.partition.name: to_value(message_sid)},
                UpdateExpression=update,
                # Only a message maestro sent (the messenger wrote it; an inbound item with this
                # id is not one), and never backwards.
                ConditionExpression="#dir = :out"
                " AND (attribute_not_exists(#rank) OR #rank < :rank)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                # Which condition failed, told by the item itself: no read before the write.
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if not is_conditional_failure(error):
                raise
            item = item_that_failed_the_condition(error) or {}
            sent = item.get("direction") == "outbound"
            return "stale" if sent else "unknown"
        return "applied"

    def status_of(self, message_sid: str) -> str | None:
        response = self._ddb.get_item(
            TableName=self._messages,
            Key={MESSAGES.partition.name: to_value(message_sid)},
            ConsistentRead=True,
        )
        item = response.get("Item")
        return str(from_item(item)["status"]) if item and "status" in item else None


def _epoch_ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _from_epoch_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _jittered_sleep(attempt: int) -> None:
    # Contention on one conversation is brief (a burst of texts); back off a little, with jitter.
    time.sleep(min(0.2, 0.005 * (2 ** min(attempt, 6))) * random.random())
