"""Lambda entry points for read-verify: the watcher (SQS batches of domain events from the
EventBridge rule) and the sweeper (a schedule rule), wired to the real adapters from settings on the
first invocation. The embedded stack calls the same batch function from its poller."""

from __future__ import annotations

import json
from datetime import timedelta
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
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_ledger import DynamoLedger, DynamoSweepWatermark
from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.messaging import message_reader_for
from maestro.clock import SystemClock
from maestro.domain.events import DomainEvent
from maestro.observability import logger, metrics, tracer
from maestro.ports.platform import Clock
from maestro.settings import SweeperSettings, WatcherSettings
from maestro.verify.sweeper import Sweeper, SweeperDeps
from maestro.verify.watcher import Watcher, WatcherDeps

__all__ = [
    "build_sweeper",
    "build_watcher",
    "process_watcher_batch",
    "sweeper_handler",
    "watcher_handler",
]


def build_watcher(settings: WatcherSettings, clock: Clock) -> Watcher:
    ddb = client("dynamodb", settings.region)
    return Watcher(
        WatcherDeps(
            messages=message_reader_for(settings, ddb, messages_table=settings.messages_table),
            work_orders=DynamoWorkOrderStore(ddb, settings.work_orders_table),
            timeline=DynamoTimeline(ddb, settings.timeline_table),
            pending=DynamoPendingStore(ddb, settings.pending_table),
            decisions=DynamoDecisionLog(ddb, settings.decisions_table),
            dispatch=DynamoDispatchStore(ddb, settings.dispatch_table),
            ledger=DynamoLedger(
                ddb, settings.ledger_table, retention_days=settings.ledger_retention_days
            ),
            clock=clock,
        )
    )


@cache
def _watcher() -> Watcher:
    return build_watcher(WatcherSettings(), SystemClock())


def domain_event(record: SQSRecord) -> DomainEvent:
    """The domain event an EventBridge rule delivered to SQS (its ``detail``)."""
    envelope = json.loads(record.body)
    detail = envelope["detail"]
    return DomainEvent.model_validate_json(
        detail if isinstance(detail, str) else json.dumps(detail)
    )


def watch_record(record: SQSRecord, watcher: Watcher) -> None:
    event = domain_event(record)
    row = watcher.watch(event)
    log = logger.warning if row.verdict == "shame" else logger.info
    log(
        "claim checked",
        extra={
            "package_id": event.package_id,
            "event_id": event.event_id,
            "type": event.type,
            "verdict": row.verdict,
            "kind": row.kind,
            "provenance": row.provenance,
        },
    )


def process_watcher_batch(
    event: dict[str, Any], watcher: Watcher, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of domain events (the cloud handler and the local poller share it): a
    record whose surface cannot be read now fails alone and is retried."""
    processor = BatchProcessor(event_type=EventType.SQS)
    response = process_partial_response(
        event=event,
        record_handler=lambda record: watch_record(record, watcher),
        processor=processor,
        context=context,
    )
    return dict(response)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def watcher_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_watcher_batch(event, _watcher(), context)


def build_sweeper(settings: SweeperSettings, clock: Clock) -> Sweeper:
    ddb = client("dynamodb", settings.region)
    return Sweeper(
        SweeperDeps(
            decisions=DynamoDecisionLog(
                ddb, settings.decisions_table, completion_shards=settings.completion_shards
            ),
            ledger=DynamoLedger(
                ddb, settings.ledger_table, retention_days=settings.ledger_retention_days
            ),
            watermark=DynamoSweepWatermark(ddb, settings.ledger_table),
            clock=clock,
            window=timedelta(seconds=settings.sweep_window_seconds),
            lookback=timedelta(seconds=settings.sweep_lookback_seconds),
            concurrency=settings.sweep_concurrency,
            max_packages=settings.sweep_max_packages,
        )
    )


@cache
def _sweeper() -> Sweeper:
    return build_sweeper(SweeperSettings(), SystemClock())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def sweeper_handler(
    event: dict[str, Any],  # noqa: ARG001 - the schedule's event says nothing more
    context: LambdaContext,
) -> dict[str, Any]:
    """A scheduled sweep: effects with no event → missing_event Shame rows; a backlog is left
    at a page boundary before the invocation's time is up (the next sweep goes on)."""
    report = _sweeper().sweep(time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    if report.missing:
        logger.warning("effects without their event", extra=report.as_dict())
    return report.as_dict()
