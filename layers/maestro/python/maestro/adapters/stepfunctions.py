"""Starting the package pipeline on Step Functions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from maestro.domain.models import Package

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient
else:
    SFNClient = Any

# Step Functions refuses execution input over 256 KiB; leave room for the envelope.
MAX_INLINE_PACKAGE_BYTES = 200 * 1024


def execution_input(package: Package, *, step: bool = False) -> str:
    """The pipeline's input: the package inline when it fits, else a reference to its claim."""
    body = package.model_dump(mode="json")
    data: dict[str, Any] = {
        "package_id": package.package_id,
        "conversation_id": package.conversation_id,
        "flush_number": package.flush_number,
        "step": step,
        "package": body,
    }
    if len(json.dumps(data).encode()) > MAX_INLINE_PACKAGE_BYTES:
        data["package"] = None  # the pipeline reads the claimed messages from the buffer
    return json.dumps(data)


class StepFunctionsStarter:
    """:class:`maestro.ports.WorkflowStarter`: one Standard execution per package, named by it."""

    def __init__(self, client: SFNClient, state_machine_arn: str, *, step: bool = False) -> None:
        self._sfn = client
        self._arn = state_machine_arn
        self._step = step  # every execution pauses at its gates (debugging, evals)

    def start(self, package: Package) -> bool:
        try:
            self._sfn.start_execution(
                stateMachineArn=self._arn,
                name=package.package_id,
                input=execution_input(package, step=self._step),
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ExecutionAlreadyExists":
                return False  # a redelivered flush: the execution is already there, so done
            raise
        return True
