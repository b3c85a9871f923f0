"""Five of moto's habits that make a long-running embedded stack slower and bigger with every
package, and what the stack does instead. Each is a context manager the stack enters for its
lifetime; leaving it restores moto. (``threads`` works around two more: a transaction's copy of
every table it names, and a key query's walk over the whole table.)

None changes what a caller of moto sees (``tests/integration/test_moto_patches.py`` holds them
to that). All are workarounds for moto 5.2.5, the newest release when written, which has none
of them fixed; they live here, in the devtools, and never in the runtime layer.

1. **Every model object is registered forever.** ``moto.core.common_models.BaseModel.__new__``
   appends each instance to its class's ``instances_tracked`` list, for moto server's dashboard.
   That includes every DynamoDB ``Item`` (each put, each query result's defensive copy), every
   SQS message and every copy of the state machine an execution takes: nothing is ever freed
   until the mock ends (about 7,000 objects a package). The embedded stack has no dashboard, so
   :func:`untracked_models` creates those objects without registering them.

2. **Sending a message counts the queue.** ``SQSBackend.send_message`` reads one attribute of
   the queue (``ContentBasedDeduplication``) through ``Queue.attributes``, which computes all of
   them, three of which walk every message in the queue. The events tap (``domain_events()``)
   is drained only when someone asks, so each domain event published cost more than the one
   before. :func:`uncounted_sends` lets a send skip the counts (it reads none of them);
   ``GetQueueAttributes`` still counts.

3. **An index query reads the whole table.** moto keeps no index: a Query on a global secondary
   index sorts every item of the table and keeps those with the index key asked for. The
   decision log is read by conversation and the sweeper reads completions by day, both through
   an index of a table that grows with every package. :func:`indexed_queries` keeps, per
   global index with one hash attribute, the keys of the items seen with each hash value (put
   and update record them; an index is built from the table on its first query) and hands moto
   only the items still holding that value: moto then checks, sorts, filters and pages them as
   it would have. Keys are only ever added, so a delete needs nothing, nor does a rolled-back
   transaction (it puts an item back as it was, when it was already noted).

4. **Answering a task token trips on a starting execution**:
   :func:`tokens_skip_starting_executions`.

5. **Every request works out its method names again.** Each call's dispatch lists the response
   class's methods (``inspect.getmembers``, about a millisecond) and turns the action's name,
   and every key of some requests, from camel case to snake case character by character: a
   few percent of the test suite's time. Both answers depend on nothing but their argument, so
   :func:`remembered_names` keeps them.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock


@contextmanager
def untracked_models() -> Iterator[None]:
    """moto's model objects are created without being kept in ``instances_tracked``."""
    from moto.core.common_models import BaseModel

    def untracked_new(cls: type, *args: Any, **kwargs: Any) -> Any:  # noqa: ARG001
        # BaseModel.__new__ without the registration: the next __new__ in the MRO, as moto calls.
        return super(BaseModel, cls).__new__(cls)  # type: ignore[misc]

    with mock.patch.object(BaseModel, "__new__", staticmethod(untracked_new)):
        yield


_COUNTS = (
    "approximate_number_of_messages",
    "approximate_number_of_messages_not_visible",
    "approximate_number_of_messages_delayed",
)


@contextmanager
def uncounted_sends() -> Iterator[None]:
    """moto's ``SendMessage`` does not count the queue's messages to read one flag."""
    from moto.sqs.models import Queue, SQSBackend

    local = threading.local()
    original_send = SQSBackend.send_message

    def send_message(self: Any, *args: Any, **kwargs: Any) -> Any:
        local.sending = True
        try:
            return original_send(self, *args, **kwargs)
        finally:
            local.sending = False

    def uncounted(counted: property) -> property:
        def count(queue: Any) -> int:
            if getattr(local, "sending", False):
                return 0  # read only by Queue.attributes, of which a send uses one flag
            return int(counted.fget(queue))  # type: ignore[misc]

        return property(count)

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(SQSBackend, "send_message", send_message))
        for name in _COUNTS:
            stack.enter_context(
                mock.patch.object(Queue, name, uncounted(inspect.getattr_static(Queue, name)))
            )
        yield


@contextmanager
def tokens_skip_starting_executions() -> Iterator[None]:
    """``SendTaskSuccess``/``Failure``/``Heartbeat`` look for the token's execution among the
    running ones without tripping on one that is starting.

    moto asks every running execution's evaluation environment whether the token is its own;
    an execution marked running whose worker thread has not built that environment yet has
    none, and the call fails with ``AttributeError: 'NoneType' object has no attribute
    'callback_pool_manager'`` (seen under the 1,000-text load: a vendor's answer to an offer
    failed its package open because another conversation's package was starting). A starting
    execution has no task token out, so it is skipped: the cloud answers the token's own
    execution, or ``TaskTimedOut``/``InvalidToken``, as moto then does."""
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend as Backend

    local = threading.local()
    original_executions = Backend._get_executions

    def executions(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = original_executions(self, *args, **kwargs)
        if not getattr(local, "answering_token", False):
            return found
        return [e for e in found if e.exec_worker is not None and e.exec_worker.env is not None]

    def answering_token(method: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            local.answering_token = True
            try:
                return method(self, *args, **kwargs)
            finally:
                local.answering_token = False

        return call

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(Backend, "_get_executions", executions))
        for name in ("send_task_success", "send_task_failure", "send_task_heartbeat"):
            method = getattr(Backend, name)
            stack.enter_context(mock.patch.object(Backend, name, answering_token(method)))
        yield


_INDEXES = "_maestro_gsi_keys"  # on a moto Table: {index name: (hash attribute, {value: keys})}
_SCALARS = frozenset({"S", "N", "B"})
KeysByValue = dict[Any, set[tuple[Any, Any]]]


def _every_item(table: Any) -> Iterator[Any]:
    if table.range_key_attr:
        for partition in list(table.items.values()):
            yield from list(partition.values())
    else:
        yield from list(table.items.values())


def _current(table: Any, key: tuple[Any, Any]) -> Any:
    hash_key, range_key = key
    found = table.items.get(hash_key)
    if found is not None and range_key is not None:
        return found.get(range_key)
    return found


def _note(item: Any, attribute: str, keys_by_value: KeysByValue) -> None:
    value = item.attrs.get(attribute)
    if value is not None and value.type in _SCALARS:
        keys_by_value.setdefault(value, set()).add((item.hash_key, item.range_key))


def _note_everywhere(table: Any, item: Any) -> None:
    """Note ``item``'s key under the value it now holds, in each index built on ``table``."""
    if item is None:
        return
    for attribute, keys_by_value in table.__dict__.get(_INDEXES, {}).values():
        _note(item, attribute, keys_by_value)


def _index(table: Any, name: str) -> tuple[str, KeysByValue] | None:
    """The index ``name`` of ``table`` (built from every item on first use), or None when it is
    not a global index with one hash attribute (moto's own walk then)."""
    indexes: dict[str, tuple[str, KeysByValue]] = table.__dict__.setdefault(_INDEXES, {})
    if name not in indexes:
        index = next((i for i in table.global_indexes or [] if i.name == name), None)
        schema = index.schema if index is not None else []
        hashes = [k["AttributeName"] for k in schema if k["KeyType"] == "HASH"]
        if len(hashes) != 1:
            return None
        keys_by_value: KeysByValue = {}
        for item in _every_item(table):
            _note(item, hashes[0], keys_by_value)
        indexes[name] = (hashes[0], keys_by_value)
    return indexes[name]


@contextmanager
def indexed_queries() -> Iterator[None]:
    """A Query on a global index reads the items holding its hash value, not the table."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    original_query = Table.query
    original_put = Table.put_item
    original_update = DynamoDBBackend.update_item

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        # moto's backend passes index_name as the eighth positional argument, conditions by name
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        conditions = kwargs.get("hash_key_conditions") or []
        found = _index(self, index_name) if index_name else None
        if found is None or len(conditions) != 1 or conditions[0][0] != found[0]:
            return original_query(self, hash_key, *args, **kwargs)
        keys_by_value = found[1]
        value = conditions[0][1]
        if value.type not in _SCALARS:
            return original_query(self, hash_key, *args, **kwargs)
        # Every item that ever held the value and is still there; moto checks each one's key as
        # it checks every item (one deleted or holding another value since is passed over).
        # Keys are never dropped: a rollback may put back the very state a key was noted for.
        held = (_current(self, key) for key in list(keys_by_value.get(value, ())))
        members = [item for item in held if item is not None]
        # moto's query takes its candidates from all_items(): for this one call (the stack's
        # DynamoDB calls are serialized), the holders of the value are all the items there are.
        self.all_items = lambda: members
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    def put_item(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = original_put(self, *args, **kwargs)
        _note_everywhere(self, item)
        return item

    def update_item(self: Any, table_name: str, key: dict[str, Any], *a: Any, **kw: Any) -> Any:
        try:
            return original_update(self, table_name, key, *a, **kw)
        finally:  # updated in place, or created: note whatever it holds now
            try:
                table = self.get_table(table_name)
                item = table.get_item(*self.get_keys_value(table, key))
            except Exception:  # moto refused the request: nothing was written
                item = None
            if item is not None:
                _note_everywhere(table, item)

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(Table, "query", query))
        stack.enter_context(mock.patch.object(Table, "put_item", put_item))
        stack.enter_context(mock.patch.object(DynamoDBBackend, "update_item", update_item))
        yield


__all__ = ["indexed_queries", "uncounted_sends", "untracked_models"]


@contextmanager
def remembered_names() -> Iterator[None]:
    """moto's method listing by class and camel-to-snake conversion by string, each kept (5.)."""
    import moto.core.responses
    import moto.core.utils
    import moto.sqs.models
    import moto.utilities.utils

    original_convert = moto.core.utils.camelcase_to_underscores
    original_names = moto.core.utils.method_names_from_class
    convert = functools.lru_cache(maxsize=4096)(original_convert)
    names = functools.lru_cache(maxsize=512)(original_names)
    with ExitStack() as stack:
        for module in (moto.core.utils, moto.core.responses, moto.sqs.models, moto.utilities.utils):
            if getattr(module, "camelcase_to_underscores", None) is original_convert:
                stack.enter_context(mock.patch.object(module, "camelcase_to_underscores", convert))
            if getattr(module, "method_names_from_class", None) is original_names:
                stack.enter_context(mock.patch.object(module, "method_names_from_class", names))
        yield
