"""One module per pipeline step, named as its function, run by the handler factory on its input
validated once against the model the step declares (maestro.pipeline.entry)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from maestro.access import PIPELINE_STEPS
from maestro.pipeline import entry
from maestro.pipeline.contract import ActItem, ExecutionState, GatePayload
from maestro.pipeline.shared import Pipeline, Step

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


@pytest.mark.parametrize("name", PIPELINE_STEPS)
def test_each_step_is_the_module_of_its_function(name: str) -> None:
    handler = (FUNCTIONS / name / "handler.py").read_text()
    assert f"from maestro.pipeline.entry import {name} as handler" in handler
    step = import_module(f"maestro.pipeline.{name}").STEP
    assert step.run.__name__ == name
    assert entry.STEP_MODULES[name] is step


def test_each_step_declares_the_model_its_state_is_validated_against() -> None:
    inputs = {name: step.input for name, step in entry.STEP_MODULES.items()}
    assert inputs == {
        **dict.fromkeys(PIPELINE_STEPS, ExecutionState),
        "act": ActItem,
        "step_gate": GatePayload,
        "fail_open": None,  # the last line reads what it can of even an unreadable state
    }


class _Piece(BaseModel):
    package_id: str
    count: int


def test_the_factory_validates_once_and_hands_the_step_its_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []
    validations: list[object] = []

    class Counted(_Piece):
        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> Counted:  # type: ignore[override]
            validations.append(obj)
            return super().model_validate(obj, **kwargs)

    def run(pipeline: Pipeline, piece: Counted) -> dict[str, Any]:
        seen.append(piece)
        return {"count": piece.count}

    monkeypatch.setitem(entry.STEP_MODULES, "lease", Step(run, Counted))
    pipeline = Pipeline(deps=None)  # type: ignore[arg-type]  # the step never reads it
    assert entry.run_step(pipeline, "lease", {"package_id": "p", "count": "3"}) == {"count": 3}
    assert len(validations) == 1
    assert seen == [Counted(package_id="p", count=3)]
    with pytest.raises(ValidationError):
        entry.run_step(pipeline, "lease", {"package_id": "p"})
    assert len(seen) == 1  # an invalid state never reaches the step


def test_a_raw_step_gets_the_state_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def run(pipeline: Pipeline, state: Any) -> dict[str, Any]:
        seen.append(state)
        return {}

    monkeypatch.setitem(entry.STEP_MODULES, "fail_open", Step(run, None))
    state = {"package_id": "p", "failure": "not even a mapping"}
    entry.run_step(Pipeline(deps=None), "fail_open", state)  # type: ignore[arg-type]
    assert seen == [state]
