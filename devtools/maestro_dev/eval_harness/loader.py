"""Scenario files: YAML in, validated :class:`maestro_dev.eval_harness.scenario.Scenario` out.

A world may name a base (``world: {base: maria}``): the named file of ``evals/worlds/`` gives
the parties and work orders, and the scenario's own add to them or replace them by id. A
``$schema`` key (for editors) is ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from maestro_dev.eval_harness.scenario import Scenario, World

ROOT = Path(__file__).resolve().parents[3]
EVALS = ROOT / "evals"
WORLDS = EVALS / "worlds"
SCENARIOS = EVALS / "scenarios"
SCHEMA = EVALS / "scenario.schema.json"


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the file and the reason."""


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ScenarioError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping at the top level")
    data.pop("$schema", None)
    return data


def _merged(base: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    replaced = {item.get("id") for item in own}
    return [item for item in base if item.get("id") not in replaced] + own


def load_world(name: str) -> World:
    """A named world of ``evals/worlds/``."""
    path = WORLDS / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in WORLDS.glob("*.yaml")))
        raise ScenarioError(f"no world named {name!r} (known: {known})")
    try:
        return World.model_validate(_read_yaml(path))
    except ValidationError as error:
        raise ScenarioError(f"{path}: {error}") from error


def parse_scenario(data: dict[str, Any], source: str = "<scenario>") -> Scenario:
    world = dict(data.get("world") or {})
    if world.get("base"):
        base = load_world(str(world["base"])).model_dump(by_alias=True, exclude={"base"})
        for key in ("parties", "work_orders", "messages"):
            world[key] = _merged(list(base.get(key) or []), list(world.get(key) or []))
    data = {**data, "world": world}
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(f"{source}: {error}") from error


def load_scenario(path: Path) -> Scenario:
    return parse_scenario(_read_yaml(path), str(path))


def load_scenarios(path: Path) -> list[Scenario]:
    """One file, or every ``*.yaml`` of a directory in name order; ids must be unique."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    if not files:
        raise ScenarioError(f"{path}: no scenario files (*.yaml)")
    scenarios = [load_scenario(f) for f in files]
    ids = [s.id for s in scenarios]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ScenarioError(f"{path}: scenario ids used twice: {', '.join(duplicated)}")
    return scenarios


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (``evals/scenario.schema.json`` is this, written out)."""
    schema = Scenario.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://maestro.dev/evals/scenario.schema.json"
    schema.setdefault("properties", {})["$schema"] = {"type": "string"}
    schema["$defs"]["World"].setdefault("properties", {})["$schema"] = {"type": "string"}
    return schema
