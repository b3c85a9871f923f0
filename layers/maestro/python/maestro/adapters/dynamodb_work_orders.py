"""Work orders on DynamoDB (``maestro.tables.WORK_ORDERS``): create-once, versioned updates,
sparse "open for party" indexes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from maestro.adapters.ddb import DynamoDBClient, from_item, to_value
from maestro.adapters.ddb import consistent_get as _get
from maestro.adapters.ddb import load_model as _load
from maestro.adapters.ddb import model_item as _model_item
from maestro.adapters.ddb import query_all as _query
from maestro.adapters.ddb import scan_all as _scan_all
from maestro.adapters.dynamodb_writes import (
    check_next_version,
    conditional_put,
    index_named,
    versioned_put,
)
from maestro.domain.models import TERMINAL_STATUSES, WorkOrder, WorkOrderStatus
from maestro.ports.stores import AlreadyExistsError, WorkOrderStore
from maestro.tables import WORK_ORDERS

__all__ = ["DynamoWorkOrderStore", "WoListRead"]

WoListRead = Literal["open_by_property index", "scan"]
"""How `maestro wo list` read the work orders it lists."""


class DynamoWorkOrderStore(WorkOrderStore):
    """The default WO store. WOs still in conversation (open, or awaiting a rating) carry the
    sparse index attributes; the rest don't."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._by_tenant = index_named(WORK_ORDERS, "open_by_tenant")
        self._by_vendor = index_named(WORK_ORDERS, "open_by_vendor")
        self._by_property = index_named(WORK_ORDERS, "open_by_property")

    def get(self, wo_id: str) -> WorkOrder | None:
        item = _get(self._client, self._table, {WORK_ORDERS.partition.name: wo_id})
        return _load(WorkOrder, item) if item else None

    def create(self, wo: WorkOrder) -> None:
        conditional_put(
            self._client,
            self._table,
            self._item(wo),
            "attribute_not_exists(#pk)",
            {"#pk": WORK_ORDERS.partition.name},
            None,
            AlreadyExistsError,
        )

    def update(self, wo: WorkOrder, expected_version: int) -> None:
        check_next_version(wo.version, expected_version)
        # A whole-item put (not UpdateItem), so a closing WO simply loses its index attributes.
        versioned_put(self._client, self._table, WORK_ORDERS, self._item(wo), expected_version)

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
        return _scan_all(self._client, **kwargs)

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
