"""The operators' commands against a deployed stack: ``maestro executions|step|ledger --stack``.

The stack's outputs (CloudFormation ``DescribeStacks``) name the state machine and the gates
table; the rest is Step Functions and the same gate store the pipeline writes. Releasing a gate
is ``SendTaskSuccess`` with the token the gate stored: what ``aws stepfunctions
send-task-success --task-token … --task-output '{}'`` does by hand. The ledger is read from the
table the watcher writes (by package, or by WO through its index).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_gates import DynamoGateStore
from maestro.adapters.dynamodb_ledger import DynamoLedger
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.domain.ledger import LedgerRow
from maestro.ports.workflows import Gate
from maestro.stack_outputs import (
    OUTPUT_DIRECTORY_TABLE,
    OUTPUT_GATES_TABLE,
    OUTPUT_LEDGER_TABLE,
    OUTPUT_PARTIES_TABLE,
    OUTPUT_STATE_MACHINE,
    table_output,
)

# A token Step Functions no longer waits for: the gate timed out, or the execution ended.
_STALE_TOKEN = frozenset({"TaskTimedOut", "TaskDoesNotExist", "InvalidToken"})


def console_url(execution_arn: str) -> str:
    region = execution_arn.split(":")[3]
    return (
        f"https://{region}.console.aws.amazon.com/states/home?region={region}"
        f"#/v2/executions/details/{execution_arn}"
    )


@dataclass(frozen=True)
class CloudExecution:
    name: str
    arn: str
    status: str
    started: str
    paused_at: str | None


class CloudStack:
    """A deployed maestro stack, found by name. Clients are passed in (boto3 at the edge)."""

    def __init__(self, stack_name: str, *, cloudformation: Any, stepfunctions: Any, dynamodb: Any):
        described = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        self.outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
        missing = {OUTPUT_STATE_MACHINE, OUTPUT_GATES_TABLE} - set(self.outputs)
        if missing:
            raise LookupError(f"stack {stack_name} has no output {sorted(missing)}: not maestro's?")
        self.stack_name = stack_name
        self.state_machine_arn = self.outputs[OUTPUT_STATE_MACHINE]
        self._sfn = stepfunctions
        self.stepfunctions = stepfunctions
        self._ddb = dynamodb
        self.dynamodb = dynamodb
        self.gates = DynamoGateStore(dynamodb, self.outputs[OUTPUT_GATES_TABLE])

    def table_names(self) -> dict[str, str]:
        """Every table of ``maestro.tables.ALL_TABLES`` by logical name, from the outputs."""
        from maestro.tables import ALL_TABLES

        names = {s.logical_name: self.outputs.get(table_output(s.logical_name)) for s in ALL_TABLES}
        missing = sorted(name for name, table in names.items() if table is None)
        if missing:
            raise LookupError(f"stack {self.stack_name} names no table for {', '.join(missing)}")
        return {name: table for name, table in names.items() if table is not None}

    def ledger(self, package_id: str | None = None, wo_id: str | None = None) -> list[LedgerRow]:
        """The watcher's Evidence and Shame rows: a package's, a WO's (its index), or every row
        (a paged scan: fine for an operator, not for a hot path)."""
        table = self.outputs.get(OUTPUT_LEDGER_TABLE)
        if table is None:
            raise LookupError(f"stack {self.stack_name} has no {OUTPUT_LEDGER_TABLE} output")
        ledger = DynamoLedger(self._ddb, table)
        if package_id:
            rows = ledger.for_package(package_id)
            return [r for r in rows if wo_id is None or r.wo_id == wo_id]
        if wo_id:
            return ledger.for_wo(wo_id)
        return ledger.scan()

    def directory_stores(self) -> tuple[DynamoDirectory, DynamoPartyDirectory]:
        """The directory table and the phone → party table the importer writes."""
        missing = {OUTPUT_DIRECTORY_TABLE, OUTPUT_PARTIES_TABLE} - set(self.outputs)
        if missing:
            raise LookupError(f"stack {self.stack_name} has no output {sorted(missing)}")
        return (
            DynamoDirectory(self._ddb, self.outputs[OUTPUT_DIRECTORY_TABLE]),
            DynamoPartyDirectory(self._ddb, self.outputs[OUTPUT_PARTIES_TABLE]),
        )

    def executions(self, limit: int = 20) -> list[CloudExecution]:
        """Every running execution and the latest ``limit`` of any status, oldest first."""
        found: dict[str, dict[str, Any]] = {}
        paginator = self._sfn.get_paginator("list_executions")
        for page in paginator.paginate(
            stateMachineArn=self.state_machine_arn, statusFilter="RUNNING"
        ):
            found |= {e["executionArn"]: e for e in page["executions"]}
        recent = self._sfn.list_executions(
            stateMachineArn=self.state_machine_arn, maxResults=limit
        )["executions"]
        found |= {e["executionArn"]: e for e in recent}
        gates = {g.execution_id: g for g in self.gates.open_gates()}
        return [
            CloudExecution(
                name=e["name"],
                arn=arn,
                status=e["status"],
                started=e["startDate"].isoformat(),
                paused_at=gates[arn].gate if arn in gates else None,
            )
            for arn, e in sorted(found.items(), key=lambda item: item[1]["startDate"])
        ]

    def find_gate(self, execution: str) -> Gate | None:
        for gate in self.gates.open_gates():
            if execution in (gate.execution_id, gate.execution_id.rsplit(":", 1)[-1]):
                return gate
        return None

    def step(self, execution: str, output: str = "{}") -> tuple[bool, str]:
        """Release the execution's paused gate. (released?, what happened)"""
        gate = self.find_gate(execution)
        if gate is None:
            return False, f"no paused gate for {execution!r} in {self.stack_name}"
        self.gates.remove(gate.execution_id, gate.gate, gate.index)
        try:
            self._sfn.send_task_success(taskToken=gate.token, output=output)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in _STALE_TOKEN:
                return False, (
                    f"{gate.execution_id}: the gate {gate.gate!r} no longer waits ({code}); "
                    "its stale row was removed"
                )
            self.gates.put(gate)  # not released: keep the gate so it can be retried
            raise
        return True, f"released {gate.gate!r} of {gate.execution_id}"


def open_stack(stack_name: str, region: str | None = None) -> CloudStack:
    import boto3

    session = boto3.session.Session(region_name=region)
    return CloudStack(
        stack_name,
        cloudformation=session.client("cloudformation"),
        stepfunctions=session.client("stepfunctions"),
        dynamodb=session.client("dynamodb"),
    )
