"""`maestro directory erase --env` against a "deployed" stack, on moto: the stack's outputs name
every table; the CLI erases with the operator's credentials, as on `maestro serve`."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import pytest

from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.domain.directory import Person, PersonRole
from maestro.domain.models import Party, PartyRole
from maestro.stack_outputs import OUTPUT_GATES_TABLE, OUTPUT_STATE_MACHINE, table_output
from maestro.tables import ALL_TABLES
from maestro_dev.cli import main

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

PHONE = "+14155550131"
INES = Person(
    person_id="tenant-ines", role=PersonRole.TENANT, name="Ines", phones=(PHONE,), unit_id="2A"
)


def _deploy(aws: AwsEnv, tables: list[str]) -> None:
    outputs: dict[str, Any] = {
        OUTPUT_STATE_MACHINE: {"Value": "arn:aws:states:us-east-1:123456789012:stateMachine:x"},
        OUTPUT_GATES_TABLE: {"Value": aws.table_names["gates"]},
    }
    outputs |= {table_output(name): {"Value": aws.table_names[name]} for name in tables}
    aws.client("cloudformation").create_stack(
        StackName="maestro-dev",
        TemplateBody=json.dumps(
            {"Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs}
        ),
    )


def _everything(aws: AwsEnv) -> str:
    return json.dumps(
        [aws.dynamodb.scan(TableName=name)["Items"] for name in aws.table_names.values()]
    )


def test_erase_on_a_deployed_stack_by_id(aws: AwsEnv) -> None:
    _deploy(aws, [spec.logical_name for spec in ALL_TABLES])
    DynamoDirectory(aws.dynamodb, aws.table_names["directory"]).put(INES)
    DynamoPartyDirectory(aws.dynamodb, aws.table_names["parties"]).put(
        Party(party_id=INES.person_id, role=PartyRole.TENANT, phone=PHONE, unit="2A")
    )
    aws.dynamodb.put_item(
        TableName=aws.table_names["sends"],
        Item={
            "idempotency_key": {"S": "pkg-9-1#0#tenant"},
            "to": {"S": PHONE},
            "body": {"S": "Thanks Ines, a plumber comes tomorrow"},
        },
    )
    assert PHONE in _everything(aws)

    out = io.StringIO()
    assert main(["directory", "erase", INES.person_id, "--env", "dev"], out) == 0
    assert out.getvalue().startswith("erased tenant-ines (tenant-ines)")
    assert PHONE not in _everything(aws)
    assert "Ines, a plumber" not in _everything(aws)


def test_a_stack_without_every_table_output_erases_nothing(aws: AwsEnv) -> None:
    _deploy(aws, [s.logical_name for s in ALL_TABLES if s.logical_name != "ledger"])
    DynamoPartyDirectory(aws.dynamodb, aws.table_names["parties"]).put(
        Party(party_id=INES.person_id, role=PartyRole.TENANT, phone=PHONE, unit="2A")
    )
    out = io.StringIO()
    assert main(["directory", "erase", PHONE, "--env", "dev"], out) == 1
    assert out.getvalue().strip() == "stack maestro-dev names no table for ledger: nothing erased"
    assert PHONE in _everything(aws)
