"""moto, made safe to call from many threads and fast enough to take a load.

The embedded stack is called at once by the loopback server's request threads, its clock, and
Step Functions' execution threads. moto's backends are plain dicts, not thread-safe: a DynamoDB
transaction deep-copies its tables while another thread writes to them ("dictionary changed
size during iteration"), and a condition checked in one thread can be overtaken by another's
write before it writes. So:

- **One AWS call at a time.** Each mocked call holds one lock for its own length, which makes it
  atomic as each DynamoDB request is in the cloud, and never longer: no lock is held across a
  pipeline step, a webhook or a clock tick. A Lambda invoke is the exception: the handler behind
  it is maestro's own code, which makes AWS calls of its own (each then takes the lock).
- **Transactions back up the items they touch, not their tables.** moto deep-copies every table
  a TransactWriteItems names, to roll back a cancelled one: a write cost that grows with the
  table (34 ms per inbound SMS at 200 stored messages, 237 ms at 1,200, measured). The items a
  transaction names are all it can change, so they are what is kept and put back.
"""

from __future__ import annotations

import copy
import re
import threading
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

_LAMBDA_INVOKE = re.compile(r"^/2015-03-31/functions/[^/]+/invocations$")


@contextmanager
def thread_safe_moto() -> Iterator[threading.RLock]:
    """Within the block: every mocked AWS call but a Lambda invoke holds one lock, and
    DynamoDB transactions roll back item by item."""
    with ExitStack() as stack:
        lock = stack.enter_context(_serialized_calls())
        stack.enter_context(_item_level_transactions())
        yield lock


@contextmanager
def _serialized_calls() -> Iterator[threading.RLock]:
    from moto.core.botocore_stubber import BotocoreStubber

    lock = threading.RLock()  # re-entrant: a call that makes another in the same thread
    original = BotocoreStubber.__call__

    def call(self: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
        if _LAMBDA_INVOKE.match(urlsplit(request.url).path):
            return original(self, event_name, request, **kwargs)
        with lock:
            return original(self, event_name, request, **kwargs)

    with mock.patch.object(BotocoreStubber, "__call__", call):
        yield lock


@contextmanager
def _item_level_transactions() -> Iterator[None]:
    from moto.dynamodb import models as ddb_models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    original = ddb_models.DynamoDBBackend.transact_write_items

    def deepcopy(value: Any, memo: Any = None) -> Any:
        # The table "backup" moto takes is the table itself: rolling back to it is a no-op,
        # and the items below are put back instead.
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def slot(table: Table, key: dict[str, Any]) -> tuple[Any, Any]:
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        return hash_value, range_value

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        kept: list[tuple[Table, Any, Any, Any]] = []
        for entry in transact_items:
            for op_type, op in entry.items():
                table = self.tables.get(op.get("TableName"))
                source = op.get("Item") if op_type == "Put" else op.get("Key")
                try:
                    hash_value, range_value = slot(table, source)
                except (AttributeError, KeyError, TypeError):
                    continue  # an invalid request: moto refuses it before writing anything
                current = table.items.get(hash_value)
                if range_value is not None:
                    current = (current or {}).get(range_value)
                kept.append((table, hash_value, range_value, copy.deepcopy(current)))
        try:
            original(self, transact_items)
        except Exception:
            for table, hash_value, range_value, item in reversed(kept):
                _put_back(table, hash_value, range_value, item)
            raise

    light_copy = types.SimpleNamespace(deepcopy=deepcopy, copy=copy.copy)
    with (
        mock.patch.object(ddb_models, "copy", light_copy),
        mock.patch.object(ddb_models.DynamoDBBackend, "transact_write_items", transact_write_items),
    ):
        yield


def _put_back(table: Any, hash_value: Any, range_value: Any, item: Any) -> None:
    if range_value is None:
        if item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item
        return
    if item is None:
        partition = table.items.get(hash_value)
        if partition is not None:
            partition.pop(range_value, None)
            if not partition:
                del table.items[hash_value]
    else:
        table.items[hash_value][range_value] = item
