"""The console's pure parts: when the eval executor's gate holds (the control row), the state
machines drawn from their ASL files, and the console's access checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from maestro_dev.console import graph
from maestro_dev.console.access import ConsoleAccess
from maestro_dev.eval_harness.runs import ControlRow, should_hold

NOW = datetime(2026, 6, 17, 14, 0, tzinfo=UTC)
BEFORE, AFTER = "before the step", "after the checkpoint"


def control(**changes: object) -> ControlRow:
    return ControlRow.model_validate({"run_id": "r", "mode": "all", "changed_at": NOW, **changes})


@pytest.mark.parametrize(
    ("mode", "before", "after"),
    [("all", False, False), ("checkpoint", False, True), ("step", True, True)],
)
def test_each_mode_holds_where_it_says(mode: str, before: bool, after: bool) -> None:
    assert should_hold(control(mode=mode), BEFORE, 3) is before
    assert should_hold(control(mode=mode), AFTER, 3) is after


def test_a_pause_holds_at_the_next_gate_in_any_mode() -> None:
    for mode in ("all", "checkpoint", "step"):
        assert should_hold(control(mode=mode, paused=True), BEFORE, 0)


def test_a_step_holds_once_its_package_is_in_and_not_before() -> None:
    stepping = control(mode="step", step_until=2)  # the step overrides the mode's own holds
    assert not should_hold(stepping, BEFORE, 1)
    assert not should_hold(stepping, AFTER, 1)
    assert should_hold(stepping, AFTER, 2)
    assert should_hold(stepping, BEFORE, 3)


@pytest.mark.parametrize("machine", sorted(graph.MACHINES))
def test_every_state_and_transition_of_the_asl_is_drawn(machine: str) -> None:
    definition = json.loads(graph.MACHINES[machine].read_text())
    drawn = graph.load(machine)

    def states(block: dict[str, object]) -> set[str]:
        found: set[str] = set()
        for name, state in block["States"].items():  # type: ignore[attr-defined]
            found.add(name)
            inner = state.get("ItemProcessor") or state.get("Iterator")
            if inner:
                found |= states(inner)
        return found

    assert set(drawn.nodes) == states(definition)
    assert drawn.nodes[drawn.start].layer == 0
    for edge in drawn.edges:
        assert edge.target in drawn.nodes, edge
    svg = graph.svg(drawn)
    for name in drawn.nodes:
        assert f'data-state="{name}"'.replace("'", "&#x27;") in svg
    # Every Next and Choice target is an edge (a Catch is one too).
    nexts = {
        (name, state["Next"]) for name, state in definition["States"].items() if "Next" in state
    }
    assert nexts <= {(e.source, e.target) for e in drawn.edges}


def test_the_executor_graph_shows_its_gates_inside_the_map() -> None:
    drawn = graph.load("eval_executor")
    gate = drawn.nodes["Gate: before the step"]
    assert gate.parent == "Steps, in order"
    assert gate.layer > drawn.nodes["Steps, in order"].layer


def test_current_states_are_those_entered_and_not_left() -> None:
    history = [
        {"stateEnteredEventDetails": {"name": "Map"}},
        {"stateEnteredEventDetails": {"name": "Inject"}},
        {"stateExitedEventDetails": {"name": "Inject"}},
        {"stateEnteredEventDetails": {"name": "Gate"}},
    ]
    inside, entered = graph.current_states(history)
    assert inside == ["Map", "Gate"]
    assert entered == ["Map", "Inject", "Gate"]


def headers(**named: str) -> list[tuple[bytes, bytes]]:
    return [(k.replace("_", "-").encode(), v.encode()) for k, v in named.items()]


def test_the_console_answers_its_token_on_its_own_host_only() -> None:
    access = ConsoleAccess(token="t" * 64, port=8790)
    bearer = f"Bearer {'t' * 64}"
    assert access.refusal("GET", headers(host="127.0.0.1:8790", authorization=bearer), "") is None
    assert access.refusal("GET", headers(host="localhost:8790"), "token=" + "t" * 64) is None
    cookie = "maestro_console=" + "t" * 64
    assert access.refusal("POST", headers(host="127.0.0.1:8790", cookie=cookie), "") is None
    assert access.refusal("GET", headers(host="127.0.0.1:8790"), "") == "token"
    assert access.refusal("GET", headers(host="evil.test:8790", authorization=bearer), "") == "host"
    assert access.refusal("GET", headers(host="127.0.0.1:9999", authorization=bearer), "") == "host"
    foreign = headers(host="127.0.0.1:8790", authorization=bearer, origin="http://evil.test")
    assert access.refusal("GET", foreign, "") == "origin"
    cross = headers(host="127.0.0.1:8790", cookie=cookie, sec_fetch_site="cross-site")
    assert access.refusal("POST", cross, "") == "origin"
    # The token in a URL opens a page (GET); it never authorizes a change.
    assert access.refusal("POST", headers(host="127.0.0.1:8790"), "token=" + "t" * 64) == "token"
