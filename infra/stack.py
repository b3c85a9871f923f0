"""One stack per environment: ``maestro-<env>``, composed of one construct per concern."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct
from pydantic_settings import BaseSettings

from infra.api import WebhookApi
from infra.config import EnvConfig
from infra.evals import EvalCopyCode, EvalExecutor, eval_copy_config
from infra.events import DIGEST_TIMEOUT, SWEEPER_TIMEOUT, WATCHER_TIMEOUT, WO_START_TIMEOUT, Events
from infra.fallback import FallbackApi
from infra.functions import Bound, FunctionFactory, FunctionSpec, Setting
from infra.layers import Layers
from infra.observability import Observability
from infra.pipeline import Pipeline
from infra.queues import Queues
from infra.secrets import Secrets
from infra.tables import MemoryTables
from maestro.access import DISPATCH_STEPS, EVENT_PUBLISHERS, PIPELINE_STEPS, tables_of
from maestro.ports.workflows import StrandedSweep
from maestro.settings import (
    DigestSettings,
    DispatchSettings,
    FlusherSettings,
    InboundSettings,
    PipelineSettings,
    ProberSettings,
    SweeperSettings,
    WatcherSettings,
    WoStartSettings,
)
from maestro.stack_outputs import (
    OUTPUT_AUTH_TOKEN_SECRET,
    OUTPUT_EVAL_MACHINE,
    OUTPUT_EVAL_RUNS_TABLE,
    OUTPUT_SMS_FALLBACK_URL,
    OUTPUT_SMS_URL,
    OUTPUT_STATE_MACHINE,
    OUTPUT_WEBHOOK_BASE_URL,
    table_output,
)
from maestro.tables import RETENTION_DAYS

FLUSHER_TIMEOUT = cdk.Duration.seconds(60)
PROBER_TIMEOUT = cdk.Duration.seconds(60)  # a batch of 10 probes asked at once, each ≤ 20 s
INBOUND_TIMEOUT = cdk.Duration.seconds(15)
DRAIN_TIMEOUT = cdk.Duration.seconds(30)
STRANDED_SWEEP_EVERY = cdk.Duration.minutes(5)
# The steps that may call a model (#5): the pre-check, re-validation's decide() (lease and
# resolve), the brain's samples, the guards' break-in judgment (dispose), the manage agent
# (act). They alone can read the Anthropic key.
MODEL_STEPS = frozenset({"precheck", "lease", "resolve", "brain", "dispose", "act"})
# The steps that text (the lanes run in act; escalate runs act's lanes in-process; fail-open
# pages the PM itself; the work order machine's question, approval request, offers, access
# details, withdrawals and pages): they alone get Twilio's settings and may read its auth token.
TEXTING_STEPS = frozenset(
    {"act", "escalate", "fail_open", "wo_ask", "wo_record", "wo_assign", "wo_page"}
)
# The package pipeline's steps that complete a work order execution's wait (a vendor's answer
# to an offer, a PM's to an approval, the tenant's details, a withdrawal when a WO closes): they
# alone may send task success, to the work order machine alone. Act's lanes do it all (its
# PipelineDeps alone get TaskTokens: maestro.pipeline.entry); persist completes none.
COMPLETES_WAITS = frozenset({"act"})
STEP_TIMEOUTS = {"brain": cdk.Duration.seconds(120), "act": cdk.Duration.seconds(60)}
STEP_DESCRIPTIONS = {
    "precheck": "Pre-check: the safety floor before anything else",
    "escalate": "Escalate at once: page the PM, advise the tenant",
    "lease": "Take the conversation lease (one package at a time, in order)",
    "resolve": "Resolve open questions and held confirmations",
    "brain": "Brain: sample and vote",
    "dispose": "Dispose: decide the action queue (decisions written ahead)",
    "act": "Act: run one action's lane, idempotently",
    "persist": "Persist: decision log and state; release the lease",
    "fail_open": "Fail open: record the default, page the PM, release",
    "step_gate": "Step gate: store the task token and wait (step mode)",
    "wo_gather": "Dispatch, gather: what the work order lacks before a vendor can go",
    "wo_ask": "Dispatch: ask the tenant, the PM or a vendor, and keep the wait's task token",
    "wo_record": "Dispatch: record a wait's answer (or its timeout, or a withdrawal)",
    "wo_judge": "Dispatch, judge: priority, trade, budget, approval and the ranked vendors",
    "wo_assign": "Dispatch: assign the vendor who accepted; tell them and the tenant",
    "wo_page": "Dispatch: page the on-call PM (no vendor, or no approval)",
}


COMPLETION_WRITERS = ("persist", "fail_open")
"""The steps that write a package's completion line (the sweeper reads them by the same shards)."""


def _given(**settings: int | None) -> dict[str, Setting]:
    """The settings an environment sets (the rest keep their defaults in maestro.settings)."""
    return {name: str(value) for name, value in settings.items() if value is not None}


def retention_settings(
    config: EnvConfig, function: str, model: type[BaseSettings]
) -> dict[str, Setting]:
    """The environment's retention of each table with one (``maestro.tables.RETENTION_DAYS``)
    for a function that writes it (its row of ``maestro.access.FUNCTION_TABLES``) and whose
    settings read it: the ones whose writes set the expiry. The prober writes messages too, but
    only the probe's result on a stored one: its settings have no retention."""
    row = tables_of(function)
    settings: dict[str, Setting] = {}
    for table in RETENTION_DAYS:
        setting = f"{table}_retention_days"
        if row.get(table) == "write" and setting in model.model_fields:
            settings[setting] = str(getattr(config, setting))
    return settings


class MaestroStack(cdk.Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        eval_copy: EvalCopyCode | None = None,
        **kwargs: Any,
    ) -> None:
        """``eval_copy``: the environment's eval copy (infra/evals.py): this stack again, on
        its own resources, with :func:`eval_copy_config`'s settings and the eval executor,
        whose code the app hands in (deploy code never imports the dev package)."""
        if eval_copy is not None:
            config = eval_copy_config(config, eval_copy)
        what = "webhooks, debounce, package pipeline, memory"
        super().__init__(
            scope,
            construct_id,
            description=f"maestro ({config.name}): "
            + (f"the eval copy: {what}, and the eval executor" if eval_copy is not None else what),
            **kwargs,
        )
        self.config = config
        self.eval_copy = eval_copy
        cdk.Tags.of(self).add("app", "maestro")
        cdk.Tags.of(self).add("maestro:env", config.name)
        if eval_copy is not None:
            cdk.Tags.of(self).add("maestro:eval-copy", "true")
        # (The eval copy texts no one by design: infra/evals.py.)
        if not config.development and not config.twilio_account_sid and eval_copy is None:
            cdk.Annotations.of(self).add_warning_v2(
                "maestro:recording-messenger",
                f"{config.name}: no twilio_account_sid, so the recording messenger answers: "
                "pages and texts are recorded, not sent (the on-call PM is paged by no one).",
            )

        self.secrets = Secrets(self, "Secrets", config=config)
        self.memory = MemoryTables(self, "Memory", config=config)
        self.queues = Queues(
            self,
            "Queues",
            flusher_timeout=FLUSHER_TIMEOUT,
            prober_timeout=PROBER_TIMEOUT,
            watcher_timeout=WATCHER_TIMEOUT,
            drain_timeout=DRAIN_TIMEOUT,
            wo_start_timeout=WO_START_TIMEOUT,
        )
        self.events = Events(self, "Events", config=config, watcher_queue=self.queues.watcher)
        self.layers = Layers(self, "Layers", removal=config.removal)
        self.factory = FunctionFactory(self, "Functions", config=config, layers=self.layers)

        # Each function's tables (its settings and its grants) come from its row of
        # maestro.access.FUNCTION_TABLES: self.memory.settings_for(name).
        tables = self.memory.settings_for
        bus = Bound(self.events.bus.event_bus_name, self.events.bus.grant_put_events_to)
        model_settings: dict[str, Setting] = {
            "anthropic_api_key_secret": Bound(
                self.secrets.anthropic_api_key.secret_arn,
                self.secrets.anthropic_api_key.grant_read,
            ),
            "cheap_model_id": config.cheap_model_id,
            "strong_model_id": config.strong_model_id,
            "compose_replies": "true" if config.compose_replies else "false",
            **_given(account_daily_model_calls=config.daily_model_call_cap),
        }
        # The account-wide daily caps on what is sent: for whatever pages or texts.
        send_caps: dict[str, Setting] = _given(
            account_daily_pages=config.daily_page_cap, account_daily_texts=config.daily_text_cap
        )
        windows: dict[str, Setting] = {
            "idle_window_seconds": str(config.idle_window_seconds),
            "urgent_idle_window_seconds": str(config.urgent_idle_window_seconds),
            "max_wait_seconds": str(config.max_wait_seconds),
        }

        def inbound_settings(function: str) -> dict[str, Setting]:
            """The inbound route's: the webhook function's, and the fallback drain's."""
            return {
                **tables(function),
                "debounce_queue_url": Bound(
                    self.queues.debounce.queue_url, self.queues.debounce.grant_send_messages
                ),
                "twilio_auth_token_secret": Bound(
                    self.secrets.twilio_auth_token.secret_arn,
                    self.secrets.twilio_auth_token.grant_read,
                ),
                # Webhooks naming another account are refused; none set: the Twilio routes 503.
                # The eval copy serves the account the scenarios' signed webhooks name.
                "twilio_account_sid": eval_copy.webhook_account
                if eval_copy is not None
                else config.twilio_account_sid,
                "app_signing_secret": Bound(
                    self.secrets.app_signing_secret.secret_arn,
                    self.secrets.app_signing_secret.grant_read,
                ),
                # The prober probes each new message when a key is set (it skips otherwise),
                # off the flusher's path: the probe signals go to its own queue.
                "severity_probe": "true",
                "probe_queue_url": Bound(
                    self.queues.probe.queue_url, self.queues.probe.grant_send_messages
                ),
                **windows,
                **retention_settings(config, function, InboundSettings),
            }

        self.inbound = self.factory.make(
            FunctionSpec(
                name="inbound_sms",
                description="Webhooks: verify the signature, dedupe, buffer, signal the debounce",
                settings_model=InboundSettings,
                settings=inbound_settings("inbound_sms"),
                timeout=INBOUND_TIMEOUT,
            )
        )
        # Store first: a webhook the function could not take goes to Twilio's fallback URL, the
        # fallback API keeps it on a queue, and this drain hands it to the same route.
        self.drain = self.factory.make(
            FunctionSpec(
                name="inbound_fallback",
                description="Twilio's fallback queue → the inbound route (kept webhooks stored)",
                settings_model=InboundSettings,
                settings=inbound_settings("inbound_fallback"),
                timeout=DRAIN_TIMEOUT,
            )
        )
        self.drain.add_event_source(
            sources.SqsEventSource(
                self.queues.fallback, batch_size=10, report_batch_item_failures=True
            )
        )
        self.webhooks = WebhookApi(self, "Webhooks", config=config, inbound=self.inbound)
        self.fallback = FallbackApi(
            self,
            "Fallback",
            config=config,
            queue=self.queues.fallback,
            web_acl=self.webhooks.web_acl,
            after=self.webhooks.api,
        )
        # Twilio, for the steps that text (act, and escalate and fail-open, which text
        # themselves): the account and its number from cdk.json, the token's secret (read on
        # the first text), status callbacks to this stack's own webhook. No account configured:
        # the recording messenger (it texts no one).
        twilio: dict[str, Setting] = {
            "twilio_account_sid": config.twilio_account_sid,
            "twilio_auth_token_secret": Bound(
                self.secrets.twilio_auth_token.secret_arn,
                self.secrets.twilio_auth_token.grant_read,
            ),
            "twilio_from_number": config.twilio_from_number,
            "twilio_status_callback_url": self.webhooks.url + "twilio/status",
        }

        def step_settings(step: str) -> dict[str, Setting]:
            """A step's: its row of tables, the bus if it publishes, the on-call number, the
            model if it may call one, Twilio if it texts."""
            settings: dict[str, Setting] = {
                "step": step,
                **tables(step),
                "on_call_pm_phone": config.on_call_pm_phone,
            }
            if step in EVENT_PUBLISHERS:
                settings["event_bus_name"] = bus
            if step in MODEL_STEPS:
                settings |= model_settings
            if step in TEXTING_STEPS:
                settings |= twilio | send_caps
            if step in COMPLETION_WRITERS:
                settings["completion_shards"] = str(config.completion_shards)
            return settings | retention_settings(config, step, PipelineSettings)

        steps = {
            step: self.factory.make(
                FunctionSpec(
                    name=step,
                    description=STEP_DESCRIPTIONS[step],
                    settings_model=PipelineSettings,
                    settings=step_settings(step),
                    timeout=STEP_TIMEOUTS.get(step, cdk.Duration.seconds(30)),
                    reserved_concurrency=(
                        config.brain_reserved_concurrency if step == "brain" else None
                    ),
                )
            )
            for step in PIPELINE_STEPS
        }
        self.pipeline = Pipeline(
            self,
            "Pipeline",
            config=config,
            machine="package_pipeline",
            description="The package pipeline",
            steps=steps,
            bus=self.events.bus,
        )
        machine = self.pipeline.state_machine
        self.work_orders = self._work_order_machine(
            tables=tables, bus=bus, twilio=twilio, send_caps=send_caps
        )
        # The answers that complete a WO execution's wait come through the package pipeline.
        for step in sorted(COMPLETES_WAITS):
            self.work_orders.state_machine.grant(steps[step], "states:SendTaskSuccess")
        self.flusher = self.factory.make(
            FunctionSpec(
                name="flusher",
                description="Debounce queue → flush a package → start its execution",
                settings_model=FlusherSettings,
                settings={
                    # The buffered copies, and the urgent idle window's reads. No model: a
                    # probe signal that comes here goes on to the prober's queue.
                    **tables("flusher"),
                    "state_machine_arn": Bound(
                        machine.state_machine_arn, machine.grant_start_execution
                    ),
                    "step_mode": "true" if config.step_mode else "false",
                    "probe_queue_url": Bound(
                        self.queues.probe.queue_url, self.queues.probe.grant_send_messages
                    ),
                    **windows,
                    **retention_settings(config, "flusher", FlusherSettings),
                },
                timeout=FLUSHER_TIMEOUT,
            )
        )
        self.flusher.add_event_source(
            sources.SqsEventSource(
                self.queues.debounce,
                batch_size=10,
                report_batch_item_failures=True,
                # Caps the flushers (and so the executions they start) without reserving
                # account concurrency: SQS holds the rest.
                max_concurrency=config.flusher_max_concurrency,
            )
        )
        # The severity probe, off the flusher's path (docs/headroom.md): the probe queue's
        # signals, asked up to 10 at once; an emergency reading expedites the flush through the
        # debounce queue.
        self.prober = self.factory.make(
            FunctionSpec(
                name="prober",
                description="Probe queue → the severity probe → an expedite for an emergency",
                settings_model=ProberSettings,
                settings={
                    **tables("prober"),
                    "debounce_queue_url": Bound(
                        self.queues.debounce.queue_url, self.queues.debounce.grant_send_messages
                    ),
                    **model_settings,
                    **retention_settings(config, "prober", ProberSettings),
                },
                timeout=PROBER_TIMEOUT,
            )
        )
        self.prober.add_event_source(
            sources.SqsEventSource(
                self.queues.probe,
                batch_size=10,
                report_batch_item_failures=True,
                max_concurrency=config.prober_max_concurrency,
            )
        )
        # The stranded sweep: every five minutes a record on the debounce queue has the
        # flusher flush what waited past max_wait without a flush (a signal lost after the
        # message was stored, a flush that failed every retry).
        events.Rule(
            self,
            "StrandedSweep",
            description="Every five minutes: flush conversations whose flush never came",
            schedule=events.Schedule.rate(STRANDED_SWEEP_EVERY),
            targets=[
                targets.SqsQueue(
                    self.queues.debounce,
                    message=events.RuleTargetInput.from_object(
                        StrandedSweep().model_dump(mode="json")
                    ),
                )
            ],
        )

        # Read-verify: every domain event → the watcher, which reads the claimed surface itself
        # (read-only) and writes the ledger (the only function that may).
        self.watcher = self.factory.make(
            FunctionSpec(
                name="watcher",
                description="Read-verify each domain event against its surface: Evidence or Shame",
                settings_model=WatcherSettings,
                settings={
                    **tables("watcher"),
                    # It reads texts back from Twilio when the stack texts through Twilio.
                    **{k: v for k, v in twilio.items() if k != "twilio_status_callback_url"},
                    **retention_settings(config, "watcher", WatcherSettings),
                },
                timeout=WATCHER_TIMEOUT,
            )
        )
        self.events.add_watcher(self.watcher)
        self.sweeper = self.factory.make(
            FunctionSpec(
                name="sweeper",
                description="Every five minutes: recorded effects whose event never came",
                settings_model=SweeperSettings,
                settings={
                    **tables("sweeper"),
                    **retention_settings(config, "sweeper", SweeperSettings),
                    "completion_shards": str(config.completion_shards),
                    **_given(sweep_concurrency=config.sweep_concurrency),
                },
                timeout=SWEEPER_TIMEOUT,
            )
        )
        self.events.add_sweeper(self.sweeper)
        # Every hour: one page listing the unknown numbers that texted in each closed hour (and
        # the pages a daily cap held back), read-verified like any page.
        self.digest = self.factory.make(
            FunctionSpec(
                name="digest",
                description="Every hour: one page listing the unknown numbers of the hour",
                settings_model=DigestSettings,
                settings={
                    **tables("digest"),
                    "event_bus_name": bus,
                    "on_call_pm_phone": config.on_call_pm_phone,
                    **twilio,
                    **send_caps,
                    **retention_settings(config, "digest", DigestSettings),
                },
                timeout=DIGEST_TIMEOUT,
            )
        )
        self.events.add_digest(self.digest)

        self.observability = Observability(
            self,
            "Observability",
            config=config,
            state_machine=machine,
            work_order_machine=self.work_orders.state_machine,
            fail_open=steps["fail_open"],
            dead_letter_queues={
                **self.queues.dead_letter_queues,
                "event-delivery": self.events.delivery_dlq,
                "sweep-delivery": self.events.sweep_dlq,
                "digest-delivery": self.events.digest_dlq,
                "wo-created-delivery": self.events.wo_created_dlq,
            },
            functions=self.factory.functions,
            webhooks=self.webhooks,
            fallback=self.fallback,
        )
        self.evals: EvalExecutor | None = None
        if eval_copy is not None:
            self.evals = EvalExecutor(
                self,
                "Evals",
                config=config,
                code=eval_copy,
                factory=self.factory,
                inbound=self.inbound,
                tables=self.memory.tables,
                package_machine=machine,
                work_order_machine=self.work_orders.state_machine,
                debounce=self.queues.debounce,
                probe=self.queues.probe,
                watcher=self.queues.watcher,
                twilio_auth_token=Bound(
                    self.secrets.twilio_auth_token.secret_arn,
                    self.secrets.twilio_auth_token.grant_read,
                ),
                app_signing_secret=Bound(
                    self.secrets.app_signing_secret.secret_arn,
                    self.secrets.app_signing_secret.grant_read,
                ),
            )
        self._outputs()

    def _work_order_machine(
        self,
        *,
        tables: Callable[[str], dict[str, Bound]],
        bus: Bound,
        twilio: dict[str, Setting],
        send_caps: dict[str, Setting],
    ) -> Pipeline:
        """The work order machine (docs/dispatch.md): its steps' functions (each its row of
        tables, the bus, Twilio when it texts), the machine, and its starter: ``wo.created`` →
        the wo-start queue → ``wo_start``, which alone may start its executions."""
        config = self.config

        def settings(step: str) -> dict[str, Setting]:
            made: dict[str, Setting] = {
                "step": step,
                **tables(step),
                "event_bus_name": bus,  # every step publishes its wo.* event
                "on_call_pm_phone": config.on_call_pm_phone,
            }
            if step in TEXTING_STEPS:
                made |= twilio | send_caps
            return made | retention_settings(config, step, DispatchSettings)

        functions = {
            step: self.factory.make(
                FunctionSpec(
                    name=step,
                    description=STEP_DESCRIPTIONS[step],
                    settings_model=DispatchSettings,
                    settings=settings(step),
                )
            )
            for step in DISPATCH_STEPS
        }
        work_orders = Pipeline(
            self,
            "WorkOrders",
            config=config,
            machine="work_order",
            description="The work order machine",
            steps=functions,
        )
        machine = work_orders.state_machine
        starter = self.factory.make(
            FunctionSpec(
                name="wo_start",
                description="wo.created → start the work order's execution (named by its id)",
                settings_model=WoStartSettings,
                settings={
                    "work_order_machine_arn": Bound(
                        machine.state_machine_arn, machine.grant_start_execution
                    )
                },
                timeout=WO_START_TIMEOUT,
            )
        )
        self.events.add_wo_start(self.queues.wo_start, starter)
        return work_orders

    def _outputs(self) -> None:
        def output(name: str, value: str, description: str) -> None:
            cdk.CfnOutput(self, name, value=value, description=description)

        output(
            OUTPUT_WEBHOOK_BASE_URL,
            self.webhooks.url,
            "The webhooks' base URL (up to the stage); Twilio's SMS webhook is this + twilio/sms",
        )
        output(
            OUTPUT_SMS_URL,
            self.webhooks.url + "twilio/sms",
            "Point the Twilio number's 'A message comes in' webhook here (HTTP POST)",
        )
        output(
            OUTPUT_SMS_FALLBACK_URL,
            self.fallback.sms_url,
            "The Twilio number's SMS fallback URL (HTTP POST): `maestro twilio wire` sets it",
        )
        output(
            OUTPUT_STATE_MACHINE,
            self.pipeline.state_machine.state_machine_arn,
            "The package pipeline (Step Functions)",
        )
        output(
            "WorkOrderStateMachineArn",  # what `maestro wo show --env` reads
            self.work_orders.state_machine.state_machine_arn,
            "The work order machine (Step Functions): one execution per WO, named by its id",
        )
        for name, table in sorted(self.memory.tables.items()):
            output(table_output(name), table.table_name, f"The {name} table")
        output("EventBusName", self.events.bus.event_bus_name, "The domain-event bus")
        output("EventArchiveName", self.events.archive.archive_name, "Its archive, for replays")
        output("WatcherQueueUrl", self.queues.watcher.queue_url, "Domain events for the watcher")
        output(
            OUTPUT_AUTH_TOKEN_SECRET,
            self.secrets.twilio_auth_token.secret_arn,
            "Put the Twilio auth token here",
        )
        output(
            "AppSigningSecretArn",
            self.secrets.app_signing_secret.secret_arn,
            "The HMAC secret the app's backend and the assistant sign with",
        )
        output(
            "AnthropicApiKeySecretArn",
            self.secrets.anthropic_api_key.secret_arn,
            "Put the Anthropic API key here (sk-ant-…); until then every stage runs offline",
        )
        if self.evals is not None:
            output(
                OUTPUT_EVAL_MACHINE,
                self.evals.state_machine.state_machine_arn,
                "The eval executor (Step Functions): one execution per eval run",
            )
            output(
                OUTPUT_EVAL_RUNS_TABLE,
                self.evals.table.table_name,
                "The eval-run rows: each run, its steps, checkpoints and paused gates",
            )
        output("AlarmTopicArn", self.observability.topic.topic_arn, "Alarms are published here")
        output("DashboardName", self.observability.dashboard.dashboard_name, "CloudWatch dashboard")
