"""The fallback drain's Lambda entry point: SQS batches of kept webhooks, partial failures.

Each record is one SMS webhook the fallback edge kept (:mod:`maestro.ingest.fallback`), handed
to the same inbound resolver the webhook function runs. A refused one is dropped (it would be
refused again); one the route could not store yet is reported as a batch item failure, so SQS
tries it again and, past its receive count, keeps it in the dead-letter queue (alarmed). The
embedded stack's poller calls ``process_fallback_batch`` with its own drain.
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

from maestro.ingest.entry import build_inbound
from maestro.ingest.fallback import FallbackDrain, FallbackRequest, ReceivedClock
from maestro.observability import logger, metrics, tracer
from maestro.settings import InboundSettings

_NO_CONTEXT: Any = None


@cache
def _drain() -> FallbackDrain:
    received = ReceivedClock()
    resolver = build_inbound(InboundSettings(), received)  # settings from the environment
    # The resolver reads nothing from the Lambda context (the webhook's own handler passes its
    # own); the drain's context is the batch's, which the resolver does not need.
    return FallbackDrain(lambda event: resolver.resolve(event, _NO_CONTEXT), received)


def drain_record(record: SQSRecord, drain: FallbackDrain) -> None:
    try:
        request = FallbackRequest.from_sqs(record.body, record.raw_event["messageAttributes"])
    except ValueError as error:
        # Not something the fallback edge writes: nothing to store, and retrying cannot help.
        logger.warning(
            "dropped a malformed record of the fallback queue", extra={"why": str(error)}
        )
        return
    drain.drain(request)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def fallback_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_fallback_batch(event, _drain(), context)


def process_fallback_batch(
    event: dict[str, Any], drain: FallbackDrain, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of kept webhooks (the cloud handler and the local poller share it)."""
    response = process_partial_response(
        event=event,
        record_handler=lambda record: drain_record(record, drain),
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,
    )
    return dict(response)
