"""The debounce flusher's Lambda entry point (SQS batches, partial failures), wired from settings.

Settings are validated and adapters built on the first invocation (not at import), then reused
by the warm container. The embedded stack's poller calls ``process_debounce_batch`` with its own
flusher, as the cloud handler does with this one.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import TypeAdapter

from maestro.adapters.aws import client
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.sqs import SqsDebounceQueue
from maestro.adapters.stepfunctions import StepFunctionsStarter
from maestro.clock import SystemClock
from maestro.domain.models import Package
from maestro.ingest.flusher import Flusher
from maestro.observability import STRANDED_METRIC, count, logger, metrics, tracer
from maestro.ports.workflows import DebounceSignal, StrandedSweep
from maestro.settings import FlusherSettings


@cache
def _flusher() -> Flusher:
    settings = FlusherSettings()  # read from the environment
    ddb = client("dynamodb", settings.region)
    # The flusher reads the buffered copies (conversations) alone and calls no model: each new
    # message's probe is the prober's (a probe signal that comes here goes on to its queue).
    buffer = DynamoConversationBuffer(ddb, None, settings.conversations_table)
    work_orders = (
        DynamoWorkOrderStore(ddb, settings.work_orders_table)
        if settings.work_orders_table
        else None
    )
    # The urgent idle window's reads: the sender's open WOs and their urgency in memory.
    states = DynamoStateStore(ddb, settings.state_table) if settings.state_table else None
    return Flusher(
        buffer,
        StepFunctionsStarter(
            client("stepfunctions", settings.region),
            settings.state_machine_arn,
            step=settings.step_mode,
        ),
        SystemClock(),
        max_wait_seconds=settings.max_wait_seconds,
        work_orders=work_orders,
        states=states,
        probe_queue=SqsDebounceQueue(client("sqs", settings.region), settings.probe_queue_url)
        if settings.probe_queue_url
        else None,
    )


_RECORD: TypeAdapter[DebounceSignal | StrandedSweep] = TypeAdapter(DebounceSignal | StrandedSweep)


def flush_record(record: SQSRecord, flusher: Flusher) -> None:
    _report(_flush(record, flusher), stranded=_is_stranded(record))


def _is_stranded(record: SQSRecord) -> bool:
    return isinstance(_RECORD.validate_json(record.body), StrandedSweep)


def _flush(record: SQSRecord, flusher: Flusher) -> list[Package]:
    kind = _RECORD.validate_json(record.body)
    return flusher.rescue() if isinstance(kind, StrandedSweep) else flusher.handle(kind)


def _report(packages: list[Package], *, stranded: bool) -> None:
    if stranded and packages:
        # Each is a flush that should have come on its own: worth an operator's look.
        count(STRANDED_METRIC, len(packages))
        logger.warning(
            "the stranded sweep flushed waiting messages", extra={"packages": len(packages)}
        )
    for package in packages:
        count("PackagesFlushed", trigger=package.trigger.value)
        logger.info(
            "package started",
            extra={
                "package_id": package.package_id,
                "conversation_id": package.conversation_id,
                "trigger": package.trigger.value,
                "messages": len(package.messages),
            },
        )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def flusher_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SQS batch → flushes, reporting partial batch failures so only failed signals retry."""
    return process_debounce_batch(event, _flusher(), context)


def process_debounce_batch(
    event: dict[str, Any], flusher: Flusher, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of debounce signals (the cloud handler and the local poller share it),
    each record through the batch processor in order, partial failures reported."""
    processor = BatchProcessor(event_type=EventType.SQS)
    response = process_partial_response(
        event=event,
        record_handler=lambda record: flush_record(record, flusher),
        processor=processor,
        context=context,
    )
    return dict(response)
