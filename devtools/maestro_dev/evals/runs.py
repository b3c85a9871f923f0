"""Eval-run rows: one DynamoDB partition per run.

``run`` (the scenario, the mode, the status and the seeded WO versions), ``step#NNN`` (what each
step injected and which packages it produced), ``checkpoint#NNN#OO`` (a grade and its findings;
OO: its place among the checkpoints after step NNN) and ``gate#NNN#<gate>`` (a paused gate's
task token until it is released). The executor's handlers write them; ``maestro eval run`` and
the report read them back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from maestro.evals.lenses import Finding
from maestro.tables import Key, TableSpec

EVAL_RUNS = TableSpec(
    logical_name="eval_runs",
    partition=Key(name="run_id"),
    sort=Key(name="item"),
    purpose="Eval runs: the run, each step's packages, each checkpoint's grade, paused gates",
)

Mode = Literal["all", "checkpoint", "step"]


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunRow(_Row):
    run_id: str
    scenario_id: str
    title: str = ""
    mode: Mode
    status: Literal["running", "passed", "failed"] = "running"
    scenario: dict[str, Any]
    seeded_versions: dict[str, int] = Field(default_factory=dict)
    started_at: datetime
    finished_at: datetime | None = None
    error: str = ""


class StepRow(_Row):
    index: int
    kind: Literal["turn", "flush", "update", "wait", "opt_out"]
    at: datetime
    before: tuple[str, ...] = Field(default=(), description="Executions that existed before it")
    injected: dict[str, Any] = Field(default_factory=dict)
    packages: tuple[str, ...] = ()


class CheckpointRow(_Row):
    checkpoint_id: str
    after: int
    order: int = Field(
        default=0, ge=0, description="Its place among the checkpoints after the same step"
    )
    passed: bool
    reason: str
    findings: tuple[Finding, ...] = ()
    packages: tuple[str, ...] = ()
    evidence: int = Field(default=0, ge=0, description="The packages' evidence rows when graded")
    shame: tuple[dict[str, Any], ...] = Field(
        default=(), description="The packages' shame rows when graded (the report lists them)"
    )
    graded_at: datetime
    known_failure: str = Field(
        default="", description="The known bug the checkpoint is marked with ('' if none)"
    )

    @property
    def as_expected(self) -> bool:
        """Passed, or marked as a known failure and failed (a marked one that passes is not:
        the mark is stale)."""
        return self.passed != bool(self.known_failure)


class GateRow(_Row):
    run_id: str
    index: int
    gate: str
    token: str
    execution: str
    status: Literal["open", "released"] = "open"
    paused_at: datetime


class EvalRunStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self._ddb = client
        self._table = table_name

    def _put(self, run_id: str, item: str, row: BaseModel) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item={
                "run_id": {"S": run_id},
                "item": {"S": item},
                "doc": {"S": row.model_dump_json()},
            },
        )

    def _items(self, run_id: str, prefix: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "run_id = :r AND begins_with(#i, :p)",
            "ExpressionAttributeNames": {"#i": "item"},
            "ExpressionAttributeValues": {":r": {"S": run_id}, ":p": {"S": prefix}},
            "ConsistentRead": True,
        }
        while True:
            page = self._ddb.query(**kwargs)
            found.extend(json.loads(i["doc"]["S"]) for i in page["Items"])
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # -- the run --------------------------------------------------------------------------------

    def put_run(self, row: RunRow) -> None:
        self._put(row.run_id, "run", row)

    def run(self, run_id: str) -> RunRow:
        (doc,) = self._items(run_id, "run")
        return RunRow.model_validate(doc)

    # -- steps and checkpoints ------------------------------------------------------------------

    def put_step(self, run_id: str, row: StepRow) -> None:
        self._put(run_id, f"step#{row.index:03d}", row)

    def step(self, run_id: str, index: int) -> StepRow | None:
        docs = self._items(run_id, f"step#{index:03d}")
        return StepRow.model_validate(docs[0]) if docs else None

    def steps(self, run_id: str) -> list[StepRow]:
        return [StepRow.model_validate(d) for d in self._items(run_id, "step#")]

    def put_checkpoint(self, run_id: str, row: CheckpointRow) -> None:
        self._put(run_id, f"checkpoint#{row.after:03d}#{row.order:02d}", row)

    def checkpoints(self, run_id: str) -> list[CheckpointRow]:
        return [CheckpointRow.model_validate(d) for d in self._items(run_id, "checkpoint#")]

    # -- gates ----------------------------------------------------------------------------------

    @staticmethod
    def _gate_item(index: int, gate: str) -> str:
        return f"gate#{index:03d}#{gate}"

    def put_gate(self, row: GateRow) -> None:
        self._put(row.run_id, self._gate_item(row.index, row.gate), row)

    def open_gates(self, run_id: str) -> list[GateRow]:
        gates = [GateRow.model_validate(d) for d in self._items(run_id, "gate#")]
        return [g for g in gates if g.status == "open"]

    def released(self, gate: GateRow) -> None:
        self.put_gate(gate.model_copy(update={"status": "released"}))

    def export(self, run_id: str) -> dict[str, Any]:
        """Every row of the run, as JSON (what the report reads)."""
        return {
            "run": json.loads(self.run(run_id).model_dump_json()),
            "steps": [json.loads(s.model_dump_json()) for s in self.steps(run_id)],
            "checkpoints": [json.loads(c.model_dump_json()) for c in self.checkpoints(run_id)],
        }
