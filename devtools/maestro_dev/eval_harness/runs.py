"""Eval-run rows: one DynamoDB partition per run.

``run`` (the scenario, the mode it started in, the status and the seeded WO versions),
``control`` (how the run goes on from here: its mode, a pause, a step's target; the console's
API changes it while the run runs), ``step#NNN`` (what each step injected and which packages it
produced), ``checkpoint#NNN#OO`` (a grade and its findings; OO: its place among the checkpoints
after step NNN) and ``gate#NNN#<gate>`` (a paused gate's task token until it is released). The
executor's handlers write them; ``maestro eval run``, the console and the report read them back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from maestro.adapters.ddb import query_all
from maestro.tables import Key, TableSpec
from maestro_dev.eval_harness.lenses import Finding

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


class ControlRow(_Row):
    """How the run goes on: read by the executor's gate at every step (before it, and after its
    checkpoint), so a change here takes effect at the next step boundary (within one package).

    - ``mode``: all (never hold), checkpoint (hold after each checkpoint), step (hold before
      every step and after each checkpoint);
    - ``paused``: hold at the next gate whatever the mode;
    - ``step_until``: a console step: hold as soon as the run has produced this many packages
      (the mode's own holds wait meanwhile), so one step advances one package.
    """

    run_id: str
    mode: Mode
    paused: bool = False
    step_until: int | None = Field(default=None, ge=0)
    changed_at: datetime


def should_hold(control: ControlRow, gate: str, packages_so_far: int) -> bool:
    """Whether the run holds at this gate (``packages_so_far``: what its settled steps produced)."""
    if control.paused:
        return True
    if control.step_until is not None:
        return packages_so_far >= control.step_until
    if control.mode == "step":
        return True
    return control.mode == "checkpoint" and gate == "after the checkpoint"


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


class RunRows(BaseModel):
    model_config = ConfigDict(frozen=True)

    run: RunRow
    control: ControlRow
    steps: list[StepRow]
    checkpoints: list[CheckpointRow]
    gates: list[GateRow]


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
        return list(self._keyed(run_id, prefix).values())

    def _keyed(self, run_id: str, prefix: str) -> dict[str, dict[str, Any]]:
        """The run's rows whose item starts with ``prefix`` ('' : all of them), by item."""
        found: dict[str, dict[str, Any]] = {}
        condition = "run_id = :r"
        values: dict[str, Any] = {":r": {"S": run_id}}
        names: dict[str, str] = {}
        if prefix:  # DynamoDB refuses an empty key value, even for begins_with
            condition += " AND begins_with(#i, :p)"
            values[":p"] = {"S": prefix}
            names["#i"] = "item"
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if names:
            kwargs["ExpressionAttributeNames"] = names
        found.update(
            (i["item"]["S"], json.loads(i["doc"]["S"])) for i in query_all(self._ddb, **kwargs)
        )
        return found

    def rows(self, run_id: str) -> RunRows:
        """Every row of the run in one consistent query (what a watcher reads at each look)."""
        docs = self._keyed(run_id, "")
        run = RunRow.model_validate(docs["run"])
        control = docs.get("control")
        return RunRows(
            run=run,
            control=ControlRow.model_validate(control)
            if control
            else ControlRow(run_id=run_id, mode=run.mode, changed_at=run.started_at),
            steps=[StepRow.model_validate(d) for k, d in docs.items() if k.startswith("step#")],
            checkpoints=[
                CheckpointRow.model_validate(d)
                for k, d in docs.items()
                if k.startswith("checkpoint#")
            ],
            gates=[GateRow.model_validate(d) for k, d in docs.items() if k.startswith("gate#")],
        )

    # -- the run --------------------------------------------------------------------------------

    def put_run(self, row: RunRow) -> None:
        self._put(row.run_id, "run", row)

    def run(self, run_id: str) -> RunRow:
        (doc,) = self._items(run_id, "run")
        return RunRow.model_validate(doc)

    # -- the control -----------------------------------------------------------------------------

    def put_control(self, row: ControlRow) -> None:
        self._put(row.run_id, "control", row)

    def control(self, run_id: str) -> ControlRow:
        """The run's control; a run recorded before controls existed goes on in its own mode."""
        docs = self._items(run_id, "control")
        if docs:
            return ControlRow.model_validate(docs[0])
        run = self.run(run_id)
        return ControlRow(run_id=run_id, mode=run.mode, changed_at=run.started_at)

    def packages_so_far(self, run_id: str, through: int | None = None) -> int:
        """How many packages the run's settled steps produced (up to step ``through``)."""
        return sum(
            len(s.packages) for s in self.steps(run_id) if through is None or s.index <= through
        )

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
        return [g for g in self.gates(run_id) if g.status == "open"]

    def released(self, gate: GateRow) -> None:
        self.put_gate(gate.model_copy(update={"status": "released"}))

    def gates(self, run_id: str) -> list[GateRow]:
        """Every gate the run paused at, open or released."""
        return [GateRow.model_validate(d) for d in self._items(run_id, "gate#")]

    def export(self, run_id: str) -> dict[str, Any]:
        """Every row of the run, as JSON (what the report reads)."""
        return {
            "run": json.loads(self.run(run_id).model_dump_json()),
            "control": json.loads(self.control(run_id).model_dump_json()),
            "steps": [json.loads(s.model_dump_json()) for s in self.steps(run_id)],
            "checkpoints": [json.loads(c.model_dump_json()) for c in self.checkpoints(run_id)],
        }
