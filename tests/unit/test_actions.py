from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from builders import act
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from maestro.domain.actions import (
    INTERNAL_LANES,
    LANE_SPECS,
    MUTATING_LANES,
    PROPOSABLE_LANES,
    ActionPlan,
    AnswerWait,
    Lane,
    action_plan_json_schema,
    parse_action,
)

NINE_LANES = {
    "create_wo",
    "relay_to_open_wo",
    "schedule_visit",
    "record_rating",
    "relay_to_vendor",
    "manage_existing",
    "continue_with_assistant",
    "clarify",
    "escalate",
}


def test_the_vocabulary_is_exactly_the_nine_lanes() -> None:
    # What a model may propose is the nine; answer_wait is queued by resolve alone.
    assert {lane.value for lane in PROPOSABLE_LANES} == NINE_LANES
    assert {lane.value for lane in Lane} == NINE_LANES | {"answer_wait"}
    assert {lane.value for lane in INTERNAL_LANES} == {"answer_wait"}
    assert set(LANE_SPECS) == set(Lane)


def test_an_internal_lane_is_never_offered_to_nor_accepted_from_a_model() -> None:
    """Naive: answer_wait in the one Action union, so the tool schema offers it and a model's
    plan naming it validates: a prompt could then accept an offer in a vendor's name."""
    assert "answer_wait" not in json.dumps(action_plan_json_schema())
    wait = {
        "lane": "answer_wait",
        "target_wo_id": "WO-301",
        "params": {"kind": "offer", "answer": "accept", "offer_index": 1},
    }
    with pytest.raises(ValidationError):
        parse_action(wait)
    with pytest.raises(ValidationError):
        ActionPlan.model_validate({"actions": [wait]})
    # The deterministic layer builds it directly, and a queued action carries it.
    assert AnswerWait.model_validate(wait).params.answer == "accept"


def test_mutating_lanes_are_the_ones_that_write_or_message() -> None:
    assert {lane.value for lane in MUTATING_LANES} == {
        "create_wo",
        "relay_to_open_wo",
        "schedule_visit",
        "record_rating",
        "relay_to_vendor",
    }


@given(st.text(min_size=1, max_size=30).filter(lambda s: s not in NINE_LANES))
def test_a_lane_outside_the_vocabulary_never_validates(lane: str) -> None:
    with pytest.raises(ValidationError):
        parse_action({"lane": lane, "params": {}})


@pytest.mark.parametrize(
    "data",
    [
        {"lane": "relay_to_open_wo", "params": {"note": "x"}},  # target required
        {"lane": "create_wo", "target_wo_id": "WO-1", "params": {"summary": "leak"}},  # forbidden
        {"lane": "record_rating", "target_wo_id": "WO-1", "params": {"stars": 6}},
        {"lane": "record_rating", "target_wo_id": "WO-1", "params": {"stars": 0}},
        {"lane": "clarify", "params": {"question": "?", "extra": 1}},  # closed params
        {"lane": "escalate", "params": {}, "run_shell": "rm -rf /"},  # closed action
        {"lane": "schedule_visit", "target_wo_id": "new:x y", "params": {"availability": "2pm"}},
        {"lane": "create_wo", "params": {"summary": "leak", "ref": "WO-1"}},
    ],
)
def test_malformed_actions_are_schema_failures(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        parse_action(data)


def test_schedule_window_must_be_a_pair_in_order() -> None:
    with pytest.raises(ValidationError):
        act("schedule_visit", "WO-1", window_start="2026-06-18T14:00:00Z")
    with pytest.raises(ValidationError):
        act(
            "schedule_visit",
            "WO-1",
            window_start="2026-06-18T14:00:00Z",
            window_end="2026-06-18T13:00:00Z",
        )


def test_json_schema_is_a_tool_schema_for_the_closed_vocabulary() -> None:
    schema = action_plan_json_schema()
    assert schema["type"] == "object"
    json.dumps(schema)  # serialisable as a tool input_schema
    mapping = (
        schema["$defs"]["ActionPlan"]["properties"]
        if "ActionPlan" in schema.get("$defs", {})
        else schema["properties"]
    )
    items = mapping["actions"]["items"]
    assert set(items["discriminator"]["mapping"]) == NINE_LANES


def test_json_schema_accepts_what_pydantic_accepts_and_rejects_unknown_lanes() -> None:
    schema = action_plan_json_schema()
    plan = ActionPlan(actions=(act("create_wo"), act("schedule_visit", "new:1")))
    jsonschema.validate(json.loads(plan.model_dump_json()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"actions": [{"lane": "delete_everything", "params": {}}]}, schema)


def test_every_lane_names_the_event_it_publishes() -> None:
    events = {spec.lane.value: spec.event for spec in LANE_SPECS.values()}
    assert events == {
        "create_wo": "wo.created",
        "relay_to_open_wo": "wo.updated",
        "schedule_visit": "wo.updated",
        "record_rating": "rating.recorded",
        "relay_to_vendor": "message.sent",
        "manage_existing": "confirm.held",
        "continue_with_assistant": "message.sent",
        "clarify": "message.sent",
        "escalate": "escalation.paged",
        "answer_wait": "message.sent",
    }
