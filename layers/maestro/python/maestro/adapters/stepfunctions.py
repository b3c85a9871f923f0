"""Starting the package pipeline on Step Functions, and completing a work order's waits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from maestro.domain.execution_input import execution_input
from maestro.domain.models import Package
from maestro.ports.workflows import TaskTokenGoneError

__all__ = ["StepFunctionsStarter", "StepFunctionsTaskTokens"]

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.client import SFNClient
else:
    SFNClient = Any


class StepFunctionsStarter:
    """:class:`maestro.ports.workflows.WorkflowStarter`: one Standard execution per package, named
    by it."""

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


_GONE = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})


class StepFunctionsTaskTokens:
    """:class:`maestro.ports.workflows.TaskTokens`: SendTaskSuccess. A token that waits no more
    (answered, timed out, or its execution stopped) is :class:`TaskTokenGoneError`, not a failure:
    the answer came too late to count, which the caller says."""

    def __init__(self, client: SFNClient) -> None:
        self._sfn = client

    def succeed(self, token: str, output: Mapping[str, Any]) -> None:
        try:
            self._sfn.send_task_success(taskToken=token, output=json.dumps(dict(output)))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in _GONE:
                raise TaskTokenGoneError(str(error)) from error
            raise
