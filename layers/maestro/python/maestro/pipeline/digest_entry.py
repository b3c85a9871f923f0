"""The Lambda entry of the hourly digest (``functions/digest``, on a schedule rule), and its
wiring from :class:`maestro.settings.DigestSettings` to the real adapters. The embedded stack
builds the same :class:`maestro.pipeline.digest.DigestSender` with its virtual clock."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from maestro.adapters.aws import client
from maestro.adapters.dynamodb_caps import DailyCapLimits, DynamoDailyCaps
from maestro.adapters.dynamodb_digest import DynamoDigest
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.eventbridge import EventBridgeBus
from maestro.adapters.messaging import messenger_for
from maestro.clock import SystemClock
from maestro.observability import logger, metrics, tracer
from maestro.pipeline.digest import DigestDeps, DigestSender
from maestro.ports.platform import Clock
from maestro.settings import DigestSettings

__all__ = ["build_digest", "digest_handler"]


def build_digest(settings: DigestSettings, clock: Clock) -> DigestSender:
    ddb = client("dynamodb", settings.region)
    return DigestSender(
        DigestDeps(
            digest=DynamoDigest(ddb, settings.conversations_table),
            messenger=messenger_for(
                settings,
                ddb,
                clock,
                messages_table=settings.messages_table,
                sends_table=settings.sends_table,
                # The digest texts the PM alone: their consent is checked, not the directory's.
                conversations_table=settings.conversations_table,
            ),
            bus=EventBridgeBus(client("events", settings.region), settings.event_bus_name),
            clock=clock,
            on_call_pm_phone=settings.on_call_pm_phone,
            caps=DynamoDailyCaps(
                ddb,
                settings.conversations_table,
                DailyCapLimits(
                    pages=settings.account_daily_pages, texts=settings.account_daily_texts
                ),
            ),
            max_lines=settings.digest_max_lines,
            lookback_hours=settings.digest_lookback_hours,
            directory=DynamoDirectory(ddb, settings.directory_table),
        )
    )


@cache
def _digest() -> DigestSender:
    return build_digest(DigestSettings(), SystemClock())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def digest_handler(
    event: dict[str, Any],  # noqa: ARG001 - the schedule's event says nothing more
    context: LambdaContext,  # noqa: ARG001 - Powertools' decorators read it
) -> dict[str, Any]:
    """A scheduled run: the page of every hour that is over and not sent yet."""
    report = _digest().run()
    return report.model_dump(mode="json")
