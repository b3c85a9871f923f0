"""The embedded stack's event-source emulation (batches, partial failures, redrive to the DLQ)
and its safety under many threads."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from embedded import sms

from maestro.domain.models import conversation_id_for
from maestro_dev.local.events import signed_sms_event, twilio_sid
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as local:
        seed(local)
        yield local


def _count(stack: LocalStack, url: str) -> int:
    attributes = stack.sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_a_poison_signal_is_retried_then_redriven_to_the_dlq(stack: LocalStack) -> None:
    stack.sqs.send_message(QueueUrl=stack.debounce_url, MessageBody="not a signal")
    for _ in range(8):
        stack.poll_debounce()
    assert _count(stack, stack.debounce_url) == 0
    assert _count(stack, stack.debounce_dlq) == 1


def test_a_bad_record_does_not_hold_back_the_good_ones_in_its_batch(stack: LocalStack) -> None:
    stack.http(
        signed_sms_event(stack.twilio_token, twilio_sid("SM", "good"), MARIA.phone, "no hot water")
    )
    stack.sqs.send_message(QueueUrl=stack.debounce_url, MessageBody="{}")
    stack.advance(stack.idle + 1)
    assert len(stack.executions()) == 1
    assert stack.executions()[0]["status"] == "SUCCEEDED"


def test_domain_events_reach_the_watcher_through_the_rule(stack: LocalStack) -> None:
    stack.http(
        signed_sms_event(
            stack.twilio_token, twilio_sid("SM", "ev1"), MARIA.phone, "the AC is broken"
        )
    )
    stack.advance(stack.idle + 1)
    events = list(stack.domain_events())
    assert events, "the rule delivers every maestro event to the queues"
    assert all(e["source"] == "maestro" for e in events)
    detail = events[0]["detail"]
    body = json.loads(detail) if isinstance(detail, str) else detail
    assert {"event_id", "type", "package_id", "subject_id"} <= set(body)
    # The watcher's queue was polled and drained: one ledger row per event.
    assert _count(stack, stack.events_url) == 0
    rows = {row.row_id for row in stack.ledger_rows()}
    ids = {
        (json.loads(e["detail"]) if isinstance(e["detail"], str) else e["detail"])["event_id"]
        for e in events
    }
    assert rows == ids


def test_a_poison_event_is_retried_then_redriven_and_holds_back_nothing(stack: LocalStack) -> None:
    stack.sqs.send_message(QueueUrl=stack.events_url, MessageBody='{"detail": {"type": "x"}}')
    stack.http(
        signed_sms_event(
            stack.twilio_token, twilio_sid("SM", "ev2"), MARIA.phone, "the AC is broken"
        )
    )
    stack.advance(stack.idle + 1)
    for _ in range(6):
        stack.poll_watcher()
    assert _count(stack, stack.events_url) == 0
    assert _count(stack, stack.events_dlq) == 1
    assert stack.ledger_rows(), "the good events in its batches were checked"


def test_the_stack_takes_webhooks_from_many_threads_while_its_clock_runs(
    stack: LocalStack,
) -> None:
    # moto is not thread-safe on its own: without the stack's serialization this raised
    # "dictionary changed size during iteration" on about 40 % of such requests. (A message
    # stored from counters read before a flush claimed also undid the claim: that race has its
    # own deterministic test in test_ingestion.py.)
    senders = [f"+1415558{n:04d}" for n in range(16)]
    stop = threading.Event()
    failures: list[BaseException] = []

    def tick() -> None:
        while not stop.wait(0.01):
            stack.advance(20, wait=False)

    def send(phone: str) -> list[int]:
        return [
            stack.http(
                signed_sms_event(
                    stack.twilio_token, twilio_sid("SM", f"{phone} {k}"), phone, f"m{k}"
                )
            )["statusCode"]
            for k in range(8)
        ]

    clock = threading.Thread(target=lambda: _capture(tick, failures))
    clock.start()
    try:
        with ThreadPoolExecutor(max_workers=len(senders)) as pool:
            statuses = list(pool.map(send, senders))
    finally:
        stop.set()
        clock.join(timeout=60)
    assert failures == []
    assert statuses == [[200] * 8] * len(senders)
    for phone in senders:
        conversation = conversation_id_for(phone)
        meta = stack.buffer.meta(conversation)
        assert meta is not None
        assert meta.seq == 8, phone
        stored = [stack.buffer.get_message(twilio_sid("SM", f"{phone} {k}")) for k in range(8)]
        assert [m.seq if m else None for m in stored] == list(range(1, 9)), phone
        # Every flush claimed is counted, and the counters cover exactly what was claimed.
        claims = stack.ddb.query(
            TableName=stack.tables["conversations"],
            KeyConditionExpression="conversation_id = :c AND begins_with(#i, :f)",
            ExpressionAttributeNames={"#i": "item"},
            ExpressionAttributeValues={":c": {"S": conversation}, ":f": {"S": "flush#"}},
            ConsistentRead=True,
        )["Items"]
        numbers = sorted(int(c["flush_number"]["N"]) for c in claims)
        assert numbers == list(range(1, meta.flush_number + 1)), phone
        through = max((int(c["through_seq"]["N"]) for c in claims), default=0)
        assert through == meta.flushed_through, phone


def _capture(work: Callable[[], None], failures: list[BaseException]) -> None:
    try:
        work()
    except BaseException as error:  # reported by the test, not lost in a thread
        failures.append(error)
        raise


def test_a_cancelled_transaction_leaves_every_item_as_it_was(stack: LocalStack) -> None:
    # The stack backs up the items a transaction names (not its tables, as moto does): a
    # cancelled one must still change nothing, whichever of its writes came first.
    table = stack.tables["conversations"]
    key = {"conversation_id": {"S": "conv-tx"}, "item": {"S": "meta"}}
    stack.ddb.put_item(TableName=table, Item={**key, "n": {"N": "1"}})
    new = {"conversation_id": {"S": "conv-tx"}, "item": {"S": "new"}}
    with pytest.raises(stack.ddb.exceptions.TransactionCanceledException):
        stack.ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {**new, "n": {"N": "7"}}}},
                {
                    "Update": {
                        "TableName": table,
                        "Key": key,
                        "UpdateExpression": "SET n = :two",
                        "ExpressionAttributeValues": {":two": {"N": "2"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"conversation_id": {"S": "conv-tx"}, "item": {"S": "absent"}},
                        "ConditionExpression": "attribute_exists(conversation_id)",
                    }
                },
            ]
        )
    assert stack.ddb.get_item(TableName=table, Key=key)["Item"]["n"] == {"N": "1"}
    assert "Item" not in stack.ddb.get_item(TableName=table, Key=new)
    stack.ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": table, "Item": {**new, "n": {"N": "7"}}}}]
    )
    assert stack.ddb.get_item(TableName=table, Key=new)["Item"]["n"] == {"N": "7"}


# -- the webhooks' answers first ------------------------------------------------------------------

LIVENESS = 30.0  # seconds before a test gives up on a thread (never reached when it passes)


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIVENESS
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


def test_an_aws_call_outside_a_request_gives_way_to_one_being_answered(stack: LocalStack) -> None:
    stack.priority.max_wait_seconds = LIVENESS
    stack.priority.request_budget_seconds = LIVENESS
    table = stack.tables["conversations"]
    key = {"conversation_id": {"S": "conv-bg"}, "item": {"S": "meta"}}
    request = object()
    stack.priority.arrived(request)  # as the server does when it accepts a connection
    done = threading.Event()

    def background() -> None:  # an execution's step, the clock's flusher
        stack.ddb.get_item(TableName=table, Key=key)
        done.set()

    thread = threading.Thread(target=background, daemon=True)
    thread.start()
    _until(lambda: stack.priority.waiting == 1)
    # A webhook answered meanwhile makes its own calls without waiting, for anyone.
    sid = twilio_sid("SM", "answered first")
    response = stack.http(signed_sms_event(stack.twilio_token, sid, MARIA.phone, "hi"))
    assert response["statusCode"] == 200
    assert not done.is_set()
    assert stack.priority.waits == 1  # the background thread's, and no other
    stack.priority.answered(request)
    thread.join(LIVENESS)
    assert done.is_set()
    assert stack.priority.pending == 0
    assert stack.buffer.get_message(sid) is not None


# -- what makes moto fast enough (threads.py) ------------------------------------------------------


def _put(stack: LocalStack, table: str, conversation: str, item: str, n: int) -> None:
    stack.ddb.put_item(
        TableName=table,
        Item={"conversation_id": {"S": conversation}, "item": {"S": item}, "n": {"N": str(n)}},
    )


def test_a_key_query_reads_its_partition_and_nothing_else(stack: LocalStack) -> None:
    from moto.dynamodb.models.table import Table

    table = stack.tables["conversations"]
    for conversation in ("conv-a", "conv-b", "conv-c"):
        for n in range(1, 8):
            _put(stack, table, conversation, f"msg#{n:010d}", n)
        _put(stack, table, conversation, "meta", 0)
    walked: list[str] = []
    original = Table.all_items

    def all_items(self: Table) -> Any:
        walked.append(self.name)
        return original(self)

    def query(**extra: Any) -> list[tuple[str, int]]:
        pages, kwargs = [], dict(extra)
        while True:
            page = stack.ddb.query(TableName=table, ConsistentRead=True, **kwargs)
            pages += [(i["conversation_id"]["S"], int(i["n"]["N"])) for i in page["Items"]]
            if "LastEvaluatedKey" not in page:
                return pages
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    between = {
        "KeyConditionExpression": "conversation_id = :c AND #i BETWEEN :lo AND :hi",
        "ExpressionAttributeNames": {"#i": "item"},
        "ExpressionAttributeValues": {
            ":c": {"S": "conv-b"},
            ":lo": {"S": f"msg#{2:010d}"},
            ":hi": {"S": f"msg#{5:010d}"},
        },
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Table, "all_items", all_items)
        assert query(**between) == [("conv-b", n) for n in (2, 3, 4, 5)]
        assert query(**between, Limit=3) == [("conv-b", n) for n in (2, 3, 4, 5)]
        assert query(**between, ScanIndexForward=False) == [("conv-b", n) for n in (5, 4, 3, 2)]
        whole = query(
            KeyConditionExpression="conversation_id = :c",
            ExpressionAttributeValues={":c": {"S": "conv-c"}},
        )
        assert whole == [("conv-c", 0)] + [("conv-c", n) for n in range(1, 8)]  # "meta" < "msg#"
        none = query(
            KeyConditionExpression="conversation_id = :c",
            ExpressionAttributeValues={":c": {"S": "conv-none"}},
        )
        assert none == []
        assert walked == []  # not one of them walked the table
        # An index query reads the items holding its value (moto_patches.indexed_queries, which
        # reads the table once, to build the index): it finds its items without a walk either.
        stack.ddb.put_item(
            TableName=stack.tables["parties"],
            Item={"phone": {"S": "+14155559999"}, "party_id": {"S": "p-idx"}},
        )
        found = stack.ddb.query(
            TableName=stack.tables["parties"],
            IndexName="by_party_id",
            KeyConditionExpression="party_id = :p",
            ExpressionAttributeValues={":p": {"S": "p-idx"}},
        )["Items"]
        assert [i["phone"]["S"] for i in found] == ["+14155559999"]
        assert walked == []


def test_a_definition_is_parsed_once_and_a_broken_one_every_time(stack: LocalStack) -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import (
        AmazonStateLanguageParser,
        ASLParserException,
    )

    definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}})
    first_program, first_tree = AmazonStateLanguageParser.parse(definition)
    second_program, second_tree = AmazonStateLanguageParser.parse(definition)
    assert second_tree is first_tree  # kept
    assert second_program is not first_program  # each execution evaluates its own
    for _ in range(2):
        with pytest.raises(ASLParserException):
            AmazonStateLanguageParser.parse('{"StartAt": "Nowhere", "States": {')
    # The whole path still works: the pipeline's executions run on the kept tree.
    sms(stack, "the hallway light is out")
    stack.advance(stack.idle + 1)
    sms(stack, "and the one by the stairs")
    stack.advance(stack.idle + 1)
    assert [e["status"] for e in stack.executions()] == ["SUCCEEDED", "SUCCEEDED"]


def test_a_task_client_is_made_once_per_region_and_service(stack: LocalStack) -> None:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_events,
    )

    make = lambda_eval_utils.boto_client_for
    assert state_task_service_events.boto_client_for is make  # PutEvents tasks share them too
    assert make("us-east-1", "lambda") is make("us-east-1", "lambda")
    assert make("us-east-1", "lambda") is not make("us-east-1", "events")
    assert make("us-east-1", "lambda") is not make("eu-west-1", "lambda")


def test_a_forgotten_step_gate_times_out_in_virtual_time_and_the_package_goes_on() -> None:
    """A paused gate with no heartbeat for an hour times out (States.Timeout) and the package
    goes on past it, as in the cloud: virtual time passes it, no wall hour. The action's gate,
    too: its timeout on the item does not make the act step refuse it."""
    with LocalStack(step_mode=True) as stack:
        seed(stack)
        sms(stack, "is the laundry room open on sundays?")
        stack.advance(stack.idle + 1)
        (execution,) = stack.executions()
        arn = execution["executionArn"]
        assert stack.states_entered(arn)[-1] == "Step gate: before the brain"
        assert stack.paused_executions() == {arn}
        stack.advance(3600)
        assert stack.states_entered(arn)[-1] == "Step gate: before the action"
        stack.advance(3600)
        assert stack.sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED"
        states = stack.states_entered(arn)
        assert "Act: run the lane" in states
        assert not any(s.startswith("Fail open") for s in states)
        assert stack.paused_executions() == set()  # the gates' records stay, nothing waits
