"""wo_start: each new work order's execution of the work order machine.

The ``wo.created`` rule delivers the event to the wo-start queue (with a DLQ); this consumer
starts one Standard execution per WO, named by the WO id, with ``{"wo_id": ...}``: a
redelivered event meets ExecutionAlreadyExists and is done. Partial batch failures: a record
that could not start (a throttle, a service error) is retried alone, and after the queue's
receive count it goes to the DLQ, which is alarmed. A WO put in the store directly (a seeded
world) publishes no event and gets no execution.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from maestro.adapters.aws import client
from maestro.dispatch.contract import WoExecutionInput
from maestro.observability import logger, metrics, tracer
from maestro.settings import WoStartSettings
from maestro.verify.entry import domain_event

__all__ = ["WoStarter", "process_wo_start_batch", "wo_start_handler"]

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient
else:
    SFNClient = Any


class WoStarter:
    """Starts a WO's execution, once: True when this call started it."""

    def __init__(self, sfn: SFNClient, machine_arn: str) -> None:
        self._sfn = sfn
        self._arn = machine_arn

    def start(self, wo_id: str) -> bool:
        try:
            self._sfn.start_execution(
                stateMachineArn=self._arn,
                name=wo_id,
                input=WoExecutionInput(wo_id=wo_id).model_dump_json(),
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ExecutionAlreadyExists":
                return False  # a redelivered wo.created: its execution is there, so done
            raise
        return True


def start_record(record: SQSRecord, starter: WoStarter) -> None:
    event = domain_event(record)
    if event.type != "wo.created":  # the rule sends only these; anything else is not ours
        logger.warning("not a wo.created event", extra={"type": event.type})
        return
    started = starter.start(event.subject_id)
    logger.info("work order execution", extra={"wo_id": event.subject_id, "started": started})


def process_wo_start_batch(
    event: dict[str, Any], starter: WoStarter, context: LambdaContext | None
) -> dict[str, Any]:
    """One SQS batch of wo.created events (the cloud handler and the local poller share it)."""
    processor = BatchProcessor(event_type=EventType.SQS)
    response = process_partial_response(
        event=event,
        record_handler=lambda record: start_record(record, starter),
        processor=processor,
        context=context,
    )
    return dict(response)


@cache
def _starter() -> WoStarter:
    settings = WoStartSettings()  # read from the environment
    return WoStarter(client("stepfunctions", settings.region), settings.work_order_machine_arn)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def wo_start_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_wo_start_batch(event, _starter(), context)
