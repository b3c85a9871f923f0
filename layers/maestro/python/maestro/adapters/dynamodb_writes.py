"""What the DynamoDB memory stores share: conditional and versioned puts, sort-key names and times.

Every lost condition becomes a port error; any other ClientError propagates untouched.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.ddb import DynamoDBClient, is_conditional_failure, to_value
from maestro.ports.stores import AlreadyExistsError, StaleVersionError
from maestro.tables import Index, TableSpec

__all__ = [
    "ConflictFactory",
    "check_next_version",
    "conditional_put",
    "index_named",
    "sort_key_name",
    "sort_time",
    "versioned_put",
]


ConflictFactory = type[AlreadyExistsError] | type[StaleVersionError]


def sort_time(at: datetime) -> str:
    """A fixed-width UTC ISO time, so string order is time order in sort keys."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def index_named(spec: TableSpec, name: str) -> Index:
    return next(index for index in spec.indexes if index.name == name)


def sort_key_name(keyed: TableSpec | Index) -> str:
    if keyed.sort is None:  # pragma: no cover - the specs are static
        raise RuntimeError(f"{keyed} needs a sort key")
    return keyed.sort.name


def conditional_put(
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


def versioned_put(
    client: DynamoDBClient,
    table_name: str,
    spec: TableSpec,
    item: dict[str, Any],
    expected_version: int | None,
) -> None:
    """Put ``item`` only if the stored version is ``expected_version`` (None: no item yet)."""
    if expected_version is None:
        conditional_put(
            client,
            table_name,
            item,
            "attribute_not_exists(#pk)",
            {"#pk": spec.partition.name},
            None,
            StaleVersionError,
        )
        return
    conditional_put(
        client,
        table_name,
        item,
        "#version = :expected",
        {"#version": "version"},
        {":expected": expected_version},
        StaleVersionError,
    )


def check_next_version(version: int, expected_version: int | None) -> None:
    # A caller handing the wrong version is a bug, not a race: refuse before writing.
    wanted = 1 if expected_version is None else expected_version + 1
    if version != wanted:
        raise ValueError(f"version must be {wanted} after {expected_version}, got {version}")
