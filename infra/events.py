"""The domain-event bus: every effect publishes here (source "maestro"), in every environment.

- a rule sends every domain event to the watcher queue (SQS, with its DLQ); EventBridge's own
  delivery failures go to a delivery DLQ;
- a rule sends each ``wo.created`` event to the wo-start queue (SQS, with its DLQ), whose
  consumer starts that work order's execution of the work order machine (docs/dispatch.md);
  EventBridge's delivery failures go to its own delivery DLQ;
- an archive keeps the events, so the truth feed can be replayed (`aws events start-replay`);
- schedule rules run the sweeper every five minutes (effects whose event never came) and the
  digest every hour (one page listing the unknown numbers of each closed hour).

The watcher function (``functions/watcher``) consumes the watcher queue: the stack makes it with
the factory and hands it to ``Events.add_watcher``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.config import EnvConfig
from infra.queues import dead_letter_queue
from maestro.adapters.eventbridge import EVENT_SOURCE

WATCHER_TIMEOUT = cdk.Duration.seconds(60)  # the watcher's timeout; the queue is sized for it
WO_START_TIMEOUT = cdk.Duration.seconds(30)  # the starter's; the wo-start queue is sized for it
SWEEPER_TIMEOUT = cdk.Duration.seconds(120)
SWEEP_EVERY = cdk.Duration.minutes(5)
DIGEST_TIMEOUT = cdk.Duration.seconds(60)
DIGEST_EVERY = cdk.Duration.hours(1)


def wo_created_pattern() -> events.EventPattern:
    """maestro's ``wo.created`` events (the adapter's detail-type is the event's type)."""
    return events.EventPattern(source=[EVENT_SOURCE], detail_type=["wo.created"])


class Events(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: EnvConfig, watcher_queue: sqs.Queue
    ) -> None:
        super().__init__(scope, construct_id)
        self.watcher_queue = watcher_queue
        self.bus = events.EventBus(self, "Bus", description="maestro's domain events")
        self.archive = self.bus.archive(
            "Archive",
            description="Every maestro domain event, for replays of the truth feed",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
            retention=cdk.Duration.days(config.archive_retention_days),
        )
        self.delivery_dlq = dead_letter_queue(self, "DeliveryDlq")
        NagSuppressions.add_resource_suppressions(
            self.delivery_dlq,
            [
                NagPackSuppression(
                    id="AwsSolutions-SQS3",
                    reason="This queue is a dead-letter queue: the rule target's DeadLetterConfig "
                    "(events EventBridge could not deliver to the watcher queue). cdk-nag "
                    "recognizes only SQS redrive DLQs; a DLQ behind it would only move the "
                    "problem. Its depth raises the event-delivery alarm.",
                )
            ],
        )
        self.rule = events.Rule(
            self,
            "DomainEventsToWatcher",
            description="Every domain event → the watcher queue (read-verify)",
            event_bus=self.bus,
            event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
            targets=[
                targets.SqsQueue(
                    watcher_queue,
                    dead_letter_queue=self.delivery_dlq,
                    max_event_age=cdk.Duration.hours(24),
                    retry_attempts=185,  # EventBridge's maximum: a day of retries
                )
            ],
        )

    def add_wo_start(self, queue: sqs.Queue, starter: lambda_.Function) -> None:
        """``wo.created`` → ``queue`` → ``starter`` (batches of 10, partial failures: a start
        that failed is retried alone, then dead-lettered)."""
        self.wo_created_dlq = dead_letter_queue(self, "WoCreatedDeliveryDlq")
        NagSuppressions.add_resource_suppressions(
            self.wo_created_dlq,
            [
                NagPackSuppression(
                    id="AwsSolutions-SQS3",
                    reason="This queue is a dead-letter queue: the wo.created rule target's "
                    "DeadLetterConfig (events EventBridge could not deliver to the wo-start "
                    "queue). cdk-nag recognizes only SQS redrive DLQs. Its depth raises the "
                    "wo-created-delivery alarm: those work orders have no dispatch.",
                )
            ],
        )
        self.wo_created_rule = events.Rule(
            self,
            "WoCreatedToWoStart",
            description="wo.created → the wo-start queue (a work order's dispatch execution)",
            event_bus=self.bus,
            event_pattern=wo_created_pattern(),
            targets=[
                targets.SqsQueue(
                    queue,
                    dead_letter_queue=self.wo_created_dlq,
                    max_event_age=cdk.Duration.hours(24),
                    retry_attempts=185,  # EventBridge's maximum: a day of retries
                )
            ],
        )
        starter.add_event_source(
            sources.SqsEventSource(queue, batch_size=10, report_batch_item_failures=True)
        )

    def add_watcher(self, watcher: lambda_.Function) -> None:
        """The watcher function consumes the watcher queue (batches of 10, partial failures);
        it is made by ``FunctionFactory.make`` with a timeout of ``WATCHER_TIMEOUT``."""
        watcher.add_event_source(
            sources.SqsEventSource(
                self.watcher_queue, batch_size=10, report_batch_item_failures=True
            )
        )

    def add_sweeper(self, sweeper: lambda_.Function) -> None:
        """Run the sweeper every five minutes (a missed sweep is covered by the next one: each
        starts at the watermark the last one left)."""
        self.sweep_rule, self.sweep_dlq = self._schedule(
            sweeper,
            "Sweep",
            every=SWEEP_EVERY,
            description="Every five minutes: the sweeper (effects whose event never came)",
        )

    def add_digest(self, digest: lambda_.Function) -> None:
        """Run the digest every hour (a run sends every closed hour not yet sent, so a missed
        run is covered by the next)."""
        self.digest_rule, self.digest_dlq = self._schedule(
            digest,
            "Digest",
            every=DIGEST_EVERY,
            description="Every hour: one page listing the unknown numbers of each closed hour",
        )

    def _schedule(
        self, function: lambda_.Function, name: str, *, every: cdk.Duration, description: str
    ) -> tuple[events.Rule, sqs.Queue]:
        """A rate rule on the default bus (as schedules are) invoking ``function``; an
        invocation EventBridge cannot deliver goes to the rule's DLQ (alarmed)."""
        dlq = dead_letter_queue(self, f"{name}DeliveryDlq")
        NagSuppressions.add_resource_suppressions(
            dlq,
            [
                NagPackSuppression(
                    id="AwsSolutions-SQS3",
                    reason=f"This queue is a dead-letter queue: the {name.lower()} schedule's "
                    "target DeadLetterConfig (invocations EventBridge could not deliver). "
                    "cdk-nag recognizes only SQS redrive DLQs. Its depth raises an alarm.",
                )
            ],
        )
        rule = events.Rule(
            self,
            f"{name}Schedule",
            description=description,
            schedule=events.Schedule.rate(every),
            targets=[
                targets.LambdaFunction(
                    function,
                    dead_letter_queue=dlq,
                    max_event_age=cdk.Duration.minutes(15),
                    retry_attempts=2,
                )
            ],
        )
        return rule, dlq
