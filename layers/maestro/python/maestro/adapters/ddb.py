"""DynamoDB plumbing shared by the adapters: item (de)serialisation and error classification."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError
from pydantic import BaseModel

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
else:  # the stubs are a dev dependency; at run time any client will do
    DynamoDBClient = Any

__all__ = [
    "DynamoDBClient",
    "UnconfiguredTableError",
    "batch_write",
    "cancellation_codes",
    "consistent_get",
    "from_item",
    "is_conditional_failure",
    "load_model",
    "model_item",
    "query_all",
    "refuse_unconfigured_tables",
    "scan_all",
    "to_item",
    "to_value",
    "unconfigured_table",
]

M = TypeVar("M", bound=BaseModel)

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _decimalise(value: Any) -> Any:
    # DynamoDB numbers must be Decimal; floats are refused by the serialiser.
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _decimalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_decimalise(v) for v in value]
    return value


def _undecimalise(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _undecimalise(v) for k, v in value.items()}
    if isinstance(value, list | set):
        return [_undecimalise(v) for v in value]
    return value


def to_value(value: Any) -> dict[str, Any]:
    """One attribute value in DynamoDB's wire form."""
    return dict(_serializer.serialize(_decimalise(value)))


def to_item(data: dict[str, Any]) -> dict[str, Any]:
    """A JSON-shaped dict (e.g. ``model.model_dump(mode="json")``) → a DynamoDB item.

    None values are left out: DynamoDB sparse indexes rely on absent attributes.
    """
    return {k: to_value(v) for k, v in data.items() if v is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB item → a plain dict with ints and floats instead of Decimals."""
    return {k: _undecimalise(_deserializer.deserialize(v)) for k, v in item.items()}


def is_conditional_failure(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def item_that_failed_the_condition(error: ClientError) -> dict[str, Any] | None:
    """The item as it stood when a write's condition failed (the write asked for it with
    ``ReturnValuesOnConditionCheckFailure="ALL_OLD"``), as plain values; None: there was none."""
    item = cast("dict[str, Any]", error.response).get("Item")
    return from_item(item) if item else None


def cancellation_codes(error: ClientError) -> list[str]:
    """The per-item reasons of a cancelled transaction ("None", "ConditionalCheckFailed"…)."""
    if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    reasons = error.response.get("CancellationReasons", [])
    return [str(r.get("Code", "None")) for r in reasons]


def model_item(model: BaseModel, **extra: Any) -> dict[str, Any]:
    """The model's fields as native attributes (readable in the console), plus ``extra``."""
    return to_item({**model.model_dump(mode="json"), **extra})


def load_model(cls: type[M], item: dict[str, Any], **defaults: Any) -> M:
    """A stored item as ``cls``, ignoring the adapter's own attributes (index keys, TTL);
    ``defaults`` restores fields that to_item left out because they were None."""
    data = {k: v for k, v in from_item(item).items() if k in cls.model_fields}
    return cls.model_validate({**defaults, **data})


def query_all(client: DynamoDBClient, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item a Query yields, across pages."""
    return _all_pages(client.query, kwargs)


def scan_all(client: DynamoDBClient, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item a Scan yields, across pages."""
    return _all_pages(client.scan, kwargs)


def _all_pages(operation: Any, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        page = operation(**kwargs)
        yield from page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last


def consistent_get(
    client: DynamoDBClient, table_name: str, key: dict[str, Any]
) -> dict[str, Any] | None:
    """The item at ``key`` (a strongly consistent read), or None."""
    response = client.get_item(TableName=table_name, Key=to_item(key), ConsistentRead=True)
    item = response.get("Item")
    return dict(item) if item else None


BATCH_WRITE_LIMIT = 25
"""DynamoDB's cap on the requests of one BatchWriteItem."""


def batch_write(
    client: DynamoDBClient,
    table_name: str,
    puts: Iterable[dict[str, Any]] = (),
    deletes: Iterable[dict[str, Any]] = (),
    *,
    max_attempts: int = 8,
) -> int:
    """Put ``puts`` (items) and delete ``deletes`` (keys, in wire form), 25 a request, resending
    what DynamoDB leaves unprocessed (with a growing pause) until none is left; the requests
    sent. A key must not be both put and deleted in one call (DynamoDB refuses such a batch)."""
    requests: list[Any] = [{"PutRequest": {"Item": item}} for item in puts]
    requests += [{"DeleteRequest": {"Key": key}} for key in deletes]
    sent = 0
    for start in range(0, len(requests), BATCH_WRITE_LIMIT):
        pending = requests[start : start + BATCH_WRITE_LIMIT]
        for attempt in range(max_attempts):
            response = client.batch_write_item(RequestItems={table_name: pending})
            sent += 1
            pending = list[Any](response.get("UnprocessedItems", {}).get(table_name, []))
            if not pending:
                break
            time.sleep(min(0.05 * 2**attempt, 2.0))
        else:
            raise RuntimeError(
                f"{table_name}: {len(pending)} writes still unprocessed after {max_attempts} tries"
            )
    return sent


_UNCONFIGURED = "unconfigured:"


class UnconfiguredTableError(RuntimeError):
    """A function called a table its settings do not name (its row in
    ``maestro.access.FUNCTION_TABLES``): refused in the process, before any request, so the
    error names the table and the function instead of surfacing as an IAM AccessDenied."""


def unconfigured_table(logical_name: str, function: str) -> str:
    """What an adapter is given for a table ``function``'s settings do not name: a name no
    DynamoDB table can have, which :func:`refuse_unconfigured_tables` turns into an error."""
    return f"{_UNCONFIGURED}{function}:{logical_name}"


def _table_names(params: dict[str, Any]) -> Iterator[str]:
    if isinstance(params.get("TableName"), str):
        yield params["TableName"]
    for transact_item in params.get("TransactItems", []):
        for operation in transact_item.values():
            yield str(operation.get("TableName", ""))
    yield from (str(name) for name in params.get("RequestItems", {}))


def _refuse(params: dict[str, Any], **_event: Any) -> None:
    for name in _table_names(params):
        if name.startswith(_UNCONFIGURED):
            function, _sep, table = name.removeprefix(_UNCONFIGURED).partition(":")
            raise UnconfiguredTableError(
                f"{function} used the {table} table, which its settings do not name: add "
                f"it to {function}'s row in maestro.access.FUNCTION_TABLES (the stack "
                "configures and grants each function from its row)"
            )


def refuse_unconfigured_tables(client: DynamoDBClient) -> DynamoDBClient:
    """``client``, refusing every call that names an :func:`unconfigured_table` (a botocore
    event handler, registered once per client: harmless to every other call)."""
    client.meta.events.register(
        "provide-client-params.dynamodb.*", _refuse, unique_id="maestro-unconfigured-tables"
    )
    return client
