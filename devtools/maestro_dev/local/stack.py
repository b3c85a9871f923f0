"""The embedded stack: the whole of maestro in one process, no account, no Docker.

- moto in-process for DynamoDB, SQS, EventBridge, Secrets Manager and Step Functions, with
  ``execute_state_machine`` on: **the same ASL file** as the cloud, placeholders substituted.
- Lambda tasks reach moto's simple Lambda backend; a dispatcher there calls the same handler
  functions the cloud deploys, with a Lambda context object.
- SQS pollers emulate event source mappings: batches of up to 10, partial batch failures, and a
  redrive to the DLQ after ``maxReceiveCount`` (moto's own redrive policy).
- EventBridge rule → SQS: every domain event lands on the events queue, which a poller hands to
  the watcher in SQS-shaped batches (moto delivers rules to SQS, not to Lambda, which is also
  the cloud's shape); a second target, the tap queue, keeps a copy for ``domain_events()``.
- A virtual clock: debounce delays are held until virtual time reaches them, so a 5-minute idle
  window costs no wall time. Step Functions retries back off fifty times faster than in AWS.
- The edge (``edge``): the webhook API (WAF, stage throttle, the inbound function, a 502 when
  it raised) and the fallback API (straight to the fallback queue, drained into the buffer by
  the drain function on the same poller as the cloud's event source). The loopback Twilio's
  number is wired to both by the code `maestro twilio wire` runs, so a phone's text
  (``stack.twilio.text``) meets the primary and, when it fails, the fallback, as on Twilio.
- The probe queue (``probes``): the webhook's probe signals → the prober (the severity probe,
  off the flusher's path), polled before each debounce poll; its expedites go to the debounce
  queue at delay 0, so the same poll flushes them.
- A stranded sweep every five virtual minutes (the cloud's schedule rule → the debounce queue):
  a conversation whose messages waited past ``max_wait`` without a flush is flushed.
- Twilio: a Twilio-compatible Messages API on the loopback (``twilio_loopback``), served over
  HTTP. The pipeline's messenger is the real Twilio adapter on the real SDK, pointed at it by
  its base URL alone (settings, and the auth token in moto's Secrets Manager, as in the cloud).
  Statuses move on the virtual clock; status callbacks are signed with the auth token and
  handed to the inbound resolver as the loopback webhook server would.
- ``moto_patches`` keeps moto from registering every object it creates, counting a queue for
  each message sent to it and reading a whole table for each index query (``threads`` has
  moto's transactions copy items, not tables, and its key queries read a partition), so a
  package costs no more after many packages than after a few.
- Waiting without polling: the stack keeps the set of its running executions itself (moto runs
  each in a thread; the stack sees it start and end) and a progress counter that moves whenever
  an execution records a history event, a Lambda task returns or an execution ends; waits sleep
  on that counter's condition, and never list executions (``make bench``: ``orchestration_ms``,
  ``rss_mb``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
import types
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from unittest import mock
from urllib.parse import urlencode, urlsplit

from aws_lambda_powertools.utilities import parameters
from pydantic import HttpUrl

from maestro.access import STATE_MACHINES
from maestro.access import asl_substitutions as substitutions_of
from maestro.brain.model_port import LanguageModel
from maestro.brain.probe import Prober
from maestro.domain.digest import next_hour
from maestro.domain.ledger import LedgerRow
from maestro.ingest.prober import ProbeSignals
from maestro.pipeline.digest import DigestReport
from maestro.ports.messaging import SentMessage
from maestro.ports.workflows import Gate
from maestro.verify.sweeper import SweepReport
from maestro_dev.local import lambda_logs
from maestro_dev.local.clock import VirtualClock, VirtualDelayQueue
from maestro_dev.local.edge import FALLBACK_PREFIX, Edge
from maestro_dev.local.events import LOCAL_BASE_URL, rest_event
from maestro_dev.local.moto_patches import (
    indexed_queries,
    remembered_names,
    tokens_skip_starting_executions,
    uncounted_sends,
    untracked_models,
)
from maestro_dev.local.numbers import ON_CALL_PM as ON_CALL_PM  # re-exported: tests import it here
from maestro_dev.local.sdk_models import one_sdk_loader
from maestro_dev.local.sfn_time import VirtualWaits, virtual_step_functions_time
from maestro_dev.local.threads import Priority, thread_safe_moto
from maestro_dev.local.twilio_loopback import TwilioLoopback, TwilioLoopbackServer
from maestro_dev.twilio_wire import WebhookTargets, wire_number

ROOT = Path(__file__).resolve().parents[3]
ASL_PATH = ROOT / "statemachines" / "package_pipeline.asl.json"
REGION = "us-east-1"
ACCOUNT = "123456789012"
PREFIX = "maestro-local-"
DEFAULT_TWILIO_TOKEN = "maestro-local-twilio-token"
DEFAULT_APP_SECRET = "maestro-local-app-secret"
RETRY_TIME_SCALE = 0.02
LINE = "+14155550000"
TWILIO_TIMEOUT_SECONDS = 5.0
# Closed executions whose event history is kept (the newest); an older one keeps its status,
# input and output, and GetExecutionHistory answers it with no events. Step Functions keeps
# histories 90 days; here each is about 0.2 MB, which a long `maestro serve` would pile up.
HISTORIES_KEPT = 100
SWEEP_WINDOW_SECONDS = 600
SWEEP_EVERY_SECONDS = 300  # the cloud's schedule rule
SWEEP_LOOKBACK_SECONDS = 900  # where the first sweep starts (the cloud: an hour back)
STRANDED_SWEEP = '{"sweep": "stranded"}'  # the schedule rule's constant input, every 5 minutes
TWILIO_RETRY_BASE_SECONDS = 0.02  # local retries back off fast, like Step Functions' here
WO_ASL_PATH = ROOT / "statemachines" / "work_order.asl.json"


def function_arn(step: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:maestro-{step.replace('_', '-')}"


def asl_path(machine: str) -> Path:
    """The ASL file of one of ``maestro.access.STATE_MACHINES``."""
    return ROOT / "statemachines" / STATE_MACHINES[machine][0]


def asl_substitutions(event_bus_name: str, machine: str = "package_pipeline") -> dict[str, str]:
    """Every ``${Placeholder}`` of ``machine``'s ASL and its value on the local stack: the
    contract's map (``maestro.access.asl_substitutions``, the cloud's too) on local ARNs."""
    _, steps = STATE_MACHINES[machine]
    bus = event_bus_name if machine == "package_pipeline" else None
    return substitutions_of(steps, function_arn, bus)


def substitute(definition: str, substitutions: dict[str, str]) -> str:
    for name, value in substitutions.items():
        definition = definition.replace("${" + name + "}", value)
    return definition


@dataclass
class FakeLambdaContext:
    """What a handler may read from the Lambda context object."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = ""
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


class LambdaFunctionError(Exception):
    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


class SqsReleasingQueue(VirtualDelayQueue):
    """The virtual-time debounce queue whose due signals go on to the real (moto) SQS queue."""

    def __init__(self, clock: VirtualClock, sqs: Any, url: str) -> None:
        super().__init__(clock)
        self._sqs = sqs
        self._url = url

    def release_due(self) -> int:
        """Hand every signal whose time has come to SQS; returns how many."""
        due = self.due()
        for signal in due:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=signal.model_dump_json())
        return len(due)


class LocalStack:
    """Start with ``with LocalStack() as stack:``; everything stops when the block ends."""

    def __init__(
        self,
        *,
        start: datetime | None = None,
        twilio_token: str | None = None,
        idle_window_seconds: int = 300,
        urgent_idle_window_seconds: int = 60,
        max_wait_seconds: int = 900,
        step_mode: bool = False,
        model: LanguageModel | Literal["env"] | None = None,
        twilio_timeout_seconds: float = TWILIO_TIMEOUT_SECONDS,
        messenger: Literal["twilio", "recording"] = "twilio",
        histories_kept: int = HISTORIES_KEPT,
        settings: Mapping[str, Any] | None = None,
        stage_throttle: tuple[float, int] | None = None,
        offline_purposes: Collection[str] = (),
    ) -> None:
        # offline_purposes: with a model, the purposes that take the no-model path anyway
        # (maestro_dev.eval_harness.model.mixed_models): a scenario scripting some, not all.
        self.offline_purposes = frozenset(offline_purposes)
        # None: the offline brain (tests never reach a network); "env": Anthropic when
        # ANTHROPIC_API_KEY is set (the demo, `maestro serve`); or a model (the scripted one).
        self.model = model
        self.step_mode = step_mode
        self.clock = VirtualClock(start or datetime(2026, 6, 17, 14, 0, tzinfo=UTC))
        self.twilio_token = twilio_token or os.environ.get(
            "TWILIO_AUTH_TOKEN", DEFAULT_TWILIO_TOKEN
        )
        self.app_secret = DEFAULT_APP_SECRET
        self.twilio_timeout = twilio_timeout_seconds
        # "twilio": the Twilio adapter against the loopback Twilio (the default, as the cloud
        # runs); "recording": no Twilio account configured, so the recording messenger answers.
        self.messenger_kind = messenger
        self.idle = idle_window_seconds
        self.urgent_idle = urgent_idle_window_seconds
        self.max_wait = max_wait_seconds
        # Overrides of the pipeline's and the digest's settings (e.g. a daily cap), by name.
        self.settings_overrides = dict(settings or {})
        # API Gateway's stage throttle (requests a second, burst) on the edge; None: unthrottled
        # (the tests send many webhooks in an instant of virtual time).
        self.stage_throttle = stage_throttle
        self._exit = ExitStack()
        self.handlers: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]] = {}
        # A test hook around every Lambda call: fault(step, event, call) -> result. It can fail
        # before or after the real handler runs (call()), to rehearse crashes and retries.
        self.fault: Callable[[str, dict[str, Any], Callable[[], dict[str, Any]]], dict[str, Any]]
        self.fault = lambda _step, _event, call: call()
        self.invocations: list[tuple[str, str, str]] = []  # (step, package id, outcome)
        self._log_lock = threading.Lock()
        # One inbound request at a time: Powertools' resolver keeps the current event on its
        # class (BaseRouter.current_event), so two requests at once would read each other's.
        self._inbound_lock = threading.Lock()
        # The webhooks' answers first: executions give way to them at their next AWS call.
        self.priority = Priority()
        self._last_outcome: dict[str, tuple[str, str]] = {}  # package id → its last (step, outcome)
        self._conversations: dict[str, str] = {}  # execution ARN → conversation id
        # Progress: moved (and notified) by every history event, Lambda return and execution end.
        self._progress = threading.Condition()
        self._progress_count = 0
        self._running: dict[str, Any] = {}  # execution ARN → moto's Execution, while it runs
        self.histories_kept = histories_kept
        self._closed: deque[Any] = deque()  # the workers of closed executions with a history
        # Status callbacks the webhook answered 404 (no such outbound message), as posted.
        self.refused_callbacks: list[tuple[str, dict[str, str]]] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> LocalStack:
        try:
            self._start()
        except BaseException:
            self._exit.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.wait_for_executions(timeout=10, allow_paused=True)
            mine = (self.machine_arn, self.wo_machine_arn)
            with self._progress:
                running = [a for a, e in self._running.items() if e.state_machine_arn in mine]
            for arn in running:  # both machines' (a WO's waits for its people)
                self.sfn.stop_execution(executionArn=arn)
        finally:
            self._exit.close()

    def _start(self) -> None:
        env = {
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_SESSION_TOKEN": "local",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
            "POWERTOOLS_IDEMPOTENCY_DISABLED": "false",
        }
        self._exit.enter_context(mock.patch.dict(os.environ, env))
        self._exit.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        _import_sfn_interpreter_lightly()
        from moto import mock_aws
        from moto.awslambda_simple.models import LambdaSimpleBackend
        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        self._exit.enter_context(
            mock_aws(
                config={
                    "stepfunctions": {"execute_state_machine": True},
                    "lambda": {"use_docker": False},
                }
            )
        )
        stack = self

        def dispatch(
            _self: Any,
            function_name: str,
            qualifier: Any,  # noqa: ARG001 - moto passes it; unused here
            body: bytes,
            headers: Any,  # noqa: ARG001
            response_headers: dict[str, str],
        ) -> bytes:
            return stack._dispatch(function_name, body, response_headers)

        self._exit.enter_context(mock.patch.object(LambdaSimpleBackend, "invoke", dispatch))
        self._exit.enter_context(thread_safe_moto(self.priority))  # callable from many threads
        self._exit.enter_context(one_sdk_loader())  # the SDK's models parsed once a process
        self._exit.enter_context(untracked_models())
        self._exit.enter_context(uncounted_sends())
        self._exit.enter_context(tokens_skip_starting_executions())
        self._exit.enter_context(indexed_queries())  # after thread_safe_moto: wraps its query
        self._exit.enter_context(remembered_names())
        # Retries back off fifty times faster than in the cloud: a waiting package still yields
        # to the one holding the lease, but a demo does not sit through real backoff.
        fast = types.SimpleNamespace(
            **{k: getattr(time, k) for k in dir(time) if not k.startswith("__")}
        )
        fast.sleep = lambda seconds: time.sleep(seconds * RETRY_TIME_SCALE)
        self._exit.enter_context(mock.patch.object(retrier_decl, "time", fast))
        # Task timeouts and task-token waits count virtual seconds; closing the stack ends every
        # wait (registered after the patches, so it runs before they are undone).
        self.waits = VirtualWaits(self.clock, self._moved)
        self._exit.enter_context(virtual_step_functions_time(self.waits))
        self._exit.callback(self.waits.close)
        self.twilio = TwilioLoopback(
            self.twilio_token,
            self.clock.now,
            numbers=(LINE,),
            post_callback=self._post_status_callback,
            post_webhook=lambda url, form, signature: self.edge.post(url, form, signature),
        )
        self.twilio_server = TwilioLoopbackServer(self.twilio).start()
        self._exit.callback(self.twilio_server.stop)
        self._watch_executions()
        self._build()

    def _watch_executions(self) -> None:
        """Know when an execution starts and ends, and when any execution moves, without asking
        moto's API: moto's Step Functions runs each execution in a thread of this process."""
        from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
        from moto.stepfunctions.parser.backend.execution import Execution
        from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

        stack = self
        start: Callable[[Any], None] = Execution.start
        logic: Callable[[Any], None] = ExecutionWorker._execution_logic
        add_event: Callable[..., Any] = EventManager.add_event

        def started(execution: Any) -> None:
            with stack._progress:  # before its thread starts: running from StartExecution on
                stack._running[execution.exec_arn] = execution
            try:
                start(execution)
            except BaseException:
                with stack._progress:
                    stack._running.pop(execution.exec_arn, None)
                raise

        def execution_logic(worker: Any) -> None:
            try:
                logic(worker)
            finally:  # its status is final by now (moto sets it as the program ends)
                with stack._progress:
                    stack._running.pop(worker._evaluation_details.execution_details.arn, None)
                    stack._closed.append(worker)
                    while len(stack._closed) > stack.histories_kept:
                        _forget_history(stack._closed.popleft())
                _forget_finished_threads()
                stack._moved()

        def event_added(manager: Any, *args: Any, **kwargs: Any) -> Any:
            result = add_event(manager, *args, **kwargs)
            stack._moved()
            return result

        self._exit.enter_context(mock.patch.object(Execution, "start", started))
        self._exit.enter_context(
            mock.patch.object(ExecutionWorker, "_execution_logic", execution_logic)
        )
        self._exit.enter_context(mock.patch.object(EventManager, "add_event", event_added))

    def _moved(self) -> None:
        with self._progress:
            self._progress_count += 1
            self._progress.notify_all()

    def progress(self) -> int:
        """A counter that moves whenever an execution records a history event (a state entered
        or left, a task submitted), a Lambda task returns or an execution ends."""
        with self._progress:
            return self._progress_count

    def wait_for_progress(self, since: int, timeout: float) -> int:
        """Sleep until :meth:`progress` is no longer ``since`` (or ``timeout`` seconds pass); the
        counter then. Read the counter *before* looking at what you wait for, so nothing that
        happens between the look and the wait is missed."""
        with self._progress:
            self._progress.wait_for(lambda: self._progress_count != since, timeout=timeout)
            return self._progress_count

    def _build(self) -> None:
        import boto3

        from maestro.adapters import aws as aws_clients
        from maestro.adapters.dynamodb_buffer import (
            DynamoConversationBuffer,
            DynamoOutboundStatusStore,
        )
        from maestro.adapters.dynamodb_consent import DynamoConsentStore
        from maestro.adapters.dynamodb_directory import DynamoDirectory
        from maestro.adapters.dynamodb_ledger import DynamoLedger
        from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
        from maestro.adapters.eventbridge import EVENT_SOURCE
        from maestro.adapters.stepfunctions import StepFunctionsStarter
        from maestro.dispatch.entry import build_dispatch
        from maestro.dispatch.entry import make_handlers as make_dispatch_handlers
        from maestro.dispatch.starter import WoStarter
        from maestro.ingest.fallback import FallbackDrain, ReceivedClock
        from maestro.ingest.flusher import Flusher
        from maestro.ingest.service import Ingestor
        from maestro.ingest.webhooks import WebhookDeps, build_resolver
        from maestro.observability import logger
        from maestro.pipeline.digest_entry import build_digest
        from maestro.pipeline.entry import build_pipeline, make_handlers
        from maestro.settings import (
            DISPATCH_TABLES,
            DigestSettings,
            DispatchSettings,
            PipelineSettings,
            SweeperSettings,
            WatcherSettings,
        )
        from maestro.tables import ALL_TABLES
        from maestro.verify.entry import build_sweeper, build_watcher

        aws_clients.client.cache_clear()  # clients from an earlier stack belong to its mock
        parameters.clear_caches()  # type: ignore[no-untyped-call]  # an earlier stack's secrets
        logger.setLevel("WARNING")
        session = boto3.session.Session(region_name=REGION)
        # Typed loosely on purpose: this is test-and-demo plumbing over moto.
        self.ddb: Any = session.client("dynamodb")
        self.sqs: Any = session.client("sqs")
        self.events: Any = session.client("events")
        self.sfn: Any = session.client("stepfunctions")
        self.tables: dict[str, str] = {}
        for spec in ALL_TABLES:
            name = PREFIX + spec.logical_name
            self.ddb.create_table(**spec.create_table_kwargs(name))
            self.tables[spec.logical_name] = name

        def queue_with_dlq(name: str) -> tuple[str, str]:
            dlq = self.sqs.create_queue(QueueName=f"{PREFIX}{name}-dlq")["QueueUrl"]
            dlq_arn = self.sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            url = self.sqs.create_queue(
                QueueName=PREFIX + name,
                Attributes={
                    "VisibilityTimeout": "0",  # a failed record is retried on the next poll
                    "RedrivePolicy": json.dumps(
                        {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "5"}
                    ),
                },
            )["QueueUrl"]
            return url, dlq

        self.debounce_url, self.debounce_dlq = queue_with_dlq("debounce")
        self.probe_url, self.probe_dlq = queue_with_dlq("probe")
        self.events_url, self.events_dlq = queue_with_dlq("events")
        self.fallback_url, self.fallback_dlq = queue_with_dlq("inbound-fallback")
        self.bus_name = PREFIX + "bus"
        self.events.create_event_bus(Name=self.bus_name)
        events_arn = self.sqs.get_queue_attributes(
            QueueUrl=self.events_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        self.events.put_rule(
            Name=PREFIX + "all-domain-events",
            EventBusName=self.bus_name,
            EventPattern=json.dumps({"source": [EVENT_SOURCE]}),
        )
        # A tap: what the demo and tests list as "the events on the bus" (the watcher consumes
        # its own queue); the cloud keeps the same record in the bus's archive.
        self.tap_url = self.sqs.create_queue(QueueName=PREFIX + "events-tap")["QueueUrl"]
        tap_arn = self.sqs.get_queue_attributes(QueueUrl=self.tap_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self.events.put_targets(
            Rule=PREFIX + "all-domain-events",
            EventBusName=self.bus_name,
            Targets=[
                {"Id": "watcher-queue", "Arn": events_arn},
                {"Id": "tap", "Arn": tap_arn},
            ],
        )

        secrets: Any = session.client("secretsmanager")
        token_secret = secrets.create_secret(
            Name=PREFIX + "twilio-auth-token", SecretString=self.twilio_token
        )["ARN"]

        # Both state machines from their ASL files, with the steps of maestro.access.
        self.machine_arns: dict[str, str] = {}
        for machine in STATE_MACHINES:
            definition = substitute(
                asl_path(machine).read_text(), asl_substitutions(self.bus_name, machine)
            )
            self.machine_arns[machine] = self.sfn.create_state_machine(
                name=PREFIX + machine.replace("_", "-"),
                definition=definition,
                roleArn=f"arn:aws:iam::{ACCOUNT}:role/maestro-local",
            )["stateMachineArn"]
        self.machine_arn = self.machine_arns["package_pipeline"]
        self.wo_machine_arn = self.machine_arns["work_order"]
        # wo.created → the wo-start queue (with its DLQ) → wo_start (polled in settle()).
        self.wo_start_url, self.wo_start_dlq = queue_with_dlq("wo-start")
        self.events.put_rule(
            Name=PREFIX + "wo-created",
            EventBusName=self.bus_name,
            EventPattern=json.dumps({"source": [EVENT_SOURCE], "detail-type": ["wo.created"]}),
        )
        wo_start_arn = self.sqs.get_queue_attributes(
            QueueUrl=self.wo_start_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        self.events.put_targets(
            Rule=PREFIX + "wo-created",
            EventBusName=self.bus_name,
            Targets=[{"Id": "wo-start-queue", "Arn": wo_start_arn}],
        )

        # Twilio, on the loopback: the same adapter and SDK as the cloud, another base URL.
        twilio: dict[str, Any] = {
            "twilio_account_sid": self.twilio.account_sid
            if self.messenger_kind == "twilio"
            else "",
            "twilio_auth_token_secret": token_secret,
            "twilio_from_number": LINE,
            "twilio_status_callback_url": f"{LOCAL_BASE_URL}/twilio/status",
            "twilio_api_base_url": HttpUrl(self.twilio_server.url),
            "twilio_timeout_seconds": self.twilio_timeout,
            "twilio_retry_base_seconds": TWILIO_RETRY_BASE_SECONDS,
        }
        settings = PipelineSettings(
            messages_table=self.tables["messages"],
            conversations_table=self.tables["conversations"],
            parties_table=self.tables["parties"],
            directory_table=self.tables["directory"],
            sends_table=self.tables["sends"],
            work_orders_table=self.tables["work_orders"],
            timeline_table=self.tables["timeline"],
            pending_table=self.tables["pending"],
            decisions_table=self.tables["decisions"],
            state_table=self.tables["state"],
            gates_table=self.tables["gates"],
            dispatch_table=self.tables["dispatch"],
            idempotency_table=self.tables["idempotency"],
            event_bus_name=self.bus_name,
            region=REGION,
            **twilio,
            **{
                "on_call_pm_phone": ON_CALL_PM,  # the account's fallback (an override may clear it)
                **{
                    k: v
                    for k, v in self.settings_overrides.items()
                    if k in PipelineSettings.model_fields
                },
            },
        )
        given = None if self.model in (None, "env") else self.model
        self.pipeline, persistence = build_pipeline(
            settings,
            self.clock,
            given,  # type: ignore[arg-type]
            key_from_env=self.model == "env",
        )
        if self.offline_purposes:
            from maestro_dev.eval_harness.model import mixed_models

            self.pipeline.deps.models = mixed_models(
                self.pipeline.deps.models, self.offline_purposes
            )
        self.handlers = make_handlers(self.pipeline, persistence)
        aws_clients.client.cache_clear()  # its own SDK clients, as each function has
        dispatch_tables: dict[str, Any] = {f"{t}_table": self.tables[t] for t in DISPATCH_TABLES}
        dispatch_settings = DispatchSettings(
            **dispatch_tables,
            event_bus_name=self.bus_name,
            region=REGION,
            **twilio,
            **{
                "on_call_pm_phone": ON_CALL_PM,
                **{
                    k: v
                    for k, v in self.settings_overrides.items()
                    if k in DispatchSettings.model_fields
                },
            },
        )
        self.dispatch = build_dispatch(dispatch_settings, self.clock)
        self.handlers.update(make_dispatch_handlers(self.dispatch))
        self.wo_starter = WoStarter(self.sfn, self.wo_machine_arn)

        buffer = DynamoConversationBuffer(
            self.ddb,
            self.tables["messages"],
            self.tables["conversations"],
            retention_days=settings.messages_retention_days,  # the inbound function's setting
        )
        self.buffer = buffer
        self.parties = DynamoPartyDirectory(self.ddb, self.tables["parties"])
        self.directory = DynamoDirectory(self.ddb, self.tables["directory"])
        self.consent = DynamoConsentStore(self.ddb, self.tables["conversations"])
        self.debounce = SqsReleasingQueue(self.clock, self.sqs, self.debounce_url)
        # The prober's queue (docs/headroom.md): the webhook's probe signals, the prober's
        # expedites back to the debounce queue.
        self.probes = SqsReleasingQueue(self.clock, self.sqs, self.probe_url)
        models = self.pipeline.deps.models

        def ingestor() -> Ingestor:
            return Ingestor(
                buffer,
                self.parties,
                self.debounce,
                idle_window_seconds=self.idle,
                urgent_idle_window_seconds=self.urgent_idle,
                max_wait_seconds=self.max_wait,
                severity_probe=models.triage is not None,
                probe_queue=self.probes,
                consent=self.consent,
            )

        self.ingestor = ingestor()
        self.starter = StepFunctionsStarter(self.sfn, self.machine_arn, step=self.step_mode)
        self.flusher = Flusher(
            buffer,
            self.starter,
            self.clock,
            max_wait_seconds=self.max_wait,
            work_orders=self.pipeline.deps.work_orders,
            states=self.pipeline.deps.state,
            probe_queue=self.probes,
        )
        self.prober = ProbeSignals(
            Prober(models, buffer, self.parties, self.pipeline.deps.work_orders)
            if models.triage is not None
            else None,
            self.debounce,
        )
        # Each function below gets SDK clients of its own, as each Lambda does: botocore's retry
        # quota (standard mode) is per client, so one function's throttled retries never spend
        # another's (the pipeline's steps share theirs; the webhook and flusher use the stack's).
        aws_clients.client.cache_clear()  # its own SDK clients, as each function has
        self.watcher = build_watcher(
            WatcherSettings(
                **twilio,
                ledger_table=self.tables["ledger"],
                messages_table=self.tables["messages"],
                work_orders_table=self.tables["work_orders"],
                timeline_table=self.tables["timeline"],
                pending_table=self.tables["pending"],
                decisions_table=self.tables["decisions"],
                dispatch_table=self.tables["dispatch"],
                region=REGION,
            ),
            self.clock,
        )
        self.ledger = DynamoLedger(self.ddb, self.tables["ledger"])
        aws_clients.client.cache_clear()  # its own SDK clients, as each function has
        self.sweeper = build_sweeper(
            SweeperSettings(
                decisions_table=self.tables["decisions"],
                ledger_table=self.tables["ledger"],
                sweep_window_seconds=SWEEP_WINDOW_SECONDS,
                sweep_lookback_seconds=SWEEP_LOOKBACK_SECONDS,
                region=REGION,
            ),
            self.clock,
        )
        self._next_sweep = self.clock.now() + timedelta(seconds=SWEEP_EVERY_SECONDS)
        aws_clients.client.cache_clear()  # its own SDK clients, as each function has
        self.digest = build_digest(
            DigestSettings(
                **twilio,
                conversations_table=self.tables["conversations"],
                messages_table=self.tables["messages"],
                sends_table=self.tables["sends"],
                directory_table=self.tables["directory"],
                event_bus_name=self.bus_name,
                region=REGION,
                **{
                    "on_call_pm_phone": ON_CALL_PM,
                    **{
                        k: v
                        for k, v in self.settings_overrides.items()
                        if k in DigestSettings.model_fields
                    },
                },
            ),
            self.clock,
        )
        self._next_digest = next_hour(self.clock.now())
        webhook_deps = WebhookDeps(
            ingestor=self.ingestor,
            statuses=DynamoOutboundStatusStore(self.ddb, self.tables["messages"]),
            twilio_auth_token=lambda: self.twilio_token,
            app_signing_secret=lambda: self.app_secret,
            clock=self.clock,
            # The loopback Twilio's account, whichever messenger texts.
            twilio_account_sid=self.twilio.account_sid,
            consent=self.consent,
        )
        self.resolver = build_resolver(webhook_deps)
        # The fallback drain: another function in the cloud, with its own ingestor (a fault
        # aimed at the webhook's stage does not reach it), receiving each kept message at the
        # time the edge took it.
        self.fallback_ingestor = ingestor()
        received = ReceivedClock()
        fallback_resolver = build_resolver(
            replace(webhook_deps, ingestor=self.fallback_ingestor, clock=received)
        )

        def drain_resolve(event: dict[str, Any]) -> dict[str, Any]:
            context: Any = FakeLambdaContext("maestro-inbound-fallback", uuid.uuid4().hex)
            with self.priority.request(), self._inbound_lock:
                response: dict[str, Any] = fallback_resolver.resolve(event, context)
            return response

        self.fallback_drain = FallbackDrain(drain_resolve, received)
        self.edge = Edge(
            inbound=lambda event: self.http(event),  # late-bound: a test may replace http
            send_fallback=self._keep_fallback,
            clock=self.clock,
            throttle=self.stage_throttle,
        )
        self._next_rescue = self.clock.now() + timedelta(seconds=SWEEP_EVERY_SECONDS)
        self.wire_twilio(LOCAL_BASE_URL)

    def wire_twilio(self, base_url: str) -> list[Any]:
        """Point the loopback number's webhooks at ``base_url`` (this stack's edge), with the
        code `maestro twilio wire` runs against Twilio, through the SDK; the changes made."""
        from maestro.adapters.twilio_sms import twilio_client

        client = twilio_client(
            self.twilio.account_sid, self.twilio_token, base_url=self.twilio_server.url
        )
        base = base_url.rstrip("/")
        return wire_number(
            client,
            LINE,
            WebhookTargets(
                sms_url=f"{base}/twilio/sms",
                sms_fallback_url=f"{base}{FALLBACK_PREFIX}/twilio/sms",
                status_callback=f"{base}/twilio/status",
            ),
        )

    def _keep_fallback(self, request: Any) -> None:
        """The fallback API's integration: SendMessage of the kept request."""
        self.sqs.send_message(
            QueueUrl=self.fallback_url,
            MessageBody=request.body,
            MessageAttributes=request.attributes(),
        )

    # -- Lambda ---------------------------------------------------------------------------------

    def _dispatch(self, function_name: str, body: bytes, response_headers: dict[str, str]) -> bytes:
        name = function_name.split(":function:")[-1].split(":")[0]
        step = name.removeprefix("maestro-").replace("-", "_")
        event = json.loads(body) if body else {}
        context = FakeLambdaContext(
            function_name=name,
            aws_request_id=uuid.uuid4().hex,
            invoked_function_arn=function_arn(step),
        )
        # A package's step by its package id, a work order machine's by its WO id.
        package_id = str(event.get("package_id") or event.get("wo_id") or "")
        try:
            with lambda_logs.invocation(
                name,
                context.aws_request_id,
                function_arn=context.invoked_function_arn,
                correlation_id=package_id,
            ):
                result = self.fault(step, event, lambda: self.handlers[step](event, context))
        except Exception as error:  # a Lambda function error, as the service reports it
            error_type = getattr(error, "error_type", None) or type(error).__name__
            self._log(step, package_id, error_type)
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": error_type, "errorMessage": str(error)}).encode()
        self._log(step, package_id, "ok")
        return json.dumps(result).encode()

    def _log(self, step: str, package_id: str, outcome: str) -> None:
        with self._log_lock:
            self.invocations.append((step, package_id, outcome))
            self._last_outcome[package_id] = (step, outcome)
        self._moved()

    # -- webhooks and time ----------------------------------------------------------------------

    def api(self, event: dict[str, Any]) -> dict[str, Any]:
        """A request as it reaches the cloud's edge (WAF, the stage throttle, the inbound
        function or the fallback API): what `maestro serve` and Twilio's webhooks meet."""
        return self.edge.route(event)

    def http(self, event: dict[str, Any]) -> dict[str, Any]:
        """An API Gateway-shaped event through the real inbound resolver (the function itself,
        past the edge: an exception it raises is the caller's)."""
        context: Any = FakeLambdaContext("maestro-inbound", uuid.uuid4().hex)
        with (
            self.priority.request(),
            self._inbound_lock,
            lambda_logs.invocation(context.function_name, context.aws_request_id),
        ):
            response: dict[str, Any] = self.resolver.resolve(event, context)
        return response

    def _post_status_callback(self, url: str, form: dict[str, str], signature: str) -> None:
        """Twilio's status callback, signed, handed to the inbound resolver as the loopback
        webhook server hands over any request (the URL's host and path, API Gateway's shape)."""
        parts = urlsplit(url)
        event = rest_event(
            parts.path,
            urlencode(list(form.items())),
            {
                "X-Twilio-Signature": signature,
                "Content-Type": "application/x-www-form-urlencoded",
            },
            host=parts.netloc,
            scheme=parts.scheme,
        )
        response = self.http(event)
        if response["statusCode"] == 404:
            # A message maestro has no record of (a callback that beat the messenger's record,
            # or one whose record a crash lost): refused and stored nowhere; Twilio does not
            # retry it, and the message's next callback, if any, applies.
            self.refused_callbacks.append((url, dict(form)))
        elif response["statusCode"] != 200:
            raise RuntimeError(f"the status callback was refused: {response}")

    def outbox(self, to: str | None = None) -> list[SentMessage]:
        """What Twilio (the loopback) has: every message sent, oldest first."""
        return [
            SentMessage(sid=m["sid"], to=m["to"], body=m["body"], status=m["status"], via="twilio")
            for m in self.twilio.messages(to)
        ]

    def poll_probes(self) -> int:
        """The probe queue's event source: batches of up to 10 probe signals → the prober,
        partial failures retried (and redriven after 5 receives)."""
        from maestro.ingest.prober_entry import process_probe_batch

        self.probes.release_due()
        return self._poll(
            "maestro-prober",
            self.probe_url,
            lambda event: process_probe_batch(event, self.prober, None),
        )

    def poll_debounce(self) -> int:
        """One event-source-mapping poll: a batch of up to 10 → the flusher, partial failures.
        The probe queue is polled first: an emergency the prober reads expedites at once."""
        from maestro.ingest.flusher_entry import process_debounce_batch

        self.poll_probes()
        self.debounce.release_due()
        return self._poll(
            "maestro-flusher",
            self.debounce_url,
            lambda event: process_debounce_batch(event, self.flusher, None),
        )

    def poll_watcher(self) -> int:
        """One event-source-mapping poll of the events queue: batches of up to 10 domain
        events → the watcher, partial failures retried (and redriven after 5 receives)."""
        from maestro.verify.entry import process_watcher_batch

        return self._poll(
            "maestro-watcher",
            self.events_url,
            lambda event: process_watcher_batch(event, self.watcher, None),
        )

    def poll_fallback(self) -> int:
        """One event-source-mapping poll of the fallback queue: the webhooks Twilio's fallback
        URL kept → the drain (the inbound route), partial failures retried (and redriven to the
        DLQ after 5 receives)."""
        from maestro.ingest.fallback_entry import process_fallback_batch

        return self._poll(
            "maestro-inbound-fallback",
            self.fallback_url,
            lambda event: process_fallback_batch(event, self.fallback_drain, None),
        )

    def poll_wo_start(self) -> int:
        """One event-source-mapping poll of the wo-start queue: wo.created events → wo_start,
        which starts each WO's execution (named by its id: a redelivery starts nothing)."""
        from maestro.dispatch.starter import process_wo_start_batch

        return self._poll(
            "maestro-wo-start",
            self.wo_start_url,
            lambda event: process_wo_start_batch(event, self.wo_starter, None),
        )

    def rescue_stranded(self) -> int:
        """The stranded sweep now (the schedule rule's record on the debounce queue, handled by
        the flusher); how many records were handled."""
        self._next_rescue = self.clock.now() + timedelta(seconds=SWEEP_EVERY_SECONDS)
        self.sqs.send_message(QueueUrl=self.debounce_url, MessageBody=STRANDED_SWEEP)
        return self.poll_debounce()

    def _poll(
        self, function_name: str, url: str, handle: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> int:
        """Batches from the queue at ``url`` to ``function_name``'s handler until it is empty
        or a record fails."""
        handled = 0
        while True:
            messages = self.sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                AttributeNames=["ApproximateReceiveCount"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                return handled
            event = {"Records": [_sqs_record(m, url) for m in messages]}
            try:
                with lambda_logs.invocation(function_name, uuid.uuid4().hex):
                    result = handle(event)
                failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
            except Exception:  # the invocation failed (e.g. every record did): retry them all
                failed = {m["MessageId"] for m in messages}
            for message in messages:
                if message["MessageId"] not in failed:
                    self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            handled += len(messages) - len(failed)
            if failed:
                return handled  # leave the failures for the next poll (and the DLQ)

    def settle(self) -> None:
        """Let Twilio move its messages on (on the virtual clock) and the watcher read every
        claim made so far; the sweeper runs on its schedule (every 5 virtual minutes), the
        digest on its own (at the top of every virtual hour, as the cloud's hourly rule)."""
        self.twilio.progress()
        if self.clock.now() >= self._next_digest:
            self.send_digest()
        self.poll_fallback()
        self.poll_wo_start()
        self.poll_watcher()
        if self.clock.now() >= self._next_sweep:
            self.sweep()
        if self.clock.now() >= self._next_rescue:
            self.rescue_stranded()

    def send_digest(self) -> DigestReport:
        """One digest run now: the page of every hour that is over and not sent yet."""
        self._next_digest = next_hour(self.clock.now())
        with lambda_logs.invocation("maestro-digest", uuid.uuid4().hex):
            return self.digest.run()

    def sweep(self) -> SweepReport:
        """One sweep now: packages completed more than the window ago whose recorded effects
        had no event (``missing_event``)."""
        self._next_sweep = self.clock.now() + timedelta(seconds=SWEEP_EVERY_SECONDS)
        with lambda_logs.invocation("maestro-sweeper", uuid.uuid4().hex):
            return self.sweeper.sweep()

    def advance(self, seconds: float, *, wait: bool = True, patience: float = 30) -> None:
        """Move virtual time, delivering debounce signals as they fall due, and let every
        execution started on the way finish (or pause at a gate), then settle. ``wait=False``
        (the server's clock) delivers, settles and moves on: executions run on while time
        passes. ``patience``: the wall seconds each wait for the executions may take (a
        benchmark moving scores of executions at once gives them longer)."""
        target = self.clock.now().timestamp() + seconds
        # The fallback queue's event source drains it within a second in the cloud: before
        # time moves, so a kept message's signals fall due on the way.
        self.poll_fallback()
        while (due := self._next_stop(target)) is not None:
            self.clock.set(max(due, self.clock.now()))
            self.debounce.release_due()
            self.poll_debounce()
            if wait:
                self.wait_for_executions(timeout=patience, allow_paused=True)
            self.settle()
        self.clock.set(datetime.fromtimestamp(target, UTC))
        self.debounce.release_due()
        self.poll_debounce()
        if wait:
            self.wait_for_executions(timeout=patience, allow_paused=True)
        self.settle()
        if wait:  # what the scheduled sweeps of settle started
            self.wait_for_executions(timeout=patience, allow_paused=True)

    def _next_stop(self, target: float) -> datetime | None:
        """Where ``advance`` stops next on its way to ``target``: a debounce signal due, the
        deadline of a Step Functions wait (an offer's timeout, a gate's heartbeat), or the top
        of the hour when the digest is due (the cloud's hourly rule fires then: a stop at a
        wait's deadline must not send it later in the hour instead)."""
        now = self.clock.now()
        digest = self._next_digest if self._next_digest > now else None
        stops = [
            self.debounce.next_due(),
            self.probes.next_due(),
            self.waits.next_deadline(after=now),
            digest,
        ]
        due = [moment for moment in stops if moment is not None and moment.timestamp() <= target]
        return min(due, default=None)

    # -- executions -----------------------------------------------------------------------------

    def executions(self, status: str | None = None) -> list[dict[str, Any]]:
        """Every execution of the pipeline, oldest first (ListExecutions, every page)."""
        return self._listed(self.machine_arn, status)

    def _listed(self, machine_arn: str, status: str | None = None) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "stateMachineArn": machine_arn,
            "PaginationConfig": {"PageSize": 1000},
        }
        if status is not None:
            kwargs["statusFilter"] = status
        pages = self.sfn.get_paginator("list_executions").paginate(**kwargs)
        found = [e for page in pages for e in page["executions"]]
        return sorted(found, key=lambda e: e["startDate"])

    def running_executions(self) -> list[dict[str, Any]]:
        """The pipeline's running executions, oldest first, shaped as ListExecutions items.

        From the stack's own record of what runs (see :meth:`_watch_executions`), not from
        ListExecutions: what runs is a handful, what ran grows with every package.
        """
        with self._progress:
            running = [e for e in self._running.values() if e.state_machine_arn == self.machine_arn]
        return [
            {
                "executionArn": e.exec_arn,
                "stateMachineArn": e.state_machine_arn,
                "name": e.name,
                "status": "RUNNING",
                "startDate": e.start_date,
            }
            for e in sorted(running, key=lambda e: e.start_date)
        ]

    def wo_executions(self) -> list[dict[str, Any]]:
        """Every execution of the work order machine, oldest first (ListExecutions)."""
        return self._listed(self.wo_machine_arn)

    def wo_execution(self, wo_id: str) -> dict[str, Any]:
        """The WO's execution (named by its id), described as it is now."""
        arn = f"{self.wo_machine_arn.replace(':stateMachine:', ':execution:')}:{wo_id}"
        return self.sfn.describe_execution(executionArn=arn)  # type: ignore[no-any-return]

    def wo_states(self, wo_id: str) -> list[str]:
        """The states the WO's execution entered so far, in order."""
        return self.states_entered(self.wo_execution(wo_id)["executionArn"])

    def _wo_arns(self, arns: set[str]) -> set[str]:
        prefix = self.wo_machine_arn.replace(":stateMachine:", ":execution:") + ":"
        return {arn for arn in arns if arn.startswith(prefix)}

    def waiting_work_orders(self) -> dict[str, datetime]:
        """Work order executions waiting on a task token (a person's answer), by ARN: until
        when (the state's timeout)."""
        return {
            arn: wait.deadline
            for arn, wait in self.waits.waiting_on_tokens().items()
            if arn.startswith(self.wo_machine_arn.replace(":stateMachine:", ":execution:") + ":")
        }

    def paused_executions(self) -> set[str]:
        """Executions paused at a step gate: its token stored, and the execution waiting on it
        now (a gate that timed out in virtual time leaves its record behind, and moves on)."""
        waiting = set(self.waits.waiting_on_tokens())
        waiting -= self._wo_arns(waiting)
        if not waiting:  # no package waits on a token: no gate to read (a table scan)
            return set()
        return {g.execution_id for g in self.pipeline.deps.gates.open_gates()} & waiting

    def idle_executions(self) -> set[str]:
        """Running executions that cannot move until someone acts or virtual time passes: paused
        at a step gate, or waiting for a lease whose live holder is paused (it keeps the lease
        while it waits) or no longer running (it crashed: the lease expires in virtual time)."""
        paused = self.paused_executions()
        executions = self.running_executions()
        running = {e["name"] for e in executions}
        stuck = {arn.rsplit(":", 1)[-1] for arn in paused}
        with self._log_lock:
            last = dict(self._last_outcome)
        idle = set(paused)
        for execution in executions:
            arn, package_id = execution["executionArn"], execution["name"]
            if arn in idle or last.get(package_id) != ("lease", "LeaseBusy"):
                continue
            conversation = self._conversation_of(arn)
            lease = self.ddb.get_item(
                TableName=self.tables["conversations"],
                Key={"conversation_id": {"S": conversation}, "item": {"S": "lease"}},
                ConsistentRead=True,
            ).get("Item", {})
            holder = lease.get("holder", {}).get("S")
            alive = int(lease.get("expires_ms", {}).get("N", "0")) >= int(
                self.clock.now().timestamp() * 1000
            )
            if alive and holder is not None and (holder in stuck or holder not in running):
                idle.add(arn)
        return idle

    def _conversation_of(self, execution_arn: str) -> str:
        if execution_arn not in self._conversations:
            described = self.sfn.describe_execution(executionArn=execution_arn)
            self._conversations[execution_arn] = json.loads(described["input"])["conversation_id"]
        return self._conversations[execution_arn]

    def carrier_opt_out(self, phone: str) -> None:
        """From now on the loopback Twilio fails each text to ``phone`` with 21610 (its status
        callback says so), as it does for a number that texted STOP elsewhere."""
        self.twilio.undeliverable(phone, error_code=21610)

    def wait_for_executions(self, timeout: float = 30, allow_paused: bool = False) -> None:
        """Until every execution has finished, or (``allow_paused``) is idle: paused at a gate
        or waiting behind one. A work order's execution waiting on a person (its task token,
        until its deadline) is idle either way: only time or an answer moves it. Sleeps until
        something moves (:meth:`wait_for_progress`).

        ``timeout`` is how long nothing may move: each step an execution takes gives it
        ``timeout`` more, up to ten times ``timeout`` in all. A busy machine slows every step
        alike; only a stall (a hang, a lost signal) stays still that long."""
        hard_deadline = time.monotonic() + 10 * timeout
        deadline = hard_deadline  # set by the first look, which always counts as a move
        last_seen = -1
        while True:
            seen = self.progress()
            if seen != last_seen:
                last_seen = seen
                deadline = min(time.monotonic() + timeout, hard_deadline)
            mine = (self.machine_arn, self.wo_machine_arn)  # not an eval executor's, say
            with self._progress:
                running = {a for a, e in self._running.items() if e.state_machine_arn in mine}
            running -= set(self.waiting_work_orders())
            # Only a package's execution can be idle behind a gate or a lease: a moving work
            # order's needs no look at the gates (a read of their table at every progress).
            if allow_paused and running - self._wo_arns(running):
                running -= self.idle_executions()
            if not running:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"executions still running: {sorted(running)}\n{self._stuck(running)}"
                )
            self.wait_for_progress(seen, left)

    def _stuck(self, running: set[str]) -> str:
        """For a timeout's message: the virtual time, each stuck execution's last events and
        token waits, and every thread's stack (a lock held for ever shows there). Read on a
        thread of its own, given 5 s: a read that hangs too must not hide the first hang."""
        lines = [f"virtual time {self.clock.now().isoformat()}"]
        tokens = self.waits.all_token_waits()

        def read() -> None:
            for arn in sorted(running):
                try:
                    last = self.history(arn)[-3:]
                except Exception as error:
                    lines.append(f"{arn}: history not read ({error!r})")
                    continue
                said = [
                    f"{e['type']}:{(e.get('stateEnteredEventDetails') or {}).get('name', '')}"
                    for e in last
                ]
                waits = [w.deadline.isoformat() for w in tokens if w.execution_arn == arn]
                lines.append(f"{arn.rsplit(':', 1)[-1]}: last {said}; token waits until {waits}")

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout=5)
        if reader.is_alive():
            lines.append("(its history could not be read within 5 s)")
        frames = sys._current_frames()
        for thread in threading.enumerate():
            frame = frames.get(thread.ident or -1)
            if frame is not None and thread is not threading.current_thread():
                where = traceback.format_stack(frame)[-6:]  # the innermost frames
                lines.append(f"thread {thread.name}:\n{''.join(where)}")
        return "\n".join(lines)

    def release_gate(self, gate: Gate, output: str = "{}", timeout: float = 10) -> None:
        """Release a paused gate with SendTaskSuccess, as `maestro step` does."""
        self.wait_until_waiting(gate.execution_id, "Step gate", timeout)
        self.pipeline.deps.gates.remove(gate.execution_id, gate.gate, gate.index)
        self.sfn.send_task_success(taskToken=gate.token, output=output)

    def wait_until_waiting(self, execution_arn: str, gate_prefix: str, timeout: float = 10) -> None:
        """Until the gate (a state whose name starts with ``gate_prefix``) waits for its token.

        A gate handler stores its token before the service starts waiting for it; a token sent
        in that instant would be lost, so wait until the history shows the task submitted.
        """
        deadline = time.monotonic() + timeout
        while True:
            seen = self.progress()
            events = self.history(execution_arn)
            entered = sum(
                1
                for e in events
                if e.get("stateEnteredEventDetails", {}).get("name", "").startswith(gate_prefix)
            )
            submitted = sum(
                1
                for e in events
                if e["type"] == "TaskSubmitted"
                and "waitForTaskToken" in e.get("taskSubmittedEventDetails", {}).get("resource", "")
            )
            if entered and submitted >= entered:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{execution_arn}: the gate never started waiting")
            self.wait_for_progress(seen, left)  # the next history event, of any execution

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        pages = self.sfn.get_paginator("get_execution_history").paginate(
            executionArn=execution_arn, PaginationConfig={"PageSize": 1000}
        )
        return [e for page in pages for e in page["events"]]

    def states_entered(self, execution_arn: str) -> list[str]:
        return [
            e["stateEnteredEventDetails"]["name"]
            for e in self.history(execution_arn)
            if "stateEnteredEventDetails" in e
        ]

    def domain_events(self) -> Iterator[dict[str, Any]]:
        """Drain the tap: every domain event the rule delivered since the last drain (the
        watcher reads its own copy)."""
        while True:
            messages = self.sqs.receive_message(QueueUrl=self.tap_url, MaxNumberOfMessages=10).get(
                "Messages", []
            )
            if not messages:
                return
            for message in messages:
                self.sqs.delete_message(
                    QueueUrl=self.tap_url, ReceiptHandle=message["ReceiptHandle"]
                )
                yield json.loads(message["Body"])

    def ledger_rows(self) -> list[LedgerRow]:
        """Every Evidence and Shame row so far (a scan: local use only; the cloud reads by
        package or WO)."""
        return self.ledger.scan()


def _forget_history(worker: Any) -> None:
    """Drop a closed execution's event history (moto keeps it on the execution's environment,
    with every state's input and output); its status, input and output stay."""
    env = getattr(worker, "env", None)
    events = getattr(getattr(env, "event_manager", None), "_history_event_list", None)
    if isinstance(events, list):
        events.clear()


def _forget_finished_threads() -> None:
    """moto's Step Functions interpreter appends every thread it starts (an execution's, its
    program's, each Map iteration's, each callback wait's) to a module-level list it never
    reads or empties; drop the finished ones so the list does not grow with every package."""
    from moto.stepfunctions.parser import utils

    utils.TMP_THREADS[:] = [t for t in list(utils.TMP_THREADS) if t.is_alive()]


def _import_sfn_interpreter_lightly() -> None:
    """Import moto's Step Functions interpreter without moto's Batch and EC2 models.

    The interpreter's Batch task support needs only ``moto.batch.utils``, but importing it runs
    ``moto.batch``'s package init, which loads all of moto's EC2 models: about 1.7 s of a
    10-second demo budget, for a service maestro never calls. A bare stand-in for the package
    lets ``moto.batch.utils`` load from its real file; the stand-in is removed afterwards, so a
    later import of ``moto.batch`` gets the real package.
    """
    import importlib
    import importlib.util
    import sys

    if "moto.stepfunctions.parser.models" in sys.modules or "moto.batch" in sys.modules:
        return
    spec = importlib.util.find_spec("moto.batch")
    if spec is None or not spec.submodule_search_locations:
        return
    stand_in = types.ModuleType("moto.batch")
    stand_in.__path__ = list(spec.submodule_search_locations)
    sys.modules["moto.batch"] = stand_in
    try:
        importlib.import_module("moto.stepfunctions.parser.models")
    finally:
        sys.modules.pop("moto.batch", None)
        sys.modules.pop("moto.batch.utils", None)


def _sqs_record(message: dict[str, Any], url: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        # Lambda's shape: stringValue / dataType (ReceiveMessage answers StringValue / DataType)
        "messageAttributes": {
            name: {"stringValue": value.get("StringValue"), "dataType": value.get("DataType")}
            for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{url.rsplit('/', 1)[-1]}",
        "awsRegion": REGION,
    }
