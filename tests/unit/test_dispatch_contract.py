"""The work order machine's ASL and its steps' typed contract agree: every path, payload, choice,
timeout path and error name, and its placeholders are the steps of ``maestro.access``.

As ``test_pipeline_contract.py`` does for the package pipeline: a path the models do not know
fails here, not at run time in the cloud.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from maestro.access import STATE_MACHINES, placeholder
from maestro.dispatch.contract import (
    AskPayload,
    AssignPayload,
    GatherPayload,
    PagePayload,
    RecordPayload,
    WoExecutionState,
    WoPayload,
)
from maestro.dispatch.entry import STEPS
from maestro.dispatch.errors import WO_MACHINE_ERRORS
from maestro.domain.dispatch import MAX_OFFERS
from maestro_dev.local.stack import WO_ASL_PATH, asl_path
from tests.unit.test_pipeline_contract import ROOT, _paths, resolves

ASL: dict[str, Any] = json.loads(WO_ASL_PATH.read_text())
STATES: dict[str, dict[str, Any]] = ASL["States"]
PAYLOADS = {
    "wo_gather": GatherPayload,
    "wo_ask": AskPayload,
    "wo_record": RecordPayload,
    "wo_judge": WoPayload,
    "wo_assign": AssignPayload,
    "wo_page": PagePayload,
}


def _function(state: dict[str, Any]) -> str | None:
    """The step a Task invokes (by its placeholder), if it invokes one."""
    resource = state.get("Resource", "")
    name = state.get("Parameters", {}).get("FunctionName", resource)
    for step in STEPS:
        if name == "${" + placeholder(step) + "}":
            return step
    return None


def _payload(state: dict[str, Any]) -> dict[str, Any]:
    parameters: dict[str, Any] = state["Parameters"]
    inner: dict[str, Any] = parameters.get("Payload", parameters)
    return inner


def test_the_file_is_the_machines_and_its_start_has_a_function() -> None:
    """(Its placeholders against its steps: tests/unit/test_asl_placeholders.py.)"""
    assert asl_path("work_order") == WO_ASL_PATH
    assert WO_ASL_PATH.name == STATE_MACHINES["work_order"][0]
    assert "wo_start" in {p.parent.name for p in (ROOT / "functions").glob("*/handler.py")}


def test_every_task_payload_is_its_steps_model_and_every_path_resolves() -> None:
    invoked = set()
    for name, state in STATES.items():
        if state["Type"] != "Task":
            continue
        step = _function(state)
        assert step is not None, name
        invoked.add(step)
        payload = _payload(state)
        model = PAYLOADS[step]
        keys = {key.removesuffix(".$") for key in payload}
        required = {n for n, f in model.model_fields.items() if f.is_required()}
        assert required <= keys <= set(model.model_fields), name
        model.model_validate(  # the constant values are valid as they are
            {k: v for k, v in payload.items() if not k.endswith(".$")}
            | {k.removesuffix(".$"): _sample(k) for k in payload if k.endswith(".$")}
        )
        for path in _paths(payload):
            assert resolves(WoExecutionState, path), f"{name}: {path}"
    assert invoked == set(STEPS)


def _sample(key: str) -> Any:
    return {
        "timeout_seconds.$": 60,
        "answer.$": {"Error": "States.Timeout", "Cause": ""},
    }.get(key, "x")


def test_every_result_path_choice_and_timeout_path_resolves() -> None:
    for name, state in STATES.items():
        targets = [state.get("ResultPath")] + [c["ResultPath"] for c in state.get("Catch", [])]
        for target in targets:
            if target is not None:
                assert resolves(WoExecutionState, target), f"{name}: {target}"
        if "TimeoutSecondsPath" in state:
            assert resolves(WoExecutionState, state["TimeoutSecondsPath"]), name
        for rule in state.get("Choices", []):
            assert resolves(WoExecutionState, rule["Variable"]), f"{name}: {rule['Variable']}"


def test_the_three_waits_time_out_by_path_and_catch_the_timeout_where_they_answer() -> None:
    waits = {n: s for n, s in STATES.items() if "waitForTaskToken" in s.get("Resource", "")}
    assert len(waits) == 2 + MAX_OFFERS  # gather, approval, one per offer
    for name, state in waits.items():
        assert "TimeoutSecondsPath" in state, name
        assert "TimeoutSeconds" not in state, name
        (timeout,) = [c for c in state["Catch"] if c["ErrorEquals"] == ["States.Timeout"]]
        # The timeout lands where the answer would: the record step reads either.
        assert timeout["ResultPath"] == state["ResultPath"], name
        assert _payload(state)["token.$"] == "$$.Task.Token"
        assert state["Catch"][-1]["ErrorEquals"] == ["States.ALL"], name


def test_the_console_names_each_offer_and_every_state_is_reachable() -> None:
    for i in range(1, MAX_OFFERS + 1):
        assert f"Dispatch: offer to vendor {i} of {MAX_OFFERS}" in STATES
        assert f"Dispatch: assign vendor {i}" in STATES
    assert "Gather: ask the tenant and wait" in STATES
    assert "Judge: ask the PM to approve" in STATES
    seen, todo = set(), [ASL["StartAt"]]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        state = STATES[name]
        todo += [state[k] for k in ("Next", "Default") if k in state]
        todo += [r["Next"] for r in state.get("Choices", []) + state.get("Catch", [])]
    assert seen == set(STATES)


def test_every_custom_error_name_is_an_exception_of_the_machine() -> None:
    known = {cls.__name__ for cls in WO_MACHINE_ERRORS}
    for name, state in STATES.items():
        for rule in [*state.get("Retry", []), *state.get("Catch", [])]:
            for error in rule["ErrorEquals"]:
                if not error.startswith(("States.", "Lambda.")):
                    assert error in known, f"{name}: {error}"


@pytest.mark.parametrize(
    "path", ["$.nope", "$.judged.nope", "$.judged.approval_needed[0]", "$.answers.offer_4"]
)
def test_the_resolver_refuses_what_the_models_lack(path: str) -> None:
    assert not resolves(WoExecutionState, path)
