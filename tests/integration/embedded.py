"""Helpers for tests on the embedded stack: signed texts in, reads of the real stores out.

Every assertion a test makes through these reads a surface (the WO store, the decision log, the
recorded messages, the execution history), never a step's return value alone.
"""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from itertools import count
from typing import Any

from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.domain.models import WorkOrder
from maestro.domain.records import ActionOutcomeRecord, MaestroDecision, PackageCompletion
from maestro.ingest.service import app_message_id
from maestro.observability import logger
from maestro.ports.messaging import SentMessage
from maestro.ports.workflows import Gate
from maestro_dev.local.events import signed_app_event, signed_sms_event, twilio_sid
from maestro_dev.local.server import LocalServer
from maestro_dev.local.stack import ON_CALL_PM, LocalStack
from maestro_dev.local.world import MARIA, VIC

_sids = count(1)


def sms(stack: LocalStack, body: str, sender: str = MARIA.phone) -> str:
    """One signed inbound SMS through the real webhook; returns its MessageSid."""
    sid = twilio_sid("SM", f"text {next(_sids)}")
    response = stack.http(signed_sms_event(stack.twilio_token, sid, sender, body))
    assert response["statusCode"] == 200, response
    return sid


def app_message(stack: LocalStack, body: str, sender: str = MARIA.phone) -> str:
    message_id = f"app{next(_sids):06d}"
    payload = json.dumps({"message_id": message_id, "from_phone": sender, "body": body})
    response = stack.http(signed_app_event(stack.app_secret, "/app/messages", payload))
    assert response["statusCode"] == 200, response
    return app_message_id(sender, message_id)


@contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Everything maestro's logger writes, through its own handler and formatter, at DEBUG."""
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    buffer = io.StringIO()
    previous_stream = handler.setStream(buffer)
    previous_level = logger.log_level
    logger.setLevel("DEBUG")
    try:
        yield buffer
    finally:
        logger.setLevel(previous_level)
        handler.setStream(previous_stream)


def new_executions(stack: LocalStack, seconds: float) -> list[dict[str, Any]]:
    """Advance virtual time; the executions started meanwhile, described, in start order."""
    before = {e["executionArn"] for e in stack.executions()}
    stack.advance(seconds)
    return [
        stack.sfn.describe_execution(executionArn=e["executionArn"])
        for e in stack.executions()
        if e["executionArn"] not in before
    ]


def flush(stack: LocalStack) -> dict[str, Any]:
    """Let the idle window pass; the one new execution, finished (or idle)."""
    started = new_executions(stack, stack.idle + 1)
    assert len(started) == 1, f"expected one new execution, got {len(started)}"
    return started[0]


def described(stack: LocalStack, execution: dict[str, Any]) -> dict[str, Any]:
    """The execution as it is now."""
    return stack.sfn.describe_execution(executionArn=execution["executionArn"])  # type: ignore[no-any-return]


def package_id(execution: dict[str, Any]) -> str:
    return str(json.loads(execution["input"])["package_id"])


def output(execution: dict[str, Any]) -> dict[str, Any]:
    return json.loads(execution["output"])  # type: ignore[no-any-return]


def log(stack: LocalStack) -> DynamoDecisionLog:
    return DynamoDecisionLog(stack.ddb, stack.tables["decisions"])


def decisions(stack: LocalStack, execution: dict[str, Any]) -> list[MaestroDecision]:
    return log(stack).for_package(package_id(execution))


def outcomes(stack: LocalStack, execution: dict[str, Any]) -> list[ActionOutcomeRecord]:
    return log(stack).outcomes_for(package_id(execution))


def completion(stack: LocalStack, execution: dict[str, Any]) -> PackageCompletion | None:
    return log(stack).completion_for(package_id(execution))


def work_orders(stack: LocalStack) -> list[WorkOrder]:
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    items = stack.ddb.scan(TableName=stack.tables["work_orders"], ConsistentRead=True)["Items"]
    found = [store.get(item["wo_id"]["S"]) for item in items]
    return sorted((wo for wo in found if wo is not None), key=lambda wo: wo.created_at)


def outbox(stack: LocalStack) -> list[SentMessage]:
    return stack.outbox()


def sent_by(stack: LocalStack, execution: dict[str, Any], to: str | None = None) -> list[str]:
    """What one package sent, in its actions' order: each SID its outcome records names, read
    back from Twilio (the loopback), optionally only to one phone."""
    bodies: list[str] = []
    for outcome in outcomes(stack, execution):
        for sid in outcome.message_sids:
            message = stack.twilio.message(sid)
            assert message is not None, f"{sid} is not a message Twilio has"
            if to is None or message["to"] == to:
                bodies.append(message["body"])
    return bodies


def pages(stack: LocalStack) -> list[str]:
    return [m.body for m in outbox(stack) if m.to == ON_CALL_PM]


def to_phone(stack: LocalStack, phone: str) -> list[str]:
    return [m.body for m in outbox(stack) if m.to == phone]


def wait_for_gate(stack: LocalStack, execution_arn: str | None = None) -> Gate:
    """The next paused gate (of one execution, or any)."""
    done = threading.Event()
    for _ in range(1000):
        gates = [
            g
            for g in stack.pipeline.deps.gates.open_gates()
            if execution_arn is None or g.execution_id == execution_arn
        ]
        if gates:
            return gates[0]
        done.wait(0.01)
    raise AssertionError("no gate paused")


def release_all_gates(stack: LocalStack) -> int:
    """Release gates until no execution is paused; how many were released."""
    released = 0
    while True:
        stack.wait_for_executions(allow_paused=True)
        gates = stack.pipeline.deps.gates.open_gates()
        running = {e["executionArn"] for e in stack.running_executions()}
        gates = [g for g in gates if g.execution_id in running]
        if not gates:
            return released
        stack.release_gate(gates[0])
        released += 1


def open_wo(
    stack: LocalStack, wo_id: str, summary: str, tenant_id: str = MARIA.party_id, **extra: Any
) -> WorkOrder:
    """An open work order of Maria's (or ``tenant_id``'s) with Vic, written straight to the WO
    store (a world to start from, not an effect under test)."""
    now = stack.clock.now()
    wo = WorkOrder(
        wo_id=wo_id,
        tenant_id=tenant_id,
        vendor_id=VIC.party_id,
        unit="3B",
        summary=summary,
        category="plumbing",
        created_at=now - timedelta(hours=3),
        updated_at=now - timedelta(hours=1),
        **extra,
    )
    DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).create(wo)
    return wo


@contextmanager
def serving(
    monkeypatch: Any, home: Any, *, speed: float, step: bool, feed: Any = None
) -> Iterator[LocalServer]:
    """A `maestro serve` on a free loopback port, answering on a thread, its operator token
    where the commands find it (in ``home``, the test's own, so no run sees another's);
    ``feed``: a text stream it prints each package to as it flows, as `maestro serve` does."""
    from maestro_dev.local.operator_access import TOKEN_ENV, write_token
    from maestro_dev.local.server import start

    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    stack, srv = start(port=0, speed=speed, step=step, feed=feed)
    write_token(srv.port, srv.token)  # as `maestro serve` does
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        thread.join(timeout=10)
        stack.__exit__(None, None, None)


def run_cli(*argv: str) -> tuple[int, str]:
    """The `maestro` command in this process: its exit code and what it printed."""
    from maestro_dev.cli import main

    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()
