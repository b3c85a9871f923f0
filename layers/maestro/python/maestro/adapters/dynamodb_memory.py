"""DynamoDB adapters for maestro's memory: decisions, state, work orders, pending items, parties.

Each adapter takes a boto3 DynamoDB *client* and its table name; nothing touches AWS at import
time. Key and index names come from ``maestro.tables`` so the stack, the local stack and these
adapters cannot drift apart. Every lost condition becomes a port error; any other ClientError
propagates untouched.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar, get_args

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

# Re-exported: the directory lives apart so the inbound webhook can load it without the records.
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.domain.models import TERMINAL_STATUSES, WorkOrder, WorkOrderStatus
from maestro.domain.records import (
    ActionOutcomeRecord,
    HoldStatus,
    MaestroDecision,
    MaestroState,
    PackageCompletion,
    PendingClarification,
    PendingConfirmation,
    PendingStatus,
    SweepMark,
    outcome_record_prefix,
)
from maestro.domain.timeline import TIMELINE_ENTRY, TimelineEntry
from maestro.ports import (
    AlreadyExistsError,
    DecisionLog,
    PendingKind,
    PendingStore,
    StaleVersionError,
    StateStore,
    Timeline,
    WorkOrderStore,
)
from maestro.tables import (
    COMPLETION_SHARDS,
    DECISIONS,
    PENDING,
    RETENTION_DAYS,
    STATE,
    TIMELINE,
    TTL_ATTRIBUTE,
    WORK_ORDERS,
    Index,
    TableSpec,
    completion_day_key,
    completion_day_keys,
    expires_at_epoch,
)

__all__ = [
    "DynamoDecisionLog",
    "DynamoPartyDirectory",
    "DynamoPendingStore",
    "DynamoStateStore",
    "DynamoTimeline",
    "DynamoWorkOrderStore",
    "WoListRead",
]

P = TypeVar("P", PendingClarification, PendingConfirmation)
ConflictFactory = type[AlreadyExistsError] | type[StaleVersionError]

WoListRead = Literal["open_by_property index", "scan"]
"""How `maestro wo list` read the work orders it lists."""

# Attributes that are not a key: the record's JSON dump and kind, and the pending item's kind.
_DOC = "doc"
_KIND = "kind"
_RECORD = "record"
# Stands in for a clarification's party when the sender is unknown (the index key can't be null).
UNKNOWN_PARTY_KEY = "unknown"


def _sort_time(at: datetime) -> str:
    """A fixed-width UTC ISO time, so string order is time order in sort keys."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def _index(spec: TableSpec, name: str) -> Index:
    return next(index for index in spec.indexes if index.name == name)


def _sort_name(keyed: TableSpec | Index) -> str:
    if keyed.sort is None:  # pragma: no cover - the specs are static
        raise RuntimeError(f"{keyed} needs a sort key")
    return keyed.sort.name


def _conditional_put(
    client: DynamoDBClient,
    table_name: str,
    item: dict[str, Any],
    condition: str,
    names: dict[str, str],
    values: dict[str, Any] | None,
    error: ConflictFactory,
) -> None:
    kwargs: dict[str, Any] = {
        "TableName": table_name,
        "Item": item,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
    }
    if values:
        kwargs["ExpressionAttributeValues"] = {k: to_value(v) for k, v in values.items()}
    try:
        client.put_item(**kwargs)
    except ClientError as exc:
        if is_conditional_failure(exc):
            raise error(f"{table_name}: condition {condition!r} failed") from exc
        raise


# ---------------------------------------------------------------------------------------------
# The decision log: append-only.
# ---------------------------------------------------------------------------------------------


class DynamoDecisionLog(DecisionLog):
    """The append-only MaestroDecision log.

    There is deliberately no update or delete: ``append`` is a put-if-absent, so a re-executed
    package writing the same deterministic decision id is refused, never overwrites.
    """

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        *,
        retention_days: int = RETENTION_DAYS["decisions"],
        completion_shards: int = COMPLETION_SHARDS,
    ) -> None:
        self._retention_days = retention_days
        self._shards = completion_shards
        self._client = client
        self._table = table_name
        self._pk = DECISIONS.partition.name
        self._sk = _sort_name(DECISIONS)
        self._by_conversation = _index(DECISIONS, "by_conversation")
        self._by_completion_day = _index(DECISIONS, "completions_by_day")

    def append(self, decision: MaestroDecision) -> None:
        conv_index = self._by_conversation
        item: dict[str, Any] = {
            self._pk: decision.package_id,
            self._sk: decision.decision_id,
            _RECORD: "decision",
            conv_index.partition.name: decision.conversation_id,
            # decision_id breaks ties between decisions recorded in the same microsecond.
            _sort_name(conv_index): f"{_sort_time(decision.recorded_at)}#{decision.decision_id}",
            _DOC: decision.model_dump_json(),
            TTL_ATTRIBUTE: expires_at_epoch(decision.recorded_at, self._retention_days),
        }
        self._put_once(item)

    def record_outcome(self, outcome: ActionOutcomeRecord) -> bool:
        # No conversation index attributes: outcomes stay out of ``recent`` (a sparse index).
        return self._append_other(outcome.package_id, outcome.record_id, "outcome", outcome)

    def complete(self, completion: PackageCompletion) -> bool:
        at = completion.recorded_at.astimezone(UTC)
        by_day = self._by_completion_day
        return self._append_other(
            completion.package_id,
            completion.record_id,
            "completion",
            completion,
            **{
                by_day.partition.name: completion_day_key(
                    at.date(), completion.package_id, self._shards
                ),
                _sort_name(by_day): f"{_sort_time(at)}#{completion.package_id}",
            },
        )

    def completed_between(
        self,
        start: datetime,
        end: datetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,
    ) -> list[PackageCompletion]:
        """Packages completed in [start, end) and past ``after``, oldest first, at most
        ``limit``: one Query per UTC day and shard, and the unsharded day unless told otherwise
        (eventually consistent: an index cannot be read otherwise), each from the mark on, so
        nothing before it is read again; the answers merged in the index's order."""
        low = _sort_time(start)
        if after is not None and after.recorded_at >= start:
            low = f"{_sort_time(after.recorded_at)}#{after.package_id}"
        found: list[PackageCompletion] = []
        day = max(start, after.recorded_at if after else start).astimezone(UTC).date()
        while day <= end.astimezone(UTC).date() and (limit is None or len(found) < limit):
            wanted = None if limit is None else limit - len(found)
            days: list[PackageCompletion] = []
            for key in completion_day_keys(day, self._shards, unsharded=unsharded):
                days += self._completed_in(key, low, start, end, after, wanted)
            days.sort(key=lambda c: (c.recorded_at, c.package_id))
            found += days[:wanted]
            day += timedelta(days=1)
        return found

    def _completed_in(
        self,
        partition: str,
        low: str,
        start: datetime,
        end: datetime,
        after: SweepMark | None,
        limit: int | None,
    ) -> list[PackageCompletion]:
        """The first ``limit`` completions of one partition of the index in range, past the mark."""
        by_day = self._by_completion_day
        found: list[PackageCompletion] = []
        for item in _query(
            self._client,
            TableName=self._table,
            IndexName=by_day.name,
            KeyConditionExpression="#day = :day AND #key BETWEEN :low AND :end",
            ExpressionAttributeNames={"#day": by_day.partition.name, "#key": _sort_name(by_day)},
            ExpressionAttributeValues={
                ":day": to_value(partition),
                ":low": to_value(low),
                ":end": to_value(_sort_time(end)),
            },
            **({"Limit": limit + 1} if limit is not None else {}),  # +1: the mark itself
        ):
            completion = PackageCompletion.model_validate_json(self._doc(item))
            if not start <= completion.recorded_at < end:
                continue
            if after is not None and after.passed(completion):
                continue  # BETWEEN is inclusive: the mark's own line
            found.append(completion)
            if limit is not None and len(found) >= limit:
                break
        return found

    def outcomes_for(
        self, package_id: str, *, consistent: bool = True
    ) -> list[ActionOutcomeRecord]:
        # Only the outcome lines (their ids share a prefix): not the decisions beside them.
        found = [
            ActionOutcomeRecord.model_validate_json(self._doc(item))
            for item in _query(
                self._client,
                TableName=self._table,
                KeyConditionExpression="#pk = :pk AND begins_with(#sk, :outcome)",
                ExpressionAttributeNames={"#pk": self._pk, "#sk": self._sk},
                ExpressionAttributeValues={
                    ":pk": to_value(package_id),
                    ":outcome": to_value(outcome_record_prefix(package_id)),
                },
                ConsistentRead=consistent,
            )
            if from_item({_RECORD: item[_RECORD]})[_RECORD] == "outcome"
        ]
        return sorted(found, key=lambda o: o.index)

    def completion_for(self, package_id: str) -> PackageCompletion | None:
        for item in self._package_items(package_id):
            if from_item({_RECORD: item[_RECORD]})[_RECORD] == "completion":
                return PackageCompletion.model_validate_json(self._doc(item))
        return None

    def _append_other(
        self,
        package_id: str,
        record_id: str,
        kind: str,
        record: ActionOutcomeRecord | PackageCompletion,
        **extra: str,
    ) -> bool:
        try:
            self._put_once(
                {
                    self._pk: package_id,
                    self._sk: record_id,
                    _RECORD: kind,
                    _DOC: record.model_dump_json(),
                    TTL_ATTRIBUTE: expires_at_epoch(record.recorded_at, self._retention_days),
                    **extra,
                }
            )
        except AlreadyExistsError:
            return False
        return True

    def _put_once(self, item: dict[str, Any]) -> None:
        _conditional_put(
            self._client,
            self._table,
            to_item(item),
            "attribute_not_exists(#pk)",
            {"#pk": self._pk},
            None,
            AlreadyExistsError,
        )

    def _package_items(self, package_id: str) -> Iterator[dict[str, Any]]:
        yield from _query(
            self._client,
            TableName=self._table,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": self._pk},
            ExpressionAttributeValues={":pk": to_value(package_id)},
            ConsistentRead=True,
        )

    @staticmethod
    def _doc(item: dict[str, Any]) -> str:
        return str(from_item({_DOC: item[_DOC]})[_DOC])

    def get(self, package_id: str, decision_id: str) -> MaestroDecision | None:
        item = _get(self._client, self._table, {self._pk: package_id, self._sk: decision_id})
        return self._decode(item) if item else None

    def for_package(self, package_id: str) -> list[MaestroDecision]:
        decisions = [
            self._decode(item)
            for item in self._package_items(package_id)
            # Items written before outcomes existed carry no record kind: they are decisions.
            if _RECORD not in item or from_item({_RECORD: item[_RECORD]})[_RECORD] == "decision"
        ]
        # The table sorts by decision id (a string); callers want the decisions' own order.
        return sorted(decisions, key=lambda d: (d.index, d.recorded_at, d.decision_id))

    def recent(self, conversation_id: str, limit: int) -> list[MaestroDecision]:
        """The conversation's last ``limit`` decisions, oldest first."""
        if limit <= 0:
            return []
        newest_first: list[MaestroDecision] = []
        # A GSI cannot be read consistently; the log is append-only, so lag only hides the
        # newest decisions for a moment, never shows a changed one.
        for item in _query(
            self._client,
            TableName=self._table,
            IndexName=self._by_conversation.name,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": self._by_conversation.partition.name},
            ExpressionAttributeValues={":pk": to_value(conversation_id)},
            ScanIndexForward=False,
            Limit=limit,
        ):
            newest_first.append(self._decode(item))
            if len(newest_first) >= limit:
                break
        return newest_first[::-1]

    @staticmethod
    def _decode(item: dict[str, Any]) -> MaestroDecision:
        return MaestroDecision.model_validate_json(from_item({_DOC: item[_DOC]})[_DOC])


# ---------------------------------------------------------------------------------------------
# State snapshots: optimistic concurrency on version.
# ---------------------------------------------------------------------------------------------


def _versioned_put(
    client: DynamoDBClient,
    table_name: str,
    spec: TableSpec,
    item: dict[str, Any],
    expected_version: int | None,
) -> None:
    """Put ``item`` only if the stored version is ``expected_version`` (None: no item yet)."""
    if expected_version is None:
        _conditional_put(
            client,
            table_name,
            item,
            "attribute_not_exists(#pk)",
            {"#pk": spec.partition.name},
            None,
            StaleVersionError,
        )
        return
    _conditional_put(
        client,
        table_name,
        item,
        "#version = :expected",
        {"#version": "version"},
        {":expected": expected_version},
        StaleVersionError,
    )


def _check_next_version(version: int, expected_version: int | None) -> None:
    # A caller handing the wrong version is a bug, not a race: refuse before writing.
    wanted = 1 if expected_version is None else expected_version + 1
    if version != wanted:
        raise ValueError(f"version must be {wanted} after {expected_version}, got {version}")


class DynamoStateStore(StateStore):
    """MaestroState snapshots, one per work order, versioned."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, wo_id: str) -> MaestroState | None:
        item = _get(self._client, self._table, {STATE.partition.name: wo_id})
        return _load(MaestroState, item) if item else None

    def put(self, state: MaestroState, expected_version: int | None) -> None:
        _check_next_version(state.version, expected_version)
        _versioned_put(self._client, self._table, STATE, _model_item(state), expected_version)


# ---------------------------------------------------------------------------------------------
# Work orders: create-once, versioned updates, sparse "open for party" indexes.
# ---------------------------------------------------------------------------------------------


class DynamoWorkOrderStore(WorkOrderStore):
    """The default WO store. WOs still in conversation (open, or awaiting a rating) carry the
    sparse index attributes; the rest don't."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._by_tenant = _index(WORK_ORDERS, "open_by_tenant")
        self._by_vendor = _index(WORK_ORDERS, "open_by_vendor")
        self._by_property = _index(WORK_ORDERS, "open_by_property")

    def get(self, wo_id: str) -> WorkOrder | None:
        item = _get(self._client, self._table, {WORK_ORDERS.partition.name: wo_id})
        return _load(WorkOrder, item) if item else None

    def create(self, wo: WorkOrder) -> None:
        _conditional_put(
            self._client,
            self._table,
            self._item(wo),
            "attribute_not_exists(#pk)",
            {"#pk": WORK_ORDERS.partition.name},
            None,
            AlreadyExistsError,
        )

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        _check_next_version(wo.version, expected_version)
        # A whole-item put (not UpdateItem), so a closing WO simply loses its index attributes.
        _versioned_put(self._client, self._table, WORK_ORDERS, self._item(wo), expected_version)

    def open_for_party(self, party_id: str) -> list[WorkOrder]:
        """WOs in conversation (open, or awaiting a rating) where the party is the tenant or the
        vendor, sorted by id."""
        candidates: set[str] = set()
        for index in (self._by_tenant, self._by_vendor):
            for item in _query(
                self._client,
                TableName=self._table,
                IndexName=index.name,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": index.partition.name},
                ExpressionAttributeValues={":pk": to_value(party_id)},
            ):
                candidates.add(from_item(item)[WORK_ORDERS.partition.name])
        # The indexes lag the table: re-read each candidate consistently, so a WO that just
        # closed or changed hands is never offered as an open context.
        found: list[WorkOrder] = []
        for wo_id in sorted(candidates):
            wo = self.get(wo_id)
            if wo is not None and wo.in_conversation and party_id in (wo.tenant_id, wo.vendor_id):
                found.append(wo)
        return found

    def open_for_property(self, property_id: str, limit: int) -> tuple[list[WorkOrder], int]:
        """Up to ``limit`` of the property's open WOs, by id, each re-read consistently (the
        index lags the table), and how many the index holds in all (the rest are not read)."""
        ids = [
            from_item(item)[WORK_ORDERS.partition.name]
            for item in _query(
                self._client,
                TableName=self._table,
                IndexName=self._by_property.name,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": self._by_property.partition.name},
                ExpressionAttributeValues={":pk": to_value(property_id)},
            )
        ]
        found: list[WorkOrder] = []
        gone = 0
        for wo_id in sorted(ids):
            if len(found) >= limit:
                break
            wo = self.get(wo_id)
            if wo is not None and wo.is_open and wo.property_id == property_id:
                found.append(wo)
            else:
                gone += 1
        return found, len(ids) - gone

    def listed(
        self, statuses: frozenset[WorkOrderStatus] | None, property_id: str | None
    ) -> tuple[list[WorkOrder], WoListRead]:
        """For operators (`maestro wo list`), not a hot path: the WOs in ``statuses`` (None:
        any) of ``property_id`` (None: any), oldest first, and how they were read. A property's
        unfinished WOs come from its ``open_by_property`` index (a Query, each re-read
        consistently); anything else is a paged, consistent Scan filtered by the table."""
        if (
            property_id is not None
            and statuses is not None
            and statuses.isdisjoint(TERMINAL_STATUSES)
        ):
            ids = [
                from_item(item)[WORK_ORDERS.partition.name]
                for item in _query(
                    self._client,
                    TableName=self._table,
                    IndexName=self._by_property.name,
                    KeyConditionExpression="#pk = :pk",
                    ExpressionAttributeNames={"#pk": self._by_property.partition.name},
                    ExpressionAttributeValues={":pk": to_value(property_id)},
                )
            ]
            read = [wo for wo_id in sorted(set(ids)) if (wo := self.get(wo_id)) is not None]
            how: WoListRead = "open_by_property index"
        else:
            read = [_load(WorkOrder, item) for item in self._scan(statuses, property_id)]
            how = "scan"
        found = [
            wo
            for wo in read
            if (statuses is None or wo.status in statuses)
            and (property_id is None or wo.property_id == property_id)
        ]
        return sorted(found, key=lambda wo: (wo.created_at, wo.wo_id)), how

    def _scan(
        self, statuses: frozenset[WorkOrderStatus] | None, property_id: str | None
    ) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {"TableName": self._table, "ConsistentRead": True}
        filters: list[str] = []
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        if statuses is not None:
            names["#status"] = "status"
            keys = [f":s{n}" for n in range(len(statuses))]
            values |= {k: to_value(s.value) for k, s in zip(keys, sorted(statuses), strict=True)}
            filters.append(f"#status IN ({', '.join(keys)})")
        if property_id is not None:
            names["#property"] = "property_id"
            values[":property"] = to_value(property_id)
            filters.append("#property = :property")
        if filters:
            kwargs |= {
                "FilterExpression": " AND ".join(filters),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        while True:
            page = self._client.scan(**kwargs)
            yield from page.get("Items", [])
            if not page.get("LastEvaluatedKey"):
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _item(self, wo: WorkOrder) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if wo.in_conversation:
            extra[self._by_tenant.partition.name] = wo.tenant_id
            # None (no vendor yet) is dropped by to_item: the vendor index stays sparse.
            extra[self._by_vendor.partition.name] = wo.vendor_id
        if wo.is_open:
            # A PM manages open work (a finished WO awaiting its rating is the tenant's to rate).
            extra[self._by_property.partition.name] = wo.property_id
        return _model_item(wo, **extra)


# ---------------------------------------------------------------------------------------------
# WO timelines: create-once typed entries.
# ---------------------------------------------------------------------------------------------


class DynamoTimeline(Timeline):
    """Each WO's timeline: one item per entry, keyed (wo_id, entry_id), put only if absent."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._pk = TIMELINE.partition.name
        self._sk = _sort_name(TIMELINE)

    def append(self, entry: TimelineEntry) -> bool:
        try:
            _conditional_put(
                self._client,
                self._table,
                _model_item(entry),
                "attribute_not_exists(#pk)",
                {"#pk": self._pk},
                None,
                AlreadyExistsError,
            )
        except AlreadyExistsError:
            return False
        return True

    def get(self, wo_id: str, entry_id: str) -> TimelineEntry | None:
        item = _get(self._client, self._table, {self._pk: wo_id, self._sk: entry_id})
        return self._decode(item) if item else None

    def for_wo(self, wo_id: str) -> list[TimelineEntry]:
        entries = [
            self._decode(item)
            for item in _query(
                self._client,
                TableName=self._table,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": self._pk},
                ExpressionAttributeValues={":pk": to_value(wo_id)},
                ConsistentRead=True,
            )
        ]
        return sorted(entries, key=lambda e: (e.at, e.entry_id))

    @staticmethod
    def _decode(item: dict[str, Any]) -> TimelineEntry:
        return TIMELINE_ENTRY.validate_python(from_item(item))


# ---------------------------------------------------------------------------------------------
# Pending clarifications and held confirmations, one table, expired by TTL.
# ---------------------------------------------------------------------------------------------

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
        self._by_party = _index(PENDING, "by_party")
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
            _sort_name(self._by_party): f"{_sort_time(created)}#{pending_id}",
            # Rounded up so TTL never deletes an item before it has expired (and been marked so).
            self._ttl: math.ceil((expires + PENDING_RETENTION).timestamp()),
        }
        if not create_once:
            self._client.put_item(TableName=self._table, Item=_model_item(model, **extra))
            return
        _conditional_put(
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
