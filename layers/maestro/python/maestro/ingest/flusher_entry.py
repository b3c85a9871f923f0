"""The debounce flusher's Lambda entry point (SQS batches, partial failures), wired from settings.

Settings are validated and adapters built on the first invocation (not at import), then reused
by the warm container. The embedded stack's poller calls ``process_debounce_batch`` with its own
flusher, as the cloud handler does with this one.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
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
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.language_model import language_model
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
    clock = SystemClock()
    buffer = DynamoConversationBuffer(ddb, settings.messages_table, settings.conversations_table)
    model = language_model(settings, clock, ddb, settings.conversations_table)
    work_orders = (
        DynamoWorkOrderStore(ddb, settings.work_orders_table)
        if settings.work_orders_table
        else None
    )
    prober = None
    if model is not None and settings.parties_table and settings.work_orders_table:
        # The probe's model stages load only when a model answers: without a key the flusher
        # never probes, and its cold start need not load the brain.
        from maestro.brain.models import models_for
        from maestro.brain.probe import Prober

        prober = Prober(
            models_for(model),
            buffer,
            DynamoPartyDirectory(ddb, settings.parties_table),
            DynamoWorkOrderStore(ddb, settings.work_orders_table),
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
        clock,
        max_wait_seconds=settings.max_wait_seconds,
        prober=prober,
        work_orders=work_orders,
        states=states,
    )


_RECORD: TypeAdapter[DebounceSignal | StrandedSweep] = TypeAdapter(DebounceSignal | StrandedSweep)

PROBES_AT_ONCE = 10
"""A batch's probe signals (each a model call of about a second) are asked at once, up to the
batch size: one probe no longer holds up the batch's other records (docs/headroom.md)."""


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


def _is_probe(raw: dict[str, Any]) -> bool:
    try:
        kind = _RECORD.validate_json(raw.get("body", ""))
    except ValueError:
        return False  # malformed: the batch processor reports it as it always has
    return isinstance(kind, DebounceSignal) and kind.probe is not None


def _probe_at_once(event: dict[str, Any], flusher: Flusher) -> dict[str, list[Package] | Exception]:
    """The batch's probe signals handled together (each in a copy of the invocation's
    context), by SQS message id: what each started, or what it raised. One alone is left to
    the batch processor, as before."""
    probes = [raw for raw in event.get("Records", []) if _is_probe(raw)]
    if len(probes) < 2:  # one probe gains nothing from a thread
        return {}

    def run(raw: dict[str, Any]) -> list[Package] | Exception:
        try:
            return _flush(SQSRecord(raw), flusher)
        except Exception as error:  # reported as that record's failure
            return error

    with ThreadPoolExecutor(max_workers=min(PROBES_AT_ONCE, len(probes))) as pool:
        futures = {
            raw["messageId"]: pool.submit(contextvars.copy_context().run, run, raw)
            for raw in probes
        }
    return {message_id: future.result() for message_id, future in futures.items()}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def flusher_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SQS batch → flushes, reporting partial batch failures so only failed signals retry."""
    return process_debounce_batch(event, _flusher(), context)


def process_debounce_batch(
    event: dict[str, Any], flusher: Flusher, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of debounce signals (the cloud handler and the local poller share it): its
    probes asked at once first, then every record through the batch processor in order (a
    probe's by its outcome), so partial failures are reported as before."""
    probed = _probe_at_once(event, flusher)

    def handle(record: SQSRecord) -> None:
        outcome = probed.get(record.message_id)
        if outcome is None:
            flush_record(record, flusher)
        elif isinstance(outcome, Exception):
            raise outcome
        else:
            _report(outcome, stranded=False)

    processor = BatchProcessor(event_type=EventType.SQS)
    response = process_partial_response(
        event=event, record_handler=handle, processor=processor, context=context
    )
    return dict(response)
