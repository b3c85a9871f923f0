from __future__ import annotations

import io
import json

import pytest

from maestro.brain.sample_parsing import sample_from_text
from maestro_dev.cli import main
from maestro_dev.core_demo import STORIES, run_all


def test_a_valid_answer_becomes_a_sample_with_actions() -> None:
    text = json.dumps({"actions": [{"lane": "escalate", "params": {"hazard": "gas"}}]})
    sample = sample_from_text(0, text, model="m", input_tokens=10, output_tokens=5)
    assert sample.valid
    assert sample.actions is not None
    assert sample.actions[0].lane == "escalate"
    assert (sample.input_tokens, sample.output_tokens) == (10, 5)


@pytest.mark.parametrize(
    ("text", "failure"),
    [
        ("Sure! I think they mean the kitchen.", "non_json"),
        ("", "non_json"),
        (json.dumps({"actions": []}), "schema_failure"),
        (
            json.dumps({"actions": [{"lane": "record_rating", "params": {"stars": 9}}]}),
            "schema_failure",
        ),
        (json.dumps({"actions": [{"lane": "refund_rent", "params": {}}]}), "out_of_vocabulary"),
        (json.dumps(["create_wo"]), "schema_failure"),
    ],
)
def test_every_bad_answer_is_a_classified_failed_sample(text: str, failure: str) -> None:
    sample = sample_from_text(3, text, model="m")
    assert not sample.valid
    assert sample.failure == failure
    assert sample.index == 3


def test_demo_stories_end_as_the_design_says() -> None:
    outcomes = {
        run.story.title: [
            (q.action.lane.value, q.action.target_wo_id) for q in run.disposal.actions
        ]
        for run in run_all()
    }
    assert outcomes == {
        "leak-204: the access reply": [("schedule_visit", "WO-204")],
        "two leaks and an ambiguous reply": [("clarify", None)],
        "two leaks: the answer to the question": [("relay_to_open_wo", "WO-204")],
        "a gas leak mid-conversation": [("escalate", None)],
        "an unknown number": [("escalate", None)],
    }


def test_demo_json_is_one_object_and_says_the_brain_is_scripted() -> None:
    out = io.StringIO()
    assert main(["demo", "--core", "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    assert data["brain"] == "scripted"
    assert data["packages"] == len(STORIES)
    assert {"actions", "evidence", "shame", "wall_seconds"} <= set(data)
    assert all({"package_id", "lane", "target_wo_id"} <= set(a) for a in data["actions"])


def test_demo_text_is_honest_about_what_it_is() -> None:
    out = io.StringIO()
    assert main(["demo", "--core"], out=out) == 0
    text = out.getvalue()
    assert "scripted" in text
    assert "no model" in text
