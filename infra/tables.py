"""maestro's memory: one DynamoDB table per ``maestro.tables`` spec, the same key definitions
the embedded stack creates its tables from. On-demand, encrypted (KMS), point-in-time recovery,
TTL where the spec has one. A function's table settings, and its grants, come from its row in
``maestro.access.FUNCTION_TABLES`` (:meth:`MemoryTables.settings_for`), and from nowhere else."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.config import EnvConfig
from infra.functions import Bound
from maestro.access import tables_of
from maestro.tables import ALL_TABLES, Key, TableSpec

_TYPES = {"S": dynamodb.AttributeType.STRING, "N": dynamodb.AttributeType.NUMBER}


def _attribute(key: Key) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=key.name, type=_TYPES[key.type])


def construct_id(spec: TableSpec) -> str:
    return "".join(part.title() for part in spec.logical_name.split("_")) + "Table"


def make_table(
    scope: Construct, construct_id_: str, spec: TableSpec, config: EnvConfig
) -> dynamodb.Table:
    """One table from its spec: on-demand, encrypted, point-in-time recovery, TTL and indexes
    as the spec says (the embedded stack creates its tables from the same spec)."""
    table = dynamodb.Table(
        scope,
        construct_id_,
        partition_key=_attribute(spec.partition),
        sort_key=_attribute(spec.sort) if spec.sort else None,
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        encryption=dynamodb.TableEncryption.AWS_MANAGED,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        time_to_live_attribute=spec.ttl_attribute,
        deletion_protection=config.retain,
        removal_policy=config.removal,
    )
    for index in spec.indexes:
        table.add_global_secondary_index(
            index_name=index.name,
            partition_key=_attribute(index.partition),
            sort_key=_attribute(index.sort) if index.sort else None,
            projection_type=dynamodb.ProjectionType.KEYS_ONLY
            if index.keys_only
            else dynamodb.ProjectionType.ALL,
        )
    return table


class MemoryTables(Construct):
    """``self.tables[logical_name]`` for every spec in ``maestro.tables.ALL_TABLES``."""

    def __init__(self, scope: Construct, construct_id_: str, *, config: EnvConfig) -> None:
        super().__init__(scope, construct_id_)
        self.tables: dict[str, dynamodb.Table] = {
            spec.logical_name: make_table(self, construct_id(spec), spec, config)
            for spec in ALL_TABLES
        }

    def settings_for(self, function: str) -> dict[str, Bound]:
        """``<table>_table`` settings for each table of ``function``'s row, each bound to the
        grant its access names: ``read`` → read-only data actions, ``write`` → read and write."""
        settings: dict[str, Bound] = {}
        for name, access in tables_of(function).items():
            table = self.tables[name]
            grant = table.grant_read_write_data if access == "write" else table.grant_read_data
            settings[f"{name}_table"] = Bound(table.table_name, grant)
        return settings
