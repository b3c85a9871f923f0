"""moto, made safe to call from many threads and fast enough to take a load.

The embedded stack is called at once by the loopback server's request threads, its clock, and
Step Functions' execution threads. moto's backends are plain dicts, not thread-safe: a DynamoDB
transaction deep-copies its tables while another thread writes to them ("dictionary changed
size during iteration"), and a condition checked in one thread can be overtaken by another's
write before it writes. So:

- **One AWS call at a time.** Each mocked call holds a lock for its own length, which makes it
  atomic as each DynamoDB request is in the cloud, and never longer: no lock is held across a
  pipeline step, a webhook or a clock tick. A Lambda invoke is the exception: the handler behind
  it is maestro's own code, which makes AWS calls of its own (each then takes the lock).
  DynamoDB has a lock of its own, apart from the other services': no moto call of one reaches
  into the other (EventBridge delivers to SQS inside moto, both under the second lock), and the
  webhooks, which only need DynamoDB, do not wait behind a PutEvents (whose cost in moto grows
  with the unread events queue).
- **The webhooks' answers first** (:class:`Priority`). One interpreter runs the executions and
  the HTTP server; the GIL shares it equally among runnable threads, so in the HTTP load run
  (``benchmarks/load_http.py``) a webhook of 5 ms of CPU took a median 270 ms and a p95 of
  1.1 s behind twenty-odd executions. While a request is being answered, the other threads
  wait at their next AWS call: 27 ms and 91 ms (measured, same run, same machine).
- **Transactions back up the items they touch, not their tables.** moto deep-copies every table
  a TransactWriteItems names, to roll back a cancelled one: a write cost that grows with the
  table (34 ms per inbound SMS at 200 stored messages, 237 ms at 1,200, measured). The items a
  transaction names are all it can change, so they are what is kept and put back.
- **A Query on a table's key reads its partition, not the table.** moto walks (and sorts) every
  item of the table to find one partition's; with a load's thousand messages buffered, the
  conversation reads held the lock a median 26 ms each, 62 s of a 190 s run (measured). An
  index Query is left to ``moto_patches.indexed_queries``: the items holding its value.
- **The state machine is parsed once.** moto lexes and parses the ASL with ANTLR at every
  execution's start: 0.35 s of CPU each, a third of what a package cost the process (measured).
  The syntax tree of a definition is kept (it is only read); each execution still builds its
  own evaluation components from it.
- **One AST at a time**: CPython 3.11's AST constructor is not safe in two threads at once,
  and threads build ASTs: every execution reads the ASL's string literals with
  ``ast.literal_eval``, and Python 3.11 formats a traceback's carets with ``ast.parse`` (any
  thread that logs an exception).
- **A task's AWS client is made once.** moto's Step Functions makes a new boto3 client for every
  Lambda task and PutEvents (a few ms of CPU each, from boto3's default session, which is not
  thread-safe); one client per region and service is kept and shared (clients are).
"""

from __future__ import annotations

import copy
import re
import threading
import time
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

_LAMBDA_INVOKE = re.compile(r"^/2015-03-31/functions/[^/]+/invocations$")


class Priority:
    """The HTTP answers first. In the cloud a webhook's Lambda has a CPU of its own; here it
    shares one interpreter (one GIL) with every running execution, and each of those threads
    gets an equal share of it: with twenty executions running, a 5 ms webhook took hundreds.
    So while a request is being answered, every other thread waits at its next AWS call (never
    inside one, never holding a service lock).

    Two bounds keep the pipeline moving whatever the requests do: a thread waits at most
    ``max_wait_seconds`` at a time (a flood of requests slows the pipeline, never stops it), and
    a request has priority for its first ``request_budget_seconds`` only (a client that opens a
    connection and sends nothing holds a thread until the read times out, not the pipeline)."""

    def __init__(self, max_wait_seconds: float = 1.0, request_budget_seconds: float = 2.0) -> None:
        self.max_wait_seconds = max_wait_seconds
        self.request_budget_seconds = request_budget_seconds
        self._changed = threading.Condition()
        self._since: dict[object, float] = {}  # request → when it arrived (monotonic)
        self._local = threading.local()
        self.waiting = 0
        """Threads giving way right now."""
        self.waits = 0
        """Times a thread gave way (waited at all), since the start."""

    def arrived(self, request: object) -> None:
        """A request came in (the thread that answers it may not have started yet)."""
        with self._changed:
            self._since[request] = time.monotonic()

    def answered(self, request: object) -> None:
        with self._changed:
            self._since.pop(request, None)
            self._changed.notify_all()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """The current thread answers a request: it never gives way."""
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth

    @contextmanager
    def request(self) -> Iterator[None]:
        """One request, from its arrival to its answer, unless the current thread already
        answers one (the server counted it when it accepted the connection)."""
        if self.answers_a_request():
            yield
            return
        key = object()
        self.arrived(key)
        try:
            with self.answering():
                yield
        finally:
            self.answered(key)

    @property
    def pending(self) -> int:
        """Requests arrived and not yet answered."""
        with self._changed:
            return len(self._since)

    def answers_a_request(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def give_way(self) -> None:
        """In any other thread: wait while a request within its budget is being answered."""
        if not self._since or self.answers_a_request():
            return
        with self._changed:
            now = time.monotonic()
            deadline = now + self.max_wait_seconds
            budget = self.request_budget_seconds
            counted = False
            try:
                while now < deadline:
                    pressing = [t for t in self._since.values() if now - t < budget]
                    if not pressing:
                        return
                    if not counted:
                        counted = True
                        self.waiting += 1
                        self.waits += 1
                    budget_ends = min(pressing) + budget
                    self._changed.wait(min(deadline, budget_ends) - now)
                    now = time.monotonic()
            finally:
                if counted:
                    self.waiting -= 1


@contextmanager
def thread_safe_moto(priority: Priority | None = None) -> Iterator[None]:
    """Within the block: every mocked AWS call but a Lambda invoke holds its service's lock,
    DynamoDB transactions roll back item by item, and key queries read their partition; with a
    ``priority``, a thread that is not answering a request gives way to those that are before
    each of its AWS calls."""
    with ExitStack() as stack:
        stack.enter_context(_serialized_calls(priority))
        stack.enter_context(_item_level_transactions())
        stack.enter_context(_partition_queries())
        stack.enter_context(_parse_once())
        stack.enter_context(_one_ast_at_a_time())
        stack.enter_context(_shared_task_clients())
        yield


@contextmanager
def _serialized_calls(priority: Priority | None) -> Iterator[None]:
    from moto.core.botocore_stubber import BotocoreStubber

    # Re-entrant: a call that makes another in the same thread.
    dynamodb, others = threading.RLock(), threading.RLock()
    inside = threading.local()  # how deep the current thread is in mocked calls
    original = BotocoreStubber.__call__

    def call(self: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
        depth = getattr(inside, "depth", 0)
        if priority is not None and depth == 0:
            priority.give_way()  # between calls only: it holds no service lock here
        url = urlsplit(request.url)
        inside.depth = depth + 1
        try:
            if _LAMBDA_INVOKE.match(url.path):
                inside.depth = 0  # the handler behind it makes calls of its own
                return original(self, event_name, request, **kwargs)
            with dynamodb if url.hostname and url.hostname.startswith("dynamodb.") else others:
                return original(self, event_name, request, **kwargs)
        finally:
            inside.depth = depth

    with mock.patch.object(BotocoreStubber, "__call__", call):
        yield


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


@contextmanager
def _partition_queries() -> Iterator[None]:
    from moto.dynamodb.models.table import Table

    original = Table.query
    index_position = 6  # query(hash_key, range_comparison, range_objs, limit,
    # exclusive_start_key, scan_index_forward, projection_expressions, index_name, ...)

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[index_position] if len(args) > index_position else None
        index_name = kwargs.get("index_name", index_name)
        if index_name is not None or hash_key is None:
            return original(self, hash_key, *args, **kwargs)
        partition = self.items.get(hash_key)
        if partition is None:
            members: list[Any] = []
        elif self.range_key_attr:
            members = list(partition.values())
        else:
            members = [partition]
        # moto's query takes its candidates from all_items(): for this one call (the lock is
        # held), the partition's items are all the items there are.
        self.all_items = lambda: members
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    with mock.patch.object(Table, "query", query):
        yield


# Parse trees by definition text, for the whole process: every embedded stack of a test run
# creates the same few state machines, and an ASL parse (ANTLR, pure Python) costs a third of a
# second each. A tree is never changed after the parse, and the key is the whole definition, so
# no stack can see another's state through it: only the parse's result, which is the same.
_TREES: dict[str, Any] = {}
_TREES_LOCK = threading.Lock()


@contextmanager
def _parse_once() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.parse import asl_parser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    original = asl_parser.AmazonStateLanguageParser.parse

    def parse(definition: str) -> tuple[Any, Any]:
        with _TREES_LOCK:
            tree = _TREES.get(definition)
        if tree is None:
            _program, tree = original(definition)  # raises on a syntax error: nothing kept
            with _TREES_LOCK:
                _TREES[definition] = tree
        return Preprocessor().visit(tree), tree

    with mock.patch.object(asl_parser.AmazonStateLanguageParser, "parse", staticmethod(parse)):
        yield


_AST_LOCK = threading.RLock()
_AST_USERS = 0
_AST_PARSE: Any = None


@contextmanager
def _one_ast_at_a_time() -> Iterator[None]:
    """``ast.parse`` one call at a time in the whole process while any stack is up. CPython 3.11
    before 3.11.8 keeps the AST constructor's recursion depth in state shared by every thread
    (python/cpython#106905): two threads building ASTs at once can leave it wrong, and a later
    parse raises "AST constructor recursion depth mismatch", failing whatever made it (an
    execution's state reading an ASL literal, a step formatting a traceback: a package failed
    open under ``make test``). ``ast.literal_eval`` and ``traceback`` both call ``ast.parse``
    through the module, so one lock there covers them; the lock and the patch are the process's
    (a lock per stack would not keep two stacks' threads apart), counted so the last stack out
    puts ``ast.parse`` back."""
    import ast

    global _AST_USERS, _AST_PARSE
    with _AST_LOCK:
        if _AST_USERS == 0:
            original = ast.parse

            def parse(*args: Any, **kwargs: Any) -> Any:
                with _AST_LOCK:
                    return original(*args, **kwargs)

            _AST_PARSE = original
            ast.parse = parse
        _AST_USERS += 1
    try:
        yield
    finally:
        with _AST_LOCK:
            _AST_USERS -= 1
            if _AST_USERS == 0:
                ast.parse = _AST_PARSE
                _AST_PARSE = None


@contextmanager
def _shared_task_clients() -> Iterator[None]:
    import sys

    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto_client_for
    clients: dict[tuple[str, str], Any] = {}
    lock = threading.Lock()

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        with lock:  # one at a time: boto3's default session is not thread-safe
            key = (region, service)
            if key not in clients:
                clients[key] = original(region, service, state_credentials)
            return clients[key]

    with ExitStack() as stack:
        # Every module that imported it by name: the Lambda task, the service integrations.
        for name, module in list(sys.modules.items()):
            if name.startswith("moto.stepfunctions.") and hasattr(module, "boto_client_for"):
                stack.enter_context(mock.patch.object(module, "boto_client_for", boto_client_for))
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
