"""Pending clarifications and held confirmations on DynamoDB (``maestro.tables.PENDING``), one
table, expired by TTL.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, TypeVar, get_args

from botocore.exceptions import ClientError

from maestro.adapters.ddb import (
    DynamoDBClient,
    from_item,
    is_conditional_failure,
    to_item,
    to_value,
)
from maestro.adapters.ddb import consistent_get as _get
from maestro.adapters.ddb import load_model as _load
from maestro.adapters.ddb import model_item as _model_item
from maestro.adapters.ddb import query_all as _query
from maestro.adapters.dynamodb_writes import conditional_put, index_named, sort_key_name, sort_time
from maestro.domain.records import (
    HoldStatus,
    PendingClarification,
    PendingConfirmation,
    PendingStatus,
)
from maestro.ports.stores import AlreadyExistsError, PendingKind, PendingStore, StaleVersionError
from maestro.tables import PENDING

__all__ = ["PENDING_RETENTION", "UNKNOWN_PARTY_KEY", "DynamoPendingStore"]

P = TypeVar("P", PendingClarification, PendingConfirmation)

# The pending item's kind (clarification or confirmation), not a key.
_KIND = "kind"
# Stands in for a clarification's party when the sender is unknown (the index key can't be null).
UNKNOWN_PARTY_KEY = "unknown"

_CONFIRMATION_STATUSES = frozenset(get_args(HoldStatus))
_CLARIFICATION_STATUSES = frozenset(get_args(PendingStatus))
PENDING_RETENTION = timedelta(days=7)
"""Items outlive their expiry by this much, so the expiry itself is recorded, not just lost."""


class DynamoPendingStore(PendingStore):
    """Pending clarifications and confirmations in one table, told apart by ``kind``.

    DynamoDB TTL deletes lazily (up to days late), so every read also drops expired items.
    """

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._by_party = index_named(PENDING, "by_party")
        if PENDING.ttl_attribute is None:  # pragma: no cover - the spec is static
            raise RuntimeError("the pending table needs a TTL attribute")
        self._ttl = PENDING.ttl_attribute

    def put_clarification(self, item: PendingClarification) -> None:
        self._put(
            item,
            kind="clarification",
            pending_id=item.clarification_id,
            party_key=item.party_id or UNKNOWN_PARTY_KEY,
            created=item.asked_at,
            expires=item.expires_at,
        )

    def put_confirmation(self, item: PendingConfirmation) -> None:
        self._put(
            item,
            kind="confirmation",
            pending_id=item.confirmation_id,
            party_key=item.party_id,
            created=item.held_at,
            expires=item.expires_at,
            create_once=True,
        )

    def clarifications_for(self, party_id: str, now: datetime) -> list[PendingClarification]:
        return [
            c for c in self._live(party_id, "clarification", PendingClarification, now) if c.is_open
        ]

    def confirmations_for(self, party_id: str, now: datetime) -> list[PendingConfirmation]:
        live = self._live(party_id, "confirmation", PendingConfirmation, now)
        return [c for c in live if c.status == "held"]

    def open_items(
        self, party_id: str
    ) -> tuple[list[PendingClarification], list[PendingConfirmation]]:
        questions = self._live(party_id, "clarification", PendingClarification, None)
        holds = self._live(party_id, "confirmation", PendingConfirmation, None)
        return [q for q in questions if q.is_open], [h for h in holds if h.is_open]

    def get(
        self, kind: PendingKind, pending_id: str
    ) -> PendingClarification | PendingConfirmation | None:
        stored = _get(self._client, self._table, {PENDING.partition.name: pending_id})
        if stored is None or from_item({_KIND: stored[_KIND]})[_KIND] != kind:
            return None
        cls: type[PendingClarification] | type[PendingConfirmation] = (
            PendingClarification if kind == "clarification" else PendingConfirmation
        )
        return _load(cls, stored, party_id=None)

    def set_confirmation_status(self, confirmation_id: str, expected: str, status: str) -> None:
        self.set_status("confirmation", confirmation_id, expected, status)

    def set_status(
        self,
        kind: PendingKind,
        pending_id: str,
        expected: str,
        status: str,
        closed_by: str | None = None,
    ) -> None:
        # Refuse a status the model can't load back, or the item would become unreadable.
        allowed = _CONFIRMATION_STATUSES if kind == "confirmation" else _CLARIFICATION_STATUSES
        if status not in allowed:
            raise ValueError(f"unknown {kind} status {status!r}")
        update = "SET #status = :status"
        values: dict[str, Any] = {
            ":status": to_value(status),
            ":expected": to_value(expected),
            ":kind": to_value(kind),
        }
        if closed_by is not None:
            update += ", closed_by = :by"
            values[":by"] = to_value(closed_by)
        try:
            self._client.update_item(
                TableName=self._table,
                Key=to_item({PENDING.partition.name: pending_id}),
                UpdateExpression=update,
                # A clarification stored before statuses existed has none: it is open.
                ConditionExpression="#kind = :kind AND (#status = :expected"
                + (" OR attribute_not_exists(#status))" if expected == "open" else ")"),
                ExpressionAttributeNames={"#status": "status", "#kind": _KIND},
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if is_conditional_failure(exc):
                raise StaleVersionError(f"{kind} {pending_id} is not {expected!r}") from exc
            raise

    def _put(
        self,
        model: PendingClarification | PendingConfirmation,
        *,
        kind: PendingKind,
        pending_id: str,
        party_key: str,
        created: datetime,
        expires: datetime,
        create_once: bool = False,
    ) -> None:
        extra = {
            PENDING.partition.name: pending_id,
            _KIND: kind,
            self._by_party.partition.name: party_key,
            sort_key_name(self._by_party): f"{sort_time(created)}#{pending_id}",
            # Rounded up so TTL never deletes an item before it has expired (and been marked so).
            self._ttl: math.ceil((expires + PENDING_RETENTION).timestamp()),
        }
        if not create_once:
            self._client.put_item(TableName=self._table, Item=_model_item(model, **extra))
            return
        conditional_put(
            self._client,
            self._table,
            _model_item(model, **extra),
            "attribute_not_exists(#pk)",
            {"#pk": PENDING.partition.name},
            None,
            AlreadyExistsError,
        )

    def _live(
        self, party_id: str, kind: PendingKind, cls: type[P], now: datetime | None
    ) -> list[P]:
        """The party's items of ``kind`` (unexpired at ``now``, or all when None), oldest first,
        re-read from the table."""
        values: dict[str, Any] = {":pk": to_value(party_id), ":kind": to_value(kind)}
        condition = "#kind = :kind"
        names = {"#pk": self._by_party.partition.name, "#kind": _KIND}
        if now is not None:
            # A coarse server-side cut (whole seconds); the exact check is below.
            condition += " AND #ttl > :now"
            names["#ttl"] = self._ttl
            values[":now"] = to_value(math.floor((now + PENDING_RETENTION).timestamp()) - 1)
        ids: list[str] = []
        for item in _query(
            self._client,
            TableName=self._table,
            IndexName=self._by_party.name,
            KeyConditionExpression="#pk = :pk",
            FilterExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        ):
            ids.append(from_item(item)[PENDING.partition.name])
        live: list[P] = []
        for pending_id in ids:
            # The index lags the table (a status just moved on); the table has the truth.
            stored = _get(self._client, self._table, {PENDING.partition.name: pending_id})
            if stored is None:
                continue
            # A clarification's party_id None was not stored (to_item drops None): restore it.
            model = _load(cls, stored, party_id=None)
            if now is None or model.expires_at > now:
                live.append(model)
        return live
