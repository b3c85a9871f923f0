"""The ASL and the steps' typed contract agree: every path, selector, payload and error name.

The state machine moves one JSON document between Lambdas; a path the models do not know, or an
error name no exception carries, fails only at run time in the cloud. These checks fail here.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from maestro.adapters.eventbridge import EVENT_SOURCE
from maestro.errors import STATE_MACHINE_ERRORS
from maestro.pipeline.contract import ActItem, ExecutionState, GatePayload
from maestro.settings import PipelineSettings
from maestro_dev.local.stack import ASL_PATH

ROOT = Path(__file__).resolve().parents[2]
ASL: dict[str, Any] = json.loads(ASL_PATH.read_text())


def _states(machine: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in machine["States"].items():
        yield name, state
        if state["Type"] == "Map":
            yield from _states(state["ItemProcessor"])


def _inner() -> set[str]:
    return {
        name
        for s in ASL["States"].values()
        if s["Type"] == "Map"
        for name in s["ItemProcessor"]["States"]
    }


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (unwrapping Optional and tuples), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) in (
        typing.Union,
        tuple,
        list,
    ):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def resolves(model: type[BaseModel], path: str) -> bool:
    """Whether a JSONPath like ``$.precheck.route`` (or ``$.judged.vendors[0]``, an item of a
    tuple field) names a field through the models."""
    assert path.startswith("$."), path
    current: type[BaseModel] | None = model
    for part in path[2:].split("."):
        name, _, index = part.partition("[")
        if current is None or name not in current.model_fields:
            return False
        annotation = current.model_fields[name].annotation
        if index and typing.get_origin(annotation) is not tuple:
            return False
        current = _model_of(annotation)
    return True


def _paths(value: Any) -> Iterator[str]:
    """Every ``$.…`` path a Parameters/Payload template reads (context paths ``$$`` excluded)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key.endswith(".$") and isinstance(inner, str) and not inner.startswith("$$"):
                yield inner
            else:
                yield from _paths(inner)


def test_every_result_path_is_a_field_of_the_execution_state() -> None:
    for name, state in ASL["States"].items():
        targets = [state.get("ResultPath")] + [c["ResultPath"] for c in state.get("Catch", [])]
        for target in targets:
            if target is not None:
                assert resolves(ExecutionState, target), f"{name}: {target}"


def test_every_choice_variable_resolves() -> None:
    for name, state in _states(ASL):
        for rule in state.get("Choices", []):
            for leaf in rule.get("And", [rule]):
                model = ActItem if name in _inner() else ExecutionState
                assert resolves(model, leaf["Variable"]), f"{name}: {leaf['Variable']}"


def test_the_map_items_are_act_items() -> None:
    (queue,) = [s for s in ASL["States"].values() if s["Type"] == "Map"]
    assert resolves(ExecutionState, queue["ItemsPath"])
    selector = queue["ItemSelector"]
    # Every field but the one the item's gate writes itself when it times out (its Catch).
    assert {key.removesuffix(".$") for key in selector} == set(ActItem.model_fields) - {
        "gate_timeout"
    }
    gate = queue["ItemProcessor"]["States"]["Step gate: before the action"]
    (timeout,) = [c for c in gate["Catch"] if c["ErrorEquals"] == ["States.Timeout"]]
    assert resolves(ActItem, timeout["ResultPath"])
    for path in _paths(selector):
        assert resolves(ExecutionState, path), path


def test_every_gate_payload_is_a_gate_payload() -> None:
    gates = [(n, s) for n, s in _states(ASL) if "waitForTaskToken" in s.get("Resource", "")]
    assert len(gates) == 2
    for name, state in gates:
        payload = state["Parameters"]["Payload"]
        keys = {key.removesuffix(".$") for key in payload}
        required = {n for n, f in GatePayload.model_fields.items() if f.is_required()}
        assert required <= keys <= set(GatePayload.model_fields), name
        model = ActItem if name in _inner() else ExecutionState
        for path in _paths(payload):
            assert resolves(model, path), f"{name}: {path}"


def test_every_custom_error_name_is_an_exception_of_the_pipeline() -> None:
    known = {cls.__name__ for cls in STATE_MACHINE_ERRORS}
    for name, state in _states(ASL):
        for rule in [*state.get("Retry", []), *state.get("Catch", [])]:
            for error in rule["ErrorEquals"]:
                if not error.startswith(("States.", "Lambda.")):
                    assert error in known, f"{name}: {error}"


def test_the_event_source_is_the_bus_adapter_s() -> None:
    sources = [
        entry["Source"]
        for _, state in _states(ASL)
        for entry in state.get("Parameters", {}).get("Entries", [])
    ]
    assert sources == [EVENT_SOURCE]
    for path in _paths({"x": ASL["States"]["Announce decision.recorded"]["Parameters"]}):
        assert resolves(ExecutionState, path), path


@pytest.mark.parametrize("path", ["$.nope", "$.precheck.nope", "$.lease.sender.nope"])
def test_the_resolver_refuses_what_the_models_lack(path: str) -> None:
    assert not resolves(ExecutionState, path)


THROTTLES = ("Lambda.TooManyRequestsException", "Lambda.ServiceException")
SAFETY_FIRST = {"Pre-check: safety first", "Escalate at once: page the PM, advise the tenant"}
"""Before the lease, an emergency's path: a throttle there fails open at once (fail-open pages
the PM and advises the tenant), so no emergency waits out a burst."""


def _worst_wait(retrier: dict[str, Any]) -> float:
    """The longest a retrier waits over all its attempts (full jitter waits less, never more)."""
    interval, rate = retrier.get("IntervalSeconds", 1), retrier.get("BackoffRate", 2.0)
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return float(sum(min(cap, interval * rate**n) for n in range(retrier["MaxAttempts"])))


def test_a_throttled_step_after_the_lease_rides_out_a_burst_with_jitter() -> None:
    """A throttle (the brain's reserved concurrency, the account's) is not a failure: each step
    past the lease retries it for minutes, jittered so a burst's retries do not come back
    together, and within the lease's TTL; only then does it fail open."""
    lease_ttl = PipelineSettings.model_fields["lease_ttl_seconds"].default
    steps = [
        (name, state)
        for name, state in _states(ASL)
        if state["Type"] == "Task"
        and state["Resource"].startswith("${")
        and name not in SAFETY_FIRST
    ]
    assert {name for name, _ in steps} >= {"Brain: sample and vote", "Act: run the lane"}
    for name, state in steps:
        for error in THROTTLES:
            (retrier, *_) = [r for r in state["Retry"] if error in r["ErrorEquals"]]
            assert retrier["JitterStrategy"] == "FULL", (name, error)
            assert 180 <= _worst_wait(retrier) <= lease_ttl / 2, (name, error)
            assert retrier["MaxDelaySeconds"] <= 60, (name, error)
