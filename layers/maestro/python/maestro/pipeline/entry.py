"""Lambda entry points for the pipeline's steps, and the wiring from settings to adapters.

``make_handlers`` turns a Pipeline into one handler per step of ``maestro.access.PIPELINE_STEPS``
(logged with the package id as correlation id, traced, counted), each running its step's module
(``maestro.pipeline.<name>``, as ``functions/<name>/``) on its input state validated once, here,
against the model the step declares. The cloud builds them once per container from
``PipelineSettings``; the embedded stack builds them with its virtual clock and calls the very
same functions from its Lambda dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import import_module
from typing import Any, cast

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyPersistenceLayerError,
)
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from maestro.access import PIPELINE_STEPS
from maestro.adapters.aws import client
from maestro.adapters.configured_model import language_model
from maestro.adapters.ddb import refuse_unconfigured_tables, unconfigured_table
from maestro.adapters.dynamodb_buffer import DynamoConversationBuffer, DynamoPageThrottle
from maestro.adapters.dynamodb_caps import DailyCapLimits, DynamoDailyCaps
from maestro.adapters.dynamodb_decisions import DynamoDecisionLog
from maestro.adapters.dynamodb_digest import DynamoDigest
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_gates import DynamoGateStore
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.dynamodb_pending import DynamoPendingStore
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.eventbridge import EventBridgeBus, FailedPublishError, NoBus
from maestro.adapters.idempotency import OwnedDynamoDBPersistenceLayer
from maestro.adapters.messaging import messenger_for
from maestro.adapters.stepfunctions import StepFunctionsTaskTokens
from maestro.brain.model_port import LanguageModel
from maestro.brain.stage_models import models_for
from maestro.clock import SystemClock
from maestro.domain.consensus import ConsensusPolicy
from maestro.errors import TransientError
from maestro.observability import logger, metrics, tracer
from maestro.pipeline.shared import JSON, ActOnce, Pipeline, PipelineDeps, Step
from maestro.ports.platform import Clock
from maestro.settings import PipelineSettings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]
STEPS = PIPELINE_STEPS  # defined with each step's tables (maestro.access)


def _step(name: str) -> Step:
    step = import_module(f"maestro.pipeline.{name}").STEP
    if not isinstance(step, Step):  # pragma: no cover - each step module declares its STEP
        raise TypeError(f"maestro.pipeline.{name}.STEP is not a Step")
    return step


STEP_MODULES: dict[str, Step] = {name: _step(name) for name in STEPS}
"""Each step's function and input model, from its module named as the step (one list of steps:
``maestro.access.PIPELINE_STEPS``)."""
_TRANSIENT_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionConflictException",
    }
)


def _transient(error: ClientError) -> bool:
    """Worth the state machine's retry: a throttle or conflict, or any 5xx (the service's own
    failure, such as EventBridge's InternalException)."""
    response = error.response
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return response.get("Error", {}).get("Code") in _TRANSIENT_CODES or status >= 500


def build_pipeline(
    settings: PipelineSettings,
    clock: Clock,
    model: LanguageModel | None = None,
    *,
    key_from_env: bool = True,
) -> tuple[Pipeline, Any]:
    """The pipeline on real adapters, plus the idempotency store for the act step.

    For one step (``settings.step``), only the tables of its row are configured: an adapter
    over any other is built on a name the DynamoDB client refuses with an error naming the
    table and the step (the same call would be an AccessDenied in the cloud). The bus, too,
    is there only for a step that publishes.
    """
    ddb = client("dynamodb", settings.region)
    owner = settings.step or "the pipeline"
    if settings.step is not None:
        refuse_unconfigured_tables(ddb)

    def table(logical_name: str) -> str:
        return settings.table(logical_name) or unconfigured_table(logical_name, owner)

    deps = PipelineDeps(
        buffer=DynamoConversationBuffer(
            ddb,
            table("messages"),
            table("conversations"),
            retention_days=settings.messages_retention_days,
        ),
        parties=DynamoPartyDirectory(ddb, table("parties")),
        work_orders=DynamoWorkOrderStore(ddb, table("work_orders")),
        timeline=DynamoTimeline(ddb, table("timeline")),
        pending=DynamoPendingStore(ddb, table("pending")),
        decisions=DynamoDecisionLog(
            ddb,
            table("decisions"),
            retention_days=settings.decisions_retention_days,
            completion_shards=settings.completion_shards,
        ),
        state=DynamoStateStore(ddb, table("state")),
        messenger=messenger_for(
            settings,
            ddb,
            clock,
            messages_table=table("messages"),
            sends_table=table("sends"),
            conversations_table=table("conversations"),
            parties_table=table("parties"),
        ),
        bus=EventBridgeBus(client("events", settings.region), settings.event_bus_name)
        if settings.event_bus_name
        else NoBus(owner),
        models=models_for(
            language_model(
                settings,
                clock,
                ddb,
                table("conversations"),
                model,
                key_from_env=key_from_env,
            ),
            compose_replies=settings.compose_replies,
        ),
        gates=DynamoGateStore(ddb, table("gates")),
        clock=clock,
        on_call_pm_phone=settings.on_call_pm_phone,
        policy=ConsensusPolicy(k=settings.samples, first_samples=min(2, settings.samples)),
        lease_ttl_seconds=settings.lease_ttl_seconds,
        throttle=DynamoPageThrottle(ddb, table("conversations")),
        caps=DynamoDailyCaps(
            ddb,
            table("conversations"),
            DailyCapLimits(
                pages=settings.account_daily_pages,
                texts=settings.account_daily_texts,
                model_calls=settings.account_daily_model_calls,
            ),
        ),
        digest=DynamoDigest(ddb, table("conversations")),
        unknown_emergency_fold_seconds=settings.unknown_emergency_fold_minutes * 60,
        directory=DynamoDirectory(ddb, table("directory")),
        dispatch=DynamoDispatchStore(ddb, table("dispatch")),
        # SendTaskSuccess needs the token alone (no machine ARN); only act completes a wait.
        tokens=StepFunctionsTaskTokens(client("stepfunctions", settings.region))
        if settings.step in (None, "act")
        else None,
    )
    # Its in-progress records know their own write: a retried put whose answer was lost is not
    # taken for another run (maestro.adapters.idempotency).
    persistence = OwnedDynamoDBPersistenceLayer(table("idempotency"), ddb)
    return Pipeline(deps), persistence


def run_step(
    pipeline: Pipeline, name: str, event: Mapping[str, Any], act: ActOnce | None = None
) -> JSON:
    """Run step ``name`` on ``event``: its input validated once, against the model the step
    declares, then its function. ``act`` is the early escalation's way to run an action (the
    handlers pass the idempotent act; by default, the act step itself)."""
    step = STEP_MODULES[name]
    state = event if step.input is None else step.input.model_validate(event)
    if name == "escalate":
        return step.run(pipeline, state, act or (lambda item: run_step(pipeline, "act", item)))
    return step.run(pipeline, state)


def make_handlers(pipeline: Pipeline, persistence: Any) -> dict[str, Handler]:
    idempotency = IdempotencyConfig(
        event_key_jmespath="queued.idempotency_key",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=7 * 24 * 3600,
    )

    @idempotent_function(  # type: ignore[untyped-decorator]  # Powertools' decorator is untyped
        data_keyword_argument="item", persistence_store=persistence, config=idempotency
    )
    def act_once(item: dict[str, Any]) -> dict[str, Any]:
        # Keyed on the raw item (queued.idempotency_key); validated once, inside.
        return run_step(pipeline, "act", item)

    def wrap(name: str) -> Handler:
        @logger.inject_lambda_context(correlation_id_path="package_id", clear_state=True)
        @tracer.capture_lambda_handler(capture_response=False)
        @metrics.log_metrics
        def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            if name in ("act", "escalate"):
                idempotency.register_lambda_context(context)
            scope = pipeline.deps.models.scope(
                str(event.get("conversation_id", "unknown")), event.get("package_id")
            )
            try:
                with scope:
                    if name == "act":
                        return cast(JSON, act_once(item=event))
                    # The early escalation runs its actions through the same idempotent act as
                    # the queue.
                    return run_step(pipeline, name, event, act=lambda item: act_once(item=item))
            except ClientError as error:
                if _transient(error):
                    raise TransientError(str(error)) from error
                raise
            except FailedPublishError as error:  # EventBridge took none or some of a batch
                raise TransientError(str(error)) from error
            except IdempotencyPersistenceLayerError as error:
                # The act's idempotency record could not be read or written: a throttle or a
                # 5xx on its table is worth a retry, as on any other table.
                cause = error.__cause__
                if isinstance(cause, ClientError) and _transient(cause):
                    raise TransientError(str(error)) from error
                raise

        handler.__name__ = f"{name}_handler"
        return cast(Handler, handler)

    return {name: wrap(name) for name in STEPS}


@cache
def _cloud_handlers(step: str) -> dict[str, Handler]:
    settings = PipelineSettings()  # read from the environment
    if settings.step not in (None, step):
        raise ValueError(f"functions/{step} runs {step}, but MAESTRO_STEP says {settings.step}")
    pipeline, persistence = build_pipeline(settings, SystemClock())
    return make_handlers(pipeline, persistence)


def _entry(name: str) -> Handler:
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return _cloud_handlers(name)[name](event, context)

    handler.__name__ = name
    return handler


precheck, escalate, lease, resolve, brain, dispose, act, persist, fail_open, step_gate = (
    _entry(n) for n in STEPS
)
