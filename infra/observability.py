"""A dashboard and the alarms an operator is woken by, on an encrypted SNS topic.

Alarms: messages in any dead-letter queue; failed (or timed-out, or aborted) executions;
fail-open decisions (invocations of the fail-open step); the fallback rate (fallbacks per
package, from the pipeline's own ``Fallbacks`` metric and the executions started); shame rows
that stand (``ShameRows``, counted by the watcher and the sweeper for every Shame row they write,
less ``ShameResolved``, counted for each missing_event row its late event resolved).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.config import EnvConfig
from infra.functions import METRICS_NAMESPACE, SERVICE

SHAME_METRIC = "ShameRows"  # the watcher and the sweeper count each Shame row under this name
SHAME_RESOLVED_METRIC = "ShameResolved"  # ... and each missing_event row a late event resolved
SEND_FAILURES_METRIC = "SendFailures"  # maestro.pipeline.steps: count("SendFailures")
FALLBACK_METRIC = "Fallbacks"  # maestro.pipeline.steps: count("Fallbacks")
FIVE_MINUTES = cdk.Duration.minutes(5)
ONE_HOUR = cdk.Duration.hours(1)


def maestro_metric(name: str, period: cdk.Duration = FIVE_MINUTES) -> cw.Metric:
    """A Powertools metric: namespace Maestro, dimension service=maestro."""
    return cw.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": SERVICE},
        statistic="Sum",
        period=period,
    )


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        state_machine: sfn.StateMachine,
        fail_open: lambda_.Function,
        dead_letter_queues: dict[str, sqs.IQueue],
        functions: dict[str, lambda_.Function],
        api_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.key = kms.Key(
            self,
            "AlarmTopicKey",
            description="Encrypts maestro's alarm topic",
            enable_key_rotation=True,
            removal_policy=config.removal,
        )
        # CloudWatch publishes alarms to the encrypted topic: it needs the key.
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                resources=["*"],  # in a key policy, "*" is this key
            )
        )
        self.topic = sns.Topic(
            self,
            "Alarms",
            display_name=f"{stack.stack_name} alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        if config.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        action = cw_actions.SnsAction(self.topic)
        self.alarms: dict[str, cw.Alarm] = {}

        def alarm(name: str, metric: cw.IMetric, threshold: float, description: str) -> None:
            made = cw.Alarm(
                self,
                name,
                alarm_name=f"{stack.stack_name}-{name}",
                alarm_description=description,
                metric=metric,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
            made.add_alarm_action(action)
            self.alarms[name] = made

        for queue_name, dlq in dead_letter_queues.items():
            alarm(
                f"dlq-{queue_name}",
                dlq.metric_approximate_number_of_messages_visible(
                    period=FIVE_MINUTES, statistic="Maximum"
                ),
                1,
                f"Messages in the {queue_name} dead-letter queue: something failed every retry.",
            )
        failed = cw.MathExpression(
            expression="failed + timedout + aborted",
            using_metrics={
                "failed": state_machine.metric_failed(period=FIVE_MINUTES),
                "timedout": state_machine.metric_timed_out(period=FIVE_MINUTES),
                "aborted": state_machine.metric_aborted(period=FIVE_MINUTES),
            },
            label="Executions failed, timed out or aborted",
            period=FIVE_MINUTES,
        )
        alarm(
            "failed-executions",
            failed,
            1,
            "A package execution failed, timed out or was aborted. A fail-open ends in the "
            "Fail state 'Failed open (PM paged)' and counts here too (its record is written); "
            "anything else may have ended without one. Open it in the Step Functions console.",
        )
        fail_opens = fail_open.metric_invocations(period=FIVE_MINUTES, statistic="Sum")
        alarm(
            "fail-open",
            fail_opens,
            1,
            "A package failed open: its decision is the deterministic default and the PM was "
            "paged. The execution's 'failure' field says which step failed.",
        )
        started = state_machine.metric_started(period=ONE_HOUR)
        fallback_rate = cw.MathExpression(
            expression="IF(started > 0, fallbacks / started, 0)",
            using_metrics={
                "fallbacks": maestro_metric(FALLBACK_METRIC, ONE_HOUR),
                "started": started,
            },
            label="Fallbacks per package",
            period=ONE_HOUR,
        )
        alarm(
            "fallback-rate",
            fallback_rate,
            config.fallback_rate_threshold,
            f"More than {config.fallback_rate_threshold:.0%} of packages in an hour fell back "
            "to a deterministic default (model errors, invalid output, budgets, fail-open).",
        )
        shame = maestro_metric(SHAME_METRIC)
        resolved = maestro_metric(SHAME_RESOLVED_METRIC)
        standing = cw.MathExpression(
            expression="FILL(shame, 0) - FILL(resolved, 0)",
            using_metrics={"shame": shame, "resolved": resolved},
            label="Shame rows written, less those a late event resolved",
            period=FIVE_MINUTES,
        )
        alarm(
            "shame-rows",
            standing,
            1,
            "A Shame row: a claimed effect that no independent read confirms (the watcher), or "
            "an effect whose event never came (the sweeper). `maestro ledger` shows it.",
        )
        alarm(
            "send-failures",
            maestro_metric(SEND_FAILURES_METRIC),
            1,
            "A text could not be sent: Twilio refused it, or kept failing (5xx, 429, timeouts) "
            "through every retry. The action is recorded as failed and the package failed open "
            "(the PM is paged by SMS if Twilio can reach them; this alarm reaches them if not).",
        )
        self.dashboard = cw.Dashboard(
            self, "Dashboard", dashboard_name=f"{stack.stack_name}-operations"
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Packages (executions)",
                left=[
                    state_machine.metric_started(period=FIVE_MINUTES),
                    state_machine.metric_succeeded(period=FIVE_MINUTES),
                    failed,
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Fail-open and fallbacks",
                left=[fail_opens, maestro_metric(FALLBACK_METRIC)],
                right=[fallback_rate],
                width=12,
            ),
            cw.GraphWidget(
                title="Dead-letter queues",
                left=[
                    dlq.metric_approximate_number_of_messages_visible(
                        period=FIVE_MINUTES, statistic="Maximum", label=name
                    )
                    for name, dlq in dead_letter_queues.items()
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Shame and Evidence rows, texts not sent, escalations, abstentions",
                left=[
                    shame,
                    resolved,
                    maestro_metric("EvidenceRows"),
                    maestro_metric(SEND_FAILURES_METRIC),
                    maestro_metric("Escalations"),
                    maestro_metric("EarlyEscalations"),
                    maestro_metric("Abstentions"),
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Function errors",
                left=[
                    fn.metric_errors(period=FIVE_MINUTES, label=name)
                    for name, fn in sorted(functions.items())
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Webhooks (API Gateway)",
                left=[
                    cw.Metric(
                        namespace="AWS/ApiGateway",
                        metric_name=name,
                        dimensions_map={"ApiName": api_name},
                        statistic="Sum",
                        period=FIVE_MINUTES,
                    )
                    for name in ("Count", "4XXError", "5XXError")
                ],
                width=12,
            ),
        )
