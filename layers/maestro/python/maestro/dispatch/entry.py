"""Lambda entry points for the work order machine's steps, and the wiring from settings.

As :mod:`maestro.pipeline.entry`: ``build_dispatch`` puts the steps on real adapters (for one
step, only the tables of its row), ``make_handlers`` wraps each (logged with the WO id as
correlation id, traced, counted; a throttle or 5xx is a ``TransientError`` the ASL retries).
The cloud builds them once per container from ``DispatchSettings``; the embedded stack builds
them with its virtual clock and calls the same functions from its Lambda dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, cast

from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from maestro.access import DISPATCH_STEPS
from maestro.adapters.aws import client
from maestro.adapters.ddb import refuse_unconfigured_tables, unconfigured_table
from maestro.adapters.dynamodb_caps import DailyCapLimits, DynamoDailyCaps
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_dispatch import DynamoDispatchStore
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.adapters.dynamodb_state import DynamoStateStore
from maestro.adapters.dynamodb_timeline import DynamoTimeline
from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore
from maestro.adapters.eventbridge import EventBridgeBus, FailedPublishError
from maestro.adapters.messaging import messenger_for
from maestro.clock import SystemClock
from maestro.dispatch.steps import Dispatch, DispatchDeps
from maestro.domain.judge import DispatchPolicy
from maestro.domain.models import Urgency
from maestro.errors import TransientError
from maestro.observability import logger, metrics, tracer
from maestro.pipeline.entry import _transient
from maestro.ports.platform import Clock
from maestro.settings import DispatchPolicySettings, DispatchSettings

__all__ = ["STEPS", "build_dispatch", "make_handlers", "policy_of"]

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]
STEPS = DISPATCH_STEPS  # defined with each step's tables (maestro.access)


def policy_of(settings: DispatchPolicySettings) -> DispatchPolicy:
    """The account's dispatch policy from its settings (a property's own, in the directory,
    overrides what it names: the judge reads both)."""
    return DispatchPolicy(
        nte_usd={
            Urgency.EMERGENCY: settings.nte_emergency_usd,
            Urgency.URGENT: settings.nte_urgent_usd,
            Urgency.ROUTINE: settings.nte_routine_usd,
        },
        approval_over_usd=settings.approval_over_usd,
        offer_timeout_seconds={
            Urgency.EMERGENCY: settings.offer_timeout_emergency_seconds,
            Urgency.URGENT: settings.offer_timeout_urgent_seconds,
            Urgency.ROUTINE: settings.offer_timeout_routine_seconds,
        },
        gather_deadline_seconds=settings.gather_deadline_seconds,
        approval_timeout_seconds=settings.approval_timeout_seconds,
        business_hours_start=settings.business_hours_start,
        business_hours_end=settings.business_hours_end,
        business_days=settings.business_days,
    )


def build_dispatch(settings: DispatchSettings, clock: Clock) -> Dispatch:
    """The steps on real adapters; for one step (``settings.step``) only its row's tables are
    configured (any other is refused before it leaves the process, naming table and step)."""
    ddb = client("dynamodb", settings.region)
    owner = settings.step or "the work order machine"
    if settings.step is not None:
        refuse_unconfigured_tables(ddb)

    def table(logical_name: str) -> str:
        return settings.table(logical_name) or unconfigured_table(logical_name, owner)

    bus_name = settings.event_bus_name
    if bus_name is None:  # pragma: no cover - the settings refuse it
        raise ValueError("the work order machine's steps publish: event_bus_name is required")
    return Dispatch(
        DispatchDeps(
            runs=DynamoDispatchStore(ddb, table("dispatch")),
            work_orders=DynamoWorkOrderStore(ddb, table("work_orders")),
            timeline=DynamoTimeline(ddb, table("timeline")),
            directory=DynamoDirectory(ddb, table("directory")),
            parties=DynamoPartyDirectory(ddb, table("parties")),
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
            bus=EventBridgeBus(client("events", settings.region), bus_name),
            clock=clock,
            policy=policy_of(settings),
            gather_deadline_seconds=settings.gather_deadline_seconds,
            approval_timeout_seconds=settings.approval_timeout_seconds,
            on_call_pm_phone=settings.on_call_pm_phone,
            caps=DynamoDailyCaps(
                ddb,
                table("conversations"),
                DailyCapLimits(
                    pages=settings.account_daily_pages,
                    texts=settings.account_daily_texts,
                    model_calls=1,  # the machine calls no model
                ),
            ),
        )
    )


def make_handlers(dispatch: Dispatch) -> dict[str, Handler]:
    steps: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "wo_gather": dispatch.gather,
        "wo_ask": dispatch.ask,
        "wo_record": dispatch.record,
        "wo_judge": dispatch.judge,
        "wo_assign": dispatch.assign,
        "wo_page": dispatch.page,
    }

    def wrap(name: str, step: Callable[[dict[str, Any]], dict[str, Any]]) -> Handler:
        @logger.inject_lambda_context(correlation_id_path="wo_id", clear_state=True)
        @tracer.capture_lambda_handler(capture_response=False)
        @metrics.log_metrics
        def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:  # noqa: ARG001
            try:
                return step(event)
            except ClientError as error:
                if _transient(error):
                    raise TransientError(str(error)) from error
                raise
            except FailedPublishError as error:  # EventBridge took none or some of a batch
                raise TransientError(str(error)) from error

        handler.__name__ = f"{name}_handler"
        return cast(Handler, handler)

    return {name: wrap(name, steps[name]) for name in STEPS}


@cache
def _cloud_handlers(step: str) -> dict[str, Handler]:
    settings = DispatchSettings()  # read from the environment
    if settings.step not in (None, step):
        raise ValueError(f"functions/{step} runs {step}, but MAESTRO_STEP says {settings.step}")
    return make_handlers(build_dispatch(settings, SystemClock()))


def _entry(name: str) -> Handler:
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return _cloud_handlers(name)[name](event, context)

    handler.__name__ = name
    return handler


wo_gather, wo_ask, wo_record, wo_judge, wo_assign, wo_page = (_entry(n) for n in STEPS)
