"""Starting the package pipeline on Step Functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from maestro.domain.models import Package
from maestro.pipeline.contract import MAX_INLINE_PACKAGE_BYTES, execution_input

__all__ = ["MAX_INLINE_PACKAGE_BYTES", "StepFunctionsStarter", "execution_input"]

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient
else:
    SFNClient = Any


class StepFunctionsStarter:
    """:class:`maestro.ports.WorkflowStarter`: one Standard execution per package, named by it."""

    def __init__(self, client: SFNClient, state_machine_arn: str, *, step: bool = False) -> None:
        self._sfn = client
        self._arn = state_machine_arn
        self.step = step  # every execution pauses at its gates (debugging, evals)

    def start(self, package: Package) -> bool:
        try:
            self._sfn.start_execution(
                stateMachineArn=self._arn,
                name=package.package_id,
                input=execution_input(package, step=self.step),
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ExecutionAlreadyExists":
                return False  # a redelivered flush: the execution is already there, so done
            raise
        return True
