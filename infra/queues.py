"""Queues: each with its dead-letter queue and a redrive policy, SSE, and TLS enforced."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
from constructs import Construct

MAX_RECEIVES = 5  # as the embedded stack: a message failing five times goes to the DLQ
DLQ_RETENTION = cdk.Duration.days(14)  # SQS's maximum: two weeks to look at a failure


def dead_letter_queue(scope: Construct, construct_id: str) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=DLQ_RETENTION,
    )


def queue_with_dlq(
    scope: Construct, construct_id: str, *, visibility: cdk.Duration
) -> tuple[sqs.Queue, sqs.Queue]:
    dlq = dead_letter_queue(scope, construct_id + "Dlq")
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        visibility_timeout=visibility,
        dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVES, queue=dlq),
    )
    return queue, dlq


class Queues(Construct):
    """The debounce queue (→ the flusher), the probe queue (→ the prober), the watcher queue
    (EventBridge rule → the watcher), the inbound fallback queue (Twilio's fallback URL → the
    drain) and the wo-start queue (the ``wo.created`` rule → the work order machine's starter)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        flusher_timeout: cdk.Duration,
        prober_timeout: cdk.Duration,
        watcher_timeout: cdk.Duration,
        drain_timeout: cdk.Duration,
        wo_start_timeout: cdk.Duration,
    ) -> None:
        super().__init__(scope, construct_id)
        # AWS's advice for a Lambda event source: visibility at least six times the timeout.
        self.debounce, self.debounce_dlq = queue_with_dlq(
            self, "Debounce", visibility=cdk.Duration.seconds(6 * flusher_timeout.to_seconds())
        )
        # Each new message's severity probe (docs/headroom.md): a probe that failed every
        # receive waits in the DLQ (alarmed); its message still flushes on the idle window.
        self.probe, self.probe_dlq = queue_with_dlq(
            self, "Probe", visibility=cdk.Duration.seconds(6 * prober_timeout.to_seconds())
        )
        self.watcher, self.watcher_dlq = queue_with_dlq(
            self, "Watcher", visibility=cdk.Duration.seconds(6 * watcher_timeout.to_seconds())
        )
        # Webhooks Twilio's fallback URL kept: the only copy of a message the primary route
        # could not store, so a DLQ that holds what failed every drain (alarmed, 14 days).
        self.fallback, self.fallback_dlq = queue_with_dlq(
            self,
            "InboundFallback",
            visibility=cdk.Duration.seconds(6 * drain_timeout.to_seconds()),
        )
        # New work orders whose execution is to start: a start that failed every receive waits
        # in the DLQ (alarmed): that WO has no dispatch until it is redriven.
        self.wo_start, self.wo_start_dlq = queue_with_dlq(
            self, "WoStart", visibility=cdk.Duration.seconds(6 * wo_start_timeout.to_seconds())
        )

    @property
    def dead_letter_queues(self) -> dict[str, sqs.Queue]:
        return {
            "debounce": self.debounce_dlq,
            "probe": self.probe_dlq,
            "watcher": self.watcher_dlq,
            "inbound-fallback": self.fallback_dlq,
            "wo-start": self.wo_start_dlq,
        }
