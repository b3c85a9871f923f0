"""The brain's compact tool schema says what the full one says, in fewer characters.

The compact schema (``action_plan_tool_schema``) is what every reasoning sample sends; the full one
(``action_plan_json_schema``) is what pydantic generates from the vocabulary. Actions of every
lane, valid and not, are judged by both: they must agree on every one, and every plan the parser
accepts must be accepted by the compact schema (the model is never told less than it may say;
pydantic's lax coercions, "5" for 5, are outside both schemas alike and left out here).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from maestro.brain.reasoning import propose_tool
from maestro.domain.actions import ActionPlan, action_plan_json_schema, action_plan_tool_schema
from maestro.domain.tool_schema import compact_schema, encoded_size

_OMIT = object()

# Per field: values inside its constraints, then values outside them (or of the wrong type).
# Valid = (good values, bad values); optional fields may also be left out.
_COMMON: dict[str, tuple[list[Any], list[Any]]] = {
    "target_wo_id": (["WO-204", None, "new:1"], ["x" * 65, 7]),
    "confidence": ([0.9, 0, 1], [1.5, -0.1, "high"]),
    "why": (["the sink again"], ["x" * 401, None]),
    "evidence": (["'it leaks'"], ["x" * 401]),
}
_PARAMS: dict[str, dict[str, tuple[list[Any], list[Any]]]] = {
    "create_wo": {
        "ref": (["new:1", "new:2"], [5]),
        "summary": (["leak under the sink"], ["ab", "x" * 201, None]),
        "category": (["plumbing", "general"], ["roofing"]),
        "urgency": (["routine", "emergency"], ["asap"]),
        "location": (["kitchen", None], ["x" * 101]),
    },
    "relay_to_open_wo": {"note": (["still dripping"], ["", "x" * 1001])},
    "schedule_visit": {
        "mode": (["propose", "confirm"], ["maybe"]),
        "availability": (["thursday after 2"], ["", None]),
    },
    "record_rating": {
        "stars": ([1, 5], [0, 6, 4.5, None]),
        "comment": (["quick", None], ["x" * 501]),
    },
    "relay_to_vendor": {"message": (["gate code is 4411"], ["", "x" * 1001])},
    "manage_existing": {
        "operation": (["list", "cancel", "reschedule", "complete"], ["delete"]),
        "wo_ids": ([[], ["WO-1"]], [["WO-1"] * 21, "WO-1"]),
        "request": (["drop the oven one"], ["x" * 301]),
    },
    "continue_with_assistant": {"reply_hint": (["say thanks", None], ["x" * 501])},
    "clarify": {
        "question": (["which leak?"], ["", "x" * 401]),
        "candidate_ids": ([[], ["WO-1", "WO-2"]], [["WO-1"] * 11]),
        "call": (
            [None, {"operation": "cancel"}, {"operation": "rate", "stars": 4}],
            [{"operation": "rate", "stars": 9}, {"operation": "wipe"},
             {"operation": "relay", "request": "tell them", "extra": 1}],
        ),
        "reason": (["ambiguous_relation", "not_owned"], ["bored"]),
    },
    "escalate": {
        "reason": (["emergency", "identity"], ["panic"]),
        "severity": (["emergency", "info"], ["meh"]),
        "hazard": (["smell of gas"], ["x" * 201]),
    },
}  # fmt: skip


def _variants() -> list[dict[str, Any]]:
    """Per lane, a full action, then each field given each value (inside and outside its
    constraints) or left out, an extra field, an extra param, params missing or not an object."""
    out: list[dict[str, Any]] = []
    for lane, param_fields in _PARAMS.items():
        base = {"lane": lane, **{k: v[0][0] for k, v in _COMMON.items()}}
        params = {k: v[0][0] for k, v in param_fields.items()}
        out.append({**base, "params": params})
        for name, (good, bad) in _COMMON.items():
            out += [{**base, name: value, "params": params} for value in good + bad]
            out.append({**{k: v for k, v in base.items() if k != name}, "params": params})
        for name, (good, bad) in param_fields.items():
            out += [{**base, "params": {**params, name: value}} for value in good + bad]
            out.append({**base, "params": {k: v for k, v in params.items() if k != name}})
        out += [
            {**base, "params": params, "run_shell": "rm -rf /"},
            {**base, "params": {**params, "surprise": True}},
            base,
            {**base, "params": "x"},
        ]
    return out


@cache
def _validator(compact: bool) -> Draft202012Validator:
    schema = action_plan_tool_schema() if compact else action_plan_json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _parses(plan: dict[str, Any]) -> bool:
    try:
        ActionPlan.model_validate(plan)
    except ValidationError:
        return False
    return True


def test_the_compact_schema_judges_every_action_as_the_full_one_does() -> None:
    variants = _variants()
    assert len(variants) > 250
    for action in variants:
        plan = {"actions": [action]}
        compact_ok = _validator(compact=True).is_valid(plan)
        assert compact_ok == _validator(compact=False).is_valid(plan), action
        if _parses(plan):  # what the parser accepts, the model was allowed to say
            assert compact_ok, action


def test_a_plan_of_every_lane_is_accepted_and_parsed_the_same() -> None:
    plan = {
        "actions": [
            {"lane": lane, **{k: v[0][0] for k, v in _COMMON.items()},
             "params": {k: v[0][0] for k, v in fields.items()}}
            for lane, fields in _PARAMS.items()
            if lane not in {"create_wo", "manage_existing", "clarify"}  # no target allowed
        ][:8]
    }  # fmt: skip
    assert _parses(plan)
    assert _validator(compact=True).is_valid(plan)
    too_many = {"actions": [plan["actions"][0]] * 9}
    assert not _parses(too_many)
    assert not _validator(compact=True).is_valid(too_many)


def test_an_action_without_a_lane_is_refused_by_the_schema_as_by_the_parser() -> None:
    plan = {"actions": [{"target_wo_id": "WO-1", "params": {"note": "still dripping"}}]}
    assert not _parses(plan)
    assert not _validator(compact=True).is_valid(plan)


def _enums(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [json.dumps(node["enum"])] if "enum" in node else []
        found += [json.dumps(node["const"])] if "const" in node else []
        return found + [e for value in node.values() for e in _enums(value)]
    if isinstance(node, list):
        return [e for item in node for e in _enums(item)]
    return []


def test_the_vocabulary_is_unchanged_every_lane_and_enum_as_before() -> None:
    assert sorted(_enums(action_plan_tool_schema())) == sorted(_enums(action_plan_json_schema()))
    assert "answer_wait" not in json.dumps(action_plan_tool_schema())


def test_the_brain_sends_the_compact_schema_at_about_half_the_size() -> None:
    """Naive: the pydantic schema as generated, 11,712 characters (about 2,900 tokens) in every
    reasoning call."""
    assert propose_tool().input_schema == action_plan_tool_schema()
    full = encoded_size(action_plan_json_schema())
    assert encoded_size(propose_tool().input_schema) <= 0.55 * full


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (  # a nullable field is one schema whose type admits null
            {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "default": None},
            {"type": ["string", "null"], "maxLength": 3},
        ),
        (  # titles, defaults and a class's docstring go; a field's description stays
            {"title": "T", "description": "doc", "type": "object",
             "properties": {"a": {"title": "A", "type": "number", "minimum": 0.0,
                                  "description": "for the model"}}},
            {"type": "object",
             "properties": {"a": {"type": "number", "minimum": 0, "description": "for the model"}}},
        ),
    ],
)  # fmt: skip
def test_compaction_keeps_constraints_and_drops_annotations(
    schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert compact_schema(schema) == expected
