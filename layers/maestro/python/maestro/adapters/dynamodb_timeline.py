"""Each work order's timeline on DynamoDB (``maestro.tables.TIMELINE``): create-once entries."""

from __future__ import annotations

from typing import Any

from maestro.adapters.ddb import DynamoDBClient, from_item, to_value
from maestro.adapters.ddb import consistent_get as _get
from maestro.adapters.ddb import model_item as _model_item
from maestro.adapters.ddb import query_all as _query
from maestro.adapters.dynamodb_writes import conditional_put, sort_key_name
from maestro.domain.timeline import TIMELINE_ENTRY, TimelineEntry
from maestro.ports.stores import AlreadyExistsError, Timeline
from maestro.tables import TIMELINE

__all__ = ["DynamoTimeline"]


class DynamoTimeline(Timeline):
    """Each WO's timeline: one item per entry, keyed (wo_id, entry_id), put only if absent."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._pk = TIMELINE.partition.name
        self._sk = sort_key_name(TIMELINE)

    def append(self, entry: TimelineEntry) -> bool:
        try:
            conditional_put(
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
