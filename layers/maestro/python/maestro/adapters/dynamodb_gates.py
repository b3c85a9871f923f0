"""Paused step gates on DynamoDB."""

from __future__ import annotations

from datetime import timedelta

from maestro.adapters.ddb import DynamoDBClient, from_item, scan_all, to_item, to_value
from maestro.ports.workflows import Gate
from maestro.tables import GATES

GATE_RETENTION = timedelta(days=1)  # a gate outlives the state machine's own one-day timeout


def _gate_key(gate: str, index: int | None) -> str:
    return gate if index is None else f"{gate}#{index:04d}"


class DynamoGateStore:
    """:class:`maestro.ports.workflows.GateStore`."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._ddb = client
        self._table = table_name

    def put(self, gate: Gate) -> None:
        expires = gate.paused_at + GATE_RETENTION
        self._ddb.put_item(
            TableName=self._table,
            Item=to_item(
                {
                    **gate.model_dump(mode="json"),
                    GATES.sort_name: _gate_key(gate.gate, gate.index),
                    "expires_at_epoch": int(expires.timestamp()),
                }
            ),
        )

    def open_gates(self) -> list[Gate]:
        # few gates are ever open at once: a scan is the honest tool here
        items = [
            from_item(i) for i in scan_all(self._ddb, TableName=self._table, ConsistentRead=True)
        ]
        gates = [Gate.model_validate({k: i.get(k) for k in Gate.model_fields}) for i in items]
        return sorted(gates, key=lambda g: (g.paused_at, g.execution_id))

    def remove(self, execution_id: str, gate: str, index: int | None) -> None:
        self._ddb.delete_item(
            TableName=self._table,
            Key={
                GATES.partition.name: to_value(execution_id),
                GATES.sort_name: to_value(_gate_key(gate, index)),
            },
        )
