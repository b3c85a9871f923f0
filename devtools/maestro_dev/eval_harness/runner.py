"""Run scenarios through the eval executor state machine on the embedded stack.

One fresh stack per scenario (its own world, virtual clock and, when the scenario scripts one,
model). The executor's ASL runs on moto's Step Functions like the pipeline's; this driver
starts it, releases gates as the mode asks (through ``on_gate``: an interactive prompt in
``maestro eval run``, a callback in tests), and reads the result back from the eval-run rows.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from maestro_dev.eval_harness.executor import (
    HANDLERS,
    EvalExecutor,
    fallback_phone,
    new_control,
    new_run,
    start_of,
)
from maestro_dev.eval_harness.lenses import Finding
from maestro_dev.eval_harness.model import scripted_model
from maestro_dev.eval_harness.runs import EVAL_RUNS, EvalRunStore, GateRow, Mode
from maestro_dev.eval_harness.scenario import Scenario
from maestro_dev.local.stack import ACCOUNT, PREFIX, ROOT, LocalStack, function_arn, substitute

EVAL_ASL_PATH = ROOT / "statemachines" / "eval_executor.asl.json"
RUN_TIMEOUT_SECONDS = 600.0


def eval_substitutions() -> dict[str, str]:
    """Every ``${Placeholder}`` of the eval executor's ASL and its value on the local stack."""
    names = {
        "eval_setup": "EvalSetupFunctionArn",
        "eval_gate": "EvalGateFunctionArn",
        "eval_inject": "EvalInjectFunctionArn",
        "eval_settle": "EvalSettleFunctionArn",
        "eval_grade": "EvalGradeFunctionArn",
        "eval_finish": "EvalFinishFunctionArn",
    }
    assert set(names) == set(HANDLERS)
    return {placeholder: function_arn(step) for step, placeholder in names.items()}


class CheckpointResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    passed: bool
    reason: str
    findings: tuple[Finding, ...] = ()
    packages: tuple[str, ...] = ()
    known_failure: str = Field(default="", description="The known bug it is marked with")

    @property
    def as_expected(self) -> bool:
        """Passed, or a known failure that failed."""
        return self.passed != bool(self.known_failure)


class ScenarioResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str = ""
    naive_failure: str = ""
    passed: bool
    checkpoints: tuple[CheckpointResult, ...] = ()
    error: str = ""
    run_id: str = ""
    execution_status: str = ""
    gates_released: tuple[str, ...] = ()
    rows: dict[str, Any] = Field(default_factory=dict, description="The run's eval-run rows")
    wall_seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` shape of one scenario."""
        return {
            "id": self.id,
            "passed": self.passed,
            "checkpoints": [
                {"id": c.id, "passed": c.passed, "reason": c.reason}
                | ({"known_failure": c.known_failure} if c.known_failure else {})
                for c in self.checkpoints
            ],
        }


@dataclass(frozen=True)
class PausedGate:
    """A gate the run is paused at: the executor's own, or (step mode) a package's."""

    scenario_id: str
    run_id: str
    kind: str  # "eval" or "package"
    gate: str
    step: int | None
    detail: str


GateHandler = Callable[[PausedGate], None]
"""Called once for each paused gate; when it returns, the gate is released."""


def eval_stack(scenario: Scenario, *, step_mode: bool = False) -> LocalStack:
    """The fresh embedded stack a scenario runs on (its clock, its model); enter it with
    ``with``. `maestro eval run` and the console build it here alike."""
    model = scripted_model(scenario.model) if scenario.model is not None else None
    offline = scenario.model.offline if scenario.model is not None else ()
    return LocalStack(
        start=start_of(scenario),
        model=model,
        step_mode=step_mode,
        offline_purposes=offline,
        settings={"on_call_pm_phone": fallback_phone(scenario.world)},
    )


@dataclass(frozen=True)
class StartedRun:
    """An eval run started on a stack: its rows' store, its id and the executor's execution."""

    store: EvalRunStore
    run_id: str
    execution_arn: str


def start_run(
    stack: LocalStack, scenario: Scenario, mode: Mode, run_id: str | None = None
) -> StartedRun:
    """Create the eval-runs table and the executor's machine on the stack, record the run and
    its control row, and start the execution (named by the run id)."""
    table = PREFIX + EVAL_RUNS.logical_name
    stack.ddb.create_table(**EVAL_RUNS.create_table_kwargs(table))
    store = EvalRunStore(stack.ddb, table)
    executor = EvalExecutor(stack, store, scenario)
    stack.handlers.update(executor.handlers())
    machine = stack.sfn.create_state_machine(
        name=PREFIX + "eval-executor",
        definition=substitute(EVAL_ASL_PATH.read_text(), eval_substitutions()),
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/maestro-local",
    )["stateMachineArn"]
    run_id = run_id or f"{scenario.id}-{uuid.uuid4().hex[:8]}"
    store.put_run(new_run(scenario, mode, run_id, stack.clock.now()))
    store.put_control(new_control(run_id, mode, stack.clock.now()))
    arn = stack.sfn.start_execution(
        stateMachineArn=machine,
        name=run_id,
        input=json.dumps({"run_id": run_id, "mode": mode}),
    )["executionArn"]
    return StartedRun(store=store, run_id=run_id, execution_arn=str(arn))


def run_scenario(
    scenario: Scenario,
    mode: Mode = "all",
    on_gate: GateHandler | None = None,
    *,
    stack_hook: Callable[[LocalStack], None] | None = None,
) -> ScenarioResult:
    started = time.perf_counter()
    with eval_stack(scenario, step_mode=mode == "step") as stack:
        if stack_hook is not None:
            stack_hook(stack)
        started_run = start_run(stack, scenario, mode)
        store, run_id, arn = started_run.store, started_run.run_id, started_run.execution_arn
        released = _drive(stack, store, scenario, run_id, arn, on_gate)
        status = stack.sfn.describe_execution(executionArn=arn)["status"]
        run = store.run(run_id)
        rows = store.export(run_id)
        graded = {c.checkpoint_id: c for c in store.checkpoints(run_id)}
    checkpoints = []
    for checkpoint in scenario.checkpoints:
        row = graded.get(checkpoint.id)
        if row is None:
            why = f"never graded ({run.error})" if run.error else "never graded"
            checkpoints.append(CheckpointResult(id=checkpoint.id, passed=False, reason=why))
        else:
            checkpoints.append(
                CheckpointResult(
                    id=row.checkpoint_id,
                    passed=row.passed,
                    reason=row.reason,
                    findings=row.findings,
                    packages=row.packages,
                    known_failure=row.known_failure,
                )
            )
    return ScenarioResult(
        id=scenario.id,
        title=scenario.title,
        naive_failure=scenario.naive_failure,
        # Passed only as the run's rows say it, and only if every checkpoint was graded so (a
        # known failure failing, as marked).
        passed=run.status == "passed" and all(c.as_expected for c in checkpoints),
        checkpoints=tuple(checkpoints),
        error=run.error,
        run_id=run_id,
        execution_status=status,
        gates_released=tuple(released),
        rows=rows,
        wall_seconds=round(time.perf_counter() - started, 3),
    )


def _drive(
    stack: LocalStack,
    store: EvalRunStore,
    scenario: Scenario,
    run_id: str,
    arn: str,
    on_gate: GateHandler | None,
) -> list[str]:
    """Wait for the run to end, releasing every gate it (or, in step mode, a package) pauses
    at, each after ``on_gate`` returns."""
    released: list[str] = []
    deadline = time.monotonic() + RUN_TIMEOUT_SECONDS
    while True:
        seen = stack.progress()
        if stack.sfn.describe_execution(executionArn=arn)["status"] != "RUNNING":
            return released
        if time.monotonic() > deadline:
            stack.sfn.stop_execution(executionArn=arn, cause="the eval run timed out")
            raise TimeoutError(f"{scenario.id}: the eval run did not finish")
        for gate in store.open_gates(run_id):
            paused = PausedGate(
                scenario_id=scenario.id,
                run_id=run_id,
                kind="eval",
                gate=gate.gate,
                step=gate.index,
                detail=_step_line(scenario, gate.index),
            )
            if on_gate is not None:
                on_gate(paused)
            _release_eval_gate(stack, store, gate)
            released.append(f"step {gate.index}: {gate.gate}")
        running = {e["executionArn"] for e in stack.running_executions()}
        for package_gate in stack.pipeline.deps.gates.open_gates():
            if package_gate.execution_id not in running:
                continue
            paused = PausedGate(
                scenario_id=scenario.id,
                run_id=run_id,
                kind="package",
                gate=package_gate.gate,
                step=None,
                detail=f"package {package_gate.package_id}",
            )
            if on_gate is not None:
                on_gate(paused)
            stack.release_gate(package_gate)
            released.append(f"package {package_gate.package_id}: {package_gate.gate}")
        # Until something moves (a history event, a Lambda return, an execution's end): every
        # gate row is written by a Lambda task, so its return wakes this loop. The cap only
        # bounds the cost of a move nothing signals, if one were ever added.
        stack.wait_for_progress(seen, timeout=min(1.0, max(0.0, deadline - time.monotonic())))


def _step_line(scenario: Scenario, index: int) -> str:
    step = scenario.turns[index]
    text = getattr(step, "text", None)
    if text is not None:
        return f"{getattr(step, 'from_', '?')}: {text}"
    return f"flush: {getattr(step, 'flush', '?')}"


def release_eval_gate(stack: LocalStack, store: EvalRunStore, gate: GateRow) -> None:
    """Release one of the executor's gates (SendTaskSuccess), once it waits for its token."""
    _release_eval_gate(stack, store, gate)


def _release_eval_gate(stack: LocalStack, store: EvalRunStore, gate: GateRow) -> None:
    stack.wait_until_waiting(gate.execution, "Gate:")
    store.released(gate)
    stack.sfn.send_task_success(taskToken=gate.token, output="{}")


def run_scenarios(
    scenarios: Sequence[Scenario], mode: Mode = "all", on_gate: GateHandler | None = None
) -> list[ScenarioResult]:
    return [run_scenario(s, mode, on_gate) for s in scenarios]


def summary(results: Sequence[ScenarioResult]) -> dict[str, Any]:
    """The ``maestro eval run --json`` object."""
    return {
        "passed": bool(results) and all(r.passed for r in results),
        "scenarios": [r.as_json() for r in results],
    }


def save_runs(results: Sequence[ScenarioResult], directory: Path) -> Path:
    """Write the runs' rows (for ``maestro eval report``); the file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    path = directory / f"eval-run-{stamp}-{uuid.uuid4().hex[:6]}.json"
    path.write_text(
        json.dumps({"results": [json.loads(r.model_dump_json()) for r in results]}, indent=1)
    )
    return path
