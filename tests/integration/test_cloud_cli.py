"""`maestro executions|step --stack/--env` against a "deployed" stack, on moto: the stack's
outputs name the state machine and the gates table; a paused gate is released with
SendTaskSuccess and its row removed."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from maestro.adapters.dynamodb_gates import DynamoGateStore
from maestro.adapters.dynamodb_ledger import DynamoLedger
from maestro.domain.ledger import LedgerRow, missing_row_id_of
from maestro.ports.workflows import Gate
from maestro.stack_outputs import OUTPUT_GATES_TABLE, OUTPUT_LEDGER_TABLE, OUTPUT_STATE_MACHINE
from maestro_dev.cli import main
from maestro_dev.cloud import CloudStack

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

PASS = json.dumps({"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": True}}})


class RecordingSfn:
    """moto's Step Functions, with SendTaskSuccess recorded (moto accepts any token)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.released: list[tuple[str, str]] = []

    def send_task_success(self, taskToken: str, output: str) -> None:  # noqa: N803
        self.released.append((taskToken, output))
        self._client.send_task_success(taskToken=taskToken, output=output)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def deployed(aws: AwsEnv) -> dict[str, Any]:
    sfn = aws.client("stepfunctions")
    machine = sfn.create_state_machine(
        name="maestro-dev-package-pipeline",
        definition=PASS,
        roleArn="arn:aws:iam::123456789012:role/x",
    )["stateMachineArn"]
    running = sfn.start_execution(stateMachineArn=machine, name="pkg-abc-1", input="{}")
    other = sfn.start_execution(stateMachineArn=machine, name="pkg-def-1", input="{}")
    gates = DynamoGateStore(aws.dynamodb, aws.table_names["gates"])
    gates.put(
        Gate(
            execution_id=running["executionArn"],
            gate="before the brain",
            token="token-abc",
            package_id="pkg-abc-1",
            paused_at=datetime.now(UTC),
        )
    )
    aws.client("cloudformation").create_stack(
        StackName="maestro-dev",
        TemplateBody=json.dumps(
            {
                "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {
                    OUTPUT_STATE_MACHINE: {"Value": machine},
                    OUTPUT_GATES_TABLE: {"Value": aws.table_names["gates"]},
                    OUTPUT_LEDGER_TABLE: {"Value": aws.table_names["ledger"]},
                },
            }
        ),
    )
    return {"aws": aws, "gates": gates, "paused": running["executionArn"], "other": other}


def test_executions_lists_the_paused_gate_with_its_console_link(deployed: dict[str, Any]) -> None:
    out = io.StringIO()
    assert main(["executions", "--env", "dev"], out) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    paused = next(line for line in lines if line.startswith("pkg-abc-1"))
    assert "paused: before the brain" in paused
    assert "console.aws.amazon.com/states/home?region=us-east-1" in paused
    assert "paused" not in next(line for line in lines if line.startswith("pkg-def-1"))


def test_step_releases_the_gate_with_send_task_success(deployed: dict[str, Any]) -> None:
    aws: AwsEnv = deployed["aws"]
    sfn = RecordingSfn(aws.client("stepfunctions"))
    stack = CloudStack(
        "maestro-dev",
        cloudformation=aws.client("cloudformation"),
        stepfunctions=sfn,
        dynamodb=aws.dynamodb,
    )
    assert stack.step("pkg-abc-1") == (True, f"released 'before the brain' of {deployed['paused']}")
    assert sfn.released == [("token-abc", "{}")]
    assert deployed["gates"].open_gates() == []
    # Nothing left to release: a second step says so and fails.
    assert stack.step("pkg-abc-1")[0] is False


def test_step_by_stack_name_through_the_command(deployed: dict[str, Any]) -> None:
    out = io.StringIO()
    assert main(["step", deployed["paused"], "--stack", "maestro-dev"], out) == 0
    assert "released 'before the brain'" in out.getvalue()
    out = io.StringIO()
    assert main(["step", "pkg-def-1", "--stack", "maestro-dev"], out) == 1
    assert "no paused gate" in out.getvalue()


def test_a_stack_without_maestro_outputs_is_refused(aws: AwsEnv) -> None:
    aws.client("cloudformation").create_stack(
        StackName="other",
        TemplateBody=json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}),
    )
    with pytest.raises(LookupError, match="not maestro's"):
        main(["executions", "--stack", "other"], io.StringIO())


def _row(package_id: str, event_id: str, wo_id: str | None, kind: str | None) -> LedgerRow:
    return LedgerRow.model_validate(
        {
            "row_id": event_id,
            "verdict": "shame" if kind else "evidence",
            "kind": kind,
            "package_id": package_id,
            "wo_id": wo_id,
            "event_type": "wo.updated" if wo_id else "decision.recorded",
            "event_id": event_id,
            "subject_id": wo_id or package_id,
            "provenance": "wo-read" if wo_id else "ddb-read",
            "detail": "read back" + (f": {kind}" if kind else " and matched"),
            "checked_at": datetime.now(UTC),
        }
    )


def test_ledger_reads_a_deployed_stacks_rows_by_package_by_wo_and_shame_only(
    deployed: dict[str, Any],
) -> None:
    aws: AwsEnv = deployed["aws"]
    ledger = DynamoLedger(aws.dynamodb, aws.table_names["ledger"])
    ledger.record(_row("pkg-a-1", "ev-1", None, None))
    ledger.record(_row("pkg-a-1", "ev-2", "WO-7", None))
    ledger.record(_row("pkg-b-1", "ev-3", "WO-7", "mismatch"))

    def run(*argv: str) -> list[dict[str, Any]]:
        out = io.StringIO()
        assert main(["ledger", "--env", "dev", "--json", *argv], out) == 0
        return [json.loads(line) for line in out.getvalue().splitlines()]

    assert {r["row_id"] for r in run()} == {"ev-1", "ev-2", "ev-3"}
    assert {r["row_id"] for r in run("--package", "pkg-a-1")} == {"ev-1", "ev-2"}
    assert {r["row_id"] for r in run("--wo", "WO-7")} == {"ev-2", "ev-3"}
    assert [(r["row_id"], r["kind"]) for r in run("--shame")] == [("ev-3", "mismatch")]
    out = io.StringIO()
    assert main(["ledger", "--env", "dev", "--wo", "WO-7"], out) == 0
    assert "SHAME mismatch" in out.getvalue()
    assert out.getvalue().splitlines()[-1] == "1 evidence, 1 shame"


def test_a_missing_event_row_its_late_event_resolved_stays_and_no_longer_counts_as_shame(
    deployed: dict[str, Any],
) -> None:
    aws: AwsEnv = deployed["aws"]
    ledger = DynamoLedger(aws.dynamodb, aws.table_names["ledger"])
    late = _row("pkg-c-1", "ev-late", "WO-9", None)
    missing = LedgerRow.model_validate(
        {
            **late.model_dump(),
            "row_id": missing_row_id_of(late),
            "verdict": "shame",
            "kind": "missing_event",
            "event_id": None,
            "detail": "no event claimed it within 600 s",
        }
    )
    ledger.record(missing)
    ledger.record(late)
    resolution = missing.resolved_by(late)
    assert resolution is not None
    assert ledger.resolve(missing, resolution)
    assert not ledger.resolve(missing, resolution)  # once
    stored = ledger.get("pkg-c-1", missing.row_id)
    assert stored is not None
    assert stored.resolution == resolution
    assert (stored.kind, stored.detail) == ("missing_event", missing.detail)  # history kept

    out = io.StringIO()
    assert main(["ledger", "--env", "dev", "--shame", "--json"], out) == 0
    assert out.getvalue() == ""
    out = io.StringIO()
    assert main(["ledger", "--env", "dev", "--package", "pkg-c-1"], out) == 0
    assert "missing_event resolved by ev-late (evidence)" in out.getvalue()
    assert (
        out.getvalue().splitlines()[-1] == "1 evidence, 0 shame (1 more resolved by a late event)"
    )
