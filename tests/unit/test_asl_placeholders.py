"""Each state machine's ASL file against the contract's map (``maestro.access``): the step list
and each step's placeholder are written once, there; the cloud (``infra/pipeline.py``) and the
embedded stack substitute with that one map, so the ASL files are what is left to hold to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from maestro.access import BUS_PLACEHOLDER, STATE_MACHINES, asl_substitutions
from maestro.dispatch import entry as dispatch_entry
from maestro.pipeline import entry as pipeline_entry

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = {"package_pipeline": pipeline_entry, "work_order": dispatch_entry}
PUTS_EVENTS = {"package_pipeline"}
"""The machines whose ASL puts events on the bus itself (``decision.recorded``)."""


def _placeholders_in(asl_file: str) -> set[str]:
    return set(re.findall(r"\$\{([^}]*)\}", (ROOT / "statemachines" / asl_file).read_text()))


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_the_asl_s_placeholders_are_the_contract_s_map(machine: str) -> None:
    asl_file, steps = STATE_MACHINES[machine]
    bus = "the-bus" if machine in PUTS_EVENTS else None
    contract = asl_substitutions(steps, lambda step: f"arn-of-{step}", bus)
    assert _placeholders_in(asl_file) == set(contract)
    assert (BUS_PLACEHOLDER in contract) == (machine in PUTS_EVENTS)


@pytest.mark.parametrize("machine", sorted(STATE_MACHINES))
def test_every_step_of_the_contract_has_its_function_and_its_handler(machine: str) -> None:
    _, steps = STATE_MACHINES[machine]
    functions = {p.parent.name for p in (ROOT / "functions").glob("*/handler.py")}
    assert set(steps) <= functions
    assert all(callable(getattr(ENTRIES[machine], step, None)) for step in steps)
