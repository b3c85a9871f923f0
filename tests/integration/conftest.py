"""Integration fixtures: moto's in-memory AWS, with maestro's tables built from their specs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from maestro.tables import ALL_TABLES
from maestro_dev.local.sdk_models import one_sdk_loader

REGION = "us-east-1"
TABLE_PREFIX = "maestro-test-"


@dataclass(frozen=True)
class AwsEnv:
    """What a test gets from ``aws``: the region, a DynamoDB client, tables by logical name."""

    region: str
    dynamodb: Any
    table_names: dict[str, str]

    def client(self, service: str) -> Any:
        """Another boto3 client inside the same mock (sqs, events, stepfunctions…)."""
        return boto3.client(service, region_name=self.region)  # type: ignore[call-overload]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    """moto's mock of every AWS service, with fake credentials so nothing can reach real AWS."""
    with mocked_aws(monkeypatch) as env:
        yield env


@pytest.fixture(scope="module")
def aws_module() -> Iterator[AwsEnv]:
    """``aws`` shared by one module's tests: for a corpus of many small cases."""
    with pytest.MonkeyPatch.context() as monkeypatch, mocked_aws(monkeypatch) as env:
        yield env


@contextmanager
def mocked_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    """What ``aws`` gives, for a fixture of a wider scope (with its own MonkeyPatch)."""
    for name, value in {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    # A developer's profile must not leak into the tests.
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws(), one_sdk_loader():  # the SDK's models parsed once a process
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        table_names: dict[str, str] = {}
        for spec in ALL_TABLES:
            name = f"{TABLE_PREFIX}{spec.logical_name}"
            dynamodb.create_table(**spec.create_table_kwargs(name))
            if spec.ttl_attribute:
                dynamodb.update_time_to_live(
                    TableName=name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
                )
            table_names[spec.logical_name] = name
        yield AwsEnv(region=REGION, dynamodb=dynamodb, table_names=table_names)
