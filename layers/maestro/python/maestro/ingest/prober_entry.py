"""The prober's Lambda entry point (SQS batches of probe signals, partial failures), wired from
settings.

Settings are validated and adapters built on the first invocation (not at import), then reused
by the warm container. The embedded stack's poller calls ``process_probe_batch`` with its own
prober, as the cloud handler does with this one.
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

from maestro.adapters.aws import client
from maestro.adapters.configured_model import language_model
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.sqs import SqsDebounceQueue
from maestro.clock import SystemClock
from maestro.ingest.prober import ProbeSignals
from maestro.observability import logger, metrics, tracer
from maestro.ports.workflows import DebounceSignal
from maestro.settings import ProberSettings

PROBES_AT_ONCE = 10
"""A batch's probes (each a model call of about a second) are asked at once: the batch size."""


@cache
def _probe_signals() -> ProbeSignals:
    settings = ProberSettings()  # read from the environment
    ddb = client("dynamodb", settings.region)
    buffer = DynamoConversationBuffer(ddb, settings.messages_table, settings.conversations_table)
    debounce = SqsDebounceQueue(client("sqs", settings.region), settings.debounce_queue_url)
    model = language_model(settings, SystemClock(), ddb, settings.conversations_table)
    if model is None:
        return ProbeSignals(None, debounce)  # no model: the floor alone reads (the webhook's)
    from maestro.brain.probe import Prober
    from maestro.brain.stage_models import models_for

    return ProbeSignals(
        Prober(
            models_for(model),
            buffer,
            DynamoPartyDirectory(ddb, settings.parties_table),
            DynamoWorkOrderStore(ddb, settings.work_orders_table),
        ),
        debounce,
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def prober_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SQS batch → probes, reporting partial batch failures so only failed signals retry."""
    return process_probe_batch(event, _probe_signals(), context)


def process_probe_batch(
    event: dict[str, Any], signals: ProbeSignals, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of probe signals (the cloud handler and the local poller share it): every
    record probed at once (each in a copy of the invocation's context), then reported through
    the batch processor in order, so each record's failure is its own."""
    records = event.get("Records", [])

    def run(raw: dict[str, Any]) -> Exception | None:
        try:
            signals.handle(DebounceSignal.model_validate_json(SQSRecord(raw).body))
        except Exception as error:  # reported as that record's failure
            return error
        return None

    with ThreadPoolExecutor(max_workers=max(1, min(PROBES_AT_ONCE, len(records)))) as pool:
        futures = {
            raw["messageId"]: pool.submit(contextvars.copy_context().run, run, raw)
            for raw in records
        }
    outcomes = {message_id: future.result() for message_id, future in futures.items()}

    def handle(record: SQSRecord) -> None:
        error = outcomes.get(record.message_id)
        if error is not None:
            raise error

    processor = BatchProcessor(event_type=EventType.SQS)
    return dict(
        process_partial_response(
            event=event, record_handler=handle, processor=processor, context=context
        )
    )
