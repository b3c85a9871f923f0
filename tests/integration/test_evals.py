"""The golden scenarios through the eval executor on the embedded stack (issue #8).

Every scenario of ``evals/scenarios/`` must pass offline; for each guarding mechanism, its
scenario must *fail* when the mechanism is switched off (a scenario that passes either way
proves nothing); step mode pauses at every gate until it is released; and ``maestro eval run
--json`` prints what the issue specifies and exits non-zero on a failed checkpoint.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import maestro.brain.offline as offline
from maestro.domain.dispose import trail_of
from maestro.domain.models import OpenContext, conversation_id_for
from maestro.domain.revalidate import Check, Revalidation, Target
from maestro_dev.cli import main
from maestro_dev.eval_harness import runner
from maestro_dev.eval_harness.executor import EvalExecutor, new_run, start_of
from maestro_dev.eval_harness.loader import SCENARIOS, load_scenario, load_scenarios
from maestro_dev.eval_harness.model import scripted_model
from maestro_dev.eval_harness.runner import (
    EVAL_ASL_PATH,
    PausedGate,
    ScenarioResult,
    eval_substitutions,
    run_scenario,
)
from maestro_dev.eval_harness.runs import EVAL_RUNS, EvalRunStore
from maestro_dev.eval_harness.scenario import ModelScript, OptOutStep, UpdateStep, WaitStep
from maestro_dev.local.stack import PREFIX, LocalStack
from maestro_dev.scripted import ScriptedModel

pytestmark = pytest.mark.integration

GOLDEN = sorted(SCENARIOS.glob("*.yaml"))


@pytest.fixture(autouse=True)
def _quiet_moto() -> Iterator[None]:
    logger = logging.getLogger("moto")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # its ASL interpreter logs every caught error
    yield
    logger.setLevel(level)


def explain(result: ScenarioResult) -> str:
    lines = [f"{result.id}: {result.error or 'failed'}"]
    for checkpoint in result.checkpoints:
        lines.append(f"  {checkpoint.id}: {'ok' if checkpoint.passed else checkpoint.reason}")
    return "\n".join(lines)


def failed_checkpoints(result: ScenarioResult) -> list[str]:
    return [c.id for c in result.checkpoints if not c.passed]


def test_there_are_at_least_twelve_golden_scenarios_each_naming_its_naive_failure() -> None:
    scenarios = load_scenarios(SCENARIOS)
    assert len(scenarios) >= 12
    assert all(len(s.naive_failure.split()) >= 5 for s in scenarios)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_golden_scenario_passes_offline(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = load_scenario(path)
    models: list[ScriptedModel] = []

    def kept(script: ModelScript) -> ScriptedModel:
        models.append(scripted_model(script))
        return models[-1]

    monkeypatch.setattr(runner, "scripted_model", kept)
    result = run_scenario(scenario)
    assert result.passed, explain(result)
    assert result.execution_status == "SUCCEEDED"
    # A purpose the script sends offline never reaches the model; the others do.
    if scenario.model is not None and scenario.model.offline:
        (model,) = models
        called = {c.purpose for c in model.calls}
        assert called, "the scripted purposes reach the model"
        assert not called & set(scenario.model.offline), called
    # Graded from rows the run stored, every checkpoint with the packages it covered (none only
    # after steps that send nothing: waits, what falls due then is a WO execution's, read from
    # its ledger rows; updates made outside the conversation; opt-outs; or where it expects none).
    assert [c["checkpoint_id"] for c in result.rows["checkpoints"]] == [
        c.id for c in scenario.checkpoints
    ]
    silent: set[str] = set()
    covered_from = 0
    for checkpoint in scenario.checkpoints:
        if checkpoint.after >= covered_from:  # several after one step cover the same steps
            steps = scenario.turns[covered_from : checkpoint.after + 1]
            covered_from = checkpoint.after + 1
        if checkpoint.expect.packages == 0 or all(
            isinstance(step, WaitStep | UpdateStep | OptOutStep) for step in steps
        ):
            silent.add(checkpoint.id)
    assert all(c.packages for c in result.checkpoints if c.findings and c.id not in silent)


def test_the_executor_asl_substitutes_every_placeholder_and_reaches_every_state() -> None:
    text = EVAL_ASL_PATH.read_text()
    assert set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text)) == set(eval_substitutions())
    asl = json.loads(text)

    def nexts(state: dict[str, Any]) -> set[str]:
        found = {state[k] for k in ("Next", "Default") if k in state}
        found |= {c["Next"] for c in state.get("Choices", []) + state.get("Catch", [])}
        return found

    def check(machine: dict[str, Any]) -> None:
        states = machine["States"]
        targets = {machine["StartAt"]}
        for state in states.values():
            targets |= nexts(state)
            if state["Type"] == "Map":
                assert state["MaxConcurrency"] == 1  # steps in order, never overlapping
                check(state["ItemProcessor"])
        assert targets == set(states)

    check(asl)


# -- each mechanism off: its scenario fails -----------------------------------------------------


def test_a_naive_binder_fails_two_leaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The naive binder of seed 000: of the contexts the words fit, the most recent wins."""
    refer = offline._refer

    def most_recent(text: str, contexts: Sequence[OpenContext]) -> offline._Reference:
        found = refer(text, contexts)
        fits = found.named or found.hinted
        latest = sorted(fits, key=lambda c: c.last_activity_at or c.opened_at)[-1:]
        return dataclasses.replace(found, named=tuple(latest))

    monkeypatch.setattr(offline, "_refer", most_recent)
    result = run_scenario(load_scenario(SCENARIOS / "two-leaks-clarify.yaml"))
    assert not result.passed
    assert "asked-which" in failed_checkpoints(result)


def test_with_the_floor_off_long_then_gas_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import maestro.brain.precheck as precheck
    import maestro.brain.probe as probe
    import maestro.ingest.service as ingest

    for module in (precheck, probe, ingest):
        monkeypatch.setattr(module, "safety_floor", lambda *_a, **_k: None)
    result = run_scenario(load_scenario(SCENARIOS / "long-then-gas.yaml"))
    assert not result.passed
    assert failed_checkpoints(result) == ["escalated-at-once"]


def _blind(targets: Sequence[Target], *_args: Any, **_kwargs: Any) -> Revalidation:
    checks = tuple(Check(wo_id=t.wo_id, outcome="valid", why="not checked") for t in targets)
    return Revalidation(outcome="valid", checks=checks)


@pytest.mark.parametrize(
    ("scenario", "checkpoint"),
    [
        ("held-cancel-completed", "revalidated-not-cancelled"),
        ("gas-mid-access", "not-resumed-blindly"),
    ],
)
def test_a_blind_resume_fails_its_scenarios(
    monkeypatch: pytest.MonkeyPatch, scenario: str, checkpoint: str
) -> None:
    import maestro.domain.pending as pending
    import maestro.lanes.manage_existing as manage_existing
    import maestro.pipeline.shared as shared

    for module in (shared, manage_existing, pending):
        monkeypatch.setattr(module, "revalidate", _blind)
    result = run_scenario(load_scenario(SCENARIOS / f"{scenario}.yaml"))
    assert not result.passed
    assert checkpoint in failed_checkpoints(result)


def test_a_text_claimed_but_never_sent_fails_on_shame(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The evidence lens reads the watcher's ledger: a messenger that claims a send without
    calling Twilio leaves shame, and the checkpoint fails on it (not only on the message)."""
    from maestro.adapters.twilio_sms import TwilioMessenger
    from maestro.ports.messaging import SentMessage

    lies: list[str] = []

    def lie(self: TwilioMessenger, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        lies.append(sid := f"SM{len(lies):032x}")
        return SentMessage(sid=sid, to=to, body=body, status="queued", via="twilio")

    monkeypatch.setattr(TwilioMessenger, "send", lie)
    result = run_scenario(load_scenario(SCENARIOS / "leak-204.yaml"))
    assert lies
    assert not result.passed
    checkpoint = result.checkpoints[0]
    shame = [f for f in checkpoint.findings if f.expectation.startswith("shame")]
    assert shame, checkpoint.findings
    assert not shame[0].passed
    assert "unverified_claim" in shame[0].evidence
    # The second checkpoint reads the texts back by SID: a claimed text that Twilio does not
    # hold is not found.
    assert not result.checkpoints[1].passed
    assert "message to vendor-vic" in result.checkpoints[1].reason
    # The run's rows keep the shame rows, and the report lists them.
    row = result.rows["checkpoints"][0]
    assert {r["kind"] for r in row["shame"]} == {"unverified_claim"}
    assert {r["subject_id"] for r in row["shame"]} == set(lies)
    from maestro_dev.eval_harness.report import load_inputs, render
    from maestro_dev.eval_harness.runner import save_runs

    page = render(load_inputs(save_runs([result], tmp_path), tmp_path / "no-plots"))
    assert lies[0] in page


# -- step mode ----------------------------------------------------------------------------------


def test_step_mode_pauses_at_each_gate_until_released() -> None:
    scenario = load_scenario(SCENARIOS / "two-leaks-clarify.yaml")
    stacks: list[LocalStack] = []
    seen: list[tuple[str, str, int | None]] = []

    def on_gate(gate: PausedGate) -> None:
        seen.append((gate.kind, gate.gate, gate.step))
        (stack,) = stacks
        store = EvalRunStore(stack.ddb, PREFIX + EVAL_RUNS.logical_name)
        run = store.run(gate.run_id)
        assert run.status == "running"
        if gate.gate == "before the step":
            # Paused: the step is not injected while the gate is held (give it time to race).
            time.sleep(0.2)
            assert store.step(gate.run_id, gate.step or 0) is None
        if gate.gate == "after the checkpoint":
            graded = [c.after for c in store.checkpoints(gate.run_id)]
            assert graded[-1] == gate.step  # graded, and nothing after it ran yet
            assert store.step(gate.run_id, (gate.step or 0) + 1) is None
        if gate.kind == "package":
            paused = stack.pipeline.deps.gates.open_gates()
            assert paused, "a package gate was reported but none is open"

    result = run_scenario(scenario, "step", on_gate, stack_hook=stacks.append)
    assert result.passed, explain(result)
    eval_gates = [(kind, gate, step) for kind, gate, step in seen if kind == "eval"]
    assert eval_gates == [
        ("eval", "before the step", 0),
        ("eval", "before the step", 1),
        ("eval", "after the checkpoint", 1),
        ("eval", "before the step", 2),
        ("eval", "before the step", 3),
        ("eval", "after the checkpoint", 3),
    ]
    package_gates = [gate for kind, gate, _ in seen if kind == "package"]
    assert "before the brain" in package_gates  # the first package asks the brain
    assert "before the action" in package_gates
    assert len(result.gates_released) == len(seen)


def test_checkpoint_mode_pauses_only_after_checkpoints() -> None:
    seen: list[tuple[str, int | None]] = []
    result = run_scenario(
        load_scenario(SCENARIOS / "cancel-loop.yaml"),
        "checkpoint",
        lambda gate: seen.append((gate.gate, gate.step)),
    )
    assert result.passed, explain(result)
    assert seen == [
        ("after the checkpoint", 1),
        ("after the checkpoint", 9),
        ("after the checkpoint", 11),
    ]


# -- the command --------------------------------------------------------------------------------


def test_eval_run_json_prints_the_specified_object_and_exits_zero(tmp_path: Path) -> None:
    out = io.StringIO()
    path = SCENARIOS / "leak-204.yaml"
    code = main(["eval", "run", str(path), "--json", "--save", str(tmp_path)], out)
    assert code == 0
    report = json.loads(out.getvalue())
    assert report == {
        "passed": True,
        "scenarios": [
            {
                "id": "leak-204",
                "passed": True,
                "checkpoints": [
                    {"id": "relayed-to-wo-204", "passed": True, "reason": "all held"},
                    {
                        "id": "one-package-three-samples-availability-to-vic",
                        "passed": True,
                        "reason": "all held",
                    },
                ],
            }
        ],
    }
    (saved,) = tmp_path.glob("eval-run-*.json")
    rows = json.loads(saved.read_text())["results"][0]["rows"]
    assert rows["run"]["status"] == "passed"


@pytest.mark.slow  # a fresh interpreter: about 10 s on a loaded machine
def test_eval_run_json_prints_nothing_but_the_object_on_stdout(tmp_path: Path) -> None:
    # model-outage's probe fails, which the pipeline logs (Powertools: JSON lines on stdout, as
    # Lambda wants): --json sends every log line to stderr, so stdout parses whole.
    done = subprocess.run(
        [
            *(sys.executable, "-m", "maestro_dev.cli", "eval", "run", "--json"),
            *("--save", str(tmp_path), str(SCENARIOS / "model-outage.yaml")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)  # the whole of stdout, nothing before or after the object
    assert report["passed"] is True
    assert [s["id"] for s in report["scenarios"]] == ["model-outage"]
    assert "severity probe failed" in done.stderr  # the log line went somewhere: stderr


def test_a_seeded_world_puts_its_items_where_the_pipeline_reads_them() -> None:
    scenario = load_scenario(SCENARIOS / "seeded-question-and-hold.yaml")
    with LocalStack(start=start_of(scenario)) as stack:
        table = PREFIX + EVAL_RUNS.logical_name
        stack.ddb.create_table(**EVAL_RUNS.create_table_kwargs(table))
        store = EvalRunStore(stack.ddb, table)
        store.put_run(new_run(scenario, "all", "seeded", stack.clock.now()))
        EvalExecutor(stack, store, scenario).setup({"run_id": "seeded"})
        deps = stack.pipeline.deps
        maria = scenario.world.party("tenant-maria")
        assert maria is not None
        # The guard trail and the brain's window read the conversation's recent decisions.
        (earlier,) = deps.decisions.recent(conversation_id_for(maria.phone), 10)
        assert (earlier.package_id, earlier.lane.value) == ("pkg-asked-which", "clarify")
        assert trail_of([earlier])[0].signal == "ask:WO-204,WO-211"
        # The lease snapshot reads each party's open items.
        questions, holds = deps.pending.open_items("tenant-maria")
        assert [q.candidate_ids for q in questions] == [("WO-204", "WO-211")]
        assert holds == []
        questions, holds = deps.pending.open_items("pm-paula")
        assert questions == []
        (hold,) = holds
        assert hold.call is not None
        assert hold.call.wo_ids == ("WO-211",)
        # Its snapshot is the WO as seeded: a change before the YES is seen at release.
        assert [s.wo_id for s in hold.wo_snapshots] == ["WO-211"]


def test_a_known_failure_mark_holds_only_while_its_checkpoint_fails(tmp_path: Path) -> None:
    # leak-204's first checkpoint passes: marked as a known failure, the mark is stale and the
    # run fails, saying so (a fixed bug cannot hide behind its old mark).
    text = (SCENARIOS / "leak-204.yaml").read_text()
    marked = text.replace(
        "    id: relayed-to-wo-204\n", "    id: relayed-to-wo-204\n    known_failure: stale\n", 1
    )
    assert marked != text
    path = tmp_path / "marked.yaml"
    path.write_text(marked)
    result = run_scenario(load_scenario(path))
    assert not result.passed
    assert result.execution_status == "FAILED"
    assert "marked as known failures but passed" in result.error
    assert "relayed-to-wo-204" in result.error
    assert result.checkpoints[0].passed  # the grade itself is unchanged
    assert result.as_json()["checkpoints"][0]["known_failure"] == "stale"
    from maestro_dev.eval_harness.report import load_inputs, render
    from maestro_dev.eval_harness.runner import save_runs

    page = render(load_inputs(save_runs([result], tmp_path), tmp_path / "no-plots"))
    assert "<b>Known failure</b> (passes: remove the mark): stale" in page


def test_a_wrong_expectation_fails_with_its_reason_and_exit_code_one(tmp_path: Path) -> None:
    text = (SCENARIOS / "rating-legit.yaml").read_text().replace("rating: 5", "rating: 4")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(text)
    out = io.StringIO()
    code = main(["eval", "run", str(wrong), "--json", "--save", str(tmp_path)], out)
    assert code == 1
    report = json.loads(out.getvalue())
    assert report["passed"] is False
    (checkpoint,) = report["scenarios"][0]["checkpoints"]
    assert checkpoint["passed"] is False
    assert "WO-198 rating=4" in checkpoint["reason"]
    assert "rating=5" in checkpoint["reason"]  # what the WO store holds


def test_a_step_that_cannot_run_fails_the_run_and_says_why(tmp_path: Path) -> None:
    # A turn in the past: the executor refuses to move time backwards; the run fails, recorded.
    text = (SCENARIOS / "leak-204.yaml").read_text()
    turn = '{from: tenant-maria, text: "fine to come in, 2 onward"}'
    text = text.replace(turn, turn.replace("{", '{at: "-1h", ', 1))
    broken = tmp_path / "broken.yaml"
    broken.write_text(text)
    result = run_scenario(load_scenario(broken))
    assert not result.passed
    assert result.execution_status == "FAILED"
    assert "time only moves forward" in result.error
    assert result.checkpoints[0].reason.startswith("never graded")


def test_eval_run_refuses_an_invalid_scenario_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: Bad Id\ntitle: x\n")
    assert main(["eval", "run", str(bad), "--save", str(tmp_path)], io.StringIO()) == 2
