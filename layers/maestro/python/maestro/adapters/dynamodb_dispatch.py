"""Each work order's dispatch run on DynamoDB (``maestro.tables.DISPATCH``)."""

from __future__ import annotations

from typing import Any

from maestro.adapters.ddb import (
    DynamoDBClient,
    consistent_get,
    from_item,
    query_all,
    to_item,
    to_value,
)
from maestro.adapters.dynamodb_writes import check_next_version, conditional_put
from maestro.domain.dispatch import DispatchRun
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro.tables import DISPATCH

__all__ = ["DynamoDispatchStore"]

_WAITING = next(i for i in DISPATCH.indexes if i.name == "waiting_by_party")
_DOC = "doc"


class DynamoDispatchStore:
    """:class:`maestro.ports.stores.DispatchStore`. The whole run is one JSON document (readable in
    the console) beside its key, version, step and, while it waits, the waiting party (the sparse
    index): a whole-item put, so an answered wait simply leaves the index."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._ddb = client
        self._table = table_name

    def get(self, wo_id: str) -> DispatchRun | None:
        item = consistent_get(self._ddb, self._table, {DISPATCH.partition.name: wo_id})
        if item is None:
            return None
        return DispatchRun.model_validate_json(from_item(item)[_DOC])

    def put(self, run: DispatchRun, expected_version: int | None) -> None:
        check_next_version(run.version, expected_version)
        attributes: dict[str, Any] = {
            DISPATCH.partition.name: run.wo_id,
            "version": run.version,
            "step": run.step,
            _DOC: run.model_dump_json(),
        }
        if run.waiting is not None:
            attributes[_WAITING.partition.name] = run.waiting.party_id
        if expected_version is None:
            condition, names, values = "attribute_not_exists(#pk)", {"#pk": "wo_id"}, None
            error: type[AlreadyExistsError] | type[StaleVersionError] = AlreadyExistsError
        else:
            condition, names = "#version = :expected", {"#version": "version"}
            values, error = {":expected": expected_version}, StaleVersionError
        conditional_put(
            self._ddb, self._table, to_item(attributes), condition, names, values, error
        )

    def waiting_for(self, party_id: str) -> list[DispatchRun]:
        ids = sorted(
            from_item(item)[DISPATCH.partition.name]
            for item in query_all(
                self._ddb,
                TableName=self._table,
                IndexName=_WAITING.name,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": _WAITING.partition.name},
                ExpressionAttributeValues={":pk": to_value(party_id)},
            )
        )
        # The index lags the table: re-read each consistently, keep those still waiting on them.
        found: list[DispatchRun] = []
        for wo_id in ids:
            run = self.get(wo_id)
            if run is not None and run.waiting is not None and run.waiting.party_id == party_id:
                found.append(run)
        return found
