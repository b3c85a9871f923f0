"""The embedded stack's workarounds for moto (``maestro_dev.local.moto_patches``, and the
transactions and key queries of ``maestro_dev.local.threads``): each keeps what a DynamoDB or
SQS caller sees, and none keeps a copy of anything per package."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.moto_patches import (
    indexed_queries,
    tokens_skip_starting_executions,
    uncounted_sends,
    untracked_models,
)
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.threads import thread_safe_moto
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration

REGION = "us-east-1"


@pytest.fixture
def moto_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


def _tables(ddb: Any) -> None:
    ddb.create_table(
        TableName="pairs",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "owner", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_owner",
                "KeySchema": [
                    {"AttributeName": "owner", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.create_table(
        TableName="singles",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _everything(ddb: Any) -> dict[str, list[dict[str, Any]]]:
    return {
        name: sorted(
            ddb.scan(TableName=name, ConsistentRead=True)["Items"],
            key=lambda item: json.dumps(item, sort_keys=True),
        )
        for name in ("pairs", "singles")
    }


def _seeded(ddb: Any) -> None:
    _tables(ddb)
    for n in range(3):
        ddb.put_item(
            TableName="pairs",
            Item={"pk": {"S": "a"}, "sk": {"S": f"{n}"}, "owner": {"S": "x"}, "v": {"N": "1"}},
        )
    ddb.put_item(TableName="singles", Item={"id": {"S": "keep"}, "tags": {"SS": ["t"]}})
    ddb.put_item(TableName="singles", Item={"id": {"S": "gone"}, "v": {"N": "5"}})


# Put a new item, update one, delete one, in two tables; the last operation decides.
def _transaction(last_condition_holds: bool) -> list[dict[str, Any]]:
    return [
        {"Put": {"TableName": "pairs", "Item": {"pk": {"S": "a"}, "sk": {"S": "new"}}}},
        {
            "Update": {
                "TableName": "pairs",
                "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
                "UpdateExpression": "SET v = v + :one, extra = :e",
                "ExpressionAttributeValues": {":one": {"N": "1"}, ":e": {"M": {"k": {"S": "v"}}}},
            }
        },
        {"Delete": {"TableName": "singles", "Key": {"id": {"S": "gone"}}}},
        {
            "Update": {
                "TableName": "singles",
                "Key": {"id": {"S": "keep"}},
                "UpdateExpression": "ADD tags :t",
                "ConditionExpression": "attribute_exists(id)"
                if last_condition_holds
                else "attribute_not_exists(id)",
                "ExpressionAttributeValues": {":t": {"SS": ["u"]}},
            }
        },
    ]


@pytest.mark.usefixtures("moto_env")
def test_a_failed_transaction_leaves_every_table_as_it_was() -> None:
    ddb = boto3.client("dynamodb", region_name=REGION)
    _seeded(ddb)
    before = _everything(ddb)
    with thread_safe_moto():
        with pytest.raises(ClientError) as failed:
            ddb.transact_write_items(TransactItems=_transaction(last_condition_holds=False))
        assert failed.value.response["Error"]["Code"] == "TransactionCanceledException"
        reasons = [r["Code"] for r in failed.value.response["CancellationReasons"]]
        assert reasons == ["None", "None", "None", "ConditionalCheckFailed"]
        assert _everything(ddb) == before
        # The same item twice is refused outright, after the first write: put back too.
        with pytest.raises(ClientError):
            ddb.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "singles", "Item": {"id": {"S": "twice"}}}},
                    {"Delete": {"TableName": "singles", "Key": {"id": {"S": "twice"}}}},
                ]
            )
        assert _everything(ddb) == before


@pytest.mark.usefixtures("moto_env")
def test_a_transaction_that_holds_writes_what_moto_writes() -> None:
    ddb = boto3.client("dynamodb", region_name=REGION)
    _seeded(ddb)
    ddb.transact_write_items(TransactItems=_transaction(last_condition_holds=True))
    by_moto = _everything(ddb)
    for table in ("pairs", "singles"):
        ddb.delete_table(TableName=table)
    _seeded(ddb)
    with thread_safe_moto():
        ddb.transact_write_items(TransactItems=_transaction(last_condition_holds=True))
    assert _everything(ddb) == by_moto
    assert {"id": {"S": "gone"}, "v": {"N": "5"}} not in by_moto["singles"]


@pytest.mark.usefixtures("moto_env")
def test_a_transaction_copies_the_items_it_names_not_the_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import Item

    ddb = boto3.client("dynamodb", region_name=REGION)
    _seeded(ddb)
    for n in range(50):
        ddb.put_item(TableName="pairs", Item={"pk": {"S": "bulk"}, "sk": {"S": f"{n:02d}"}})
    backend = dynamodb_backends["123456789012"][REGION]
    tables = dict(backend.tables)
    copied: list[Any] = []
    real_copy = Item.__deepcopy__

    def counting_copy(item: Any, memo: dict[int, Any]) -> Any:
        copied.append(item)
        return real_copy(item, memo)

    monkeypatch.setattr(Item, "__deepcopy__", counting_copy)
    with thread_safe_moto():
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "pairs", "Item": {"pk": {"S": "b"}, "sk": {"S": "0"}}}},
                {"Delete": {"TableName": "singles", "Key": {"id": {"S": "gone"}}}},
            ]
        )
        assert len(copied) == 1  # "gone" (the put's key was empty); moto copies all 55 items
        with pytest.raises(ClientError):
            ddb.transact_write_items(TransactItems=_transaction(last_condition_holds=False))
    # moto's rollback swaps a whole copy of each table in; the item-level one keeps the tables.
    assert all(backend.tables[name] is table for name, table in tables.items())


def _queries(ddb: Any) -> list[Any]:
    for n in range(12):
        ddb.put_item(
            TableName="pairs",
            Item={
                "pk": {"S": "ab"[n % 2]},
                "sk": {"S": f"{n:02d}"},
                "owner": {"S": "xy"[n % 3 % 2]},
            },
        )
        ddb.put_item(TableName="singles", Item={"id": {"S": f"s{n}"}, "n": {"N": str(n)}})
    out: list[Any] = []
    pages: list[Any] = []
    kwargs: dict[str, Any] = {
        "TableName": "pairs",
        "KeyConditionExpression": "pk = :p AND sk > :s",
        "ExpressionAttributeValues": {":p": {"S": "a"}, ":s": {"S": "02"}},
        "ScanIndexForward": False,
        "Limit": 2,
    }
    while True:
        page = ddb.query(**kwargs)
        pages.append((page["Items"], page.get("LastEvaluatedKey")))
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    out.append(pages)
    out.append(
        ddb.query(
            TableName="pairs",
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "b"}},
        )["Items"]
    )
    out.append(
        ddb.query(
            TableName="pairs",
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "none"}},
        )["Items"]
    )
    out.append(
        ddb.query(
            TableName="pairs",
            IndexName="by_owner",
            KeyConditionExpression="#o = :o",
            ExpressionAttributeNames={"#o": "owner"},
            ExpressionAttributeValues={":o": {"S": "y"}},
            ScanIndexForward=False,
        )["Items"]
    )
    out.append(
        ddb.query(
            TableName="singles",
            KeyConditionExpression="id = :i",
            ExpressionAttributeValues={":i": {"S": "s7"}},
        )["Items"]
    )
    out.append(ddb.scan(TableName="pairs")["Items"])
    return out


@pytest.mark.usefixtures("moto_env")
def test_a_query_answers_as_moto_does_reading_one_partition() -> None:
    ddb = boto3.client("dynamodb", region_name=REGION)
    _tables(ddb)
    by_moto = _queries(ddb)
    for table in ("pairs", "singles"):
        ddb.delete_table(TableName=table)
    _tables(ddb)
    with thread_safe_moto():
        patched = _queries(ddb)
    assert patched == by_moto
    pages, partition_b, nothing, by_owner, single, _ = patched
    assert [item["sk"]["S"] for items, _ in pages for item in items] == ["10", "08", "06", "04"]
    assert len(partition_b) == 6
    assert nothing == []
    assert len(by_owner) == 4
    assert single == [{"id": {"S": "s7"}, "n": {"N": "7"}}]


def _by_owner(ddb: Any, owner: str, **extra: Any) -> list[Any]:
    pages, kwargs = (
        [],
        {
            "TableName": "pairs",
            "IndexName": "by_owner",
            "KeyConditionExpression": "#o = :o",
            "ExpressionAttributeNames": {"#o": "owner"},
            "ExpressionAttributeValues": {":o": {"S": owner}},
            **extra,
        },
    )
    if "sk" in kwargs["KeyConditionExpression"]:
        kwargs["ExpressionAttributeValues"][":s"] = {"S": "03"}
    while True:
        page = ddb.query(**kwargs)
        pages.append(page["Items"])
        if "LastEvaluatedKey" not in page:
            return pages
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _index_story(ddb: Any, asked: list[Any]) -> None:
    """Writes of every kind around index queries; each answer is appended to ``asked``."""
    put = ddb.put_item

    def ask() -> None:
        for owner in ("x", "y", "z"):
            asked.append(_by_owner(ddb, owner))
            asked.append(_by_owner(ddb, owner, ScanIndexForward=False, Limit=2))
            asked.append(
                _by_owner(
                    ddb,
                    owner,
                    KeyConditionExpression="#o = :o AND sk > :s",
                )
            )

    for n in range(8):  # before the index's first query: found by the build
        put(
            TableName="pairs",
            Item={"pk": {"S": "p"}, "sk": {"S": f"{n:02d}"}, "owner": {"S": "xy"[n % 2]}},
        )
    put(TableName="pairs", Item={"pk": {"S": "p"}, "sk": {"S": "sparse"}})  # no owner: not in it
    ask()
    for n in range(8, 12):  # after it: noted on the way in
        put(
            TableName="pairs", Item={"pk": {"S": "q"}, "sk": {"S": f"{n:02d}"}, "owner": {"S": "x"}}
        )
    ddb.update_item(  # moved from x to z
        TableName="pairs",
        Key={"pk": {"S": "p"}, "sk": {"S": "00"}},
        UpdateExpression="SET #o = :z",
        ExpressionAttributeNames={"#o": "owner"},
        ExpressionAttributeValues={":z": {"S": "z"}},
    )
    ddb.update_item(  # created by an update
        TableName="pairs",
        Key={"pk": {"S": "r"}, "sk": {"S": "05"}},
        UpdateExpression="SET #o = :y",
        ExpressionAttributeNames={"#o": "owner"},
        ExpressionAttributeValues={":y": {"S": "y"}},
    )
    ddb.delete_item(TableName="pairs", Key={"pk": {"S": "p"}, "sk": {"S": "01"}})
    put(TableName="pairs", Item={"pk": {"S": "p"}, "sk": {"S": "02"}, "owner": {"S": "y"}})
    ask()
    with pytest.raises(ClientError):  # moves p/03 to z and deletes p/04, then fails: undone
        ddb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": "pairs",
                        "Key": {"pk": {"S": "p"}, "sk": {"S": "03"}},
                        "UpdateExpression": "SET #o = :z",
                        "ExpressionAttributeNames": {"#o": "owner"},
                        "ExpressionAttributeValues": {":z": {"S": "z"}},
                    }
                },
                {"Delete": {"TableName": "pairs", "Key": {"pk": {"S": "p"}, "sk": {"S": "04"}}}},
                {
                    "ConditionCheck": {
                        "TableName": "pairs",
                        "Key": {"pk": {"S": "p"}, "sk": {"S": "05"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    ask()


@pytest.mark.usefixtures("moto_env")
def test_an_index_query_answers_as_moto_does_reading_the_holders_of_its_value() -> None:
    ddb = boto3.client("dynamodb", region_name=REGION)
    _tables(ddb)
    by_moto: list[Any] = []
    _index_story(ddb, by_moto)
    for table in ("pairs", "singles"):
        ddb.delete_table(TableName=table)
    _tables(ddb)
    patched: list[Any] = []
    with thread_safe_moto(), indexed_queries():
        _index_story(ddb, patched)
    assert patched == by_moto
    x_then = [item["sk"]["S"] for page in by_moto[0] for item in page]
    x_later = [item["sk"]["S"] for page in by_moto[9] for item in page]
    z_later = [item["sk"]["S"] for page in by_moto[15] for item in page]
    assert (x_then, x_later, z_later) == (
        ["00", "02", "04", "06"],
        ["04", "06", "08", "09", "10", "11"],
        ["00"],
    )
    assert by_moto[18:] == by_moto[9:18]  # the failed transaction changed no answer


@pytest.mark.usefixtures("moto_env")
def test_an_index_query_reads_only_the_holders_of_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    ddb = boto3.client("dynamodb", region_name=REGION)
    _tables(ddb)
    for n in range(60):
        ddb.put_item(
            TableName="pairs",
            Item={"pk": {"S": f"p{n}"}, "sk": {"S": "0"}, "owner": {"S": "x" if n < 3 else "y"}},
        )
    with indexed_queries():
        _by_owner(ddb, "x")  # builds the index
        ddb.put_item(
            TableName="pairs", Item={"pk": {"S": "new"}, "sk": {"S": "0"}, "owner": {"S": "x"}}
        )
        compared: list[Any] = []
        real_ne = DynamoType.__ne__

        def ne(value: Any, other: Any) -> bool:  # moto compares each candidate's index key
            compared.append(value)
            return bool(real_ne(value, other))

        monkeypatch.setattr(DynamoType, "__ne__", ne)
        (page,) = _by_owner(ddb, "x")
    assert len(page) == 4
    assert 4 <= len(compared) <= 8  # moto's walk compares all 61 items' owners


@pytest.mark.usefixtures("moto_env")
def test_a_send_does_not_count_the_queue_but_the_counts_still_hold() -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    plain = sqs.create_queue(QueueName="plain")["QueueUrl"]
    fifo = sqs.create_queue(
        QueueName="dedup.fifo",
        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"},
    )["QueueUrl"]
    from moto.sqs.models import Queue

    counted: list[str] = []
    real = Queue.approximate_number_of_messages

    def spy(queue: Any) -> int:
        counted.append(queue.name)
        return int(real.fget(queue))  # type: ignore[misc]

    with ExitStack() as stack:
        # The spy is what the patch wraps: a send must not reach it, a read of the count must.
        stack.enter_context(pytest.MonkeyPatch.context()).setattr(
            Queue, "approximate_number_of_messages", property(spy)
        )
        stack.enter_context(uncounted_sends())
        for n in range(3):
            sqs.send_message(QueueUrl=plain, MessageBody=f"m{n}")
            sqs.send_message(QueueUrl=fifo, MessageBody="same", MessageGroupId="g")
        assert counted == []
        attributes = sqs.get_queue_attributes(QueueUrl=plain, AttributeNames=["All"])
        assert attributes["Attributes"]["ApproximateNumberOfMessages"] == "3"
        assert counted
        deduplicated = sqs.get_queue_attributes(
            QueueUrl=fifo, AttributeNames=["ApproximateNumberOfMessages"]
        )
        assert deduplicated["Attributes"]["ApproximateNumberOfMessages"] == "1"


@pytest.mark.usefixtures("moto_env")
def test_moto_keeps_no_register_of_its_objects_while_untracked() -> None:
    from moto.dynamodb.models.dynamo_type import Item

    ddb = boto3.client("dynamodb", region_name=REGION)
    _tables(ddb)
    Item.instances_tracked = []
    with untracked_models():
        for n in range(5):
            ddb.put_item(TableName="singles", Item={"id": {"S": f"u{n}"}})
            ddb.query(
                TableName="singles",
                KeyConditionExpression="id = :i",
                ExpressionAttributeValues={":i": {"S": f"u{n}"}},
            )
        assert Item.instances_tracked == []
    ddb.put_item(TableName="singles", Item={"id": {"S": "after"}})
    assert len(Item.instances_tracked) == 1  # moto's own behaviour is back


# ------------------------------------------------------------------ through the embedded stack


def test_packages_leave_no_copies_keep_few_histories_and_wait_without_listing() -> None:
    from moto.core.model_instances import model_data
    from moto.dynamodb.models.table import Table
    from moto.stepfunctions.parser import utils

    with LocalStack(histories_kept=2) as stack:
        seed(stack)
        calls: list[str] = []
        real_list = stack.sfn.list_executions

        def listing(**kwargs: Any) -> Any:
            calls.append(kwargs.get("statusFilter", "all"))
            return real_list(**kwargs)

        stack.sfn.list_executions = listing
        texts = ("the kitchen sink is leaking", "any update?", "the oven is broken", "thanks!")
        for n, text in enumerate(texts):
            stack.http(
                signed_sms_event(
                    stack.twilio_token, twilio_sid("SM", f"flat {n}"), MARIA.phone, text
                )
            )
            stack.advance(stack.idle + 1)  # flush, run, wait for the execution to end
            assert stack.running_executions() == []
        assert calls == []  # the waits sleep on the stack's own record, never on ListExecutions
        executions = stack.executions()
        assert [e["status"] for e in executions] == ["SUCCEEDED"] * len(texts)
        # The newest two closed executions keep their history; the older ones their record.
        entered = [stack.states_entered(e["executionArn"]) for e in executions]
        assert [bool(states) for states in entered] == [False, False, True, True]
        assert entered[2][0] == entered[3][0] == "Pre-check: safety first"
        oldest = stack.sfn.describe_execution(executionArn=executions[0]["executionArn"])
        assert oldest["status"] == "SUCCEEDED"
        assert json.loads(oldest["output"])["persisted"]
        gc.collect()
        # One Table object per table: no transaction kept a copy of one.
        assert sum(isinstance(o, Table) for o in gc.get_objects()) == len(stack.tables)
        registered = {
            f"{service}.{name}": len(model.instances_tracked)  # type: ignore[attr-defined]
            for service, models in model_data.items()
            for name, model in models.items()
            if getattr(model, "instances_tracked", None)
        }
        assert not any(k.startswith(("dynamodb.", "sqs.", "stepfunctions.")) for k in registered)
        # moto lists every thread it starts (about 13 a package); finished ones are dropped as
        # each execution ends, all but that last execution's own, which ends just after.
        assert sum(not thread.is_alive() for thread in utils.TMP_THREADS) <= 1


@pytest.mark.usefixtures("moto_env")
def test_every_page_of_executions_is_read() -> None:
    """ListExecutions answers at most 1,000 a page (100 unless asked); the stack's list, which
    `maestro executions` shows for `maestro serve`, reads every page."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = sfn.create_state_machine(
        name="paged",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn="arn:aws:iam::123456789012:role/paged",
    )["stateMachineArn"]
    for n in range(1030):
        sfn.start_execution(stateMachineArn=machine, name=f"e{n:04d}")
    assert len(sfn.list_executions(stateMachineArn=machine)["executions"]) == 100
    first = sfn.list_executions(stateMachineArn=machine, maxResults=1000)
    assert len(first["executions"]) == 1000
    assert first.get("nextToken")
    stack = LocalStack()  # not started: only its listing, over this mock's state machine
    stack.sfn, stack.machine_arn = sfn, machine
    listed = [e["name"] for e in stack.executions()]
    # Each once; executions started in the same instant may list in either order.
    assert sorted(listed) == [f"e{n:04d}" for n in range(1030)]


@pytest.fixture
def moto_running_executions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``moto_env`` with Step Functions running what it starts (and answering task tokens)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


def test_a_task_token_is_answered_while_another_execution_is_starting(
    moto_running_executions: None,
) -> None:
    # moto marks an execution running before its worker thread has built the environment that
    # holds its task tokens; SendTaskSuccess asks every running execution whether the token is
    # its own, and one that is starting made it raise AttributeError, not InvalidToken.
    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = sfn.create_state_machine(
        name="waits",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    backend = stepfunctions_parser_backends["123456789012"][REGION]
    (machine,) = [m for m in backend.state_machines if m.arn == arn]
    starting = type("Starting", (), {})()
    starting.status = ExecutionStatus.RUNNING
    starting.exec_worker = type("Worker", (), {"env": None})()  # its thread not yet started
    machine.executions.append(starting)

    def answer() -> str:
        try:
            sfn.send_task_success(taskToken="not-a-token", output="{}")
        except ClientError as error:
            return str(error.response["Error"]["Code"])
        return "answered"

    with tokens_skip_starting_executions():
        assert answer() == "InvalidToken"
    with pytest.raises(AttributeError, match="callback_pool_manager"):
        answer()  # moto alone trips on the starting execution


def test_asts_are_built_one_at_a_time_while_any_stack_is_up() -> None:
    # CPython 3.11's AST constructor is not thread-safe (python/cpython#106905): while a stack's
    # threads run, every ast.parse (a literal_eval, a traceback's carets) takes one lock, and
    # the last stack out puts ast.parse back.
    import ast
    import threading

    original = ast.parse
    with thread_safe_moto():
        wrapped = ast.parse
        assert wrapped is not original
        with thread_safe_moto():
            assert ast.parse is wrapped  # one lock for the process, not one per stack
        assert ast.parse is wrapped  # the inner stack's exit left the outer's in place
        assert ast.literal_eval("'$.judged'") == "$.judged"
        results: list[object] = []
        threads = [
            threading.Thread(target=lambda: results.append(ast.literal_eval("[1, (2, {3: 4})]")))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [[1, (2, {3: 4})]] * 8
    assert ast.parse is original
