"""A dashboard and the alarms an operator is woken by, on an encrypted SNS topic that e-mails
``alarm_email`` (and texts ``alarm_sms`` when set): an environment that is not a development one
is not synthesized without a subscriber (``infra.config``).

Alarms:
- the edge: API Gateway 5XX answers (a webhook that did not reach its handler, or raised); the
  4XX rate (a wrong auth token or app secret refuses every message); 429s (the stage's throttle,
  counted from the JSON access log's status, since API Gateway has no 429 metric; and WAF's
  per-address rate rule, from its own metric);
- functions: the errors of every function outside the state machine (the inbound webhook, the
  flusher, the watcher, the sweeper, and any function added later); the steps' failures are the
  state machine's to retry and catch, watched by the failed-execution and fail-open alarms;
- messages in any dead-letter queue; failed (or timed-out, or aborted) executions of the
  package pipeline, and of the work order machine (a WO whose dispatch broke: no vendor and no
  page may have come of it); fail-open
  decisions (invocations of the fail-open step); the fallback rate (fallbacks per package, from
  the pipeline's own ``Fallbacks`` metric and the executions started); shame rows that stand
  (``ShameRows``, counted by the watcher and the sweeper for every Shame row they write, less
  ``ShameResolved``, counted for each missing_event row its late event resolved); texts that
  could not be sent;
- an account-wide daily cap reached: ``maestro.observability.DAILY_CAP_METRIC``, counted by
  whatever enforces a cap (quiet until something counts it);
- a page with no one to go to (``UNDELIVERABLE_PAGE_METRIC``: docs/on-call.md).
"""

from __future__ import annotations

from collections.abc import Callable

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.api import RATE_LIMITED, WebhookApi
from infra.config import EnvConfig
from infra.fallback import FallbackApi
from infra.functions import METRICS_NAMESPACE, SERVICE
from maestro.access import DISPATCH_STEPS, PIPELINE_STEPS
from maestro.observability import (
    DAILY_CAP_METRIC,
    FALLBACK_DRAINED_METRIC,
    FALLBACK_REFUSED_METRIC,
    STRANDED_METRIC,
    UNDELIVERABLE_PAGE_METRIC,
)

SHAME_METRIC = "ShameRows"  # the watcher and the sweeper count each Shame row under this name
SHAME_RESOLVED_METRIC = "ShameResolved"  # ... and each missing_event row a late event resolved
SEND_FAILURES_METRIC = "SendFailures"  # maestro.pipeline.act, fail_open: count("SendFailures")
FALLBACK_METRIC = "Fallbacks"  # maestro.pipeline.dispose, fail_open: count("Fallbacks")

FIVE_MINUTES = cdk.Duration.minutes(5)
ONE_HOUR = cdk.Duration.hours(1)
MIN_REQUESTS_FOR_A_RATE = 10
"""The 4XX rate alarms only over at least this many requests in its 5 minutes."""
FUNCTION_ERRORS = {
    "inbound_sms": "The inbound webhook raised: API Gateway answered 5XX, so the message (or "
    "status callback) may not be stored. Its log group says why.",
    "flusher": "The flusher raised on a whole batch: its debounce signals are retried, then "
    "go to the debounce DLQ. Packages may be late.",
    "prober": "The prober raised on a whole batch: its probe signals are retried, then go to "
    "the probe DLQ. Their messages still flush on the idle window (the floor still reads them).",
    "watcher": "The watcher raised on a whole batch: its claims are read again, then go to "
    "the watcher DLQ.",
    "sweeper": "A sweep failed: EventBridge retries it twice, then drops it to the "
    "sweep-delivery DLQ; the next sweep looks again.",
    "digest": "The hourly digest raised: EventBridge retries it twice, then drops it to the "
    "digest-delivery DLQ; the next run sends every closed hour not yet sent.",
    "inbound_fallback": "The fallback drain raised: the webhooks Twilio's fallback URL kept "
    "wait on the fallback queue (retried, then its DLQ). They are stored once it recovers.",
    "wo_start": "The work order starter raised on a whole batch: its wo.created events are "
    "retried, then go to the wo-start DLQ. Those WOs have no dispatch execution yet.",
}
"""Why a function's errors matter; a function not named here gets a general description."""


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
        work_order_machine: sfn.StateMachine,
        fail_open: lambda_.Function,
        dead_letter_queues: dict[str, sqs.IQueue],
        functions: dict[str, lambda_.Function],
        webhooks: WebhookApi,
        fallback: FallbackApi,
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
        if config.alarm_sms:
            self.topic.add_subscription(subscriptions.SmsSubscription(config.alarm_sms))
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

        api_requests, api_errors = self._edge(config, webhooks, alarm)
        kept = fallback.api.metric_count(period=FIVE_MINUTES, statistic="Sum", label="kept")
        alarm(
            "fallback-api-5xx",
            fallback.api.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "Twilio's SMS fallback URL answered 5XX (SQS refused or failed): a text whose "
            "primary webhook failed too is lost; Twilio's debugger has it (error 11200).",
        )
        fallback_throttled = self._answered_429(
            "Fallback429s", fallback.access_logs, "fallback", "fallback 429 answers"
        )
        alarm(
            "fallback-api-429",
            fallback_throttled,
            1,
            "Twilio's SMS fallback URL answered 429 (its stage's throttle, or WAF's per-address "
            "rate rule): a text whose primary webhook failed too was refused and is lost.",
        )
        stranded = maestro_metric(STRANDED_METRIC)
        alarm(
            "stranded-flushes",
            stranded,
            1,
            "The stranded sweep flushed messages that had waited past max_wait without a flush: "
            "a debounce signal was lost after the message was stored, or a flush failed every "
            "retry. They are handled now; the flusher's logs and DLQ say why.",
        )
        for name, function in sorted(functions.items()):
            if name in PIPELINE_STEPS or name in DISPATCH_STEPS:
                continue  # their state machine retries and catches these (failed executions)
            alarm(
                f"errors-{name.replace('_', '-')}",
                function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                1,
                FUNCTION_ERRORS.get(name, f"The {name} function raised; its log group says why."),
            )
        alarm(
            "daily-cap",
            maestro_metric(DAILY_CAP_METRIC),
            1,
            "An account-wide daily cap (pages, texts or model calls) was reached: for the rest "
            "of the day what it caps is refused or degraded (an emergency page never "
            "is). A flood of unknown senders, or a loop.",
        )
        alarm(
            "undeliverable-pages",
            maestro_metric(UNDELIVERABLE_PAGE_METRIC),
            1,
            "A page had no one to go to: no on-call PM in the directory for its property at "
            "that moment, no default PM, and no account fallback number (on_call_pm_phone). "
            "Nothing was sent; the decision log and the function's log say which page "
            "(docs/on-call.md). Import the on-call shifts, or set a fallback number.",
        )
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
        wo_failed = cw.MathExpression(
            expression="failed + timedout + aborted",
            using_metrics={
                "failed": work_order_machine.metric_failed(period=FIVE_MINUTES),
                "timedout": work_order_machine.metric_timed_out(period=FIVE_MINUTES),
                "aborted": work_order_machine.metric_aborted(period=FIVE_MINUTES),
            },
            label="Work order executions failed, timed out or aborted",
            period=FIVE_MINUTES,
        )
        alarm(
            "failed-wo-executions",
            wo_failed,
            1,
            "A work order's dispatch execution failed, timed out or was aborted: its WO may "
            "have no vendor and no page to the PM. `maestro wo show WO-…` gives its execution; "
            "the Step Functions console says which state failed and why.",
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
                title="Work orders (dispatch executions)",
                left=[
                    work_order_machine.metric_started(period=FIVE_MINUTES),
                    work_order_machine.metric_succeeded(period=FIVE_MINUTES),
                    wo_failed,
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
                title="Webhooks (API Gateway): requests, 4XX, 5XX, 429",
                left=[*api_requests, *api_errors],
                width=12,
            ),
            cw.GraphWidget(
                title="Twilio's fallback: requests kept, drained, refused; stranded flushes",
                left=[
                    kept,
                    fallback_throttled,
                    maestro_metric(FALLBACK_DRAINED_METRIC),
                    maestro_metric(FALLBACK_REFUSED_METRIC),
                    stranded,
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Webhooks (WAF): requests blocked, by rule",
                left=[
                    self._waf_blocked(webhooks, rule, cdk.Stack.of(self).region)
                    for rule in webhooks.rule_metrics
                ],
                width=12,
            ),
        )

    def _edge(
        self,
        config: EnvConfig,
        webhooks: WebhookApi,
        alarm: Callable[[str, cw.IMetric, float, str], None],
    ) -> tuple[list[cw.IMetric], list[cw.IMetric]]:
        """The webhooks' alarms; the metrics for the dashboard."""
        api = webhooks.api
        requests = api.metric_count(period=FIVE_MINUTES, statistic="Sum")
        server_errors = api.metric_server_error(period=FIVE_MINUTES, statistic="Sum")
        client_errors = api.metric_client_error(period=FIVE_MINUTES, statistic="Sum")
        alarm(
            "api-5xx",
            server_errors,
            1,
            "The webhooks answered 5XX: a handler raised or timed out, or API Gateway failed. "
            "A message Twilio posted then may not be stored.",
        )
        rate = cw.MathExpression(
            expression=f"IF(requests >= {MIN_REQUESTS_FOR_A_RATE}, errors / requests, 0)",
            using_metrics={"errors": client_errors, "requests": requests},
            label="4XX per request",
            period=FIVE_MINUTES,
        )
        alarm(
            "api-4xx-rate",
            rate,
            config.api_4xx_rate_threshold,
            f"More than {config.api_4xx_rate_threshold:.0%} of webhook requests in 5 minutes "
            "were refused (4XX): a wrong Twilio auth token or app signing secret refuses "
            "every message (403), or someone is probing the API.",
        )
        throttled = self._answered_429(
            "Webhook429s", webhooks.access_logs, "webhook", "429 answers"
        )
        alarm(
            "api-429",
            throttled,
            1,
            "The webhooks answered 429 (the stage's throttle, or WAF's per-address rate "
            "rule): Twilio's request was refused, not retried, unless its fallback URL took it.",
        )
        alarm(
            "waf-rate-limited",
            self._waf_blocked(webhooks, "rate-limited", cdk.Stack.of(self).region),
            1,
            "WAF's per-address rate rule blocked requests (429): one address sent more than "
            f"{config.webhook_rate_limit_per_ip} in 5 minutes. An attacker, or Twilio through "
            "one address: its sampled requests in the WAF console say which.",
        )
        return [requests], [client_errors, server_errors, throttled]

    def _answered_429(
        self, construct_id: str, access_logs: logs.ILogGroup, api: str, label: str
    ) -> cw.Metric:
        """API Gateway has no 429 metric: a metric filter counting the access log's lines with
        status 429 (named per stack, so two stacks in one account do not share it)."""
        return logs.MetricFilter(
            self,
            construct_id,
            log_group=access_logs,
            metric_namespace=METRICS_NAMESPACE,
            metric_name=f"{cdk.Stack.of(self).stack_name}-{api}-429s",
            filter_pattern=logs.FilterPattern.string_value("$.status", "=", str(RATE_LIMITED)),
            metric_value="1",
        ).metric(period=FIVE_MINUTES, statistic="Sum", label=label)

    @staticmethod
    def _waf_blocked(webhooks: WebhookApi, rule: str, region: str) -> cw.Metric:
        return cw.Metric(
            namespace="AWS/WAFV2",
            metric_name="BlockedRequests",
            dimensions_map={
                "WebACL": webhooks.web_acl_name,
                "Rule": webhooks.rule_metrics[rule],
                "Region": region,
            },
            statistic="Sum",
            period=FIVE_MINUTES,
            label=rule,
        )
