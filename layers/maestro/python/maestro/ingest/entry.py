"""The inbound webhook's Lambda entry point, wired to the real adapters from settings.

Settings are validated and adapters built on the first invocation (not at import), then reused
by the warm container. Tests build the same services with fakes or moto instead. The debounce
flusher's entry point is ``maestro.ingest.flusher_entry``: the webhook answers every text and
must not load the flusher, the brain or the Step Functions contract to do it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.utilities.typing import LambdaContext

from maestro.adapters.aws import client
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer, DynamoOutboundStatusStore
from maestro.adapters.dynamodb_consent import DynamoConsentStore
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.secrets import SecretsManagerSecrets
from maestro.adapters.sqs import SqsDebounceQueue
from maestro.clock import SystemClock
from maestro.ingest.service import Ingestor
from maestro.ingest.webhooks import WebhookDeps, build_resolver
from maestro.observability import logger, metrics, tracer
from maestro.ports.platform import Clock
from maestro.settings import InboundSettings


@cache
def _inbound() -> APIGatewayRestResolver:
    return build_inbound(InboundSettings(), SystemClock())  # settings from the environment


def build_inbound(settings: InboundSettings, clock: Clock) -> APIGatewayRestResolver:
    """The inbound resolver on the real adapters (the webhook function's, and the fallback
    drain's, which receives each kept message at the time the edge took it)."""
    ddb = client("dynamodb", settings.region)
    secrets = SecretsManagerSecrets()
    consent = DynamoConsentStore(ddb, settings.conversations_table)
    ingestor = Ingestor(
        DynamoConversationBuffer(
            ddb,
            settings.messages_table,
            settings.conversations_table,
            retention_days=settings.messages_retention_days,
        ),
        DynamoPartyDirectory(ddb, settings.parties_table),
        SqsDebounceQueue(client("sqs", settings.region), settings.debounce_queue_url),
        probe_queue=SqsDebounceQueue(client("sqs", settings.region), settings.probe_queue_url)
        if settings.probe_queue_url
        else None,
        idle_window_seconds=settings.idle_window_seconds,
        max_wait_seconds=settings.max_wait_seconds,
        urgent_idle_window_seconds=settings.urgent_idle_window_seconds,
        severity_probe=settings.severity_probe,
        consent=consent,
    )
    return build_resolver(
        WebhookDeps(
            ingestor=ingestor,
            statuses=DynamoOutboundStatusStore(ddb, settings.messages_table),
            twilio_auth_token=lambda: secrets.get(settings.twilio_auth_token_secret),
            app_signing_secret=lambda: secrets.get(settings.app_signing_secret),
            clock=clock,
            twilio_account_sid=settings.twilio_account_sid,
            public_base_url=str(settings.public_base_url) if settings.public_base_url else None,
            app_signature_tolerance_seconds=settings.app_signature_tolerance_seconds,
            consent=consent,
        )
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def inbound_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _inbound().resolve(event, context)
