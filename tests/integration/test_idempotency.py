"""The act step's idempotency store (#17): a lost answer on Powertools' in-progress put is this
run's own write, not another run's; a second run while the first is in progress is refused.

The fault is the fault matrix's (``maestro_dev.local.faults.Wire``): the put reaches moto, its
answer is lost (a 500), and botocore's own retry sends it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
)

from maestro.adapters.idempotency import OWNER_ATTRIBUTE, OwnedDynamoDBPersistenceLayer
from maestro_dev.local.faults import Wire, WireCall, WireError
from maestro_dev.local.stack import FakeLambdaContext

if TYPE_CHECKING:  # conftest is not importable at run time (pytest's importlib mode)
    from conftest import AwsEnv

pytestmark = pytest.mark.integration

Act = Callable[..., dict[str, Any]]


def _puts(call: WireCall) -> bool:
    return call.operation == "PutItem" and call.targets[0].endswith("idempotency")


def _idempotent(aws: AwsEnv, work: Callable[[str], dict[str, Any]]) -> Act:
    """``work`` behind the idempotency utility as the act step has it (key: the item's key)."""
    persistence = OwnedDynamoDBPersistenceLayer(aws.table_names["idempotency"], aws.dynamodb)
    config = IdempotencyConfig(event_key_jmespath="key", raise_on_no_idempotency_key=True)
    config.register_lambda_context(FakeLambdaContext("maestro-act", "request-1"))

    @idempotent_function(data_keyword_argument="item", persistence_store=persistence, config=config)  # type: ignore[untyped-decorator]
    def act(item: dict[str, Any]) -> dict[str, Any]:
        return work(item["key"])

    return act  # type: ignore[no-any-return]


def test_a_lost_answer_on_the_in_progress_put_is_the_runs_own_write(aws: AwsEnv) -> None:
    runs: list[str] = []
    with Wire() as wire:
        lost = wire.add(WireError("InternalServerError", 500, _puts, applied=True))
        act = _idempotent(aws, lambda key: runs.append(key) or {"texted": key})
        assert act(item={"key": "pkg-lost#0"}) == {"texted": "pkg-lost#0"}
        assert lost.injected == 1  # the put applied, its answer was lost, the SDK sent it again
        # Done once: a later run (a Step Functions retry) gets the stored answer.
        assert act(item={"key": "pkg-lost#0"}) == {"texted": "pkg-lost#0"}
    assert runs == ["pkg-lost#0"]
    item = aws.dynamodb.scan(TableName=aws.table_names["idempotency"])["Items"][0]
    assert item["status"] == {"S": "COMPLETED"}
    assert OWNER_ATTRIBUTE in item


@pytest.mark.parametrize("second_put_answer_lost", [False, True])
def test_a_second_run_while_the_first_is_in_progress_is_refused(
    aws: AwsEnv, second_put_answer_lost: bool
) -> None:
    """The second run's put fails its condition against the first run's record (another owner),
    also when its own answer is lost and the SDK sends it again."""
    refused: list[str] = []
    runs: list[str] = []
    with Wire() as wire:

        def work(key: str) -> dict[str, Any]:
            runs.append(key)
            if second_put_answer_lost:
                wire.add(WireError("InternalServerError", 500, _puts, applied=True))
            try:
                act(item={"key": key})  # the same action, run again while this run is on
            except IdempotencyAlreadyInProgressError:
                refused.append(key)
            wire.clear()
            return {"texted": key}

        act = _idempotent(aws, work)
        assert act(item={"key": "pkg-twice#0"}) == {"texted": "pkg-twice#0"}
        assert len(wire.injected()) == int(second_put_answer_lost)
    assert runs == ["pkg-twice#0"]
    assert refused == ["pkg-twice#0"]
