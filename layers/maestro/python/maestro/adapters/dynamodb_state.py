"""Each work order's MaestroState snapshot on DynamoDB (``maestro.tables.STATE``), versioned."""

from __future__ import annotations

from maestro.adapters.ddb import DynamoDBClient
from maestro.adapters.ddb import consistent_get as _get
from maestro.adapters.ddb import load_model as _load
from maestro.adapters.ddb import model_item as _model_item
from maestro.adapters.dynamodb_writes import check_next_version, versioned_put
from maestro.domain.records import MaestroState
from maestro.ports.stores import StateStore
from maestro.tables import STATE

__all__ = ["DynamoStateStore"]


class DynamoStateStore(StateStore):
    """MaestroState snapshots, one per work order, versioned."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, wo_id: str) -> MaestroState | None:
        item = _get(self._client, self._table, {STATE.partition.name: wo_id})
        return _load(MaestroState, item) if item else None

    def put(self, state: MaestroState, expected_version: int | None) -> None:
        check_next_version(state.version, expected_version)
        versioned_put(self._client, self._table, STATE, _model_item(state), expected_version)
