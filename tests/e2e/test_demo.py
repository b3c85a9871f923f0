"""`maestro demo` end to end: the leak-204 story on the embedded stack."""

from __future__ import annotations

import io
import json

import pytest

from maestro_dev.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo() -> dict[str, object]:
    out = io.StringIO()
    assert main(["demo", "--json"], out=out) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_demo_names_its_brain_and_reports_the_contract_fields(demo: dict[str, object]) -> None:
    assert demo["brain"] == "offline brain (deterministic rules, no model)"
    assert {
        "packages",
        "actions",
        "transitions_per_package",
        "evidence",
        "shame",
        "wall_seconds",
    } <= set(demo)
    assert demo["packages"] == 5


def test_demo_tells_the_leak_204_story(demo: dict[str, object]) -> None:
    lanes = [(a["lane"], a["target_wo_id"]) for a in demo["actions"]]  # type: ignore[attr-defined]
    created = lanes[0]
    assert created == ("create_wo", None)
    # The access reply schedules the new WO; it is not taken for a 2-star rating of WO-198.
    assert lanes[1][0] == "schedule_visit"
    assert lanes[1][1] != "WO-198"
    assert lanes[2] == ("record_rating", "WO-198")
    assert lanes[3] == ("escalate", None)
    assert lanes[4] == ("continue_with_assistant", None)
    assert demo["routes"] == dict(  # type: ignore[comparison-overlap]
        zip(
            demo["transitions_per_package"],
            ["reasoning"] * 3 + ["escalate", "handback"],  # type: ignore[call-overload]
            strict=True,
        )
    )


def test_every_package_reaches_the_bus(demo: dict[str, object]) -> None:
    events = demo["events"]
    assert events["decision.recorded"] == 5  # type: ignore[index]
    assert events["wo.created"] == 1  # type: ignore[index]
    assert events["escalation.paged"] == 1  # type: ignore[index]


def test_every_claim_of_the_demo_has_evidence_and_there_is_no_shame(
    demo: dict[str, object],
) -> None:
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    # One ledger row per event the watcher read back: every one of them evidence.
    assert demo["evidence"] == sum(events.values()) > 0
    assert demo["shame"] == 0, demo["shame_rows"]


def test_the_demo_shows_each_text_as_twilio_reports_it(demo: dict[str, object]) -> None:
    texts: list[dict[str, str]] = demo["texts"]  # type: ignore[assignment]
    events: dict[str, int] = demo["events"]  # type: ignore[assignment]
    assert len(texts) == events["message.sent"]
    for text in texts:
        # A Twilio SID, read from Twilio's Messages API (not the recording messenger's table),
        # after the loopback moved it on to delivered.
        assert text["sid"].startswith("SM"), text
        assert not text["sid"].startswith("SMrec"), text
        assert (text["read"], text["status"]) == ("twilio-read", "delivered"), text
