"""The table of what each function may touch (``maestro.access``), and the settings that hold a
pipeline step to its row: a missing table and an extra one are both refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_settings import BaseSettings

from maestro.access import (
    DISPATCH_STEPS,
    EVENT_PUBLISHERS,
    FUNCTION_TABLES,
    PIPELINE_STEPS,
    tables_of,
)
from maestro.dispatch.entry import STEPS as DISPATCH_ENTRY_STEPS
from maestro.pipeline.entry import STEPS
from maestro.settings import (
    DISPATCH_TABLES,
    PIPELINE_TABLES,
    DigestSettings,
    DispatchSettings,
    FlusherSettings,
    InboundSettings,
    PipelineSettings,
    ProberSettings,
    SweeperSettings,
    WatcherSettings,
    WoStartSettings,
)
from maestro.tables import ALL_TABLES

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
# The functions that are not pipeline steps, and the settings model each is configured by.
OWN_SETTINGS: dict[str, type[BaseSettings]] = {
    "inbound_sms": InboundSettings,
    "inbound_fallback": InboundSettings,  # the same route, for the kept webhooks
    "flusher": FlusherSettings,
    "prober": ProberSettings,
    "watcher": WatcherSettings,
    "sweeper": SweeperSettings,
    "digest": DigestSettings,
    "wo_start": WoStartSettings,  # no table: it starts executions
}
PM = "+14155550123"


def _table_fields(model: type[BaseSettings]) -> set[str]:
    return {name.removesuffix("_table") for name in model.model_fields if name.endswith("_table")}


def test_every_function_has_a_row_and_every_row_a_function() -> None:
    functions = {p.name for p in FUNCTIONS_DIR.iterdir() if (p / "handler.py").is_file()}
    assert set(FUNCTION_TABLES) == functions
    assert tuple(STEPS) == PIPELINE_STEPS
    assert tuple(DISPATCH_ENTRY_STEPS) == DISPATCH_STEPS
    assert set(FUNCTION_TABLES) == set(STEPS) | set(DISPATCH_STEPS) | set(OWN_SETTINGS)
    # Three pipeline steps publish, every work order machine step, and the digest (its page's
    # claims), which is no step.
    assert EVENT_PUBLISHERS - set(STEPS) == {"digest", *DISPATCH_STEPS}


def test_rows_name_real_tables_with_a_kind_of_access() -> None:
    logical = {spec.logical_name for spec in ALL_TABLES}
    for function, row in FUNCTION_TABLES.items():
        assert row or function == "wo_start", function  # the starter only starts executions
        assert set(row) <= logical, function
        assert set(row.values()) <= {"read", "write"}, function


def test_a_steps_row_names_only_settings_the_pipeline_has() -> None:
    assert set(PIPELINE_TABLES) == _table_fields(PipelineSettings)
    for step in STEPS:
        assert set(FUNCTION_TABLES[step]) <= set(PIPELINE_TABLES), step
    # Each table setting is some step's: none is configured for nothing.
    assert set().union(*(FUNCTION_TABLES[s] for s in STEPS)) == set(PIPELINE_TABLES)


def test_the_other_functions_rows_are_their_settings_table_fields() -> None:
    for function, model in OWN_SETTINGS.items():
        assert set(FUNCTION_TABLES[function]) == _table_fields(model), function


def test_the_directory_is_read_only_and_the_ledger_is_read_verifys() -> None:
    for function, row in FUNCTION_TABLES.items():
        assert row.get("parties", "read") == "read", function  # imported by an operator only
        assert row.get("directory", "read") == "read", function  # the same
    # Every function that pages reads who is on call (docs/on-call.md), and the work order
    # machine's steps after gather read the vendors, the property and its people
    # (docs/dispatch.md); only those.
    pagers = {f for f, row in FUNCTION_TABLES.items() if "directory" in row}
    assert pagers == {"escalate", "act", "fail_open", "digest", *DISPATCH_STEPS} - {"wo_gather"}
    writers = {f for f, row in FUNCTION_TABLES.items() if row.get("ledger") == "write"}
    assert writers == {"watcher", "sweeper"}
    assert not any("ledger" in FUNCTION_TABLES[step] for step in STEPS)


def test_a_function_without_a_row_is_an_error_not_an_empty_grant() -> None:
    assert tables_of("act") is FUNCTION_TABLES["act"]
    with pytest.raises(KeyError, match="no row for 'billing'"):
        tables_of("billing")


def _step_settings(step: str | None, **extra: Any) -> PipelineSettings:
    tables = PIPELINE_TABLES if step is None else FUNCTION_TABLES[step]
    values: dict[str, Any] = {f"{t}_table": f"maestro-{t}" for t in tables}
    if step is None or step in EVENT_PUBLISHERS:
        values["event_bus_name"] = "bus"
    return PipelineSettings.model_validate(
        {"step": step, "on_call_pm_phone": PM, **values, **extra}
    )


@pytest.mark.parametrize("step", STEPS)
def test_a_step_is_configured_with_its_row_exactly(step: str) -> None:
    settings = _step_settings(step)
    assert {t for t in PIPELINE_TABLES if settings.table(t)} == set(FUNCTION_TABLES[step])
    assert (settings.event_bus_name is not None) == (step in EVENT_PUBLISHERS)
    # One table of its row missing: refused, naming it.
    missing = sorted(FUNCTION_TABLES[step])[0]
    with pytest.raises(ValidationError, match=f"{step}: {missing}_table is required"):
        _step_settings(step, **{f"{missing}_table": ""})
    # One table more than its row: refused too (it would be configured but not granted).
    extra = sorted(set(PIPELINE_TABLES) - set(FUNCTION_TABLES[step]))[0]
    with pytest.raises(ValidationError, match=f"{extra}_table is not one of the step's tables"):
        _step_settings(step, **{f"{extra}_table": "maestro-x"})


def test_the_bus_goes_to_the_publishers_only() -> None:
    with pytest.raises(ValidationError, match="event_bus_name is required"):
        _step_settings("act", event_bus_name="")
    with pytest.raises(ValidationError, match="the step publishes no events"):
        _step_settings("persist", event_bus_name="bus")


def test_without_a_step_every_table_is_required_and_a_stranger_step_is_refused() -> None:
    settings = _step_settings(None)
    assert all(settings.table(t) for t in PIPELINE_TABLES)
    with pytest.raises(ValidationError, match="the pipeline: parties_table is required"):
        _step_settings(None, parties_table="")
    with pytest.raises(ValidationError, match="'watcher' is not one of"):
        PipelineSettings.model_validate(
            {"step": "watcher", "on_call_pm_phone": PM, "ledger_table": "maestro-ledger"}
        )


def _dispatch_settings(step: str | None, **extra: Any) -> DispatchSettings:
    tables = DISPATCH_TABLES if step is None else FUNCTION_TABLES[step]
    values: dict[str, Any] = {f"{t}_table": f"maestro-{t}" for t in tables}
    return DispatchSettings.model_validate(
        {"step": step, "event_bus_name": "bus", **values, **extra}
    )


@pytest.mark.parametrize("step", DISPATCH_STEPS)
def test_a_work_order_step_is_configured_with_its_row_exactly(step: str) -> None:
    assert set(FUNCTION_TABLES[step]) <= set(DISPATCH_TABLES), step
    settings = _dispatch_settings(step)
    assert {t for t in DISPATCH_TABLES if settings.table(t)} == set(FUNCTION_TABLES[step])
    missing = sorted(FUNCTION_TABLES[step])[0]
    with pytest.raises(ValidationError, match=f"{step}: {missing}_table is required"):
        _dispatch_settings(step, **{f"{missing}_table": ""})
    extra = sorted(set(DISPATCH_TABLES) - set(FUNCTION_TABLES[step]))[0]
    with pytest.raises(ValidationError, match=f"{extra}_table is not one of the step's tables"):
        _dispatch_settings(step, **{f"{extra}_table": "maestro-x"})
    with pytest.raises(ValidationError, match="event_bus_name is required"):
        _dispatch_settings(step, event_bus_name="")


def test_the_work_order_tables_are_its_steps_and_a_pipeline_step_is_refused() -> None:
    assert set(DISPATCH_TABLES) == _table_fields(DispatchSettings)
    assert set().union(*(FUNCTION_TABLES[s] for s in DISPATCH_STEPS)) == set(DISPATCH_TABLES)
    with pytest.raises(ValidationError, match="'act' is not one of"):
        _dispatch_settings("act")
