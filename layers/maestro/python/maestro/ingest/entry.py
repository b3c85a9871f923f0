"""Lambda entry points for ingestion, wired to the real adapters from settings.

Settings are validated and adapters built on the first invocation (not at import), then reused
by the warm container. Tests build the same services with fakes or moto instead.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from maestro.adapters.aws import client
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer, DynamoOutboundStatusStore
from maestro.adapters.dynamodb_memory import DynamoPartyDirectory, DynamoWorkOrderStore
from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.adapters.sqs import SqsDebounceQueue
from maestro.adapters.stepfunctions import StepFunctionsStarter
from maestro.clock import SystemClock
from maestro.ingest.flusher import Flusher
from maestro.ingest.service import Ingestor
from maestro.ingest.webhooks import WebhookDeps, build_resolver
from maestro.observability import count, logger, metrics, tracer
from maestro.ports import DebounceSignal
from maestro.settings import FlusherSettings, InboundSettings


@cache
def _inbound() -> APIGatewayRestResolver:
    settings = InboundSettings()  # read from the environment
    ddb = client("dynamodb", settings.region)
    secrets = SecretsManagerSecrets()
    ingestor = Ingestor(
        DynamoConversationBuffer(ddb, settings.messages_table, settings.conversations_table),
        DynamoPartyDirectory(ddb, settings.parties_table),
        SqsDebounceQueue(client("sqs", settings.region), settings.debounce_queue_url),
        idle_window_seconds=settings.idle_window_seconds,
        max_wait_seconds=settings.max_wait_seconds,
        severity_probe=settings.severity_probe,
    )
    return build_resolver(
        WebhookDeps(
            ingestor=ingestor,
            statuses=DynamoOutboundStatusStore(ddb, settings.messages_table),
            twilio_auth_token=lambda: secrets.get(settings.twilio_auth_token_secret),
            app_signing_secret=lambda: secrets.get(settings.app_signing_secret),
            clock=SystemClock(),
            public_base_url=str(settings.public_base_url) if settings.public_base_url else None,
            app_signature_tolerance_seconds=settings.app_signature_tolerance_seconds,
        )
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def inbound_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _inbound().resolve(event, context)


@cache
def _flusher() -> Flusher:
    # The model stack is imported here, not at the top: the inbound webhook shares this module
    # and must never import a model SDK (it answers fast and calls no model).
    from maestro.brain.models import models_for
    from maestro.brain.probe import Prober
    from maestro.pipeline.entry import language_model

    settings = FlusherSettings()  # read from the environment
    ddb = client("dynamodb", settings.region)
    clock = SystemClock()
    buffer = DynamoConversationBuffer(ddb, settings.messages_table, settings.conversations_table)
    model = language_model(settings, clock, ddb, settings.conversations_table)
    prober = None
    if model is not None and settings.parties_table and settings.work_orders_table:
        prober = Prober(
            models_for(model),
            buffer,
            DynamoPartyDirectory(ddb, settings.parties_table),
            DynamoWorkOrderStore(ddb, settings.work_orders_table),
        )
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
    )


def flush_record(record: SQSRecord, flusher: Flusher) -> None:
    signal = DebounceSignal.model_validate_json(record.body)
    packages = flusher.handle(signal)
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
    """One SQS batch of debounce signals (the cloud handler and the local poller share it)."""
    processor = BatchProcessor(event_type=EventType.SQS)
    response = process_partial_response(
        event=event,
        record_handler=lambda record: flush_record(record, flusher),
        processor=processor,
        context=context,
    )
    return dict(response)
