"""The honesty ledger on DynamoDB: one item per Evidence or Shame row, put only if absent,
keyed (package id, row id), with a sparse ``by_wo`` index for a WO's rows. A missing_event row
resolved by its late event gets its resolution once (a conditional update); it is never
deleted."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.ddb import (
    DynamoDBClient,
    from_item,
    is_conditional_failure,
    query_all,
    scan_all,
    to_item,
    to_value,
)
from maestro.domain.ledger import LedgerRow, Resolution
from maestro.domain.records import SweepMark
from maestro.tables import LEDGER, RETENTION_DAYS, TTL_ATTRIBUTE, expires_at_epoch

__all__ = ["WATERMARK_PARTITION", "DynamoLedger", "DynamoSweepWatermark"]

_DOC = "doc"
_RESOLVED_BY = "resolved_by"
WATERMARK_PARTITION = "sweeper#watermark"
"""The ledger's one item that is not a row: where the sweeper stopped (no package id has a
'#')."""
_MARK_KEY = "mark_key"


class DynamoLedger:
    """:class:`maestro.ports.evidence.Ledger`."""

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        *,
        retention_days: int = RETENTION_DAYS["ledger"],
    ) -> None:
        self._retention_days = retention_days
        self._ddb = client
        self._table = table_name
        self._pk = LEDGER.partition.name
        self._sk = LEDGER.sort_name
        self._by_wo = LEDGER.indexes[0]

    def record(self, row: LedgerRow) -> bool:
        item = {
            self._pk: row.package_id,
            self._sk: row.row_id,
            "verdict": row.verdict,
            "kind": row.kind,
            "event_type": row.event_type,
            self._by_wo.partition.name: row.wo_id,  # absent (sparse) when None
            "checked_at": row.checked_at.isoformat(),
            _DOC: row.model_dump_json(),
            TTL_ATTRIBUTE: expires_at_epoch(row.checked_at, self._retention_days),
        }
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item=to_item(item),
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": self._pk},
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def resolve(self, row: LedgerRow, resolution: Resolution) -> bool:
        resolved = LedgerRow.model_validate({**row.model_dump(), "resolution": resolution})
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={self._pk: to_value(row.package_id), self._sk: to_value(row.row_id)},
                UpdateExpression="SET #doc = :doc, #by = :by",
                ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(#by)",
                ExpressionAttributeNames={"#pk": self._pk, "#doc": _DOC, "#by": _RESOLVED_BY},
                ExpressionAttributeValues={
                    ":doc": to_value(resolved.model_dump_json()),
                    ":by": to_value(resolution.row_id),
                },
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True

    def get(self, package_id: str, row_id: str) -> LedgerRow | None:
        item = self._ddb.get_item(
            TableName=self._table,
            Key={self._pk: to_value(package_id), self._sk: to_value(row_id)},
            ConsistentRead=True,
        ).get("Item")
        return self._decode(item) if item else None

    def for_package(self, package_id: str, *, consistent: bool = True) -> list[LedgerRow]:
        return self._query(
            KeyConditionExpression="#pk = :v",
            ExpressionAttributeNames={"#pk": self._pk},
            ExpressionAttributeValues={":v": to_value(package_id)},
            ConsistentRead=consistent,
        )

    def for_wo(self, wo_id: str) -> list[LedgerRow]:
        return self._query(
            IndexName=self._by_wo.name,
            KeyConditionExpression="#pk = :v",
            ExpressionAttributeNames={"#pk": self._by_wo.partition.name},
            ExpressionAttributeValues={":v": to_value(wo_id)},
        )

    def scan(self) -> list[LedgerRow]:
        """Every row (all pages): for operators and the embedded stack, not for a hot path."""
        return self._collect(scan_all(self._ddb, TableName=self._table, ConsistentRead=True))

    def _query(self, **kwargs: Any) -> list[LedgerRow]:
        return self._collect(query_all(self._ddb, TableName=self._table, **kwargs))

    def _collect(self, items: Iterable[dict[str, Any]]) -> list[LedgerRow]:
        rows = [
            self._decode(item)
            for item in items
            if item[self._pk] != {"S": WATERMARK_PARTITION}  # not a row: the sweeper's mark
        ]
        return sorted(rows, key=lambda r: (r.checked_at, r.row_id))

    @staticmethod
    def _decode(item: dict[str, Any]) -> LedgerRow:
        return LedgerRow.model_validate_json(from_item({_DOC: item[_DOC]})[_DOC])


class DynamoSweepWatermark:
    """:class:`maestro.ports.evidence.SweepWatermark` as one item of the ledger table (the sweeper
    writes only the ledger). ``mark_key`` is the completions index's sort key of the mark, so
    "never back" is one string comparison in the condition."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._ddb = client
        self._table = table_name
        self._key = {
            LEDGER.partition.name: to_value(WATERMARK_PARTITION),
            LEDGER.sort_name: to_value("watermark"),
        }

    def read(self) -> SweepMark | None:
        # Eventually consistent (half a unit): a mark a second stale re-checks one page, which
        # writes nothing twice.
        item = self._ddb.get_item(TableName=self._table, Key=self._key).get("Item")
        return SweepMark.model_validate_json(from_item({_DOC: item[_DOC]})[_DOC]) if item else None

    def advance(self, mark: SweepMark) -> bool:
        key = f"{mark.recorded_at.astimezone(UTC).isoformat(timespec='microseconds')}#"
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key,
                UpdateExpression="SET #doc = :doc, #mark = :mark",
                ConditionExpression="attribute_not_exists(#mark) OR #mark < :mark",
                ExpressionAttributeNames={"#doc": _DOC, "#mark": _MARK_KEY},
                ExpressionAttributeValues={
                    ":doc": to_value(mark.model_dump_json()),
                    ":mark": to_value(key + mark.package_id),
                },
            )
        except ClientError as error:
            if is_conditional_failure(error):
                return False
            raise
        return True
