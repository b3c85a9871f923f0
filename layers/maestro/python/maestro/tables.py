"""Every DynamoDB table maestro uses: key schemas, indexes and TTL, defined once.

The CDK stack and the embedded local stack both build their tables from these specs, and the
adapters read key names from them, so the three cannot drift apart. Pure data: no boto3 here.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

KeyType = Literal["S", "N"]


class Key(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    type: KeyType = "S"


class Index(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    partition: Key
    sort: Key | None = None
    keys_only: bool = Field(
        default=False,
        description="Project only the keys: the index is written only when its keys change, "
        "not on every write of the item",
    )


class TableSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    logical_name: str = Field(description="Settings and CDK refer to the table by this name")
    partition: Key
    sort: Key | None = None
    indexes: tuple[Index, ...] = ()
    ttl_attribute: str | None = None
    purpose: str = ""

    @property
    def sort_name(self) -> str:
        if self.sort is None:
            raise ValueError(f"{self.logical_name} has no sort key")
        return self.sort.name

    def key_attributes(self) -> dict[str, KeyType]:
        keys = [self.partition, *([self.sort] if self.sort else [])]
        for index in self.indexes:
            keys += [index.partition, *([index.sort] if index.sort else [])]
        return {k.name: k.type for k in keys}

    def create_table_kwargs(self, table_name: str) -> dict[str, Any]:
        """Arguments for boto3 ``create_table`` (the local stack and tests use this)."""
        schema = [{"AttributeName": self.partition.name, "KeyType": "HASH"}]
        if self.sort:
            schema.append({"AttributeName": self.sort.name, "KeyType": "RANGE"})
        kwargs: dict[str, Any] = {
            "TableName": table_name,
            "KeySchema": schema,
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": kind}
                for name, kind in self.key_attributes().items()
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if self.indexes:
            kwargs["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": [
                        {"AttributeName": index.partition.name, "KeyType": "HASH"},
                        *(
                            [{"AttributeName": index.sort.name, "KeyType": "RANGE"}]
                            if index.sort
                            else []
                        ),
                    ],
                    "Projection": {"ProjectionType": "KEYS_ONLY" if index.keys_only else "ALL"},
                }
                for index in self.indexes
            ]
        return kwargs


RETENTION_DAYS: dict[str, int] = {"messages": 90, "decisions": 730, "ledger": 365}
"""How long each table keeps what a person wrote or was sent before DynamoDB's TTL deletes it,
by default (``MAESTRO_<TABLE>_RETENTION_DAYS`` overrides, set per environment by cdk.json's
``<table>_retention_days``; docs/erase-and-retention.md)."""

TTL_ATTRIBUTE = "expires_at_epoch"


def expires_at_epoch(at: datetime, days: int) -> int | None:
    """The TTL attribute's value for a record made ``at`` and kept ``days`` days; None (no
    attribute: kept until erased) when ``days`` is 0."""
    return int((at + timedelta(days=days)).timestamp()) if days > 0 else None


MESSAGES = TableSpec(
    logical_name="messages",
    partition=Key(name="message_id"),
    ttl_attribute=TTL_ATTRIBUTE,
    purpose="Every message by provider id: inbound ones (a redelivery is the same item, so the "
    "conditional put dedupes) and outbound delivery status; expired by TTL (retention).",
)

SENDS = TableSpec(
    logical_name="sends",
    partition=Key(name="idempotency_key"),
    ttl_attribute="expires_at_epoch",
    purpose="Outbound send records, one per action key: claimed before Twilio is called, the "
    "SID recorded after (or the failure), so a retried action never texts twice.",
)

CONVERSATIONS = TableSpec(
    logical_name="conversations",
    partition=Key(name="conversation_id"),
    sort=Key(name="item"),
    indexes=(
        # Sparse: only a 'meta' with messages waiting for a flush carries these, so "which
        # conversations have waited too long" (the stranded sweep) is a Query per day. Keys
        # only: the index changes when a wait starts or ends, not on every message.
        Index(
            name="unflushed_by_day",
            partition=Key(name="unflushed_day"),
            sort=Key(name="unflushed_key"),
            keys_only=True,
        ),
    ),
    ttl_attribute="expires_at_epoch",
    purpose="Per conversation: 'meta' (seq, first_unflushed_at, last_inbound_at, flush counter), "
    "'msg#<seq>' the buffered messages in order (read back with a consistent query), "
    "'flush#<n>' claims (the messages one package holds), and 'lease' (one package at a time). "
    "Partitions 'throttle#<key>' hold page-throttle windows, expired by TTL; "
    "'consent#<hash of the phone>' a phone's SMS opt-out state (no TTL; an erase keeps it).",
)

DECISIONS = TableSpec(
    logical_name="decisions",
    partition=Key(name="package_id"),
    sort=Key(name="decision_id"),
    indexes=(
        Index(
            name="by_conversation",
            partition=Key(name="conversation_id"),
            sort=Key(name="recorded_key"),
        ),
        # Sparse: only completion lines carry these, so "packages completed in a time range"
        # (the sweeper's question) is a Query per day and shard: the key is "<day>#<shard>"
        # (completion_day_key), so no one partition takes every package of a day.
        Index(
            name="completions_by_day",
            partition=Key(name="completed_day"),
            sort=Key(name="completed_key"),
        ),
    ),
    ttl_attribute=TTL_ATTRIBUTE,
    purpose="The append-only MaestroDecision log: put only if absent, never updated or deleted "
    "but by an erase (text → a marker, docs/erase-and-retention.md) and by TTL (retention).",
)

COMPLETION_SHARDS = 2
"""How many partitions of ``completions_by_day`` a day's completions spread over, by default
(``MAESTRO_COMPLETION_SHARDS``, cdk.json's ``completion_shards``). Each takes half of a day's
writes: 1,000 packages/s are 500 writes/s a partition, half of DynamoDB's limit. Readers query
every shard (each sweep pays half a read unit a shard, whatever it finds): raise it past 1,000
packages/s, never lower it (rows in a dropped shard go unread)."""


def completion_shard(package_id: str, shards: int) -> int:
    """The package's shard: a stable hash of its id (not Python's, which is salted)."""
    return int.from_bytes(hashlib.sha256(package_id.encode()).digest()[:4], "big") % shards


def completion_day_key(day: date, package_id: str, shards: int) -> str:
    """The ``completions_by_day`` partition a package completed on ``day`` is written to."""
    return f"{day.isoformat()}#{completion_shard(package_id, shards)}"


def completion_day_keys(day: date, shards: int, *, unsharded: bool = True) -> tuple[str, ...]:
    """Every partition a reader of ``day`` queries: each shard, and (``unsharded``) the day
    alone, which the lines written before sharding carry."""
    sharded = tuple(f"{day.isoformat()}#{shard}" for shard in range(shards))
    return (day.isoformat(), *sharded) if unsharded else sharded


STATE = TableSpec(
    logical_name="state",
    partition=Key(name="wo_id"),
    purpose="MaestroState snapshots, WO-keyed, written with optimistic concurrency on version.",
)

WORK_ORDERS = TableSpec(
    logical_name="work_orders",
    partition=Key(name="wo_id"),
    indexes=(
        # Sparse: the attributes exist only while the WO is open: "party → open WOs".
        Index(name="open_by_tenant", partition=Key(name="open_tenant_id"), sort=Key(name="wo_id")),
        Index(name="open_by_vendor", partition=Key(name="open_vendor_id"), sort=Key(name="wo_id")),
        # Keys only: a PM's contexts are read back consistently from the table by id anyway.
        Index(
            name="open_by_property",
            partition=Key(name="open_property_id"),
            sort=Key(name="wo_id"),
            keys_only=True,
        ),
    ),
    purpose="Work orders (the default WO store), versioned, with party → open WOs and "
    "property → open WOs indexes.",
)

TIMELINE = TableSpec(
    logical_name="timeline",
    partition=Key(name="wo_id"),
    sort=Key(name="entry_id"),
    purpose="Each work order's timeline: typed entries (note, visit, rating, status) with who, "
    "when, the package and the decision; create-once by a deterministic entry id.",
)

PENDING = TableSpec(
    logical_name="pending",
    partition=Key(name="pending_id"),
    indexes=(
        Index(name="by_party", partition=Key(name="party_key"), sort=Key(name="created_key")),
    ),
    ttl_attribute="expires_at_epoch",
    purpose="Pending clarifications and held confirmations, expired by DynamoDB TTL.",
)

PARTIES = TableSpec(
    logical_name="parties",
    partition=Key(name="phone"),
    indexes=(Index(name="by_party_id", partition=Key(name="party_id")),),
    purpose="The party directory: phone (E.164) → party.",
)

DIRECTORY = TableSpec(
    logical_name="directory",
    partition=Key(name="pk"),
    sort=Key(name="sk"),
    purpose="The directory (docs/directory.md): properties and their units, people, vendors, "
    "on-call shifts by property (sorted by start) and vendor coverage by property and trade "
    "(sorted by rank). Phone → party is the parties table, written from it by the importer.",
)

GATES = TableSpec(
    logical_name="gates",
    partition=Key(name="execution_id"),
    sort=Key(name="gate_key"),
    ttl_attribute="expires_at_epoch",
    purpose="Paused step gates and their task tokens, for `maestro step` and the eval executor.",
)

DISPATCH = TableSpec(
    logical_name="dispatch",
    partition=Key(name="wo_id"),
    indexes=(
        # Sparse: only a run with an open wait carries it: "whose answer does a WO execution
        # wait for" (a vendor's open offer, a PM's approval, a tenant's details) is one Query.
        Index(
            name="waiting_by_party", partition=Key(name="waiting_party_id"), sort=Key(name="wo_id")
        ),
    ),
    purpose="Each work order's dispatch run (docs/dispatch.md): the gathered details, the "
    "judgment, every offer and its outcome, and the open wait with its task token; versioned.",
)

LEDGER = TableSpec(
    logical_name="ledger",
    partition=Key(name="package_id"),
    sort=Key(name="row_id"),
    indexes=(Index(name="by_wo", partition=Key(name="wo_id"), sort=Key(name="row_id")),),
    ttl_attribute=TTL_ATTRIBUTE,
    purpose="The honesty ledger: one Evidence or Shame row per claim (the event id) or missing "
    "event, written once by the watcher and the sweeper; by package, and by WO (sparse).",
)

IDEMPOTENCY = TableSpec(
    logical_name="idempotency",
    partition=Key(name="id"),
    ttl_attribute="expiration",
    purpose="Powertools idempotency records for the act step (key: package id + action index).",
)

ALL_TABLES: tuple[TableSpec, ...] = (
    MESSAGES,
    SENDS,
    CONVERSATIONS,
    DECISIONS,
    STATE,
    WORK_ORDERS,
    TIMELINE,
    PENDING,
    PARTIES,
    DIRECTORY,
    GATES,
    DISPATCH,
    IDEMPOTENCY,
    LEDGER,
)
