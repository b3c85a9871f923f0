"""The fault matrix (#11, item 5): each fault × stage cell on the embedded stack loses no
message, duplicates no effect and leaves no package without a recorded decision, and ends in
the outcome pinned here.

A cell aims one fault at one stage (``maestro_dev.local.faults``): DynamoDB throttling, lost
answers (a conditional write that applied and is retried) and outages on every repository call
of the stage, at the AWS wire, so botocore's retries, the adapters, the state machine's Retry
and Catch and the SQS redrive decide; a Lambda crash before its handler runs and after it
returned; every SQS message (and every inbound webhook) delivered again; model failures and
answers outside the vocabulary; Twilio 5xx, lost answers, timeouts and outages; EventBridge put
failures. Then it reads the stores back (``Census``): the executions' inputs and the buffer, the
decision log, the WO store and timelines, Twilio's own messages, the ledger; never a step's
return value. Its effects are compared with the same scenario without a fault.

``make faults`` prints the matrix (``benchmarks/fault_matrix.py``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from fault_outcomes import EXPECTED, check

from maestro.adapters.stepfunctions import StepFunctionsStarter
from maestro.adapters.twilio_sms import TwilioMessenger
from maestro.domain.ledger import missing_row_id_of
from maestro_dev.local.fault_matrix import (
    CELLS,
    FAULTS,
    STAGES,
    Cell,
    CellResult,
    Matrix,
)
from maestro_dev.local.faults import Crash

pytestmark = pytest.mark.integration

# Cells that show a defect fixed in a later commit of this branch.
KNOWN: dict[str, str] = {}


def _params() -> list[Any]:
    params = []
    for cell in CELLS:
        marks = [pytest.mark.xfail(reason=KNOWN[cell.id], strict=True)] if cell.id in KNOWN else []
        params.append(pytest.param(cell, id=cell.id, marks=marks))
    return params


@pytest.fixture(scope="module")
def matrix() -> Iterator[Matrix]:
    with Matrix() as shared:
        yield shared


def test_every_cell_has_a_pinned_outcome() -> None:
    pinned = {(fault, stage) for fault, row in EXPECTED.items() for stage in row}
    cells = {(cell.fault, stage) for cell in CELLS for stage in cell.stages}
    assert cells == pinned
    assert set(EXPECTED) == set(FAULTS)
    assert {stage for _, stage in cells} == set(STAGES)  # every stage is in the matrix


@pytest.mark.parametrize("cell", _params())
def test_a_fault_loses_nothing_duplicates_nothing_and_leaves_a_decision(
    matrix: Matrix, cell: Cell
) -> None:
    check(matrix.run(cell))


# -- the checks bite: with a guard off, the census finds what it guards against ----------------


def _cell(fault: str, stage: str) -> Cell:
    return next(c for c in CELLS if c.fault == fault and stage in c.stages)


def _only(cell: Cell, stage: str) -> Cell:
    return Cell(cell.fault, (stage,), cell.scenario)


def _violations(result: CellResult) -> str:
    return "\n".join(result.violations)


def test_claims_that_waited_in_the_dlq_keep_their_missing_event_rows_resolved(
    matrix: Matrix,
) -> None:
    """The watcher's outage outlasts the SQS redrive: the sweeper writes missing_event for each
    claim meanwhile; once the DLQ is redriven, each event's Evidence resolves its row, which
    stays (history) and no longer stands."""
    result = matrix.run(_cell("ddb-outage-long", "watcher"))
    ledger = matrix.stack.ledger
    rows = [r for p in result.census.packages for r in ledger.for_package(p.package_id)]
    missing = [r for r in rows if r.kind == "missing_event"]
    assert sorted({r.event_type for r in missing}) == [
        "decision.recorded",
        "message.sent",
        "wo.created",
        "wo.updated",
    ]
    by_id = {r.row_id: r for r in rows}
    for row in missing:
        assert row.resolution is not None, row.row_id
        assert row.resolution.verdict == "evidence"
        assert missing_row_id_of(by_id[row.resolution.row_id]) == row.row_id
    assert [r.row_id for r in rows if r.standing_shame] == []


IDEMPOTENCY_OFF = pytest.mark.filterwarnings("ignore:Disabling idempotency")


@IDEMPOTENCY_OFF
def test_without_the_send_guards_a_re_run_act_texts_twice_and_the_census_says_so(
    matrix: Matrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_IDEMPOTENCY_DISABLED", "true")  # act re-runs its lane
    monkeypatch.setattr(TwilioMessenger, "_claim", lambda *_args, **_kwargs: None)
    result = matrix.run(_only(_cell("crash-after", "act"), "act"))
    assert "duplicated: texts to the tenant" in _violations(result)


@IDEMPOTENCY_OFF
def test_without_deterministic_ids_a_re_run_act_opens_a_second_wo_and_the_census_says_so(
    matrix: Matrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_IDEMPOTENCY_DISABLED", "true")
    monkeypatch.setattr(
        "maestro.lanes.create_wo.wo_id_for", lambda *_args: f"WO-{random.randrange(16**8):08X}"
    )
    result = matrix.run(_only(_cell("crash-after", "act"), "act"))
    assert "duplicated: work orders" in _violations(result)


def test_a_package_never_started_is_a_lost_message(
    matrix: Matrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(StepFunctionsStarter, "start", lambda *_args: True)
    result = matrix.run(Cell("none", ("flusher",), "repair"))
    assert result.census.lost == list(result.census.inbound)
    assert "lost: " in _violations(result)


def test_a_package_whose_fail_open_never_completes_is_undecided(matrix: Matrix) -> None:
    forever = Crash("fail_open", "before", times=99, error_type="ValueError")
    result = matrix.run(
        Cell("none", ("fail_open",), "failing"), lambda: matrix.stages.crash(forever)
    )
    assert result.census.undecided
    assert "no recorded decision" in _violations(result)


def test_a_flush_that_claims_nothing_packages_its_messages_twice(
    matrix: Matrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Naive: a claim that does not move ``flushed_through``: the max-wait signal flushes the
    same messages again."""
    buffer = matrix.stack.buffer
    real = buffer.claim_flush

    def forgetful(seen: Any, *args: Any, **kwargs: Any) -> Any:
        claim = real(seen, *args, **kwargs)
        if claim is not None:
            matrix.stack.ddb.update_item(
                TableName=matrix.stack.tables["conversations"],
                Key={"conversation_id": {"S": seen.conversation_id}, "item": {"S": "meta"}},
                UpdateExpression="SET flushed_through = :n, first_unflushed_at = :at",
                ExpressionAttributeValues={
                    ":n": {"N": str(seen.flushed_through)},
                    ":at": {"S": seen.first_unflushed_at.isoformat()},
                },
            )
        return claim

    monkeypatch.setattr(buffer, "claim_flush", forgetful)
    result = matrix.run(Cell("none", ("flusher",), "repair"))
    assert result.census.packaged_twice
    assert "in 2 packages" in _violations(result)
