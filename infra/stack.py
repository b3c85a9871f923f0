"""One stack per environment: ``maestro-<env>``, composed of one construct per concern."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from infra.api import WebhookApi
from infra.config import EnvConfig
from infra.events import SWEEPER_TIMEOUT, WATCHER_TIMEOUT, Events
from infra.functions import Bound, FunctionFactory, FunctionSpec, Setting
from infra.layers import Layers
from infra.observability import Observability
from infra.pipeline import Pipeline
from infra.queues import Queues
from infra.secrets import Secrets
from infra.tables import MemoryTables
from maestro.pipeline.entry import STEPS
from maestro.settings import (
    FlusherSettings,
    InboundSettings,
    PipelineSettings,
    SweeperSettings,
    WatcherSettings,
)
from maestro_dev.cloud import OUTPUT_STATE_MACHINE

FLUSHER_TIMEOUT = cdk.Duration.seconds(60)
# The steps that may call a model (#5): the pre-check, re-validation's decide() (lease and
# resolve), the brain's samples, the guards' break-in judgment (dispose), the manage agent
# (act). They alone can read the Anthropic key.
MODEL_STEPS = frozenset({"precheck", "lease", "resolve", "brain", "dispose", "act"})
# The steps that text (the lanes run in act; escalate runs act's lanes in-process; fail-open
# pages the PM itself): they alone get Twilio's settings and may read its auth token.
TEXTING_STEPS = frozenset({"act", "escalate", "fail_open"})
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
}

OUTPUT_WEBHOOK_URL = "WebhookBaseUrl"


def table_output(logical_name: str) -> str:
    """``GatesTableName`` for ``gates``: the operators' commands read these by name."""
    return "".join(p.title() for p in logical_name.split("_")) + "TableName"


class MaestroStack(cdk.Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: EnvConfig, **kwargs: Any
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=f"maestro ({config.name}): webhooks, debounce, package pipeline, memory",
            **kwargs,
        )
        self.config = config
        cdk.Tags.of(self).add("app", "maestro")
        cdk.Tags.of(self).add("maestro:env", config.name)

        self.secrets = Secrets(self, "Secrets", config=config)
        self.memory = MemoryTables(self, "Memory", config=config)
        self.queues = Queues(
            self, "Queues", flusher_timeout=FLUSHER_TIMEOUT, watcher_timeout=WATCHER_TIMEOUT
        )
        self.events = Events(self, "Events", config=config, watcher_queue=self.queues.watcher)
        self.layers = Layers(self, "Layers", removal=config.removal)
        self.factory = FunctionFactory(self, "Functions", config=config, layers=self.layers)

        tables = self.memory.tables

        def table(name: str) -> Bound:
            return Bound(tables[name].table_name, tables[name].grant_read_write_data)

        def read_only(name: str) -> Bound:
            return Bound(tables[name].table_name, tables[name].grant_read_data)

        bus = Bound(self.events.bus.event_bus_name, self.events.bus.grant_put_events_to)
        # Every table the pipeline's settings name (not the ledger: only read-verify writes it).
        pipeline_settings: dict[str, Setting] = {
            f"{name}_table": table(name)
            for name in sorted(tables)
            if f"{name}_table" in PipelineSettings.model_fields
        }
        pipeline_settings |= {"event_bus_name": bus, "on_call_pm_phone": config.on_call_pm_phone}
        model_settings: dict[str, Setting] = {
            "anthropic_api_key_secret": Bound(
                self.secrets.anthropic_api_key.secret_arn,
                self.secrets.anthropic_api_key.grant_read,
            ),
            "cheap_model_id": config.cheap_model_id,
            "strong_model_id": config.strong_model_id,
        }
        windows: dict[str, Setting] = {
            "idle_window_seconds": str(config.idle_window_seconds),
            "max_wait_seconds": str(config.max_wait_seconds),
        }
        self.inbound = self.factory.make(
            FunctionSpec(
                name="inbound_sms",
                description="Webhooks: verify the signature, dedupe, buffer, signal the debounce",
                settings_model=InboundSettings,
                settings={
                    "messages_table": table("messages"),
                    "conversations_table": table("conversations"),
                    "parties_table": Bound(
                        tables["parties"].table_name, tables["parties"].grant_read_data
                    ),
                    "debounce_queue_url": Bound(
                        self.queues.debounce.queue_url, self.queues.debounce.grant_send_messages
                    ),
                    "twilio_auth_token_secret": Bound(
                        self.secrets.twilio_auth_token.secret_arn,
                        self.secrets.twilio_auth_token.grant_read,
                    ),
                    # Webhooks naming another account are refused; none set: the Twilio routes 503.
                    "twilio_account_sid": config.twilio_account_sid,
                    "app_signing_secret": Bound(
                        self.secrets.app_signing_secret.secret_arn,
                        self.secrets.app_signing_secret.grant_read,
                    ),
                    # The flusher probes each new message when a key is set (it skips otherwise).
                    "severity_probe": "true",
                    **windows,
                },
                timeout=cdk.Duration.seconds(15),
            )
        )
        self.webhooks = WebhookApi(self, "Webhooks", config=config, inbound=self.inbound)
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
        steps = {
            step: self.factory.make(
                FunctionSpec(
                    name=step,
                    description=STEP_DESCRIPTIONS[step],
                    settings_model=PipelineSettings,
                    settings=pipeline_settings
                    | (model_settings if step in MODEL_STEPS else {})
                    | (twilio if step in TEXTING_STEPS else {}),
                    timeout=STEP_TIMEOUTS.get(step, cdk.Duration.seconds(30)),
                    reserved_concurrency=(
                        config.brain_reserved_concurrency if step == "brain" else None
                    ),
                )
            )
            for step in STEPS
        }
        self.pipeline = Pipeline(self, "Pipeline", config=config, steps=steps, bus=self.events.bus)
        machine = self.pipeline.state_machine
        self.flusher = self.factory.make(
            FunctionSpec(
                name="flusher",
                description="Debounce queue → flush a package → start its execution",
                settings_model=FlusherSettings,
                settings={
                    "messages_table": table("messages"),
                    "conversations_table": table("conversations"),
                    "state_machine_arn": Bound(
                        machine.state_machine_arn, machine.grant_start_execution
                    ),
                    "step_mode": "true" if config.step_mode else "false",
                    # The severity probe: the cheap model, with the sender's open contexts.
                    "parties_table": Bound(
                        tables["parties"].table_name, tables["parties"].grant_read_data
                    ),
                    "work_orders_table": Bound(
                        tables["work_orders"].table_name, tables["work_orders"].grant_read_data
                    ),
                    **model_settings,
                    **windows,
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

        # Read-verify: every domain event → the watcher, which reads the claimed surface itself
        # (read-only) and writes the ledger (the only function that may).
        self.watcher = self.factory.make(
            FunctionSpec(
                name="watcher",
                description="Read-verify each domain event against its surface: Evidence or Shame",
                settings_model=WatcherSettings,
                settings={
                    "ledger_table": table("ledger"),
                    "messages_table": read_only("messages"),
                    "work_orders_table": read_only("work_orders"),
                    "timeline_table": read_only("timeline"),
                    "pending_table": read_only("pending"),
                    "decisions_table": read_only("decisions"),
                    # It reads texts back from Twilio when the stack texts through Twilio.
                    **{k: v for k, v in twilio.items() if k != "twilio_status_callback_url"},
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
                    "decisions_table": read_only("decisions"),
                    "ledger_table": table("ledger"),
                },
                timeout=SWEEPER_TIMEOUT,
            )
        )
        self.events.add_sweeper(self.sweeper)

        self.observability = Observability(
            self,
            "Observability",
            config=config,
            state_machine=machine,
            fail_open=steps["fail_open"],
            dead_letter_queues={
                **self.queues.dead_letter_queues,
                "event-delivery": self.events.delivery_dlq,
                "sweep-delivery": self.events.sweep_dlq,
            },
            functions=self.factory.functions,
            api_name=self.webhooks.api.rest_api_name,
        )
        self._outputs()

    def _outputs(self) -> None:
        def output(name: str, value: str, description: str) -> None:
            cdk.CfnOutput(self, name, value=value, description=description)

        output(
            OUTPUT_WEBHOOK_URL,
            self.webhooks.url,
            "The webhooks' base URL (up to the stage); Twilio's SMS webhook is this + twilio/sms",
        )
        output(
            "TwilioSmsWebhookUrl",
            self.webhooks.url + "twilio/sms",
            "Point the Twilio number's 'A message comes in' webhook here (HTTP POST)",
        )
        output(
            OUTPUT_STATE_MACHINE,
            self.pipeline.state_machine.state_machine_arn,
            "The package pipeline (Step Functions)",
        )
        for name, table in sorted(self.memory.tables.items()):
            output(table_output(name), table.table_name, f"The {name} table")
        output("EventBusName", self.events.bus.event_bus_name, "The domain-event bus")
        output("EventArchiveName", self.events.archive.archive_name, "Its archive, for replays")
        output("WatcherQueueUrl", self.queues.watcher.queue_url, "Domain events for the watcher")
        output(
            "TwilioAuthTokenSecretArn",
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
        output("AlarmTopicArn", self.observability.topic.topic_arn, "Alarms are published here")
        output("DashboardName", self.observability.dashboard.dashboard_name, "CloudWatch dashboard")
